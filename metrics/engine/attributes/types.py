"""Plain data that goes into and comes out of the attribute engine.

Importers (annotations/importers) build the inputs; the artefact writers and the server read the
outputs. Nothing here knows about files, Django or HTTP. The inputs are not frozen: a run builds them by
the hundred thousand, and a frozen dataclass sets each field through `object.__setattr__`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class AttributeType(StrEnum):
    BOOL = "BOOL"
    STRING = "STRING"
    INTEGER = "INTEGER"
    FLOAT = "FLOAT"
    LIST = "LIST"
    DICT = "DICT"

    @classmethod
    def parse(cls, raw: str) -> AttributeType:
        """Accept any case ("bool", "Bool"); raise ValueError naming the allowed values otherwise."""
        try:
            return cls(raw.strip().upper())
        except ValueError:
            allowed = ", ".join(member.value.lower() for member in cls)
            raise ValueError(f"unknown attribute type {raw!r}; expected one of {allowed}") from None


class _UseTypeDefault:
    """Marker: the attribute takes its type's missing-annotation default (docs/semantics.md section 2)."""

    def __repr__(self) -> str:
        return "USE_TYPE_DEFAULT"

    def __reduce__(self) -> str:
        # The one marker, also in another process: it is compared by identity.
        return "USE_TYPE_DEFAULT"


USE_TYPE_DEFAULT: Any = _UseTypeDefault()

TYPE_DEFAULTS: Mapping[AttributeType, Any] = {
    AttributeType.BOOL: False,
    AttributeType.STRING: "",
    AttributeType.INTEGER: 0,
    AttributeType.FLOAT: 0.0,
    AttributeType.LIST: [],
    AttributeType.DICT: {},
}


@dataclass(frozen=True, slots=True)
class AttributeSpec:
    """One attribute of the schema. Only attributes with a non-empty prompt are scored."""

    attribute_id: str
    label: str
    type: AttributeType
    prompt: str = ""
    # The gold value when the attribute is absent for a document. USE_TYPE_DEFAULT means the
    # type's default; None is an allowed explicit value (the gold is then null, and left out).
    missing_default: Any = USE_TYPE_DEFAULT

    @property
    def is_scored(self) -> bool:
        return bool(self.prompt.strip())

    def missing_value(self) -> Any:
        if self.missing_default is USE_TYPE_DEFAULT:
            default = TYPE_DEFAULTS[self.type]
            return default.copy() if isinstance(default, (list, dict)) else default
        return self.missing_default


@dataclass(slots=True)
class FullTextDetail:
    """One EPPI `ItemAttributeFullTextDetails` entry: a citation into the full text."""

    text: str
    item_document_id: str | None = None
    item_arm: str | None = None


@dataclass(slots=True)
class GoldAnnotation:
    """A gold value as imported: `output_data` is raw (a JSON value or text), coerced by the engine."""

    output_data: Any
    additional_text: str | None = None
    full_text_details: tuple[FullTextDetail, ...] = ()


@dataclass(slots=True)
class GoldDocument:
    document_id: str
    name: str | None = None
    external_id: str | None = None
    text: str | None = None
    # attribute_id -> annotation; an absent attribute takes the attribute's missing default.
    annotations: Mapping[str, GoldAnnotation] = field(default_factory=dict)


@dataclass(slots=True)
class PredictedAnnotation:
    attribute_id: str
    output_data: Any
    additional_text: str | None = None
    reasoning: str | None = None


@dataclass(slots=True)
class PredictionDocument:
    """One posted prediction line. A gold document with no PredictionDocument failed extraction.

    `context` is the text the model read; None when the pipeline had none (a PDF that failed to
    parse): the document is still scored, without source or verbatim checks (docs/semantics.md section 2).
    """

    document_id: str
    context: str | None = ""
    status: str = "ok"  # "ok" | "failed"
    error: str | None = None
    annotations: tuple[PredictedAnnotation, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    timings: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EvaluationSettings:
    edit_distance_match_threshold: float = 0.90
    number_format: str = "en"  # "en": 1,250.5  "de": 1.250,5
    float_relative_tolerance: float = 1e-9
    # Extra sklearn.metrics function names, for this evaluation only.
    custom_metrics: tuple[str, ...] = ()


class MatchStatus(StrEnum):
    INVALID_GOLD = "invalid_gold"
    MISSING_PREDICTION = "missing_prediction"
    EXACT_MATCH = "exact_match"
    NEAR_MATCH = "near_match"
    EXTRACTION_ERROR_BAD_SOURCE = "extraction_error_bad_source"
    EXTRACTION_ERROR_GOOD_SOURCE = "extraction_error_good_source"


@dataclass(slots=True)
class ComparisonRow:
    """One gold document x attribute: the 20 export columns plus the typed values behind them.

    The typed fields (`gold_value`, `predicted_value`, `is_correct`, ...) are what the metrics and the
    bootstrap resample; the export columns are their presentation.
    """

    document_id: str
    external_id: str | None
    document_name: str | None
    attribute_id: str
    attribute_label: str
    attribute_type: AttributeType
    extraction_run_id: str
    attribute_presence: bool
    human_additional_text: str | None
    item_attribute_full_text_details: str | None
    citation_page: str | None
    citation_highlight_text: str | None
    human_extraction: Any  # coerced gold value, or the raw text when the gold is invalid
    llm_extraction: Any  # coerced predicted value, None when missing
    llm_reasoning: str | None
    llm_verbatim_text: str | None
    # None when the prediction has no context to hold the snippets against.
    human_verbatim_fuzzy_match_pct: float | None
    llm_verbatim_fuzzy_match_pct: float | None
    gold_value_in_citation: bool | None  # None for BOOL / LIST / DICT
    gold_value_in_context: bool | None
    match_status: MatchStatus | None  # None for BOOL / LIST / DICT
    gold_is_valid: bool = True
    # True/False when both values exist and the gold is valid; None otherwise.
    is_correct: bool | None = None


# The 20 columns of goldstandard_llm_comparison.csv, in the seed's order: the row's fields but the
# typed ones behind them.
COMPARISON_COLUMNS: tuple[str, ...] = tuple(
    name
    for name in ComparisonRow.__dataclass_fields__
    if name not in {"attribute_type", "gold_is_valid", "is_correct"}
)


@dataclass(slots=True)
class AttributeResult:
    """The counts and metrics of one attribute. A metric that cannot be computed is None."""

    spec: AttributeSpec
    counts: dict[str, int]
    metrics: dict[str, float | None]


@dataclass(slots=True)
class ExtractionEvaluation:
    run_id: str
    attributes: list[AttributeResult]
    rows: list[ComparisonRow]
    # Gold documents that have no gold at all (listed, not scored), attributes left out for an
    # empty prompt, invalid gold and prediction values, duplicate annotations...
    warnings: list[str] = field(default_factory=list)
    unscored_documents: list[str] = field(default_factory=list)
