"""Exact and multiplicity methods: Clopper–Pearson intervals, the exact McNemar test, Holm's adjustment."""

from __future__ import annotations

from collections.abc import Sequence

from .bootstrap import DEFAULT_LEVEL, Interval

CLOPPER_PEARSON_METHOD = "clopper_pearson"


def clopper_pearson(k: int, n: int, level: float = DEFAULT_LEVEL) -> Interval:
    """Exact binomial interval for k successes in n trials (leakage rates: leaked documents / documents).

    low = Beta(alpha/2; k, n - k + 1) quantile (0 when k = 0), high = Beta(1 - alpha/2; k + 1, n - k)
    quantile (1 when k = n), alpha = 1 - level. Null when n = 0 (no rate to bound).
    """
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(None, None, level, CLOPPER_PEARSON_METHOD)
    # scipy.stats costs seconds to import, most of a small evaluation; for these arguments its
    # `beta.ppf` is exactly this ufunc (Boost's ibeta_inv), for a fraction of the import (tests pin
    # the equality).
    from scipy.special._ufuncs import _beta_ppf

    alpha = 1.0 - level
    low = 0.0 if k == 0 else float(_beta_ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(_beta_ppf(1 - alpha / 2, k + 1, n - k))
    return Interval(low, high, level, CLOPPER_PEARSON_METHOD)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs.

    Under the null each discordant pair falls either way with probability 1/2, so p is the two-sided
    binomial test of b successes in b + c trials (`scipy.stats.binomtest`); 1 when b + c = 0.
    """
    if b + c == 0:
        return 1.0
    from scipy import stats  # imported here: seconds of start-up that only comparisons need

    return float(stats.binomtest(int(b), int(b + c), 0.5, alternative="two-sided").pvalue)


def holm_adjust(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment, in the input order; None stays None and is not counted.

    With the m defined p-values sorted ascending p_(1) <= ... <= p_(m): adjusted p_(i) =
    min(1, max over j <= i of (m - j + 1) p_(j)). The running maximum keeps the adjusted values in the
    same order as the raw ones.
    """
    defined = sorted((p, index) for index, p in enumerate(p_values) if p is not None)
    for p, _ in defined:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    adjusted: list[float | None] = [None] * len(p_values)
    m = len(defined)
    running = 0.0
    for rank, (p, index) in enumerate(defined):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted
