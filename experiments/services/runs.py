"""Creating runs (the configuration and prompts are snapshotted with their hash), and deleting them."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import yaml
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotations.models import Attribute, Job, JobKind, NumberFormat, Project
from experiments.errors import RunConfigInvalid, RunNotDeletable
from experiments.models import ExperimentRun, RunKind, RunSource, RunStatus
from experiments.splits import split_check_can_delete, split_stage_for_new_run

logger = logging.getLogger(__name__)

# Settings a run's configuration may carry for its scoring (docs/semantics.md section 2); checked at creation
# so a bad value is refused now rather than failing the scoring job later.
THRESHOLD_KEY = "edit_distance_match_threshold"
NUMBER_FORMAT_KEY = "number_format"


def configuration_hash(*, config: dict[str, Any], prompts: list[Any]) -> str:
    """sha256 of the canonical JSON of config and prompts (sorted keys, no whitespace, UTF-8).

    Two runs with the same configuration and prompts have the same hash whatever the key order or the
    YAML formatting they were sent in: the hash names a configuration, not a document.
    """
    canonical = json.dumps(
        {"config": config, "prompts": prompts}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def run_config_parse(raw: dict[str, Any] | str | None) -> tuple[dict[str, Any], str]:
    """The configuration as an object and as YAML text, from either form."""
    if raw is None or raw == "":
        return {}, ""
    if isinstance(raw, str):
        try:
            config = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise RunConfigInvalid(
                f"config is not valid YAML{where}: {getattr(error, 'problem', error)}"
            ) from None
        if config is None:
            return {}, raw
        if not isinstance(config, dict):
            raise RunConfigInvalid("config must be a mapping (a YAML or JSON object)")
        # Round trip through JSON: the snapshot is stored as JSON, so dates and the like become text now.
        return json.loads(json.dumps(config, default=str)), raw
    if isinstance(raw, dict):
        return raw, yaml.safe_dump(raw, sort_keys=False, allow_unicode=True)
    raise RunConfigInvalid("config must be an object or YAML text")


def _check_scoring_settings(config: dict[str, Any]) -> None:
    threshold = config.get(THRESHOLD_KEY)
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1
    ):
        raise RunConfigInvalid(
            f"{THRESHOLD_KEY} must be a number between 0 and 1, found {threshold!r}",
            details={"field": THRESHOLD_KEY},
        )
    number_format = config.get(NUMBER_FORMAT_KEY)
    if number_format is not None and number_format not in NumberFormat.values:
        raise RunConfigInvalid(
            f"{NUMBER_FORMAT_KEY} must be one of {', '.join(NumberFormat.values)}, found {number_format!r}",
            details={"field": NUMBER_FORMAT_KEY},
        )


def _check_prompts(*, project: Project, kind: str, prompts: list[Any]) -> None:
    """Attribute runs name the attribute each prompt extracts; it must be in the project's schema."""
    if kind != RunKind.ATTRIBUTES:
        return
    known = set(Attribute.objects.filter(project=project).values_list("attribute_id", flat=True))
    problems = []
    for index, entry in enumerate(prompts):
        if not isinstance(entry, dict) or not isinstance(entry.get("attribute_id"), str):
            problems.append({"index": index, "message": "an object with attribute_id and prompt is needed"})
        elif not isinstance(entry.get("prompt", ""), str):
            problems.append({"index": index, "message": "prompt must be a string"})
        elif entry["attribute_id"] not in known:
            problems.append({"index": index, "message": f"unknown attribute_id {entry['attribute_id']!r}"})
    if problems:
        raise RunConfigInvalid(
            "prompts name unknown attributes or are malformed", details={"prompts": problems}
        )


@transaction.atomic
def run_create(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    name: str,
    kind: str,
    source: str = RunSource.LLM,
    config: dict[str, Any] | str | None = None,
    prompts: list[Any] | None = None,
    model: str = "",
    provider: str = "",
    stage: str | None = None,
) -> ExperimentRun:
    """Create an open run. The strategy decides its stage (SplitRuleViolation, 409, when it may not exist)."""
    config_object, config_yaml = run_config_parse(config)
    prompts = list(prompts or [])
    _check_scoring_settings(config_object)
    _check_prompts(project=project, kind=kind, prompts=prompts)
    config_hash = configuration_hash(config=config_object, prompts=prompts)
    stage = split_stage_for_new_run(project=project, requested_stage=stage, config_hash=config_hash)
    run = ExperimentRun(
        project=project,
        name=name,
        kind=kind,
        source=source,
        config=config_object,
        config_yaml=config_yaml,
        config_hash=config_hash,
        prompts=prompts,
        model=model,
        provider=provider,
        stage=stage,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    run.full_clean()
    run.save()
    return run


@transaction.atomic
def run_delete(*, run: ExperimentRun, user: AbstractBaseUser) -> dict[str, int]:
    """Delete a run with everything it holds: its documents' contexts, predictions, scorings, metric
    values, comparison rows and its scoring and export jobs (whose warnings may quote values).

    Refused (nothing deleted) for the final test result (the split rules) and while the run is being
    scored. Returns the counts of what went, for the log and the caller; the log names no content.
    """
    locked = ExperimentRun.objects.select_for_update().select_related("project").get(pk=run.pk)
    split_check_can_delete(run=locked)
    if locked.status == RunStatus.SCORING:
        raise RunNotDeletable(
            f"Run {locked.pk} is being scored: delete it once its scoring job has ended.",
            details={"run": locked.pk, "status": locked.status},
        )
    jobs = Job.objects.filter(kind__in=[JobKind.SCORING, JobKind.EXPORT], params__run_id=locked.pk)
    counts = {
        "run_documents": locked.run_documents.count(),
        "scorings": locked.scorings.count(),
        "jobs": jobs.count(),
    }
    run_id, project_slug = locked.pk, locked.project.slug
    jobs.delete()
    locked.delete()
    logger.info("run %s of project %s deleted by user %s: %s", run_id, project_slug, user.pk, counts)
    return counts
