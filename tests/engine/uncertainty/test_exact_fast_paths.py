"""Clopper–Pearson through scipy.special's beta quantile equals scipy.stats.beta.ppf, bit for bit."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics.engine.uncertainty.exact import clopper_pearson


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=200_000),
    share=st.floats(min_value=0.0, max_value=1.0),
    level=st.floats(min_value=0.5, max_value=0.999),
)
def test_clopper_pearson_bounds_equal_scipy_stats_beta_ppf_exactly(n, share, level):
    k = round(share * n)
    interval = clopper_pearson(k, n, level)
    alpha = 1.0 - level
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    assert (interval.low, interval.high) == (low, high)


def test_span_evaluation_imports_without_scipy_stats():
    code = "import sys, metrics.pipeline.span_evaluation; print('scipy.stats' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
