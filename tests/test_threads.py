"""The block passes on threads (``numeric.threads``): results in the tasks' order,
one BLAS thread per task while a pool runs, and the same answers from the graded
distances, the streamed Householder factor and the comparison whatever the
number of threads."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import scipy.linalg

from allornone.numeric import FloatModel, Tolerance, factor, graded, spectra, threads
from allornone.numeric.scale import random_model


def test_results_come_in_the_order_of_the_tasks():
    def slow_first(i):
        if i == 0:
            threading.Event().wait(0.05)
        return i * i
    assert threads.run_all(slow_first, range(7), 3) == [i * i for i in range(7)]
    assert threads.run_all(slow_first, [], 3) == []


def test_the_first_failing_task_in_order_raises():
    def task(i):
        if i in (2, 5):
            raise ValueError(f"task {i}")
        return i
    with pytest.raises(ValueError, match="task 2"):
        threads.run_all(task, range(8), 2)
    with pytest.raises(ValueError, match="task 2"):
        threads.run_all(task, range(8), 1)


class _Controller:
    """Stands for threadpoolctl's controller: records every count set."""

    def __init__(self, n=4):
        self.n, self.calls = n, []

    def info(self):
        return [{"num_threads": self.n}]

    def limit(self, limits):
        self.n = limits if isinstance(limits, int) else limits[0]["num_threads"]
        self.calls.append(self.n)


@pytest.mark.parametrize("w", [1, 2])
def test_tasks_keep_the_callers_numpy_error_state(w):
    def task(x):
        return np.ones(2) / x
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            threads.run_all(task, [1.0, 0.0, 2.0], w)
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isinf(threads.run_all(task, [0.0, 0.0], w)[1]).all()


def test_a_pool_runs_blas_on_one_thread_and_restores_the_count(monkeypatch):
    ctl = _Controller(4)
    monkeypatch.setattr(threads, "_CONTROLLER", [ctl])
    assert threads.workers() == 4
    seen = threads.run_all(lambda _: ctl.n, range(6), 2)
    assert seen == [1] * 6
    assert ctl.calls == [1, 4] and ctl.n == 4
    # one worker: the tasks run here, on one BLAS thread too (rounding must not
    # depend on the count), and the count is restored after
    assert threads.run_all(lambda _: ctl.n, range(3), 1) == [1, 1, 1]
    assert ctl.n == 4


def test_the_real_blas_count_is_restored_after_a_pool():
    before = threads.blas_threads()
    if before is None:
        pytest.skip("no BLAS that threadpoolctl can control")
    threads.run_all(lambda x: x, range(4), 2)
    assert threads.blas_threads() == before


def test_pools_in_several_threads_at_once_restore_the_count(monkeypatch):
    """Pools started and ended out of step (a threaded Dask cluster running
    comparisons side by side): the count is one while any runs and what it was
    once all are done -- not left at one by a pool that saved another's limit."""
    ctl = _Controller(3)
    monkeypatch.setattr(threads, "_CONTROLLER", [ctl])
    go = [threading.Event() for _ in range(3)]
    inside = [threading.Event() for _ in range(3)]

    def worker(i):
        with threads.one_blas_thread():
            inside[i].set()
            go[i].wait(5)
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    seen = []
    for t, e in zip(ts, inside):
        t.start()
        e.wait(5)
    for i in (1, 0, 2):              # leave in another order than they came
        seen.append(ctl.n)
        go[i].set()
        ts[i].join()
    assert seen == [1, 1, 1]
    assert ctl.n == 3 and ctl.calls == [1, 3]


def test_a_pool_inside_a_pool_sizes_itself_by_the_outer_count(monkeypatch):
    monkeypatch.setattr(threads, "_CONTROLLER", [_Controller(4)])
    inner = threads.run_all(lambda _: threads.workers(), range(2), 2)
    assert inner == [4, 4]


def _pair(seed=0, m=90, n=700, d=7, d2=9):
    rng = np.random.default_rng(seed)
    F, G = random_model(m, n, d, d - 1, d - 2, seed=rng)
    F2 = rng.standard_normal((m, d2))
    G2 = rng.standard_normal((n, d2))
    return FloatModel(F, G), FloatModel(F2, G2)


def test_distances_do_not_depend_on_the_number_of_threads(monkeypatch):
    a, b = _pair(n=3000, d=40, d2=48)
    out = {}
    for w in (1, 2, 3):
        monkeypatch.setattr(threads, "WORKERS", w)
        # small blocks: many of them, merged in order; the blocks are the same
        # for every number of threads, and so is every figure, bit for bit
        out[w] = graded.distances(a, b, both_ways=True, entries=3 * a.n * 7)
    ref = out[1]
    for w in (2, 3):
        assert out[w] == ref
    # and they are the distances of the whole logits at once
    La = a.F @ a.G0.T
    Lb = b.F @ b.G0.T
    D = La - Lb
    assert ref["max_abs_log_odds_diff"] == pytest.approx(np.abs(D).max(), rel=1e-12)
    assert ref["rel_log_odds_diff"] == pytest.approx(np.linalg.norm(D) / np.linalg.norm(La), rel=1e-12)
    lpa = La - scipy.special.logsumexp(La, axis=1, keepdims=True)
    lpb = Lb - scipy.special.logsumexp(Lb, axis=1, keepdims=True)
    kl = np.sum(np.exp(lpa) * (lpa - lpb), axis=1)
    tv = 0.5 * np.abs(np.exp(lpa) - np.exp(lpb)).sum(axis=1)
    assert ref["kl_mean"] == pytest.approx(kl.mean(), rel=1e-10)
    assert ref["kl_max"] == pytest.approx(kl.max(), rel=1e-10)
    assert ref["tv_mean"] == pytest.approx(tv.mean(), rel=1e-10)


def test_streamed_householder_factor_is_the_same_on_any_number_of_threads(monkeypatch):
    # wide enough (D = 200) for LAPACK's own products to be threaded by BLAS,
    # whose rounding may depend on its thread count: every route runs on one
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 200))
    X[:, 199] = X[:, 0] - X[:, 3]           # rank deficient: the Householder route
    out = {}
    for w in (1, 2, 3):
        monkeypatch.setattr(threads, "WORKERS", w)
        t = factor.tall_r(lambda lo, hi: X[lo:hi].copy(), 3000, 200, step=256)
        assert t.method == "householder"
        out[w] = t.R
    assert np.array_equal(out[1], out[2]) and np.array_equal(out[1], out[3])
    # a factor of X: R^T R = X^T X to rounding, and the same up to signs as one QR
    assert np.allclose(out[1].T @ out[1], X.T @ X, rtol=0, atol=1e-11 * np.linalg.norm(X) ** 2)
    R = scipy.linalg.qr(X, mode="r")[0][:200]
    assert np.allclose(np.abs(out[1][:199]), np.abs(R[:199]), rtol=1e-8, atol=1e-8 * np.abs(R).max())


def test_q_made_later_repeats_the_factor_made_on_threads(monkeypatch):
    """The context side is factored inside a pool; its Q is made again later,
    outside it, from the same rows, and must repeat the same R."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((4000, 128))
    F[:, -1] = F[:, 0] - F[:, 1]             # rank deficient: Householder QR, which keeps Q
    a = FloatModel(F, rng.standard_normal((300, 128)))
    b = FloatModel(rng.standard_normal((4000, 128)), rng.standard_normal((300, 128)))
    for w in (1, 2):
        monkeypatch.setattr(threads, "WORKERS", w)
        fa, fb = spectra.factor_pair(a, b)
        assert fa.methods["context"] == "householder"
        Q = fa.Q_F
        assert np.allclose(Q.T @ Q, np.eye(Q.shape[1]), atol=1e-12)


def test_tpqrt_through_the_capsule_is_lapacks(monkeypatch):
    rng = np.random.default_rng(4)
    D = 9
    for tri, rows in ((0, 40), (D, D)):
        B = rng.standard_normal((rows, D))
        if tri:
            B = np.triu(B)
        R0 = np.asfortranarray(np.triu(rng.standard_normal((D, D))))
        ours = factor._tpqrt(tri, R0.copy(order="F"), np.asfortranarray(B.copy()))
        ref, = scipy.linalg.get_lapack_funcs(("tpqrt",), (R0,))
        theirs = ref(tri, min(factor._TPQRT_NB, D), R0.copy(order="F"), np.asfortranarray(B.copy()))[0]
        assert np.array_equal(np.triu(ours), np.triu(theirs))
        # and it is a QR factorisation of [R0; B]
        S = np.vstack([R0, B])
        assert np.allclose(np.triu(ours).T @ np.triu(ours), S.T @ S, atol=1e-10 * np.linalg.norm(S) ** 2)


def test_a_capsule_of_another_signature_is_not_called():
    # dgemm takes thirteen arguments, dtpqrt's fifth is a double pointer: both refused
    assert factor._capsule("cython_blas", "dgemm", factor._INT_P) is None
    assert factor._capsule("cython_lapack", "dtpqrt", *([factor._INT_P] * 12)) is None
    assert factor._lapack_tpqrt() is not None


def test_trsm_through_the_capsule_is_blas():
    rng = np.random.default_rng(7)
    R = np.asfortranarray(np.triu(rng.standard_normal((11, 11))) + 4 * np.eye(11))
    X = rng.standard_normal((50, 11))
    Y = X.copy()
    factor._trsm_left_upper_t(R, Y.T)          # Y <- Y R^{-1}
    ref, = scipy.linalg.get_blas_funcs(("trsm",), (R,))
    Z = ref(1.0, R, np.asfortranarray(X.T), side=0, lower=0, trans_a=1).T
    assert np.array_equal(Y, Z)
    assert np.allclose(Y @ R, X, atol=1e-12)


@pytest.mark.parametrize("second", [False, True])
def test_gram_passes_are_the_same_on_any_number_of_threads(monkeypatch, second):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((1000, 12))
    R1 = np.linalg.cholesky(X.T @ X).T if second else None
    out = {}
    for w in (1, 2):
        monkeypatch.setattr(threads, "WORKERS", w)
        out[w] = factor._gram(lambda lo, hi: X[lo:hi].copy(), 1000, 12, 64, R1=R1, probe=lambda A: True)
    assert np.array_equal(out[1], out[2])
    Q = X if R1 is None else X @ np.linalg.inv(R1)
    assert np.allclose(out[1], Q.T @ Q, rtol=1e-12, atol=1e-10)
    # a probe that says no stops the pass on the first blocks
    assert factor._gram(lambda lo, hi: X[lo:hi].copy(), 1000, 12, 64, probe=lambda A: False) is None


def test_centred_factor_is_the_same_on_any_number_of_threads(monkeypatch):
    """The means the centred factor subtracts are summed in fixed chunks of
    rows (on threads where there are several) and added in order: the same
    factor from one worker or two, and a factor of the rows themselves."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((1000, 12)) + 50.0 * rng.standard_normal(12)
    out = {}
    for w in (1, 2):
        monkeypatch.setattr(threads, "WORKERS", w)
        R, _, route = factor._centred(lambda lo, hi: X[lo:hi].copy(), 1000, 12, 64, None, False)
        assert route == "cholesky-qr2"
        out[w] = R
    assert np.array_equal(out[1], out[2])
    assert np.allclose(out[1].T @ out[1], X.T @ X, rtol=1e-10)


def test_compare_gives_one_answer_on_any_number_of_threads(monkeypatch):
    a, b = _pair(seed=5, m=120, n=900)
    rng = np.random.default_rng(6)
    T = rng.standard_normal((a.d, a.d))
    c = FloatModel(a.F @ T, a.G @ np.linalg.inv(T).T)
    out = {}
    # the reparametrisation computed in floats moves small logits by more than
    # 1e-12 of themselves: at rtol 1e-10 L = L~ holds entry by entry, and EL1-EL3 with it
    loose = Tolerance(1e-10)
    for w in (1, 2):
        monkeypatch.setattr(threads, "WORKERS", w)
        out[w] = (graded.compare(a, b), graded.compare(a, c, loose))
    for r1, r2 in zip(out[1], out[2]):
        assert (r1.k, r1.k_decided, r1.el_verdicts, r1.witness) == (r2.k, r2.k_decided, r2.el_verdicts, r2.witness)
        assert r1.max_abs_log_odds_diff == r2.max_abs_log_odds_diff
        assert r1.wedin_bound == pytest.approx(r2.wedin_bound, rel=1e-9)
    assert out[1][1].el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}
    assert out[1][0].el_verdicts["EL2"] == "fails"
