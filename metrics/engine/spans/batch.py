"""The span scorer: every metric family's counts for a batch of documents at once, with numpy.

Every count is a union, an intersection, a membership or an overlap test, and those vectorise once
the documents of a chunk are laid end to end on one line of code points (`code_point_line`). Spans
are sorted by (global start, end, type code), which is the order (start, end, type) within each
document, because type codes are numbered in the types' sorted order. Per-type families put each
type on a line of its own: `type * line_length + coordinate`.

The one step that does not vectorise is nervaluate's greedy walk where claims compete (`_nervaluate`):
which claims first then matters. `tests/engine/spans/test_batch.py` holds every document's counts equal
to those of a reference scorer written without numpy (`tests/engine/spans/oracle`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from metrics.engine.spans.code_point_line import (
    INT,
    Cover,
    Line,
    SortedSpans,
    distinct,
    distinct_sorted,
    member_sorted,
    merge,
    merge_unsorted,
    per,
    token_pieces,
)
from metrics.engine.spans.columns import SpanColumns, SpanSide
from metrics.engine.spans.nervaluate_counts import nervaluate_typed
from metrics.engine.spans.score import N_STORED, N_TYPE_STORED
from metrics.engine.spans.score_table import SpanScores

# Documents per numpy pass: large enough that numpy's per-call overhead is spread over thousands of
# spans, small enough that the chunk's code point arrays stay in the cache (bench/spans/README.md).
BATCH_DOCUMENTS = 768
# Keys of token pieces are type * line_length**2 + start * line_length + end in 64 bits: a batch whose
# keys could reach this is scored in halves.
_LARGEST_KEY = 1 << 62


class _Chunk:
    """What every part of the scorer reads: the line, both sides' sorted spans, and the chunk's
    (document, type) rows (one per type a document holds on either side, in document then type
    order), with the row of each span."""

    def __init__(self, line: Line, gold: SortedSpans, pred: SortedSpans, n_docs: int, n_types: int):
        self.line, self.gold, self.pred = line, gold, pred
        self.n_docs, self.n_types = n_docs, n_types
        present = np.zeros(n_docs * n_types, dtype=bool)
        gold_key = gold.doc * n_types + gold.code
        pred_key = pred.doc * n_types + pred.code
        present[gold_key] = True
        present[pred_key] = True
        row_keys = np.flatnonzero(present)
        self.n_rows = len(row_keys)
        self.row_doc, self.row_code = np.divmod(row_keys, n_types)
        row_of_key = np.cumsum(present) - 1
        self.gold_row = row_of_key[gold_key]
        self.pred_row = row_of_key[pred_key]
        self.counts = np.zeros((n_docs, N_STORED), dtype=INT)
        self.rows = np.zeros((self.n_rows, N_TYPE_STORED), dtype=INT)
        self.gold_typed, self.pred_typed = self.typed(gold), self.typed(pred)
        # Each side by (type, start, end): sorted on its line per type.
        self.gold_by_type, self.pred_by_type = gold.by_type(), pred.by_type()

    def per_doc(self, doc: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return per(doc, self.n_docs, weights)

    def per_row(self, row: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return per(row, self.n_rows, weights)

    def typed(self, spans: SortedSpans) -> tuple[np.ndarray, np.ndarray]:
        """The spans on one line per type: `type * line length + coordinate`."""
        offset = spans.code * self.line.length
        return spans.start + offset, spans.end + offset


def score_span_columns(
    columns: SpanColumns, allowed: frozenset[str] | None = None, *, keep_leaked: bool = True
) -> SpanScores:
    """The scores of the documents of the batch, in their order, in one numpy pass.

    Predictions whose type is not in `allowed` (when given; restrict_to_gt_types) are dropped before
    scoring and counted. Spans must satisfy 0 <= start < end <= len(text), else ValueError names the
    first document, in order, with such a span, and its first such span.

    Unless `keep_leaked`, the scores list no leaked span (their counts stay): the results body lists
    them only with their texts, which a run without sensitive text never writes."""
    n_docs = len(columns)
    if n_docs == 0:
        return SpanScores.empty()
    # Codes numbered in the types' sorted order, so that sorting by code sorts by type name.
    type_names = sorted(columns.type_names)
    renumber = np.fromiter(
        map({name: code for code, name in enumerate(type_names)}.__getitem__, columns.type_names),
        dtype=INT,
        count=len(type_names),
    )
    gold_side = _renumbered(columns.gold, renumber)
    pred_side, dropped = _restricted(_renumbered(columns.predicted, renumber), type_names, allowed)
    n_chars = np.fromiter(map(len, columns.texts), dtype=INT, count=n_docs)
    _check_offsets(columns.document_ids, n_chars, type_names, gold_side, pred_side)
    if (len(type_names) + 1) * (int(n_chars.sum()) + n_docs + 1) ** 2 >= _LARGEST_KEY:
        return _score_halves(columns, allowed, keep_leaked)
    line = Line(columns.texts, n_chars)
    n_types = max(len(type_names), 1)
    chunk = _Chunk(
        line, SortedSpans(gold_side, line, n_types), SortedSpans(pred_side, line, n_types), n_docs, n_types
    )
    chunk.rows[:, 0] = chunk.per_row(chunk.gold_row)
    chunk.rows[:, 1] = chunk.per_row(chunk.pred_row)
    gold_cover, pred_cover = _character_counts(chunk)
    type_covers = _typed_character_counts(chunk, pred_cover)
    _token_counts(chunk)
    _exact_and_overlap_counts(chunk, gold_cover, *type_covers)
    leaked, scored_leak, missed = _leakage_counts(chunk, pred_cover)
    _nervaluate(chunk)
    counts = chunk.counts
    counts[:, 37] = chunk.per_doc(chunk.gold.doc)
    counts[:, 38] = chunk.per_doc(chunk.pred.doc)
    counts[:, 39] = n_chars
    counts[:, 40] = chunk.per_doc(dropped[0], dropped[2])
    # The typed families of a document (chars_typed, tokens.typed, spans_*.typed) are sums of its type rows.
    for document_column, row_column in (
        (8, 2), (9, 3), (10, 4), (14, 6), (15, 7), (16, 8), (19, 9), (20, 10), (23, 11), (24, 12),
    ):  # fmt: skip
        counts[:, document_column] = chunk.per_doc(chunk.row_doc, chunk.rows[:, row_column])
    listed = leaked if keep_leaked else np.zeros(0, dtype=bool)
    return _score_table(columns, chunk, type_names, listed, scored_leak, missed, dropped)


def _renumbered(side: SpanSide, renumber: np.ndarray) -> SpanSide:
    return replace(side, type_code=renumber[side.type_code]) if len(renumber) else side


def _restricted(
    pred: SpanSide, type_names: list[str], allowed: frozenset[str] | None
) -> tuple[SpanSide, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """restrict_to_gt_types: the predictions of allowed types, and the dropped ones as (document,
    type, count) columns."""
    empty = np.zeros(0, dtype=INT)
    if allowed is None:
        return pred, (empty, empty, empty)
    keep = np.fromiter((name in allowed for name in type_names), dtype=bool, count=len(type_names))
    kept = keep[pred.type_code] if len(pred) else np.ones(0, dtype=bool)
    if kept.all():
        return pred, (empty, empty, empty)
    lost = np.flatnonzero(~kept)
    lost_keys = pred.document[lost] * len(type_names) + pred.type_code[lost]
    dropped_keys = distinct(lost_keys)
    dropped_columns = (
        dropped_keys // len(type_names),
        dropped_keys % len(type_names),
        np.bincount(np.searchsorted(dropped_keys, lost_keys), minlength=len(dropped_keys)).astype(INT),
    )
    return SpanSide(
        pred.document[kept], pred.start[kept], pred.end[kept], pred.type_code[kept]
    ), dropped_columns


def _check_offsets(
    document_ids: Sequence[str], n_chars: np.ndarray, type_names: list[str], gold: SpanSide, pred: SpanSide
) -> None:
    """Raise ValueError for the first document with a span empty or outside its text: its first such
    gold span, else its first such prediction, in (start, end, type) order."""
    bad = [
        np.flatnonzero((side.start < 0) | (side.end <= side.start) | (side.end > n_chars[side.document]))
        for side in (gold, pred)
    ]
    if not any(len(spans) for spans in bad):
        return
    first = min(
        int(side.document[spans].min()) for side, spans in zip((gold, pred), bad, strict=True) if len(spans)
    )
    for side, spans, name in zip((gold, pred), bad, ("gold", "predicted"), strict=True):
        doc, start, end, code = side.document, side.start, side.end, side.type_code
        here = spans[doc[spans] == first]
        if len(here):
            k = here[np.lexsort((code[here], end[here], start[here]))[0]]
            raise ValueError(
                f"document {document_ids[first]!r}: {name} span [{start[k]}, {end[k]}) of type "
                f"{type_names[code[k]]!r} is empty or outside the text of {n_chars[first]} code points"
            )


def _score_halves(columns: SpanColumns, allowed: frozenset[str] | None, keep_leaked: bool) -> SpanScores:
    """A batch whose keys would overflow 64 bits, scored in halves: a document's scores do not depend
    on its neighbours. Only a single text of hundreds of millions of code points cannot be scored."""
    n_docs = len(columns)
    if n_docs == 1:
        raise OverflowError(
            f"document {columns.document_ids[0]!r}: {len(columns.texts[0])} code points are too many to score"
        )
    first, second = (
        score_span_columns(half, allowed, keep_leaked=keep_leaked)
        for half in (columns.between(0, n_docs // 2), columns.between(n_docs // 2, n_docs))
    )
    return first.followed_by(second)


def _character_counts(chunk: _Chunk) -> tuple[Cover, Cover]:
    """chars.all and chars.scored: unions per document, intersections by inclusion-exclusion.
    Returns the unions of all gold spans and of all predictions, which later counts read too."""
    line, gold, pred, counts = chunk.line, chunk.gold, chunk.pred, chunk.counts
    gold_start, gold_end, gold_first = merge(gold.start, gold.end)
    pred_start, pred_end, pred_first = merge(pred.start, pred.end)
    either_start, either_end, either_first = merge_unsorted(
        np.concatenate((gold.start, pred.start)), np.concatenate((gold.end, pred.end))
    )
    either_doc = np.concatenate((gold.doc, pred.doc))[either_first]

    def lengths(doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return chunk.per_doc(doc, end - start), chunk.per_doc(doc, line.scored_between(start, end))

    gold_len, gold_scored = lengths(gold.doc[gold_first], gold_start, gold_end)
    pred_len, pred_scored = lengths(pred.doc[pred_first], pred_start, pred_end)
    either_len, either_scored = lengths(either_doc, either_start, either_end)
    both_len = gold_len + pred_len - either_len
    both_scored = gold_scored + pred_scored - either_scored
    scored_chars = line.scored_between(line.bases, line.bases + line.n_chars)
    counts[:, 0] = both_len
    counts[:, 1] = pred_len - both_len
    counts[:, 2] = gold_len - both_len
    counts[:, 3] = line.n_chars - gold_len - pred_len + both_len
    counts[:, 4] = both_scored
    counts[:, 5] = pred_scored - both_scored
    counts[:, 6] = gold_scored - both_scored
    counts[:, 7] = scored_chars - gold_scored - pred_scored + both_scored
    counts[:, 32] = gold_len - both_len
    counts[:, 34] = gold_scored - both_scored
    return Cover(gold_start, gold_end), Cover(pred_start, pred_end, line.scored_prefix)


def _typed_character_counts(chunk: _Chunk, pred_cover: Cover) -> tuple[Cover, Cover]:
    """chars_typed per type row: the unions on one line per type; covered_by_any against the union
    of all predictions. Returns the per-type unions of gold and of predictions."""
    rows, gold_order, pred_order = chunk.rows, chunk.gold_by_type, chunk.pred_by_type
    gold_typed_start, gold_typed_end = chunk.gold_typed
    pred_typed_start, pred_typed_end = chunk.pred_typed
    gold_start, gold_end, gold_first = merge_unsorted(gold_typed_start, gold_typed_end, gold_order)
    pred_start, pred_end, pred_first = merge_unsorted(pred_typed_start, pred_typed_end, pred_order)
    either_typed_start = np.concatenate((gold_typed_start, pred_typed_start))
    # Both sides by type are two sorted runs, which a stable sort (timsort) merges; ties keep the
    # concatenation's order, as a stable sort of the concatenation does.
    either_order = np.concatenate((gold_order, pred_order + len(gold_order)))
    either_order = either_order[np.argsort(either_typed_start[either_order], kind="stable")]
    either_start, either_end, either_first = merge_unsorted(
        either_typed_start, np.concatenate((gold_typed_end, pred_typed_end)), either_order
    )
    gold_union_row = chunk.gold_row[gold_first]
    either_row = np.concatenate((chunk.gold_row, chunk.pred_row))[either_first]
    type_gold_len = chunk.per_row(gold_union_row, gold_end - gold_start)
    type_pred_len = chunk.per_row(chunk.pred_row[pred_first], pred_end - pred_start)
    type_both = type_gold_len + type_pred_len - chunk.per_row(either_row, either_end - either_start)
    rows[:, 2] = type_both
    rows[:, 3] = type_pred_len - type_both
    rows[:, 4] = type_gold_len - type_both
    offset = chunk.row_code[gold_union_row] * chunk.line.length
    covered_high = pred_cover.covered_below(gold_end - offset)
    covered_low = pred_cover.covered_below(gold_start - offset)
    rows[:, 5] = chunk.per_row(gold_union_row, covered_high - covered_low)
    return Cover(gold_start, gold_end), Cover(pred_start, pred_end)


def _token_counts(chunk: _Chunk) -> None:
    """tokens: runs of letters and digits cut at span bounds, compared as (start, end) pieces; per
    type, the piece keyed by its span's type too.

    A piece's key is (start * (line length + 1) + end) * n_types + type: sorted once, the keys are
    sorted by document, and their distinct values without the type are sorted too.
    """
    line, counts, rows, n_types = chunk.line, chunk.counts, chunk.rows, chunk.n_types
    key_scale = line.length + 1
    gold_typed = _typed_piece_keys(chunk.gold, line, n_types)
    pred_typed = _typed_piece_keys(chunk.pred, line, n_types)
    gold_keys = distinct_sorted(gold_typed // n_types)
    pred_keys = distinct_sorted(pred_typed // n_types)
    token_both = line.per_document(gold_keys[member_sorted(gold_keys, pred_keys)], key_scale)
    counts[:, 11] = token_both
    counts[:, 12] = line.per_document(pred_keys, key_scale) - token_both
    counts[:, 13] = line.per_document(gold_keys, key_scale) - token_both
    typed_scale = key_scale * n_types

    def per_row(keys: np.ndarray) -> np.ndarray:
        doc = np.repeat(np.arange(chunk.n_docs, dtype=INT), line.per_document(keys, typed_scale))
        per_doc_and_type = np.bincount(doc * n_types + keys % n_types, minlength=chunk.n_docs * n_types)
        return per_doc_and_type[chunk.row_doc * n_types + chunk.row_code]

    rows_token_both = per_row(gold_typed[member_sorted(gold_typed, pred_typed)])
    rows[:, 6] = rows_token_both
    rows[:, 7] = per_row(pred_typed) - rows_token_both
    rows[:, 8] = per_row(gold_typed) - rows_token_both


def _typed_piece_keys(spans: SortedSpans, line: Line, n_types: int) -> np.ndarray:
    """Sorted distinct (start * (line length + 1) + end) * n_types + type of the spans' token pieces."""
    start, end, span = token_pieces(spans, line)
    return distinct((start * (line.length + 1) + end) * n_types + spans.code[span])


def _exact_and_overlap_counts(
    chunk: _Chunk, gold_cover: Cover, gold_type_cover: Cover, pred_type_cover: Cover
) -> None:
    """spans_exact: bounds (and type, per type) found on the other side; spans_overlap: a span
    matches when it shares a code point with the other side's union."""
    gold, pred, counts, rows = chunk.gold, chunk.pred, chunk.counts, chunk.rows
    counts[:, 17] = chunk.per_doc(gold.doc[member_sorted(gold.bounds, pred.bounds)])
    counts[:, 18] = chunk.per_doc(pred.doc[member_sorted(pred.bounds, gold.bounds)])
    rows[:, 9] = chunk.per_row(chunk.gold_row[member_sorted(gold.key, pred.key)])
    rows[:, 10] = chunk.per_row(chunk.pred_row[member_sorted(pred.key, gold.key)])
    counts[:, 22] = chunk.per_doc(pred.doc[gold_cover.overlaps(pred.start, pred.end)])
    # Asked in type order, where the queries are sorted and so search fastest.
    gold_order, pred_order = chunk.gold_by_type, chunk.pred_by_type
    gold_overlaps = pred_type_cover.overlaps(chunk.gold_typed[0][gold_order], chunk.gold_typed[1][gold_order])
    pred_overlaps = gold_type_cover.overlaps(chunk.pred_typed[0][pred_order], chunk.pred_typed[1][pred_order])
    rows[:, 11] = chunk.per_row(chunk.gold_row[gold_order[gold_overlaps]])
    rows[:, 12] = chunk.per_row(chunk.pred_row[pred_order[pred_overlaps]])


def _leakage_counts(chunk: _Chunk, pred_cover: Cover) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leakage, per gold span against the union of all predictions: (leaked, leaked scored code
    points, missed) per gold span. counts 32 and 34 are the character counts' false negatives."""
    line, gold, counts, rows = chunk.line, chunk.gold, chunk.counts, chunk.rows
    covered, overlapped, covered_scored = pred_cover.against(gold.start, gold.end)
    leaked = ~covered
    missed = ~overlapped  # nothing of the span covered (a missed span is leaked)
    own_scored = line.scored_between(gold.start, gold.end)
    scored_leak = leaked & (own_scored - covered_scored > 0)
    gold_per_doc = chunk.per_doc(gold.doc)
    missed_per_doc = chunk.per_doc(gold.doc[missed])
    counts[:, 21] = gold_per_doc - missed_per_doc
    counts[:, 31] = chunk.per_doc(gold.doc[leaked])
    counts[:, 33] = chunk.per_doc(gold.doc[scored_leak])
    counts[:, 35] = missed_per_doc
    missed_index = np.flatnonzero(missed)
    missed_start, missed_end, missed_first = merge(gold.start[missed_index], gold.end[missed_index])
    counts[:, 36] = chunk.per_doc(gold.doc[missed_index[missed_first]], missed_end - missed_start)
    rows[:, 16] = chunk.per_row(chunk.gold_row[leaked])
    rows[:, 17] = chunk.per_row(chunk.gold_row[scored_leak])
    rows[:, 18] = chunk.per_row(chunk.gold_row[missed])
    return leaked, scored_leak, missed


def _nervaluate(chunk: _Chunk) -> None:
    """nervaluate's COR and INC per schema, per document (counts) and per type (rows).

    A prediction's candidates are the gold spans it overlaps sufficiently (`nervaluate_counts`).
    Where no claims compete, each prediction with a candidate claims it, and the schemas only differ
    in whether bounds and type agree; `_stretches` finds where they compete. Per type the walk sees
    only the type's spans, so the same holds on each type's line on its own pairs.
    """
    gold, pred = chunk.gold, chunk.pred
    if len(gold) == 0 or len(pred) == 0:
        return
    pair_pred, pair_gold = _candidate_pairs(gold, pred)
    same_bounds = gold.bounds[pair_gold] == pred.bounds[pair_pred]
    same_type = gold.code[pair_gold] == pred.code[pair_pred]
    stretch, claims, walked = _stretches(pair_pred, pair_gold, (gold.start, gold.end), (pred.start, pred.end))
    pair_doc = gold.doc[pair_gold[claims]]
    for column, agrees in ((25, same_bounds & same_type), (27, same_bounds), (29, same_type)):
        correct = chunk.per_doc(pair_doc[agrees[claims]])
        chunk.counts[:, column] = correct
        chunk.counts[:, column + 1] = chunk.per_doc(pair_doc) - correct
    if walked.any():
        _walk(chunk, stretch[walked], pair_gold[walked], pair_pred[walked], typed=False)
    typed_pred, typed_gold = pair_pred[same_type], pair_gold[same_type]
    stretch, claims, walked = _stretches(typed_pred, typed_gold, chunk.gold_typed, chunk.pred_typed)
    typed_row = chunk.gold_row[typed_gold[claims]]
    typed_exact = same_bounds[same_type][claims]
    chunk.rows[:, 13] = chunk.per_row(typed_row[typed_exact])
    chunk.rows[:, 14] = chunk.per_row(typed_row[~typed_exact])
    chunk.rows[:, 15] = chunk.per_row(typed_row)
    if walked.any():
        _walk(chunk, stretch[walked], typed_gold[walked], typed_pred[walked], typed=True)


def _stretches(
    pair_pred: np.ndarray,
    pair_gold: np.ndarray,
    gold_bounds: tuple[np.ndarray, np.ndarray],
    pred_bounds: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each candidate pair's stretch of the line (the union of overlapping pairs' spans); the pairs
    that are claims (the prediction claims the gold span); the pairs of stretches to walk.

    Stretches are independent: every candidate of a prediction lies in its stretch, so what it claims
    depends on the claims made in that stretch alone. Claims compete in a stretch when a prediction in
    it has several candidates, or a gold span is the candidate of several predictions. Where none
    compete every pair is a claim; where the stretch holds one gold span, its first prediction's pair
    is (the others find it claimed). Pairs come in prediction order, so a stretch's first pair is its
    first prediction's.
    """
    if len(pair_pred) == 0:
        return pair_pred, np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    start = np.minimum(gold_bounds[0][pair_gold], pred_bounds[0][pair_pred])
    end = np.maximum(gold_bounds[1][pair_gold], pred_bounds[1][pair_pred])
    order = np.argsort(start, kind="stable")
    opens = np.zeros(len(order), dtype=bool)
    opens[merge(start[order], end[order])[2]] = True
    stretch = np.empty(len(order), dtype=INT)
    stretch[order] = np.cumsum(opens) - 1
    n_stretches = int(stretch[order[-1]]) + 1
    crowded = (np.bincount(pair_pred)[pair_pred] > 1) | (np.bincount(pair_gold)[pair_gold] > 1)
    contended = np.zeros(n_stretches, dtype=bool)
    contended[stretch[crowded]] = True
    pair = np.arange(len(stretch), dtype=INT)
    first = np.empty(n_stretches, dtype=INT)
    first[stretch[::-1]] = pair[::-1]  # the last write wins: each stretch's first pair
    several_gold = np.zeros(n_stretches, dtype=bool)
    several_gold[stretch[pair_gold != pair_gold[first[stretch]]]] = True
    claims = ~contended[stretch] | (~several_gold[stretch] & (pair == first[stretch]))
    return stretch, claims, (contended & several_gold)[stretch]


def _candidate_pairs(gold: SortedSpans, pred: SortedSpans) -> tuple[np.ndarray, np.ndarray]:
    """(prediction, gold span) index pairs where the prediction overlaps the gold span sufficiently."""
    running_end = np.maximum.accumulate(gold.end)
    first = np.searchsorted(running_end, pred.start, side="right")
    stop = np.searchsorted(gold.start, pred.end, side="left")
    in_range = np.maximum(stop - first, 0)
    pair_pred = np.repeat(np.arange(len(pred), dtype=INT), in_range)
    pair_gold = (
        np.arange(len(pair_pred), dtype=INT)
        - np.repeat(np.cumsum(in_range) - in_range, in_range)
        + np.repeat(first, in_range)
    )
    gold_start, gold_end = gold.start[pair_gold], gold.end[pair_gold]
    pred_start, pred_end = pred.start[pair_pred], pred.end[pair_pred]
    overlap = np.minimum(pred_end, gold_end) - np.maximum(pred_start, gold_start)
    # nervaluate's own test, in the same floating point: (overlap / gold length) * 100.0 >= 1.0
    sufficient = (gold_end > pred_start) & ((overlap / (gold_end - gold_start)) * 100.0 >= 1.0)
    return pair_pred[sufficient], pair_gold[sufficient]


def _walk(
    chunk: _Chunk, stretch: np.ndarray, pair_gold: np.ndarray, pair_pred: np.ndarray, *, typed: bool
) -> None:
    """The reference walk (`nervaluate_typed`) over each contended stretch's gold spans and
    predictions (those of its candidate pairs, in sorted order), added to its document's counts or,
    on the lines per type, to its type row's."""
    gold_first, gold_spans, _, gold_local = _spans_of_stretches(stretch, pair_gold, chunk.gold)
    _, pred_spans, pair_stretch, pred_local = _spans_of_stretches(stretch, pair_pred, chunk.pred)
    candidates: list[list[list[int]]] = [[[] for _ in spans] for spans in pred_spans]
    # Pairs come in prediction order, then gold order: each prediction's candidates in list order.
    for at, pred, gold in zip(pair_stretch.tolist(), pred_local.tolist(), gold_local.tolist(), strict=True):
        candidates[at][pred].append(gold)
    walks = map(nervaluate_typed, gold_spans, pred_spans, candidates)
    if typed:
        for row, (_, exact, ent_type) in zip(chunk.gold_row[gold_first].tolist(), walks, strict=True):
            chunk.rows[row, 13:16] += (*exact, ent_type[0])
        return
    for doc, (strict, exact, ent_type) in zip(chunk.gold.doc[gold_first].tolist(), walks, strict=True):
        chunk.counts[doc, 25:31] += (*strict, *exact, *ent_type)


def _spans_of_stretches(
    stretch: np.ndarray, index: np.ndarray, spans: SortedSpans
) -> tuple[np.ndarray, list[list[tuple[int, int, int]]], np.ndarray, np.ndarray]:
    """Per stretch, in stretch order: the first of its spans (index into `spans`), and its distinct
    spans as (start, end, type code) in sorted order; per pair, its stretch's position in that order
    and its span's position in the stretch's. Gathered and converted to Python once for all
    stretches; type codes stand in for type names (they compare in the same order and are equal alike)."""
    pair_keys = stretch * len(spans) + index
    keys = distinct(pair_keys)
    member, group = keys % len(spans), keys // len(spans)
    opens = np.diff(group, prepend=-1) != 0
    bounds = np.flatnonzero(np.append(opens, True))
    position = np.searchsorted(keys, pair_keys)
    key_stretch = np.cumsum(opens) - 1
    pair_stretch = key_stretch[position]
    pair_local = position - bounds[pair_stretch]
    bounds = bounds.tolist()
    columns = (
        spans.local_start[member].tolist(),
        spans.local_end[member].tolist(),
        spans.code[member].tolist(),
    )
    tuples = list(zip(*columns, strict=True))
    stretches = [tuples[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return member[bounds[:-1]], stretches, pair_stretch, pair_local


def _score_table(
    columns: SpanColumns,
    chunk: _Chunk,
    type_names: list[str],
    leaked: np.ndarray,
    scored_leak: np.ndarray,
    missed: np.ndarray,
    dropped: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> SpanScores:
    """The chunk's scores as columns, in 32 bits (a count past 2**31 fails loudly, not wrapping)."""
    gold = chunk.gold
    leaked_index = np.flatnonzero(leaked)
    leaked_doc = gold.doc[leaked_index]
    leaked_start = gold.local_start[leaked_index]
    leaked_end = gold.local_end[leaked_index]
    texts = columns.texts
    return SpanScores(
        document_ids=list(columns.document_ids),
        counts=_int32(chunk.counts),
        type_names=tuple(type_names),
        row_document=chunk.row_doc,
        row_type=chunk.row_code,
        rows=_int32(chunk.rows),
        leaked_document=leaked_doc,
        leaked_start=leaked_start,
        leaked_end=leaked_end,
        leaked_type=gold.code[leaked_index],
        leaked_condition=(2 * scored_leak[leaked_index] + missed[leaked_index]).astype(np.int8),
        leaked_text=[
            texts[doc][start:end]
            for doc, start, end in zip(
                leaked_doc.tolist(), leaked_start.tolist(), leaked_end.tolist(), strict=True
            )
        ],
        dropped_document=dropped[0],
        dropped_type=dropped[1],
        dropped_count=dropped[2],
    )


def _int32(values: np.ndarray) -> np.ndarray:
    if len(values) and (values.max() > np.iinfo(np.int32).max or values.min() < np.iinfo(np.int32).min):
        raise OverflowError("a count does not fit in 32 bits")
    return values.astype(np.int32)
