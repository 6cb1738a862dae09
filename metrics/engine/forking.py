"""Work in a forked child process, with its results streamed back through a pipe.

Why not multiprocessing or concurrent.futures: a child started by multiprocessing runs the
after-fork hooks that libraries registered with it. kombu (Celery's transport) registers one that
closes the parent's pooled broker connections from inside the child, which reads from a socket the
parent still owns and can hang forever (seen in the test suite and possible in a web process that
queued a task). A bare os.fork runs none of those hooks, and the child leaves with os._exit, so no
inherited connection, file or finaliser is touched.

The child inherits the parent's memory, so inputs need no pickling; only results travel, each item
pickled separately so the parent can unpickle one while the child computes the next.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

_ITEM = 0
_ERROR = 1


def can_fork() -> bool:
    """True where forking a worker is safe: Linux, and a process with a single thread (a child of a
    threaded process can deadlock on a lock another thread held at the fork)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


class ForkedWork:
    """`produce(*args)` run in a forked child; iterate `results()` in the parent for what it yields.

    An exception in the child is raised again in the parent, with the child's traceback as a note
    (RuntimeError with that traceback when the exception cannot be pickled); a child that dies without
    a word raises RuntimeError.
    The child is always reaped, even when the parent stops iterating early.
    """

    def __init__(self, produce: Callable[..., Iterable[Any]], *args: Any) -> None:
        read_end, write_end = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child
            os.close(read_end)
            status = 0
            # The inherited heap holds no garbage of ours; a collection would touch (and so copy)
            # every page of it.
            gc.disable()
            try:
                with os.fdopen(write_end, "wb", buffering=1 << 20) as stream:
                    try:
                        for item in produce(*args):
                            pickle.dump((_ITEM, item), stream, protocol=pickle.HIGHEST_PROTOCOL)
                            # Each item as soon as it is made: a small one (a signal that a
                            # step is done) would otherwise wait in the buffer for the next.
                            stream.flush()
                    except BaseException as error:
                        status = 1
                        try:
                            pickled_error = pickle.dumps(error)
                        except Exception:  # an exception that cannot travel: send its text only
                            pickled_error = None
                        pickle.dump((_ERROR, (pickled_error, traceback.format_exc())), stream)
            except BaseException:
                status = 2
            finally:
                os._exit(status)
        os.close(write_end)
        self._stream = os.fdopen(read_end, "rb", buffering=1 << 20)
        self._reaped = False

    def results(self) -> Iterator[Any]:
        try:
            while True:
                try:
                    kind, payload = pickle.load(self._stream)
                except EOFError:
                    break
                if kind == _ERROR:
                    pickled_error, child_traceback = payload
                    error = pickle.loads(pickled_error) if pickled_error is not None else None
                    if not isinstance(error, BaseException):
                        raise RuntimeError(f"a forked worker failed:\n{child_traceback}")
                    error.add_note(f"raised in a forked worker:\n{child_traceback}")
                    raise error
                yield payload
        finally:
            self.close()
        if self._exit_status != 0:
            raise RuntimeError(f"a forked worker died with status {self._exit_status}")

    def kill(self) -> None:
        """Stop the child at once (its results are no longer wanted) and reap it."""
        if not self._reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            self.close()

    def close(self) -> None:
        if self._reaped:
            return
        self._stream.close()
        _, status = os.waitpid(self._pid, 0)
        self._exit_status = os.waitstatus_to_exitcode(status)
        self._reaped = True
