"""The executors: results in chunk order whoever computed them, errors raised where the results are
read, and the offline commands' choice between this process and a pool."""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from metrics.pipeline.executors import CeleryChord, InProcess, ProcessPool, local_executor


def square_with_pid(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def fail_on_three(value: int) -> int:
    if value == 3:
        raise ValueError("three is not allowed")
    return value


def test_a_pool_gives_results_in_chunk_order_from_other_processes():
    results = list(ProcessPool(2).map(square_with_pid, range(20)))
    assert [square for square, _ in results] == [value * value for value in range(20)]
    assert os.getpid() not in {pid for _, pid in results}


def test_a_pool_reads_chunks_lazily_and_holds_few_in_flight():
    taken = []

    def chunks():
        for value in range(50):
            taken.append(value)
            yield value

    results = ProcessPool(2).map(square_with_pid, chunks())
    next(results)
    assert len(taken) <= 2 * 2 + 1
    assert len(list(results)) == 49


def test_an_error_in_a_chunk_is_raised_where_the_results_are_read():
    for executor in (InProcess(), ProcessPool(2)):
        with pytest.raises(ValueError, match="three is not allowed"):
            list(executor.map(fail_on_three, range(6)))


def test_the_offline_commands_score_here_for_one_process_and_in_a_pool_above():
    assert isinstance(local_executor(1), InProcess)
    pool = local_executor(3)
    assert isinstance(pool, ProcessPool) and pool.processes == 3
    with pytest.raises(ValueError, match="at least 1"):
        ProcessPool(0)


def faults_of_an_array_made_again(_: object = None) -> int:
    """Page faults of making an 8 MB array (2,048 pages) just after one was made and freed."""
    np.ones(1 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    np.ones(1 << 20)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def faults_after_choosing_one_process(_: object = None) -> int:
    local_executor(1)
    return faults_of_an_array_made_again()


@pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc",
    reason="reuse_freed_memory tunes glibc's malloc; with another C library it leaves the allocator as it is",
)
def test_the_processes_that_score_reuse_freed_memory_instead_of_faulting_its_pages_in_again():
    # Fresh processes: by default glibc maps the second array afresh too (about 500 faults here).
    (in_a_worker,) = ProcessPool(1).map(faults_of_an_array_made_again, [None])
    assert in_a_worker < 100
    # One process scores in the process that chose it: this one, in a fresh one (spawned).
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:
        assert fresh.submit(faults_after_choosing_one_process).result() < 100


def huge_pages_after_choosing(processes: int) -> bool:
    """Whether numpy still asks for huge pages once this process has chosen its executor."""
    np._core.multiarray._set_madvise_hugepage(True)
    local_executor(processes)
    return np._core.multiarray._set_madvise_hugepage(False)  # it returns the setting it replaces


def test_the_process_that_chooses_an_executor_maps_its_arrays_in_small_pages():
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:
        assert fresh.submit(huge_pages_after_choosing, 1).result() is False  # it scores
        assert fresh.submit(huge_pages_after_choosing, 2).result() is False  # it merges and resamples


def test_the_celery_executor_maps_in_this_process_for_eager_tasks():
    assert list(CeleryChord().map(fail_on_three, [1, 2])) == [1, 2]


def test_a_pool_started_ahead_scores_in_its_workers_as_one_started_on_demand():
    pool = ProcessPool(2)
    pool.start(square_with_pid)  # the fork server imports this module while this process goes on
    results = list(pool.map(square_with_pid, range(6)))
    assert [square for square, _ in results] == [value * value for value in range(6)]
    assert os.getpid() not in {pid for _, pid in results}


def test_a_kept_pool_serves_every_map_inside_from_the_same_worker_processes():
    pool = ProcessPool(2)
    with pool.kept():
        first = list(pool.map(square_with_pid, range(8)))
        second = list(pool.map(square_with_pid, range(8, 16)))
    assert [square for square, _ in first + second] == [value * value for value in range(16)]
    assert len({pid for _, pid in first + second}) <= 2
    assert os.getpid() not in {pid for _, pid in first + second}


def test_a_kept_pool_goes_on_serving_after_a_map_is_left_early():
    pool = ProcessPool(2)
    with pool.kept():
        with pytest.raises(ValueError, match="three is not allowed"):
            list(pool.map(fail_on_three, range(40)))
        left = pool.map(square_with_pid, range(40))
        next(left)
        left.close()
        assert [square for square, _ in pool.map(square_with_pid, range(5))] == [0, 1, 4, 9, 16]
