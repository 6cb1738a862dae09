"""Lines of a JSONL file by byte offset: where each line ends, and the document id each line names,
also when the scan lets go of the pages it has read."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from metrics.pipeline import jsonl_lines
from metrics.pipeline.jsonl_lines import ByteRange, line_document_ids, line_ends
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


def test_a_ranges_line_views_by_its_known_line_ends_are_its_lines_as_read(tmp_path):
    """The plan knows where every line ends: the range is cut there, with no search for newlines."""
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\n\n  \ncdefg\nh")
    ends = line_ends(str(path))
    boundaries = [0, *ends.tolist()]
    for first in range(len(ends)):
        for last in range(first + 1, len(ends) + 1):
            byte_range = ByteRange(str(path), boundaries[first], boundaries[last], ends[first:last])
            assert [bytes(view) for view in byte_range.line_views()] == byte_range.read_lines()


def test_a_ranges_line_views_need_its_line_ends(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"ab\ncd\n")
    with pytest.raises(ValueError):
        ByteRange(str(path), 0, 6).line_views()
