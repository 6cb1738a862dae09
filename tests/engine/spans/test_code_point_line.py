"""The code point line of the batch scorer: its character classes are str.isalnum() and the left-out
characters, for any code point, and its counts per document are the documents' own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.spans import code_point_line
from metrics.engine.spans.code_point_line import (
    LEFT_OUT_CHARACTERS,
    Cover,
    Line,
    PackedPrefix,
    character_classes,
    merge,
)


# No deadline: timing is not what this test checks, and a loaded machine can exceed the 200 ms default.
@settings(deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_character_classes_are_isalnum_and_the_left_out_characters(text):
    scored, alnum = character_classes(text)
    assert scored.tolist() == [c not in LEFT_OUT_CHARACTERS for c in text]
    assert alnum.tolist() == [c.isalnum() for c in text]


@given(
    st.sampled_from([0xFF, 0xFFFF]).flatmap(
        lambda highest: st.text(
            alphabet=st.characters(max_codepoint=highest, exclude_categories=("Cs",)), max_size=80
        )
    )
)
def test_texts_of_latin_1_or_of_the_basic_plane_are_classified_as_any_text(text):
    """Latin-1 texts take a path of their own (a byte per code point, classes by bytes.translate)."""
    scored, alnum = character_classes(text)
    assert scored.tolist() == [c not in LEFT_OUT_CHARACTERS for c in text]
    assert alnum.tolist() == [c.isalnum() for c in text]


@given(st.lists(st.booleans(), max_size=300), st.data())
def test_flags_before_a_position_are_the_prefix_sums_of_the_flags(flags, data):
    prefix = np.concatenate(([0], np.cumsum(np.array(flags, dtype=np.int64))))
    positions = np.array(data.draw(st.lists(st.integers(0, len(flags)), max_size=40)), dtype=np.int64)
    assert PackedPrefix(np.array(flags, dtype=bool))[positions].tolist() == prefix[positions].tolist()


@given(st.text(alphabet="aß ,Łł😀€1\n", max_size=40), st.integers(1, 9))
def test_code_points_classified_a_block_at_a_time_are_classified_as_in_one(text, block):
    whole = character_classes(text)
    original = code_point_line.TAKE_BLOCK
    code_point_line.TAKE_BLOCK = block
    try:
        blocked = character_classes(text)
    finally:
        code_point_line.TAKE_BLOCK = original
    assert [classes.tolist() for classes in blocked] == [classes.tolist() for classes in whole]


@given(st.lists(st.booleans(), max_size=300), st.data())
def test_packed_flags_are_counted_as_the_flags_unpacked(flags, data):
    array = np.array(flags, dtype=bool)
    positions = np.array(data.draw(st.lists(st.integers(0, len(flags)), max_size=40)), dtype=np.int64)
    packed = PackedPrefix(words=code_point_line.packed_words(array))
    assert packed[positions].tolist() == PackedPrefix(array)[positions].tolist()


@given(st.lists(st.text(alphabet="ab1 ,é-", max_size=20), min_size=1, max_size=8))
def test_runs_of_letters_start_where_a_letter_follows_none(texts):
    n_chars = np.array([len(text) for text in texts])
    line = Line(texts, n_chars)
    joined = "\n".join(texts) + "\n"
    starts = [
        p for p in range(len(joined)) if joined[p].isalnum() and (p == 0 or not joined[p - 1].isalnum())
    ]
    assert line.run_starts.tolist() == starts
    positions = np.arange(line.length + 1)
    assert line.runs_before[positions].tolist() == [sum(s < p for s in starts) for p in positions.tolist()]


def test_a_text_beyond_the_basic_plane_is_classified_too():
    scored, alnum = character_classes("a😀𝔸 ß,")
    assert alnum.tolist() == [True, False, True, False, True, False]
    assert scored.tolist() == [True, True, True, False, True, False]


def test_one_code_point_beyond_the_basic_plane_leaves_the_others_classes_unchanged():
    """Basic-plane texts are read a UTF-16 unit per code point; one pair of surrogates changes the path."""
    text = "Łódź, ŠKODA ǅ\uffff ‿ 中文"
    scored, alnum = character_classes(text)
    scored_beyond, alnum_beyond = character_classes(text + "😀")
    assert scored_beyond[:-1].tolist() == scored.tolist()
    assert alnum_beyond[:-1].tolist() == alnum.tolist() == [c.isalnum() for c in text]


def test_sorted_points_are_counted_in_the_documents_they_fall_in():
    line = Line(["abc", "", "de"], np.array([3, 0, 2]))
    assert line.bases.tolist() == [0, 4, 5]
    points = np.array([0, 2, 5, 6])
    assert line.per_document(points).tolist() == [2, 0, 2]
    assert line.per_document(points * 10 + 3, scale=10).tolist() == [2, 0, 2]


@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8)), max_size=12),
    st.lists(st.booleans(), min_size=72, max_size=72),
    st.lists(st.tuples(st.integers(0, 70), st.integers(1, 10)), min_size=1, max_size=12),
)
def test_a_cover_answers_for_each_interval_as_its_code_points_one_by_one(segments, scored, queries):
    """covers: every code point of the interval in the set; overlaps: one; and the scored ones in both."""
    spans = sorted((start, start + length) for start, length in segments)
    start, end, _ = merge(
        np.array([s for s, _ in spans], dtype=np.int64), np.array([e for _, e in spans], dtype=np.int64)
    )
    cover = Cover(start, end, PackedPrefix(np.array(scored, dtype=bool)))
    inside = {p for s, e in zip(start.tolist(), end.tolist(), strict=True) for p in range(s, e)}
    query_start = np.array([s for s, _ in queries], dtype=np.int64)
    query_end = query_start + np.array([length for _, length in queries], dtype=np.int64)

    covers, overlaps, covered_scored = cover.against(query_start, query_end)

    points = [range(s, e) for s, e in zip(query_start.tolist(), query_end.tolist(), strict=True)]
    assert covers.tolist() == [all(p in inside for p in span) for span in points]
    assert overlaps.tolist() == [any(p in inside for p in span) for span in points]
    assert overlaps.tolist() == cover.overlaps(query_start, query_end).tolist()
    assert covered_scored.tolist() == [sum(p in inside and scored[p] for p in span) for span in points]
