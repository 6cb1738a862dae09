"""What every offline pipeline shares around its phases: their wall times, the pause of the cyclic
garbage collector while a large data set is built, and memory kept for reuse within a phase and
handed back to the system between them."""

from __future__ import annotations

import ctypes
import gc
import sys
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
    """Pause the cyclic garbage collector while millions of acyclic objects are built and scored:
    each collection walks every tracked object, and on a growing heap the passes cost more than the
    work itself. Reference counting frees these objects; the few cycles made meanwhile are collected
    when the collector resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def release_free_memory() -> None:
    """Hand memory freed but kept by glibc back to the system (elsewhere: nothing), so the next phase's
    allocations do not come on top of the last one's high-water mark."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def reuse_freed_memory() -> None:
    """Let glibc (elsewhere: nothing) keep freed blocks below 64 MB for this process's next arrays:
    it mapped each afresh, and every chunk faulted its pages in again (bench/spans/README.md)."""
    if _MALLOPT is not None:
        _MALLOPT(-3, 64 << 20)  # M_MMAP_THRESHOLD: blocks below it come from the heap
        _MALLOPT(-1, 128 << 20)  # M_TRIM_THRESHOLD: free heap kept; `release_free_memory` still trims


try:
    _LIBC = ctypes.CDLL("libc.so.6") if sys.platform.startswith("linux") else None
    _MALLOC_TRIM, _MALLOPT = (_LIBC.malloc_trim, _LIBC.mallopt) if _LIBC else (None, None)
except (OSError, AttributeError):  # another C library (musl), or none by those names
    _MALLOC_TRIM = _MALLOPT = None
