"""Scoring chunks of documents in parallel processes, results in chunk order.

The engines are pure functions of plain data, so a chunk can be scored in another process and its
result (rows, counts) sent back; the worker process reads the next chunk from the database meanwhile.
`SCORING_PROCESSES` (default 1: in the worker itself) sets how many processes score. A worker whose
pool is made of daemonic processes (Celery's prefork) cannot start children: it scores in-process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from evalproject.env import env_int

Result = TypeVar("Result")


def scoring_processes() -> int:
    if multiprocessing.current_process().daemon:
        return 1
    return min(env_int("SCORING_PROCESSES", 1, minimum=1), os.cpu_count() or 1)


class ChunkRunner:
    """`submit` chunks in order; `on_result` is called with each result in the same order."""

    def __init__(
        self, executor: ProcessPoolExecutor | None, on_result: Callable[[Any], None], ahead: int
    ) -> None:
        self.executor = executor
        self.on_result = on_result
        self.ahead = ahead
        self.pending: deque[Future] = deque()

    def submit(self, function: Callable[..., Result], /, **kwargs: Any) -> None:
        if self.executor is None:
            self.on_result(function(**kwargs))
            return
        self.pending.append(self.executor.submit(function, **kwargs))
        while self.pending and (self.pending[0].done() or len(self.pending) > self.ahead):
            self.on_result(self.pending.popleft().result())

    def drain(self) -> None:
        while self.pending:
            self.on_result(self.pending.popleft().result())


@contextmanager
def chunk_runner(on_result: Callable[[Any], None], processes: int | None = None) -> Iterator[ChunkRunner]:
    processes = scoring_processes() if processes is None else processes
    if processes <= 1:
        yield ChunkRunner(None, on_result, 0)
        return
    # spawn, not fork: a forked child would share the parent's database connection.
    with ProcessPoolExecutor(
        max_workers=processes, mp_context=multiprocessing.get_context("spawn")
    ) as executor:
        runner = ChunkRunner(executor, on_result, ahead=2 * processes)
        yield runner
        runner.drain()
