"""`manage.py evaluate_spans`: score de-identification spans from files to results.json, without a
database, through `metrics.pipeline.span_evaluation` (the code of the server's scoring jobs)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from django.core.management.base import OutputWrapper

from metrics.management.offline_files import (
    SPAN_DATA,
    OfflineCommand,
    require_input_kinds,
    write_json_report,
)
from metrics.pipeline.intervals import value_at
from metrics.pipeline.span_evaluation import evaluate_span_paths

HEADLINE_ROWS: tuple[tuple[str, str], ...] = (
    ("characters, all", "chars.all"),
    ("characters, scored", "chars.scored"),
    ("characters, typed", "chars_typed"),
    ("tokens, binary", "tokens.binary"),
    ("tokens, typed", "tokens.typed"),
    ("spans, exact", "spans_exact.type_agnostic"),
    ("spans, overlap", "spans_overlap.type_agnostic"),
    ("nervaluate strict", "nervaluate.strict"),
    ("nervaluate partial", "nervaluate.partial"),
)
LEAKAGE_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("any_char", "some character of an identifier was not redacted"),
    ("any_char_scored", "the same, ignoring spaces and punctuation"),
    ("entity_missed", "an identifier was not touched at all"),
)

DESCRIPTION = """\
Score predicted spans against gold spans (de-identification) and write results.json.

GOLD and PREDICTIONS are each a JSONL file, a UIMA CAS JSON file (INCEpTION), a directory or a .zip
archive of those; directories and archives are read recursively and macOS junk (__MACOSX, ._*) and
hidden files are skipped.

JSONL: one document a line, {"document_id", "text", "entities": [{"start", "end", "entity_type",
"text"?}]}, offsets in Unicode code points, end exclusive. Predictions may omit the document text; when
present it must equal the gold text.

INCEpTION: an exported project (annotation/<document>/<user>.json) gives one annotation per user.
When gold holds several annotators for a document, choose the gold one with --gold-annotator NAME
(the error lists the annotators found).

Every headline number gets a confidence interval, stored beside it as <metric>_ci (e.g.
micro.chars.all.f1_ci): a cluster bootstrap over documents for precision, recall and F1, exact
Clopper-Pearson for the leakage rates. The settings (--confidence-level, --resamples, --seed) are recorded
in config.intervals; the same input and seed give the same intervals. --resamples 0 turns them off.

Invalid input (bad offsets, mismatching texts, unknown or duplicate documents, malformed files, a file
of another kind such as an EPPI export) stops the run with exit status 2 and a list of every problem; no
output file is written. An existing output is refused (exit status 2) unless --overwrite is given.
Warnings (e.g. unknown labels, mapped to OTHER_PII) are printed and stored in the results, and the run
goes on.

Example:
  manage.py evaluate_spans --gold gold.jsonl --predictions predictions.jsonl --output results.json
  manage.py evaluate_spans --gold inception-export.zip --gold-annotator anna \\
      --predictions predictions.jsonl --output results.json --overwrite
"""


class Command(OfflineCommand):
    help = DESCRIPTION
    intervals = "confidence intervals (stored beside each metric as <metric>_ci)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--gold",
            "--input",
            dest="gold",
            required=True,
            metavar="GOLD",
            help="gold spans: file, directory or .zip (--input is the former name)",
        )
        parser.add_argument(
            "--predictions",
            required=True,
            metavar="PREDICTIONS",
            help="predicted spans: file, directory or .zip",
        )
        parser.add_argument(
            "--output", required=True, metavar="RESULTS_JSON", help="where to write results.json"
        )
        parser.add_argument(
            "--label-map",
            metavar="MAP_JSON",
            help='JSON object {"label": "CANONICAL_TYPE"} merged over the default map (lookup ignores case)',
        )
        parser.add_argument(
            "--restrict-to-gt-types",
            action="store_true",
            help="drop predictions whose type never occurs in the gold data (the report counts them)",
        )
        parser.add_argument(
            "--include-sensitive-text",
            action="store_true",
            help="put entity text in the report (off by default: it is patient data)",
        )
        parser.add_argument(
            "--gold-annotator",
            metavar="NAME",
            help="the INCEpTION user whose annotations are gold, when gold holds several annotators",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        output = Path(options["output"])
        require_input_kinds(options, {"gold": SPAN_DATA, "predictions": SPAN_DATA})
        results = write_json_report(
            output,
            lambda: self._evaluate(options),
            overwrite=options["overwrite"],
            nothing_written="no results written",
        )
        self.stdout.write(format_summary(results))
        for warning in results["warnings"]:
            self.stderr.write(f"warning: {_warning_text(warning)}")
        self.stdout.write(f"Results written to {output}")

    def _evaluate(self, options: dict[str, Any]) -> dict[str, Any]:
        intervals = self.interval_settings(options)
        progress = _ProgressBar(self.stderr) if self.stderr.isatty() else None
        try:
            return evaluate_span_paths(
                options["gold"],
                options["predictions"],
                label_map_path=options["label_map"],
                restrict_to_gt_types=options["restrict_to_gt_types"],
                include_sensitive_text=options["include_sensitive_text"],
                progress=progress,
                gold_annotator=options["gold_annotator"],
                intervals=intervals,
                processes=options["processes"],
            )
        finally:
            if progress is not None:
                progress.finish()


def format_summary(results: dict[str, Any]) -> str:
    """Leakage first (the question that matters: was each identifier removed?), then P/R/F1."""
    documents = results.get("documents", 0)
    lines = [f"Documents: {documents}", "", "LEAKAGE (documents where an identifier survived)"]
    lines.append(f"  {'condition':<17}{'leaked':>8}{'rate':>9}{'rate (docs with gold)':>24}  meaning")
    leakage = results.get("leakage", {})
    for condition, meaning in LEAKAGE_CONDITIONS:
        entry = leakage.get(condition, {})
        lines.append(
            f"  {condition:<17}{_number(entry.get('documents_leaked')):>8}{_percent(entry.get('rate_all_documents')):>9}"
            f"{_percent(entry.get('rate_documents_with_gold')):>24}  {meaning}"
        )
    intervals = results.get("config", {}).get("intervals") or {}
    level = f"{100 * intervals['level']:g}% CI" if intervals.get("method") else None
    lines += ["", "DETECTION (micro over all documents)"]
    lines.append(
        f"  {'measure':<22}{'precision':>10}{'recall':>10}{'f1':>10}"
        + (f"  {'recall ' + level:<17}  {'f1 ' + level}" if level else "")
    )
    for title, key_path in HEADLINE_ROWS:
        entry = value_at(results.get("micro", {}), key_path.split("."))
        if isinstance(entry, dict):
            line = (
                f"  {title:<22}{_percent(entry.get('precision')):>10}{_percent(entry.get('recall')):>10}"
                f"{_percent(entry.get('f1')):>10}"
            )
            if level:
                line += f"  {_interval(entry.get('recall_ci')):<17}  {_interval(entry.get('f1_ci'))}"
            lines.append(line.rstrip())
    if level:
        lines += [
            "",
            f"Intervals: {level}, cluster bootstrap over documents ({intervals['resamples']} resamples, "
            f"seed {intervals['seed']}); leakage rates: exact Clopper-Pearson. All in the results file as "
            "<metric>_ci.",
        ]
    dropped = results.get("restricted_predictions_dropped")
    if results.get("config", {}).get("restrict_to_gt_types"):
        lines += ["", f"Predictions dropped by --restrict-to-gt-types: {_number(dropped)}"]
    return "\n".join(lines)


def _percent(value: Any) -> str:
    # null means "not defined" (docs/semantics.md: never a misleading 0); show it as such.
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _interval(interval: Any) -> str:
    """[low, high] in percent; blank where the measure has no interval (not computed for it)."""
    if not isinstance(interval, dict) or interval.get("low") is None or interval.get("high") is None:
        return ""
    return f"[{100 * interval['low']:.1f}, {100 * interval['high']:.1f}]"


def _number(value: Any) -> str:
    return "n/a" if value is None else str(value)


def _warning_text(warning: dict[str, Any]) -> str:
    where = ", ".join(
        str(part)
        for part in (
            warning.get("file"),
            None if warning.get("line") is None else f"line {warning['line']}",
            None if warning.get("document_id") is None else f"document {warning['document_id']!r}",
        )
        if part
    )
    return f"{where}: {warning['message']}" if where else warning["message"]


class _ProgressBar:
    """A one-line progress bar on a terminal, redrawn at most ten times a second."""

    def __init__(self, stream: OutputWrapper, width: int = 30):
        self.stream = stream
        self.width = width
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\rscoring [{bar}] {done}/{total} documents", ending="")
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("")
            self.stream.flush()
