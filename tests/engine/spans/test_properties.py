"""Properties of the span engine, checked on random corpora (hypothesis).

Every per-document count, of the batch scorer and of the reference scorer (`oracle`), equals a
brute-force count over sets of code points; exact never beats
overlap; results do not depend on the order of documents or spans, nor on how documents were split
into chunks (or processes) before aggregation.
"""

from __future__ import annotations

import pickle
import random
import re
from itertools import chain

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.spans.aggregate import aggregate
from metrics.engine.spans.code_point_line import LEFT_OUT_CHARACTERS
from metrics.engine.spans.score import COUNT_FIELDS, expand_counts
from metrics.engine.spans.types import DocumentSpans, Span
from metrics.pipeline.spans import SpanPartial, merge_span_partials
from tests.engine.spans.oracle import document_count_table, score_document
from tests.engine.spans.oracle.code_point_ranges import TOKEN_PATTERN, span_tokens
from tests.engine.spans.results import evaluate_documents, score_span_batches

TYPES = ("NAME", "DATE", "ID")
# Latin-1 letters, digits, left-out characters, an underscore and two code points outside Latin-1
# (the engine counts those texts by another path).
ALPHABET = "ab1ä ,.-_\n\t€🙂"


@st.composite
def documents(
    draw: st.DrawFn, document_id: str = "d", max_length: int = 40, max_spans: int = 6
) -> DocumentSpans:
    text = draw(st.text(alphabet=ALPHABET, max_size=max_length))

    def spans() -> list[Span]:
        if not text:
            return []
        found = []
        for _ in range(draw(st.integers(0, max_spans))):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start + 1, len(text)))
            found.append(Span(start, end, draw(st.sampled_from(TYPES))))
        return found

    return DocumentSpans(document_id, text, spans(), spans())


@st.composite
def corpora(draw: st.DrawFn, max_documents: int = 4, **options) -> list[DocumentSpans]:
    n = draw(st.integers(1, max_documents))
    return [draw(documents(document_id=f"doc-{i}", **options)) for i in range(n)]


def brute_force_counts(doc: DocumentSpans) -> dict[str, int]:
    """The definitions of docs/semantics.md section 1, one code point at a time."""
    text = doc.text
    left_out = {i for i, c in enumerate(text) if c in LEFT_OUT_CHARACTERS}

    def covered(spans) -> set[int]:
        return set(chain.from_iterable(range(s.start, s.end) for s in spans))

    def tokens(spans, typed: bool) -> set[tuple]:
        found = set()
        for s in spans:
            for match in re.finditer(r"[^\W_]+", text[s.start : s.end]):
                bounds = (s.start + match.start(), s.start + match.end())
                found.add((*bounds, s.entity_type) if typed else bounds)
        return found

    def overlaps(a: Span, b: Span) -> bool:
        return a.start < b.end and b.start < a.end

    gold, predicted = covered(doc.gold), covered(doc.predicted)
    counts = {
        "chars.all.tp": len(gold & predicted),
        "chars.all.fp": len(predicted - gold),
        "chars.all.fn": len(gold - predicted),
        "chars.all.tn": len(text) - len(gold | predicted),
        "chars.scored.tp": len((gold & predicted) - left_out),
        "chars.scored.fp": len(predicted - gold - left_out),
        "chars.scored.fn": len(gold - predicted - left_out),
        "chars.scored.tn": len(text) - len(left_out) - len((gold | predicted) - left_out),
        "chars_typed.tp": 0,
        "chars_typed.fp": 0,
        "chars_typed.fn": 0,
    }
    for entity_type in TYPES:
        type_gold = covered(s for s in doc.gold if s.entity_type == entity_type)
        type_predicted = covered(s for s in doc.predicted if s.entity_type == entity_type)
        counts["chars_typed.tp"] += len(type_gold & type_predicted)
        counts["chars_typed.fp"] += len(type_predicted - type_gold)
        counts["chars_typed.fn"] += len(type_gold - type_predicted)
    for variant, typed in (("binary", False), ("typed", True)):
        gold_tokens, predicted_tokens = tokens(doc.gold, typed), tokens(doc.predicted, typed)
        counts[f"tokens.{variant}.tp"] = len(gold_tokens & predicted_tokens)
        counts[f"tokens.{variant}.fp"] = len(predicted_tokens - gold_tokens)
        counts[f"tokens.{variant}.fn"] = len(gold_tokens - predicted_tokens)
    matchers = {
        "spans_exact.type_agnostic": lambda g, p: (g.start, g.end) == (p.start, p.end),
        "spans_exact.typed": lambda g, p: g == p,
        "spans_overlap.type_agnostic": overlaps,
        "spans_overlap.typed": lambda g, p: overlaps(g, p) and g.entity_type == p.entity_type,
    }
    for family, match in matchers.items():
        counts[f"{family}.gt_total"] = len(doc.gold)
        counts[f"{family}.gt_matched"] = sum(any(match(g, p) for p in doc.predicted) for g in doc.gold)
        counts[f"{family}.pred_total"] = len(doc.predicted)
        counts[f"{family}.pred_matched"] = sum(any(match(g, p) for g in doc.gold) for p in doc.predicted)
    missed = [g for g in doc.gold if not any(overlaps(g, p) for p in doc.predicted)]
    leaks = {
        "any_char": [g for g in doc.gold if covered([g]) - predicted],
        "any_char_scored": [g for g in doc.gold if covered([g]) - predicted - left_out],
        "entity_missed": missed,
    }
    for condition, spans in leaks.items():
        counts[f"leakage.{condition}.gold_spans_affected"] = len(spans)
    counts["leakage.any_char.leaked_characters"] = len(gold - predicted)
    counts["leakage.any_char_scored.leaked_characters"] = len(gold - predicted - left_out)
    counts["leakage.entity_missed.leaked_characters"] = len(covered(missed))
    counts["document.gold_spans"] = len(doc.gold)
    counts["document.predicted_spans"] = len(doc.predicted)
    counts["document.characters"] = len(text)
    counts["document.restricted_predictions_dropped"] = 0
    return counts


def batch_counts(doc: DocumentSpans) -> dict[str, int]:
    columns = expand_counts(score_span_batches([doc]).counts)
    return {name: int(columns[name][0]) for name in COUNT_FIELDS if not name.startswith("nervaluate.")}


def reference_counts(doc: DocumentSpans) -> dict[str, int]:
    table = document_count_table([score_document(doc)])
    return {name: int(table[name][0]) for name in COUNT_FIELDS if not name.startswith("nervaluate.")}


@settings(max_examples=200, deadline=None)
@given(documents())
def test_every_count_equals_its_brute_force_definition(doc: DocumentSpans):
    assert batch_counts(doc) == brute_force_counts(doc)
    assert reference_counts(doc) == brute_force_counts(doc)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET + "xyz09", min_size=1, max_size=20), st.data())
def test_span_tokens_are_the_regex_runs_inside_the_span(text: str, data: st.DataObject):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    expected = [(start + m.start(), start + m.end()) for m in TOKEN_PATTERN.finditer(text[start:end])]
    assert list(span_tokens(text, start, end)) == expected


@settings(max_examples=100, deadline=None)
@given(corpora())
def test_exact_matches_never_exceed_overlap_matches_and_typed_spans_never_exceed_type_agnostic(docs):
    micro = evaluate_documents(docs)["micro"]
    for side in ("gt_matched", "pred_matched"):
        for variant in ("type_agnostic", "typed"):
            assert micro["spans_exact"][variant][side] <= micro["spans_overlap"][variant][side]
        for family in ("spans_exact", "spans_overlap"):
            assert micro[family]["typed"][side] <= micro[family]["type_agnostic"][side]


@settings(max_examples=100, deadline=None)
@given(corpora(), st.randoms(use_true_random=False))
def test_results_do_not_depend_on_the_order_of_documents_or_spans(docs, rng: random.Random):
    shuffled = []
    for doc in docs:
        gold, predicted = list(doc.gold), list(doc.predicted)
        rng.shuffle(gold)
        rng.shuffle(predicted)
        shuffled.append(DocumentSpans(doc.document_id, doc.text, gold, predicted))
    rng.shuffle(shuffled)
    assert evaluate_documents(shuffled, include_sensitive_text=True) == evaluate_documents(
        docs, include_sensitive_text=True
    )


@settings(max_examples=100, deadline=None)
@given(corpora(max_documents=8), st.lists(st.integers(0, 8), max_size=3), st.booleans())
def test_scores_of_chunks_aggregate_to_the_result_of_the_whole(docs, cuts, restrict):
    allowed = frozenset(s.entity_type for doc in docs for s in doc.gold) if restrict else None
    bounds = [0, *sorted(min(cut, len(docs)) for cut in cuts), len(docs)]
    # Each chunk's scores travel as a pickle, as they would from a worker process, and arrive last first.
    shipped = [
        SpanPartial(
            np.arange(a, b),
            pickle.loads(pickle.dumps(score_span_batches(docs[a:b], allowed_predicted_types=allowed))),
        )
        for a, b in reversed(list(zip(bounds, bounds[1:], strict=False)))
    ]
    merged = aggregate(merge_span_partials(shipped, len(docs))[0], include_sensitive_text=True)
    assert merged == evaluate_documents(docs, restrict_to_gt_types=restrict, include_sensitive_text=True)


def test_the_count_table_has_one_row_per_document_sorted_by_id():
    docs = [
        DocumentSpans("b", "Anna Max", [Span(0, 4, "NAME")], [Span(0, 4, "NAME"), Span(5, 8, "ID")]),
        DocumentSpans("a", "Anna Max", [Span(5, 8, "NAME")], []),
    ]
    table = document_count_table(score_document(doc) for doc in docs)
    assert table["document_id"].tolist() == ["a", "b"]
    assert table["chars.all.tp"].tolist() == [0, 4]
    assert table["chars.all.fn"].tolist() == [3, 0]
    assert table["chars_typed.NAME.tp"].tolist() == [0, 4]
    assert table["chars_typed.ID.fp"].tolist() == [0, 3]
    assert table["nervaluate.strict.missed"].tolist() == [1, 0]
    assert table["nervaluate.partial.spurious"].tolist() == [0, 1]
    assert table["spans_overlap.type_agnostic.gt_total"].tolist() == [1, 1]
    assert table["leakage.entity_missed.leaked"].tolist() == [True, False]
