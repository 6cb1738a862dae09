"""The dev_val_test transitions, told as the story of alice's letters project."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotations.models import Document, EvaluationStrategy, ProjectPhase
from experiments.models import RunStage, RunStatus, Split, SplitAssignment, SplitEvent
from experiments.splits import (
    SplitRuleViolation,
    split_accept,
    split_any_assigned,
    split_assign_development,
    split_counts,
    split_move_to_validation,
    split_reject,
)
from tests.splits.conftest import make_run


def _external_ids(documents) -> list[str]:
    return [document.external_id for document in documents]


def _in_split(project, split: str) -> set[str]:
    return set(
        SplitAssignment.objects.filter(project=project, split=split).values_list(
            "document__external_id", flat=True
        )
    )


def _validate(project, alice, *, n: int = 8, seed: int = 2):
    development_run = make_run(project, stage=RunStage.DEVELOPMENT)
    return split_move_to_validation(project=project, actor=alice, run=development_run, n=n, seed=seed)


def test_alice_draws_twenty_development_documents_and_the_same_seed_draws_them_again(letters, alice):
    drawn = split_assign_development(project=letters, actor=alice, n=20, seed=42)

    assert len(drawn) == 20
    assert _in_split(letters, Split.DEVELOPMENT) == set(_external_ids(drawn))
    assert split_any_assigned(project=letters)

    SplitAssignment.objects.all().delete()
    assert _external_ids(
        split_assign_development(project=letters, actor=alice, n=20, seed=42)
    ) == _external_ids(drawn)


def test_she_can_name_the_development_documents_instead(letters, alice):
    split_assign_development(project=letters, actor=alice, document_ids=["letter-001", "letter-002"])

    assert _in_split(letters, Split.DEVELOPMENT) == {"letter-001", "letter-002"}


def test_naming_an_unknown_or_an_assigned_document_is_refused(letters, alice):
    split_assign_development(project=letters, actor=alice, document_ids=["letter-001"])

    with pytest.raises(ValidationError, match="letter-999"):
        split_assign_development(project=letters, actor=alice, document_ids=["letter-999"])
    with pytest.raises(SplitRuleViolation) as refusal:
        split_assign_development(project=letters, actor=alice, document_ids=["letter-001", "letter-003"])
    assert refusal.value.details == {"already_assigned": ["letter-001"]}


def test_a_stratified_draw_takes_each_ward_in_proportion(letters, alice):
    drawn = split_assign_development(project=letters, actor=alice, n=15, seed=5, stratify_by="ward")

    wards = sorted(document.metadata["ward"] for document in drawn)
    assert wards == ["cardiology"] * 5 + ["oncology"] * 5 + ["surgery"] * 5


def test_a_null_strategy_project_has_no_splits(project, alice):
    Document.objects.create(project=project, external_id="letter-000", text="x")

    with pytest.raises(SplitRuleViolation, match="null strategy"):
        split_assign_development(project=project, actor=alice, n=1, seed=0)


def test_moving_to_validation_draws_documents_no_development_run_has_seen(letters, alice):
    development = set(_external_ids(split_assign_development(project=letters, actor=alice, n=20, seed=42)))
    development_run = make_run(letters, stage=RunStage.DEVELOPMENT, config_hash="prompt-v3")

    validation = split_move_to_validation(project=letters, actor=alice, run=development_run, n=8, seed=7)

    letters.refresh_from_db()
    assert len(validation) == 8
    assert not development & set(_external_ids(validation))
    assert _in_split(letters, Split.DEVELOPMENT) == development
    assert letters.phase == ProjectPhase.VALIDATION
    assert letters.chosen_config_hash == "prompt-v3"


def test_the_configuration_to_validate_comes_from_a_scored_development_run_of_the_project(
    letters, alice, charlie
):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    still_open = make_run(letters, stage=RunStage.DEVELOPMENT, status=RunStatus.OPEN)

    with pytest.raises(SplitRuleViolation, match="scored development run"):
        split_move_to_validation(project=letters, actor=alice, run=still_open, n=8, seed=7)


def test_validation_always_leaves_a_document_for_the_test(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)

    with pytest.raises(SplitRuleViolation, match="must stay for the test") as refusal:
        _validate(letters, alice, n=30)
    assert refusal.value.details == {"n": 30, "available": 29}


def test_rejecting_returns_the_validation_documents_to_development_and_clears_the_choice(letters, alice):
    development = set(_external_ids(split_assign_development(project=letters, actor=alice, n=20, seed=42)))
    validation = set(_external_ids(_validate(letters, alice)))

    returned = split_reject(project=letters, actor=alice, reason="recall too low")

    letters.refresh_from_db()
    assert set(_external_ids(returned)) == validation
    assert _in_split(letters, Split.DEVELOPMENT) == development | validation
    assert _in_split(letters, Split.VALIDATION) == set()
    assert letters.phase == ProjectPhase.DEVELOPMENT
    assert letters.chosen_config_hash == ""


def test_accepting_makes_every_remaining_document_a_sealed_test_document(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    _validate(letters, alice)
    make_run(letters, stage=RunStage.VALIDATION)

    test_documents = split_accept(project=letters, actor=alice)

    letters.refresh_from_db()
    assert len(test_documents) == 50 - 20 - 8
    assert letters.phase == ProjectPhase.FINISHED
    assert split_counts(project=letters) == {"development": 20, "validation": 8, "test": 22, "unassigned": 0}
    assert not SplitAssignment.objects.filter(project=letters, sealed=False).exists()


def test_accepting_needs_a_scored_validation_run_of_the_chosen_configuration(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    _validate(letters, alice)
    make_run(letters, stage=RunStage.VALIDATION, config_hash="another-config")

    with pytest.raises(SplitRuleViolation, match="validation run of the chosen configuration"):
        split_accept(project=letters, actor=alice)


def test_after_acceptance_no_split_can_change(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    _validate(letters, alice)
    make_run(letters, stage=RunStage.VALIDATION)
    split_accept(project=letters, actor=alice)

    for transition in (
        lambda: split_assign_development(project=letters, actor=alice, n=1, seed=1),
        lambda: _validate(letters, alice, n=1),
        lambda: split_reject(project=letters, actor=alice),
        lambda: split_accept(project=letters, actor=alice),
    ):
        with pytest.raises(SplitRuleViolation, match="sealed") as refusal:
            transition()
        assert refusal.value.code == "splits_sealed"


def test_each_transition_belongs_to_its_phase(letters, alice):
    with pytest.raises(SplitRuleViolation, match="in the development phase"):
        split_accept(project=letters, actor=alice)
    with pytest.raises(SplitRuleViolation, match="in the development phase"):
        split_reject(project=letters, actor=alice)

    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    _validate(letters, alice)

    with pytest.raises(SplitRuleViolation, match="in the validation phase"):
        split_assign_development(project=letters, actor=alice, n=1, seed=1)


def test_every_move_leaves_an_event_with_who_when_why_the_seed_and_the_request(letters, alice):
    split_assign_development(
        project=letters, actor=alice, n=3, seed=11, reason="first look", request_id="req-assign"
    )

    events = list(SplitEvent.objects.filter(project=letters).order_by("id"))
    per_document, project_event = events[:-1], events[-1]
    assert len(per_document) == 3
    for event in per_document:
        assert (event.action, event.from_split, event.to_split) == ("assign_development", "", "development")
        assert (event.actor, event.reason, event.seed, event.request_id) == (
            alice,
            "first look",
            11,
            "req-assign",
        )
        assert event.phase == ProjectPhase.DEVELOPMENT
        assert event.created_at is not None
    assert [event.counts_after["development"] for event in per_document] == [1, 2, 3]
    assert project_event.document is None
    assert project_event.counts_after == {"development": 3, "validation": 0, "test": 0, "unassigned": 47}


def test_the_validation_event_names_the_run_whose_configuration_was_chosen(letters, alice):
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    development_run = make_run(letters, stage=RunStage.DEVELOPMENT)

    split_move_to_validation(
        project=letters, actor=alice, run=development_run, n=8, seed=7, request_id="req-val"
    )

    events = SplitEvent.objects.filter(project=letters, action="move_to_validation")
    assert events.count() == 9
    assert {event.run_id for event in events} == {development_run.pk}
    assert {(event.from_split, event.to_split) for event in events.exclude(document=None)} == {
        ("", "validation")
    }


def test_the_strategy_can_change_until_the_first_split_is_assigned(letters, alice):
    assert not split_any_assigned(project=letters)

    split_assign_development(project=letters, actor=alice, document_ids=["letter-000"])

    assert split_any_assigned(project=letters)
    assert letters.strategy == EvaluationStrategy.DEV_VAL_TEST
