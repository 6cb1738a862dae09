"""Executors: who scores the chunks of a run. The only module of the project that starts processes.

One interface, `Executor.map(score, chunks)`: `score` is a module-level function from a chunk to its
partial result, and the partial results come back in chunk order, whoever computed them.

Workers of the pool come from a fork server where the platform has one, else are spawned: a forked
child would inherit this process's database and broker connections (kombu's after-fork hook can hang
on the parent's socket), and a Celery prefork child may not fork at all.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import Any, Protocol, TypeVar

import numpy as np

from metrics.pipeline.phases import reuse_freed_memory

Chunk = TypeVar("Chunk")
Partial = TypeVar("Partial")


class Executor(Protocol):
    processes: int

    def map(self, score: Callable[[Chunk], Partial], chunks: Iterable[Chunk]) -> Iterator[Partial]:
        """`score(chunk)` of every chunk, in chunk order."""
        ...


class InProcess:
    """Every chunk in this process, one after the other: no pickling, no process to start."""

    processes = 1

    def map(self, score: Callable[[Chunk], Partial], chunks: Iterable[Chunk]) -> Iterator[Partial]:
        return map(score, chunks)


class ProcessPool:
    """Chunks scored by `processes` local worker processes (`--processes N`). At most two chunks per
    process are in flight: chunks are read lazily, so a large run streams through in bounded memory."""

    def __init__(self, processes: int) -> None:
        if processes < 1:
            raise ValueError(f"processes must be at least 1, got {processes}")
        self.processes = processes
        self._kept: ProcessPoolExecutor | None = None

    def start(self, score: Callable[[Any], Any]) -> None:
        """Start the fork server now, importing `score`'s module (about half a second) while this
        process still plans the chunks, not after; each worker is forked from it ready."""
        if _FORK_SERVER:
            multiprocessing.get_context("forkserver").set_forkserver_preload([score.__module__])
            multiprocessing.forkserver.ensure_running()

    @contextmanager
    def kept(self) -> Iterator[None]:
        """Every `map` inside runs on one set of worker processes (a run's scoring, then its
        resamples' sums), instead of starting a set and waiting for it to end per map."""
        with self._pool() as pool:
            self._kept = pool
            try:
                yield
            finally:
                self._kept = None

    def map(self, score: Callable[[Chunk], Partial], chunks: Iterable[Chunk]) -> Iterator[Partial]:
        if self._kept is not None:
            yield from self._results(self._kept, score, chunks)
            return
        self.start(score)
        with self._pool() as pool:
            yield from self._results(pool, score, chunks)

    def _pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver" if _FORK_SERVER else "spawn")
        return ProcessPoolExecutor(self.processes, context, initializer=reuse_freed_memory)

    def _results(
        self, pool: ProcessPoolExecutor, score: Callable[[Chunk], Partial], chunks: Iterable[Chunk]
    ) -> Iterator[Partial]:
        pending: deque[Future[Partial]] = deque()
        chunk_iterator = iter(chunks)
        try:
            while True:
                in_flight = islice(chunk_iterator, 2 * self.processes - len(pending))
                pending.extend(pool.submit(score, chunk) for chunk in in_flight)
                if not pending:
                    return
                yield pending.popleft().result()
        finally:
            # A reader that stops early (an error, a chunk that was not sure) leaves no work queued
            # in a pool that goes on serving.
            for future in pending:
                future.cancel()


_FORK_SERVER = "forkserver" in multiprocessing.get_all_start_methods()


class CeleryChord(InProcess):
    """Chunks as Celery tasks over every running worker, merged by one final task (a chord). A chunk
    task reads its documents from the database and stores its partial result there, so nothing large
    travels through the broker. `map` (InProcess's) serves the eager mode."""

    def dispatch(self, chunk_signatures: list[Any], merge_signature: Any) -> Any:
        from celery import chord

        return chord(chunk_signatures)(merge_signature)


def local_executor(processes: int = 1) -> InProcess | ProcessPool:
    """The executor of an offline command: in this process for 1, a pool of `processes` above. Who
    scores reuses freed memory; a pool's parent, which only merges, does not (its peak grew 40 MB)."""
    # numpy's NUMPY_MADVISE_HUGEPAGE=0 in a running process: scoring maps and frees arrays of megabytes
    # chunk after chunk, and each fault of a huge page waited for a compaction and, on a virtual
    # machine, for the host to back it (bench/spans/README.md).
    np._core.multiarray._set_madvise_hugepage(False)
    if processes > 1:
        return ProcessPool(processes)
    reuse_freed_memory()
    return InProcess()
