"""Post an extraction pipeline's output to evalproject, score it and print the headline metrics.

    EVALPROJECT_TOKEN=... python examples/post_from_pipeline.py \\
        --url http://127.0.0.1:8000 --project trials \\
        --config config.yaml --prompts prompts.csv --predictions llm.jsonl

In a real pipeline, replace `read_predictions` by the loop that calls the model: yield one document
object per document as soon as it is done (the client batches them, 500 a request) and the
evaluation server has the run as soon as the pipeline ends. Only the client (`pip install
./clients/python`, which brings httpx) is needed on the pipeline's side.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from evalproject_client import Client


def read_prompts(path: Path) -> list[dict]:
    """The prompt CSV (prompt, output_data_type, attribute_id, attribute_label) as the run's prompts."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return [dict(row) for row in csv.DictReader(handle)]


def read_predictions(path: Path) -> Iterator[dict]:
    """One document object per line, in the prediction JSONL shape."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default=os.environ.get("EVALPROJECT_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--token", default=os.environ.get("EVALPROJECT_TOKEN"), help="default: $EVALPROJECT_TOKEN"
    )
    parser.add_argument("--project", required=True, help="the project's slug")
    parser.add_argument("--name", default="pipeline run")
    parser.add_argument("--kind", choices=("attributes", "spans"), default="attributes")
    parser.add_argument("--config", type=Path, help="the pipeline's config.yaml, snapshotted with the run")
    parser.add_argument("--prompts", type=Path, help="the prompt CSV the pipeline used")
    parser.add_argument("--predictions", type=Path, required=True, help="prediction JSONL")
    parser.add_argument("--model", default="")
    parser.add_argument("--provider", default="")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("an API token is needed: --token or $EVALPROJECT_TOKEN")

    with Client(args.url, args.token) as client:
        run = client.create_run(
            args.project,
            name=args.name,
            kind=args.kind,
            config=args.config.read_text(encoding="utf-8") if args.config else None,
            prompts=read_prompts(args.prompts) if args.prompts else None,
            model=args.model,
            provider=args.provider,
        )
        print(f"run {run['id']} created (configuration {run['config_hash'][:12]})", file=sys.stderr)
        counts = client.post_predictions(run, read_predictions(args.predictions))
        print(f"posted: {counts}", file=sys.stderr)
        client.finalize(run)
        scored = client.run(run)
        metrics = client.metrics(run)

    if args.kind == "attributes":
        for attribute in metrics["attributes"]:
            headline = {k: v for k, v in attribute["metrics"].items() if "_given_" not in k}
            print(f"{attribute['attribute_label']:<30} {json.dumps(headline)}")
    else:
        print(
            json.dumps(
                {"micro_chars_all": metrics["micro"]["chars"]["all"], "leakage": metrics["leakage"]}, indent=2
            )
        )
    totals = scored["totals"]
    print(f"cost ${totals['cost_usd']}, tokens in/out {totals['input_tokens']}/{totals['output_tokens']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
