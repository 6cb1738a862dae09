"""Prepare the demo on the embedded default: an admin with a fresh password, then the demo data."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from metrics.demo_data import demo_projects, demo_runs, demo_token, headline

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
        # The first lines a person needs: where to look, and how to log in.
        self.stdout.write(f"Dashboard:  {base}/")
        self.stdout.write(f"Demo admin: {DEMO_ADMIN}  password: {password}")
        self.stdout.flush()

        deid, trials = demo_projects(user=user)
        token = demo_token(user=user)
        results = demo_runs(token=token, base_url=base, log=lambda line: self.stderr.write(f"==> {line}"))

        for result in results:
            run = result.run
            self.stdout.write(f"\n{result.project}: run {run['id']} ({run['name']}), {run['status']}")
            for line in headline(result):
                self.stdout.write(line)
            self.stdout.write(f"  metrics:    {base}/api/v1/runs/{run['id']}/metrics/")
            self.stdout.write(f"  comparison: {base}/api/v1/runs/{run['id']}/comparison/?format=csv")
            self.stdout.write(f"  artefacts:  {base}/api/v1/runs/{run['id']}/artefacts.zip")
        self.stdout.write("")
        self.stdout.write(f"Dashboard:  {base}/  (log in as {DEMO_ADMIN}, password above)")
        self.stdout.write(f"API token:  {token}   (Authorization: Token <key>)")
        self.stdout.write(f"Admin:      {base}/admin/")
        self.stdout.write(f"Health:     {base}/health/")
        self.stdout.write(f"API docs:   {base}/api/docs/")
        self.stdout.write(
            f"Projects:   {base}/api/v1/projects/{deid.slug}/runs/  {base}/api/v1/projects/{trials.slug}/runs/"
        )
