"""User-chosen extra metrics: `sklearn.metrics` functions named per evaluation.

Scope: a custom metric exists only in the evaluation whose settings name it. Names are resolved to
functions each time; nothing is registered at module level, so a metric asked for in one evaluation
never appears in the next one run by the same process.

Applicability: custom metrics are computed on BOOL attributes only, with the gold values as `y_true`
and the predictions as `y_pred` (positive = True). On STRING / INTEGER / FLOAT a binary metric would
have to be taken over per-row correctness, where `y_true` is all True: recall would equal accuracy,
precision would be 1 or undefined, and kappa-like metrics undefined. Such numbers mislead, so those
attributes simply do not get custom metrics.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from numbers import Real

import numpy as np

CustomMetric = Callable[..., object]

# Default BOOL metrics whose names are also sklearn function names; asking for them again would give
# two values under one column.
_DEFAULT_NAMES = frozenset({"f1_score"})

_PROBE_TRUE = np.array([True, False, True, False, True])
_PROBE_PRED = np.array([True, True, False, False, True])


def _as_float(value: object) -> float | None:
    """A finite real scalar as float; None otherwise (arrays, tuples, NaN, booleans)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real | np.number):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def resolve_custom_metrics(names: Iterable[str]) -> dict[str, CustomMetric]:
    """Map each distinct name to its `sklearn.metrics` function, in alphabetical order.

    Raise ValueError when a name is not a public `sklearn.metrics` function, is a default metric
    already, or does not return a float for binary input (e.g. `confusion_matrix`).
    """
    requested = sorted({name.strip() for name in names})
    if not requested:
        return {}
    # Imported only when asked for: importing scikit-learn costs most of a second.
    import sklearn.metrics

    public = set(getattr(sklearn.metrics, "__all__", ()))
    resolved: dict[str, CustomMetric] = {}
    for name in requested:
        if name in _DEFAULT_NAMES:
            raise ValueError(f"custom metric {name!r} is already computed by default; remove it")
        function = getattr(sklearn.metrics, name, None) if name in public else None
        if not callable(function):
            raise ValueError(
                f"unknown custom metric {name!r}: expected the name of a sklearn.metrics function "
                "such as 'matthews_corrcoef', 'cohen_kappa_score' or 'balanced_accuracy_score'"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                probe = function(_PROBE_TRUE, _PROBE_PRED)
        except Exception as error:  # any failure means the function is not a binary metric
            raise ValueError(f"custom metric {name!r} cannot score binary labels: {error}") from None
        if _as_float(probe) is None:
            raise ValueError(f"custom metric {name!r} does not return a float for binary labels")
        resolved[name] = function
    return resolved


def custom_metric_value(function: CustomMetric, y_true: np.ndarray, y_pred: np.ndarray) -> float | None:
    """`function(y_true, y_pred)` of boolean arrays (rows of a set that has some); None when the call
    fails, or sklearn warns that the metric is undefined (it would otherwise return a misleading 0)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = function(y_true, y_pred)
        except (ValueError, ZeroDivisionError):
            return None
    if any(warning.category.__name__ == "UndefinedMetricWarning" for warning in caught):
        return None
    return _as_float(value)
