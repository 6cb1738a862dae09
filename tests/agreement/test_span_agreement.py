"""Span agreement between three annotators of an INCEpTION export (metrics.engine.agreement)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotations.importers.sources import InMemorySource
from annotations.importers.spans import load_span_corpus
from metrics.engine.agreement.spans import AnnotatedDocument, span_agreement
from metrics.pipeline.agreement_evaluation import annotated_documents
from metrics.pipeline.intervals import IntervalSettings
from tests.agreement.export import ANNOTATIONS, TEXTS, character_labels_by_hand, export_zip

SHARED = ["doc-1", "doc-2"]


@pytest.fixture(scope="module")
def agreement():
    corpus = load_span_corpus(InMemorySource("export.zip", export_zip()))
    return span_agreement(annotated_documents(corpus.documents), settings=IntervalSettings(resamples=200))


def _pair(agreement, a, b):
    return next(pair for pair in agreement["pairs"] if (pair["a"], pair["b"]) == (a, b))


def test_every_pair_of_the_three_annotators_is_reported(agreement):
    assert [(pair["a"], pair["b"]) for pair in agreement["pairs"]] == [
        ("alice", "bob"),
        ("alice", "carol"),
        ("bob", "carol"),
    ]
    assert agreement["overall"]["annotators"] == ["alice", "bob", "carol"]


def test_a_document_only_one_annotator_worked_on_is_listed_and_left_out(agreement):
    assert agreement["single_annotator_documents"] == ["doc-3"]
    assert agreement["overall"]["documents"] == 2
    assert all(pair["documents"] == 2 for pair in agreement["pairs"])


def test_pairwise_f1_equals_a_hand_count(agreement):
    # alice/bob: 4 spans each. Exact bounds: Max Muster and 555-1234 match on both sides: P = R = 2/4.
    # Overlap: Eva Berg / Eva also match: P = R = 3/4. Typed: as exact (the two matches agree on type).
    alice_bob = _pair(agreement, "alice", "bob")
    assert alice_bob["f1_exact"] == pytest.approx(0.5)
    assert alice_bob["f1_overlap"] == pytest.approx(0.75)
    assert alice_bob["f1_typed"] == pytest.approx(0.5)
    # alice (4 spans) / carol (3): exact bounds, alice's 3 of 4 found, carol's 3 of 3: F1 = 2*1*.75/1.75.
    # Typed: Eva Berg is ORGANIZATION for carol: alice's 2 of 4, carol's 2 of 3: F1 = 4/7.
    alice_carol = _pair(agreement, "alice", "carol")
    assert alice_carol["f1_exact"] == pytest.approx(2 * 0.75 / 1.75)
    assert alice_carol["f1_typed"] == pytest.approx(4 / 7)


def _labels(annotator):
    return [
        label
        for document_id in SHARED
        for label in character_labels_by_hand(TEXTS[document_id], ANNOTATIONS[document_id][annotator])
    ]


@pytest.mark.parametrize(("a", "b"), [("alice", "bob"), ("alice", "carol"), ("bob", "carol")])
def test_cohen_kappa_on_characters_equals_scikit_learns(agreement, a, b):
    expected = cohen_kappa_score(_labels(a), _labels(b))
    assert _pair(agreement, a, b)["cohen_kappa_chars"] == pytest.approx(expected, abs=1e-12)


def test_krippendorff_alpha_on_characters_equals_the_krippendorff_packages(agreement):
    annotators = ["alice", "bob", "carol"]
    labels = sorted({label for annotator in annotators for label in _labels(annotator)})
    reliability = np.array(
        [[labels.index(label) for label in _labels(annotator)] for annotator in annotators]
    )
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert agreement["overall"]["krippendorff_alpha_chars"] == pytest.approx(expected, abs=1e-12)


def test_the_bootstrap_measures_give_the_library_values_on_the_full_data():
    # The interval resamples kappa and alpha written as sums of counts: on all documents at once
    # (every document drawn once) they must give the libraries' values.
    from metrics.engine.agreement.measures import CohenKappa, NominalAlpha, kappa_counts, nominal_alpha_counts
    from metrics.engine.agreement.spans import character_labels, label_set

    documents = [AnnotatedDocument(d, TEXTS[d], ANNOTATIONS[d]) for d in SHARED]
    labels = label_set(documents)
    sums: dict[str, float] = {}
    for document in documents:
        per = {a: character_labels(document.text, s, labels) for a, s in document.annotations.items()}
        rows = kappa_counts("kappa", per["alice"], per["carol"], labels)
        counts = np.zeros((len(document.text), len(labels)))
        for values in per.values():
            counts[np.arange(len(values)), values] += 1
        rows.update(nominal_alpha_counts("alpha", counts, labels))
        for name, value in rows.items():
            sums[name] = sums.get(name, 0.0) + value
    arrays = {name: np.array([value]) for name, value in sums.items()}
    assert CohenKappa("kappa", labels)(arrays)[0] == pytest.approx(
        cohen_kappa_score(_labels("alice"), _labels("carol")), abs=1e-12
    )
    reliability = np.array(
        [[labels.index(label) for label in _labels(annotator)] for annotator in ("alice", "bob", "carol")]
    )
    assert NominalAlpha("alpha", labels)(arrays)[0] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal"), abs=1e-12
    )


def test_every_figure_has_an_interval_around_it(agreement):
    for pair in agreement["pairs"]:
        for name in ("f1_exact", "f1_overlap", "f1_typed", "cohen_kappa_chars"):
            interval = pair[f"{name}_ci"]
            assert interval["method"] == "cluster_bootstrap_percentile"
            assert interval["low"] <= pair[name] + 1e-12 and pair[name] - 1e-12 <= interval["high"]
    assert agreement["overall"]["krippendorff_alpha_chars_ci"]["resamples"] == 200


def test_an_annotator_missing_from_a_document_is_missing_there_for_alpha():
    text = "Anna and Ben."
    documents = [
        AnnotatedDocument("d1", text, {"a": [(0, 4, "PERSON_NAME")], "b": [(0, 4, "PERSON_NAME")]}),
        AnnotatedDocument("d2", text, {"a": [(9, 12, "PERSON_NAME")], "c": [(0, 4, "PERSON_NAME")]}),
    ]
    result = span_agreement(documents, settings=IntervalSettings(resamples=0))
    nan = np.nan
    d1 = [1.0 if i < 4 else 0.0 for i in range(len(text))]
    d2a = [1.0 if 9 <= i < 12 else 0.0 for i in range(len(text))]
    d2c = [1.0 if i < 4 else 0.0 for i in range(len(text))]
    reliability = np.array([d1 + d2a, d1 + [nan] * len(text), [nan] * len(text) + d2c])
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert result["overall"]["krippendorff_alpha_chars"] == pytest.approx(expected, abs=1e-12)
    assert [(p["a"], p["b"], p["documents"]) for p in result["pairs"]] == [
        ("a", "b", 1),
        ("a", "c", 1),
        ("b", "c", 0),
    ]
    assert result["pairs"][2]["f1_exact"] is None
    assert result["pairs"][0]["f1_exact_ci"] is None  # intervals off


def test_on_large_inputs_alpha_from_the_coincidence_sums_equals_the_packages(monkeypatch):
    from metrics.engine.agreement import spans as span_module

    monkeypatch.setattr(span_module, "LIBRARY_ALPHA_MAX_UNITS", 0)
    corpus = load_span_corpus(InMemorySource("export.zip", export_zip()))
    result = span_agreement(annotated_documents(corpus.documents), settings=IntervalSettings(resamples=0))
    annotators = ["alice", "bob", "carol"]
    labels = sorted({label for annotator in annotators for label in _labels(annotator)})
    reliability = np.array(
        [[labels.index(label) for label in _labels(annotator)] for annotator in annotators]
    )
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    assert result["overall"]["krippendorff_alpha_chars_computed_by"] == "coincidence_sums"
    assert result["overall"]["krippendorff_alpha_chars"] == pytest.approx(expected, abs=1e-12)
