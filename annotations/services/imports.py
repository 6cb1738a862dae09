"""Import jobs: accept an upload, then run it on a worker (parse and check everything, write or nothing).

`import_job_create` saves the upload to the job's `input_file` (in MEDIA_ROOT, where the worker reads
it) and queues the task after the commit. `import_job_run` is what the task calls: it claims the job,
reads the file with the importers, writes through `gold_import` (or updates the attribute schema for
a prompt CSV), and records the outcome on the job row, which is all the API ever reads.

Claiming: `queued -> running` by a conditional UPDATE; only the worker whose UPDATE changed the row
goes on, so a task delivered twice imports once. The outcome and the gold are committed in one
transaction, so a worker that dies mid-import leaves a `running` job and nothing written. On
PostgreSQL the running worker also holds an advisory lock on the job for as long as it works: a
redelivered task that finds the job `running` and the lock free knows its worker died, and runs it
again from the start, which is safe because nothing of the first attempt was committed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path, PurePath

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotations.importers.errors import ImportProblem, InputValidationError
from annotations.importers.labels import LabelMap, parse_label_map
from annotations.importers.sources import ArchiveLimits
from annotations.models import Attribute, GoldKind, Job, JobKind, JobState, Project
from annotations.services.bulk import JobProgress
from annotations.services.gold_import import gold_import
from annotations.services.gold_read import (
    FORMATS,
    as_problem_dicts,
    detect_format,
    jsonl_kind,
    read_attribute_gold,
    read_prompts,
    read_spans,
)
from annotations.services.projects import attributes_upsert
from annotations.services.uploads import upload_discard, uploads_sweep
from evalproject.tasks import enqueue_after_commit
from metrics.engine.attributes.types import AttributeType

logger = logging.getLogger(__name__)

# Advisory lock namespace (the first key of pg_try_advisory_lock(int, int)) for running jobs.
JOB_LOCK_NAMESPACE = 7310


class UploadTooLarge(Exception):
    """The upload is bigger than settings.UPLOAD_MAX_BYTES; the API answers 413."""

    def __init__(self, size: int | None = None):
        self.limit = settings.UPLOAD_MAX_BYTES
        got = f" ({size} bytes)" if size is not None else ""
        super().__init__(f"The upload is too large{got}: the limit is {self.limit} bytes.")


def upload_size_check(size: int | None) -> None:
    if size is not None and size > settings.UPLOAD_MAX_BYTES:
        raise UploadTooLarge(size)


@transaction.atomic
def import_job_create(
    *,
    project: Project,
    user: AbstractBaseUser,
    upload: UploadedFile,
    format: str = "auto",
    label_map: str | bytes | dict | None = None,
    annotator: str | None = None,
) -> Job:
    """Store the upload as a queued import job and queue its task once this transaction commits.

    The format and label map are checked here, so a bad request fails at once with a 400.
    """
    from annotations.tasks import import_job_run_task  # tasks import services; avoid the cycle

    upload_size_check(upload.size)
    if format not in FORMATS:
        raise ValidationError({"format": f"must be one of {', '.join(FORMATS)}"})
    label_overrides = _label_map_overrides(label_map)
    original_name = PurePath(upload.name or "upload").name
    job = Job(
        kind=JobKind.IMPORT,
        project=project,
        created_by=user,
        params={
            "format": format,
            "label_map": label_overrides,
            "annotator": annotator or None,
            "file_name": original_name,
        },
    )
    # A folder per upload keeps the user's file name (a CAS file's name is its document id).
    job.input_file.save(f"{uuid.uuid4().hex}/{original_name}", upload, save=False)
    job.full_clean()
    job.save()
    enqueue_after_commit(import_job_run_task, job.pk)
    return job


def _label_map_overrides(label_map: str | bytes | dict | None) -> dict[str, str]:
    if label_map in (None, "", b"", {}):
        return {}
    try:
        if isinstance(label_map, dict):
            LabelMap.default().merged_with(label_map, source="label_map")
            return dict(label_map)
        raw = label_map if isinstance(label_map, str) else label_map.decode("utf-8", "replace")
        parse_label_map(raw, source="label_map")
    except InputValidationError as error:
        raise ValidationError({"label_map": [str(problem) for problem in error.problems]}) from None
    return json.loads(raw)


def import_job_run(*, job_id: int) -> str:
    """Run an import job to its end; returns the job's final state, or "skipped" when not claimed."""
    with _job_lock(job_id) as locked:
        if not locked or not _claim(job_id):
            return "skipped"
        job = Job.objects.select_related("project", "created_by").get(pk=job_id)
        progress = JobProgress(job.pk)
        try:
            return _run(job, progress)
        except InputValidationError as error:
            _finish(job, JobState.FAILED, errors=as_problem_dicts(error.problems))
            return JobState.FAILED
        except ValidationError as error:
            # A model rule the file broke (e.g. an over-long attribute label in a prompt CSV).
            problems = [
                ImportProblem(message, file=job.params.get("file_name")) for message in error.messages
            ]
            _finish(job, JobState.FAILED, errors=as_problem_dicts(problems))
            return JobState.FAILED
        except Exception:
            # Logged with its traceback for the operators; the user gets a plain message.
            logger.exception("import job %s failed", job_id)
            _finish(
                job, JobState.FAILED, errors=[ImportProblem("internal error; see the worker log").as_dict()]
            )
            return JobState.FAILED
        finally:
            progress.close()
            _uploads_tidy(job_id)


def _uploads_tidy(job_id: int) -> None:
    """The ended job's upload goes (or waits out its retention), and so do older ones past theirs.

    After the outcome is committed, and never able to change it: a failure here is logged, and the
    next job's tidy or sweep deletes what this one left.
    """
    try:
        upload_discard(job_id=job_id)
        uploads_sweep()
    except Exception:
        logger.exception("deleting the uploads after import job %s failed", job_id)


@contextlib.contextmanager
def _job_lock(job_id: int) -> Iterator[bool]:
    if connection.vendor != "postgresql":
        yield True
        return
    # Session-level: held across the transactions of the run, released if the worker dies.
    key = job_id % 2**31
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [JOB_LOCK_NAMESPACE, key])
        locked = cursor.fetchone()[0]
    try:
        yield locked
    finally:
        if locked:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [JOB_LOCK_NAMESPACE, key])


def _claim(job_id: int) -> bool:
    # `running` is claimable only because the caller holds the job's lock: its previous worker died.
    states = [JobState.QUEUED, JobState.RUNNING] if connection.vendor == "postgresql" else [JobState.QUEUED]
    claimed = Job.objects.filter(pk=job_id, state__in=states).update(
        state=JobState.RUNNING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
        progress_done=0,
        progress_total=0,
    )
    return claimed == 1


def _run(job: Job, progress: JobProgress) -> str:
    project = job.project
    params = job.params
    file_name = params.get("file_name") or Path(job.input_file.name).name
    with _input_path(job, file_name) as path:
        file_format = detect_format(path, params.get("format", "auto"))
        if file_format == "prompts_csv":
            prompt_set = read_prompts(path, display_name=file_name)
            with transaction.atomic():
                outcome = attributes_upsert(project=project, specs=prompt_set.attributes)
                result = {
                    "kind": "schema",
                    "unchanged": not outcome["created"] and not outcome["updated"],
                    "attributes_created": len(outcome["created"]),
                    "attributes_updated": len(outcome["updated"]),
                    "attributes_unchanged": len(outcome["unchanged"]),
                    "attributes_not_scored": [spec.attribute_id for spec in prompt_set.skipped],
                }
                _finish(
                    job, JobState.SUCCEEDED, result=result, warnings=as_problem_dicts(prompt_set.warnings)
                )
            return JobState.SUCCEEDED
        if file_format == "eppi" or (file_format == "jsonl" and jsonl_kind(path) == GoldKind.ATTRIBUTES):
            types = {
                attribute_id: AttributeType(attribute_type)
                for attribute_id, attribute_type in Attribute.objects.filter(project=project).values_list(
                    "attribute_id", "type"
                )
            }
            gold = read_attribute_gold(
                path, display_name=file_name, eppi=file_format == "eppi", attribute_types=types
            )
        else:
            gold = read_spans(
                path,
                display_name=file_name,
                label_map=LabelMap.default().merged_with(params.get("label_map") or {}, source="label_map"),
                annotator=params.get("annotator"),
                limits=_archive_limits(),
                progress=lambda done: progress.set(done, 0),
            )
    read_warnings = as_problem_dicts(gold.warnings)
    with transaction.atomic():
        outcome = gold_import(
            project=project, gold=gold, user=job.created_by, source=file_name, progress=progress
        )
        _finish(
            job,
            JobState.SUCCEEDED,
            result=outcome.result,
            warnings=read_warnings + outcome.warnings,
            progress=progress,
        )
    return JobState.SUCCEEDED


@contextlib.contextmanager
def _input_path(job: Job, file_name: str) -> Iterator[Path]:
    """The stored upload, seen under the name the user gave it (a CAS file's name is its document id)."""
    stored = Path(job.input_file.path)
    if stored.name == file_name:
        yield stored
        return
    with tempfile.TemporaryDirectory(prefix="import-") as folder:
        link = Path(folder, file_name)
        link.symlink_to(stored.resolve())
        yield link


def _archive_limits() -> ArchiveLimits:
    return ArchiveLimits(
        max_total_bytes=settings.ARCHIVE_MAX_UNCOMPRESSED_BYTES,
        max_member_bytes=min(ArchiveLimits().max_member_bytes, settings.ARCHIVE_MAX_UNCOMPRESSED_BYTES),
        max_ratio=float(settings.ARCHIVE_MAX_RATIO),
    )


def _finish(
    job: Job,
    state: str,
    *,
    result: dict | None = None,
    warnings: list[dict] | None = None,
    errors: list[dict] | None = None,
    progress: JobProgress | None = None,
) -> None:
    # A finished job shows its work complete; a failed one where it stopped (as last reported).
    progress_fields = {}
    if progress is not None and state == JobState.SUCCEEDED:
        total = max(progress.total, progress.done)
        progress_fields = {"progress_done": total, "progress_total": total}
    Job.objects.filter(pk=job.pk).update(
        state=state,
        result=result or {},
        warnings=warnings or [],
        errors=errors or [],
        finished_at=timezone.now(),
        **progress_fields,
    )
