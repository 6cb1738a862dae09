"""Counts of one document for every span metric family (docs/semantics.md section 1), the reference.

`score_document` turns one `DocumentSpans` into a `DocumentScore`: the batch scorer's counts, by
another route (see the package docstring).
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter, itemgetter, lt

from metrics.engine.spans.nervaluate_counts import nervaluate_typed
from metrics.engine.spans.score import CONDITIONS_OF_LEAK_CODE
from metrics.engine.spans.types import DocumentSpans, Span
from tests.engine.spans.oracle.code_point_ranges import (
    CodePointRanges,
    LeftOutCounter,
    covered_length,
    covers,
    merge_ranges,
    overlaps_any,
    span_tokens,
    total_length,
    uncovered_part,
    union_length,
)
from tests.engine.spans.oracle.document_score import DocumentScore, LeakedSpan

_START = itemgetter(0)
_END = itemgetter(1)
_BOUNDS = itemgetter(0, 1)
_AS_TUPLE = attrgetter("start", "end", "entity_type")
_FIRST_THREE = itemgetter(slice(0, 3))


def sufficient_overlaps(gold: Sequence[tuple], predicted: Sequence[tuple]) -> list[list[int]]:
    """Per prediction, the gold spans it overlaps sufficiently, in list order: nervaluate 1.2.1's
    `(overlap_span / true_span) * 100.0 >= min_overlap_percentage` at its default of 1.0."""
    return [
        [
            k
            for k, (gold_start, gold_end, *_) in enumerate(gold)
            if gold_start < end
            and gold_end > start
            and ((min(end, gold_end) - max(start, gold_start)) / (gold_end - gold_start)) * 100.0 >= 1.0
        ]
        for start, end, *_ in predicted
    ]


def _check_bounds(document_id: str, n_chars: int, spans: list[tuple[int, int, str]], side: str) -> None:
    """Raise ValueError unless 0 <= start < end <= n_chars for every span (sorted by start)."""
    if not spans:
        return
    # All in C for the usual case of valid spans; the loop only runs to name the culprit.
    if (
        spans[0][0] >= 0
        and max(map(_END, spans)) <= n_chars
        and all(map(lt, map(_START, spans), map(_END, spans)))
    ):
        return
    for start, end, entity_type in spans:
        if not 0 <= start < end <= n_chars:
            raise ValueError(
                f"document {document_id!r}: {side} span [{start}, {end}) of type {entity_type!r} is empty "
                f"or outside the text of {n_chars} code points"
            )


def _covered_length(intervals: CodePointRanges, covering: CodePointRanges) -> int:
    """Code points of the interval set inside the covering interval set."""
    return sum([covered_length(covering, start, end) for start, end in zip(*intervals, strict=True)])


def _gold_hits_overlapping(spans: list[tuple[int, int]], intervals: CodePointRanges) -> int:
    """How many of the spans share a code point with the interval set."""
    hits = 0
    for start, end in spans:
        if overlaps_any(intervals, start, end):
            hits += 1
    return hits


def _one_against_one(
    gold: tuple[int, int],
    predicted: tuple[int, int],
    predicted_union: CodePointRanges,
    leaks: tuple[int, int, int],
    tokens_of: dict[tuple[int, int], tuple[tuple[int, int], ...]],
    gold_tokens: set[tuple[int, int]],
    predicted_tokens: set[tuple[int, int]],
) -> tuple[int, ...]:
    """_type_row for the commonest case, one gold span and one prediction of the type, without the
    general machinery: the same definitions worked out for two spans."""
    gold_tokens_here = tokens_of[gold]
    predicted_tokens_here = tokens_of[predicted]
    gold_tokens.update(gold_tokens_here)
    predicted_tokens.update(predicted_tokens_here)
    # A span's tokens are distinct, so list lengths are set sizes.
    token_tp = len(set(gold_tokens_here).intersection(predicted_tokens_here))
    gold_start, gold_end = gold
    predicted_start, predicted_end = predicted
    overlap = min(gold_end, predicted_end) - max(gold_start, predicted_start)
    both = overlap if overlap > 0 else 0
    hit = 1 if overlap > 0 else 0
    exact = 1 if gold == predicted else 0
    # nervaluate with one gold span: the prediction is COR (equal bounds) or INC under exact, and COR
    # under ent_type, when it overlaps the gold span sufficiently; else both are SPU and MIS.
    sufficient = overlap > 0 and (overlap / (gold_end - gold_start)) * 100.0 >= 1.0
    return (
        1, 1, both, predicted_end - predicted_start - both, gold_end - gold_start - both,
        covered_length(predicted_union, gold_start, gold_end),
        token_tp, len(predicted_tokens_here) - token_tp, len(gold_tokens_here) - token_tp,
        exact, exact, hit, hit,
        exact if sufficient else 0, (1 - exact) if sufficient else 0, 1 if sufficient else 0,
        *leaks,
    )  # fmt: skip


def _type_row(
    type_gold: list[tuple[int, int]],
    type_predicted: list[tuple[int, int]],
    predicted_union: CodePointRanges,
    leaks: tuple[int, int, int],
    tokens_of: dict[tuple[int, int], tuple[tuple[int, int], ...]],
    gold_tokens: set[tuple[int, int]],
    predicted_tokens: set[tuple[int, int]],
) -> tuple[int, ...]:
    """One type's TYPE_STORED_FIELDS; adds its tokens to the document's gold and predicted token sets."""
    n_gold = len(type_gold)
    n_predicted = len(type_predicted)
    if n_gold == 1 and n_predicted == 1:
        return _one_against_one(
            type_gold[0], type_predicted[0], predicted_union, leaks, tokens_of, gold_tokens, predicted_tokens
        )
    type_gold_tokens = set().union(*map(tokens_of.__getitem__, type_gold))
    gold_tokens |= type_gold_tokens
    if type_gold == type_predicted:
        # The common case of a type predicted perfectly: everything matches, nothing to search.
        predicted_tokens |= type_gold_tokens
        gold_len = total_length(merge_ranges(type_gold))
        n_tokens = len(type_gold_tokens)
        return (
            n_gold, n_predicted, gold_len, 0, 0, gold_len, n_tokens, 0, 0,
            n_gold, n_predicted, n_gold, n_predicted, n_gold, 0, n_gold, *leaks,
        )  # fmt: skip
    if not n_predicted:
        # Gold only: everything is missed, but other types' predictions may still cover it.
        gold_union = merge_ranges(type_gold)
        gold_len = total_length(gold_union)
        covered_by_any = _covered_length(gold_union, predicted_union)
        return (
            n_gold, 0, 0, 0, gold_len, covered_by_any, 0, 0, len(type_gold_tokens),
            0, 0, 0, 0, 0, 0, 0, *leaks,
        )  # fmt: skip
    type_predicted_tokens = set().union(*map(tokens_of.__getitem__, type_predicted))
    predicted_tokens |= type_predicted_tokens
    if not n_gold:
        # Predictions only: everything is spurious.
        predicted_len = total_length(merge_ranges(type_predicted))
        return (
            0, n_predicted, 0, predicted_len, 0, 0, 0, len(type_predicted_tokens), 0,
            0, 0, 0, 0, 0, 0, 0, *leaks,
        )  # fmt: skip
    token_tp = len(type_gold_tokens & type_predicted_tokens)
    gold_union = merge_ranges(type_gold)
    type_predicted_union = merge_ranges(type_predicted)
    gold_len = total_length(gold_union)
    predicted_len = total_length(type_predicted_union)
    both_len = gold_len + predicted_len - union_length(type_gold, type_predicted)
    covered_by_any = _covered_length(gold_union, predicted_union)
    predicted_set = set(type_predicted)
    gold_set = set(type_gold)
    # One type's spans alone: its strict is its exact, and its ent_type finds no INC.
    _, exact, ent_type = nervaluate_typed(
        [(*g, 0) for g in type_gold],
        [(*p, 0) for p in type_predicted],
        sufficient_overlaps(type_gold, type_predicted),
    )
    return (
        n_gold, n_predicted, both_len, predicted_len - both_len, gold_len - both_len, covered_by_any,
        token_tp, len(type_predicted_tokens) - token_tp, len(type_gold_tokens) - token_tp,
        sum(map(predicted_set.__contains__, type_gold)),
        sum(map(gold_set.__contains__, type_predicted)),
        _gold_hits_overlapping(type_gold, type_predicted_union),
        _gold_hits_overlapping(type_predicted, gold_union),
        exact[0], exact[1], ent_type[0], *leaks,
    )  # fmt: skip


# Positions in a TYPE_STORED_FIELDS row of the counts that add up to the document's typed families:
# chars_typed tp fp fn, tokens tp fp fn, spans_exact and spans_overlap gt_matched and pred_matched.
_TYPED_SUMS = (2, 3, 4, 6, 7, 8, 9, 10, 11, 12)


def score_document(
    doc: DocumentSpans, *, allowed_predicted_types: frozenset[str] | None = None
) -> DocumentScore:
    """Count every metric family of docs/semantics.md section 1 for one document.

    Predictions whose type is not in `allowed_predicted_types` (when given; restrict_to_gt_types)
    are dropped before scoring and counted. Spans must satisfy 0 <= start < end <= len(text), else
    ValueError names the document and the span. Gold and predictions are sorted by
    (start, end, entity_type) first, so the result does not depend on their order.
    """
    return score_span_tuples(
        doc.document_id,
        doc.text,
        _span_tuples(doc.gold),
        _span_tuples(doc.predicted),
        allowed_predicted_types=allowed_predicted_types,
    )


def _span_tuples(spans: Sequence[Span]) -> list[tuple[int, int, str]]:
    """(start, end, entity_type) of each span. The importers hand over named tuples whose first three
    fields are these (`SpanAnnotation`): one C slice each, instead of three attribute reads."""
    if spans and all(type(span) is not Span and isinstance(span, tuple) for span in spans):
        return list(map(_FIRST_THREE, spans))
    return list(map(_AS_TUPLE, spans))


def score_span_tuples(
    document_id: str,
    text: str,
    gold: list[tuple[int, int, str]],
    predicted: list[tuple[int, int, str]],
    *,
    allowed_predicted_types: frozenset[str] | None = None,
) -> DocumentScore:
    """`score_document` on spans given as (start, end, entity_type) tuples (the lists are not kept).

    Tuples pickle in C, so this is the form in which documents travel to worker processes.
    """
    n_chars = len(text)
    gold = sorted(gold)
    predicted, dropped = _restricted(predicted, allowed_predicted_types)
    _check_bounds(document_id, n_chars, gold, "gold")
    _check_bounds(document_id, n_chars, predicted, "predicted")
    chars = _Characters(text, gold, predicted)
    leaks = _Leaks(text, gold, chars.predicted_union, chars.left_out)

    gold_pairs = list(map(_BOUNDS, gold))
    predicted_pairs = list(map(_BOUNDS, predicted))
    gold_bounds = set(gold_pairs)
    predicted_bounds = set(predicted_pairs)
    exact_gold_hits = sum(map(predicted_bounds.__contains__, gold_pairs))
    exact_predicted_hits = sum(map(gold_bounds.__contains__, predicted_pairs))
    overlap_predicted_hits = _gold_hits_overlapping(predicted_pairs, chars.gold_union)
    types, type_rows, token_counts = _per_type(text, gold, predicted, chars.predicted_union, leaks.by_type)
    column_sums = list(map(sum, zip(*type_rows, strict=True))) if type_rows else [0] * 19
    typed = [column_sums[k] for k in _TYPED_SUMS]
    strict, exact, ent_type = nervaluate_typed(gold, predicted, sufficient_overlaps(gold, predicted))
    counts = array("i", [
        *chars.counts(),
        *typed[0:3],
        *token_counts,
        *typed[3:6],
        exact_gold_hits, exact_predicted_hits,
        typed[6], typed[7],
        len(gold) - len(leaks.missed), overlap_predicted_hits,
        typed[8], typed[9],
        strict[0], strict[1], exact[0], exact[1], ent_type[0], ent_type[1],
        len(leaks.spans),
        chars.gold_len - chars.both_len,
        leaks.n_any_char_scored,
        chars.gold_scored - chars.both_scored,
        len(leaks.missed),
        total_length(merge_ranges(leaks.missed)),
        len(gold),
        len(predicted),
        n_chars,
        sum(dropped.values()),
        *chain.from_iterable(type_rows),
    ])  # fmt: skip
    return DocumentScore(
        document_id=document_id,
        counts=counts,
        types=types,
        leaked_spans=tuple(leaks.spans),
        dropped_by_type=tuple(sorted(dropped.items())),
    )


def _restricted(
    predicted: list[tuple[int, int, str]], allowed: frozenset[str] | None
) -> tuple[list[tuple[int, int, str]], Counter[str]]:
    """The predictions of allowed types (restrict_to_gt_types), sorted, and the dropped ones per type."""
    dropped: Counter[str] = Counter()
    if allowed is not None:
        dropped.update([p[2] for p in predicted if p[2] not in allowed])
        if dropped:
            predicted = [p for p in predicted if p[2] in allowed]
    return sorted(predicted), dropped


class _Characters:
    """chars.all and chars.scored: unions, so nested and duplicate spans count once; intersections by
    inclusion-exclusion: |G & P| = |G| + |P| - |G | P|, for any count of code points."""

    def __init__(self, text: str, gold: list[tuple[int, int, str]], predicted: list[tuple[int, int, str]]):
        self.n_chars = len(text)
        self.gold_union = merge_ranges(gold)
        self.predicted_union = merge_ranges(predicted)
        either = merge_ranges(sorted(gold + predicted))
        self.gold_len, self.predicted_len = total_length(self.gold_union), total_length(self.predicted_union)
        self.both_len = self.gold_len + self.predicted_len - total_length(either)
        self.left_out = left_out = LeftOutCounter(text)
        self.scored_chars = self.n_chars - left_out.in_text()
        self.gold_scored = left_out.scored_length(self.gold_union)
        self.predicted_scored = left_out.scored_length(self.predicted_union)
        self.both_scored = self.gold_scored + self.predicted_scored - left_out.scored_length(either)

    def counts(self) -> tuple[int, ...]:
        """chars.all and chars.scored tp, fp, fn, tn."""
        gold, predicted, both = self.gold_len, self.predicted_len, self.both_len
        gold_scored, predicted_scored, both_scored = self.gold_scored, self.predicted_scored, self.both_scored
        return (
            both, predicted - both, gold - both, self.n_chars - gold - predicted + both,
            both_scored, predicted_scored - both_scored, gold_scored - both_scored,
            self.scored_chars - gold_scored - predicted_scored + both_scored,
        )  # fmt: skip


class _Leaks:
    """Leakage, judged per gold span against the union of all predictions of any type: the leaked
    spans, the missed ones, how many leak scored code points, and (leaked, scored, missed) per type."""

    def __init__(
        self,
        text: str,
        gold: list[tuple[int, int, str]],
        predicted_union: list[tuple[int, int]],
        left_out: LeftOutCounter,
    ):
        self.spans: list[LeakedSpan] = []
        self.missed: list[tuple[int, int, str]] = []
        self.by_type: dict[str, tuple[int, int, int]] = {}
        self.n_any_char_scored = 0
        for gold_span in gold:
            start, end, entity_type = gold_span
            if covers(predicted_union, start, end):
                continue
            uncovered = uncovered_part(predicted_union, start, end)
            scored_leak = left_out.has_scored(uncovered)
            missed = uncovered[0][0] == start and uncovered[1][0] == end
            self.n_any_char_scored += scored_leak
            if missed:
                self.missed.append(gold_span)
            previous = self.by_type.get(entity_type, (0, 0, 0))
            self.by_type[entity_type] = (previous[0] + 1, previous[1] + scored_leak, previous[2] + missed)
            self.spans.append(
                LeakedSpan(
                    start,
                    end,
                    entity_type,
                    text[start:end],
                    CONDITIONS_OF_LEAK_CODE[2 * scored_leak + missed],
                )
            )


def _per_type(
    text: str,
    gold: list[tuple[int, int, str]],
    predicted: list[tuple[int, int, str]],
    predicted_union: list[tuple[int, int]],
    leaks_by_type: dict[str, tuple[int, int, int]],
) -> tuple[tuple[str, ...], list[tuple[int, ...]], tuple[int, int, int]]:
    """Every family restricted to one type, a row per type (sorted), and tokens.binary tp, fp, fn,
    whose token sets the rows gather on the way."""
    gold_by_type: dict[str, list[tuple[int, int]]] = {}
    predicted_by_type: dict[str, list[tuple[int, int]]] = {}
    for start, end, entity_type in gold:
        gold_by_type.setdefault(entity_type, []).append((start, end))
    for start, end, entity_type in predicted:
        predicted_by_type.setdefault(entity_type, []).append((start, end))
    # Tokens of each distinct span: a prediction with the bounds of a gold span is tokenised once.
    tokens_of = {bounds: span_tokens(text, *bounds) for bounds in set(map(_BOUNDS, gold + predicted))}
    gold_tokens: set[tuple[int, int]] = set()
    predicted_tokens: set[tuple[int, int]] = set()
    types = tuple(sorted({sys.intern(t) for t in gold_by_type.keys() | predicted_by_type.keys()}))
    no_leaks = (0, 0, 0)
    type_rows = [
        _type_row(
            gold_by_type.get(entity_type, []),
            predicted_by_type.get(entity_type, []),
            predicted_union,
            leaks_by_type.get(entity_type, no_leaks),
            tokens_of,
            gold_tokens,
            predicted_tokens,
        )
        for entity_type in types
    ]
    token_both = len(gold_tokens & predicted_tokens)
    return types, type_rows, (token_both, len(predicted_tokens) - token_both, len(gold_tokens) - token_both)
