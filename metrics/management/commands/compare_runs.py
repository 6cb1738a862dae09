"""`manage.py compare_runs`: is run B better than run A on the same gold, or is the difference luck?
No database: `metrics.pipeline.run_pair_report` computes the statistics the server's comparison uses."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from metrics.management.offline_files import (
    ATTRIBUTE_GOLD,
    EXTRACTION_PREDICTIONS,
    PROMPTS,
    SPAN_DATA,
    OfflineCommand,
    bad_input,
    require_input_kinds,
    unreadable_inputs_refused,
    write_json_report,
)
from metrics.pipeline.extraction_evaluation import resolve_settings
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.run_pair_report import (
    SOURCES,
    compare_attribute_files,
    compare_span_files,
    format_run_pair_table,
)

# What each input accepts, by --kind.
INPUTS = {
    "spans": {"gold": SPAN_DATA, "a": SPAN_DATA, "b": SPAN_DATA},
    "attributes": {
        "gold": ATTRIBUTE_GOLD,
        "prompts": PROMPTS,
        "a": EXTRACTION_PREDICTIONS,
        "b": EXTRACTION_PREDICTIONS,
    },
}

DESCRIPTION = """\
Compare two prediction sets (runs A and B) against the same gold, document by document.

For every metric: the value of A and of B on the documents both runs predicted, delta = B - A, the
paired bootstrap interval of the delta, a two-sided p-value (exact McNemar for per-row correctness:
attribute accuracy and leakage rates; the paired bootstrap otherwise) and the Holm-adjusted p-value
across attributes and across entity types. Documents only one run predicted are listed and left out.

--kind spans: GOLD and the predictions are span files as for evaluate_spans (metrics are keyed by their
results.json path). --kind attributes: GOLD, --prompts and the predictions are as for
evaluate_extraction (metrics per attribute, under attributes[]).

The table names the test behind each p-value ("paired bootstrap" or "McNemar exact"); the report
holds it as p_value_methods.

Mark a run made by a person with --a-source human / --b-source human: the report calls it the human
ceiling. Bad input (including a file of the wrong kind) exits with status 2, naming file, line and
field, and writes nothing. An existing output is refused (exit status 2) unless --overwrite is given.

Example:
  manage.py compare_runs --kind spans --gold gold.jsonl --a run-a.jsonl --b run-b.jsonl \\
      --output comparison.json
  manage.py compare_runs --kind attributes --gold gold_eppi.json --prompts prompts.csv \\
      --a llm-small.jsonl --b llm-large.jsonl --output comparison.json
"""


class Command(OfflineCommand):
    help = DESCRIPTION
    intervals = "paired comparison"
    zero_resamples_turns_off = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--kind", required=True, choices=("spans", "attributes"))
        parser.add_argument("--gold", required=True, type=Path, help="gold: file, directory or .zip")
        parser.add_argument("--prompts", type=Path, help="prompt CSV (required for --kind attributes)")
        parser.add_argument("--a", required=True, type=Path, metavar="A", help="predictions of run A")
        parser.add_argument("--b", required=True, type=Path, metavar="B", help="predictions of run B")
        parser.add_argument("--output", required=True, type=Path, help="where to write comparison.json")
        parser.add_argument("--a-source", choices=SOURCES, default="llm", help="who made run A (default llm)")
        parser.add_argument("--b-source", choices=SOURCES, default="llm", help="who made run B (default llm)")
        parser.add_argument("--label-map", type=Path, help="spans: label map JSON, as for evaluate_spans")
        parser.add_argument("--number-format", choices=("en", "de"), help="attributes: number format")
        parser.add_argument(
            "--edit-distance-threshold",
            type=float,
            metavar="0..1",
            help="attributes: STRING near-match threshold",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        output: Path = options["output"]
        settings = self.interval_settings(options)
        if settings.resamples < 1:
            raise bad_input("--resamples: a comparison needs at least 1 resample")
        require_input_kinds(options, INPUTS[options["kind"]])
        report = write_json_report(
            output, lambda: self._compare(options, settings), overwrite=options["overwrite"]
        )
        self.stdout.write(format_run_pair_table(report))
        self.stdout.write(f"\nComparison written to {output}")

    def _compare(self, options: dict[str, Any], settings: IntervalSettings) -> dict[str, Any]:
        sources = (options["a_source"], options["b_source"])
        with unreadable_inputs_refused():
            if options["kind"] == "spans":
                return compare_span_files(
                    options["gold"],
                    options["a"],
                    options["b"],
                    label_map_path=options["label_map"],
                    settings=settings,
                    sources=sources,
                    processes=options["processes"],
                )
            if options["prompts"] is None:
                raise bad_input("--prompts is required with --kind attributes")
            evaluation_settings = resolve_settings(
                edit_distance_match_threshold=options["edit_distance_threshold"],
                number_format=options["number_format"],
            )
            return compare_attribute_files(
                options["gold"],
                options["prompts"],
                options["a"],
                options["b"],
                evaluation_settings=evaluation_settings,
                settings=settings,
                sources=sources,
                processes=options["processes"],
            )
