"""Before acceptance no one sees the gold of the documents held back for the test; each attempt is logged."""

from __future__ import annotations

import logging

import pytest

from annotations.models import Document
from experiments.models import RunStage, Split, SplitAssignment, SplitEvent
from experiments.splits import (
    SplitAccessRefused,
    split_accept,
    split_assign_development,
    split_exclude_hidden,
    split_hidden_document_ids,
    split_move_to_validation,
    split_refuse_hidden_access,
)
from tests.splits.conftest import make_run


def _assigned(project, *splits: str) -> set[int]:
    return set(
        SplitAssignment.objects.filter(project=project, split__in=splits).values_list(
            "document_id", flat=True
        )
    )


def test_before_any_draw_every_document_is_held_back(letters):
    assert split_hidden_document_ids(project=letters) == set(
        Document.objects.filter(project=letters).values_list("pk", flat=True)
    )


def test_development_and_validation_documents_are_visible_the_rest_is_not(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    run = make_run(letters, stage=RunStage.DEVELOPMENT)
    split_move_to_validation(project=letters, actor=alice, run=run, n=8, seed=7)
    letters.refresh_from_db()
    every = set(Document.objects.filter(project=letters).values_list("pk", flat=True))

    hidden = split_hidden_document_ids(project=letters)

    assert hidden == every - _assigned(letters, Split.DEVELOPMENT, Split.VALIDATION)
    assert len(hidden) == 22
    visible = split_exclude_hidden(
        Document.objects.filter(project=letters), project=letters, document_field="pk"
    )
    assert set(visible.values_list("pk", flat=True)) == every - hidden


def test_after_acceptance_nothing_is_hidden(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    run = make_run(letters, stage=RunStage.DEVELOPMENT)
    split_move_to_validation(project=letters, actor=alice, run=run, n=8, seed=7)
    make_run(letters, stage=RunStage.VALIDATION)
    split_accept(project=letters, actor=alice)
    letters.refresh_from_db()

    assert split_hidden_document_ids(project=letters) == set()


def test_under_the_null_strategy_nothing_is_hidden(project):
    Document.objects.create(project=project, external_id="d1", text="x")

    assert split_hidden_document_ids(project=project) == set()


def test_reading_held_back_gold_is_refused_and_logged(letters, bob, caplog):
    held_back = Document.objects.get(project=letters, external_id="letter-007")

    with (
        caplog.at_level(logging.WARNING, logger="experiments.splits"),
        pytest.raises(SplitAccessRefused) as refusal,
    ):
        split_refuse_hidden_access(
            project=letters, user=bob, document_ids=[held_back.pk], what="gold", request_id="req-peek"
        )

    assert refusal.value.status_code == 403
    event = SplitEvent.objects.get(project=letters, action="access_refused")
    assert (event.actor, event.document, event.request_id) == (bob, held_back, "req-peek")
    assert "letter-007" in event.reason
    assert "split access refused" in caplog.text and "user=bob" in caplog.text
