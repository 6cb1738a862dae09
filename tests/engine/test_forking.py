"""Forked workers stream their results back, report their failures, and run no library after-fork hooks."""

import multiprocessing.util
import os

import pytest

from metrics.engine.forking import ForkedWork


def squares(numbers):
    for number in numbers:
        yield number * number


def fails_after_one():
    yield "first"
    raise ValueError("the worker's own error")


def test_a_forked_worker_streams_every_item_in_order():
    assert list(ForkedWork(squares, range(1000)).results()) == [n * n for n in range(1000)]


def test_an_error_in_the_worker_is_raised_in_the_parent_with_its_traceback():
    work = ForkedWork(fails_after_one)
    received = []
    with pytest.raises(ValueError, match="the worker's own error") as raised:
        received.extend(work.results())
    assert received == ["first"]
    assert any("fails_after_one" in note for note in raised.value.__notes__)


def test_large_results_do_not_deadlock_on_the_pipe():
    payload = ["x" * 100_000 for _ in range(50)]  # 5 MB: far beyond a pipe's buffer
    assert list(ForkedWork(lambda: iter(payload)).results()) == payload


class _RecordsForks:
    def __init__(self, path):
        self.path = path


def _after_fork(recorder):
    with open(recorder.path, "w") as marker:
        marker.write(str(os.getpid()))


def test_the_child_runs_no_multiprocessing_after_fork_hook(tmp_path):
    # kombu registers such a hook; in a child it can hang on the parent's broker socket.
    recorder = _RecordsForks(tmp_path / "hook-ran")
    multiprocessing.util.register_after_fork(recorder, _after_fork)
    assert list(ForkedWork(squares, [3]).results()) == [9]
    assert not recorder.path.exists()
