"""Gold imports as the worker runs them: versions, identical re-imports, conflicts, all or nothing.

Tasks run in-process here (see conftest); tests/services/test_gold_import_worker.py sends them to a
real worker.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from annotations.models import Attribute, Document, GoldKind, GoldSpan, GoldVersion, Job, JobState
from annotations.selectors import (
    gold_attribute_documents,
    gold_span_documents,
    gold_version_current,
    gold_version_get,
)
from annotations.services import import_job_create, import_job_run
from annotations.services.jobs import jobs_dispatch
from tests.importers.test_span_fixtures import jsonl_bytes, jsonl_line
from tests.services.test_gold_import_fixtures import (
    EXTRACTION_DATA,
    LETTER_1,
    LETTER_3,
    cas_export_zip,
    eppi_bytes,
    letters_jsonl,
    media_root,  # noqa: F401 (a fixture)
    prompts_bytes,
    upload,
)

pytestmark = pytest.mark.usefixtures("media_root")


@pytest.fixture
def run_import(project, alice, django_capture_on_commit_callbacks):
    """alice uploads a file; the task runs when the upload's transaction commits."""

    def run(name: str, content: bytes, **params) -> Job:
        with django_capture_on_commit_callbacks(execute=True):
            job = import_job_create(project=project, user=alice, upload=upload(name, content), **params)
        job.refresh_from_db()
        return job

    return run


def spans_of(version: GoldVersion) -> list[tuple[str, int, int, str, str]]:
    return [
        (document.document_id, span.start, span.end, span.entity_type, span.label)
        for document in gold_span_documents(gold_version=version)
        for span in document.spans
    ]


def test_a_first_import_creates_the_documents_and_gold_version_1(project, run_import):
    job = run_import("letters.jsonl", letters_jsonl())

    assert job.state == JobState.SUCCEEDED, job.errors
    assert job.result["gold_version"] == 1
    assert job.result["documents_created"] == 3
    assert job.result["rows_imported"] == 4
    assert job.progress_done == job.progress_total > 0
    version = gold_version_current(project=project, kind=GoldKind.SPANS)
    assert spans_of(version) == [
        ("letter-1", 5, 19, "PERSON_NAME", "PatientName"),
        ("letter-1", 26, 36, "DATE_OF_BIRTH", "DateOfBirth"),
        ("letter-2", 5, 17, "PERSON_NAME", "name"),
        ("letter-2", 27, 37, "OTHER_DATE", "OTHER_DATE"),
    ]
    # A letter without identifiers is in the gold set: it is scored for false positives.
    documents = {document.document_id: document for document in gold_span_documents(gold_version=version)}
    assert documents["letter-3"].text == LETTER_3
    assert documents["letter-3"].spans == []
    assert version.content_hash and version.created_by.username == "alice"


def test_importing_identical_content_again_changes_nothing_and_says_so(project, run_import):
    run_import("letters.jsonl", letters_jsonl())

    again = run_import("letters-copy.jsonl", letters_jsonl())

    assert again.state == JobState.SUCCEEDED
    assert again.result["unchanged"] is True
    assert again.result["gold_version"] == 1
    assert GoldVersion.objects.filter(project=project).count() == 1
    assert Document.objects.filter(project=project).count() == 3


def test_a_changed_import_makes_a_new_version_and_the_old_one_stays_as_it_was(project, run_import):
    run_import("letters.jsonl", letters_jsonl())
    version_1 = gold_version_get(project=project, kind=GoldKind.SPANS, number=1)
    before = spans_of(version_1)

    changed = run_import("letters.jsonl", letters_jsonl(second_date_type="DATE_OF_BIRTH"))

    assert changed.result["unchanged"] is False
    assert changed.result["gold_version"] == 2
    version_2 = gold_version_current(project=project, kind=GoldKind.SPANS)
    assert ("letter-2", 27, 37, "DATE_OF_BIRTH", "DATE_OF_BIRTH") in spans_of(version_2)
    assert spans_of(version_1) == before
    assert version_1.content_hash != version_2.content_hash


def test_a_new_version_keeps_the_gold_of_documents_the_import_does_not_mention(project, run_import):
    run_import("letters.jsonl", letters_jsonl())

    job = run_import("one.jsonl", jsonl_bytes([jsonl_line("letter-1", LETTER_1, [(5, 8, "firstname")])]))

    assert job.result["gold_version"] == 2
    assert job.result["documents_carried_over"] == 2
    assert job.result["documents"] == 3
    version_2 = gold_version_current(project=project, kind=GoldKind.SPANS)
    assert spans_of(version_2) == [
        ("letter-1", 5, 8, "PERSON_NAME", "firstname"),
        ("letter-2", 5, 17, "PERSON_NAME", "name"),
        ("letter-2", 27, 37, "OTHER_DATE", "OTHER_DATE"),
    ]


def test_a_document_whose_text_changed_fails_the_import_naming_it_and_writes_nothing(project, run_import):
    run_import("letters.jsonl", letters_jsonl())
    rows_before = GoldSpan.objects.count()

    job = run_import(
        "edited.jsonl",
        jsonl_bytes(
            [
                jsonl_line("letter-4", "Neu.", []),
                jsonl_line("letter-1", LETTER_1.replace("Berlin", "Bremen"), [(5, 19, "name")]),
            ]
        ),
    )

    assert job.state == JobState.FAILED
    (error,) = job.errors
    assert error["document_id"] == "letter-1"
    assert "text differs" in error["message"]
    assert not Document.objects.filter(external_id="letter-4").exists()
    assert GoldVersion.objects.filter(project=project).count() == 1
    assert GoldSpan.objects.count() == rows_before


def test_a_file_with_bad_offsets_fails_with_file_line_and_field_and_writes_nothing(project, run_import):
    bad = jsonl_bytes(
        [jsonl_line("letter-1", LETTER_1, [(5, 19, "name")]), jsonl_line("x", "kurz", [(2, 99, "name")])]
    )

    job = run_import("bad.jsonl", bad)

    assert job.state == JobState.FAILED
    (error,) = job.errors
    assert (error["file"], error["line"], error["document_id"]) == ("bad.jsonl", 2, "x")
    assert error["field"].startswith("entities[0].")
    assert not Document.objects.filter(project=project).exists()


def test_unknown_labels_are_imported_as_other_pii_with_one_warning_each(project, run_import):
    job = run_import("odd.jsonl", jsonl_bytes([jsonl_line("letter-3", LETTER_3, [(0, 6, "Kennung")])]))

    assert job.state == JobState.SUCCEEDED
    (warning,) = job.warnings
    assert "'Kennung'" in warning["message"] and warning["file"] == "odd.jsonl"
    assert GoldSpan.objects.get().entity_type == "OTHER_PII"


def test_a_label_map_chooses_the_type_of_a_custom_label(project, run_import):
    job = run_import(
        "odd.jsonl",
        jsonl_bytes([jsonl_line("letter-3", LETTER_3, [(0, 6, "Kennung")])]),
        label_map='{"Kennung": "ID_NUMBER"}',
    )

    assert job.warnings == []
    assert GoldSpan.objects.get().entity_type == "ID_NUMBER"


def test_an_inception_export_imports_its_annotated_documents(project, run_import):
    job = run_import("export.zip", cas_export_zip())

    assert job.state == JobState.SUCCEEDED, job.errors
    version = gold_version_current(project=project, kind=GoldKind.SPANS)
    assert spans_of(version) == [
        ("letter-1", 5, 19, "PERSON_NAME", "PatientName"),
        ("letter-2", 5, 17, "PERSON_NAME", "PatientName"),
    ]


def test_a_single_cas_file_keeps_its_uploaded_name_as_document_id(project, run_import):
    from tests.importers.test_span_fixtures import cas_json

    job = run_import("letter 7.json", cas_json(LETTER_3, [(0, 6, "name")]))

    assert job.state == JobState.SUCCEEDED, job.errors
    assert Document.objects.get(project=project).external_id == "letter 7"


def test_the_prompt_csv_sets_the_schema_and_again_is_unchanged(project, run_import):
    job = run_import("prompts.csv", prompts_bytes())

    assert job.state == JobState.SUCCEEDED, job.errors
    assert job.result["attributes_created"] == 5
    assert job.result["attributes_not_scored"] == ["105"]
    assert list(Attribute.objects.filter(project=project).values_list("attribute_id", "type")) == [
        ("101", "BOOL"),
        ("102", "STRING"),
        ("103", "INTEGER"),
        ("104", "FLOAT"),
        ("105", "STRING"),
    ]
    assert run_import("prompts.csv", prompts_bytes()).result["unchanged"] is True


def test_an_eppi_export_after_the_prompts_makes_attribute_gold(project, run_import):
    run_import("prompts.csv", prompts_bytes())

    job = run_import("gold_eppi.json", eppi_bytes())

    assert job.state == JobState.SUCCEEDED, job.errors
    assert job.result["kind"] == GoldKind.ATTRIBUTES
    version = gold_version_current(project=project, kind=GoldKind.ATTRIBUTES)
    documents = {
        document.document_id: document for document in gold_attribute_documents(gold_version=version)
    }
    assert sorted(documents) == ["1001", "1002", "1003", "1004"]
    assert documents["1001"].name == "Smith 2020"
    assert documents["1001"].annotations["101"].output_data is True
    assert documents["1001"].annotations["102"].output_data == "Kenya"
    assert documents["1004"].annotations == {}  # not coded: listed, and left unscored by the engine
    country = version.attribute_values.get(document__external_id="1001", attribute__attribute_id="102")
    assert country.citation_page == "2"
    assert country.citation_highlight_text == "The trial was conducted in Kenya"
    assert run_import("gold_eppi.json", eppi_bytes()).result["unchanged"] is True


def test_an_eppi_export_before_any_schema_fails_pointing_at_the_prompt_csv(project, run_import):
    job = run_import("gold_eppi.json", eppi_bytes())

    assert job.state == JobState.FAILED
    assert "prompt CSV" in job.errors[0]["message"]
    assert not Document.objects.filter(project=project).exists()


def test_a_task_delivered_twice_imports_once(project, run_import):
    job = run_import("letters.jsonl", letters_jsonl())

    assert import_job_run(job_id=job.pk) == "skipped"
    assert GoldVersion.objects.filter(project=project).count() == 1
    job.refresh_from_db()
    assert job.attempts == 1


def test_a_job_left_running_by_a_dead_worker_runs_again_safely(project, alice):
    # What a crash leaves: the job claimed (running) and, the write transaction never committed, no gold.
    silent_since = timezone.now() - timedelta(seconds=settings.JOB_STALE_SECONDS + 1)
    job = Job.objects.create(
        kind="import",
        project=project,
        created_by=alice,
        state=JobState.RUNNING,
        attempts=1,
        claim_token="dead",
        heartbeat_at=silent_since,
    )
    job.input_file.save("crash/letters.jsonl", upload("letters.jsonl", letters_jsonl()), save=False)
    job.params = {"format": "auto", "file_name": "letters.jsonl"}
    job.save()

    assert import_job_run(job_id=job.pk) == "skipped"  # a redelivery leaves it to the dispatcher
    assert jobs_dispatch().requeued == 1  # which queues it again and (in-process here) runs it

    job.refresh_from_db()
    assert (job.state, job.attempts) == (JobState.SUCCEEDED, 2)
    assert GoldVersion.objects.filter(project=project).count() == 1


def test_an_export_with_two_annotators_needs_one_chosen_and_records_who(project, run_import):
    from tests.importers.test_span_fixtures import cas_json, zip_bytes

    export = zip_bytes(
        {
            "annotation/letter-1.txt/alice.json": cas_json(LETTER_1, [(5, 19, "PatientName")]),
            "annotation/letter-1.txt/bob.json": cas_json(LETTER_1, [(9, 19, "lastname")]),
        }
    )

    unchosen = run_import("export.zip", export)
    chosen = run_import("export.zip", export, annotator="bob")

    assert unchosen.state == JobState.FAILED
    assert "the annotator field" in unchosen.errors[0]["message"]
    assert chosen.state == JobState.SUCCEEDED, chosen.errors
    version = gold_version_current(project=project, kind=GoldKind.SPANS)
    assert version.annotator == "bob"
    assert spans_of(version) == [("letter-1", 9, 19, "PERSON_NAME", "lastname")]


def test_native_attribute_jsonl_is_told_from_span_jsonl_by_its_content(project, run_import):
    run_import("prompts.csv", prompts_bytes())

    job = run_import("gold.jsonl", (EXTRACTION_DATA / "gold.jsonl").read_bytes())

    assert job.state == JobState.SUCCEEDED, job.errors
    assert job.result["kind"] == GoldKind.ATTRIBUTES
    version = gold_version_current(project=project, kind=GoldKind.ATTRIBUTES)
    smith = next(d for d in gold_attribute_documents(gold_version=version) if d.document_id == "1001")
    assert smith.name == "Smith 2020"
    assert smith.annotations["103"].output_data == 120


def test_values_of_attributes_outside_the_schema_are_skipped_with_a_warning(project, run_import):
    run_import("prompts.csv", prompts_bytes())
    line = (
        b'{"document_id": "d1", "attributes": {"101": {"output_data": true}, "999": {"output_data": "x"}}}\n'
    )

    job = run_import("gold.jsonl", line)

    assert job.state == JobState.SUCCEEDED, job.errors
    (warning,) = job.warnings
    assert "'999'" in warning["message"] and warning["documents"] == ["d1"]
    assert job.result["rows_imported"] == 1


def test_a_document_created_without_text_takes_the_text_of_a_later_import(project, run_import):
    run_import("prompts.csv", prompts_bytes())
    run_import("gold_eppi.json", eppi_bytes())
    assert Document.objects.get(project=project, external_id="1001").text == ""

    job = run_import("spans.jsonl", jsonl_bytes([jsonl_line("1001", LETTER_1, [(5, 19, "name")])]))

    assert job.state == JobState.SUCCEEDED, job.errors
    smith = Document.objects.get(project=project, external_id="1001")
    assert (smith.text, smith.name) == (LETTER_1, "Smith 2020")
    assert smith.content_hash == Document.hash_text(LETTER_1)


def test_a_prompt_csv_breaking_a_schema_rule_fails_with_the_reason_and_changes_nothing(project, run_import):
    csv = f"prompt,output_data_type,attribute_id,attribute_label\nAge?,integer,1,{'x' * 301}\n".encode()

    job = run_import("prompts.csv", csv)

    assert job.state == JobState.FAILED
    assert "the limit is 300" in job.errors[0]["message"]
    assert (job.errors[0]["file"], job.errors[0]["line"]) == ("prompts.csv", 2)
    assert job.errors[0]["field"] == "attribute_label"
    assert not Attribute.objects.filter(project=project).exists()
