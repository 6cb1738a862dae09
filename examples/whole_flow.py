"""The whole flow of docs/api.md through the client, on the demo data, for span AND attribute data.

    pip install ./clients/python
    python examples/whole_flow.py --url http://127.0.0.1:8000 --token KEY [--demo demo] [--prefix flow]

For each kind of data: a project, its gold (and for attributes first its prompt CSV), a run whose
predictions are posted and scored, its metrics and comparison rows, a second run compared with the
first, a quality gate on lower confidence bounds, and the artefact bundle. It prints a JSON summary.
It needs only the client (no Django, none of the server's code): the suite runs it in a fresh virtual
environment against a live server (tests/client/test_installed_client.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

from evalproject_client import Client

DEMO = Path(__file__).resolve().parent.parent / "demo"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def span_flow(client: Client, demo: Path, slug: str, artefacts: Path) -> dict[str, Any]:
    project = client.create_project(slug, "De-identification (demo data)")
    gold = client.import_file(slug, demo / "deid" / "gold.jsonl")
    predictions = read_jsonl(demo / "deid" / "predictions.jsonl")
    run = client.create_run(
        slug, "rule-based v1", "spans", config={"pipeline": "demo-ner"}, model="demo-ner", provider="demo"
    )
    posted = client.post_predictions(run, predictions, batch_size=10)
    scoring = client.finalize(run)
    metrics = client.metrics(run)
    rows = list(client.comparison_rows(run, page_size=50))
    # A second version that misses the first identifier of every letter.
    weaker = [{**document, "entities": document["entities"][1:]} for document in predictions]
    second = client.create_run(slug, "rule-based v2", "spans", config={"pipeline": "demo-ner", "v": 2})
    client.post_predictions(second, weaker)
    client.finalize(second)
    comparison = client.compare(run, second)
    gate = client.gate(
        second,
        {
            "checks": [
                {"metric": "micro.chars.all.recall", "min": 0.5, "on": "lower_bound"},
                {"metric": "micro.chars.all.f1", "baseline": str(run["id"]), "margin": 0.01},
            ]
        },
    )
    bundle = client.download_artefacts(run, artefacts / f"{slug}.zip")
    return {
        "project": project["slug"],
        "gold_import": gold["status"],
        "run": run["id"],
        "posted": posted,
        "scoring": scoring["status"],
        "recall": metrics["micro"]["chars"]["all"]["recall"],
        "comparison_rows": len(rows),
        "compared": [comparison["a"]["run"], comparison["b"]["run"]],
        "changed_rows": comparison["changed_rows_total"],
        "gate_passed": gate.passed,
        "gate_checks": [check["passed"] for check in gate.checks],
        "artefacts": sorted(zipfile.ZipFile(bundle).namelist()),
    }


def attribute_flow(client: Client, demo: Path, slug: str, artefacts: Path) -> dict[str, Any]:
    folder = demo / "extraction"
    project = client.create_project(slug, "Data extraction (demo data)")
    schema = client.import_file(slug, folder / "prompts.csv")
    gold = client.import_file(slug, folder / "gold_eppi.json")
    predictions = read_jsonl(folder / "predictions.jsonl")
    run = client.create_run(
        slug,
        "small LLM v1",
        "attributes",
        config=folder / "config.yaml",
        prompts=folder / "prompts.csv",
        model="demo-llm-small",
        provider="demo",
    )
    posted = client.post_predictions(run, predictions)
    scoring = client.finalize(run)
    metrics = client.metrics(run)
    first_attribute = metrics["attributes"][0]["attribute_id"]
    rows = list(client.comparison_rows(run, page_size=20))
    of_first_attribute = list(client.comparison_rows(run, attribute=first_attribute))
    # A second version that found nothing in the first document.
    fewer = [{**predictions[0], "annotations": []}, *predictions[1:]]
    second = client.create_run(
        slug, "small LLM v2", "attributes", config=folder / "config.yaml", prompts=folder / "prompts.csv"
    )
    client.post_predictions(second, fewer)
    client.finalize(second)
    comparison = client.compare(run, second)
    gate = client.gate(
        second,
        [
            {
                "metric": "accuracy_given_prediction",
                "attribute": first_attribute,
                "min": 0.3,
                "on": "lower_bound",
            }
        ],
    )
    bundle = client.download_artefacts(run, artefacts / f"{slug}.zip")
    return {
        "project": project["slug"],
        "schema_import": schema["status"],
        "gold_import": gold["status"],
        "run": run["id"],
        "posted": posted,
        "scoring": scoring["status"],
        "attributes": [attribute["attribute_id"] for attribute in metrics["attributes"]],
        "comparison_rows": len(rows),
        "rows_of_first_attribute": len(of_first_attribute),
        "compared": [comparison["a"]["run"], comparison["b"]["run"]],
        "changed_rows": comparison["changed_rows_total"],
        "gate_passed": gate.passed,
        "gate_checks": [check["passed"] for check in gate.checks],
        "artefacts": sorted(zipfile.ZipFile(bundle).namelist()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default=os.environ.get("EVALPROJECT_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--token", default=os.environ.get("EVALPROJECT_TOKEN"), help="default: $EVALPROJECT_TOKEN"
    )
    parser.add_argument(
        "--demo", type=Path, default=DEMO, help="the demo data folder (default: the repository's)"
    )
    parser.add_argument("--prefix", default="flow", help="slug prefix of the two projects it creates")
    parser.add_argument("--artefacts", type=Path, default=Path("."), help="folder for the artefact bundles")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("an API token is needed: --token or $EVALPROJECT_TOKEN")
    with Client(args.url, args.token, poll_seconds=0.2, job_timeout=600) as client:
        summary = {
            "spans": span_flow(client, args.demo, f"{args.prefix}-deid", args.artefacts),
            "attributes": attribute_flow(client, args.demo, f"{args.prefix}-trials", args.artefacts),
        }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
