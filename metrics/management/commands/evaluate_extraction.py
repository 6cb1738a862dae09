"""`manage.py evaluate_extraction`: score an extraction run from files, without a database, and
write its artefact folder (`metrics.pipeline.extraction_folder`)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandParser

from annotations.importers.errors import InputValidationError
from metrics.artefacts.metrics_files import format_metrics_table
from metrics.management.offline_files import (
    ATTRIBUTE_GOLD,
    EXTRACTION_PREDICTIONS,
    PROMPTS,
    OfflineCommand,
    bad_input,
    output_slot,
    require_input_kinds,
    unreadable_inputs_refused,
)
from metrics.pipeline.extraction_evaluation import ExtractionRun, load_config, resolve_settings
from metrics.pipeline.extraction_folder import evaluate_extraction_to_folder
from metrics.pipeline.intervals import IntervalSettings
from metrics.pipeline.phases import paused_garbage_collection

WARNINGS_SHOWN = 10

DESCRIPTION = """\
Score the attribute values an LLM pipeline extracted against gold, print the metrics table and write
the run's artefacts into a new folder: metrics.csv, metrics.json, goldstandard_llm_comparison.csv,
llm_annotations.json, extraction_metadata.json, config.yaml, prompts_used.csv, evaluation.log.

--gold: an EPPI Reviewer JSON export, or JSONL with one document a line: {"document_id", "name"?,
"attributes": {ATTRIBUTE_ID: {"output_data", "additional_text"?}}} (the format is detected).
--prompts: a CSV with the columns prompt, output_data_type (BOOL, STRING, INTEGER, FLOAT, LIST, DICT),
attribute_id, attribute_label; rows with an empty prompt are not scored.
--predictions: JSONL, one document a line: {"document_id", "context", "annotations": [{"attribute_id",
"output_data", "reasoning"?, "additional_text"?}]}.

Bad input (including a file of the wrong kind, such as span JSONL given as gold) exits with status 2,
names file, line and field, and writes nothing. An existing, non-empty output folder is refused (exit
status 2) unless --overwrite is given; the old folder is then replaced only once the new one is complete.

Example:
  manage.py evaluate_extraction --gold gold_eppi.json --prompts prompts.csv \\
      --predictions predictions.jsonl --config config.yaml --output-dir runs/llm-small
"""


class Command(OfflineCommand):
    help = DESCRIPTION
    intervals = "metrics' confidence intervals (metrics.csv, metrics.json)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--gold",
            required=True,
            type=Path,
            help="gold values: an EPPI Reviewer JSON export or native JSONL (detected from the content)",
        )
        parser.add_argument(
            "--prompts",
            required=True,
            type=Path,
            help="prompt CSV (prompt,output_data_type,attribute_id,attribute_label); rows with an empty "
            "prompt are not scored",
        )
        parser.add_argument(
            "--predictions", required=True, type=Path, help="predictions JSONL, one document a line"
        )
        parser.add_argument(
            "--output-dir",
            required=True,
            type=Path,
            help="folder to create for the artefacts; it must not exist yet (or be empty) unless --overwrite",
        )
        parser.add_argument(
            "--config",
            type=Path,
            help="the run's config.yaml; its edit_distance_match_threshold, number_format and "
            "custom_evaluation_metrics are used unless a flag overrides them, and it is copied into "
            "the artefacts",
        )
        parser.add_argument(
            "--edit-distance-threshold",
            type=float,
            metavar="0..1",
            help="STRING near-match threshold (normalised Levenshtein similarity); default: config, else 0.90",
        )
        parser.add_argument(
            "--number-format",
            choices=("en", "de"),
            help="how numbers are written in values and text (en: 1,250.5; de: 1.250,5); default: config, else en",
        )
        parser.add_argument(
            "--custom-metric",
            action="extend",
            nargs="+",
            default=None,
            metavar="NAME",
            help="extra sklearn.metrics function(s) for BOOL attributes, e.g. matthews_corrcoef",
        )
        parser.add_argument(
            "--run-id", help="the run's id in the artefacts; default: the output folder's name"
        )

    # The collector stays off for the whole evaluation, not phase by phase: each time it resumed after a phase
    # it walked the millions of objects the phase had built. Reference counting frees them all by the time
    # `handle` returns, so the collector resumes on a small heap.
    @paused_garbage_collection()
    def handle(self, *args, **options) -> None:
        output_dir: Path = options["output_dir"]
        intervals = self.interval_settings(options)
        require_input_kinds(
            options, {"gold": ATTRIBUTE_GOLD, "prompts": PROMPTS, "predictions": EXTRACTION_PREDICTIONS}
        )
        with output_slot(output_dir, overwrite=options["overwrite"]), unreadable_inputs_refused():
            run = self._write_artefacts(options, output_dir, intervals)
        self.stdout.write(format_metrics_table(run.evaluation, run.settings.custom_metrics))
        warnings = run.log_lines()
        problems = [line for line in warnings if line.startswith("WARNING")]
        for line in problems[:WARNINGS_SHOWN]:
            self.stderr.write(line)
        if len(problems) > WARNINGS_SHOWN:
            self.stderr.write(f"... and {len(problems) - WARNINGS_SHOWN} more warnings")
        self.stdout.write(f"\nArtefacts of run {run.evaluation.run_id!r} written to {output_dir}")

    def _write_artefacts(self, options: dict, output_dir: Path, intervals: IntervalSettings) -> ExtractionRun:
        try:
            config = load_config(options["config"]) if options["config"] else None
            settings = resolve_settings(
                config,
                edit_distance_match_threshold=options["edit_distance_threshold"],
                number_format=options["number_format"],
                custom_metrics=options["custom_metric"],
            )
            return evaluate_extraction_to_folder(
                gold=options["gold"],
                prompts=options["prompts"],
                predictions=options["predictions"],
                output_dir=output_dir,
                run_id=options["run_id"] or output_dir.resolve().name,
                settings=settings,
                config=config,
                intervals=intervals,
                processes=options["processes"],
            )
        except InputValidationError as error:
            raise bad_input(f"invalid input, nothing written:\n{error}") from None
