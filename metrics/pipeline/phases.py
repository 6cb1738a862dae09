"""What every offline pipeline shares around its phases: their wall times, and the pause of the cyclic
garbage collector while a large data set is built."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager


class PhaseTimer:
    """Adds the wall time of each named phase to a dict, when the caller passed one."""

    def __init__(self, seconds: dict[str, float] | None) -> None:
        self.seconds = seconds

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.seconds is not None:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start


@contextmanager
def paused_garbage_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic objects are built and scored.

    Each collection walks every tracked object, so with a growing heap of parsed documents, scores
    and rows the collector's passes cost more than the work itself (the bench READMEs have the
    figures). These objects hold no reference cycles, so reference counting frees them as usual; the
    few cycles made meanwhile (e.g. by caught exceptions) are collected when the collector resumes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
