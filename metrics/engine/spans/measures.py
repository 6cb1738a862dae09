"""Ratios computed from counts, written once for numpy arrays.

The same function gives the micro value (applied to the summed counts) and the per-document values
that macro averages, so the two can never disagree on a formula. NaN marks "undefined" inside this
module; `aggregate` turns it into None (null), never into 0 (docs/semantics.md, general rules).
"""

from __future__ import annotations

import math

import numpy as np

Array = np.ndarray


def ratio(numerator: Array, denominator: Array) -> Array:
    """numerator / denominator as float64, NaN where denominator == 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def harmonic_f1(precision: Array, recall: Array) -> Array:
    """2PR/(P+R); 0 when P+R = 0; NaN (undefined) when P or R is undefined."""
    total = precision + recall
    out = np.full(total.shape, np.nan)
    np.divide(2 * (precision * recall), total, out=out, where=total > 0)
    out[total == 0] = 0.0
    return out


def confusion(tp: Array, fp: Array, fn: Array, tn: Array | None = None) -> dict[str, Array]:
    """precision = tp/(tp+fp), defined when tp+fp > 0; recall = tp/(tp+fn), defined when tp+fn > 0;
    f1 = 2tp/(2tp+fp+fn), defined when 2tp+fp+fn > 0 (so only false positives give f1 0);
    specificity = tn/(tn+fp), defined when tn+fp > 0 (only when tn is given)."""
    measures = {
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
    }
    if tn is not None:
        measures["specificity"] = ratio(tn, tn + fp)
    return measures


def existence(gt_total: Array, gt_matched: Array, pred_total: Array, pred_matched: Array) -> dict[str, Array]:
    """spans_exact / spans_overlap: precision = pred_matched/pred_total (defined when pred_total > 0),
    recall = gt_matched/gt_total (defined when gt_total > 0), f1 = 2PR/(P+R), 0 when P+R = 0 and
    undefined when P or R is undefined (a document with no gold, or no predictions, has no f1)."""
    precision = ratio(pred_matched, pred_total)
    recall = ratio(gt_matched, gt_total)
    return {"precision": precision, "recall": recall, "f1": harmonic_f1(precision, recall)}


def nervaluate_measures(
    correct: Array, incorrect: Array, partial: Array, missed: Array, spurious: Array, *, partial_credit: bool
) -> dict[str, Array]:
    """nervaluate 1.2.1's definitions: possible = COR+INC+PAR+MIS, actual = COR+INC+PAR+SPU;
    precision = COR/actual, recall = COR/possible, and with partial_credit (the partial and ent_type
    schemas) (COR + 0.5 PAR)/actual and /possible; f1 = 2PR/(P+R).

    Where nervaluate returns 0 for a zero denominator we return undefined (null): precision without
    predictions (actual = 0), recall without gold (possible = 0), and f1 when either is undefined;
    f1 is 0 when P+R = 0, as in nervaluate. Where defined, the values equal nervaluate's bit for bit
    (same operations in the same order)."""
    actual = correct + incorrect + partial + spurious
    possible = correct + incorrect + partial + missed
    credit = correct + 0.5 * partial if partial_credit else correct
    precision = ratio(credit, actual)
    recall = ratio(credit, possible)
    return {
        "possible": possible,
        "actual": actual,
        "precision": precision,
        "recall": recall,
        "f1": harmonic_f1(precision, recall),
    }


def family_measures(family: str, *counts: Array) -> dict[str, Array]:
    """The measures of a family of results.json (`score.FAMILIES`, or per type) from its counts."""
    if family.startswith("nervaluate."):
        return nervaluate_measures(*counts, partial_credit=family.endswith(("partial", "ent_type")))
    return existence(*counts) if family.startswith("spans_") else confusion(*counts)


def exactly_rounded_sum(values: Array) -> float:
    """`math.fsum(values)`: the exact sum of float64 values, rounded once, whatever their order.

    Without a Python float per value (a macro mean reads one value per document): a finite value is a
    53-bit integer times a power of two. The integers' 26-bit halves are
    summed per power of two by bincount, in floats that stay exact below 2**53, and the sums are
    joined as Python integers and divided once. Negative or non-finite values go to fsum.
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(values) >= 1 << 26 or not (np.isfinite(values).all() and (values >= 0).all()):
        return math.fsum(values.tolist())
    values = values[values > 0]
    if len(values) == 0:
        return 0.0
    fraction, exponent = np.frexp(values)  # value = fraction * 2**exponent, 0.5 <= fraction < 1
    whole = (fraction * 2.0**53).astype(np.int64)
    lowest = int(exponent.min())
    power = exponent - lowest
    high = np.bincount(power, weights=whole >> 26)
    low = np.bincount(power, weights=whole & ((1 << 26) - 1))
    total = 0
    for shift in np.flatnonzero(high + low).tolist():
        total += ((int(high[shift]) << 26) + int(low[shift])) << shift
    scale = lowest - 53
    return float(total << scale) if scale >= 0 else total / (1 << -scale)
