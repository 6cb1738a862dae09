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

Only gold spans that overlap a prediction can match it, so instead of nervaluate's full inner loop the
walk visits, in list order, each prediction's candidates (the scorer finds them for every prediction
at once): same visits in the same order, minus the ones that could not match. The walks give (correct, incorrect); the other counts follow (`score`).
"""

from __future__ import annotations

from collections.abc import Sequence

Claims = tuple[int, int]  # (correct, incorrect)

SCHEMAS = ("strict", "exact", "partial", "ent_type")
COUNT_NAMES = ("correct", "incorrect", "partial", "missed", "spurious")


class _Claims:
    """One schema's walk: which gold spans are claimed, and its COR and INC so far."""

    __slots__ = ("claimed", "correct", "incorrect")

    def __init__(self, n_gold: int) -> None:
        self.claimed = [False] * n_gold
        self.correct = self.incorrect = 0

    def claim(self, candidates: list[int], agrees: list[bool], distance: list[int]) -> None:
        """Of the unclaimed candidates, the agreeing one at the smallest distance (the first on ties) is
        COR; else the first other is INC; with none the prediction is SPU. strict and exact: agreeing
        bounds (and type), every candidate at distance 0; ent_type: the same type, at the boundary
        distance."""
        first_other = closest = -1
        closest_distance = 0
        for k, agree, how_far in zip(candidates, agrees, distance, strict=True):
            if self.claimed[k]:
                continue
            if agree:
                if closest < 0 or how_far < closest_distance:
                    closest, closest_distance = k, how_far
            elif first_other < 0:
                first_other = k
        if closest >= 0:
            self.correct += 1
            self.claimed[closest] = True
        elif first_other >= 0:
            self.incorrect += 1
            self.claimed[first_other] = True

    def counts(self) -> Claims:
        return self.correct, self.incorrect


def nervaluate_typed(
    gold: Sequence[tuple[int, int, object]],
    predicted: Sequence[tuple[int, int, object]],
    candidates_of: Sequence[list[int]],
) -> tuple[Claims, Claims, Claims]:
    """strict, exact and ent_type claims of one document; both lists sorted, `candidates_of[i]` the
    gold spans prediction i overlaps sufficiently, in list order. Types may be any values
    that compare as their names do (the batch passes type codes). Of one type's spans alone, these are
    nervaluate's per-type results: strict is exact, and ent_type finds no INC."""
    n_gold = len(gold)
    strict, exact, ent_type = _Claims(n_gold), _Claims(n_gold), _Claims(n_gold)
    for prediction, candidates in zip(predicted, candidates_of, strict=True):
        start, end, label = prediction
        # No candidate: every rule below finds nothing to claim, and counts SPU.
        anywhere = [0] * len(candidates)
        strict.claim(candidates, [gold[k] == prediction for k in candidates], anywhere)
        exact.claim(candidates, [gold[k][0] == start and gold[k][1] == end for k in candidates], anywhere)
        ent_type.claim(
            candidates,
            [gold[k][2] == label for k in candidates],
            [abs(start - gold[k][0]) + abs(end - gold[k][1]) for k in candidates],
        )
    return strict.counts(), exact.counts(), ent_type.counts()
