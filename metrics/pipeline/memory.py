"""Memory handed back to the system between the phases of a large evaluation."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def release_free_memory() -> None:
    """Hand memory that was freed but kept by the C allocator back to the system (glibc only).

    A 100,000-document span evaluation frees a few hundred megabytes of gold documents and temporary
    arrays; glibc keeps much of it for reuse, so the process's resident size stays at its high-water
    mark and the next phase's allocations come on top of it. malloc_trim returns the free pages (tens
    of megabytes in measurement). Elsewhere it does nothing.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _find_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # another C library (musl), or none by that name
        return None


_MALLOC_TRIM = _find_malloc_trim()
