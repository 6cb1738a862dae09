"""The code point line of the batch scorer: its character classes are str.isalnum() and the left-out
characters, for any code point, and its counts per document are the documents' own."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metrics.engine.spans import LEFT_OUT_CHARACTERS
from metrics.engine.spans.code_point_line import Line, character_classes


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_character_classes_are_isalnum_and_the_left_out_characters(text):
    scored, alnum = character_classes(text)
    assert scored.tolist() == [c not in LEFT_OUT_CHARACTERS for c in text]
    assert alnum.tolist() == [c.isalnum() for c in text]


def test_a_text_beyond_the_basic_plane_is_classified_too():
    scored, alnum = character_classes("a😀𝔸 ß,")
    assert alnum.tolist() == [True, False, True, False, True, False]
    assert scored.tolist() == [True, True, True, False, True, False]


def test_sorted_points_are_counted_in_the_documents_they_fall_in():
    line = Line(["abc", "", "de"], np.array([3, 0, 2]))
    assert line.bases.tolist() == [0, 4, 5]
    points = np.array([0, 2, 5, 6])
    assert line.per_document(points).tolist() == [2, 0, 2]
    assert line.per_document(points * 10 + 3, scale=10).tolist() == [2, 0, 2]
