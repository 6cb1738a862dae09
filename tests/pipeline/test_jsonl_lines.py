"""Lines of a JSONL file by byte offset: where each line ends, and the document id each line names,
also when the scan lets go of the pages it has read."""

from __future__ import annotations

import mmap

import numpy as np

from metrics.pipeline import jsonl_lines
from metrics.pipeline.jsonl_lines import (
    ByteRange,
    DocumentLines,
    chunk_bounds,
    line_document_ids,
    line_ends,
    positions_in_gold,
)
from tests.pipeline.span_file_records import write_lines


def test_a_line_names_its_document_in_its_first_bytes_or_anywhere(tmp_path):
    path = write_lines(
        tmp_path / "lines.jsonl",
        [
            '{"document_id": "plain", "entities": []}',
            '{"document_id":"compact","entities":[]}',
            '{"entities": [], "document_id": "later"}',
            '{"document_id": "esc\\"aped", "entities": []}',
            '{"document_id": "dök-😀", "entities": []}',
        ],
    )
    ends = line_ends(str(path))
    starts = np.concatenate(([0], ends[:-1]))
    assert line_document_ids(str(path), starts, ends) == ["plain", "compact", "later", 'esc"aped', "dök-😀"]
    write_lines(path, ['{"document_id": 7}'])
    assert line_document_ids(str(path), np.array([0]), line_ends(str(path))) is None


def test_line_ends_are_the_offsets_past_each_line(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_lines, "SCAN_BLOCK", 4)  # lines across blocks
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\n\ncdefg\nh")
    assert line_ends(str(path)).tolist() == [3, 4, 10, 11]
    path.write_bytes(b"ab\ncdefghi\n")
    assert line_ends(str(path)).tolist() == [3, 11]
    path.write_bytes(b"")
    assert line_ends(str(path)).tolist() == []


def test_line_ends_over_pages_let_go_as_scanned_are_still_every_line(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_lines, "SCAN_BLOCK", mmap.PAGESIZE)  # each page unmapped once scanned
    lines = [b"x" * (k % 7000) for k in range(40)]
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert line_ends(str(path)).tolist() == np.cumsum([len(line) + 1 for line in lines]).tolist()


def test_line_document_ids_over_pages_let_go_as_scanned_are_still_every_id(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_lines, "SCAN_BLOCK", mmap.PAGESIZE)  # pages let go as the scan passes
    records = [{"document_id": f"doc-{k}", "entities": [], "note": "x" * (k * 397 % 9000)} for k in range(40)]
    path = write_lines(tmp_path / "lines.jsonl", records)
    ends = line_ends(str(path))
    starts = np.concatenate(([0], ends[:-1]))
    assert line_document_ids(str(path), starts, ends) == [record["document_id"] for record in records]


def test_document_lines_are_views_of_their_lines_wherever_they_are(tmp_path):
    """Lines by the offsets `line_ends` finds, without their newline, in any order; -1: no line."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\n\n  \ncdefg\nh")
    ends = line_ends(str(path))
    starts = np.concatenate(([0], ends[:-1]))
    lines = path.read_bytes().split(b"\n")
    order = np.array([4, -1, 0, 2, 1, 3])
    picked = DocumentLines(
        str(path), np.where(order < 0, -1, starts[order]), np.where(order < 0, -1, ends[order])
    )
    assert [None if view is None else bytes(view) for view in picked.line_views()] == [
        None if k < 0 else lines[k] for k in order.tolist()
    ]
    assert DocumentLines(str(path), starts[:0], ends[:0]).line_views() == []


def test_a_file_ending_with_its_newline_gives_its_last_line_without_it(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\ncd\n")
    ends = line_ends(str(path))
    views = DocumentLines(str(path), np.array([3, 0]), ends[::-1].copy()).line_views()
    assert [bytes(view) for view in views] == [b"cd", b"ab"]


def test_a_ranges_lines_are_its_lines_without_their_newlines(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\n\n  \ncdefg\nh")
    assert ByteRange(str(path), 3, 13).read_lines() == [b"", b"  ", b"cdefg"]
    assert ByteRange(str(path), 13, 14).read_lines() == [b"h"]


def test_lines_find_their_gold_positions_only_when_each_names_a_distinct_gold_document():
    gold = ["a", "b", "c"]
    assert positions_in_gold(["c", "a"], gold).tolist() == [2, 0]
    assert positions_in_gold([], gold).tolist() == []
    assert positions_in_gold(["a", "d"], gold) is None  # outside the gold
    assert positions_in_gold(["a", "a"], gold) is None  # a repeated line
    assert positions_in_gold(["a"], ["a", "a"]) is None  # a repeated gold id


def test_chunks_hold_at_most_so_many_documents_and_bytes_unless_one_document_is_longer():
    total = np.cumsum([3, 3, 3, 10, 1, 1])
    assert chunk_bounds(total, documents=2, max_bytes=6) == [(0, 2), (2, 3), (3, 4), (4, 6)]
    assert chunk_bounds(total, documents=5, max_bytes=100) == [(0, 5), (5, 6)]
    assert chunk_bounds(np.zeros(0, dtype=np.int64), documents=2, max_bytes=6) == []
