"""What format a gold file is in, from its first bytes: the one sniffer of the offline commands and
the server's imports (plain Python, no Django).

- `jsonl`: the first non-blank line is a JSON object with a `document_id`; a first line cut off by the
  end of the bytes read counts when it names a `document_id` (a long `text`). A UTF-8 byte order mark
  is skipped.
- `cas`: INCEpTION UIMA CAS JSON (a `%FEATURE_STRUCTURES` key).
- `eppi`: EPPI Reviewer JSON (a `References` or `CodeSets` key).
"""

from __future__ import annotations

import json

# How far into a file the sniffer looks: CAS and EPPI JSON are one big object each, and the key that
# tells them apart comes first in real exports; a longer first line is not JSON lines of ours.
SNIFF_BYTES = 1024 * 1024
BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def starts_as_json_lines(head: bytes) -> bool:
    """Whether `head`, the start of a file, is JSON lines of documents (the first rule above)."""
    first_line, newline, _ = head.removeprefix(BYTE_ORDER_MARK).lstrip().partition(b"\n")
    try:
        first = json.loads(first_line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return not newline and b'"document_id"' in first_line
    return isinstance(first, dict) and "document_id" in first


def content_format(head: bytes) -> str | None:
    """`jsonl`, `cas` or `eppi` from the start of a file; None when it shows none of them."""
    if starts_as_json_lines(head):
        return "jsonl"
    if b'"%FEATURE_STRUCTURES"' in head:
        return "cas"
    if b'"References"' in head or b'"CodeSets"' in head:
        return "eppi"
    return None


def attribute_gold_format(head: bytes) -> str:
    """`jsonl` or `eppi`: attribute gold is one or the other. An empty start is JSON lines (the JSONL
    reader reports an empty file); anything else that is not JSON lines goes to the EPPI reader, whose
    error names the line of a malformed file."""
    if not head.removeprefix(BYTE_ORDER_MARK).strip():
        return "jsonl"
    return "jsonl" if starts_as_json_lines(head) else "eppi"
