"""What a run may be and do under each strategy: its stage, its configuration, its documents, its scoring."""

from __future__ import annotations

import pytest

from annotations.models import Document
from experiments.models import RunStage, Split, SplitAssignment, SplitEvent
from experiments.splits import (
    SplitRuleViolation,
    split_accept,
    split_assign_development,
    split_check_can_score,
    split_check_prediction_documents,
    split_check_run_config,
    split_document_ids_in_stage,
    split_move_to_validation,
    split_on_run_scored,
    split_reject,
    split_stage_for_new_run,
)
from tests.splits.conftest import make_run


@pytest.fixture
def in_validation(letters, alice):
    """20 development documents, and 8 fresh ones validating the configuration "config-a"."""
    split_assign_development(project=letters, actor=alice, n=20, seed=42)
    chosen = make_run(letters, stage=RunStage.DEVELOPMENT, config_hash="config-a")
    split_move_to_validation(project=letters, actor=alice, run=chosen, n=8, seed=7)
    letters.refresh_from_db()
    return letters


@pytest.fixture
def finished(in_validation, alice):
    make_run(in_validation, stage=RunStage.VALIDATION, config_hash="config-a")
    split_accept(project=in_validation, actor=alice)
    in_validation.refresh_from_db()
    return in_validation


def _pks(project, split: str) -> set[int]:
    return set(
        SplitAssignment.objects.filter(project=project, split=split).values_list("document_id", flat=True)
    )


def test_under_the_null_strategy_every_run_is_evaluated_on_every_document(project):
    documents = {Document.objects.create(project=project, external_id=f"d{i}", text="x").pk for i in range(3)}

    assert split_stage_for_new_run(project=project) == RunStage.ALL
    assert split_document_ids_in_stage(project=project, stage=RunStage.ALL) == documents
    with pytest.raises(SplitRuleViolation, match="null strategy"):
        split_stage_for_new_run(project=project, requested_stage=RunStage.TEST)


def test_in_development_a_new_run_is_a_development_run(letters):
    assert split_stage_for_new_run(project=letters) == RunStage.DEVELOPMENT
    for stage in (RunStage.VALIDATION, RunStage.TEST, RunStage.ALL):
        with pytest.raises(SplitRuleViolation, match="development phase"):
            split_stage_for_new_run(project=letters, requested_stage=stage)


def test_in_validation_a_new_run_validates_the_chosen_configuration_unless_it_asks_for_development(
    in_validation,
):
    assert split_stage_for_new_run(project=in_validation, config_hash="config-a") == RunStage.VALIDATION
    assert (
        split_stage_for_new_run(project=in_validation, requested_stage="development", config_hash="config-b")
        == RunStage.DEVELOPMENT
    )


def test_a_validation_run_with_another_configuration_is_refused_with_the_reason(in_validation):
    with pytest.raises(SplitRuleViolation) as refusal:
        split_stage_for_new_run(project=in_validation, config_hash="config-b")

    assert refusal.value.status_code == 409
    assert refusal.value.code == "configuration_not_chosen"
    assert refusal.value.details == {
        "stage": "validation",
        "config_hash": "config-b",
        "chosen_config_hash": "config-a",
    }
    with pytest.raises(SplitRuleViolation, match="chosen configuration"):
        split_check_run_config(project=in_validation, stage=RunStage.VALIDATION, config_hash="config-b")


def test_after_acceptance_a_new_run_is_the_test_run_of_the_chosen_configuration(finished):
    assert split_stage_for_new_run(project=finished, config_hash="config-a") == RunStage.TEST
    with pytest.raises(SplitRuleViolation, match="chosen configuration"):
        split_stage_for_new_run(project=finished, config_hash="config-b")
    with pytest.raises(SplitRuleViolation, match="finished phase"):
        split_stage_for_new_run(project=finished, requested_stage=RunStage.DEVELOPMENT)


def test_each_stage_is_scored_on_its_own_documents_only(finished):
    for stage in (RunStage.DEVELOPMENT, RunStage.VALIDATION, RunStage.TEST):
        assert split_document_ids_in_stage(project=finished, stage=stage) == _pks(finished, stage)
    assert len(split_document_ids_in_stage(project=finished, stage=RunStage.VALIDATION)) == 8


def test_a_run_over_all_documents_is_impossible_under_dev_val_test(letters):
    with pytest.raises(SplitRuleViolation, match="held back for the test"):
        split_document_ids_in_stage(project=letters, stage=RunStage.ALL)

    run_from_the_null_days = make_run(letters, stage=RunStage.ALL, status="open")
    with pytest.raises(SplitRuleViolation, match="held back for the test"):
        split_check_can_score(run=run_from_the_null_days)


def test_predictions_for_a_development_document_in_a_validation_run_are_refused_listing_them(in_validation):
    validation_run = make_run(in_validation, stage=RunStage.VALIDATION, status="open")
    development_document = Document.objects.get(pk=min(_pks(in_validation, Split.DEVELOPMENT)))
    posted = _pks(in_validation, Split.VALIDATION) | {development_document.pk}

    with pytest.raises(SplitRuleViolation) as refusal:
        split_check_prediction_documents(run=validation_run, document_ids=posted)

    assert refusal.value.details == {
        "stage": "validation",
        "documents_outside_stage": [development_document.external_id],
    }
    split_check_prediction_documents(run=validation_run, document_ids=_pks(in_validation, Split.VALIDATION))


def test_a_validation_run_is_not_scored_once_its_validation_documents_went_back(in_validation, alice):
    validation_run = make_run(in_validation, stage=RunStage.VALIDATION, status="open")
    split_check_can_score(run=validation_run)

    split_reject(project=in_validation, actor=alice)

    with pytest.raises(SplitRuleViolation, match="no longer the ones"):
        split_check_can_score(run=validation_run)


def test_the_test_run_is_scored_once_and_its_result_is_final(finished):
    test_run = make_run(finished, stage=RunStage.TEST, status="scoring")
    split_check_can_score(run=test_run)

    split_on_run_scored(run=test_run)

    test_run.refresh_from_db()
    assert test_run.is_final
    event = SplitEvent.objects.get(project=finished, action="test_scored")
    assert event.run == test_run
    with pytest.raises(SplitRuleViolation, match="never rescored"):
        split_check_can_score(run=test_run)
    second = make_run(finished, stage=RunStage.TEST, status="open")
    with pytest.raises(SplitRuleViolation, match="already has its final test result"):
        split_check_can_score(run=second)
    with pytest.raises(SplitRuleViolation, match="already has its final test result"):
        split_on_run_scored(run=second)
    with pytest.raises(SplitRuleViolation, match="already has its final test result"):
        split_stage_for_new_run(project=finished, config_hash="config-a")


def test_a_development_run_being_scored_is_not_final(letters):
    development_run = make_run(letters, stage=RunStage.DEVELOPMENT, status="scoring")

    split_on_run_scored(run=development_run)

    development_run.refresh_from_db()
    assert not development_run.is_final


def test_a_test_run_cannot_be_scored_before_acceptance(in_validation):
    early = make_run(in_validation, stage=RunStage.TEST, status="open")

    with pytest.raises(SplitRuleViolation, match="test stage .* is not open"):
        split_check_can_score(run=early)
