"""Scoring of extracted attribute values against gold values (docs/semantics.md section 2).

Entry points: `compare_documents` per chunk of documents (`evaluation.evaluation_from_columns` turns
the merged rows into a run's evaluation);
`metric_column_order` and `COUNT_COLUMNS` for the metrics table's columns.
"""

from metrics.engine.attributes.comparison import compare_documents, validate_settings
from metrics.engine.attributes.custom_metrics import resolve_custom_metrics
from metrics.engine.attributes.metrics import COUNT_COLUMNS, metric_column_order

__all__ = [
    "COUNT_COLUMNS",
    "compare_documents",
    "metric_column_order",
    "resolve_custom_metrics",
    "validate_settings",
]
