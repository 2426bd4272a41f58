r"""Floating-point linear algebra with one documented tolerance policy.

**The tolerance policy.** Every float decision compares a non-negative residual
``r`` with a *scale* ``s`` (a bound on the size of the numbers whose rounding
errors could make ``r`` non-zero) using one :class:`Tolerance` ``(rtol, gap)``:

* ``r <= rtol * s``            -- the claim **holds**;
* ``r >  gap * rtol * s``      -- the claim **fails**;
* otherwise                     -- **undecided**: the residual is in the band where
  rounding error and a genuine small value cannot be told apart.

Rank decisions use the same rule on singular values, with ``s`` the largest
singular value: ``sigma <= rtol * s`` is zero, ``sigma > gap * rtol * s`` is
non-zero, and a singular value in between makes the rank (and every verdict that
depends on it) undecided. The defaults ``rtol = 1e-9``, ``gap = 1e3`` sit far
above double-precision round-off (``~1e-16``) on the instance sizes the suite
uses and far below the residuals of genuinely different models; THEORY section
10 shows why the cut must not be the NumPy ``pinv`` default (which kept a
``7e-15`` singular value and produced a false "not equivalent").

>>> tol = Tolerance()
>>> tol.decide(1e-14, 1.0).truth.value
'holds'
>>> tol.decide(0.5, 1.0).truth.value
'fails'
>>> tol.decide(1e-7, 1.0).truth.value
'undecided'
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from allornone.decision import Decision, Truth
from allornone.errors import NonFiniteValueError, ShapeError

__all__ = [
    "Tolerance",
    "DEFAULT_TOLERANCE",
    "as_float_matrix",
    "rank",
    "row_basis",
    "column_basis",
    "projector_onto_rows",
    "projector_onto_columns",
    "pinv",
    "solve_left",
    "is_zero",
    "product_scale",
]


@dataclass(frozen=True)
class Tolerance:
    """The float layer's tolerance: ``(rtol, gap)``; see the module docstring."""

    rtol: float = 1e-9
    gap: float = 1e3

    def __post_init__(self):
        if not (0 < self.rtol < 1) or not (self.gap >= 1) or not np.isfinite(self.gap):
            raise ValueError("Tolerance needs 0 < rtol < 1 and a finite gap >= 1")

    def bounds(self, scale: float) -> tuple[float, float]:
        s = max(float(scale), np.finfo(float).tiny)
        return self.rtol * s, self.gap * self.rtol * s

    def decide(self, residual: float, scale: float, **detail) -> Decision:
        lo, hi = self.bounds(scale)
        residual = float(residual)
        if not np.isfinite(residual):
            truth = Truth.UNDECIDED
        elif residual <= lo:
            truth = Truth.HOLDS
        elif residual > hi:
            truth = Truth.FAILS
        else:
            truth = Truth.UNDECIDED
        return Decision(truth, residual, (lo, hi), detail)

    def rank(self, singular_values: np.ndarray, scale: float | None = None) -> tuple[int, bool]:
        """Numerical rank and whether it is decided (no singular value in the band).

        ``scale`` is the size against which singular values are judged: by
        default the largest one, but a matrix that is a product (``P_F P_G``,
        ``F G_0^T``) must be judged against the size of its factors, or its
        rounding noise would count as rank when it is really zero."""
        s = np.asarray(singular_values, dtype=float)
        ref = (s[0] if s.size else 0.0) if scale is None else max(float(scale), s[0] if s.size else 0.0)
        if s.size == 0 or ref == 0:
            return 0, True
        lo, hi = self.bounds(ref)
        r = int(np.sum(s > lo))
        return r, bool(not np.any((s > lo) & (s <= hi)))


DEFAULT_TOLERANCE = Tolerance()


def as_float_matrix(data, name: str = "matrix") -> np.ndarray:
    """A finite 2-D float array (a copy; the caller's data is never touched)."""
    try:
        arr = np.array(data, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name}: not a rectangular array of real numbers ({exc})") from None
    if arr.ndim != 2:
        raise ShapeError(f"{name}: expected a 2-D array, got {arr.ndim} dimension(s)")
    # min and max see every NaN and infinity without an array-sized temporary.
    if arr.size and not (np.isfinite(arr.min()) and np.isfinite(arr.max())):
        i, j = map(int, np.argwhere(~np.isfinite(arr))[0])
        raise NonFiniteValueError(f"{name}[{i}][{j}] is {arr[i, j]}; only finite numbers are allowed")
    return arr


# Tall matrices with at least this many entries are first reduced to their
# triangular factor R (X = QR, same singular values and right singular vectors),
# block by block, so that neither Q, nor U, nor a full copy of X is ever formed.
_LARGE = 1 << 16
_BLOCK_ROWS = 1 << 12
# Entries of the largest temporary product_scale forms.
_SCALE_BLOCK = 1 << 22


def _is_large_tall(X: np.ndarray) -> bool:
    return X.size >= _LARGE and X.shape[0] >= 2 * X.shape[1]


def _tall_r(X: np.ndarray) -> np.ndarray:
    """The ``n x n`` factor ``R`` of ``X = QR`` (``X`` is ``m x n``, ``m >= n``).

    Householder QR of row blocks, then QR of the stacked block factors
    (TSQR): backward stable like one QR of ``X``, with a working copy of one
    block instead of ``X``."""
    m, n = X.shape
    geqrf, = scipy.linalg.get_lapack_funcs(("geqrf",), (X,))
    step = max(_BLOCK_ROWS, 2 * n)
    lwork = None

    def r_of(block):
        nonlocal lwork
        if lwork is None:
            lwork = max(int(geqrf(block, lwork=-1)[2][0].real), 1)
        qr, _, _, info = geqrf(block, lwork=lwork, overwrite_a=True)
        if info != 0:  # pragma: no cover - only for invalid arguments
            raise np.linalg.LinAlgError(f"geqrf failed with info={info}")
        return np.triu(qr[: min(block.shape), :])

    parts = [r_of(np.asfortranarray(X[i:i + step])) for i in range(0, m, step)]
    if len(parts) == 1:
        R = parts[0]
    else:
        stacked = np.empty((sum(p.shape[0] for p in parts), n), order="F")
        np.concatenate(parts, out=stacked)
        del parts
        R = r_of(stacked)
    if R.shape[0] < n:  # pragma: no cover - only when m < n, excluded by the callers
        R = np.vstack([R, np.zeros((n - R.shape[0], n))])
    return R


def _s_vt(X: np.ndarray):
    """Singular values and right singular vectors of ``X`` (no ``U``)."""
    if _is_large_tall(X):
        _, s, vt = _svd(_tall_r(X))
        return s, vt
    _, s, vt = _svd(X)
    return s, vt


def _svd(X: np.ndarray):
    if 0 in X.shape:
        k = min(X.shape)
        return np.zeros((X.shape[0], k)), np.zeros(k), np.zeros((k, X.shape[1]))
    # gesdd is the fast driver; it can fail to converge on rare inputs, gesvd does not.
    try:
        return scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    except np.linalg.LinAlgError:  # pragma: no cover - LAPACK corner case
        return scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesvd", check_finite=False)


def rank(X: np.ndarray, scale: float | None = None, tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[int, bool]:
    """Numerical rank and whether the decision is clear of the undecided band
    (``scale``: see :meth:`Tolerance.rank`)."""
    return tol.rank(_s_vt(X)[0], scale)


def row_basis(X: np.ndarray, scale: float | None = None,
              tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the row space (rows of an ``r x d`` array) and
    whether its dimension was decided."""
    s, vt = _s_vt(X)
    r, decided = tol.rank(s, scale)
    return vt[:r], decided


def column_basis(X: np.ndarray, scale: float | None = None,
                 tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the column space (``m x r``) and whether its
    dimension was decided."""
    u, s, _ = _svd(X)
    r, decided = tol.rank(s, scale)
    return u[:, :r], decided


def projector_onto_rows(B: np.ndarray) -> np.ndarray:
    """Projector onto the row space of ``B``; rows orthonormal (as returned by
    :func:`row_basis`) or merely independent."""
    if B.shape[0] == 0:
        return np.zeros((B.shape[1], B.shape[1]))
    gram = B @ B.T
    if np.allclose(gram, np.eye(B.shape[0]), atol=1e-12):
        return B.T @ B
    return B.T @ np.linalg.solve(gram, B)


def projector_onto_columns(U: np.ndarray) -> np.ndarray:
    return projector_onto_rows(U.T)


def pinv(X: np.ndarray, rank: int | None = None, tol: Tolerance = DEFAULT_TOLERANCE) -> np.ndarray:
    """Pseudo-inverse truncated at ``rank`` (default: the rank decided by
    ``tol``), never at NumPy's default cut (THEORY section 10)."""
    if _is_large_tall(X) or _is_large_tall(X.T):
        # With X^T X = V S^2 V^T (V, S from R), X^+ = (V_r S_r^-2 V_r^T) X^T:
        # one product with X, no U and no copy of X.
        tall = X.shape[0] >= X.shape[1]
        s, vt = _s_vt(X if tall else X.T)
        r = tol.rank(s)[0] if rank is None else int(rank)
        core = (vt[:r].T / s[:r] ** 2) @ vt[:r]
        return core @ X.T if tall else X.T @ core
    u, s, vt = _svd(X)
    r = tol.rank(s)[0] if rank is None else int(rank)
    return (vt[:r].T / s[:r]) @ u[:, :r].T


def solve_left(Y: np.ndarray, X: np.ndarray, rank: int | None = None,
               tol: Tolerance = DEFAULT_TOLERANCE) -> np.ndarray:
    """The minimum-norm least-squares ``W`` of ``W X = Y``, i.e. ``Y X^+``."""
    if _is_large_tall(X.T):
        # Y X^+ = (Y X^T)(V_r S_r^-2 V_r^T): the wide X^+ (n x p) is never formed.
        s, vt = _s_vt(X.T)
        r = tol.rank(s)[0] if rank is None else int(rank)
        return (Y @ X.T) @ ((vt[:r].T / s[:r] ** 2) @ vt[:r])
    return Y @ pinv(X, rank, tol)


def product_scale(*factors: np.ndarray) -> float:
    """``max |A_1| |A_2| ... |A_p|`` (entrywise absolute values): a bound on the
    entries of the product and hence the natural scale of its rounding error."""
    if len(factors) == 1:
        A = factors[0]
        return float(max(A.max(), -A.min())) if A.size else 0.0
    # The product is formed a block of columns of the last factor at a time, so
    # that no temporary is larger than a block (the product itself can be m x n).
    head = np.abs(factors[0])
    for f in factors[1:-1]:
        head = head @ np.abs(f)
    last = factors[-1]
    if head.size == 0 or last.size == 0:
        return 0.0
    step = max(1, _SCALE_BLOCK // max(head.shape[0], last.shape[0]))
    return float(max((head @ np.abs(last[:, j:j + step])).max() for j in range(0, last.shape[1], step)))


def is_zero(R: np.ndarray, scale: float, tol: Tolerance = DEFAULT_TOLERANCE) -> Decision:
    """Three-valued test that ``R`` vanishes, relative to ``scale``.

    The scale is floored at 1: projectors and orthonormal bases, which enter
    most checks, have norm 1 and carry rounding error of that size in every
    entry, including entries whose exact value is 0, where an entrywise scale
    would see only that error. The price is an absolute tolerance (``rtol``,
    ``gap * rtol``) for data whose entries are much smaller than 1: rescale such
    models (the verdicts of every result are invariant under ``f -> c f``)."""
    res = float(max(R.max(), -R.min())) if R.size else 0.0
    return tol.decide(res, max(scale, 1.0))
