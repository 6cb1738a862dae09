"""Reading results: GET /runs/{id}/metrics/, /comparison/ (filters, keyset pages, CSV), /artefacts.zip.

bob (viewer) reads everything; charlie (outsider) gets 404 everywhere.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

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
from tests.artefacts.factories import ARTEFACT_NAMES

pytestmark = pytest.mark.django_db


def _scored_run(client, documents, capture, **fields) -> dict:
    run = create_run(client, **fields)
    assert post_documents(client, run["id"], documents).status_code == 201
    with capture(execute=True):
        finalize(client, run["id"])
    return run


@pytest.fixture
def attribute_run(project, alice_client, django_capture_on_commit_callbacks) -> dict:
    load_extraction_gold(project)
    return _scored_run(
        alice_client,
        read_jsonl(EXTRACTION / "llm.jsonl"),
        django_capture_on_commit_callbacks,
        config={"edit_distance_match_threshold": 0.75},
        prompts=prompts_as_run_prompts(),
    )


@pytest.fixture
def span_run(project, alice_client, django_capture_on_commit_callbacks) -> dict:
    load_span_gold(project)
    return _scored_run(
        alice_client,
        read_jsonl(SPANS / "spans_predictions.jsonl"),
        django_capture_on_commit_callbacks,
        kind="spans",
    )


def _many_documents(project, tmp_path, n: int) -> list[dict]:
    """n gold documents for the extraction schema, and the predictions for them."""
    gold = tmp_path / f"gold-{n}.jsonl"
    lines, predictions = [], []
    for index in range(n):
        document_id = f"trial-{index:03d}"
        lines.append(
            json.dumps(
                {
                    "document_id": document_id,
                    "name": f"Trial {index}",
                    "attributes": {
                        "101": {"output_data": True},
                        "102": {"output_data": "Kenya"},
                        "103": {"output_data": 100 + index},
                    },
                }
            )
        )
        predictions.append(
            {
                "document_id": document_id,
                "context": f"A randomised trial in Kenya with {100 + index} participants.",
                "annotations": [
                    {"attribute_id": "101", "output_data": True},
                    {"attribute_id": "102", "output_data": "Kenya" if index % 2 else "Uganda"},
                    {"attribute_id": "103", "output_data": 100 + index},
                ],
            }
        )
    gold.write_text("\n".join(lines) + "\n")
    load_extraction_gold(project, gold=gold)
    return predictions


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as context:
        response = client.get(url)
        assert response.status_code == 200, response.content
    return len(context.captured_queries)


def test_the_metrics_of_an_attribute_run_are_its_metrics_json(attribute_run, bob_client):
    response = bob_client.get(f"/api/v1/runs/{attribute_run['id']}/metrics/")

    assert response.status_code == 200
    body = response.json()
    assert body["extraction_run_id"] == str(attribute_run["id"])
    assert [a["attribute_label"] for a in body["attributes"]] == [
        "Country",
        "Mean age",
        "Participants",
        "Randomised",
    ]
    # Key order as the artefact writer wrote it (the database keeps it).
    assert list(body["attributes"][0]["counts"]) == [
        "n_gold_instances",
        "n_good_source_instances",
        "n_good_citation_instances",
        "n_missing_predictions",
        "n_invalid_gold",
    ]


def test_the_metrics_of_a_span_run_are_its_results_json_without_entity_text(span_run, bob_client):
    body = bob_client.get(f"/api/v1/runs/{span_run['id']}/metrics/").json()

    assert body["documents"] == 4
    assert set(body["micro"]) >= {"chars", "tokens", "spans_exact", "spans_overlap", "nervaluate"}
    assert body["leakage"]["entity_missed"]["leaked_document_ids"] == ["letter-1", "letter-2", "letter-4"]
    assert "Anna Berger" not in json.dumps(body)


def test_metric_values_are_flat_with_their_scope(span_run, bob_client):
    values = bob_client.get(f"/api/v1/runs/{span_run['id']}/metric-values/").json()["values"]
    by_key = {(v["scope"], v["scope_key"], v["name"]): v for v in values}

    assert by_key[("overall", "", "micro.chars.all.tp")]["value"] > 0
    assert by_key[("overall", "", "macro.chars.all.f1")]["n"] == 4
    # The interval beside a metric in results.json is that value's interval, not values of its own.
    f1 = by_key[("overall", "", "micro.chars.all.f1")]
    assert f1["ci_low"] <= f1["value"] <= f1["ci_high"]
    assert f1["ci"]["resamples"] == 2000
    assert not any(name.endswith("_ci") or "_ci." in name for _, _, name in by_key)
    assert ("entity_type", "PERSON_NAME", "spans_exact.recall") in by_key


def test_comparison_rows_filter_by_attribute_status_document_and_presence(attribute_run, bob_client):
    url = f"/api/v1/runs/{attribute_run['id']}/comparison/"

    everything = bob_client.get(url).json()["results"]
    country = bob_client.get(url + "?attribute=102").json()["results"]
    missing = bob_client.get(url + "?match_status=missing_prediction").json()["results"]
    document = bob_client.get(url + "?document=1002").json()["results"]
    absent = bob_client.get(url + "?attribute_presence=false").json()["results"]

    assert len(everything) == 12
    assert list(everything[0]["columns"])[:4] == [
        "document_id",
        "external_id",
        "document_name",
        "attribute_id",
    ]
    assert {row["columns"]["attribute_id"] for row in country} == {"102"}
    assert len(country) == 3
    assert {row["columns"]["match_status"] for row in missing} == {"missing_prediction"}
    assert {row["columns"]["document_id"] for row in document} == {"1002"}
    assert [(row["columns"]["document_id"], row["columns"]["attribute_id"]) for row in absent] == [
        ("1002", "101"),
        ("1003", "104"),
    ]
    assert bob_client.get(url + "?attribute=nope").json()["results"] == []


def test_the_attribute_filter_takes_an_attribute_id_or_its_label(attribute_run, bob_client):
    url = f"/api/v1/runs/{attribute_run['id']}/comparison/"

    by_label = bob_client.get(url, {"attribute": "Country"}).json()["results"]

    assert by_label == bob_client.get(url, {"attribute": "102"}).json()["results"]
    assert len(by_label) == 3


def test_an_invalid_match_status_is_a_400_listing_the_valid_ones_of_the_run_kind(
    attribute_run, span_run, bob_client
):
    attribute_answer = bob_client.get(
        f"/api/v1/runs/{attribute_run['id']}/comparison/", {"match_status": "span"}
    )
    span_answer = bob_client.get(
        f"/api/v1/runs/{span_run['id']}/comparison/", {"match_status": "exact_match"}
    )

    assert attribute_answer.status_code == span_answer.status_code == 400
    assert attribute_answer.json()["match_status"] == [
        '"span" is not a valid choice; expected one of: invalid_gold, missing_prediction, exact_match, '
        'near_match, extraction_error_bad_source, extraction_error_good_source, "".'
    ]
    assert span_answer.json()["match_status"] == [
        '"exact_match" is not a valid choice; expected one of: exact, overlap, missed, spurious.'
    ]


@pytest.mark.parametrize("query", [{"is_correct": "false"}, {"bogus": "1"}])
def test_an_unknown_filter_is_a_400_rather_than_every_row(attribute_run, bob_client, query):
    response = bob_client.get(f"/api/v1/runs/{attribute_run['id']}/comparison/", query)

    assert response.status_code == 400
    [name] = query
    assert "unknown query parameter" in response.json()[name][0]


def test_span_comparison_rows_give_each_gold_span_its_outcome(span_run, bob_client):
    rows = bob_client.get(f"/api/v1/runs/{span_run['id']}/comparison/?document=letter-1").json()["results"]

    assert [(r["columns"]["start"], r["columns"]["entity_type"], r["match_status"]) for r in rows] == [
        (21, "PERSON_NAME", "exact"),
        (39, "DATE_OF_BIRTH", "overlap"),
        (64, "ID_NUMBER", "missed"),
        (82, "EMAIL", "exact"),
        (73, "PERSON_NAME", "spurious"),
    ]
    assert [r["is_correct"] for r in rows] == [True, False, False, False, False]
    missed = bob_client.get(f"/api/v1/runs/{span_run['id']}/comparison/?match_status=missed").json()[
        "results"
    ]
    assert len(missed) == 5


def test_comparison_pages_follow_the_keyset(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    predictions = _many_documents(project, tmp_path, 10)
    run = _scored_run(
        alice_client, predictions, django_capture_on_commit_callbacks, prompts=prompts_as_run_prompts()
    )
    url = f"/api/v1/runs/{run['id']}/comparison/?page_size=7"

    seen = []
    while url:
        page = bob_client.get(url).json()
        seen.extend(row["position"] for row in page["results"])
        url = page["next"]

    assert seen == list(range(40))


def test_the_comparison_csv_streams_the_export_columns_escaped_against_formulas(attribute_run, bob_client):
    response = bob_client.get(f"/api/v1/runs/{attribute_run['id']}/comparison/?format=csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "document_id" and rows[0][-1] == "match_status" and len(rows[0]) == 20
    assert len(rows) == 13
    reasoning = [row[13] for row in rows if row[0] == "1001" and row[3] == "102"][0]
    assert reasoning.startswith("'=HYPERLINK")


def test_the_comparison_csv_takes_the_filters(attribute_run, bob_client):
    response = bob_client.get(f"/api/v1/runs/{attribute_run['id']}/comparison/?format=csv&attribute=101")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))

    assert {row[3] for row in rows[1:]} == {"101"}


def test_artefacts_zip_holds_every_artefact_of_an_attribute_run(attribute_run, bob_client):
    response = bob_client.get(f"/api/v1/runs/{attribute_run['id']}/artefacts.zip")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert set(archive.namelist()) == set(ARTEFACT_NAMES)
    metadata = json.loads(archive.read("extraction_metadata.json"))
    assert metadata["n_prediction_lines"] == 3
    assert "edit_distance_match_threshold: 0.75" in archive.read("config.yaml").decode()


def test_artefacts_zip_of_a_span_run_holds_results_json(span_run, bob_client):
    response = bob_client.get(f"/api/v1/runs/{span_run['id']}/artefacts.zip")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))

    assert {"results.json", "span_comparison.csv", "config.yaml", "evaluation.log"} == set(archive.namelist())
    assert json.loads(archive.read("results.json"))["documents"] == 4


def test_results_of_a_run_not_yet_scored_are_404_with_the_reason(project, alice_client, bob_client):
    run = create_run(alice_client, kind="spans")

    response = bob_client.get(f"/api/v1/runs/{run['id']}/metrics/")

    assert response.status_code == 404
    assert response.json()["status"] == "open"


def test_an_outsider_gets_404_for_every_result(attribute_run, charlie_client):
    run_id = attribute_run["id"]
    for path in (
        "metrics/",
        "metric-values/",
        "scorings/",
        "comparison/",
        "comparison/?format=csv",
        "artefacts.zip",
    ):
        assert charlie_client.get(f"/api/v1/runs/{run_id}/{path}").status_code == 404, path


def test_comparison_and_metrics_cost_the_same_queries_for_3_or_30_rows(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    predictions = _many_documents(project, tmp_path, 10)
    run = _scored_run(
        alice_client, predictions, django_capture_on_commit_callbacks, prompts=prompts_as_run_prompts()
    )
    base = f"/api/v1/runs/{run['id']}"

    assert _queries(bob_client, f"{base}/comparison/?page_size=3") == _queries(
        bob_client, f"{base}/comparison/?page_size=30"
    )
    assert _queries(bob_client, f"{base}/comparison/?page_size=3&attribute=102") == _queries(
        bob_client, f"{base}/comparison/?page_size=30&attribute=102"
    )
    assert _queries(bob_client, f"{base}/metrics/") <= 6
    assert _queries(bob_client, f"{base}/metric-values/") <= 6


def test_metrics_cost_the_same_queries_for_a_small_and_a_large_run(
    project, alice_client, bob_client, tmp_path, django_capture_on_commit_callbacks
):
    small = _scored_run(
        alice_client,
        _many_documents(project, tmp_path, 3),
        django_capture_on_commit_callbacks,
        prompts=prompts_as_run_prompts(),
    )
    large = _scored_run(
        alice_client,
        _many_documents(project, tmp_path, 30),
        django_capture_on_commit_callbacks,
        prompts=prompts_as_run_prompts(),
    )

    for path in ("metrics/", "metric-values/", "comparison/"):
        assert _queries(bob_client, f"/api/v1/runs/{small['id']}/{path}") == _queries(
            bob_client, f"/api/v1/runs/{large['id']}/{path}"
        ), path
