"""Comparison rows: one per scored gold document x scored attribute (SEMANTICS.md section 2).

A row holds the coerced gold and predicted values, whether the gold value is found in the context the
model read and in the gold citation, the verbatim grounding scores and the match status. Metrics are
computed from rows only (see `metrics.py`), so rows of document chunks can be scored separately and
their metrics computed over all rows at the end.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz.distance import Levenshtein

from metrics.engine.attributes.citations import NO_CITATION, Citation, parse_citation
from metrics.engine.attributes.coercion import CoercionError, check_number_format, coerce_value
from metrics.engine.attributes.text_search import (
    SearchableText,
    near_window_in,
    normalise_for_search,
    number_in,
    number_occurs,
    occurs_on_word_boundaries,
    read_numbers,
)
from metrics.engine.attributes.types import (
    AttributeSpec,
    AttributeType,
    ComparisonRow,
    EvaluationSettings,
    GoldAnnotation,
    GoldDocument,
    MatchStatus,
    PredictedAnnotation,
    PredictionDocument,
)
from metrics.engine.attributes.verbatim import verbatim_fuzzy_pct

# Types whose gold value is searched in the context and the citation, and which get a match status.
SOURCE_CHECKED_TYPES: frozenset[AttributeType] = frozenset(
    {AttributeType.STRING, AttributeType.INTEGER, AttributeType.FLOAT}
)

NO_PREDICTION_DOCUMENT = "no prediction was posted for this document"
NO_ANNOTATION = "the prediction has no value for this attribute"
NULL_PREDICTION = "the model returned null for this attribute"


def validate_settings(settings: EvaluationSettings) -> None:
    """Raise ValueError for settings no evaluation can use."""
    check_number_format(settings.number_format)
    if not 0.0 <= settings.edit_distance_match_threshold <= 1.0:
        raise ValueError(
            f"edit_distance_match_threshold must be between 0 and 1, got {settings.edit_distance_match_threshold}"
        )
    if not settings.float_relative_tolerance >= 0.0:
        raise ValueError(f"float_relative_tolerance must be >= 0, got {settings.float_relative_tolerance}")


def has_gold(document: GoldDocument, attributes: Sequence[AttributeSpec]) -> bool:
    """A document has gold when it is annotated for at least one attribute of the schema.

    An EPPI reference with no codes has none: it is listed as unscored, not scored as all-defaults.
    """
    return any(spec.attribute_id in document.annotations for spec in attributes)


def normalise_for_similarity(text: str) -> str:
    """Whitespace collapsed and lowercased: the form compared by `edit_distance_match_rate`."""
    return " ".join(text.lower().split())


def string_similarity(gold: str, predicted: str) -> float:
    """`Levenshtein.normalized_similarity` of the two normalised strings, 0 to 1."""
    return Levenshtein.normalized_similarity(
        normalise_for_similarity(gold), normalise_for_similarity(predicted)
    )


def values_equal(attribute_type: AttributeType, gold: Any, predicted: Any, relative_tolerance: float) -> bool:
    """Exact equality; FLOAT within `relative_tolerance` (math.isclose, no absolute slack)."""
    if attribute_type is AttributeType.FLOAT:
        return math.isclose(gold, predicted, rel_tol=relative_tolerance, abs_tol=0.0)
    return bool(gold == predicted)


def _raw_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def _group_by_attribute(annotations: Sequence[PredictedAnnotation]) -> dict[str, list[PredictedAnnotation]]:
    grouped: dict[str, list[PredictedAnnotation]] = {}
    for annotation in annotations:
        grouped.setdefault(annotation.attribute_id, []).append(annotation)
    return grouped


def _with_model_reasoning(reason: str, model_reasoning: str | None) -> str:
    return f"{reason}. Model reasoning: {model_reasoning}" if model_reasoning else reason


class _Coercions:
    """`coerce_value` with its answers kept for one call: the same few raw values ("yes", True, 12...)
    recur across thousands of rows. Keyed by the raw value's class too, since 1, 1.0 and True are
    equal keys in a dict but not the same STRING."""

    def __init__(self, number_format: str) -> None:
        self.number_format = number_format
        self.known: dict[tuple[AttributeType, type, Any], tuple[bool, Any]] = {}

    def __call__(self, raw: Any, attribute_type: AttributeType) -> Any:
        key = (attribute_type, raw.__class__, raw)
        try:
            known = self.known.get(key)
        except TypeError:  # lists and dicts: not hashable, and rare
            return coerce_value(raw, attribute_type, self.number_format)
        if known is None:
            try:
                known = (True, coerce_value(raw, attribute_type, self.number_format))
            except CoercionError as error:
                known = (False, str(error))
            self.known[key] = known
        valid, value = known
        if not valid:
            raise CoercionError(value)
        return value


class _DocumentComparer:
    """Builds the rows of one gold document; holds what every attribute of the document shares."""

    def __init__(
        self,
        *,
        run_id: str,
        document: GoldDocument,
        prediction: PredictionDocument | None,
        settings: EvaluationSettings,
        warnings: list[str],
        citations: dict[str | tuple[str, ...], Citation],
        coerce: _Coercions,
    ) -> None:
        self.run_id = run_id
        self.citations = citations
        self.coerce = coerce
        self.document = document
        self.settings = settings
        self.warnings = warnings
        self.context = SearchableText(prediction.context if prediction else "", settings.number_format)
        self.failure: str | None = None
        self.verbatim_scores: dict[str, float] = {}
        self.predicted: dict[str, list[PredictedAnnotation]] = {}
        if prediction is None:
            self.failure = NO_PREDICTION_DOCUMENT
        elif prediction.status != "ok":
            detail = f": {prediction.error}" if prediction.error else ""
            self.failure = f"extraction failed for this document (status {prediction.status!r}){detail}"
        else:
            self.predicted = _group_by_attribute(prediction.annotations)

    def _citation(self, annotation: GoldAnnotation | None) -> Citation:
        if annotation is None or not annotation.full_text_details:
            return NO_CITATION
        # Shared across the documents of one call: identical details (one EPPI passage coded for
        # several attributes, generated data) are parsed once and their cleaned text stored once.
        # Keyed by the texts alone, which is all parsing reads, and cheaper to hash than the details.
        details = annotation.full_text_details
        key = details[0].text if len(details) == 1 else tuple(detail.text for detail in details)
        citation = self.citations.get(key)
        if citation is None:
            citation = self.citations[key] = parse_citation(details)
        return citation

    def _where(self, spec: AttributeSpec) -> str:
        return f"document {self.document.document_id!r}, attribute {spec.attribute_id!r}"

    def _prediction(self, spec: AttributeSpec) -> tuple[Any, str | None, str | None]:
        """(value or None when missing, llm_reasoning, llm_verbatim_text)."""
        if self.failure is not None:
            return None, self.failure, None
        given = self.predicted.get(spec.attribute_id)
        if not given:
            return None, NO_ANNOTATION, None
        if len(given) > 1:
            values = ", ".join(repr(annotation.output_data) for annotation in given)
            reason = f"the model gave {len(given)} values for this attribute ({values}); counted as missing"
            self.warnings.append(f"{self._where(spec)}: {reason}")
            return None, reason, None
        annotation = given[0]
        try:
            value = self.coerce(annotation.output_data, spec.type)
        except CoercionError as error:
            reason = f"invalid predicted value ({error}); counted as missing"
            self.warnings.append(f"{self._where(spec)}: {reason}")
            return None, _with_model_reasoning(reason, annotation.reasoning), annotation.additional_text
        if value is None:
            return (
                None,
                _with_model_reasoning(NULL_PREDICTION, annotation.reasoning),
                annotation.additional_text,
            )
        return value, annotation.reasoning, annotation.additional_text

    def _verbatim_pct(self, snippet: str | None) -> float:
        # Checked here so a document whose rows have no snippets never collapses its context.
        if not snippet:
            return 0.0
        # A fuzzy score of a long snippet costs up to a millisecond, and the same quote often backs
        # several attributes of a document, or both the human and the model side of one row.
        score = self.verbatim_scores.get(snippet)
        if score is None:
            score = self.verbatim_scores[snippet] = verbatim_fuzzy_pct(snippet, self.context.collapsed)
        return score

    def _found_in_context(self, spec: AttributeSpec, gold: Any) -> bool:
        if spec.type is AttributeType.STRING:
            return self.context.contains_string(normalise_for_search(gold))
        return self.context.contains_number(float(gold), self._number_tolerance(spec))

    def _found_in_citation(self, spec: AttributeSpec, gold: Any, texts: Sequence[str]) -> bool:
        """Found in any citation text; for STRING a near window also counts (tried only after every
        text failed the exact search, since it costs far more)."""
        if spec.type is AttributeType.STRING:
            needle = normalise_for_search(gold)
            haystacks = [normalise_for_search(text) for text in texts]
            threshold = self.settings.edit_distance_match_threshold
            return any(occurs_on_word_boundaries(needle, haystack) for haystack in haystacks) or any(
                near_window_in(needle, haystack, threshold) for haystack in haystacks
            )
        value = float(gold)
        tolerance = self._number_tolerance(spec)
        number_format = self.settings.number_format
        for text in texts:
            found = number_occurs(text, value, number_format, tolerance)
            if found is None:
                found = number_in(value, read_numbers(text, number_format), tolerance)
            if found:
                return True
        return False

    def _number_tolerance(self, spec: AttributeSpec) -> float:
        return self.settings.float_relative_tolerance if spec.type is AttributeType.FLOAT else 0.0

    def row(self, spec: AttributeSpec) -> ComparisonRow:
        annotation: GoldAnnotation | None = self.document.annotations.get(spec.attribute_id)
        raw_gold = annotation.output_data if annotation is not None else spec.missing_value()
        gold_is_valid = True
        try:
            gold = self.coerce(raw_gold, spec.type)
        except CoercionError as error:
            gold_is_valid = False
            gold = _raw_text(raw_gold)
            self.warnings.append(
                f"{self._where(spec)}: invalid gold value {raw_gold!r} ({error}); left out of the metrics"
            )
        predicted, reasoning, verbatim_text = self._prediction(spec)
        citation = self._citation(annotation)
        human_additional_text = annotation.additional_text if annotation is not None else None

        is_correct: bool | None = None
        in_context: bool | None = None
        in_citation: bool | None = None
        status: MatchStatus | None = None
        if not gold_is_valid:
            # Every type, BOOL included: an unscored row must say why it is unscored.
            status = MatchStatus.INVALID_GOLD
        elif gold is not None:
            # (A null gold, from a null missing default, is left out: no checks, no status.)
            if predicted is not None:
                is_correct = values_equal(spec.type, gold, predicted, self.settings.float_relative_tolerance)
            if spec.type in SOURCE_CHECKED_TYPES:
                in_context = self._found_in_context(spec, gold)
                citation_texts = list(citation.highlights)
                if human_additional_text:
                    citation_texts.insert(0, human_additional_text)
                in_citation = self._found_in_citation(spec, gold, citation_texts)
                status = self._match_status(spec, gold, predicted, is_correct, in_context)

        return ComparisonRow(
            document_id=self.document.document_id,
            external_id=self.document.external_id,
            document_name=self.document.name,
            attribute_id=spec.attribute_id,
            attribute_label=spec.label,
            attribute_type=spec.type,
            extraction_run_id=self.run_id,
            attribute_presence=annotation is not None,
            human_additional_text=human_additional_text,
            item_attribute_full_text_details=citation.raw_details,
            citation_page=citation.page,
            citation_highlight_text=citation.highlight_text,
            human_extraction=gold,
            llm_extraction=predicted,
            llm_reasoning=reasoning,
            llm_verbatim_text=verbatim_text,
            human_verbatim_fuzzy_match_pct=self._verbatim_pct(human_additional_text),
            llm_verbatim_fuzzy_match_pct=self._verbatim_pct(verbatim_text),
            gold_value_in_citation=in_citation,
            gold_value_in_context=in_context,
            match_status=status,
            gold_is_valid=gold_is_valid,
            is_correct=is_correct,
        )

    def _match_status(
        self, spec: AttributeSpec, gold: Any, predicted: Any, is_correct: bool | None, in_context: bool
    ) -> MatchStatus:
        """The first rule that holds: missing_prediction, exact_match, near_match (STRING), bad/good source."""
        if predicted is None:
            return MatchStatus.MISSING_PREDICTION
        if is_correct:
            return MatchStatus.EXACT_MATCH
        if (
            spec.type is AttributeType.STRING
            and string_similarity(gold, predicted) >= self.settings.edit_distance_match_threshold
        ):
            return MatchStatus.NEAR_MATCH
        if not in_context:
            return MatchStatus.EXTRACTION_ERROR_BAD_SOURCE
        return MatchStatus.EXTRACTION_ERROR_GOOD_SOURCE


def compare_documents(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
) -> tuple[list[ComparisonRow], list[str]]:
    """Rows for these gold documents, in gold-document order then attribute order, and warnings.

    Only attributes with a prompt get rows; a document with no gold for any schema attribute gets none
    (see `unscored_document_ids`). `predictions` is keyed by document id; only its lookups matter, so
    its order never changes a result. Safe to call per chunk of documents.
    """
    validate_settings(settings)
    scored = [spec for spec in attributes if spec.is_scored]
    schema_ids = {spec.attribute_id for spec in attributes}
    if len(schema_ids) != len(attributes):
        counts = Counter(spec.attribute_id for spec in attributes)
        repeated = sorted(attribute_id for attribute_id, count in counts.items() if count > 1)
        raise ValueError(f"attribute ids appear more than once in the schema: {', '.join(repeated)}")
    rows: list[ComparisonRow] = []
    warnings: list[str] = []
    unknown_predicted: dict[str, int] = {}
    seen: set[str] = set()
    citations: dict[str | tuple[str, ...], Citation] = {}
    coerce = _Coercions(settings.number_format)
    for document in gold_documents:
        if document.document_id in seen:
            raise ValueError(f"gold document {document.document_id!r} appears twice")
        seen.add(document.document_id)
        if not has_gold(document, attributes):
            continue
        prediction = predictions.get(document.document_id)
        comparer = _DocumentComparer(
            run_id=run_id,
            document=document,
            prediction=prediction,
            settings=settings,
            warnings=warnings,
            citations=citations,
            coerce=coerce,
        )
        for attribute_id, given in comparer.predicted.items():
            if attribute_id not in schema_ids:
                unknown_predicted[attribute_id] = unknown_predicted.get(attribute_id, 0) + len(given)
        rows.extend(comparer.row(spec) for spec in scored)
    for attribute_id in sorted(unknown_predicted):
        warnings.append(
            f"predicted attribute {attribute_id!r} is not in the schema; "
            f"{unknown_predicted[attribute_id]} value(s) ignored"
        )
    return rows, warnings


def unscored_document_ids(
    gold_documents: Sequence[GoldDocument], attributes: Sequence[AttributeSpec]
) -> list[str]:
    """Gold documents with no gold for any schema attribute, in input order: listed, not scored."""
    return [document.document_id for document in gold_documents if not has_gold(document, attributes)]


def skipped_attribute_ids(attributes: Sequence[AttributeSpec]) -> list[str]:
    """Attributes without a prompt, in schema order: listed, not scored."""
    return [spec.attribute_id for spec in attributes if not spec.is_scored]
