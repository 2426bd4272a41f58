r"""Threads for the float layer's passes over blocks.

A pass over blocks of contexts or tokens (the logits of the graded distances,
the tiles of ``L = L~``, the row chunks of a tall QR) is split into independent
tasks. NumPy and LAPACK release the interpreter lock, so :func:`run_all` runs
the tasks on :func:`workers` threads, each task's products on **one** BLAS
thread: the elementwise work between the products (a third or more of a
distances pass) then runs in parallel as well, which BLAS threads alone leave
serial, and small ``(d + d~)``-sized LAPACK calls do not spin a second thread
that only waits for a core.

The BLAS thread count is read and set through ``threadpoolctl``, which knows
OpenBLAS (NumPy and SciPy each load their own copy; both are set), MKL and
BLIS. Where no BLAS it can control is loaded, :func:`workers` is 1: the tasks
then run in turn and BLAS keeps its own threads (no oversubscription). The
setting is process-wide while a pool runs: another thread's BLAS call meanwhile
runs on one thread too (slower, never different).

Results are always returned in the order of the tasks, so a caller that merges
them in that order gets the same answer from any number of workers, provided
its tasks do not depend on the count.

>>> run_all(lambda x: x * x, [1, 2, 3], workers=2)
[1, 4, 9]
"""
from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

__all__ = ["WORKERS", "blas_threads", "one_blas_thread", "run_all", "run_in_order", "side_by_side", "workers"]

#: Threads for the block passes; None: the BLAS thread count (:func:`workers`).
WORKERS: int | None = None

_CONTROLLER: list = []
# the BLAS thread counts that pools running now limited to one: a pool started
# inside another (a task that runs its own blocks) sizes itself by the outer count
_OUTER: list = []
_SAVED: list = []
_LOCK = threading.Lock()


def _controller():
    """threadpoolctl's controller of the BLAS libraries loaded now, or None."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController

            import numpy  # noqa: F401  (its BLAS must be loaded to be seen)
            import scipy.linalg  # noqa: F401

            ctl = ThreadpoolController().select(user_api="blas")
            _CONTROLLER.append(ctl if ctl.lib_controllers else None)
        except Exception:  # pragma: no cover - threadpoolctl missing or a BLAS it cannot read
            _CONTROLLER.append(None)
    return _CONTROLLER[0]


def blas_threads() -> int | None:
    """The BLAS thread count (the largest over the loaded libraries), or None
    where no BLAS can be controlled."""
    ctl = _controller()
    if ctl is None:
        return None
    return max(int(i["num_threads"]) for i in ctl.info())


def workers() -> int:
    """Threads the block passes use: :data:`WORKERS` when set, else the BLAS
    thread count (1 where it cannot be set: BLAS then keeps its threads)."""
    if WORKERS is not None:
        return max(1, int(WORKERS))
    outer = _OUTER[:1]               # one read: another pool may end meanwhile
    n = outer[0] if outer else blas_threads()
    return max(1, n) if n is not None else 1


@contextmanager
def one_blas_thread():
    """BLAS on one thread inside the block; nothing where no BLAS can be
    controlled. Pools may run at once in several threads (a study's
    comparisons on a threaded Dask cluster): the first to enter sets the count
    to one, the last to leave restores what the first found."""
    ctl = _controller()
    if ctl is None:
        yield
        return
    with _LOCK:
        if not _OUTER:
            _SAVED[:] = [ctl.info()]
            ctl.limit(limits=1)
        _OUTER.append(_OUTER[0] if _OUTER else max(int(i["num_threads"]) for i in _SAVED[0]))
    try:
        yield
    finally:
        with _LOCK:
            _OUTER.pop()
            if not _OUTER:
                ctl.limit(limits=_SAVED.pop())


def run_in_order(task: Callable, items: Iterable, workers_: int | None = None) -> Iterator:
    """``task(item)`` for every item, yielded in the items' order as each is
    done; on ``workers_`` threads (default :func:`workers`), each BLAS call on
    one thread (also when ``workers_`` is one, so that the results do not
    depend on the count). At most ``workers_ + 1`` tasks are started ahead of the one
    yielded, so what they hold stays bounded. An exception is raised where its
    task's result would have been yielded."""
    n = workers() if workers_ is None else max(1, int(workers_))
    if n == 1:
        # one BLAS thread here too: LAPACK's and BLAS's rounding may depend on
        # their thread count, and the tasks must not
        with one_blas_thread():
            for item in items:
                yield task(item)
        return
    with one_blas_thread(), ThreadPoolExecutor(n) as pool:
        pending = []
        it = iter(items)
        for item in it:
            pending.append(_submit(pool, task, item))
            if len(pending) >= n + 1:
                break
        while pending:
            fut = pending.pop(0)
            try:
                result = fut.result()
            except BaseException:
                for f in pending:
                    f.cancel()
                raise
            del fut                  # the future would hold the result while the caller works on it
            for item in it:
                pending.append(_submit(pool, task, item))
                break
            yield result
            del result


def _submit(pool, task, item):
    # the task runs in a copy of the caller's context: NumPy keeps its error
    # state (np.errstate) there, and a new thread would otherwise start from
    # the defaults -- warnings the caller silenced, errors it asked for, lost
    return pool.submit(contextvars.copy_context().run, task, item)


def run_all(task: Callable, items: Iterable, workers: int | None = None) -> list:
    """``[task(item) for item in items]`` on threads, as :func:`run_in_order`."""
    return list(run_in_order(task, items, workers))


def side_by_side(*jobs: Callable) -> list:
    """The results of independent calls ``job()``, in their order, run side by
    side as :func:`run_all` runs tasks.

    >>> side_by_side(lambda: 1, lambda: 2)
    [1, 2]
    """
    return run_all(lambda job: job(), jobs)
