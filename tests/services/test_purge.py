"""Purging a project: alice, its creator, deletes it with its documents, gold, runs, results and files.
Afterwards no row, file or log line holds the project's text, and an audit record without content
(who, when, slug, counts) remains. bob (viewer) and another manager may not; charlie gets 404; a
superuser may purge any project."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from annotations.models import Document, Job, JobState, Membership, Project, ProjectPurge
from annotations.roles import Role
from annotations.services.imports import import_job_create
from experiments.models import ExperimentRun
from metrics.models import ComparisonRow
from tests.api.runs_support import (
    EXTRACTION,
    create_run,
    finalize,
    post_documents,
    prompts_as_run_prompts,
    read_jsonl,
)
from tests.conftest import token_client
from tests.services.test_gold_import_fixtures import media_root, prompts_bytes, upload  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_root")]

# Text that occurs nowhere but in this project: in its documents, labels, contexts and values.
SECRET = "Quixotic Zebulon-Marrowfat"
PURGE = "/api/v1/projects/letters/purge/"


def import_file(project, user, name: str, content: bytes, captured) -> Job:
    with captured(execute=True):
        job = import_job_create(project=project, user=user, upload=upload(name, content))
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.errors
    return job


@pytest.fixture
def full_project(project, alice, alice_client, settings, django_capture_on_commit_callbacks) -> Project:
    """letters with span gold and attribute gold holding SECRET, their uploads kept, and two scored runs."""
    settings.UPLOAD_RETENTION_HOURS = 24  # the uploads are still on disk when the purge comes
    captured = django_capture_on_commit_callbacks
    text = f"Herr {SECRET} wohnt in Berlin."
    spans = {
        "document_id": "letter-1",
        "text": text,
        "entities": [{"start": 5, "end": 5 + len(SECRET), "entity_type": SECRET}],
    }
    import_file(project, alice, "letters.jsonl", (json.dumps(spans) + "\n").encode(), captured)
    import_file(project, alice, "prompts.csv", prompts_bytes(), captured)
    gold = [json.loads(line) for line in (EXTRACTION / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    for line in gold:
        line["text"] = f"Abstract of {SECRET}."
        for value in line.get("attributes", {}).values():
            if isinstance(value.get("output_data"), str):
                value["additional_text"] = f"said {SECRET}"
    import_file(
        project, alice, "gold.jsonl", "".join(json.dumps(line) + "\n" for line in gold).encode(), captured
    )

    attribute_run = create_run(alice_client, name=f"run {SECRET}", prompts=prompts_as_run_prompts())
    posted = read_jsonl(EXTRACTION / "llm.jsonl")
    for document in posted:
        document["context"] = f"{document.get('context', '')} {SECRET}"
        for annotation in document.get("annotations", []):
            annotation["reasoning"] = f"because {SECRET}"
    assert post_documents(alice_client, attribute_run["id"], posted).status_code == 201
    span_run = create_run(alice_client, kind="spans")
    predicted = [{"document_id": "letter-1", "entities": spans["entities"]}]
    assert post_documents(alice_client, span_run["id"], predicted).status_code == 201
    with captured(execute=True):
        finalize(alice_client, attribute_run["id"])
        finalize(alice_client, span_run["id"])
    assert ComparisonRow.objects.filter(run_id=attribute_run["id"]).exists()
    assert ComparisonRow.objects.filter(run_id=span_run["id"]).exists()
    assert rows_holding(SECRET), "the project's text is stored before the purge"
    assert files_holding(settings.MEDIA_ROOT, SECRET), "and its uploads are on disk"
    return project


def text_columns() -> list[tuple[str, str]]:
    """(table, column) of every column that can hold text, in every table of the database."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND data_type IN "
                "('text', 'character varying', 'character', 'json', 'jsonb')"
            )
            return list(cursor.fetchall())
        columns = []
        for table in connection.introspection.table_names(cursor):
            for column in connection.introspection.get_table_description(cursor, table):
                if column.type_code.lower().startswith(("text", "varchar", "char", "json")):
                    columns.append((table, column.name))
        return columns


def rows_holding(text: str) -> list[tuple[str, str]]:
    """(table, column) pairs where some row holds `text`, found by a raw query per text column."""
    quote = connection.ops.quote_name
    found = []
    with connection.cursor() as cursor:
        for table, column in text_columns():
            cast = f"CAST({quote(column)} AS TEXT)"
            cursor.execute(f"SELECT 1 FROM {quote(table)} WHERE {cast} LIKE %s LIMIT 1", [f"%{text}%"])
            if cursor.fetchone():
                found.append((table, column))
    return found


def files_holding(root, text: str) -> list[Path]:
    needle = text.encode()
    return [path for path in Path(root).rglob("*") if path.is_file() and needle in path.read_bytes()]


def test_after_a_purge_no_row_file_or_log_line_holds_the_projects_text(
    full_project, alice, alice_client, settings, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.DEBUG)

    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(PURGE, {"confirm": "letters"}, format="json")

    assert response.status_code == 202, response.data
    assert response.data["kind"] == "purge"
    assert rows_holding(SECRET) == []
    assert files_holding(settings.MEDIA_ROOT, SECRET) == []
    assert [path for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file()] == []
    assert not [record for record in caplog.records if SECRET in record.getMessage()]
    assert not Project.objects.filter(slug="letters").exists()
    assert not Document.objects.exists()
    assert not ExperimentRun.objects.exists()
    assert not ComparisonRow.objects.exists()
    assert Job.objects.filter(kind="purge").count() == Job.objects.count() == 1


def test_an_audit_record_without_content_survives_the_purge(
    full_project, alice, alice_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job_id = alice_client.post(PURGE, {"confirm": "letters"}, format="json").data["id"]

    record = ProjectPurge.objects.get()
    assert (record.slug, record.requested_by_username, record.requested_by) == ("letters", "alice", alice)
    assert record.requested_at is not None and record.finished_at is not None
    assert record.counts["rows"]["annotations.Document"] == 5
    assert record.counts["rows"]["experiments.ExperimentRun"] == 2
    assert record.counts["files"] == 3
    assert SECRET not in json.dumps(record.counts)
    job = alice_client.get(f"/api/v1/jobs/{job_id}/").json()
    assert job["status"] == "succeeded"
    assert job["result"] == record.counts


def test_the_purge_must_be_confirmed_by_the_slug(project, alice_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_client.post(PURGE, {"confirm": "letter"}, format="json")

    assert response.status_code == 400
    assert "confirm" in response.data
    assert Project.objects.filter(slug="letters").exists()
    assert not ProjectPurge.objects.exists()


def test_only_the_owner_or_a_superuser_may_purge(
    project, bob_client, charlie_client, django_capture_on_commit_callbacks
):
    dana = get_user_model().objects.create_user("dana")
    Membership.objects.create(project=project, user=dana, role=Role.MANAGER)
    root = get_user_model().objects.create_superuser("root", "root@example.org", "pw")

    assert bob_client.post(PURGE, {"confirm": "letters"}, format="json").status_code == 403
    assert token_client(dana).post(PURGE, {"confirm": "letters"}, format="json").status_code == 403
    assert charlie_client.post(PURGE, {"confirm": "letters"}, format="json").status_code == 404
    assert Project.objects.filter(slug="letters").exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = token_client(root).post(PURGE, {"confirm": "letters"}, format="json")

    assert response.status_code == 202
    assert not Project.objects.filter(slug="letters").exists()
    assert ProjectPurge.objects.get().requested_by_username == "root"
