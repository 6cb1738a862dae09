"""The attribute engine's fast paths against their reference forms.

`compare_documents` (one flat loop with hoisted lookups and caches) against the row builder it
replaced, kept below verbatim as `reference_compare_documents`. (Chunks scored by a process pool
against one process: tests/pipeline/test_extraction_evaluation.py.)

Inputs are random but cover what changes the path a row takes: invalid and null gold, absent
attributes (type defaults, a null and a list default), failed documents and documents without a
line, duplicate, invalid, null and unknown predicted attributes, citations with several details,
numbers with thousands separators, near and exact matches, snippets long and short.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from metrics.engine.attributes.citations import NO_CITATION, Citation, parse_citation
from metrics.engine.attributes.coercion import CoercionError, coerce_value
from metrics.engine.attributes.comparison import (
    NO_ANNOTATION,
    NO_PREDICTION_DOCUMENT,
    NULL_PREDICTION,
    SOURCE_CHECKED_TYPES,
    group_by_attribute,
    raw_text,
    string_similarity,
    validate_settings,
    with_model_reasoning,
)
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
    FullTextDetail,
    GoldAnnotation,
    GoldDocument,
    MatchStatus,
    PredictedAnnotation,
    PredictionDocument,
)
from tests.engine.attributes.test_support import compare_documents, verbatim_fuzzy_pct

# --- the reference: the row builder as it was before the flat loop (unchanged) -----------------


def values_equal(attribute_type: AttributeType, gold: Any, predicted: Any, relative_tolerance: float) -> bool:
    """Exact equality; FLOAT within `relative_tolerance` (math.isclose, no absolute slack)."""
    if attribute_type is AttributeType.FLOAT:
        return math.isclose(gold, predicted, rel_tol=relative_tolerance, abs_tol=0.0)
    return bool(gold == predicted)


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
            self.predicted = group_by_attribute(prediction.annotations)

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
            return None, with_model_reasoning(reason, annotation.reasoning), annotation.additional_text
        if value is None:
            return (
                None,
                with_model_reasoning(NULL_PREDICTION, annotation.reasoning),
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
        return any(number_in(value, read_numbers(text, number_format), tolerance) for text in texts)

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
            gold = raw_text(raw_gold)
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


def reference_compare_documents(
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
        if not any(spec.attribute_id in document.annotations for spec in attributes):
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


# --- random inputs ----------------------------------------------------------------------------

SCHEMA = [
    AttributeSpec("b1", "Randomised", AttributeType.BOOL, prompt="Randomised?"),
    AttributeSpec("b2", "Blinded", AttributeType.BOOL, prompt="Blinded?", missing_default=None),
    AttributeSpec("s1", "Country", AttributeType.STRING, prompt="Country?"),
    AttributeSpec("s2", "Outcome", AttributeType.STRING, prompt="Outcome?", missing_default="none"),
    AttributeSpec("i1", "Participants", AttributeType.INTEGER, prompt="How many?"),
    AttributeSpec("f1", "Mean age", AttributeType.FLOAT, prompt="Mean age?"),
    AttributeSpec("l1", "Arms", AttributeType.LIST, prompt="Arms?"),
    AttributeSpec("n1", "Notes", AttributeType.STRING),  # no prompt: not scored
]
WORDS = [
    "the",
    "trial",
    "in",
    "Kenya",
    "Uganda",
    "Viet",
    "Nam",
    "enrolled",
    "adults",
    "school",
    "attendance",
    "child",
    "mortality",
    "was",
]
STRINGS = ["Kenya", "Viet Nam", "viet  nam", "Uganda", "school attendance", "School Attendence", "male", ""]


def _number_text(value: int | float, rng: random.Random) -> str:
    if isinstance(value, int) and value >= 1000 and rng.random() < 0.5:
        return f"{value:,}"
    return str(value)


def random_inputs(
    rng: random.Random, n_documents: int
) -> tuple[list[GoldDocument], dict[str, PredictionDocument]]:
    documents = []
    predictions = {}
    for index in range(n_documents):
        document_id = f"d{index}"
        truth = _random_truth(rng)
        context = _random_context(rng, truth)
        annotations = _random_gold(rng, truth)
        if rng.random() < 0.05:
            annotations = {}  # no gold at all: listed, not scored
        documents.append(
            GoldDocument(document_id=document_id, name=f"Paper {index}", annotations=annotations)
        )
        roll = rng.random()
        if roll < 0.05:
            continue  # no line
        predictions[document_id] = PredictionDocument(
            document_id=document_id,
            context=context,
            status="failed" if roll < 0.08 else "ok",
            error="timeout" if roll < 0.07 else None,
            annotations=_random_predicted(rng, truth, context),
        )
    return documents, predictions


def _random_truth(rng: random.Random) -> dict[str, Any]:
    return {
        "b1": rng.random() < 0.5,
        "b2": rng.random() < 0.5,
        "s1": rng.choice(STRINGS),
        "s2": rng.choice(STRINGS),
        "i1": rng.choice([0, 7, 12, 1250, 12000, 25000]),
        "f1": rng.choice([0.0, 54.3, 1250.5, 0.125]),
        "l1": ["a", "b"],
        "n1": "free text",
    }


def _random_context(rng: random.Random, truth: dict[str, Any]) -> str:
    context_facts = [
        f"The trial took place in {truth['s1']}.",
        f"We enrolled {_number_text(truth['i1'], rng)} adults.",
        f"Mean age {truth['f1']} years.",
        "Allocation was randomised." if truth["b1"] else "",
    ]
    return " ".join(
        [*rng.sample(context_facts, k=rng.randint(0, len(context_facts))), *rng.choices(WORDS, k=30)]
    )


def _random_gold(rng: random.Random, truth: dict[str, Any]) -> dict[str, GoldAnnotation]:
    """Gold of every schema attribute, some absent, as raw values of every form (valid or not)."""
    annotations: dict[str, GoldAnnotation] = {}
    for spec in SCHEMA:
        if rng.random() < 0.15:
            continue  # absent: the missing default
        value = truth[spec.attribute_id]
        if spec.type is AttributeType.BOOL:
            raw: Any = rng.choice([value, "yes" if value else "no", "maybe"])
        elif spec.type in (AttributeType.INTEGER, AttributeType.FLOAT):
            raw = rng.choice([_number_text(value, rng), value, "see table 2", None])
        elif spec.type is AttributeType.LIST:
            raw = rng.choice([value, "not a list"])
        else:
            raw = rng.choice([value, None, 12])
        text = raw if isinstance(raw, str) else None
        details = tuple(
            FullTextDetail(
                text=rng.choice(
                    [
                        f'Page {rng.randint(1, 3)}:\n[¬s]"{text or value}"[¬e]',
                        f"[¬s]{rng.choice(WORDS)} {text or value}",
                        f"Page 2: {rng.choice(STRINGS)}",
                    ]
                )
            )
            for _ in range(rng.choice([0, 1, 1, 2]))
        )
        annotations[spec.attribute_id] = GoldAnnotation(
            output_data=raw,
            additional_text=rng.choice([text, None, str(value)]),
            full_text_details=details,
        )
    return annotations


def _random_predicted(
    rng: random.Random, truth: dict[str, Any], context: str
) -> tuple[PredictedAnnotation, ...]:
    """Predictions of the schema and of one attribute outside it: some left out, some duplicated."""
    predicted = []
    for spec in [*SCHEMA, AttributeSpec("x9", "Unknown", AttributeType.STRING, prompt="?")]:
        if rng.random() < 0.1:
            continue
        value = truth.get(spec.attribute_id, "x")
        output = rng.choice([value, value, "not reported", None, str(value).upper(), 3, True])
        snippet = rng.choice([None, str(value), context[:40], "12", rng.choice(STRINGS)])
        predicted.append(
            PredictedAnnotation(spec.attribute_id, output, snippet, rng.choice([None, "because"]))
        )
        if rng.random() < 0.03:
            predicted.append(PredictedAnnotation(spec.attribute_id, output))
    return tuple(predicted)


SETTINGS = [
    EvaluationSettings(),
    EvaluationSettings(edit_distance_match_threshold=0.5, number_format="de", float_relative_tolerance=0.01),
]


@pytest.mark.parametrize("seed", range(6))
def test_the_flat_loop_gives_the_reference_rows_and_warnings(seed):
    rng = random.Random(seed)
    documents, predictions = random_inputs(rng, 150)
    settings = SETTINGS[seed % len(SETTINGS)]
    expected = reference_compare_documents(
        run_id="r", attributes=SCHEMA, gold_documents=documents, predictions=predictions, settings=settings
    )
    actual = compare_documents(
        run_id="r", attributes=SCHEMA, gold_documents=documents, predictions=predictions, settings=settings
    )
    assert actual[1] == expected[1]
    assert len(actual[0]) == len(expected[0])
    for row, reference in zip(actual[0], expected[0], strict=True):
        assert row == reference
        assert type(row.human_extraction) is type(reference.human_extraction)
        assert type(row.llm_extraction) is type(reference.llm_extraction)


WHITESPACE_PIECES = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x85",
    "\xa0",
]
TEXT_PIECES = ["a", "B", "Kenya", "ß", "İ", "é", "12,5", ".", *WHITESPACE_PIECES]


@pytest.mark.parametrize("seed", range(3))
def test_whitespace_collapsing_fast_path_equals_split_and_join(seed):
    rng = random.Random(seed)
    for _ in range(5_000):
        # Short texts and long ones (the fast path is taken above 100 characters).
        text = "".join(rng.choices(TEXT_PIECES, k=rng.choice([rng.randint(0, 12), rng.randint(60, 120)])))
        assert collapse_whitespace(text) == " ".join(text.split())
        assert normalise_for_search(text) == " ".join(text.casefold().split())
        # Long runs of words and single spaces (the fast path), now and then with one odd piece.
        words = " ".join(rng.choices(["Kenya", "trial", "12,5", "ß", "İ", "a.b"], k=rng.randint(10, 40)))
        if rng.random() < 0.5:
            position = rng.randint(0, len(words))
            words = words[:position] + rng.choice(TEXT_PIECES) + words[position:]
        assert collapse_whitespace(words) == " ".join(words.split())
        assert normalise_for_search(words) == " ".join(words.casefold().split())
