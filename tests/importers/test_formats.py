"""The one sniffer of gold formats (annotations/importers/formats.py), for the offline commands and the
server's imports alike."""

from __future__ import annotations

import pytest

from annotations.importers.formats import attribute_gold_format, content_format


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{\n  "CodeSets": [],\n  "References": []\n}', "eppi"),
        (b'{"CodeSets": [], "References": []}', "eppi"),
        (b'\n{"document_id": "d1", "attributes": {}}\n{"document_id": "d2"}\n', "jsonl"),
        (b"not json at all", "eppi"),
        (b'\xef\xbb\xbf{"document_id": "d1"}\n', "jsonl"),
        # The head of a file whose first line is longer than the part read for detection.
        (b'{"document_id": "d1", "text": "a very long full text that goes on', "jsonl"),
        (b"", "jsonl"),
    ],
)
def test_attribute_gold_is_json_lines_or_eppi_by_its_content(content, expected):
    assert attribute_gold_format(content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"%FEATURE_STRUCTURES": [], "%VIEWS": {}}', "cas"),
        (b'{\n  "References": [{"ItemId": 1}]\n}', "eppi"),
        (b'{"document_id": "d1", "text": "a", "entities": []}\n', "jsonl"),
        # A JSON lines document whose text quotes an EPPI key is still JSON lines.
        (b'{"document_id": "d1", "text": "\\"References\\""}\n', "jsonl"),
        (b'{"title": "a plain JSON object"}', None),
        (b"", None),
    ],
)
def test_a_file_shows_its_format_in_its_first_bytes_or_none(content, expected):
    assert content_format(content) == expected
