"""Lines of a JSONL file by byte offset, for the fast paths that read chunks of a file themselves.
Scans map the file and let go of each page once scanned, so a process that plans a large file does
not count the file in its resident size.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

# Newlines are found a block at a time, so the scan's temporary arrays stay a few MB.
SCAN_BLOCK = 1 << 22
_NEWLINE = 0x0A
# A line that starts with its document id, unescaped: `{"document_id": "doc-1", ...`.
_LEADING_ID = re.compile(rb'\{\s*"document_id"\s*:\s*"([^"\\]*)"')


@dataclass(frozen=True)
class ByteRange:
    """Lines `[start, end)` of a file, by byte offset."""

    path: str
    start: int
    end: int

    def read(self) -> bytes:
        with open(self.path, "rb") as file:
            return os.pread(file.fileno(), self.end - self.start, self.start)

    def read_lines(self) -> list[bytes]:
        lines = self.read().split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the newline that ends the range's last line
        return lines


@dataclass(frozen=True)
class DocumentLines:
    """One line of a file per document, by the byte offsets `line_ends` finds (`start` -1: the
    document has no line), in the documents' order, wherever the lines are in the file."""

    path: str
    starts: np.ndarray
    ends: np.ndarray

    def line_views(self) -> list[memoryview | None]:
        """Each document's line without its newline (None: it has none), as views of the file mapped:
        no copy of the bytes (read and split, they were copied twice into fresh memory). The mapping
        closes when the last view is let go."""
        if not len(self.starts):
            return []
        with open(self.path, "rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        whole = memoryview(mapped)
        stops = self.ends - 1  # each line's newline
        if mapped[len(mapped) - 1] != _NEWLINE:
            stops[self.ends == len(mapped)] += 1  # the file's last line, without a newline
        return [
            None if start < 0 else whole[start:stop]
            for start, stop in zip(self.starts.tolist(), stops.tolist(), strict=True)
        ]


def line_document_ids(path: str, starts: np.ndarray, ends: np.ndarray) -> list[str | None] | None:
    """The `document_id` each line names (None for a blank line), or None when a line names none.
    Read from the line's first bytes when it starts with its id: the reader of the chunk checks it
    against the parsed line. Lines in file order: the pages read are let go as the scan passes."""
    ids: list[str | None] = []
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        forgotten = 0  # pages below this offset are let go, as `line_ends` lets them go
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            if start - forgotten >= SCAN_BLOCK:
                below = start - start % mmap.PAGESIZE
                _forget_pages(mapped, forgotten, below - forgotten)
                forgotten = below
            match = _LEADING_ID.match(mapped, start, end)
            if match is None and mapped[start:end].isspace():
                ids.append(None)
                continue
            try:
                document_id = (
                    match.group(1).decode("utf-8")
                    if match
                    else orjson.loads(mapped[start:end]).get("document_id")
                )
            except (UnicodeDecodeError, orjson.JSONDecodeError, AttributeError):
                return None
            if type(document_id) is not str:
                return None
            ids.append(document_id)
    return ids


def plain_files(*sources: Any) -> bool:
    """True when every source is a file on disk (uploads held as bytes take the validating path)."""
    return all(isinstance(source, str | os.PathLike) and Path(source).is_file() for source in sources)


def positions_in_gold(line_ids: Sequence[str], gold_ids: Sequence[str]) -> np.ndarray | None:
    """Each line's position in the gold, or None unless the lines name distinct gold documents and
    the gold's ids are distinct."""
    position = {document_id: index for index, document_id in enumerate(gold_ids)}
    if len(position) != len(gold_ids):
        return None
    try:
        positions = np.fromiter(map(position.__getitem__, line_ids), dtype=np.int64, count=len(line_ids))
    except KeyError:
        return None
    return positions if len(np.unique(positions)) == len(positions) else None


def chunk_bounds(total: np.ndarray, documents: int, max_bytes: int) -> list[tuple[int, int]]:
    """[first, last) of each chunk of documents whose bytes end at the running `total`: at most
    `documents` documents, and no more than `max_bytes` bytes unless one document is longer (a chunk
    of long documents stays as small in memory as one of short ones)."""
    bounds = []
    first = 0
    while first < len(total):
        before = total[first - 1] if first else 0
        fitting = int(np.searchsorted(total, before + max_bytes, side="right"))
        last = min(first + documents, max(fitting, first + 1))
        bounds.append((first, last))
        first = last
    return bounds


def line_ends(path: str) -> np.ndarray:
    """The byte offset just past each line of a file (its newline, or the end of a last line without one)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        # Mapped, not read: the scan looks at the page cache's bytes without copying them.
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            data = np.frombuffer(mapped, dtype=np.uint8)
            ends = []
            for offset in range(0, size, SCAN_BLOCK):
                ends.append(np.flatnonzero(data[offset : offset + SCAN_BLOCK] == _NEWLINE) + (offset + 1))
                _forget_pages(mapped, offset, min(SCAN_BLOCK, size - offset))
            del data  # the mapping cannot close while an array views it
    found = np.concatenate(ends)
    if len(found) == 0 or found[-1] != size:
        found = np.append(found, size)
    return found.astype(np.int64)


def _forget_pages(mapped: mmap.mmap, offset: int, length: int) -> None:
    """Unmap pages already scanned from this process (they stay in the page cache): a file mapped
    whole would count, page by page, in the resident size of the process that scans it."""
    if hasattr(mmap, "MADV_DONTNEED") and offset % mmap.PAGESIZE == 0:
        mapped.madvise(mmap.MADV_DONTNEED, offset, length)
