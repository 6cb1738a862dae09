"""A document id holding a bare carriage return and a formula ("\\r=1+1#5") stays one cell in the
`?format=csv` stream and in the artefact bundle's CSV files, and no physical line of them starts with
a formula (issue 13, item 4)."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pytest

from metrics.artefacts.cells import FORMULA_TRIGGERS
from tests.api.runs_support import create_run, finalize, load_span_gold, post_documents

pytestmark = pytest.mark.django_db

HOSTILE_ID = "\r=1+1#5"
TEXT = "Herr Max Mustermann wohnt in Berlin."


def assert_safe_csv(text: str) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    for line in re.split(r"\r\n|\r|\n", text):
        assert not line or line[0] not in FORMULA_TRIGGERS, repr(line)
    return rows


def test_a_hostile_document_id_stays_in_its_cell_in_every_csv_we_serve(
    project, alice_client, tmp_path, django_capture_on_commit_callbacks
):
    gold = tmp_path / "gold.jsonl"
    entity = {"start": 5, "end": 19, "entity_type": "PERSON_NAME"}
    gold.write_text(json.dumps({"document_id": HOSTILE_ID, "text": TEXT, "entities": [entity]}) + "\n")
    load_span_gold(project, gold=gold)
    run = create_run(alice_client, kind="spans")
    assert (
        post_documents(
            alice_client, run["id"], [{"document_id": HOSTILE_ID, "entities": [entity]}]
        ).status_code
        == 201
    )
    with django_capture_on_commit_callbacks(execute=True):
        finalize(alice_client, run["id"])

    response = alice_client.get(f"/api/v1/runs/{run['id']}/comparison/", {"format": "csv"})
    streamed = b"".join(response.streaming_content).decode("utf-8")
    rows = assert_safe_csv(streamed)
    assert [row[0] for row in rows[1:]] == ["'\r'=1+1#5"] * (len(rows) - 1)
    assert len(rows) > 1

    bundle = alice_client.get(f"/api/v1/runs/{run['id']}/artefacts.zip")
    archive = zipfile.ZipFile(
        io.BytesIO(b"".join(bundle.streaming_content) if bundle.streaming else bundle.content)
    )
    for name in archive.namelist():
        if name.endswith(".csv"):
            assert_safe_csv(archive.read(name).decode("utf-8"))
