"""`manage.py create_api_token USERNAME [--create-user] [--read-only] [--expires-days N] [--name NAME]`.

Prints the key and nothing else on stdout, so scripts can capture it:
`export EVAL_TOKEN=$(manage.py create_api_token alice)`. Errors go to stderr with a non-zero status.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotations.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print its key (shown once; only its hash is stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--create-user", action="store_true", help="Create the user (without a password) if missing."
        )
        parser.add_argument("--read-only", action="store_true", help="The token can read but not write.")
        parser.add_argument("--expires-days", type=int, default=None, help="Expire after N days.")
        parser.add_argument("--name", default="", help="A name to tell the token apart later.")

    def handle(
        self, *args, username: str, create_user: bool, read_only: bool, expires_days, name: str, **options
    ):
        if expires_days is not None and expires_days <= 0:
            raise CommandError("--expires-days must be a positive number of days")
        users = get_user_model().objects
        user = users.filter(username=username).first()
        if user is None:
            if not create_user:
                raise CommandError(f"no user {username!r}; add --create-user to create it")
            # No usable password: this user signs in with tokens; an admin can set one later.
            user = users.create_user(username=username, password=None)
        elif not user.is_active:
            raise CommandError(f"user {username!r} is inactive; tokens of inactive users are refused")
        _, key = api_token_create(user=user, name=name, read_only=read_only, expires_days=expires_days)
        self.stdout.write(key)
