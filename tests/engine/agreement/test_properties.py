"""Properties of the agreement engine on random annotations: the library values, symmetry, order."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from metrics.engine.agreement.spans import AnnotatedDocument, character_labels, label_set, span_agreement
from metrics.engine.uncertainty.bootstrap import IntervalSettings

TYPES = ["PERSON_NAME", "DATE_OF_BIRTH", "PHONE"]
NO_INTERVALS = IntervalSettings(resamples=0)


@st.composite
def spans_in(draw, length: int):
    spans = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, length - 1))
        end = draw(st.integers(start + 1, length))
        spans.append((start, end, draw(st.sampled_from(TYPES))))
    return spans


@st.composite
def corpora(draw):
    documents = []
    for index in range(draw(st.integers(1, 4))):
        length = draw(st.integers(1, 30))
        annotators = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=2, max_size=3, unique=True))
        documents.append(
            AnnotatedDocument(
                f"d{index}", "x" * length, {name: draw(spans_in(length)) for name in annotators}
            )
        )
    return documents


def _labels(documents, annotator, labels):
    return np.concatenate([character_labels(d.text, d.annotations[annotator], labels) for d in documents])


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_kappa_and_alpha_are_the_libraries_values(documents):
    result = span_agreement(documents, settings=NO_INTERVALS)
    labels = label_set(documents)
    for pair in result["pairs"]:
        shared = [d for d in documents if pair["a"] in d.annotations and pair["b"] in d.annotations]
        if not shared:
            continue
        a, b = _labels(shared, pair["a"], labels), _labels(shared, pair["b"], labels)
        if len(set(a) | set(b)) < 2:
            assert pair["cohen_kappa_chars"] is None
        else:
            assert pair["cohen_kappa_chars"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    annotators = result["overall"]["annotators"]
    reliability = np.concatenate(
        [
            np.array(
                [
                    character_labels(d.text, d.annotations[name], labels).astype(float)
                    if name in d.annotations
                    else np.full(len(d.text), np.nan)
                    for name in annotators
                ]
            )
            for d in documents
        ],
        axis=1,
    )
    present = reliability[~np.isnan(reliability)]
    if np.unique(present).size < 2:
        assert result["overall"]["krippendorff_alpha_chars"] is None
    else:
        expected = krippendorff.alpha(
            reliability_data=reliability,
            level_of_measurement="nominal",
            value_domain=list(range(len(labels))),
        )
        assert result["overall"]["krippendorff_alpha_chars"] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(corpora())
def test_pairwise_f1_is_symmetric_and_order_does_not_matter(documents):
    forward = span_agreement(documents, settings=NO_INTERVALS)
    renamed = [
        AnnotatedDocument(d.document_id, d.text, {{"a": "z"}.get(k, k): v for k, v in d.annotations.items()})
        for d in reversed(documents)
    ]
    backward = span_agreement(renamed, settings=NO_INTERVALS)
    for pair in forward["pairs"]:
        a, b = ({"a": "z"}.get(name, name) for name in (pair["a"], pair["b"]))
        other = next(p for p in backward["pairs"] if {p["a"], p["b"]} == {a, b})
        for name in ("f1_exact", "f1_overlap", "f1_typed", "cohen_kappa_chars"):
            assert other[name] == pytest.approx(pair[name]) if pair[name] is not None else other[name] is None
