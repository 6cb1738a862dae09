"""The measures of each family of counts in results.json, written once for the point value and the interval.

A family's measures read its `<family>.<count>` columns: applied to the summed counts they give micro,
to the per-document counts the values that macro averages, and to resampled sums the bootstrap's
values. NaN marks "undefined"; `aggregate` turns it into None (null), never into 0 (docs/semantics.md,
general rules).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from metrics.engine.uncertainty.measures import HarmonicMean, Measure, Total, f1, precision, ratio, recall


def family_measures(family: str, names: Sequence[str]) -> dict[str, Measure]:
    """The measures of a family of results.json (`score.FAMILIES`, or per type) with counts `names`.

    The confusion and existence (spans_*) measures are docs/semantics.md's ("Counts and ratios",
    "Families"); an existence f1 is undefined where P or R is.

    nervaluate 1.2.1: possible = COR+INC+PAR+MIS, actual = COR+INC+PAR+SPU; precision = COR/actual,
    recall = COR/possible, and with partial credit (the partial and ent_type schemas) (COR + 0.5 PAR)/
    actual and /possible; f1 = 2PR/(P+R). Where nervaluate returns 0 for a zero denominator we return
    undefined (null): precision without predictions, recall without gold, and f1 when either is
    undefined; f1 is 0 when P+R = 0, as in nervaluate. Where defined, the values equal nervaluate's bit
    for bit (same operations in the same order).
    """
    column = dict(zip(names, (f"{family}.{name}" for name in names), strict=True))
    if family.startswith("nervaluate."):
        cor, inc, par, mis, spu = column.values()
        credit = {cor: 1.0, par: 0.5} if family.endswith(("partial", "ent_type")) else {cor: 1.0}
        possible = Total({cor: 1.0, inc: 1.0, par: 1.0, mis: 1.0})
        actual = Total({cor: 1.0, inc: 1.0, par: 1.0, spu: 1.0})
        of_predictions, of_gold = ratio(credit, actual), ratio(credit, possible)
        return {
            "possible": possible,
            "actual": actual,
            "precision": of_predictions,
            "recall": of_gold,
            "f1": HarmonicMean(of_predictions, of_gold),
        }
    if family.startswith("spans_"):
        of_predictions = ratio(column["pred_matched"], column["pred_total"])
        of_gold = ratio(column["gt_matched"], column["gt_total"])
        return {"precision": of_predictions, "recall": of_gold, "f1": HarmonicMean(of_predictions, of_gold)}
    tp, fp, fn = column["tp"], column["fp"], column["fn"]
    measures: dict[str, Measure] = {
        "precision": precision(tp, fp),
        "recall": recall(tp, fn),
        "f1": f1(tp, fp, fn),
    }
    if "tn" in column:
        measures["specificity"] = ratio(column["tn"], {column["tn"]: 1.0, fp: 1.0})
    return measures


def exactly_rounded_sum(values: np.ndarray) -> float:
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
