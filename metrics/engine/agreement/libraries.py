"""The point estimates, from the maintained libraries: scikit-learn's Cohen's kappa and the
`krippendorff` package's alpha. The bootstrap intervals resample the same statistics written as
measures of summed counts (`agreement.measures`); tests hold the two equal on the full data."""

from __future__ import annotations

import krippendorff
import numpy as np

from metrics.engine.uncertainty.measures import number_or_none


def library_kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """scikit-learn's Cohen's kappa; null where it is undefined (a single label on both sides)."""
    # Imported here, not with the module: every manage.py command and worker imports this module (the
    # app's tasks), and scikit-learn took 0.6 s and 90 MB of each, though only agreement uses it.
    from sklearn.metrics import cohen_kappa_score

    if a.size == 0 or (np.all(a == a[0]) and np.all(b == a[0])):
        return None
    return number_or_none(cohen_kappa_score(a, b))


def library_alpha(reliability: np.ndarray, level: str, *, value_domain: list | None = None) -> float | None:
    """The `krippendorff` package's alpha (annotators x units, NaN missing); null where undefined: no
    unit with two values, or one value everywhere."""
    pairable = np.count_nonzero(~np.isnan(reliability), axis=0) >= 2
    present = reliability[:, pairable]
    distinct = np.unique(present[~np.isnan(present)])
    if distinct.size < 2:
        return None
    return number_or_none(
        krippendorff.alpha(
            reliability_data=reliability, level_of_measurement=level, value_domain=value_domain
        )
    )
