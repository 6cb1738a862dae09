"""`manage.py gate`: hold a run's metrics against a threshold file; exit 0 on pass, 1 on fail, 2 on bad
input. The checks are `metrics.engine.gate` (the same as `POST /api/v1/runs/{id}/gate/`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter

from metrics.engine.gate import evaluate_gate, render_gate_table
from metrics.gate_documents import (
    GateInputError,
    baseline_ids,
    fetch_run_metrics,
    parse_baseline_options,
    read_metrics_file,
    read_threshold_file,
)

FAILED = 1
BAD_INPUT = 2

DESCRIPTION = """\
Run a quality gate: every check of the threshold file against a run's metrics document (results.json of
a span run, metrics.json of an attribute run), a table of every check, and the verdict as exit status:
0 all checks pass, 1 a check fails, 2 bad input (unreadable files, a malformed threshold file, a server
that does not answer).

A metric, interval or attribute that is missing or null fails its check, with the reason. Checks on
"lower_bound" / "upper_bound" read the metric's confidence interval.

Offline: --metrics FILE, and for non-inferiority checks ({"baseline": ID, "margin": 0.02}) the
baseline's document with --baseline ID=FILE. Online: --run ID --server URL --token KEY reads the run's
metrics (and every baseline's not given as a file) from GET /api/v1/runs/{id}/metrics/.
"""


class _HelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's ordering of options (the command's first), with the description's paragraphs kept."""


class Command(BaseCommand):
    help = DESCRIPTION
    requires_system_checks: list[str] = []
    # Tests pass a fake transport here to stand in for the server.
    transport: httpx.BaseTransport | None = None

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> argparse.ArgumentParser:
        return super().create_parser(prog_name, subcommand, formatter_class=_HelpFormatter, **kwargs)

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
                document = self._fetch(options, options["run"])
                for run_id in baseline_ids(checks):
                    if run_id not in baselines:
                        baselines[run_id] = self._fetch(options, run_id)
        except GateInputError as error:
            raise CommandError(str(error), returncode=BAD_INPUT) from None

        gate = evaluate_gate(checks, document, baselines)
        self.stdout.write(render_gate_table(gate))
        if not gate.passed:
            failed = sum(not check.passed for check in gate.checks)
            raise CommandError(
                f"gate failed: {failed} of {len(gate.checks)} checks failed", returncode=FAILED
            )

    def _fetch(self, options: dict[str, Any], run_id: str) -> dict[str, Any]:
        return fetch_run_metrics(options["server"], run_id, options["token"], transport=self.transport)
