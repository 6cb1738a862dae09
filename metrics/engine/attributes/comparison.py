"""Comparison rows: one per scored gold document x scored attribute (docs/semantics.md section 2).

Metrics are computed from rows only (`metrics.py`), so the rows of document chunks can be built
separately and scored together at the end.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from rapidfuzz.distance import Levenshtein

from metrics.engine.attributes.citations import NO_CITATION, Citation, parse_citation
from metrics.engine.attributes.coercion import CoercionError, check_number_format, coerce_value
from metrics.engine.attributes.text_search import (
    SearchableText,
    collapse_whitespace,
    near_window_in,
    normalise_for_search,
    number_in,
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
from metrics.engine.attributes.verbatim import FuzzyScores, settled_pct_of_collapsed

# The types whose gold value is searched in the context and the citation, and which get a match
# status, by how they are searched (a plan's `kind`: looked up once per call instead of once per row).
_KIND_STRING, _KIND_NUMBER, _KIND_OTHER = range(3)
_KINDS = {
    AttributeType.STRING: _KIND_STRING,
    AttributeType.INTEGER: _KIND_NUMBER,
    AttributeType.FLOAT: _KIND_NUMBER,
}
SOURCE_CHECKED_TYPES: frozenset[AttributeType] = frozenset(_KINDS)

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


def string_similarity(gold: str, predicted: str) -> float:
    """`Levenshtein.normalized_similarity`, 0 to 1, of the two strings whitespace-collapsed and
    lowercased: the comparison of `edit_distance_match_rate`."""
    return Levenshtein.normalized_similarity(
        " ".join(gold.lower().split()), " ".join(predicted.lower().split())
    )


def raw_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def group_by_attribute(annotations: Sequence[PredictedAnnotation]) -> dict[str, list[PredictedAnnotation]]:
    grouped: dict[str, list[PredictedAnnotation]] = {}
    for annotation in annotations:
        grouped.setdefault(annotation.attribute_id, []).append(annotation)
    return grouped


def with_model_reasoning(reason: str, model_reasoning: str | None) -> str:
    return f"{reason}. Model reasoning: {model_reasoning}" if model_reasoning else reason


class _AttributePlan:
    def __init__(
        self,
        spec: AttributeSpec,
        settings: EvaluationSettings,
        coercions: dict[AttributeType, dict[tuple[type, Any], tuple[bool, Any]]],
    ) -> None:
        self.spec = spec
        self.attribute_id = spec.attribute_id
        self.label = spec.label
        self.type = spec.type
        self.kind = _KINDS.get(spec.type, _KIND_OTHER)
        self.is_float = spec.type is AttributeType.FLOAT
        self.tolerance = settings.float_relative_tolerance if self.is_float else 0.0
        self.missing = spec.missing_value()
        # A list or dict default is copied for every row (`missing_value`), so no row shares it.
        self.missing_is_fixed = not isinstance(self.missing, (list, dict))
        self.number_format = settings.number_format
        # `coerce_value`'s answers, shared by the attributes of a type: the same few raw values
        # ("yes", True, 12...) recur across thousands of rows. Keyed by the raw value's class too,
        # since 1, 1.0 and True are equal keys in a dict but not the same STRING.
        self.coercions = coercions.setdefault(spec.type, {})


def _string_in_citation(needle: str, texts: Sequence[str], threshold: float) -> bool:
    """Found in any citation text; a near window also counts (tried only after every text failed the
    exact search, since it costs far more)."""
    haystacks = [normalise_for_search(text) for text in texts]
    for haystack in haystacks:
        # `in` first: a text that does not hold the needle at all settles without the boundary walk.
        if needle in haystack and occurs_on_word_boundaries(needle, haystack):
            return True
    return any(near_window_in(needle, haystack, threshold) for haystack in haystacks)


class _DocumentSide:
    """One gold document's prediction as the row loop reads it: its annotations by attribute id (or
    why there are none), its context prepared for searching, and the verbatim scores already taken
    against that context."""

    __slots__ = ("predicted", "failure", "without_context", "context", "verbatim_scores")

    def __init__(
        self,
        prediction: PredictionDocument | None,
        schema_ids: set[str] | frozenset[str],
        unknown_predicted: dict[str, int],
        number_format: str,
    ) -> None:
        self.predicted: dict[str, list[PredictedAnnotation]] = {}
        self.failure: str | None = None
        if prediction is None:
            self.failure = NO_PREDICTION_DOCUMENT
        elif prediction.status != "ok":
            detail = f": {prediction.error}" if prediction.error else ""
            self.failure = f"extraction failed for this document (status {prediction.status!r}){detail}"
        else:
            self.predicted = group_by_attribute(prediction.annotations)
            for attribute_id, given in self.predicted.items():
                if attribute_id not in schema_ids:
                    unknown_predicted[attribute_id] = unknown_predicted.get(attribute_id, 0) + len(given)
        # An extracted document without a context: no source or verbatim checks, blank cells instead.
        self.without_context = self.failure is None and prediction.context is None
        self.context = SearchableText((prediction.context or "") if prediction else "", number_format)
        # A fuzzy score of a long snippet costs up to a millisecond, and the same quote often backs
        # several attributes of a document, or both the human and the model side of one row.
        self.verbatim_scores: dict[str, float] = {}


def _where(document_id: str, plan: _AttributePlan) -> str:
    return f"document {document_id!r}, attribute {plan.attribute_id!r}"


def _coerced(plan: _AttributePlan, raw: Any) -> tuple[bool, Any]:
    """`coerce_value` of a non-null raw value as (True, value) or (False, the error), from the
    attribute's cache when it has been seen."""
    known = plan.coercions
    try:
        answer = known.get((raw.__class__, raw))
    except TypeError:  # lists and dicts: not hashable, and rare
        answer = None
    if answer is None:
        try:
            answer = (True, coerce_value(raw, plan.type, plan.number_format))
        except CoercionError as error:
            answer = (False, str(error))
        with suppress(TypeError):
            known[(raw.__class__, raw)] = answer
    return answer


class _Comparison:
    """The rows of one call's documents as they are built, with what those documents share: caches of
    pure functions of their (repeating) inputs, and the fuzzy verbatim scores computed meanwhile."""

    def __init__(self, run_id: str, settings: EvaluationSettings, fuzzy: FuzzyScores) -> None:
        self.run_id = run_id
        self.threshold = settings.edit_distance_match_threshold
        self.number_format = settings.number_format
        self.fuzzy = fuzzy
        self.rows: list[ComparisonRow] = []
        # The rows holding a verbatim score left to `fuzzy`, as -1 - its position there.
        self.waiting: list[ComparisonRow] = []
        self.warnings: list[str] = []
        self.unknown_predicted: dict[str, int] = {}
        self.citations: dict[str | tuple[str, ...], Citation] = {}
        self.coercions: dict[AttributeType, dict[tuple[type, Any], tuple[bool, Any]]] = {}
        # STRING gold value -> its normalised search form (few distinct values, searched per row).
        self.needles: dict[str, str] = {}
        # (kind, tolerance, gold value, citation texts) -> gold_value_in_citation: a few small values
        # and their one-word citations ("4", "Uganda") recur across documents.
        self.in_citation: dict[tuple[int, float, Any, tuple[str, ...]], bool] = {}
        # Verbatim snippet -> whitespace-collapsed ("True", "4", "see table 2" recur across documents).
        self.collapsed_snippets: dict[str, str] = {}

    def citation(self, annotation: GoldAnnotation) -> Citation:
        if not annotation.full_text_details:
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

    def gold_value(
        self, plan: _AttributePlan, annotation: GoldAnnotation | None, document_id: str
    ) -> tuple[bool, Any]:
        """(gold_is_valid, the coerced gold value): the attribute's missing default when the document
        has no annotation for it; an invalid gold value is warned about and kept as its raw text."""
        if annotation is not None:
            raw_gold = annotation.output_data
        else:
            raw_gold = plan.missing if plan.missing_is_fixed else plan.spec.missing_value()
        if raw_gold is None:
            return True, None
        gold_is_valid, gold = _coerced(plan, raw_gold)
        if not gold_is_valid:
            self.warnings.append(
                f"{_where(document_id, plan)}: invalid gold value {raw_gold!r} ({gold}); left out of the metrics"
            )
            gold = raw_text(raw_gold)
        return gold_is_valid, gold

    def predicted_value(
        self, plan: _AttributePlan, side: _DocumentSide, document_id: str
    ) -> tuple[Any, str | None, str | None]:
        """(the coerced predicted value or None when missing, llm_reasoning, llm_verbatim_text)."""
        if side.failure is not None:
            return None, side.failure, None
        given = side.predicted.get(plan.attribute_id)
        if not given:
            return None, NO_ANNOTATION, None
        if len(given) > 1:
            values = ", ".join(repr(entry.output_data) for entry in given)
            reasoning = (
                f"the model gave {len(given)} values for this attribute ({values}); counted as missing"
            )
            self.warnings.append(f"{_where(document_id, plan)}: {reasoning}")
            return None, reasoning, None
        given_annotation = given[0]
        reasoning = given_annotation.reasoning
        raw = given_annotation.output_data
        if raw is None:
            # (A raw value that coerces to None cannot happen: coerce_value maps only None to None.)
            return None, with_model_reasoning(NULL_PREDICTION, reasoning), given_annotation.additional_text
        valid, coerced = _coerced(plan, raw)
        if valid:
            return coerced, reasoning, given_annotation.additional_text
        reason = f"invalid predicted value ({coerced}); counted as missing"
        self.warnings.append(f"{_where(document_id, plan)}: {reason}")
        return None, with_model_reasoning(reason, reasoning), given_annotation.additional_text

    def source_checks(
        self, plan: _AttributePlan, side: _DocumentSide, gold: Any, value: Any, citation_texts: Sequence[str]
    ) -> tuple[bool | None, bool | None, bool | None, MatchStatus | None]:
        """(is_correct, gold_value_in_context, gold_value_in_citation, match_status) of a valid,
        non-null gold value. Only STRING, INTEGER and FLOAT are searched for and get a status; the
        first rule that holds gives it: missing_prediction, exact_match, near_match (STRING), bad
        source, good source. Without a context the gold cannot have been found in it: a mismatch is a
        bad-source error (its source cell stays blank)."""
        is_correct: bool | None = None
        if value is not None:
            if plan.is_float:
                is_correct = math.isclose(gold, value, rel_tol=plan.tolerance, abs_tol=0.0)
            else:
                is_correct = bool(gold == value)
        kind = plan.kind
        if kind == _KIND_STRING:
            needle = self.needles.get(gold)
            if needle is None:
                needle = self.needles[gold] = normalise_for_search(gold)
            in_context = None if side.without_context else side.context.contains_string(needle)
        elif kind == _KIND_NUMBER:
            in_context = (
                None if side.without_context else side.context.contains_number(float(gold), plan.tolerance)
            )
        else:
            return is_correct, None, None, None
        key = (kind, plan.tolerance, gold, citation_texts)
        in_citation = self.in_citation.get(key)
        if in_citation is None:
            if kind == _KIND_STRING:
                in_citation = bool(citation_texts) and _string_in_citation(
                    needle, citation_texts, self.threshold
                )
            else:
                in_citation = any(
                    number_in(float(gold), read_numbers(text, self.number_format), plan.tolerance)
                    for text in citation_texts
                )
            self.in_citation[key] = in_citation
        if value is None:
            status = MatchStatus.MISSING_PREDICTION
        elif is_correct:
            status = MatchStatus.EXACT_MATCH
        elif kind == _KIND_STRING and string_similarity(gold, value) >= self.threshold:
            status = MatchStatus.NEAR_MATCH
        elif not in_context:
            status = MatchStatus.EXTRACTION_ERROR_BAD_SOURCE
        else:
            status = MatchStatus.EXTRACTION_ERROR_GOOD_SOURCE
        return is_correct, in_context, in_citation, status

    def verbatim_pct(self, side: _DocumentSide, snippet: str) -> float:
        """The verbatim score of a snippet (not empty) in the document's context, which there is; a
        score that needs `partial_ratio` is left to `fuzzy`, and stands as -1 - its position there
        until the end. Kept in the side's `verbatim_scores`."""
        collapsed_snippet = self.collapsed_snippets.get(snippet)
        if collapsed_snippet is None:
            collapsed_snippet = self.collapsed_snippets[snippet] = collapse_whitespace(snippet)
        collapsed_context = side.context.collapsed
        pct = settled_pct_of_collapsed(collapsed_snippet, collapsed_context)
        if pct is None:
            pct = -1.0 - self.fuzzy.add(collapsed_snippet, collapsed_context)
        side.verbatim_scores[snippet] = pct
        return pct

    def add_rows(
        self,
        plans: Sequence[_AttributePlan],
        schema_ids: set[str],
        gold_documents: Sequence[GoldDocument],
        predictions: Mapping[str, PredictionDocument],
    ) -> None:
        """The rows of documents that all have gold, each checked in the order of docs/semantics.md
        section 2."""
        run_id, rows, waiting = self.run_id, self.rows, self.waiting
        for document in gold_documents:
            document_id = document.document_id
            gold_annotations = document.annotations
            side = _DocumentSide(
                predictions.get(document_id), schema_ids, self.unknown_predicted, self.number_format
            )
            for plan in plans:
                attribute_id = plan.attribute_id
                annotation: GoldAnnotation | None = gold_annotations.get(attribute_id)
                gold_is_valid, gold = self.gold_value(plan, annotation, document_id)
                value, reasoning, verbatim_text = self.predicted_value(plan, side, document_id)
                human_additional_text = None if annotation is None else annotation.additional_text
                citation = NO_CITATION if annotation is None else self.citation(annotation)
                if not gold_is_valid:
                    # Every type, BOOL included: an unscored row must say why it is unscored.
                    is_correct, in_context, in_citation = None, None, None
                    status: MatchStatus | None = MatchStatus.INVALID_GOLD
                elif gold is None:
                    # (A null gold, from a null missing default, is left out: no checks, no status.)
                    is_correct, in_context, in_citation, status = None, None, None, None
                else:
                    texts = citation.highlights
                    if human_additional_text:
                        texts = (human_additional_text, *texts)
                    is_correct, in_context, in_citation, status = self.source_checks(
                        plan, side, gold, value, texts
                    )
                # Without a context: no verbatim scores; without a snippet: 0. A snippet scored
                # already for the document is not scored again.
                if side.without_context:
                    human_pct = llm_pct = None
                else:
                    scored = side.verbatim_scores
                    human_pct = scored.get(human_additional_text) if human_additional_text else 0.0
                    if human_pct is None:
                        human_pct = self.verbatim_pct(side, human_additional_text)
                    llm_pct = scored.get(verbatim_text) if verbatim_text else 0.0
                    if llm_pct is None:
                        llm_pct = self.verbatim_pct(side, verbatim_text)
                row = ComparisonRow(
                    document_id,
                    document.external_id,
                    document.name,
                    attribute_id,
                    plan.label,
                    plan.type,
                    run_id,
                    annotation is not None,
                    human_additional_text,
                    citation.raw_details,
                    citation.page,
                    citation.highlight_text,
                    gold,
                    value,
                    reasoning,
                    verbatim_text,
                    human_pct,
                    llm_pct,
                    in_citation,
                    in_context,
                    status,
                    gold_is_valid,
                    is_correct,
                )
                rows.append(row)
                if human_pct is not None and (human_pct < 0.0 or llm_pct < 0.0):
                    waiting.append(row)


def documents_without_context(
    gold_documents: Sequence[GoldDocument], predictions: Mapping[str, PredictionDocument]
) -> list[str]:
    """Gold documents, in order, whose prediction was extracted (status ok) with no context."""
    without = []
    for document in gold_documents:
        prediction = predictions.get(document.document_id)
        if prediction is not None and prediction.status == "ok" and prediction.context is None:
            without.append(document.document_id)
    return without


def check_schema(attributes: Sequence[AttributeSpec]) -> None:
    """ValueError when an attribute id appears more than once in the schema."""
    counts = Counter(spec.attribute_id for spec in attributes)
    repeated = sorted(attribute_id for attribute_id, count in counts.items() if count > 1)
    if repeated:
        raise ValueError(f"attribute ids appear more than once in the schema: {', '.join(repeated)}")


def unknown_attribute_warnings(unknown_predicted: Mapping[str, int]) -> list[str]:
    return [
        f"predicted attribute {attribute_id!r} is not in the schema; "
        f"{unknown_predicted[attribute_id]} value(s) ignored"
        for attribute_id in sorted(unknown_predicted)
    ]


def compare_document_slice(
    *,
    run_id: str,
    attributes: Sequence[AttributeSpec],
    gold_documents: Sequence[GoldDocument],
    predictions: Mapping[str, PredictionDocument],
    settings: EvaluationSettings,
) -> tuple[list[ComparisonRow], list[str], dict[str, int], list[str]]:
    """Rows for one slice of a run's gold documents, in gold-document order then attribute order,
    their warnings, the counts of predicted values outside the schema per attribute id, to be added
    to the other slices' before they are worded (`unknown_attribute_warnings`), and the documents
    without gold, in order.

    Only attributes with a prompt get rows; a document with no gold for any schema attribute gets none:
    an EPPI reference with no codes is listed as unscored, not scored as all-defaults. `predictions`
    is keyed by document id; only its lookups matter, so its order never changes a result.
    """
    validate_settings(settings)
    check_schema(attributes)
    schema_ids = {spec.attribute_id for spec in attributes}
    documents, unscored = [], []
    seen: set[str] = set()
    for document in gold_documents:
        if document.document_id in seen:
            raise ValueError(f"gold document {document.document_id!r} appears twice")
        seen.add(document.document_id)
        if document.annotations.keys().isdisjoint(schema_ids):
            unscored.append(document.document_id)
        else:
            documents.append(document)
    comparison = _Comparison(run_id, settings, FuzzyScores())
    plans = [_AttributePlan(spec, settings, comparison.coercions) for spec in attributes if spec.is_scored]
    try:
        comparison.add_rows(plans, schema_ids, documents, predictions)
        scores = comparison.fuzzy.scores() if comparison.waiting else []
    finally:
        comparison.fuzzy.close()
    for row in comparison.waiting:
        # A negative score stands for the fuzzy score at position -1 - score.
        if row.human_verbatim_fuzzy_match_pct < 0.0:
            row.human_verbatim_fuzzy_match_pct = scores[int(-1.0 - row.human_verbatim_fuzzy_match_pct)]
        if row.llm_verbatim_fuzzy_match_pct < 0.0:
            row.llm_verbatim_fuzzy_match_pct = scores[int(-1.0 - row.llm_verbatim_fuzzy_match_pct)]
    return comparison.rows, comparison.warnings, comparison.unknown_predicted, unscored
