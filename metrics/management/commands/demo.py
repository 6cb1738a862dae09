"""Prepare the demo on the embedded default: an admin with a kept password, then the demo data."""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand
from django.db.models import Q
from django.utils import timezone

from annotations.models import ApiToken
from annotations.services import api_token_create
from evalproject.local_secrets import read_json, write_json
from metrics.services.demo import demo_agreement, demo_projects, demo_runs, headline

DEMO_ADMIN = "demo-admin"
TOKEN_NAME = "demo"


def demo_credentials_path() -> Path:
    """The demo admin's password and token, generated once and kept (git-ignored, mode 0600)."""
    return Path(settings.LOCAL_SECRETS_DIR) / "demo.json"


def demo_admin() -> tuple[AbstractBaseUser, str | None]:
    """The demo admin and its password: the one kept from an earlier run, else a new one; a password
    changed since (with `manage.py changepassword`) is left alone and not shown (None)."""
    kept = read_json(demo_credentials_path())
    user, created = get_user_model().objects.get_or_create(username=DEMO_ADMIN)
    user.is_staff = user.is_superuser = True
    password = kept.get("password")
    if not password:
        password = secrets.token_urlsafe(12)
        user.set_password(password)
        write_json(demo_credentials_path(), {**kept, "password": password})
    elif created or not user.has_usable_password():
        user.set_password(password)
    elif not user.check_password(password):
        password = None
    user.save()
    return user, password


def demo_admin_token(user: AbstractBaseUser) -> str:
    """The demo admin's API token, kept like its password: the kept one while it is still a valid demo
    token of `user`, else a new one (keys are shown once and only their hash is stored)."""
    kept = read_json(demo_credentials_path())
    key = kept.get("token")
    tokens = ApiToken.objects.filter(user=user, name=TOKEN_NAME)
    live = tokens.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    if key and live.filter(key_hash=ApiToken.hash_key(key)).exists():
        return key
    tokens.delete()
    token = api_token_create(user=user, name=TOKEN_NAME)[1]
    write_json(demo_credentials_path(), {**kept, "token": token})
    return token


class Command(BaseCommand):
    help = (
        "Create the demo admin with a generated password and API token (kept in .local-secrets/ and "
        "printed on every run), then load and score the bundled demo data. Used by scripts/demo; safe to "
        "run again."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--port", type=int, default=8000, help="The port the app is served on, for the URLs."
        )

    def handle(self, *args, port: int, **options) -> None:
        user, password = demo_admin()
        base = f"http://127.0.0.1:{port}"
        shown = password or "(changed since the demo set it; not shown)"
        # The first lines a person needs: where to look, and how to log in.
        login = f"Dashboard:  {base}/\nDemo admin: {DEMO_ADMIN}  password: {shown}"
        self.stdout.write(login)
        self.stdout.flush()

        deid, trials = demo_projects(user=user)
        token = demo_admin_token(user)
        log = lambda line: self.stderr.write(f"==> {line}")  # noqa: E731
        results = demo_runs(token=token, base_url=base, log=log)
        demo_agreement(project=deid, user=user, log=log)

        for result in results:
            run = result.run
            url = f"{base}/api/v1/runs/{run['id']}"
            self.stdout.write(f"\n{result.project}: run {run['id']} ({run['name']}), {run['status']}")
            for line in headline(result):
                self.stdout.write(line)
            self.stdout.write(f"  metrics:    {url}/metrics/")
            self.stdout.write(f"  comparison: {url}/comparison/?format=csv")
            self.stdout.write(f"  artefacts:  {url}/artefacts.zip")
        self.stdout.write(f"\n{login}")
        self.stdout.write(f"API token:  {token}   (Authorization: Token <key>)")
        self.stdout.write(f"Admin:      {base}/admin/")
        self.stdout.write(f"Health:     {base}/health/")
        self.stdout.write(f"API docs:   {base}/api/docs/")
        self.stdout.write(
            f"Projects:   {base}/api/v1/projects/{deid.slug}/runs/  {base}/api/v1/projects/{trials.slug}/runs/"
        )
