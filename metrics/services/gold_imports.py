"""What a gold import sets off in the metrics app (registered in `MetricsConfig.ready`), as
docs/agreement.md describes it: the annotators other than the gold one become human runs
(`human_runs_record`), and `rescore_on_new_gold` rescores the scored runs (`runs_rescore_on_new_gold`).
Both run in the import's transaction; the scoring jobs are queued after it commits.
"""

from __future__ import annotations

import hashlib
import json
import logging

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotations.importers.errors import ImportProblem
from annotations.models import GoldVersion, Project
from annotations.services.gold_read import GoldImport, ImportedDocument
from experiments.errors import RunRuleError
from experiments.models import ExperimentRun, RunKind, RunSource, RunStatus
from experiments.prediction_batches import MAX_DOCUMENTS_PER_BATCH
from experiments.services.predictions import predictions_ingest
from experiments.services.runs import configuration_hash, run_create
from experiments.splits import SplitRuleViolation
from metrics.services.scoring import scoring_request, scoring_stage_document_ids

logger = logging.getLogger("metrics.gold_imports")


def human_runs_record(
    *,
    project: Project,
    gold_version: GoldVersion,
    created: bool,
    gold: GoldImport,
    user: AbstractBaseUser | None,
) -> list[dict]:
    """One finalized human run per annotator other than the gold one; returns warnings (for the import
    job) naming the annotators whose run could not be recorded, and why."""
    warnings = []
    for annotator, documents in gold.other_annotators.items():
        config = {"annotator": annotator, "annotations_hash": _annotations_hash(documents)}
        if ExperimentRun.objects.filter(
            project=project,
            kind=gold.kind,
            source=RunSource.HUMAN,
            name=annotator,
            config_hash=configuration_hash(config=config, prompts=[]),
        ).exists():
            continue
        try:
            # A savepoint: a rule that refuses this annotator's run leaves the import whole.
            with transaction.atomic():
                _record(project, annotator, config, documents, gold.kind, user)
        except (RunRuleError, SplitRuleViolation) as refusal:
            logger.warning("human run of %s in %s not recorded: %s", annotator, project.slug, refusal)
            message = f"annotator {annotator!r}: no human run recorded ({refusal.detail})"
            warnings.append(ImportProblem(message, field="annotator").as_dict())
    return warnings


def _record(
    project: Project,
    annotator: str,
    config: dict,
    documents: list[ImportedDocument],
    kind: str,
    user: AbstractBaseUser | None,
) -> None:
    run = run_create(
        project=project, user=user, name=annotator, kind=kind, source=RunSource.HUMAN, config=config
    )
    # A run receives only the documents of its stage: the others are not the strategy's to show.
    allowed = scoring_stage_document_ids(run)
    if allowed is not None:
        documents = [document for document in documents if document.external_id in allowed]
    posted = [_posted(document, kind) for document in documents]
    for start in range(0, len(posted), MAX_DOCUMENTS_PER_BATCH):
        predictions_ingest(run=run, documents=posted[start : start + MAX_DOCUMENTS_PER_BATCH])
    scoring_request(run=run, user=user)


def _posted(document: ImportedDocument, kind: str) -> dict:
    """The document as a pipeline would post it: spans, or values with the text the annotator read."""
    if kind == RunKind.SPANS:
        return {
            "document_id": document.external_id,
            "entities": [
                {"start": span.start, "end": span.end, "entity_type": span.entity_type}
                for span in document.spans
            ],
        }
    posted: dict = {
        "document_id": document.external_id,
        "annotations": [
            {
                "attribute_id": attribute_id,
                "output_data": annotation.output_data,
                "additional_text": annotation.additional_text,
            }
            for attribute_id, annotation in document.values.items()
        ],
    }
    if document.text is not None:
        posted["context"] = document.text
    return posted


def _annotations_hash(documents: list[ImportedDocument]) -> str:
    canonical = sorted((document.external_id, document.gold_hash) for document in documents)
    return hashlib.sha256(json.dumps(canonical).encode()).hexdigest()


def runs_rescore_on_new_gold(
    *,
    project: Project,
    gold_version: GoldVersion,
    created: bool,
    gold: GoldImport,
    user: AbstractBaseUser | None,
) -> list[dict]:
    """Queue a rescore of every scored run of the new version's kind (nothing to warn about: a run the
    split rules keep as it is, such as the final test run, is meant to stay)."""
    settings = Project.objects.filter(pk=project.pk).values_list("settings", flat=True).get() or {}
    if not created or not settings.get("rescore_on_new_gold"):
        return []
    runs = (
        ExperimentRun.objects.filter(
            project=project, kind=gold_version.kind, status=RunStatus.SCORED, is_final=False
        )
        .exclude(gold_version=gold_version)
        .order_by("pk")
    )
    for run in runs:
        try:
            with transaction.atomic():
                scoring_request(run=run, user=user, rescore=True)
        except (RunRuleError, SplitRuleViolation) as refusal:
            logger.info("run %s not rescored on gold v%s: %s", run.pk, gold_version.number, refusal)
    return []
