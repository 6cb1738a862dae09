"""`manage.py gate`: hold a run's metrics against a threshold file; exit 0 on pass, 1 on fail, 2 on bad
input (including a threshold file that names a metric the metrics document cannot have). The checks
are `metrics.engine.gate` (the same as `POST /api/v1/runs/{id}/gate/`)."""

from __future__ import annotations

import argparse
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from django.core.management.base import CommandError

from metrics.engine.gate import evaluate_gate, render_gate_table, unknown_metrics
from metrics.management.offline_files import OfflineCommand, bad_input
from metrics.pipeline.gate_documents import (
    GateInputError,
    baseline_ids,
    fetch_run_metrics,
    parse_baseline_options,
    read_metrics_file,
    read_threshold_file,
)

FAILED = 1

DESCRIPTION = """\
Run a quality gate: every check of the threshold file against a run's metrics document (results.json of
a span run, metrics.json of an attribute run), a table of every check, and the verdict as exit status:
0 all checks pass, 1 a check fails, 2 bad input (unreadable files, a threshold file of the wrong shape
or naming an unknown metric, a server that does not answer).

Threshold file (JSON): {"checks": [CHECK, ...]}. A CHECK has "metric" and exactly one of "min", "max" or
"baseline":
  "metric"     span run: a dotted path into results.json (micro.chars.all.recall); attribute run: a
               metric name (accuracy, f1_score, mean_absolute_error...) with "attribute": its id
  "min"/"max"  passes when the value is >= min / <= max
  "on"         estimate (default), lower_bound or upper_bound of the metric's confidence interval
  "baseline"   non-inferiority to another run: passes when the value is >= the baseline's minus
               "margin" (default 0); "direction": "lower" for errors (<= baseline + margin)

Example, a CI gate on lower confidence bounds:
  {"checks": [
    {"metric": "micro.chars.all.recall", "min": 0.95, "on": "lower_bound"},
    {"metric": "leakage.any_char.rate_all_documents", "max": 0.05, "on": "upper_bound"},
    {"metric": "accuracy", "attribute": "5001", "min": 0.8, "on": "lower_bound"},
    {"metric": "micro.chars.all.f1", "baseline": "41", "margin": 0.02}
  ]}

A metric the document does not have at all (a typo, or a span metric held against an attribute run)
is bad input, exit 2. A metric or interval that is there but null fails its check, with the reason;
so does an attribute that is missing.

Offline: --metrics FILE, and for non-inferiority checks the baseline's document with --baseline ID=FILE.
Online: --run ID --server URL --token KEY reads the run's metrics (and every baseline's not given as a
file) from GET /api/v1/runs/{id}/metrics/.

  manage.py gate --thresholds gate.json --metrics results.json
  manage.py gate --thresholds gate.json --run 42 --server https://eval.example.org --token "$EVAL_TOKEN"
"""


class Command(OfflineCommand):
    help = DESCRIPTION
    # Tests pass a fake transport here to stand in for the server.
    transport: httpx.BaseTransport | None = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--thresholds", required=True, type=Path, help="the threshold file (JSON)")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--metrics", type=Path, help="the run's results.json or metrics.json")
        source.add_argument("--run", metavar="ID", help="the run's id on the server (with --server, --token)")
        parser.add_argument(
            "--server", metavar="URL", help="the server's base URL, e.g. https://eval.example.org"
        )
        parser.add_argument("--token", metavar="KEY", help="an API token of a member of the run's project")
        parser.add_argument(
            "--baseline",
            "--baseline-metrics",
            dest="baseline",
            action="append",
            default=[],
            metavar="ID=FILE",
            help="the metrics document of baseline run ID (repeat for several baselines)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            checks = read_threshold_file(options["thresholds"])
            baselines = {
                run_id: read_metrics_file(path)
                for run_id, path in parse_baseline_options(options["baseline"]).items()
            }
            if options["metrics"] is not None:
                document = read_metrics_file(options["metrics"])
            else:
                if not options["server"] or not options["token"]:
                    raise GateInputError("--run needs --server and --token")
                fetch = partial(
                    fetch_run_metrics, options["server"], token=options["token"], transport=self.transport
                )
                document = fetch(options["run"])
                for run_id in baseline_ids(checks):
                    if run_id not in baselines:
                        baselines[run_id] = fetch(run_id)
            unknown = unknown_metrics(checks, document)
            if unknown:
                raise GateInputError(f"{options['thresholds']}: " + "; ".join(unknown))
        except GateInputError as error:
            raise bad_input(str(error)) from None

        gate = evaluate_gate(checks, document, baselines)
        self.stdout.write(render_gate_table(gate))
        if not gate.passed:
            failed = sum(not check.passed for check in gate.checks)
            raise CommandError(
                f"gate failed: {failed} of {len(gate.checks)} checks failed", returncode=FAILED
            )
