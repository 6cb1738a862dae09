"""Helpers shared by the run, prediction, scoring and results tests: gold loaded through the real
import services, data files, and the clients' common moves (create a run, post, finalize)."""

from __future__ import annotations

import json
from pathlib import Path

from annotations.importers.labels import LabelMap
from annotations.importers.sources import ArchiveLimits
from annotations.models import Attribute, Membership, Project
from annotations.roles import Role
from annotations.services import attributes_upsert, gold_import
from annotations.services.gold_read import read_attribute_gold, read_prompts, read_spans
from experiments.splits import split_assign_development
from metrics.engine.attributes.types import AttributeType

DATA = Path(__file__).resolve().parent.parent / "data"
EXTRACTION = DATA / "extraction"
SPANS = DATA / "runs"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def prompts_as_run_prompts(path: Path = EXTRACTION / "prompts.csv") -> list[dict]:
    """The prompt CSV as a run's `prompts` list, as a pipeline would send the prompts it used."""
    prompt_set = read_prompts(path, display_name=path.name)
    return [
        {
            "attribute_id": spec.attribute_id,
            "attribute_label": spec.label,
            "output_data_type": spec.type.value.lower(),
            "prompt": spec.prompt,
        }
        for spec in prompt_set.attributes
    ]


def load_extraction_gold(project: Project, *, gold: Path = EXTRACTION / "gold.jsonl") -> None:
    """The extraction fixtures' schema (prompt CSV) and gold (JSONL), through the import services."""
    prompt_set = read_prompts(EXTRACTION / "prompts.csv", display_name="prompts.csv")
    attributes_upsert(project=project, specs=prompt_set.attributes)
    types = {
        attribute_id: AttributeType(kind)
        for attribute_id, kind in Attribute.objects.filter(project=project).values_list(
            "attribute_id", "type"
        )
    }
    gold_set = read_attribute_gold(gold, display_name=gold.name, eppi=False, attribute_types=types)
    gold_import(project=project, gold=gold_set, source=gold.name)


def load_span_gold(project: Project, *, gold: Path = SPANS / "spans_gold.jsonl") -> None:
    gold_set = read_spans(
        gold,
        display_name=gold.name,
        label_map=LabelMap.default(),
        annotator=None,
        limits=ArchiveLimits(),
        progress=lambda done: None,
    )
    gold_import(project=project, gold=gold_set, source=gold.name)


def span_project_in_development(project: Project, manager) -> Project:
    """`project` under the dev_val_test strategy, in development, with the span gold: letter-1 and
    letter-2 in development, assigned by `manager`; letter-3 is held back for the test."""
    project.strategy, project.phase = "dev_val_test", "development"
    project.save()
    load_span_gold(project)
    split_assign_development(project=project, actor=manager, document_ids=["letter-1", "letter-2"])
    return project


def add_member(project: Project, user, role: str = Role.PIPELINE) -> None:
    Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})


def create_run(client, *, slug: str = "letters", kind: str = "attributes", **fields) -> dict:
    body = {"name": f"{kind} run", "kind": kind, "model": "gpt-4o-mini", "provider": "openai", **fields}
    response = client.post(f"/api/v1/projects/{slug}/runs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def post_documents(client, run_id: int, documents: list[dict], *, replace: bool = False, **headers):
    url = f"/api/v1/runs/{run_id}/predictions/" + ("?replace=true" if replace else "")
    return client.post(url, {"documents": documents}, format="json", **headers)


def posted_extraction_run(project: Project, client, **fields) -> dict:
    """An attributes run of `project`, once the test gold is loaded, with the gold's prompts and the test
    predictions (llm.jsonl) posted; `fields` are more of the run's fields (config…)."""
    load_extraction_gold(project)
    run = create_run(client, prompts=prompts_as_run_prompts(), **fields)
    assert post_documents(client, run["id"], read_jsonl(EXTRACTION / "llm.jsonl")).status_code == 201
    return run


def finalize(client, run_id: int) -> dict:
    response = client.post(f"/api/v1/runs/{run_id}/finalize/")
    assert response.status_code == 202, response.content
    return response.json()
