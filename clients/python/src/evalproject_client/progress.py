"""A one-line progress bar on stderr, drawn only when stderr is a terminal (or when asked)."""

from __future__ import annotations

import sys
from typing import TextIO


class ProgressBar:
    """`update(done, total)` redraws the line; `close()` ends it. Silent when not `enabled`."""

    def __init__(self, label: str, *, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label = label
        self._drawn = False

    def update(self, done: int, total: int | None, status: str = "", width: int = 30) -> None:
        if not self.enabled:
            return
        if total:
            filled = min(width, int(width * done / total))
            bar = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        else:
            bar = f"{done}"
        self.stream.write(f"\r{self.label} {status:<9} {bar}".rstrip() + " ")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
