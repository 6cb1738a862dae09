"""`evalproject-gate`: score a pipeline's predictions on the server and gate them, for CI.

Creates a run, posts the predictions, finalizes it (waits for the scoring), holds it against the
threshold file, prints every check, and exits 0 when the gate passes, 1 when a check fails, 2 when
it could not decide (bad files, a refused request, a failed scoring, a server that does not answer).
With --run ID it only gates a run already scored.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import httpx

from evalproject_client.client import Client, GateResult
from evalproject_client.errors import ApiError, JobFailed, JobTimeout

PASSED, FAILED, UNDECIDED = 0, 1, 2

EPILOG = """\
threshold file (JSON), the same as POST /api/v1/runs/{id}/gate/ and `manage.py gate`:
  {"checks": [
    {"metric": "accuracy_given_prediction", "attribute": "201", "min": 0.8, "on": "lower_bound"},
    {"metric": "micro.chars.all.recall", "min": 0.95, "on": "lower_bound"},
    {"metric": "leakage.any_char.rate_all_documents", "max": 0.05, "on": "upper_bound"},
    {"metric": "micro.chars.all.f1", "baseline": "41", "margin": 0.02}
  ]}

environment: EVALPROJECT_URL and EVALPROJECT_TOKEN stand for --url and --token.
"""


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="evalproject-gate",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", default=os.environ.get("EVALPROJECT_URL"), help="the server's base URL")
    parser.add_argument("--token", default=os.environ.get("EVALPROJECT_TOKEN"), help="an API token")
    parser.add_argument("--thresholds", type=Path, required=True, help="the threshold file (JSON)")
    parser.add_argument("--run", type=int, help="gate this scored run instead of creating one")
    parser.add_argument("--project", help="the project's slug (to create a run)")
    parser.add_argument("--predictions", type=Path, help="the prediction JSONL (to create a run)")
    parser.add_argument("--kind", choices=("attributes", "spans"), default="attributes")
    parser.add_argument("--name", default="ci", help="the run's name, e.g. the branch and commit")
    parser.add_argument("--config", type=Path, help="the pipeline's YAML configuration, kept with the run")
    parser.add_argument("--prompts", type=Path, help="the prompt CSV the pipeline used")
    parser.add_argument("--model", default="")
    parser.add_argument("--provider", default="")
    parser.add_argument("--artefacts", type=Path, help="also save the run's artefact bundle (zip) here")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the scoring")
    args = parser.parse_args(argv)
    if not args.url or not args.token:
        parser.error("--url and --token (or EVALPROJECT_URL and EVALPROJECT_TOKEN) are required")
    if args.run is None and not (args.project and args.predictions):
        parser.error("give --run ID, or --project and --predictions to create a run")
    return args


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as error:
                    raise ValueError(f"{path}:{number}: not JSON ({error})") from None


def report(result: GateResult, run_id: int, out: TextIO) -> None:
    for check in result.checks:
        mark = "PASS" if check.get("passed") else "FAIL"
        where = f" [{check['attribute']}]" if check.get("attribute") else ""
        out.write(f"{mark}  {check.get('metric')}{where} ({check.get('on')}): {check.get('reason', '')}\n")
    out.write(f"run {run_id}: gate {'passed' if result.passed else 'FAILED'}\n")


def main(argv: Sequence[str] | None = None, *, transport: httpx.BaseTransport | None = None) -> int:
    args = parse_arguments(argv)
    try:
        thresholds = json.loads(args.thresholds.read_text(encoding="utf-8"))
        with Client(args.url, args.token, transport=transport, job_timeout=args.timeout) as client:
            if args.run is not None:
                run_id = args.run
            else:
                run = client.create_run(
                    args.project,
                    args.name,
                    args.kind,
                    config=args.config,
                    prompts=args.prompts,
                    model=args.model,
                    provider=args.provider,
                )
                run_id = run["id"]
                counts = client.post_predictions(run, read_jsonl(args.predictions))
                print(f"run {run_id}: {counts['created']} documents posted", file=sys.stderr)
                client.finalize(run)
            result = client.gate(run_id, thresholds)
            if args.artefacts:
                client.download_artefacts(run_id, args.artefacts)
    except (OSError, ValueError, ApiError, JobFailed, JobTimeout, httpx.HTTPError) as error:
        print(f"evalproject-gate: {error}", file=sys.stderr)
        return UNDECIDED
    report(result, run_id, sys.stdout)
    return PASSED if result.passed else FAILED


if __name__ == "__main__":
    sys.exit(main())
