"""Pieces of an evaluation spread over forked worker processes.

The workers are forked after the parent has read the qrels and built their query index, so
they inherit both (shared copy-on-write) instead of receiving them pickled; each returns only
its piece's per-query values. Results come back in the pieces' order, whatever order the
workers finish in, so merging them gives the in-process result bit for bit. Where ``fork`` is
not available (Windows) or one worker is asked for, the pieces are evaluated here, one after
another.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

from ragmeter.errors import InputError, RagmeterError

Item = TypeVar("Item")
Result = TypeVar("Result")

#: the environment variable that sets the number of worker processes
WORKERS_ENV = "RAGMETER_WORKERS"

#: by default an input smaller than this is evaluated in this process (about 1.7 M run lines):
#: forking and Arrow's take would cost more than they save
PARALLEL_BYTES = 64 << 20


class SerialFallbackWarning(UserWarning):
    """Several worker processes were due but this platform cannot fork: the pieces are
    evaluated in this process (the same values, more slowly). Said once per process."""


_warned = False

#: ``(function, job)`` of the map in progress: set before the workers are forked, which
#: inherit it (a job holds the qrels: it is never pickled)
_TASK: tuple[Callable[[Any, Any], Any], Any] | None = None


def default_workers() -> int:
    """Worker processes of an evaluation in pieces: ``RAGMETER_WORKERS``, else
    ``min(2, os.cpu_count())``."""
    given = os.environ.get(WORKERS_ENV, "").strip()
    if given:
        try:
            n = int(given)
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(f"{WORKERS_ENV}={given!r}: expected a whole number ≥ 1")
        return n
    return max(1, min(2, os.cpu_count() or 1))


def forked_map(
    function: Callable[[Any, Item], Result],
    job: Any,
    items: Sequence[Item],
    workers: int,
    *,
    what: str,
    prepare: Callable[[], None] | None = None,
) -> Generator[Result, None, None]:
    """``function(job, item)`` for each of ``items``, in order: in ``workers`` forked
    processes when there are several items and ``fork`` exists, else in this process.
    ``prepare`` runs once in each forked worker before its first item (not in this process).

    A worker that dies (killed for memory) is a :class:`RagmeterError` naming ``what``, not
    a hang. On an error, or when the caller stops early, the running pieces finish and the
    pool is shut down.
    """
    global _TASK, _warned
    n = min(workers, len(items))
    serial = n <= 1 or not _can_fork()
    if serial and n > 1 and not _warned:
        _warned = True
        warnings.warn(
            f"{what}: {n} worker processes were due, but this platform cannot fork them; "
            "evaluated in this process (the same values, more slowly)",
            SerialFallbackWarning,
            stacklevel=3,
        )
    if serial:
        for item in items:
            yield function(job, item)
        return
    # imported when a pool is due: ≈ 6 ms at every start otherwise
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    _TASK = (function, job)
    pool = ProcessPoolExecutor(
        n, mp_context=multiprocessing.get_context("fork"), initializer=prepare
    )
    try:
        yield from pool.map(_call, items)
    except BrokenProcessPool:
        raise RagmeterError(
            f"{what}: a worker process evaluating it died (out of memory?); "
            f"{WORKERS_ENV}=1 evaluates in this process"
        ) from None
    finally:
        _TASK = None
        pool.shutdown(wait=True, cancel_futures=True)


def _can_fork() -> bool:
    """Whether this platform starts processes by ``fork`` (multiprocessing is imported only
    when workers are due: ≈ 2 ms of every start otherwise)."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _call(item: Any) -> Any:
    """One item, in a worker (the function and job inherited through fork)."""
    assert _TASK is not None, "no forked map in progress in this process"
    function, job = _TASK
    return function(job, item)
