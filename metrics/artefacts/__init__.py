"""Writers for the artefacts of an extraction run (docs/semantics.md section 4).

Framework-free: plain results in (metrics.engine.attributes.types), files out. The offline command
writes a whole folder with `metrics.pipeline.extraction_evaluation.write_run_artefacts`; the server's artefact
download calls the same writers on an open file or a path.
"""

from metrics.artefacts.bundle import ARTEFACT_NAMES, atomic_directory, check_output_dir
from metrics.artefacts.cells import cell, csv_writer, escape_formula
from metrics.artefacts.comparison import write_comparison_csv, write_comparison_rows
from metrics.artefacts.metrics_files import (
    format_metrics_table,
    metric_columns,
    metrics_report,
    write_metrics_csv,
    write_metrics_json,
)
from metrics.artefacts.run_records import (
    extraction_metadata,
    write_config_yaml,
    write_evaluation_log,
    write_extraction_metadata_json,
    write_llm_annotations_json,
    write_prompts_used_csv,
)

__all__ = [
    "ARTEFACT_NAMES",
    "atomic_directory",
    "cell",
    "check_output_dir",
    "csv_writer",
    "escape_formula",
    "extraction_metadata",
    "format_metrics_table",
    "metric_columns",
    "metrics_report",
    "write_comparison_csv",
    "write_comparison_rows",
    "write_config_yaml",
    "write_evaluation_log",
    "write_extraction_metadata_json",
    "write_llm_annotations_json",
    "write_metrics_csv",
    "write_metrics_json",
    "write_prompts_used_csv",
]
