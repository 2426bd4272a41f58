r"""Triangular factors of tall matrices read a block of rows at a time.

:func:`tall_r` returns ``R`` (``D x D``, upper triangular) with ``X = Q R``,
``Q`` orthonormal, for an ``N x D`` matrix ``X`` given by a function that
forms rows ``lo:hi`` (the joint token matrix ``[G_0, G~_0]`` or the joint
context matrix ``[F, F~]``, never formed whole when it is larger than a
block). Two routes, chosen by a condition checked on the data (a third on
request, below):

* **CholeskyQR2** (Fukaya, Nakatsukasa, Yanagisawa, Yamamoto 2014): the Gram
  matrix ``A = X^T X`` (a ``syrk`` per block), ``R_1 = chol(A)``, then the Gram
  of ``Q_1 = X R_1^{-1}`` (a ``trsm`` and a ``syrk`` per block), ``R_2 =
  chol(Q_1^T Q_1)`` and ``R = R_2 R_1``: two passes of matrix-matrix products.
  Its ``Q`` is orthonormal and ``X - Q R`` at rounding level -- as accurate as
  Householder QR -- when ``8 kappa(X) sqrt(u (N D + D (D + 1))) <= 1`` (Yamamoto,
  Nakatsukasa, Yanagisawa, Fukaya, ETNA 44, 2015, with ``u = 2^-53``). That is
  the condition checked, on ``X`` with its columns scaled to unit norm (the
  factor is invariant under that scaling): ``kappa`` is estimated from
  ``R_1`` of the first pass (:func:`condition_estimate`, doubled as a margin for
  an estimate from below), which is the condition of ``X`` up to rounding of
  relative size ``u kappa^2``, small wherever the condition holds.
* **Householder QR** otherwise -- when the Cholesky factorisation of either
  pass breaks down, when the estimate fails the condition (a rank-deficient
  ``X``, as the joint token matrix of two equivalent models is, always does), or
  when the Gram matrix would leave binary64's range: LAPACK ``geqrf`` on one
  block, ``tpqrt`` folding block after block into ``R`` beyond that. Column-wise
  backward stable whatever the condition.

``method="gram"`` asks for a third route first, for callers that need only
the factor's Gram matrix to relative accuracy (the graded comparison):

* **Gram** (one pass): ``R = chol(X^T X)``, the first pass of CholeskyQR2
  alone. The computed ``X^T X`` and its Cholesky factorisation are exact for
  ``X^T X + E`` with ``|E|_2 <= (gamma_(b + n_b + 2) + gamma_(D + 1)) D`` for
  ``X`` with unit columns (``b`` rows per block, ``n_b`` blocks; ``|X|^T |X|``
  and ``|R|^T |R|`` have norm at most their trace, ``D``). So ``R^T R =
  R_X^T (I + Delta) R_X`` with ``|Delta|_2 <= eta = |E|_2 kappa(X)^2`` (the
  smallest singular value of unit columns is at least ``1 / kappa``), and
  ``R = O (I + Delta)^(1/2) R_X`` with ``O`` orthogonal: ``R`` is the exact
  factor of ``(I + N) X`` for an ``N`` with ``|N|_2 <= eta / 2`` (to first
  order) acting on the column space of ``X``. For a joint matrix ``[G_0, G~_0]``
  every model's block gets the *same* ``I + N``: singular values of ``L``,
  least-squares residuals and their ratios move by a relative ``eta`` at
  most. The route is taken when
  ``eta``, with ``kappa`` the doubled estimate below, is at most
  :data:`GRAM_BOUND` (:func:`gram_perturbation`); otherwise the same pass
  goes on as CholeskyQR2's first, with no work lost.

**Centring.** The first two routes are tried first on ``Z = [X - 1 mu^T, 1]``
(``mu`` the computed column means, one pass over the blocks), and ``R`` is
the triangle of the ``(D + 1) x D`` matrix ``R_Z [I; mu^T]`` (a rank-one
update of a triangle, by Givens rotations), since ``X = Z [I; mu^T]``. A common offset of the rows -- the
pivot's row subtracted from every token, the mean direction that a language
model's features share -- makes ``X`` ill conditioned while ``Z`` is not: a
random token matrix with its pivot subtracted has condition about 65, too
large for the Gram route, and its ``Z`` about 1.3, so one Gram pass replaces
CholeskyQR2's three. The guarantees carry over: the Gram route's ``R_Z`` is
exact for ``(I + N) Z`` and then ``R`` for ``(I + N) X``; CholeskyQR2's column-wise
backward error of ``Z`` maps to one of ``X`` (column ``j`` of ``Z T`` gains
``dz_j + mu_j dz_1``, and ``|z_j|``, ``|mu_j| sqrt(N)`` are at most about
``|x_j|``), as do the rounding of ``x - mu`` (at most ``u |x_j - mu_j 1| <= u |x_j|``
up to the means' own rounding) and of the small product and QR. The condition
checked is ``Z``'s (``kappa`` is its estimate); where neither route takes
``Z``, ``X`` itself is tried as below.

Before the first pass runs over every block, the Gram matrix of the first
blocks (at least ``2 D`` rows: a random matrix of half as many columns as
rows is well conditioned, a square one is not) is factored (a Cholesky
factorisation, no pass): when that breaks down, or the ratio of its largest to
its smallest diagonal entry (a lower bound of the condition of those rows) is
beyond ``PROBE_FACTOR`` times the condition CholeskyQR2 allows, the matrix is
taken to be rank deficient or nearly so and Householder QR runs at once (a
joint token matrix of two equivalent models costs then a Gram product of
``2 D`` rows and a Householder pass, not a Gram pass and a Householder
pass). The probe only chooses the route: a matrix that passes it is still
checked as a whole, and rank-deficient first rows of a well-conditioned
matrix only cost the faster route.

:attr:`Tall.method` says which route was taken.

>>> import numpy as np
>>> X = np.random.default_rng(0).standard_normal((50, 4))
>>> t = tall_r(lambda lo, hi: X[lo:hi], 50, 4, step=8)
>>> t.method, bool(np.allclose(t.R.T @ t.R, X.T @ X))
('cholesky-qr2', True)
>>> X[:, 3] = X[:, 0]           # rank deficient: Householder
>>> t = tall_r(lambda lo, hi: X[lo:hi], 50, 4, step=8)
>>> t.method, bool(np.allclose(t.R.T @ t.R, X.T @ X))
('householder', True)
"""
from __future__ import annotations

import ctypes
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from allornone.numeric import threads as th

__all__ = ["METHODS", "GRAM_BOUND", "Tall", "cholesky_qr2_condition", "condition_estimate", "gram_perturbation",
           "tall_r"]

METHODS = ("cholesky-qr2", "householder", "wide", "gram")
#: The largest relative perturbation ``eta`` (module docstring) for which the Gram route is taken.
GRAM_BOUND = 2.0 ** -23
#: First rows whose diagonal ratio exceeds this many times CholeskyQR2's condition send the matrix to Householder QR.
PROBE_FACTOR = 16.0
UNIT_ROUNDOFF = 2.0 ** -53
#: Columns folded at once by ``tpqrt`` (its block size ``nb``).
_TPQRT_NB = 64
#: Row chunks of a Householder QR read in blocks: each folded into a triangle of
#: its own (in parallel on :mod:`~allornone.numeric.threads`), then the triangles
#: into one. Fixed, so that the factor does not depend on the number of threads.
HOUSEHOLDER_CHUNKS = 2
# the Gram matrix's entries must stay well inside binary64's normal range
_LOW, _HIGH = 2.0 ** -900, 2.0 ** 900


def cholesky_qr2_condition(rows: int, cols: int) -> float:
    """The largest ``kappa(X)`` for which CholeskyQR2 is as accurate as
    Householder QR on an ``rows x cols`` matrix:
    ``1 / (8 sqrt(u (rows cols + cols (cols + 1))))``.

    >>> round(cholesky_qr2_condition(16384, 896))
    3015
    """
    return 1.0 / (8.0 * math.sqrt(UNIT_ROUNDOFF * (rows * cols + cols * (cols + 1))))


def gram_perturbation(block_rows: int, blocks: int, cols: int, kappa: float) -> float:
    """``eta = (gamma_(b + n_b + 2) + gamma_(D + 1)) D kappa^2``: the bound on the
    relative perturbation of the Gram route's factor (module docstring) for
    ``blocks`` blocks of at most ``block_rows`` rows, ``D = cols`` columns and
    a condition ``kappa`` of the column-scaled matrix.

    >>> gram_perturbation(4096, 4, 896, 3.2) < GRAM_BOUND < gram_perturbation(4096, 4, 896, 100.0)
    True
    """
    def gamma(k):
        return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)
    return (gamma(block_rows + blocks + 2) + gamma(cols + 1)) * cols * kappa ** 2


def condition_estimate(R: np.ndarray, steps: int = 24) -> float:
    """``sigma_max(R) / sigma_min(R)`` of an upper-triangular ``R``, by power
    iteration on ``R^T R`` and on its inverse (triangular solves only, ``O(D^2)``
    each). An estimate from below, as every power iteration gives; ``inf`` when
    ``R`` has a zero on its diagonal.

    >>> condition_estimate(np.diag([4.0, 2.0, 1.0]))
    4.0
    """
    D = R.shape[0]
    if D == 0:
        return 1.0
    if not np.all(np.diag(R) != 0):
        return math.inf
    rng = np.random.default_rng(0)
    hi = rng.standard_normal(D)
    lo = hi.copy()
    big = small = 0.0
    solve = scipy.linalg.solve_triangular
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(steps):
            hi = R.T @ (R @ hi)
            big = float(np.linalg.norm(hi))
            if not math.isfinite(big) or big == 0.0:
                return math.inf
            hi /= big
            lo = solve(R, solve(R, lo, trans=1, check_finite=False), check_finite=False)
            small = float(np.linalg.norm(lo))
            if not math.isfinite(small):
                return math.inf
            lo /= small
    return math.sqrt(big * small)


@dataclass
class Tall:
    """The triangular factor of a tall ``X`` and how it was made.

    ``R`` is ``D x D`` (``N x D`` when ``N < D``: then ``R = X`` and ``Q = I``);
    ``method`` is one of :data:`METHODS`; ``kappa`` the condition estimate of
    the first CholeskyQR pass (of the centred ``Z`` where that route was
    taken; None where it broke down or was not tried).
    :meth:`q` forms ``Q`` (``N x D``) on request."""

    R: np.ndarray
    method: str
    kappa: float | None = None
    _q: Callable[[], np.ndarray] | None = None

    def q(self) -> np.ndarray:
        """``Q`` with ``X = Q R`` (formed now; ``N x min(N, D)``)."""
        if self._q is None:
            raise ValueError("this factor keeps no Q: it was made a block at a time by Householder QR")
        return self._q()


def _gram(block, rows: int, D: int, step: int, R1: np.ndarray | None = None, progress=None,
          fresh: bool = False, probe=None) -> np.ndarray | None:
    """``X^T X`` (``R1`` None) or ``(X R1^{-1})^T (X R1^{-1})``, a block at a time.
    ``probe(A)`` is asked once, on the Gram matrix of the first blocks that hold
    ``2 D`` rows or more, unless that is all of them; None when it says no.
    The blocks after those run in the chunks of :func:`_chunks` (on threads
    where there are several), each summed apart and the sums then added in
    order: the same matrix whatever the number of threads."""
    R1f = np.asfortranarray(R1) if R1 is not None else None
    advance = _progress(progress, rows)

    def add(A, lo0, hi0):
        part = np.empty((D, D))
        for lo in range(lo0, hi0, step):
            hi = min(hi0, lo + step)
            X = block(lo, hi)
            if R1 is None or (fresh and X.dtype == np.float64 and X.flags.c_contiguous):
                X = np.asarray(X, dtype=np.float64)
            else:
                X = np.array(X, dtype=np.float64, order="C")   # a copy: solved in place
            if R1 is not None:
                # X R1^{-1} in place: X is C-ordered, so X^T is Fortran-ordered and
                # R1^{-T} X^T is one trsm from the left on it
                _trsm_left_upper_t(R1f, X.T)
            np.matmul(X.T, X, out=part)        # numpy hands X^T X to syrk
            A += part
            advance(hi - lo)
        return A

    A0 = np.zeros((D, D))
    start = 0
    if probe is not None:
        first = min(rows, -(-2 * D // step) * step)     # the first block boundary at 2 D rows or more
        if first < rows:
            add(A0, 0, first)
            if not probe(A0):
                return None
            start = first
    cuts = [max(c, start) for c in _chunks(rows, step)]
    cuts[0] = start
    parts = th.run_all(lambda k: add(A0 if k == 0 else np.zeros((D, D)), cuts[k], cuts[k + 1]),
                       range(len(cuts) - 1))
    A = parts[0]
    for P in parts[1:]:
        A += P
    return A


def _progress(progress, rows: int):
    """A function that counts rows done, from any thread, and calls
    ``progress(done, rows)`` after every block but the first."""
    lock, done = threading.Lock(), [0]

    def advance(k: int) -> None:
        if progress is None:
            return
        with lock:
            done[0] += k
            if done[0] > k:
                progress(done[0], rows)
    return advance


def _chunks(rows: int, step: int) -> list[int]:
    """Row boundaries of the chunks a pass in blocks of ``step`` rows is split
    into (:data:`HOUSEHOLDER_CHUNKS` of them when there are at least twice as
    many blocks), on block boundaries: they depend on the sizes alone."""
    nb = -(-rows // step)
    c = max(1, min(HOUSEHOLDER_CHUNKS, nb // 2))
    return [min(rows, (j * nb // c) * step) for j in range(c + 1)]


def _cholesky(A: np.ndarray) -> np.ndarray | None:
    try:
        return scipy.linalg.cholesky(A, lower=False, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def _probe(A: np.ndarray, rows: int, D: int) -> bool:
    """Whether the Gram matrix ``A`` of the first rows leaves CholeskyQR2 worth trying (module docstring)."""
    diag = np.diag(A).copy()
    if not (np.all(np.isfinite(A)) and np.all(diag >= _LOW) and np.all(diag <= _HIGH)):
        return True                     # the whole matrix is judged as before
    s = np.sqrt(diag)
    R = _cholesky(A / s / s[:, None])
    if R is None:
        return False
    r = np.abs(np.diag(R))
    with np.errstate(divide="ignore"):
        return bool(r.max() / r.min() <= PROBE_FACTOR * cholesky_qr2_condition(rows, D))


def _cholesky_qr2(block, rows: int, D: int, step: int, progress, fresh: bool = False, gram: bool = False,
                  probe: bool = True) -> tuple[np.ndarray | None, float | None, str]:
    """``R`` by the Gram route (``gram``) or CholeskyQR2 when its accuracy
    condition holds, else ``(None, kappa, _)``; the route's name last.
    ``probe``: judge the first rows first (False where the caller has)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        A = _gram(block, rows, D, step, probe=(lambda A: _probe(A, rows, D)) if probe else None)
    if A is None:
        return None, None, "householder"
    diag = np.diag(A).copy()
    if not (np.all(np.isfinite(A)) and np.all(diag >= _LOW) and np.all(diag <= _HIGH)):
        return None, None, "householder"
    s = np.sqrt(diag)
    R1 = _cholesky(A / s / s[:, None])
    if R1 is None or not np.all(np.isfinite(R1)):
        return None, None, "householder"
    kappa = condition_estimate(R1)
    R1 *= s                                   # the factor of X itself: R1 diag(s)
    # twice the estimate: power iteration approaches the condition from below
    if gram and gram_perturbation(step, -(-rows // step), D, 2.0 * kappa) <= GRAM_BOUND:
        return R1, kappa, "gram"
    if not 2.0 * kappa <= cholesky_qr2_condition(rows, D):
        return None, kappa, "householder"
    R2 = _cholesky(_gram(block, rows, D, step, R1, progress, fresh))
    if R2 is None:
        return None, kappa, "householder"
    return R2 @ R1, kappa, "cholesky-qr2"


def _centred(block, rows: int, D: int, step: int, progress, gram: bool
             ) -> tuple[np.ndarray | None, float | None, str | None]:
    """``R`` of ``X`` by the Gram route or CholeskyQR2 run on ``Z = [X - 1 mu^T, 1]``
    (module docstring, *Centring*), or ``(None, kappa, route)``: ``route`` is
    ``"householder"`` where the first rows show neither ``Z`` nor ``X`` fit for
    the Cholesky routes (Householder QR then runs at once), None where ``X``
    itself is to be tried (``Z`` fails but ``X`` may not, the matrix has fewer
    than ``4 (D + 1)`` rows -- the probe's ``2 (D + 1)`` would be half of them or
    more --, or the means are not finite)."""
    if rows < 4 * (D + 1):
        return None, None, None
    first = min(rows, -(-2 * (D + 1) // step) * step)
    spans = [(lo, min(first, lo + step)) for lo in range(0, first, step)]       # the probe's blocks
    # the probe's rows read into Z_0 itself and centred in place: no copy of
    # them beside it (a copy of the whole matrix where it is one block)
    Z0 = np.empty((first, D + 1))
    for lo, hi in spans:
        Z0[lo:hi, :D] = block(lo, hi)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        total = Z0[:, :D].sum(axis=0)
        Z0[:, :D] -= total / first
        Z0[:, D] = 1.0
        if not _probe(Z0.T @ Z0, rows, D + 1):
            # a rank-deficient X (the joint matrix of an equivalent pair) fails
            # both; an X with a constant column (a folded bias) only Z. The
            # probe's rows are read again for X's own Gram matrix (Householder
            # QR follows, which costs far more than reading them)
            del Z0
            X0 = np.vstack([np.asarray(block(lo, hi), dtype=np.float64) for lo, hi in spans])
            plain = _probe(X0.T @ X0, rows, D)
            return None, None, (None if plain else "householder")
        del Z0
        # the rest of the rows in the chunks of _gram (on threads where there
        # are several), each summed apart and the sums added in order: the same
        # means whatever the number of threads
        cuts = [max(c, first) for c in _chunks(rows, step)]

        def part(k):
            t = np.zeros(D)
            for lo in range(cuts[k], cuts[k + 1], step):
                t += np.asarray(block(lo, min(rows, lo + step)), dtype=np.float64).sum(axis=0)
            return t
        for t in th.run_all(part, range(len(cuts) - 1)):
            total += t
        mu = total / rows
    if not np.all(np.isfinite(mu)):
        return None, None, None

    def zblock(lo, hi):
        Z = np.empty((hi - lo, D + 1))
        np.subtract(block(lo, hi), mu, out=Z[:, :D])
        Z[:, D] = 1.0
        return Z
    Rz, kappa, route = _cholesky_qr2(zblock, rows, D + 1, step, progress, fresh=True, gram=gram, probe=False)
    if Rz is None:
        return None, kappa, None
    # X = Z [I; mu^T]: R_Z [I; mu^T] = [R_11; 0] + r mu^T is (D + 1) x D, and its R
    # is the factor of X. [R_11; 0] is its own QR (Q = I), so the factor is a
    # rank-one update of it (Givens rotations, O(D^2); a QR of the sum, O(D^3),
    # was a tenth of the Gram pass at D = 1792), as backward stable as the QR
    R = _rank_one_factor(Rz, mu)
    if R is None:
        return None, kappa, None
    R *= np.where(np.diag(R) < 0, -1.0, 1.0)[:, None]        # a positive diagonal, as Cholesky's
    return R, kappa, route


def _rank_one_factor(Rz: np.ndarray, mu: np.ndarray) -> np.ndarray | None:
    """The ``D x D`` triangular factor of ``R_Z [I; mu^T]`` (``R_Z`` upper
    triangular, ``(D + 1) x (D + 1)``): the QR of ``[R_11; 0] + r mu^T``, ``r``
    the last column of ``R_Z``, updated from ``Q = I`` by LAPACK-style Givens
    rotations (:func:`scipy.linalg.qr_update`). None where it is not finite."""
    D = mu.size
    with np.errstate(over="ignore", invalid="ignore"):
        if not (np.all(np.isfinite(Rz)) and np.all(np.isfinite(mu))):
            return None
        # the update's rotations are orthogonal: its R is that of a matrix within
        # rounding of the sum, as the QR of the sum formed was
        _, R = scipy.linalg.qr_update(np.eye(D + 1), np.array(Rz[:, :D], order="F"), Rz[:, D].copy(),
                                      np.array(mu, dtype=float), overwrite_qruv=True, check_finite=False)
    R = R[:D]
    if not np.all(np.isfinite(R)):
        return None
    return R


def _householder(block, rows: int, D: int, step: int, progress, keep_q: bool):
    if rows <= 2 * step:
        def qr(mode):
            X = np.array(block(0, rows), dtype=np.float64, order="F")
            return scipy.linalg.qr(X, mode=mode, overwrite_a=True, check_finite=False)
        R = qr("r")[0][:D]
        if not keep_q:
            return R, None

        def q():
            # Householder QR again on the same block: the same R, and its Q (the
            # reflectors are not held meanwhile, an array of the matrix's size),
            # on one BLAS thread as the first
            with th.one_blas_thread():
                Q, R2 = qr("economic")
            if not np.array_equal(R2[:D], R):
                raise RuntimeError("Householder QR did not repeat its R on the same data")
            return Q
        return R, q
    # the blocks in a fixed number of chunks, each folded into a triangle of its
    # own (on threads where there are several) and the triangles then into one:
    # the factor is the same whatever the number of threads
    cuts = _chunks(rows, step)
    advance = _progress(progress, rows)

    def fold(part):
        lo0, hi0 = part
        R = np.zeros((D, D), order="F")
        for lo in range(lo0, hi0, step):
            hi = min(hi0, lo + step)
            R = _tpqrt(0, R, np.array(block(lo, hi), dtype=np.float64, order="F"))
            advance(hi - lo)
        return R

    parts = th.run_all(fold, list(zip(cuts[:-1], cuts[1:])))
    R = parts[0]
    for R2 in parts[1:]:
        R = _tpqrt(D, R, np.asfortranarray(np.triu(R2)))   # R2 triangular: l = D rows of its pentagon
    return np.triu(R), None


_CAPSULES: dict = {}
_INT_P = ctypes.POINTER(ctypes.c_int)


def _capsule(module: str, name: str, *args):
    """The BLAS or LAPACK routine ``name`` as SciPy links it (its
    ``cython_blas`` / ``cython_lapack`` capsule), as a ctypes function with
    arguments ``args``, or None where the capsule cannot be read. A ctypes call
    releases the interpreter lock, where SciPy's own wrappers of ``tpqrt`` and
    ``trsm`` hold it (two threads folding blocks ran one at a time)."""
    key = (module, name, args)
    if key not in _CAPSULES:
        fn = None
        try:
            import importlib

            cap = importlib.import_module(f"scipy.linalg.{module}").__pyx_capi__[name]
            get_name, get_ptr = ctypes.pythonapi.PyCapsule_GetName, ctypes.pythonapi.PyCapsule_GetPointer
            get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
            get_ptr.restype, get_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
            sig = get_name(cap)
            # the C signature SciPy exports: a void function of pointers, with
            # C ints (LP64) where ctypes is told so; anything else is not called
            kinds = [b"int *" if a is _INT_P else b"char *" if a is ctypes.c_char_p else None for a in args]
            parts = [x.strip() for x in sig.decode("ascii", "replace").split("(", 1)[1].rstrip(")").split(",")]
            ok = sig.startswith(b"void (") and len(parts) == len(args) and all(
                k is None or p.encode() == k for k, p in zip(kinds, parts))
            fn = ctypes.CFUNCTYPE(None, *args)(get_ptr(cap, sig)) if ok else None
        except Exception:  # pragma: no cover - a SciPy without the capsule
            fn = None
        _CAPSULES[key] = fn
    return _CAPSULES[key]


def _ints(*values):
    return [ctypes.byref(ctypes.c_int(int(v))) for v in values]


def _lapack_tpqrt():
    i, p = _INT_P, ctypes.c_void_p
    # dtpqrt(m, n, l, nb, a, lda, b, ldb, t, ldt, work, info), every int by reference
    return _capsule("cython_lapack", "dtpqrt", i, i, i, i, p, i, p, i, p, i, p, i)


def _trsm_left_upper_t(R: np.ndarray, B: np.ndarray) -> None:
    """``B <- R^{-T} B`` in place (BLAS ``dtrsm``: left, upper, transposed),
    ``R`` ``D x D`` and ``B`` ``D x k`` both Fortran-ordered."""
    c, i, p = ctypes.c_char_p, _INT_P, ctypes.c_void_p
    fn = _capsule("cython_blas", "dtrsm", c, c, c, c, i, i, ctypes.POINTER(ctypes.c_double), p, i, p, i)
    D, k = B.shape
    if fn is None or not (B.flags.f_contiguous and R.flags.f_contiguous) or 0 in (D, k):
        trsm = scipy.linalg.get_blas_funcs("trsm", (R,))
        out = trsm(1.0, R, B, side=0, lower=0, trans_a=1, overwrite_b=1)
        if out is not B and B.size:
            B[...] = out
        return
    m_, n_, lda, ldb = _ints(D, k, R.shape[0], D)
    fn(b"L", b"U", b"T", b"N", m_, n_, ctypes.byref(ctypes.c_double(1.0)), R.ctypes.data, lda, B.ctypes.data, ldb)


def _tpqrt(tri: int, R: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The triangle of the QR factorisation of ``[R; B]`` (LAPACK ``tpqrt``; the
    last ``tri`` rows of ``B`` upper trapezoidal), into ``R``'s storage (``R``
    Fortran-ordered ``D x D``; ``B`` is overwritten)."""
    m, D = B.shape
    nb = max(1, min(_TPQRT_NB, D))
    fn = _lapack_tpqrt()
    if fn is not None and R.flags.f_contiguous and R.dtype == np.float64 and m > 0 and D > 0:
        B = np.asfortranarray(B, dtype=np.float64)
        T, work, status = np.empty((nb, D), order="F"), np.empty(nb * D), ctypes.c_int(0)
        m_, n_, l_, nb_, lda, ldb, ldt = _ints(m, D, tri, nb, D, m, nb)
        fn(m_, n_, l_, nb_, R.ctypes.data, lda, B.ctypes.data, ldb, T.ctypes.data, ldt, work.ctypes.data,
           ctypes.byref(status))
        info = status.value
    else:
        tpqrt, = scipy.linalg.get_lapack_funcs(("tpqrt",), (R,))
        R, _, _, info = tpqrt(tri, nb, R, B, overwrite_a=1, overwrite_b=1)
    if info != 0:  # pragma: no cover - LAPACK argument errors only
        raise RuntimeError(f"tpqrt failed (info = {info})")
    return R


def tall_r(block: Callable[[int, int], np.ndarray], rows: int, D: int, step: int,
           progress: Callable[[int, int], None] | None = None, keep_q: bool = False,
           method: str | None = None, fresh: bool = False) -> Tall:
    """The triangular factor of the ``rows x D`` matrix whose rows ``lo:hi`` are
    ``block(lo, hi)``, by the route the module docstring describes.

    ``step`` rows are formed at a time (all at once when ``rows <= 2 step``);
    ``progress(done, rows)`` after each block of the last pass but the first.
    ``keep_q``: make :meth:`Tall.q` available (Householder QR then keeps its
    reflectors, ``rows x D``; it needs the matrix in one block; the other
    routes solve ``X R^{-1}`` a block at a time). ``method`` forces a route
    (``"householder"`` or ``"cholesky-qr2"``, the latter still falling back
    when its condition fails) or asks for the Gram route first (``"gram"``:
    CholeskyQR2, then Householder QR, where its bound fails). ``fresh``:
    ``block`` returns a new float64 array on each call, which may then be
    overwritten."""
    # every route on one BLAS thread (its row chunks on threads of their own):
    # LAPACK's rounding depends on BLAS's thread count, and the factor -- and Q,
    # made again later from the same rows -- must not
    with th.one_blas_thread():
        return _tall_r(block, rows, D, step, progress, keep_q, method, fresh)


def _tall_r(block, rows, D, step, progress, keep_q, method, fresh) -> Tall:
    step = max(int(step), D, 1)
    if rows <= 2 * step:
        step = rows                    # one block: nothing to stream
    if rows < D:
        X = np.array(block(0, rows), dtype=np.float64)
        return Tall(X, "wide", None, lambda: np.eye(rows))
    kappa = None
    if method != "householder":
        R, kappa, route = _centred(block, rows, D, step, progress, gram=method == "gram")
        if R is None and route != "householder":
            R, kappa, route = _cholesky_qr2(block, rows, D, step, progress, fresh, gram=method == "gram")
        if R is not None:
            def q():
                Q = np.empty((rows, D))
                for lo in range(0, rows, step):
                    hi = min(rows, lo + step)
                    Q[lo:hi] = scipy.linalg.solve_triangular(R, np.asarray(block(lo, hi), dtype=float).T,
                                                             trans=1, check_finite=False).T
                return Q
            return Tall(R, route, kappa, q)
    R, q = _householder(block, rows, D, step, progress, keep_q and rows <= 2 * step)
    return Tall(R, "householder", kappa, q)
