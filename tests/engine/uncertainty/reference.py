"""The bootstrap weights by their definition, for tests to check the resampling against."""

from __future__ import annotations

import numpy as np


def reference_weights(n_documents: int, resamples: int, seed: int) -> np.ndarray:
    """Entry [r, i]: how often resample r draws document i, when every resample draws its n documents
    as `default_rng(seed).integers(0, n, size=n)`, one resample after the other."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((resamples, n_documents), dtype=np.float64)
    for row in weights:
        row[:] = np.bincount(rng.integers(0, n_documents, size=n_documents), minlength=n_documents)
    return weights
