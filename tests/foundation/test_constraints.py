"""The database itself refuses bad rows, whatever code path writes them."""

import pytest
from django.db import IntegrityError, transaction

from annotations.models import (
    Attribute,
    Document,
    GoldAttributeValue,
    GoldSpan,
    GoldVersion,
    Membership,
    Project,
)
from experiments.models import ExperimentRun, PredictedSpan, RunDocument, SplitAssignment
from metrics.models import MetricValue, Scoring

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(project):
    return Document.objects.create(project=project, external_id="doc-1", text="Max Mustermann, 01.02.1980")


@pytest.fixture
def gold_version(project):
    return GoldVersion.objects.create(project=project, kind="spans", number=1, content_hash="x")


def refused(create) -> bool:
    try:
        with transaction.atomic():
            create()
    except IntegrityError:
        return True
    return False


def test_it_refuses_a_gold_span_whose_start_is_not_before_its_end(document, gold_version):
    assert refused(
        lambda: GoldSpan.objects.create(gold_version=gold_version, document=document, start=5, end=5)
    )
    assert refused(
        lambda: GoldSpan.objects.create(gold_version=gold_version, document=document, start=7, end=3)
    )


def test_it_refuses_a_negative_gold_span_start(document, gold_version):
    assert refused(
        lambda: GoldSpan.objects.create(gold_version=gold_version, document=document, start=-1, end=3)
    )


def test_it_accepts_a_valid_gold_span(document, gold_version):
    GoldSpan.objects.create(
        gold_version=gold_version, document=document, start=0, end=14, entity_type="PERSON_NAME"
    )


def test_it_refuses_a_second_document_with_the_same_external_id_in_a_project(project, document):
    assert refused(lambda: Document.objects.create(project=project, external_id="doc-1", text=""))


def test_the_same_external_id_is_fine_in_another_project(alice, document):
    other = Project.objects.create(name="Other", slug="other")
    Document.objects.create(project=other, external_id="doc-1", text="")


def test_it_refuses_a_second_split_assignment_for_one_document(project, document):
    SplitAssignment.objects.create(project=project, document=document, split="development")
    assert refused(lambda: SplitAssignment.objects.create(project=project, document=document, split="test"))


def test_it_refuses_a_second_membership_of_one_user(project, alice):
    assert refused(lambda: Membership.objects.create(project=project, user=alice, role="viewer"))


def test_it_refuses_a_phase_that_does_not_fit_the_strategy(alice):
    assert refused(lambda: Project.objects.create(name="p", slug="p1", strategy="null", phase="development"))
    assert refused(lambda: Project.objects.create(name="p", slug="p2", strategy="dev_val_test", phase=""))


def test_it_refuses_two_gold_values_for_one_document_and_attribute(project, document):
    version = GoldVersion.objects.create(project=project, kind="attributes", number=1, content_hash="x")
    attribute = Attribute.objects.create(
        project=project, attribute_id="5001", label="Randomised", type="BOOL"
    )
    GoldAttributeValue.objects.create(
        gold_version=version, document=document, attribute=attribute, output_data=True
    )
    assert refused(
        lambda: GoldAttributeValue.objects.create(
            gold_version=version, document=document, attribute=attribute, output_data=False
        )
    )


def test_it_refuses_gold_version_number_zero(project):
    assert refused(
        lambda: GoldVersion.objects.create(project=project, kind="spans", number=0, content_hash="x")
    )


def test_it_refuses_a_predicted_span_with_bad_offsets_and_a_second_record_per_document(project, document):
    run = ExperimentRun.objects.create(project=project, name="r", kind="spans", config_hash="h")
    run_document = RunDocument.objects.create(run=run, document=document, content_hash="c")
    assert refused(lambda: PredictedSpan.objects.create(run_document=run_document, start=3, end=2))
    assert refused(lambda: RunDocument.objects.create(run=run, document=document, content_hash="d"))
    assert refused(
        lambda: RunDocument.objects.create(run=run, document=document, content_hash="d", input_tokens=-1)
    )


def test_it_refuses_a_confidence_interval_whose_low_is_above_its_high(project, gold_version):
    run = ExperimentRun.objects.create(project=project, name="r", kind="spans", config_hash="h")
    scoring = Scoring.objects.create(run=run, number=1, gold_version=gold_version)
    assert refused(
        lambda: MetricValue.objects.create(
            scoring=scoring, run=run, scope="overall", name="f1", value=0.5, ci_low=0.7, ci_high=0.3
        )
    )
