"""The demo's main job on the embedded default: two projects, their gold, two scored runs each (a
better and a worse pipeline, so the leaderboard and the compare page have something to show).

Everything goes through the code a team uses: the import services for gold, and the API, through the
Python client, for runs and predictions (in-process over httpx's WSGI transport, so no server needs to
run yet). Running it again changes nothing: gold imports of identical content are no-ops and a run
that is already scored is reused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.wsgi import get_wsgi_application
from evalproject_client import Client

from annotations.importers.labels import LabelMap
from annotations.importers.sources import ArchiveLimits
from annotations.models import Attribute, Project
from annotations.services import attributes_upsert, gold_import, project_create
from annotations.services.gold_read import read_attribute_gold, read_prompts, read_spans
from experiments.models import ExperimentRun, RunStatus
from metrics.engine.attributes.types import AttributeType
from metrics.services.agreement import agreement_job_create, agreement_latest

DEMO_DATA = Path(settings.BASE_DIR) / "demo"
DEID_SLUG, TRIALS_SLUG = "demo-deid", "demo-trials"


@dataclass
class DemoRun:
    project: str
    run: dict
    metrics: dict


def demo_projects(*, user: AbstractBaseUser) -> tuple[Project, Project]:
    """The two demo projects, created on the first call, with their gold imported (no-op when unchanged)."""
    deid = Project.objects.filter(slug=DEID_SLUG).first() or project_create(
        user=user,
        name="Demo: de-identification of discharge letters",
        slug=DEID_SLUG,
        description="30 invented German and English discharge letters. No real patient data.",
    )
    trials = Project.objects.filter(slug=TRIALS_SLUG).first() or project_create(
        user=user,
        name="Demo: data extraction from trial abstracts",
        slug=TRIALS_SLUG,
        description="20 invented trial abstracts with EPPI-like gold. No real data.",
    )
    gold = DEMO_DATA / "deid" / "gold.jsonl"
    gold_import(
        project=deid,
        gold=read_spans(
            gold, display_name=gold.name, label_map=LabelMap.default(), annotator=None, limits=ArchiveLimits(),
            progress=lambda done: None,
        ),
        user=user,
        source=gold.name,
    )  # fmt: skip
    prompts = read_prompts(DEMO_DATA / "extraction" / "prompts.csv", display_name="prompts.csv")
    attributes_upsert(project=trials, specs=prompts.attributes)
    types = {
        attribute_id: AttributeType(kind)
        for attribute_id, kind in Attribute.objects.filter(project=trials).values_list("attribute_id", "type")
    }
    eppi = DEMO_DATA / "extraction" / "gold_eppi.json"
    gold_import(
        project=trials,
        gold=read_attribute_gold(eppi, display_name=eppi.name, eppi=True, attribute_types=types),
        user=user,
        source=eppi.name,
    )
    return deid, trials


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def demo_runs(*, token: str, base_url: str, log: Callable[[str], None]) -> list[DemoRun]:
    """Post, score and read two runs per demo project through the client (in-process), and a second
    annotator of the de-identification letters as a human run (the human ceiling)."""
    transport = httpx.WSGITransport(app=get_wsgi_application())
    config = (DEMO_DATA / "extraction" / "config.yaml").read_text(encoding="utf-8")
    prompts = DEMO_DATA / "extraction" / "prompts.csv"  # the client reads it
    specs: list[tuple[str, dict[str, Any], list[dict]]] = [
        (
            DEID_SLUG,
            {"name": "demo: rule-based de-identifier v1", "kind": "spans", "model": "demo-ner", "provider": "demo",
             "config": {"pipeline": "demo-ner", "restrict_to_gt_types": False}},
            _read_jsonl(DEMO_DATA / "deid" / "predictions.jsonl"),
        ),
        (
            DEID_SLUG,
            {"name": "demo: transformer de-identifier v2", "kind": "spans", "model": "demo-transformer",
             "provider": "demo", "config": {"pipeline": "demo-transformer", "restrict_to_gt_types": False}},
            _read_jsonl(DEMO_DATA / "deid" / "predictions_v2.jsonl"),
        ),
        (
            TRIALS_SLUG,
            {"name": "demo: small LLM extraction", "kind": "attributes", "model": "demo-llm-small", "provider": "demo",
             "config": config, "prompts": prompts},
            _read_jsonl(DEMO_DATA / "extraction" / "predictions.jsonl"),
        ),
        (
            TRIALS_SLUG,
            {"name": "demo: large LLM extraction", "kind": "attributes", "model": "demo-llm-large", "provider": "demo",
             "config": config.replace("demo-llm-small", "demo-llm-large"), "prompts": prompts},
            _read_jsonl(DEMO_DATA / "extraction" / "predictions_large.jsonl"),
        ),
        (
            DEID_SLUG,
            {"name": "demo: second annotator", "kind": "spans", "source": "human"},
            _read_jsonl(DEMO_DATA / "deid" / "annotator_b.jsonl"),
        ),
    ]  # fmt: skip
    results = []
    with Client(base_url, token, transport=transport) as client:
        for slug, fields, documents in specs:
            existing = ExperimentRun.objects.filter(
                project__slug=slug, name=fields["name"], status=RunStatus.SCORED
            ).first()
            if existing is not None:
                log(f"{slug}: run {existing.pk} is already scored, reusing it")
                results.append(DemoRun(slug, client.run(existing.pk), client.metrics(existing.pk)))
                continue
            run = client.create_run(slug, **fields)
            counts = client.post_predictions(run, documents)
            log(f"{slug}: run {run['id']} created, predictions posted {counts}")
            client.finalize(run, timeout=300, progress=False)
            scored = client.run(run)
            results.append(DemoRun(slug, scored, client.metrics(run)))
    return results


def headline(result: DemoRun) -> list[str]:
    """A few lines a person reads first."""
    metrics = result.metrics
    if result.run["kind"] == "spans":
        chars = metrics["micro"]["chars"]["all"]
        overlap = metrics["micro"]["spans_overlap"]["type_agnostic"]
        leaked = metrics["leakage"]["any_char"]
        return [
            f"  characters   precision {chars['precision']:.3f}  recall {chars['recall']:.3f}  f1 {chars['f1']:.3f}",
            f"  spans found  recall {overlap['recall']:.3f} (overlap)",
            f"  leakage      {leaked['documents_leaked']} of {metrics['documents']} letters leak an identifier",
        ]
    lines = []
    for attribute in metrics["attributes"]:
        scores = attribute["metrics"]
        accuracy = scores.get("accuracy", scores.get("accuracy_given_prediction"))
        shown = "-" if accuracy is None else f"{accuracy:.3f}"
        note = "" if "accuracy" in scores else " (given a prediction)"
        lines.append(
            f"  {attribute['attribute_label']:<16} accuracy {shown}{note}  n={attribute['counts']['n_gold_instances']}"
        )
    return lines


def demo_agreement(*, project: Project, user: AbstractBaseUser, log: Callable[[str], None]) -> None:
    """The agreement between the project's annotators, computed once (the project page shows it)."""
    if agreement_latest(project=project) is not None:
        return
    job = agreement_job_create(project=project, user=user)
    job.refresh_from_db()
    log(f"{project.slug}: agreement job {job.pk} {job.state}")
