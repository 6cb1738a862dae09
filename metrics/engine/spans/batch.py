"""`score_document` for many documents at once, with numpy: the same DocumentScores, faster.

`score_document` walks each document's spans in Python, about 185 microseconds a document; an offline
evaluation of 100,000 documents spent most of its time there. This scorer takes about 50 (measured on
the span benchmark's corpus, bench/spans). Every count it takes is a union,
an intersection, a membership or an overlap test, and those vectorise once the documents of a chunk
are laid end to end on one line of code points:

- document i occupies [base_i, base_i + len(text_i)), and one separator code point follows it, so two
  documents' intervals never overlap or touch, and a run of letters never crosses from one to the
  next. A span's global coordinates are its offsets plus its document's base.
- Spans are sorted by (global start, end, type code), which is `score_document`'s order (start, end,
  type) within each document, because type codes are numbered in the types' sorted order.
- Per-type families put each type on a line of its own: `type * line_length + coordinate`.

The one step that does not vectorise is nervaluate's greedy walk when one prediction could claim
several gold spans, or one gold span be claimed by several predictions: which claims first then
matters. Those documents' nervaluate counts come from the reference walk (`nervaluate_counts`), with
every other count vectorised. A document with a span outside its text is scored by `score_document`,
which raises its ValueError: errors are exactly `score_document`'s, in document order.

`tests/engine/test_spans_batch.py` checks that every DocumentScore equals `score_document`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics.engine.spans.columns import SpanColumns
from metrics.engine.spans.document import score_document
from metrics.engine.spans.intervals import LEFT_OUT_CHARACTERS
from metrics.engine.spans.nervaluate_counts import nervaluate_one_type, nervaluate_typed
from metrics.engine.spans.score import N_STORED, N_TYPE_STORED, DocumentScore
from metrics.engine.spans.score_table import SpanScores
from metrics.engine.spans.types import DocumentSpans

# Documents per numpy pass: large enough that numpy's per-call overhead is spread over thousands of
# spans, small enough that the chunk's code point arrays stay a few megabytes.
BATCH_DOCUMENTS = 1024

_SEPARATOR = "\n"  # left out and not a letter: it adds nothing to any count
# Per Latin-1 code point: scored (not in LEFT_OUT_CHARACTERS), and str.isalnum() (the token pattern
# `[^\W_]+` is runs of these). Every left-out character is ASCII.
_LATIN1_SCORED = np.array([chr(c) not in LEFT_OUT_CHARACTERS for c in range(256)], dtype=bool)
_LATIN1_ALNUM = np.array([chr(c).isalnum() for c in range(256)], dtype=bool)
_INT = np.int64


# Code points per numpy pass (a longer document is a pass of its own). Keys of token pieces are
# type * line_length**2 + start * line_length + end in 64 bits: this keeps them far from overflowing.
BATCH_CHARACTERS = 1 << 24
_LARGEST_KEY = 1 << 62


def score_document_batch(
    docs: Sequence[DocumentSpans], *, allowed_predicted_types: frozenset[str] | None = None
) -> list[DocumentScore]:
    """`[score_document(doc, allowed_predicted_types=...) for doc in docs]`, computed in chunks."""
    return list(score_span_batches(docs, allowed_predicted_types=allowed_predicted_types))


def score_span_batches(
    docs: Sequence[DocumentSpans], *, allowed_predicted_types: frozenset[str] | None = None
) -> SpanScores:
    """The scores of `score_document_batch`, as columns."""
    parts: list[SpanScores] = []
    chunk: list[DocumentSpans] = []
    characters = 0
    for doc in docs:
        if chunk and (len(chunk) >= BATCH_DOCUMENTS or characters + len(doc.text) > BATCH_CHARACTERS):
            parts.append(score_span_columns(SpanColumns.of_documents(chunk), allowed_predicted_types))
            chunk, characters = [], 0
        chunk.append(doc)
        characters += len(doc.text) + 1
    if chunk:
        parts.append(score_span_columns(SpanColumns.of_documents(chunk), allowed_predicted_types))
    return SpanScores.concatenate(parts)


class _Spans:
    """One side's spans of a chunk, flattened, in global coordinates, sorted as score_document sorts."""

    def __init__(
        self, doc: np.ndarray, start: np.ndarray, end: np.ndarray, code: np.ndarray, bases: np.ndarray
    ):
        order = np.lexsort((code, end, start + bases[doc]))
        self.doc = doc[order]
        self.local_start = start[order]
        self.local_end = end[order]
        self.start = self.local_start + bases[self.doc]
        self.end = self.local_end + bases[self.doc]
        self.code = code[order]
        self.length = self.end - self.start

    def __len__(self) -> int:
        return len(self.start)


def _distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.unique's hash path measured several times slower here)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def _member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """For each value, whether it occurs in pool (np.isin without its hash path)."""
    if len(pool) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    ordered = np.sort(pool)
    at = np.searchsorted(ordered, values)
    np.minimum(at, len(ordered) - 1, out=at)
    return ordered[at] == values


def _merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals sorted by start; touching intervals merge (as `merge_intervals`)."""
    if len(start) == 0:
        return start, end
    running_end = np.maximum.accumulate(end)
    opens = np.empty(len(start), dtype=bool)
    opens[0] = True
    np.greater(start[1:], running_end[:-1], out=opens[1:])
    first = np.flatnonzero(opens)
    last = np.empty_like(first)
    last[:-1] = first[1:] - 1
    last[-1] = len(start) - 1
    return start[first], running_end[last]


def _merge_unsorted(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(start, kind="stable")
    return _merge(start[order], end[order])


class _Cover:
    """A merged interval set, answering for many intervals at once how much of each it covers."""

    def __init__(self, start: np.ndarray, end: np.ndarray, scored_prefix: np.ndarray | None = None):
        self.start, self.end = start, end
        self.prefix = scored_prefix
        if scored_prefix is not None:
            self.before = np.concatenate(([0], np.cumsum(end - start)))[:-1]
            scored = scored_prefix[end] - scored_prefix[start]
            self.scored_before = np.concatenate(([0], np.cumsum(scored)))[:-1]

    def _last_starting_at_or_before(self, x: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.start, x, side="right") - 1

    def covered_below(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(code points, scored code points) of the set below x, for each x."""
        k = self._last_starting_at_or_before(x)
        inside = k >= 0
        k = np.where(inside, k, 0)
        if len(self.start) == 0:
            zero = np.zeros(len(x), dtype=_INT)
            return zero, zero
        cut = np.minimum(x, self.end[k])
        points = np.where(inside, self.before[k] + cut - self.start[k], 0)
        scored = np.where(inside, self.scored_before[k] + self.prefix[cut] - self.prefix[self.start[k]], 0)
        return points, scored

    def covers(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        if len(self.start) == 0:
            return np.zeros(len(start), dtype=bool)
        k = self._last_starting_at_or_before(start)
        return (k >= 0) & (self.end[np.maximum(k, 0)] >= end)

    def overlaps(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        if len(self.start) == 0:
            return np.zeros(len(start), dtype=bool)
        k = np.searchsorted(self.start, end, side="left") - 1
        return (k >= 0) & (self.end[np.maximum(k, 0)] > start)


def _per(index: np.ndarray, size: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Sum of weights (or count) per index value, as int64."""
    if weights is None:
        return np.bincount(index, minlength=size).astype(_INT)
    return np.bincount(index, weights=weights, minlength=size).astype(_INT)


def score_span_columns(columns: SpanColumns, allowed: frozenset[str] | None = None) -> SpanScores:
    """`score_document` of every document of the batch, in batch order, in one numpy pass."""
    n_docs = len(columns)
    if n_docs == 0:
        return SpanScores.empty()
    texts = columns.texts
    n_chars = np.fromiter(map(len, texts), dtype=_INT, count=n_docs)
    bases = np.zeros(n_docs, dtype=_INT)
    np.cumsum(n_chars[:-1] + 1, out=bases[1:])
    joined = _SEPARATOR.join(texts) + _SEPARATOR
    line_length = len(joined)  # > every global coordinate

    # Codes numbered in the types' sorted order, so that sorting by code sorts by type name.
    type_names = sorted(columns.type_names)
    renumber = np.fromiter(
        map({name: code for code, name in enumerate(type_names)}.__getitem__, columns.type_names),
        dtype=_INT,
        count=len(type_names),
    )
    gold_doc, gold_start, gold_end = columns.gold.document, columns.gold.start, columns.gold.end
    gold_code = renumber[columns.gold.type_code] if len(renumber) else columns.gold.type_code
    pred_doc, pred_start, pred_end = (
        columns.predicted.document,
        columns.predicted.start,
        columns.predicted.end,
    )
    pred_code = renumber[columns.predicted.type_code] if len(renumber) else columns.predicted.type_code

    # restrict_to_gt_types: drop predictions of other types first, counting them per document.
    empty = np.zeros(0, dtype=_INT)
    dropped_columns = (empty, empty, empty)
    dropped = np.zeros(n_docs, dtype=_INT)
    if allowed is not None:
        keep = np.fromiter((name in allowed for name in type_names), dtype=bool, count=len(type_names))
        kept = keep[pred_code] if len(pred_code) else np.ones(0, dtype=bool)
        if not kept.all():
            lost = np.flatnonzero(~kept)
            lost_keys = pred_doc[lost] * len(type_names) + pred_code[lost]
            dropped_keys = _distinct(lost_keys)
            dropped_columns = (
                dropped_keys // len(type_names),
                dropped_keys % len(type_names),
                np.bincount(np.searchsorted(dropped_keys, lost_keys), minlength=len(dropped_keys)).astype(
                    _INT
                ),
            )
            dropped = _per(pred_doc[lost], n_docs)
            pred_doc, pred_start, pred_end, pred_code = (
                pred_doc[kept],
                pred_start[kept],
                pred_end[kept],
                pred_code[kept],
            )

    # Spans outside their text: score_document raises its own error for the first such document.
    invalid = np.zeros(n_docs, dtype=bool)
    for doc_index, start, end in ((gold_doc, gold_start, gold_end), (pred_doc, pred_start, pred_end)):
        bad = (start < 0) | (end <= start) | (end > n_chars[doc_index])
        if bad.any():
            invalid[doc_index[bad]] = True
    if invalid.any():
        first_invalid = int(np.flatnonzero(invalid)[0])
        score_document(columns.document(first_invalid), allowed_predicted_types=allowed)
        raise AssertionError("score_document accepted a span the batch scorer refused")  # pragma: no cover

    if (len(type_names) + 1) * (line_length + 1) ** 2 >= _LARGEST_KEY:
        # A text of billions of code points: keys would overflow; the reference scorer has no keys.
        return SpanScores.of_scores(
            score_document(columns.document(i), allowed_predicted_types=allowed) for i in range(n_docs)
        )

    gold = _Spans(gold_doc, gold_start, gold_end, gold_code, bases)
    pred = _Spans(pred_doc, pred_start, pred_end, pred_code, bases)
    n_types = max(len(type_names), 1)

    # The text as code points: which are left out of `scored`, which are letters or digits.
    scored_point, alnum = _character_classes(joined)
    scored_prefix = np.zeros(line_length + 1, dtype=_INT)
    np.cumsum(scored_point, out=scored_prefix[1:])

    counts = np.zeros((n_docs, N_STORED), dtype=_INT)

    # chars.all and chars.scored: unions, intersections by inclusion-exclusion.
    gold_union = _merge(gold.start, gold.end)
    pred_union = _merge(pred.start, pred.end)
    either = _merge_unsorted(np.concatenate((gold.start, pred.start)), np.concatenate((gold.end, pred.end)))

    def doc_of(points: np.ndarray) -> np.ndarray:
        return np.searchsorted(bases, points, side="right") - 1

    def length_per_doc(union: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        start, end = union
        docs_of = doc_of(start)
        return (
            _per(docs_of, n_docs, end - start),
            _per(docs_of, n_docs, scored_prefix[end] - scored_prefix[start]),
        )

    gold_len, gold_scored = length_per_doc(gold_union)
    pred_len, pred_scored = length_per_doc(pred_union)
    either_len, either_scored = length_per_doc(either)
    both_len = gold_len + pred_len - either_len
    both_scored = gold_scored + pred_scored - either_scored
    scored_chars = scored_prefix[bases + n_chars] - scored_prefix[bases]
    counts[:, 0] = both_len
    counts[:, 1] = pred_len - both_len
    counts[:, 2] = gold_len - both_len
    counts[:, 3] = n_chars - gold_len - pred_len + both_len
    counts[:, 4] = both_scored
    counts[:, 5] = pred_scored - both_scored
    counts[:, 6] = gold_scored - both_scored
    counts[:, 7] = scored_chars - gold_scored - pred_scored + both_scored

    # Rows: one per (document, type) present, in document order then type order.
    gold_row_key = gold.doc * n_types + gold.code
    pred_row_key = pred.doc * n_types + pred.code
    row_keys = _distinct(np.concatenate((gold_row_key, pred_row_key)))
    n_rows = len(row_keys)
    row_doc = row_keys // n_types
    gold_row = np.searchsorted(row_keys, gold_row_key)
    pred_row = np.searchsorted(row_keys, pred_row_key)
    rows = np.zeros((n_rows, N_TYPE_STORED), dtype=_INT)
    rows[:, 0] = _per(gold_row, n_rows)
    rows[:, 1] = _per(pred_row, n_rows)

    # chars_typed: the same on one line per type; covered_by_any against the union of all predictions.
    def typed(spans: _Spans) -> tuple[np.ndarray, np.ndarray]:
        offset = spans.code * line_length
        return spans.start + offset, spans.end + offset

    gold_typed_start, gold_typed_end = typed(gold)
    pred_typed_start, pred_typed_end = typed(pred)
    gold_type_union = _merge_unsorted(gold_typed_start, gold_typed_end)
    pred_type_union = _merge_unsorted(pred_typed_start, pred_typed_end)
    either_type_union = _merge_unsorted(
        np.concatenate((gold_typed_start, pred_typed_start)), np.concatenate((gold_typed_end, pred_typed_end))
    )

    def row_of_typed(points: np.ndarray) -> np.ndarray:
        code, coordinate = np.divmod(points, line_length)
        return np.searchsorted(row_keys, doc_of(coordinate) * n_types + code)

    def length_per_row(union: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        start, end = union
        return _per(row_of_typed(start), n_rows, end - start)

    type_gold_len = length_per_row(gold_type_union)
    type_pred_len = length_per_row(pred_type_union)
    type_both = type_gold_len + type_pred_len - length_per_row(either_type_union)
    rows[:, 2] = type_both
    rows[:, 3] = type_pred_len - type_both
    rows[:, 4] = type_gold_len - type_both
    pred_cover = _Cover(*pred_union, scored_prefix)
    union_code, union_start = np.divmod(gold_type_union[0], line_length)
    union_end = gold_type_union[1] - union_code * line_length
    covered_high, _ = pred_cover.covered_below(union_end)
    covered_low, _ = pred_cover.covered_below(union_start)
    rows[:, 5] = _per(row_of_typed(gold_type_union[0]), n_rows, covered_high - covered_low)

    # Tokens: runs of letters and digits cut at span bounds, compared as (start, end) pieces.
    gold_piece = _token_pieces(gold, alnum)
    pred_piece = _token_pieces(pred, alnum)
    key_scale = line_length + 1
    gold_token_keys = _distinct(gold_piece[0] * key_scale + gold_piece[1])
    pred_token_keys = _distinct(pred_piece[0] * key_scale + pred_piece[1])
    token_both = _per(doc_of(gold_token_keys[_member(gold_token_keys, pred_token_keys)] // key_scale), n_docs)
    n_gold_tokens = _per(doc_of(gold_token_keys // key_scale), n_docs)
    n_pred_tokens = _per(doc_of(pred_token_keys // key_scale), n_docs)
    counts[:, 11] = token_both
    counts[:, 12] = n_pred_tokens - token_both
    counts[:, 13] = n_gold_tokens - token_both
    # Per type: the piece keyed by its span's type too.
    piece_scale = key_scale * key_scale
    gold_typed_tokens = _distinct(
        gold.code[gold_piece[2]] * piece_scale + gold_piece[0] * key_scale + gold_piece[1]
    )
    pred_typed_tokens = _distinct(
        pred.code[pred_piece[2]] * piece_scale + pred_piece[0] * key_scale + pred_piece[1]
    )
    typed_both = gold_typed_tokens[_member(gold_typed_tokens, pred_typed_tokens)]

    def token_row(keys: np.ndarray) -> np.ndarray:
        code, rest = np.divmod(keys, piece_scale)
        return np.searchsorted(row_keys, doc_of(rest // key_scale) * n_types + code)

    rows_token_both = _per(token_row(typed_both), n_rows)
    rows[:, 6] = rows_token_both
    rows[:, 7] = _per(token_row(pred_typed_tokens), n_rows) - rows_token_both
    rows[:, 8] = _per(token_row(gold_typed_tokens), n_rows) - rows_token_both

    # spans_exact: bounds (and type, per type) found on the other side.
    gold_bounds = gold.start * key_scale + gold.end
    pred_bounds = pred.start * key_scale + pred.end
    counts[:, 17] = _per(gold.doc[_member(gold_bounds, pred_bounds)], n_docs)
    counts[:, 18] = _per(pred.doc[_member(pred_bounds, gold_bounds)], n_docs)
    gold_typed_bounds = gold.code * piece_scale + gold_bounds
    pred_typed_bounds = pred.code * piece_scale + pred_bounds
    rows[:, 9] = _per(gold_row[_member(gold_typed_bounds, pred_typed_bounds)], n_rows)
    rows[:, 10] = _per(pred_row[_member(pred_typed_bounds, gold_typed_bounds)], n_rows)

    # spans_overlap: a span matches when it shares a code point with the other side's union.
    gold_cover = _Cover(*gold_union, scored_prefix)
    gold_hit = pred_cover.overlaps(gold.start, gold.end)
    counts[:, 22] = _per(pred.doc[gold_cover.overlaps(pred.start, pred.end)], n_docs)
    gold_type_cover = _Cover(*gold_type_union)
    pred_type_cover = _Cover(*pred_type_union)
    rows[:, 11] = _per(gold_row[pred_type_cover.overlaps(gold_typed_start, gold_typed_end)], n_rows)
    rows[:, 12] = _per(pred_row[gold_type_cover.overlaps(pred_typed_start, pred_typed_end)], n_rows)

    # Leakage, per gold span against the union of all predictions.
    leaked = ~pred_cover.covers(gold.start, gold.end)
    missed = ~gold_hit  # nothing of the span covered (a missed span is leaked)
    high, high_scored = pred_cover.covered_below(gold.end)
    low, low_scored = pred_cover.covered_below(gold.start)
    own_scored = scored_prefix[gold.end] - scored_prefix[gold.start]
    scored_leak = leaked & (own_scored - (high_scored - low_scored) > 0)
    counts[:, 21] = _per(gold.doc, n_docs) - _per(gold.doc[missed], n_docs)
    counts[:, 31] = _per(gold.doc[leaked], n_docs)
    counts[:, 32] = gold_len - both_len
    counts[:, 33] = _per(gold.doc[scored_leak], n_docs)
    counts[:, 34] = gold_scored - both_scored
    counts[:, 35] = _per(gold.doc[missed], n_docs)
    missed_start, missed_end = _merge(gold.start[missed], gold.end[missed])
    counts[:, 36] = _per(doc_of(missed_start), n_docs, missed_end - missed_start)
    rows[:, 16] = _per(gold_row[leaked], n_rows)
    rows[:, 17] = _per(gold_row[scored_leak], n_rows)
    rows[:, 18] = _per(gold_row[missed], n_rows)

    _nervaluate(gold, pred, gold_row, counts, rows)

    counts[:, 37] = _per(gold.doc, n_docs)
    counts[:, 38] = _per(pred.doc, n_docs)
    counts[:, 39] = n_chars
    counts[:, 40] = dropped
    # The typed families of a document are the sums of its type rows (score_document's _TYPED_SUMS).
    for document_column, row_column in (
        (8, 2), (9, 3), (10, 4), (14, 6), (15, 7), (16, 8), (19, 9), (20, 10), (23, 11), (24, 12),
    ):  # fmt: skip
        counts[:, document_column] = _per(row_doc, n_docs, rows[:, row_column])

    return _score_table(
        columns,
        counts,
        rows,
        row_doc,
        row_keys % n_types,
        type_names,
        gold,
        leaked,
        scored_leak,
        missed,
        dropped_columns,
    )


def _character_classes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(scored, alnum) for each code point of the text, as boolean arrays."""
    try:
        latin1 = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    except UnicodeEncodeError:
        pass
    else:
        return _LATIN1_SCORED[latin1], _LATIN1_ALNUM[latin1]
    code_points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    in_latin1 = code_points < 256
    clipped = np.where(in_latin1, code_points, 0)
    scored = ~in_latin1 | _LATIN1_SCORED[clipped]
    alnum = in_latin1 & _LATIN1_ALNUM[clipped]
    others = np.flatnonzero(~in_latin1)
    other_points = code_points[others]
    distinct = _distinct(other_points)
    is_alnum = np.fromiter((chr(c).isalnum() for c in distinct.tolist()), dtype=bool, count=len(distinct))
    alnum[others] = is_alnum[np.searchsorted(distinct, other_points)]
    return scored, alnum


def _token_pieces(spans: _Spans, alnum: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(piece start, piece end, span index) of every token piece of every span: the runs of letters
    and digits inside [start, end), cut at the span bounds (as `span_tokens`)."""
    n_points = len(alnum)
    previous_alnum = np.zeros(n_points, dtype=bool)
    previous_alnum[1:] = alnum[:-1]
    run_starts = np.flatnonzero(alnum & ~previous_alnum)
    breaks = np.append(np.flatnonzero(~alnum), n_points)
    if len(spans) == 0:
        empty = np.zeros(0, dtype=_INT)
        return empty, empty, empty
    head = alnum[spans.start]  # the span starts inside a run: its first piece starts at the span
    first_inner = np.searchsorted(run_starts, spans.start, side="right")
    stop_inner = np.searchsorted(run_starts, spans.end, side="left")
    per_span = (stop_inner - first_inner) + head
    span_index = np.repeat(np.arange(len(spans), dtype=_INT), per_span)
    position = np.arange(len(span_index), dtype=_INT) - np.repeat(np.cumsum(per_span) - per_span, per_span)
    is_head = head[span_index] & (position == 0)
    inner = first_inner[span_index] + position - head[span_index]
    # run_starts padded by one entry: head pieces compute an index they do not use.
    padded_run_starts = np.append(run_starts, 0)
    piece_start = np.where(
        is_head, spans.start[span_index], padded_run_starts[np.clip(inner, 0, len(run_starts))]
    )
    piece_end = np.minimum(breaks[np.searchsorted(breaks, piece_start, side="left")], spans.end[span_index])
    return piece_start, piece_end, span_index


def _nervaluate(
    gold: _Spans,
    pred: _Spans,
    gold_row: np.ndarray,
    counts: np.ndarray,
    rows: np.ndarray,
) -> None:
    """nervaluate's COR and INC per schema, per document (counts) and per type (rows).

    A prediction's candidates are the gold spans it overlaps sufficiently (`nervaluate_counts`). Where
    every prediction has at most one candidate and every gold span is the candidate of at most one
    prediction, nothing competes: each prediction with a candidate claims it, and the schemas only
    differ in whether bounds and type agree. Other documents get the reference walk.
    """
    n_gold, n_pred = len(gold), len(pred)
    if n_gold == 0 or n_pred == 0:
        return
    running_end = np.maximum.accumulate(gold.end)
    first = np.searchsorted(running_end, pred.start, side="right")
    stop = np.searchsorted(gold.start, pred.end, side="left")
    in_range = np.maximum(stop - first, 0)
    pair_pred = np.repeat(np.arange(n_pred, dtype=_INT), in_range)
    pair_gold = (
        np.arange(len(pair_pred), dtype=_INT)
        - np.repeat(np.cumsum(in_range) - in_range, in_range)
        + np.repeat(first, in_range)
    )
    gold_start, gold_end = gold.start[pair_gold], gold.end[pair_gold]
    pred_start, pred_end = pred.start[pair_pred], pred.end[pair_pred]
    overlap = np.minimum(pred_end, gold_end) - np.maximum(pred_start, gold_start)
    # nervaluate's own test, in the same floating point: (overlap / gold length) * 100.0 >= 1.0
    sufficient = (gold_end > pred_start) & ((overlap / (gold_end - gold_start)) * 100.0 >= 1.0)
    pair_pred, pair_gold = pair_pred[sufficient], pair_gold[sufficient]
    contended_docs = _distinct(
        np.concatenate(
            (
                pred.doc[np.bincount(pair_pred, minlength=n_pred) > 1],
                gold.doc[np.bincount(pair_gold, minlength=n_gold) > 1],
            )
        )
    )
    plain = ~_member(gold.doc[pair_gold], contended_docs)
    pair_pred, pair_gold = pair_pred[plain], pair_gold[plain]
    n_docs, n_rows = len(counts), len(rows)
    same_bounds = (gold.start[pair_gold] == pred.start[pair_pred]) & (
        gold.end[pair_gold] == pred.end[pair_pred]
    )
    same_type = gold.code[pair_gold] == pred.code[pair_pred]
    pair_doc = gold.doc[pair_gold]
    for column, agrees in ((25, same_bounds & same_type), (27, same_bounds), (29, same_type)):
        correct = _per(pair_doc[agrees], n_docs)
        counts[:, column] = correct
        counts[:, column + 1] = _per(pair_doc, n_docs) - correct
    typed_row = gold_row[pair_gold[same_type]]
    typed_exact = same_bounds[same_type]
    rows[:, 13] = _per(typed_row[typed_exact], n_rows)
    rows[:, 14] = _per(typed_row[~typed_exact], n_rows)
    rows[:, 15] = _per(typed_row, n_rows)

    gold_bounds = np.searchsorted(gold.doc, np.arange(n_docs + 1))
    pred_bounds = np.searchsorted(pred.doc, np.arange(n_docs + 1))
    for doc in contended_docs.tolist():
        g = slice(gold_bounds[doc], gold_bounds[doc + 1])
        p = slice(pred_bounds[doc], pred_bounds[doc + 1])
        gold_spans = list(
            zip(gold.local_start[g].tolist(), gold.local_end[g].tolist(), gold.code[g].tolist(), strict=True)
        )
        pred_spans = list(
            zip(pred.local_start[p].tolist(), pred.local_end[p].tolist(), pred.code[p].tolist(), strict=True)
        )
        # Type codes stand in for type names: they compare in the same order and are equal alike.
        strict, exact, _, ent_type = nervaluate_typed(gold_spans, pred_spans)
        counts[doc, 25:31] = (strict[0], strict[1], exact[0], exact[1], ent_type[0], ent_type[1])
        doc_rows = gold_row[g]
        for code in set(gold.code[g].tolist()):
            type_gold = [(start, end) for start, end, c in gold_spans if c == code]
            type_pred = [(start, end) for start, end, c in pred_spans if c == code]
            exact_counts, _, _, type_counts = nervaluate_one_type(type_gold, type_pred)
            row = doc_rows[gold.code[g] == code][0]
            rows[row, 13:16] = (exact_counts[0], exact_counts[1], type_counts[0])


def _score_table(
    columns: SpanColumns,
    counts: np.ndarray,
    rows: np.ndarray,
    row_doc: np.ndarray,
    row_code: np.ndarray,
    type_names: list[str],
    gold: _Spans,
    leaked: np.ndarray,
    scored_leak: np.ndarray,
    missed: np.ndarray,
    dropped: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> SpanScores:
    """The chunk's scores as columns, in 32 bits (a count past 2**31 fails loudly, not wrapping)."""
    leaked_index = np.flatnonzero(leaked)
    texts = columns.texts
    return SpanScores(
        document_ids=list(columns.document_ids),
        counts=_int32(counts),
        type_names=tuple(type_names),
        row_document=row_doc,
        row_type=row_code,
        rows=_int32(rows),
        leaked_document=gold.doc[leaked_index],
        leaked_start=gold.local_start[leaked_index],
        leaked_end=gold.local_end[leaked_index],
        leaked_type=gold.code[leaked_index],
        leaked_condition=(2 * scored_leak[leaked_index] + missed[leaked_index]).astype(np.int8),
        leaked_text=[
            texts[doc][start:end]
            for doc, start, end in zip(
                gold.doc[leaked_index].tolist(),
                gold.local_start[leaked_index].tolist(),
                gold.local_end[leaked_index].tolist(),
                strict=True,
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
