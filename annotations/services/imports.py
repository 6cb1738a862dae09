"""Import jobs: accept an upload, then run it on a worker (parse and check everything, write or nothing).

`import_job_create` saves the upload to the job's `input_file` (in MEDIA_ROOT, where the worker reads
it) and queues the task after the commit. `import_job_run` is what the task calls: it claims the job,
reads the file with the importers, writes through `gold_import` (or updates the attribute schema for
a prompt CSV), and records the outcome on the job row, which is all the API ever reads.

The job's life (claim, heartbeat, retry after a database error, the one terminal transition) is that
of every job: `annotations.services.jobs`. The outcome and the gold are committed in one transaction,
so a worker that dies mid-import leaves a `running` job and nothing written; the dispatcher queues it
again, and the next attempt starts from the beginning.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path, PurePath

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

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
from annotations.services.job_problems import internal_error
from annotations.services.jobs import (
    TRANSIENT_DATABASE_ERRORS,
    JobClaimLost,
    JobNotRetryable,
    job_enqueue,
    job_finish,
    job_running,
)
from annotations.services.projects import attributes_upsert
from annotations.services.uploads import upload_discard, uploads_sweep
from metrics.engine.attributes.types import AttributeType

logger = logging.getLogger(__name__)


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
    job_enqueue(job)
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


def import_job_run(
    *, job_id: int, resume_token: str | None = None, after_read: Callable[[], None] | None = None
) -> str:
    """Run an import job to its end; returns the job's final state, or "skipped" when not claimed.

    A database error propagates as JobInterrupted, for the task to retry (`run_job_task`).
    `after_read` is called between reading the file and writing the gold (a test hook).
    """
    with job_running(job_id=job_id, kind=JobKind.IMPORT, resume_token=resume_token) as job:
        if job is None:
            return "skipped"
        progress = JobProgress(job.pk)
        try:
            state = _run(job, progress, after_read=after_read)
        except InputValidationError as error:
            _finish(job, JobState.FAILED, errors=as_problem_dicts(error.problems))
            state = JobState.FAILED
        except ValidationError as error:
            # A model rule the file broke (e.g. an over-long attribute label in a prompt CSV).
            problems = [
                ImportProblem(message, file=job.params.get("file_name")) for message in error.messages
            ]
            _finish(job, JobState.FAILED, errors=as_problem_dicts(problems))
            state = JobState.FAILED
        except JobClaimLost:
            return "skipped"  # given up for dead, this worker wrote nothing that stays; the upload stays
        except TRANSIENT_DATABASE_ERRORS:
            raise  # the task retries, resuming this claim: the upload must stay
        except Exception:
            # The traceback goes to the log under an error id; the user gets the id only.
            _finish(job, JobState.FAILED, errors=[internal_error(job_id, log=logger)])
            state = JobState.FAILED
        finally:
            progress.close()
    _uploads_tidy(job_id)
    return state


def _uploads_tidy(job_id: int) -> None:
    """The ended job's upload goes (or waits out its retention), and so do older ones past theirs.

    After the outcome is committed, and never able to change it: a failure here is logged, and the
    next job's tidy or the dispatcher's sweep deletes what this one left.
    """
    try:
        upload_discard(job_id=job_id)
        uploads_sweep()
    except Exception:
        logger.exception("deleting the uploads after import job %s failed", job_id)


def import_job_retry_check(job: Job) -> None:
    """An import can run again only while its upload is kept (docs/data-lifecycle.md)."""
    if not job.input_file or not job.input_file.storage.exists(job.input_file.name):
        raise JobNotRetryable(
            f"The upload of import job {job.pk} is no longer kept (uploads are deleted when their import "
            f"ends, or UPLOAD_RETENTION_HOURS after; it is {settings.UPLOAD_RETENTION_HOURS} here): "
            "upload the file again as a new import."
        )


def _run(job: Job, progress: JobProgress, *, after_read: Callable[[], None] | None) -> str:
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
                if not _finish(
                    job, JobState.SUCCEEDED, result=result, warnings=as_problem_dicts(prompt_set.warnings)
                ):
                    raise JobClaimLost(job.pk)
            return JobState.SUCCEEDED
        if file_format == "eppi" or (file_format == "jsonl" and jsonl_kind(path) == GoldKind.ATTRIBUTES):
            types = {
                attribute_id: AttributeType(attribute_type)
                for attribute_id, attribute_type in Attribute.objects.filter(project=project).values_list(
                    "attribute_id", "type"
                )
            }
            gold = read_attribute_gold(
                path,
                display_name=file_name,
                eppi=file_format == "eppi",
                attribute_types=types,
                annotator=params.get("annotator") or project.settings.get("gold_annotator") or None,
            )
        else:
            gold = read_spans(
                path,
                display_name=file_name,
                label_map=LabelMap.default().merged_with(params.get("label_map") or {}, source="label_map"),
                annotator=params.get("annotator") or project.settings.get("gold_annotator") or None,
                limits=_archive_limits(),
                progress=lambda done: progress.set(done, 0),
            )
    if after_read is not None:
        after_read()
    read_warnings = as_problem_dicts(gold.warnings)
    with transaction.atomic():
        outcome = gold_import(
            project=project, gold=gold, user=job.created_by, source=file_name, progress=progress
        )
        if not _finish(
            job,
            JobState.SUCCEEDED,
            result=outcome.result,
            warnings=read_warnings + outcome.warnings,
            progress=progress,
        ):
            raise JobClaimLost(job.pk)  # the gold written above rolls back with this transaction
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
) -> bool:
    """Finish the job for this worker's claim; False when the claim was taken over."""
    # A finished job shows its work complete; a failed one where it stopped (as last reported).
    complete = None
    if progress is not None and state == JobState.SUCCEEDED:
        complete = max(progress.total, progress.done)
    return job_finish(
        job_id=job.pk,
        state=state,
        claim_token=job.claim_token,
        result=result,
        warnings=warnings or [],
        errors=errors or [],
        complete_progress=complete,
    )
