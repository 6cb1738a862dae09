"""Coverage by simulation: a 95% interval must cover the truth in about 95% of data sets.

Each test draws 1,000 data sets from a model with a known true value, computes the 95% cluster
bootstrap interval of each with 500 resamples (a quarter of the production default, to keep the test
fast; the Monte-Carlo error of the bounds is then a small fraction of their width), and counts how often
the truth lies inside. With 1,000 data sets the binomial standard error of a 95% coverage is 0.7 points,
so 93–97% is a band of about three standard errors. Seeds are fixed, so the test is deterministic.
"""

from __future__ import annotations

import numpy as np

from metrics.engine.uncertainty.counts import DocumentCounts
from metrics.engine.uncertainty.measures import f1, ratio
from tests.engine.uncertainty.reference import cluster_bootstrap_ci

DATA_SETS = 1_000
RESAMPLES = 500


def coverage(data_sets, metric, truth: float) -> float:
    covered = 0
    for index, counts in enumerate(data_sets):
        interval = cluster_bootstrap_ci(counts, metric, resamples=RESAMPLES, seed=index)
        covered += interval.low <= truth <= interval.high
    return covered / DATA_SETS


def test_accuracy_intervals_cover_a_binomial_truth_95_percent_of_the_time():
    # 250 documents, one row each, each right with probability 0.8.
    rng = np.random.default_rng(20260808)
    n_documents, truth = 250, 0.8
    ids = [f"doc-{i}" for i in range(n_documents)]
    data_sets = (
        DocumentCounts(ids, {"correct": rng.random(n_documents) < truth, "rows": np.ones(n_documents)})
        for _ in range(DATA_SETS)
    )
    observed = coverage(data_sets, ratio("correct", "rows"), truth)
    assert 0.93 <= observed <= 0.97


def test_f1_intervals_cover_a_clustered_truth_95_percent_of_the_time():
    # 200 documents. Each has Poisson(4) gold spans found with a document-level probability drawn from
    # Beta(4, 1) (mean 0.8: some documents are hard), and Gamma(2, 0.5) false positives on average
    # (mean 1): spans of one document are correlated. The population F1 is
    # 2 E[tp] / (2 E[tp] + E[fp] + E[fn]) = 2 * 3.2 / (6.4 + 1 + 0.8) = 0.7805.
    rng = np.random.default_rng(8)
    n_documents = 200
    truth = 2 * 3.2 / (2 * 3.2 + 1.0 + 0.8)
    ids = [f"doc-{i}" for i in range(n_documents)]

    def data_set() -> DocumentCounts:
        gold = rng.poisson(4, n_documents)
        tp = rng.binomial(gold, rng.beta(4, 1, n_documents))
        fp = rng.poisson(rng.gamma(2, 0.5, n_documents))
        return DocumentCounts(ids, {"tp": tp, "fp": fp, "fn": gold - tp})

    observed = coverage((data_set() for _ in range(DATA_SETS)), f1("tp", "fp", "fn"), truth)
    assert 0.93 <= observed <= 0.97
