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
    if not np.all(np.isfinite(arr)):
        i, j = map(int, np.argwhere(~np.isfinite(arr))[0])
        raise NonFiniteValueError(f"{name}[{i}][{j}] is {arr[i, j]}; only finite numbers are allowed")
    return arr


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
    return tol.rank(_svd(X)[1], scale)


def row_basis(X: np.ndarray, scale: float | None = None,
              tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the row space (rows of an ``r x d`` array) and
    whether its dimension was decided."""
    _, s, vt = _svd(X)
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
    u, s, vt = _svd(X)
    r = tol.rank(s)[0] if rank is None else int(rank)
    return (vt[:r].T / s[:r]) @ u[:, :r].T


def solve_left(Y: np.ndarray, X: np.ndarray, rank: int | None = None,
               tol: Tolerance = DEFAULT_TOLERANCE) -> np.ndarray:
    """The minimum-norm least-squares ``W`` of ``W X = Y``."""
    return Y @ pinv(X, rank, tol)


def product_scale(*factors: np.ndarray) -> float:
    """``max |A_1| |A_2| ... |A_p|`` (entrywise absolute values): a bound on the
    entries of the product and hence the natural scale of its rounding error."""
    acc = np.abs(factors[0])
    for f in factors[1:]:
        acc = acc @ np.abs(f)
    return float(acc.max()) if acc.size else 0.0


def is_zero(R: np.ndarray, scale: float, tol: Tolerance = DEFAULT_TOLERANCE) -> Decision:
    """Three-valued test that ``R`` vanishes, relative to ``scale``."""
    res = float(np.abs(R).max()) if R.size else 0.0
    return tol.decide(res, max(scale, 1.0))
