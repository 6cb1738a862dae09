"""The stories the page tests tell: a span project and an attribute project, each with a worse and a
better scored run, and a dev_val_test project whose test documents are held back.

Everything goes through the real services and the API, as a pipeline would: gold imports, runs,
predictions, finalize. `commit` runs the scoring that finalize queues after its transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from annotations.models import Membership, Project
from annotations.roles import Role
from experiments.splits import split_assign_development
from tests.api.runs_support import (
    EXTRACTION,
    SPANS,
    create_run,
    finalize,
    load_extraction_gold,
    load_span_gold,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)

Commit = Callable[[], AbstractContextManager]
HELD_BACK = ("letter-3", "letter-4")


@dataclass(frozen=True)
class Story:
    project: Project
    worse: int
    better: int


def scored_run(
    client, *, slug: str, kind: str, name: str, documents: list[dict], commit: Commit, **fields
) -> int:
    run = create_run(client, slug=slug, kind=kind, name=name, **fields)
    response = post_documents(client, run["id"], documents)
    assert response.status_code == 201, response.content
    with commit():
        finalize(client, run["id"])
    return run["id"]


def perfect_span_predictions() -> list[dict]:
    return [
        {"document_id": line["document_id"], "entities": line["entities"]}
        for line in read_jsonl(SPANS / "spans_gold.jsonl")
    ]


def span_story(project: Project, client, commit: Commit) -> Story:
    """alice's "letters" project: gold for four letters, a sloppy run and a perfect one."""
    load_span_gold(project)
    worse = scored_run(
        client,
        slug=project.slug,
        kind="spans",
        name="sloppy tagger",
        documents=read_jsonl(SPANS / "spans_predictions.jsonl"),
        commit=commit,
    )
    better = scored_run(
        client,
        slug=project.slug,
        kind="spans",
        name="perfect tagger",
        documents=perfect_span_predictions(),
        commit=commit,
    )
    return Story(project, worse, better)


def attribute_story(alice, bob, client, commit: Commit) -> Story:
    """alice's "trials" project (bob a viewer): extraction gold, the fixture LLM output and a better one."""
    project = Project.objects.create(name="Trial abstracts", slug="trials", created_by=alice)
    Membership.objects.create(project=project, user=alice, role=Role.MANAGER)
    Membership.objects.create(project=project, user=bob, role=Role.VIEWER)
    load_extraction_gold(project)
    llm = read_jsonl(EXTRACTION / "llm.jsonl")
    gold = {line["document_id"]: line["attributes"] for line in read_jsonl(EXTRACTION / "gold.jsonl")}
    fields = {"prompts": prompts_as_run_prompts()}
    worse = scored_run(
        client, slug="trials", kind="attributes", name="small model", documents=llm, commit=commit, **fields
    )
    better_documents = [
        {
            **document,
            "annotations": [
                {
                    "attribute_id": attribute_id,
                    "output_data": value["output_data"],
                    "additional_text": value.get("additional_text"),
                }
                for attribute_id, value in gold.get(document["document_id"], {}).items()
            ],
        }
        for document in llm
        if document.get("status", "ok") == "ok"
    ]
    better = scored_run(
        client,
        slug="trials",
        kind="attributes",
        name="large model",
        documents=better_documents,
        commit=commit,
        **fields,
    )
    return Story(project, worse, better)


def held_back_story(alice, client, commit: Commit) -> Story:
    """alice's "split" project under dev_val_test: letters 1-2 in development, 3-4 held back for the test."""
    project = Project.objects.create(
        name="Split letters", slug="split", created_by=alice, strategy="dev_val_test", phase="development"
    )
    Membership.objects.create(project=project, user=alice, role=Role.MANAGER)
    load_span_gold(project)
    split_assign_development(project=project, actor=alice, document_ids=["letter-1", "letter-2"])
    development = [
        d for d in read_jsonl(SPANS / "spans_predictions.jsonl") if d["document_id"] not in HELD_BACK
    ]
    first = scored_run(
        client, slug="split", kind="spans", name="dev run 1", documents=development, commit=commit
    )
    perfect = [d for d in perfect_span_predictions() if d["document_id"] not in HELD_BACK]
    second = scored_run(
        client, slug="split", kind="spans", name="dev run 2", documents=perfect, commit=commit
    )
    return Story(project, first, second)
