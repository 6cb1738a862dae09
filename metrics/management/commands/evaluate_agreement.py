"""`manage.py evaluate_agreement`: agreement between annotators from files to agreement.json, without a
database, through `metrics.pipeline.agreement_evaluation` (the code of the server's agreement job)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from annotations.models import NumberFormat
from metrics.management.offline_files import (
    ATTRIBUTE_GOLD,
    PROMPTS,
    SPAN_DATA,
    OfflineCommand,
    bad_input,
    require_input_kinds,
    write_json_report,
)
from metrics.pipeline.agreement_evaluation import (
    evaluate_attribute_agreement_paths,
    evaluate_span_agreement_path,
)

# The same kinds as evaluate_extraction's gold, named as this command's help names them.
ANNOTATED_GOLD = (ATTRIBUTE_GOLD[0], "attribute gold (JSONL or EPPI)")

DESCRIPTION = """\
Measure how far annotators agree with each other and write agreement.json.

Spans: --input EXPORT takes what evaluate_spans --input takes (a JSONL file, UIMA CAS JSON, a directory
or a .zip). Annotators come from an INCEpTION project export (annotation/<document>/<user>.json, one
annotator per user; INITIAL_CAS is skipped) or from JSONL lines with an "annotator" field (one line per
document and annotator). Written: spans.pairs, one entry per pair of annotators with f1_exact,
f1_overlap, f1_typed (span matching of evaluate_spans, one annotator as gold, the other as prediction)
and cohen_kappa_chars (Cohen's kappa of the character labels: the entity type, or O outside any span);
spans.overall with krippendorff_alpha_chars (nominal, every annotator) and the annotators and documents
it covers.

Attributes: --gold FILE --prompts CSV. FILE is attribute gold JSONL whose lines name their "annotator";
the prompt CSV gives the attributes and their types. Written: attributes, one entry per scored
attribute: Cohen's kappa for two annotators, Krippendorff's alpha (nominal) for more, Krippendorff's
alpha (interval) for INTEGER and FLOAT, and percent_agreement beside each.

Every figure has a cluster-bootstrap confidence interval over documents beside it (<name>_ci).
Documents only one annotator worked on are listed (single_annotator_documents) and left out.
Invalid input (malformed files, a file of another kind such as an EPPI export given as --input)
stops with exit status 2 and a list of the problems; no file is written. An existing output is refused
(exit status 2) unless --overwrite is given.

Example:
  manage.py evaluate_agreement --input inception-export.zip --output agreement.json
  manage.py evaluate_agreement --gold gold.jsonl --prompts prompts.csv --output agreement.json --overwrite
"""


class Command(OfflineCommand):
    help = DESCRIPTION
    intervals = "confidence intervals (stored beside each figure as <name>_ci)"
    processes = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--input", metavar="EXPORT", help="span annotations: file, directory or .zip")
        parser.add_argument(
            "--label-map",
            metavar="MAP_JSON",
            help='spans: JSON object {"label": "CANONICAL_TYPE"} merged over the default map',
        )
        parser.add_argument(
            "--gold", metavar="FILE", help="attributes: gold JSONL with an annotator per line"
        )
        parser.add_argument("--prompts", metavar="CSV", help="attributes: the prompt CSV (the schema)")
        parser.add_argument(
            "--number-format",
            choices=NumberFormat.values,
            default=NumberFormat.EN,
            help="attributes: how numbers are written (default en: 1,250.5)",
        )
        parser.add_argument("--output", required=True, metavar="AGREEMENT_JSON", help="where to write")

    def handle(self, *args: Any, **options: Any) -> None:
        output = Path(options["output"])
        spans, gold, prompts = options["input"], options["gold"], options["prompts"]
        if bool(spans) == bool(gold or prompts):
            raise bad_input("give either --input EXPORT (spans) or --gold FILE --prompts CSV (attributes)")
        if not spans and not (gold and prompts):
            raise bad_input("--gold and --prompts go together (attribute agreement needs both)")
        if spans is None and options["label_map"]:
            raise bad_input("--label-map applies to spans (--input) only")
        for flag, path in (("--gold", gold), ("--prompts", prompts)):
            if path and not Path(path).is_file():
                raise bad_input(f"{flag} {path}: no such file")
        require_input_kinds(options, {"input": SPAN_DATA, "gold": ANNOTATED_GOLD, "prompts": PROMPTS})
        report = write_json_report(output, lambda: self._evaluate(options), overwrite=options["overwrite"])
        self.stdout.write(format_summary(report))
        for warning in report["warnings"]:
            self.stderr.write(f"warning: {warning.get('message')}")
        self.stdout.write(f"Agreement written to {output}")

    def _evaluate(self, options: dict[str, Any]) -> dict[str, Any]:
        spans, gold, prompts = options["input"], options["gold"], options["prompts"]
        intervals = self.interval_settings(options)
        if spans:
            return evaluate_span_agreement_path(
                spans, label_map_path=options["label_map"], intervals=intervals
            )
        return evaluate_attribute_agreement_paths(
            gold, prompts, number_format=options["number_format"], intervals=intervals
        )


def _figure(value: float | None, interval: dict | None) -> str:
    if value is None:
        return "n/a"
    if not interval:
        return f"{value:.3f}"
    return f"{value:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"


def format_summary(report: dict[str, Any]) -> str:
    lines = []
    if report["kind"] == "spans":
        spans = report["spans"]
        overall = spans["overall"]
        lines.append(
            f"Annotators: {', '.join(overall['annotators']) or '-'}; documents with two or more: "
            f"{overall['documents']}; with one only (left out): {len(spans['single_annotator_documents'])}"
        )
        for pair in spans["pairs"]:
            lines.append(
                f"  {pair['a']} / {pair['b']} ({pair['documents']} documents): "
                f"F1 exact {_figure(pair['f1_exact'], pair['f1_exact_ci'])}, "
                f"overlap {_figure(pair['f1_overlap'], pair['f1_overlap_ci'])}, "
                f"typed {_figure(pair['f1_typed'], pair['f1_typed_ci'])}, "
                f"kappa chars {_figure(pair['cohen_kappa_chars'], pair['cohen_kappa_chars_ci'])}"
            )
        lines.append(
            "Krippendorff's alpha (nominal, characters): "
            + _figure(overall["krippendorff_alpha_chars"], overall["krippendorff_alpha_chars_ci"])
        )
    else:
        for entry in report["attributes"]:
            lines.append(
                f"  {entry['attribute_id']}: {entry['measure']} {_figure(entry['value'], entry['value_ci'])}; "
                f"agreement {_figure(entry['percent_agreement'], entry['percent_agreement_ci'])} "
                f"({entry['documents']} documents)"
            )
    return "\n".join(lines)
