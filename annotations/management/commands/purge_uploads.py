"""`manage.py purge_uploads`: delete every upload past its retention now (see docs/data-lifecycle.md).

Import jobs already delete their upload when they end (or sweep it once `UPLOAD_RETENTION_HOURS` has
passed); this command is for a periodic timer or an operator who wants it done now.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotations.services.uploads import uploads_sweep


class Command(BaseCommand):
    help = "Delete uploaded files whose import job ended more than UPLOAD_RETENTION_HOURS ago, and orphans."

    def handle(self, *args, **options) -> None:
        removed = uploads_sweep()
        self.stdout.write(
            f"{removed['job_files']} job upload(s) and {removed['orphans']} orphaned file(s) deleted"
        )
