"""MUC / SemEval-2013 counts for one document, replicating nervaluate 1.2.1 exactly.

nervaluate 1.2.1 (`strategies.py`) walks the predictions in list order; for each one it walks the
gold spans in list order, skipping gold spans an earlier prediction already claimed, and:

- strict: a gold span with equal bounds and type is COR (stop); otherwise the first unclaimed gold
  span with "sufficient overlap" is claimed as INC; with none the prediction is SPU.
- exact: the same with bounds only.
- partial: equal bounds is COR, else the first sufficiently overlapping unclaimed gold span is PAR.
  As equal bounds always overlap sufficiently, partial's counts are exact's with INC renamed PAR.
- ent_type: among unclaimed sufficiently overlapping gold spans of the same type, the one with the
  smallest |start difference| + |end difference| (the first on ties) is COR; else the first
  sufficiently overlapping unclaimed gold span of another type is INC; else SPU.

Unclaimed gold spans are MIS. "Sufficient overlap" (min_overlap_percentage = 1.0, its default) is
`overlap / gold length * 100.0 >= 1.0` in floating point, so a one-character overlap with a gold span
longer than 100 code points does not count: a quirk kept on purpose, the numbers must agree.

Its inclusive end (`end - 1`) changes no comparison here: overlap lengths, gold lengths and boundary
distances are the same computed from exclusive ends, and the sort order is the same.

Only gold spans that overlap a prediction can match it, so instead of nervaluate's full inner loop we
visit, in list order, the gold spans whose start is before the prediction's end and whose running
maximum end is past its start (two bisections): same visits in the same order, minus the ones that
could not match.

Each count tuple is (correct, incorrect, partial, missed, spurious).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

NervalCounts = tuple[int, int, int, int, int]

SCHEMAS = ("strict", "exact", "partial", "ent_type")
COUNT_NAMES = ("correct", "incorrect", "partial", "missed", "spurious")


def _candidates(gold: Sequence[tuple], first: int, stop: int, start: int, end: int) -> list[int]:
    """Indices, in list order, of gold[first:stop] spans overlapping [start, end) sufficiently for
    nervaluate; gold[first:stop] are the spans that start before `end` and whose running maximum end
    is past `start` (found by bisection)."""
    found = []
    for k in range(first, stop):
        gold_start, gold_end = gold[k][0], gold[k][1]
        if gold_end > start:
            overlap = (end if end < gold_end else gold_end) - (start if start > gold_start else gold_start)
            # nervaluate's own expression (overlap_span / true_span) * 100.0 >= min_overlap_percentage
            if (overlap / (gold_end - gold_start)) * 100.0 >= 1.0:
                found.append(k)
    return found


def _all_correct(n: int) -> tuple[NervalCounts, NervalCounts, NervalCounts, NervalCounts]:
    # Identical sorted lists: each prediction meets its own gold copy first among the unclaimed.
    counts = (n, 0, 0, 0, 0)
    return counts, counts, counts, counts


def nervaluate_typed(
    gold: Sequence[tuple[int, int, str]], predicted: Sequence[tuple[int, int, str]]
) -> tuple[NervalCounts, NervalCounts, NervalCounts, NervalCounts]:
    """strict, exact, partial and ent_type counts of one document; both lists sorted."""
    n_gold = len(gold)
    if not predicted or not n_gold:
        counts = (0, 0, 0, n_gold, len(predicted))
        return counts, counts, counts, counts
    if gold == predicted:
        return _all_correct(n_gold)
    gold_starts = [g[0] for g in gold]
    running_max_end = list(accumulate((g[1] for g in gold), max))
    strict_claimed = [False] * n_gold
    exact_claimed = [False] * n_gold
    type_claimed = [False] * n_gold
    strict_cor = strict_inc = strict_spu = 0
    exact_cor = exact_inc = exact_spu = 0
    type_cor = type_inc = type_spu = 0
    for prediction in predicted:
        start, end, label = prediction
        first = bisect_right(running_max_end, start)
        stop = bisect_left(gold_starts, end)
        if stop - first == 1:
            # One gold span in range, the usual case: _candidates without the call.
            gold_start, gold_end = gold[first][0], gold[first][1]
            overlap = (end if end < gold_end else gold_end) - (start if start > gold_start else gold_start)
            candidates = (
                [first] if gold_end > start and (overlap / (gold_end - gold_start)) * 100.0 >= 1.0 else []
            )
        elif stop > first:
            candidates = _candidates(gold, first, stop, start, end)
        else:
            candidates = []
        if not candidates:
            strict_spu += 1
            exact_spu += 1
            type_spu += 1
            continue
        if len(candidates) == 1:
            # The usual case, the loops below reduced to their one step.
            k = candidates[0]
            gold_start, gold_end, gold_label = gold[k]
            same_bounds = gold_start == start and gold_end == end
            same_label = gold_label == label
            if strict_claimed[k]:
                strict_spu += 1
            else:
                strict_claimed[k] = True
                if same_bounds and same_label:
                    strict_cor += 1
                else:
                    strict_inc += 1
            if exact_claimed[k]:
                exact_spu += 1
            else:
                exact_claimed[k] = True
                if same_bounds:
                    exact_cor += 1
                else:
                    exact_inc += 1
            if type_claimed[k]:
                type_spu += 1
            else:
                type_claimed[k] = True
                if same_label:
                    type_cor += 1
                else:
                    type_inc += 1
            continue

        first_other = -1
        for k in candidates:
            if strict_claimed[k]:
                continue
            if gold[k] == prediction:
                strict_cor += 1
                strict_claimed[k] = True
                break
            if first_other < 0:
                first_other = k
        else:
            if first_other >= 0:
                strict_inc += 1
                strict_claimed[first_other] = True
            else:
                strict_spu += 1

        first_other = -1
        for k in candidates:
            if exact_claimed[k]:
                continue
            if gold[k][0] == start and gold[k][1] == end:
                exact_cor += 1
                exact_claimed[k] = True
                break
            if first_other < 0:
                first_other = k
        else:
            if first_other >= 0:
                exact_inc += 1
                exact_claimed[first_other] = True
            else:
                exact_spu += 1

        first_other = -1
        closest = -1
        closest_distance = 0
        for k in candidates:
            if type_claimed[k]:
                continue
            gold_start, gold_end, gold_label = gold[k]
            if gold_label == label:
                distance = abs(start - gold_start) + abs(end - gold_end)
                if closest < 0 or distance < closest_distance:
                    closest = k
                    closest_distance = distance
            elif first_other < 0:
                first_other = k
        if closest >= 0:
            type_cor += 1
            type_claimed[closest] = True
        elif first_other >= 0:
            type_inc += 1
            type_claimed[first_other] = True
        else:
            type_spu += 1

    strict_mis = n_gold - sum(strict_claimed)
    exact_mis = n_gold - sum(exact_claimed)
    return (
        (strict_cor, strict_inc, 0, strict_mis, strict_spu),
        (exact_cor, exact_inc, 0, exact_mis, exact_spu),
        (exact_cor, 0, exact_inc, exact_mis, exact_spu),
        (type_cor, type_inc, 0, n_gold - sum(type_claimed), type_spu),
    )


def nervaluate_one_type(
    gold: Sequence[tuple[int, int]], predicted: Sequence[tuple[int, int]]
) -> tuple[NervalCounts, NervalCounts, NervalCounts, NervalCounts]:
    """The four schemas' counts when every span has the same type (nervaluate's per-type results).

    With a single type, strict is exact and ent_type never finds an INC; both lists sorted.
    """
    n_gold = len(gold)
    if not predicted or not n_gold:
        counts = (0, 0, 0, n_gold, len(predicted))
        return counts, counts, counts, counts
    if gold == predicted:
        return _all_correct(n_gold)
    gold_starts = [g[0] for g in gold]
    running_max_end = list(accumulate((g[1] for g in gold), max))
    exact_claimed = [False] * n_gold
    type_claimed = [False] * n_gold
    exact_cor = exact_inc = exact_spu = 0
    type_cor = type_spu = 0
    for prediction in predicted:
        start, end = prediction
        first = bisect_right(running_max_end, start)
        stop = bisect_left(gold_starts, end)
        if stop - first == 1:
            # One gold span in range, the usual case: _candidates without the call.
            gold_start, gold_end = gold[first][0], gold[first][1]
            overlap = (end if end < gold_end else gold_end) - (start if start > gold_start else gold_start)
            candidates = (
                [first] if gold_end > start and (overlap / (gold_end - gold_start)) * 100.0 >= 1.0 else []
            )
        elif stop > first:
            candidates = _candidates(gold, first, stop, start, end)
        else:
            candidates = []
        if not candidates:
            exact_spu += 1
            type_spu += 1
            continue
        if len(candidates) == 1:
            # The usual case, the loops below reduced to their one step.
            k = candidates[0]
            if exact_claimed[k]:
                exact_spu += 1
            else:
                exact_claimed[k] = True
                if gold[k] == prediction:
                    exact_cor += 1
                else:
                    exact_inc += 1
            if type_claimed[k]:
                type_spu += 1
            else:
                type_claimed[k] = True
                type_cor += 1
            continue

        first_other = -1
        for k in candidates:
            if exact_claimed[k]:
                continue
            if gold[k] == prediction:
                exact_cor += 1
                exact_claimed[k] = True
                break
            if first_other < 0:
                first_other = k
        else:
            if first_other >= 0:
                exact_inc += 1
                exact_claimed[first_other] = True
            else:
                exact_spu += 1

        closest = -1
        closest_distance = 0
        for k in candidates:
            if type_claimed[k]:
                continue
            distance = abs(start - gold[k][0]) + abs(end - gold[k][1])
            if closest < 0 or distance < closest_distance:
                closest = k
                closest_distance = distance
        if closest >= 0:
            type_cor += 1
            type_claimed[closest] = True
        else:
            type_spu += 1

    exact = (exact_cor, exact_inc, 0, n_gold - sum(exact_claimed), exact_spu)
    return (
        exact,
        exact,
        (exact_cor, 0, exact_inc, exact[3], exact_spu),
        (type_cor, 0, 0, n_gold - sum(type_claimed), type_spu),
    )
