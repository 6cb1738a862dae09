"""Chance-corrected agreement as measures of summed per-document counts, so that the uncertainty
module's cluster bootstrap resamples them like any other metric (`uncertainty.measures.Measure`).

Each statistic below depends on the data only through sums over units (characters, or documents for
attributes), and units belong to documents, so per-document sums add up to the whole:

- Cohen's kappa for two annotators a and b over N units:
      p_o = agree / N,  p_e = sum_c a_c * b_c / N**2,  kappa = (p_o - p_e) / (1 - p_e)
  (a_c: units a labelled c). Undefined (NaN) when N = 0 or p_e = 1 (both gave one and the same label
  everywhere). Columns: `<prefix>.units`, `<prefix>.agree`, `<prefix>.a.<c>`, `<prefix>.b.<c>`.
- Krippendorff's alpha, every unit u with m_u >= 2 values (n = sum m_u pairable values):
      alpha = 1 - (n - 1) * D / E
  nominal: D = sum_u (m_u**2 - sum_c n_uc**2) / (m_u - 1) (disagreeing ordered pairs per unit),
           E = n**2 - sum_c n_c**2;
  interval: D = sum_u sum_{i != j} (v_i - v_j)**2 / (m_u - 1),  E = 2 n sum v**2 - 2 (sum v)**2.
  Undefined when E = 0 (a single value everywhere). Columns: `<prefix>.observed` (D) and, nominal,
  `<prefix>.n.<c>`; interval, `<prefix>.n`, `<prefix>.sum`, `<prefix>.sum_squares`.
The libraries (`agreement.libraries`) give the point values; these their intervals (docs/agreement.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metrics.engine.spans.measures import family_measures
from metrics.engine.spans.score import EXISTENCE_NAMES
from metrics.engine.uncertainty.measures import Sums, divided, summed


@dataclass(frozen=True, slots=True)
class CohenKappa:
    """Cohen's kappa from `<prefix>.*` sums (module docstring)."""

    prefix: str
    labels: Sequence[str]

    @property
    def columns(self) -> frozenset[str]:
        marginals = {f"{self.prefix}.{side}.{label}" for side in ("a", "b") for label in self.labels}
        return frozenset({f"{self.prefix}.units", f"{self.prefix}.agree", *marginals})

    def __call__(self, sums: Sums) -> np.ndarray:
        units = summed(sums, f"{self.prefix}.units")
        chance = sum(
            summed(sums, f"{self.prefix}.a.{label}") * summed(sums, f"{self.prefix}.b.{label}")
            for label in self.labels
        )
        observed = divided(summed(sums, f"{self.prefix}.agree"), units)
        expected = divided(np.asarray(chance, dtype=np.float64) + 0.0 * units, units**2)
        return divided(observed - expected, 1.0 - expected)


@dataclass(frozen=True, slots=True)
class NominalAlpha:
    """Krippendorff's alpha, nominal, from `<prefix>.observed` and `<prefix>.n.<value>` sums."""

    prefix: str
    values: Sequence[str]

    @property
    def columns(self) -> frozenset[str]:
        return frozenset({f"{self.prefix}.observed", *(f"{self.prefix}.n.{value}" for value in self.values)})

    def __call__(self, sums: Sums) -> np.ndarray:
        per_value = [summed(sums, f"{self.prefix}.n.{value}") for value in self.values]
        n = sum(per_value, np.zeros_like(summed(sums, f"{self.prefix}.observed")))
        expected = n**2 - sum((count**2 for count in per_value), np.zeros_like(n))
        return 1.0 - divided((n - 1.0) * summed(sums, f"{self.prefix}.observed"), expected)


@dataclass(frozen=True, slots=True)
class IntervalAlpha:
    """Krippendorff's alpha, interval, from `<prefix>.{observed,n,sum,sum_squares}` sums."""

    prefix: str

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(f"{self.prefix}.{name}" for name in ("observed", "n", "sum", "sum_squares"))

    def __call__(self, sums: Sums) -> np.ndarray:
        n = summed(sums, f"{self.prefix}.n")
        total = summed(sums, f"{self.prefix}.sum")
        expected = 2.0 * n * summed(sums, f"{self.prefix}.sum_squares") - 2.0 * total**2
        # Sums of squares of floats: a difference of rounding size means "no spread at all".
        expected = np.where(
            np.abs(expected) <= 1e-9 * np.maximum(1.0, n * summed(sums, f"{self.prefix}.sum_squares")),
            0.0,
            expected,
        )
        return 1.0 - divided((n - 1.0) * summed(sums, f"{self.prefix}.observed"), expected)


def kappa_counts(prefix: str, a: np.ndarray, b: np.ndarray, labels: Sequence[str]) -> dict[str, float]:
    """One document's Cohen's kappa sums for the label indexes `a` and `b` (same length)."""
    row = {f"{prefix}.units": float(a.size), f"{prefix}.agree": float(np.count_nonzero(a == b))}
    for side, values in (("a", a), ("b", b)):
        counts = np.bincount(values, minlength=len(labels))
        for index, label in enumerate(labels):
            if counts[index]:
                row[f"{prefix}.{side}.{label}"] = float(counts[index])
    return row


def nominal_alpha_counts(prefix: str, value_counts: np.ndarray, values: Sequence[str]) -> dict[str, float]:
    """One document's nominal alpha sums from its units x values count matrix (units with m_u < 2 are
    not pairable and are left out)."""
    m = value_counts.sum(axis=1)
    pairable = m >= 2
    counts, m = value_counts[pairable], m[pairable]
    observed = float(np.sum((m**2 - np.sum(counts**2, axis=1)) / (m - 1))) if m.size else 0.0
    row = {f"{prefix}.observed": observed}
    totals = counts.sum(axis=0)
    for index, value in enumerate(values):
        if totals[index]:
            row[f"{prefix}.n.{value}"] = float(totals[index])
    return row


def interval_alpha_counts(prefix: str, values: Sequence[float]) -> dict[str, float]:
    """One document's interval alpha sums from the values of its one unit (at least two)."""
    array = np.asarray(values, dtype=np.float64)
    total, squares = float(np.sum(array)), float(np.sum(array**2))
    return {
        f"{prefix}.observed": (2.0 * array.size * squares - 2.0 * total**2) / (array.size - 1),
        f"{prefix}.n": float(array.size),
        f"{prefix}.sum": total,
        f"{prefix}.sum_squares": squares,
    }


@dataclass(frozen=True, slots=True)
class PairF1:
    """F1 between two annotators from the span engine's existence counts of `<family>.*`:
    2PR / (P + R) with P = pred_matched / pred_total and R = gt_matched / gt_total. Between annotators
    one side without any span while the other has some is no agreement at all: 0, not undefined (the
    engine's rule for a model without predictions). Undefined (NaN) only when neither has a span."""

    family: str

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(f"{self.family}.{name}" for name in EXISTENCE_NAMES)

    def __call__(self, sums: Sums) -> np.ndarray:
        values = family_measures(self.family, EXISTENCE_NAMES)["f1"](sums)
        gold, predicted = (summed(sums, f"{self.family}.{name}") for name in ("gt_total", "pred_total"))
        values[(gold == 0) != (predicted == 0)] = 0.0
        return values
