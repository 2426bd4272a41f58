r"""Floating-point linear algebra with one documented tolerance policy.

**What a float verdict means.** Every float decision compares a non-negative
residual ``r``, computed with an error of at most ``e``, with the natural size
``s`` of what it compares (:meth:`Tolerance.certain`), and says

* **holds**      when ``r + e <= sqrt(gap) rtol s``: the exact residual is
  certainly within ``sqrt(gap) rtol`` of the size, whatever the rounding did
  (an error bound is a cost for "holds", never room for it);
* **fails**      when ``r > gap (rtol s + e)``: the residual is larger than any
  error the computation can make plus ``gap`` times the tolerance, so the
  exact residual is not zero at the tolerance;
* **undecided**  otherwise.

The two parts of the bound:

* ``e`` -- the **rounding bound** of the computation, from error analysis at
  the scale of the quantities that reach the distribution, with the unit
  roundoff ``u = 2^-53``: entry ``(x, y)`` of ``L = F G_0^T`` is accurate to
  ``~ u sqrt(d) |f(x)| |g_0(y)|`` (each entry on its own scale, never on the
  largest entry of ``L``); ``G_0 = G - g(y_0)`` carries the exact rounding error
  of its subtraction (measured, not estimated, with an error-free
  transformation); a subspace computed from an SVD is accurate to
  ``~ u ||X|| / sigma_r(X)`` (the sin-theta bound), and every quantity built
  from it carries that error at the size of the raw rows it projects;
* ``rtol * s`` -- a **relative tolerance** (``rtol``, default ``1e-12``) on the
  natural size ``s`` of the compared quantity (what reaches the distribution:
  projected rows, the log-odds entry itself), so that a residual far below the
  size of what it compares is not called a difference.

**Ranks** are decided by rounding alone: a singular value ``sigma`` of a
matrix whose entries are known to ``u``-accuracy is *zero* when it is below the
SVD's backward error ``c u ||X||`` (``c = 4 sqrt(max(shape))``, plus any
propagated input error), *non-zero* above ``gap`` times that, and
**undecided** in between. Matrices are first scaled by exact powers of two
(rows, and for ranks of data matrices also columns), which changes no rank, so
that one huge context, token or coordinate cannot hide the others. The
effective complexity ``k`` is the rank of ``L`` itself, read off the
triangular factors of ``F`` and ``G_0`` -- a decision about the logits, which
hidden components, changes of basis, scalings and offsets do not move. An
undecided rank makes every verdict that depends on it undecided.

``Tolerance.rank_rtol`` (default ``None``) adds a modelling tolerance to rank
decisions: singular values below ``rank_rtol * sigma_1`` then count as zero
(for trained models whose spectra fade smoothly).

>>> tol = Tolerance()
>>> tol.certain(1e-14, 1.0).truth.value
'holds'
>>> tol.certain(0.5, 1.0).truth.value
'fails'
>>> tol.certain(1e-10, 1.0).truth.value
'undecided'
>>> tol.certain(1e-14, 1e-6).truth.value   # above gap * rtol * scale
'fails'
>>> tol.certain(1e-14, 1e-6, extra=1e-13).truth.value   # a rounding bound may hide a difference
'undecided'
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.linalg

from allornone.decision import Decision, Truth
from allornone.errors import AllOrNoneError, NonFiniteValueError, ShapeError, UnrepresentableValueError

__all__ = [
    "UNIT_ROUNDOFF",
    "Tolerance",
    "DEFAULT_TOLERANCE",
    "as_float_matrix",
    "row_norms",
    "central_token",
    "reference_token",
    "col_norms",
    "rank",
    "data_rank",
    "data_row_space",
    "row_basis",
    "column_basis",
    "projector_onto_rows",
    "pinv",
    "solve_left",
    "is_zero",
    "product_scale",
    "row_exponents",
    "scale_rows",
    "svd_noise",
    "norm2",
    "difference_with_error",
    "subtract_with_error",
    "underflow_loss",
    "exact_rows",
    "scaled_with_error",
]

#: ``u = 2^-53``: the relative rounding error of one binary64 operation.
UNIT_ROUNDOFF = 2.0 ** -53
#: What underflow may lose in one computation of the float layer: the smallest
#: subnormal for each of up to 2^30 operations whose result fell below the
#: normal range. Negligible beside any tolerance on numbers of normal size; on
#: subnormal data it keeps "holds" from being decided on what underflow erased.
UNDERFLOW = 2.0 ** -1074 * 2.0 ** 30
_TINY = np.finfo(float).tiny           # the smallest normal number
_SUBNORMAL = 2.0 ** -1074               # the smallest subnormal


def underflow_loss(*dims: int) -> float:
    """What underflow may lose in one entry of ``F G_0^T`` computed in binary64
    with every row scaled by a power of two to entries of at most one (``dims``:
    the dimensions of the products summed, one per model): in each model, each
    of the ``d`` entries of the two rows may lose ``2^-1075`` to the scaling,
    each product ``2^-1075``, and the rounding bound's own product as much, so
    at most ``3 d 2^-1074`` per model; taken as ``8 d 2^-1074``, and never
    below ``2 UNDERFLOW``. Added to the bound of every entry whose row and
    column are not zero in both models, it keeps two logits that underflowed
    to zero (or to a few subnormals) from being called equal.

    >>> underflow_loss(3, 4) == 2 * UNDERFLOW
    True
    """
    return 2.0 ** -1074 * max(2.0 ** 31, 8.0 * float(sum(dims)))


@dataclass(frozen=True)
class Tolerance:
    """The float layer's tolerance; see the module docstring.

    Parameters
    ----------
    rtol : float
        Relative tolerance on the natural size of a compared quantity
        (default ``1e-12``).
    gap : float
        Ratio between the "fails" and the "holds" bound (default ``1e3``).
    rank_rtol : float or None
        Optional modelling tolerance for ranks: singular values below
        ``rank_rtol * sigma_1`` count as zero (default ``None``: ranks are
        decided by rounding alone).
    """

    rtol: float = 1e-12
    gap: float = 1e3
    rank_rtol: float | None = None

    def __post_init__(self):
        if not (0 < self.rtol < 1) or not (self.gap >= 1) or not np.isfinite(self.gap):
            raise ValueError("Tolerance needs 0 < rtol < 1 and a finite gap >= 1")
        if not math.sqrt(self.gap) * self.rtol < 1:
            # a "holds" is decided within sqrt(gap) rtol of the natural size: at
            # one or more it tests nothing (any sine, any relative residual passes)
            raise ValueError(f"Tolerance needs sqrt(gap) * rtol < 1 (here {math.sqrt(self.gap) * self.rtol:.3g}): "
                             "otherwise a \"holds\" would test nothing")
        if self.rank_rtol is not None and not (0 < self.rank_rtol < 1):
            raise ValueError("Tolerance needs 0 < rank_rtol < 1 (or None)")

    def __str__(self) -> str:
        """The policy in words, each number with its name and role.

        >>> print(Tolerance())
        rtol = 1e-12 (relative to the natural size of what is compared), gap = 1000 (from the "holds" bound to the "fails" bound), ranks by rounding alone
        >>> print(Tolerance(1e-9, 10, 1e-6).__str__().split("), ")[-1])
        ranks: singular values below rank_rtol = 1e-06 times the largest count as zero
        """
        ranks = ("ranks by rounding alone" if self.rank_rtol is None else
                 f"ranks: singular values below rank_rtol = {self.rank_rtol:g} times the largest count as zero")
        return (f"rtol = {self.rtol:g} (relative to the natural size of what is compared), gap = {self.gap:g} "
                f'(from the "holds" bound to the "fails" bound), {ranks}')

    def bounds(self, scale: float, extra: float = 0.0) -> tuple[float, float]:
        """``(holds below, fails above)``: ``rtol * scale + extra`` and ``gap``
        times that, where ``extra`` is the rounding bound of the computation and
        :data:`UNDERFLOW` is added to it (what underflow may have lost)."""
        lo = self.rtol * max(float(scale), 0.0) + max(float(extra), 0.0) + UNDERFLOW
        return lo, self.gap * lo

    @property
    def resolution(self) -> float:
        """``sqrt(gap)``: the decision primitives (:mod:`allornone.numeric.primitives`)
        call a residual zero only when it is certainly within ``sqrt(gap) rtol``
        of its natural size -- halfway, on a log scale, between the tolerance and
        the ``gap rtol`` beyond which a residual fails -- whatever the rounding did."""
        return math.sqrt(self.gap)

    def certain(self, residual: float, scale: float, extra: float = 0.0, underflow: bool = True,
                **detail) -> Decision:
        """Decide ``residual = 0`` when the rounding bound may not buy a "holds":
        holds when ``residual + extra <= sqrt(gap) rtol * scale`` (the exact
        residual is certainly within :attr:`resolution` ``* rtol`` of
        ``scale``), fails as :meth:`decide` does, undecided otherwise.
        ``underflow=False`` when ``extra`` already bounds what underflow lost.

        >>> Tolerance().certain(1e-14, 1e-6, extra=1e-13).truth.value    # the bound may hide a difference
        'undecided'
        >>> Tolerance().certain(1e-14, 1.0, extra=1e-13).truth.value
        'holds'
        """
        e = max(float(extra), 0.0) + (UNDERFLOW if underflow else 0.0)
        s = max(float(scale), 0.0)
        lo, hi = self.resolution * self.rtol * s - e, self.gap * (self.rtol * s + e)
        residual = float(residual)
        # a quantity of natural size zero computed without error is zero
        return _three_valued(residual, lo, hi, residual == 0.0 and s == 0.0 and not extra, detail)

    def rank(self, singular_values: np.ndarray, scale: float | None = None, noise: float | None = None,
             size: int | None = None, reference: float | None = None) -> tuple[int, bool]:
        """Numerical rank of a matrix from its singular values, and whether it
        is decided (no singular value between the zero bound and ``gap`` times it).

        The zero bound is ``noise`` when given (an absolute error bound on the
        singular values); otherwise the SVD's backward error
        ``4 sqrt(size) u max(scale, sigma_1)``, with ``size`` the larger
        dimension of the matrix (default: the number of singular values).
        ``reference``: the largest size the matrix could have; when ``gap``
        times the zero bound exceeds it, nothing is decided."""
        s = np.asarray(singular_values, dtype=float)
        if s.size == 0:
            return 0, True
        top = float(s[0])
        if noise is None:
            ref = top if scale is None else max(float(scale), top)
            noise = svd_noise(size if size is not None else s.size, ref)
        if not np.isfinite(noise) or not np.all(np.isfinite(s)):
            return int(np.sum(s > 0)), False
        if self.rank_rtol is not None:
            noise = max(noise, self.rank_rtol * top)
        if top == 0:
            return 0, True
        lo, hi = noise, self.gap * noise
        r = int(np.sum(s > lo))
        decided = bool(not np.any((s > lo) & (s <= hi)))
        if reference is not None and hi > reference:
            # the error bound is as large as anything the matrix could hold: it may
            # be zero or not
            decided = False
        return r, decided


DEFAULT_TOLERANCE = Tolerance()


def _three_valued(residual: float, lo: float, hi: float, zero: bool, detail: dict) -> Decision:
    """holds at or below ``lo`` (or when ``zero``), fails above ``hi``, undecided
    in between or when anything is not finite."""
    if not (np.isfinite(residual) and np.isfinite(lo) and np.isfinite(hi)):
        truth = Truth.UNDECIDED
    elif zero or residual <= lo:
        truth = Truth.HOLDS
    elif residual > hi:
        truth = Truth.FAILS
    else:
        truth = Truth.UNDECIDED
    return Decision(truth, residual, (lo, hi), detail)


def row_norms(X: np.ndarray) -> np.ndarray:
    """Upper bounds on the Euclidean norms of the rows of ``X`` (one pass, no
    temporary), never lost to underflow. ``np.linalg.norm`` of a row whose
    entries are all below about ``2^-537`` is 0, and a rounding bound built on
    it vanishes. The sum of ``d`` squares is off by ``gamma_d`` of itself,
    the root and the factor by ``u`` each, so ``1 + (d + 2) u`` covers
    them. Underflow is what is left: a square below ``2^-1022`` loses up to
    ``2^-1075``, which beside a sum below ``2^-900`` is no longer a relative
    error -- the last slice of a row whose entries span the exponent range
    has such entries. Those rows are scaled by a power of two to a largest
    entry in ``[1/2, 1)`` first (exact), and their norms scaled back (plus
    ``2^-1074`` for a norm that lands among the subnormals); so are rows
    whose squares overflow though their norm does not.

    >>> [float(v) > 0 for v in row_norms(np.array([[2.0 ** -600, 0.0], [0.0, 0.0]]))]
    [True, False]
    >>> bool(row_norms(np.array([[2.0 ** 600, 2.0 ** 600]]))[0] >= 2.0 ** 600 * np.sqrt(2))
    True
    """
    d = X.shape[1]
    if d == 0:
        return np.zeros(X.shape[0])
    with np.errstate(over="ignore", under="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
    out = np.sqrt(sq)
    small = np.flatnonzero((sq < 2.0 ** -900) | (sq > 2.0 ** 900))
    if small.size:
        top = np.max(np.abs(X[small]), axis=1)
        live = top > 0
        small, top = small[live], top[live]
        e = np.frexp(top)[1]
        y = scale_rows(X[small], e)
        out[small] = np.ldexp(np.sqrt(np.einsum("ij,ij->i", y, y)) * (1 + (d + 2) * UNIT_ROUNDOFF), e) + 2.0 ** -1074
    out *= 1 + (d + 2) * UNIT_ROUNDOFF
    return out


def col_norms(X: np.ndarray) -> np.ndarray:
    """:func:`row_norms` of the columns."""
    return row_norms(X.T)


#: Rows of ``G`` from which the median that :func:`central_token` measures
#: against is taken (evenly spaced; all of them in a smaller vocabulary).
MEDIAN_SAMPLE = 1025


def _centre(G: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The coordinatewise median of (at most :data:`MEDIAN_SAMPLE` evenly spaced)
    rows of ``G``, each coordinate's unit (the median distance of those rows to
    it in that coordinate; where that is zero, the smallest nonzero one, and at
    most the typical row's largest distance over all coordinates; where every
    row has the median, infinite: no variation to lose) and the distances
    of those rows to the median (:func:`_distances`): a few tokens far from
    the rest move none of them.

    Distances are measured coordinate by coordinate in those units, since the
    rounding of ``g(y)_j - g(y_0)_j`` loses what tokens differ by in that one
    coordinate, relative to ``|g(y_0)_j|``: a pivot ``2^100`` from tokens
    clustered within ``2^-100`` of each other in one coordinate is far, even
    where another coordinate spreads every token by units (a coordinate no
    context reads, say)."""
    n = G.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, MEDIAN_SAMPLE)).astype(int))
    S = np.asarray(G[idx], dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        med = np.median(S, axis=0)
        dev = np.abs(S - med)
        unit = np.median(dev, axis=0)
        smallest = np.min(np.where(dev > 0, dev, np.inf), axis=0, initial=np.inf)
        # where most rows agree exactly in a coordinate, a lone row off it would
        # be its own unit (distance 1, however far): the typical row's largest
        # deviation over all coordinates bounds that unit from above
        typical = float(np.median(np.max(dev, axis=1, initial=0.0))) if S.shape[1] else 0.0
        if typical > 0:
            smallest = np.minimum(smallest, typical)
        unit = np.where(unit > 0, unit, smallest)
    return med, unit, _distances(S, med, unit)


def _distances(G: np.ndarray, med: np.ndarray, unit: np.ndarray, rows=None) -> np.ndarray:
    """Largest coordinate difference of rows of ``G`` to ``med``, each
    coordinate in its ``unit`` (:func:`_centre`), a block of rows at a time
    (no copy of ``G``)."""
    rows = np.arange(G.shape[0]) if rows is None else np.asarray(rows)
    out = np.empty(rows.size)
    for lo in range(0, rows.size, 4096):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            dev = np.abs(np.asarray(G[rows[lo:lo + 4096]], dtype=float) - med)
            # (a coordinate without variation, unit inf, moves no distance; one off it by
            # any amount in a coordinate whose tokens all agree is as far as can be)
            ratio = np.where(dev > 0, dev / unit, 0.0)
            out[lo:lo + 4096] = np.max(ratio, axis=1, initial=0.0)
    return np.where(np.isfinite(out), out, np.inf)


def central_token(G: np.ndarray) -> int:
    """The token whose ``g`` is nearest (largest coordinate difference) to the
    coordinatewise median of the rows of ``G`` (:func:`_centre`).

    The span of the log-odds columns ``F (g(y) - g(y_0))`` with the constant
    column is the same for every pivot ``y_0`` (a difference against another
    pivot is a difference of two of them), and so is every claim read off it.
    Its numbers are not: a pivot whose ``g`` is far from the others adds one
    vector ``F g(y_0)`` of that size to every column, and the small
    differences between columns that carry the span drown in the rounding of
    the large entries (a pivot ``2^60`` from the others left columns of size
    ``2^60`` that differ by units). The median is not moved by a few tokens
    far from the rest.

    >>> central_token(np.array([[2.0 ** 60, 0.0], [1.0, 2.0], [0.0, 1.0], [2.0, 1.0]]))
    3
    """
    if G.shape[0] == 0:
        return 0
    med, unit, _ = _centre(G)
    return int(np.argmin(_distances(G, med, unit)))


#: A pivot whose ``g`` is farther than this many times the typical token's from
#: the coordinatewise median of ``G`` is an outlier (:func:`reference_token`).
OUTLIER = 2.0 ** 10


def reference_token(G: np.ndarray, pivot: int) -> int:
    """The token that differences of rows of ``G`` are taken against where
    only their span, or a claim true for every pivot, matters: ``pivot``,
    unless its ``g`` lies more than :data:`OUTLIER` times farther from the
    coordinatewise median than the median token's does (its distance would
    then dominate every difference, and their rounding hide the rest); then
    the :func:`central_token`. Around a pivot that the other tokens surround,
    however far apart in scale they are, the pivot itself is kept: their
    differences from it are what the model gives, exactly. The usual case
    costs a median of at most :data:`MEDIAN_SAMPLE` rows.

    >>> G = np.array([[2.0 ** 60, 0.0], [1.0, 2.0], [0.0, 1.0], [2.0, 1.0]])
    >>> reference_token(G, 0), reference_token(G, 1)
    (3, 1)
    """
    if G.shape[0] == 0:
        return pivot
    med, unit, far = _centre(G)
    if _distances(G, med, unit, [pivot])[0] <= OUTLIER * float(np.median(far)):
        return int(pivot)
    return int(np.argmin(_distances(G, med, unit)))


def norm2(X: np.ndarray) -> float:
    """The spectral norm ``||X||_2``; for a large matrix from the Gram matrix of
    its shorter side (accurate to rounding for the largest singular value)."""
    if 0 in X.shape:
        return 0.0
    if not np.all(np.isfinite(X)):
        # an overflowed intermediate: its norm is unbounded, and every bound built on it
        return math.inf
    e = _exponent(X)
    if X.size <= 1 << 14:
        # scaled by a power of two so that neither the squares nor LAPACK's own
        # scaling overflow or underflow
        s = singular_values(np.ldexp(X, -e))
        return float(np.ldexp(s[0], e)) if s is not None and s.size else math.inf
    Y = np.ldexp(X, -e)
    gram = Y.T @ Y if X.shape[0] >= X.shape[1] else Y @ Y.T
    return float(np.ldexp(math.sqrt(max(float(np.linalg.eigvalsh(gram)[-1]), 0.0)), e))


def singular_values(X: np.ndarray) -> np.ndarray | None:
    """The singular values of ``X`` (divide and conquer, then QR iteration where
    it does not converge); None when neither converges or ``X`` is not finite
    (a decision resting on them is then undecided).

    >>> singular_values(np.diag([3.0, 1.0])).tolist()
    [3.0, 1.0]
    """
    if 0 in X.shape:
        return np.zeros(0)
    try:
        return svd(X, compute_uv=False)
    except Unresolved:
        return None


class Unresolved(np.linalg.LinAlgError, AllOrNoneError):
    """A float computation that cannot resolve its question: an SVD that no
    LAPACK driver brings to convergence, or an intermediate that left binary64.
    A decision resting on it is undecided (the float evaluation of a result
    catches this and says so); where a function has no undecided answer to
    give, it is one of the package's errors, with its reason in one line."""


def svd(X: np.ndarray, full_matrices: bool = False, compute_uv: bool = True):
    """``numpy.linalg.svd`` that tries divide and conquer (``gesdd``), then QR
    iteration (``gesvd``), and raises :class:`Unresolved` when neither
    converges or ``X`` is not finite.

    >>> svd(np.diag([3.0, 1.0]), compute_uv=False).tolist()
    [3.0, 1.0]
    >>> try:
    ...     svd(np.array([[np.nan]]))
    ... except Unresolved as exc:
    ...     print(exc)
    an SVD of a matrix with non-finite entries (1 x 1)
    """
    if 0 in X.shape:
        return np.linalg.svd(X, full_matrices=full_matrices, compute_uv=compute_uv)
    if not np.all(np.isfinite(X)):
        raise Unresolved(f"an SVD of a matrix with non-finite entries ({X.shape[0]} x {X.shape[1]})")
    for driver in ("gesdd", "gesvd"):
        try:
            return scipy.linalg.svd(X, full_matrices=full_matrices, compute_uv=compute_uv, lapack_driver=driver,
                                    check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            continue
    raise Unresolved(f"an SVD that neither LAPACK driver brings to convergence ({X.shape[0]} x {X.shape[1]})")


def norm_fro(X) -> float:
    """The Euclidean (Frobenius) norm, taken on ``X`` scaled by a power of two
    so that no square underflows or overflows: entries of ``2^-560`` square to
    zero, and a residual made of them would read as exactly zero."""
    X = np.asarray(X, dtype=float)
    if not X.size:
        return 0.0
    if not np.all(np.isfinite(X)):
        return math.inf
    e = _exponent(X)
    return float(np.ldexp(np.linalg.norm(np.ldexp(X, -e)), e))


def svd_noise(size: int, norm: float) -> float:
    """Backward error bound of an SVD: ``4 sqrt(size) u ||X||``."""
    return 4.0 * math.sqrt(max(int(size), 1)) * UNIT_ROUNDOFF * float(norm)


def as_float_matrix(data, name: str = "matrix") -> np.ndarray:
    """A finite 2-D float array (a copy; the caller's data is never touched).
    Booleans are refused, as on the exact side."""
    if (isinstance(data, np.ndarray) and data.dtype == bool) or (not isinstance(data, np.ndarray) and _has_bool(data)):
        raise ShapeError(f"{name}: booleans are not numbers here; give 0/1 as numbers")
    if isinstance(data, np.ndarray) and data.dtype.kind not in "fiuO":
        # complex numbers would lose their imaginary part, dates their unit, without a word
        raise ShapeError(f"{name}: expected real numbers, got an array of dtype {data.dtype}")
    if isinstance(data, np.ma.MaskedArray):
        raise ShapeError(f"{name}: a masked array; fill or drop the masked entries first (numpy.ma.filled)")
    try:
        arr = np.array(data, dtype=float, copy=True)
    except OverflowError:
        raise NonFiniteValueError(f"{name}: an entry is beyond the range of binary64 (about 1.8e308)") from None
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name}: not a rectangular array of real numbers ({exc})") from None
    if arr.ndim != 2:
        raise ShapeError(f"{name}: expected a 2-D array, got {arr.ndim} dimension(s)")
    # min and max see every NaN and infinity without an array-sized temporary.
    if arr.size and not (np.isfinite(arr.min()) and np.isfinite(arr.max())):
        i, j = map(int, np.argwhere(~np.isfinite(arr))[0])
        raise NonFiniteValueError(f"{name}[{i}][{j}] is {arr[i, j]}; only finite numbers are allowed")
    return arr


def input_rounding(data, arr: np.ndarray, name: str = "matrix") -> float:
    """The relative error of converting ``data`` to the binary64 array ``arr``:
    the largest ``|v - fl(v)| / |fl(v)|`` over the entries, computed exactly and
    rounded up (0.0 when every value converted exactly). Integers beyond
    ``2^53``, fractions and ``longdouble`` entries may round; float16, float32
    and float64 inputs (and integers of up to 53 bits) convert exactly. The
    caller declares it as an input error, so that every bound covers it: about
    ``u`` in the normal range, up to ``1/2`` for a value rounded among the
    subnormals (whose error is absolute, ``2^-1075``).

    Raises :class:`~allornone.errors.UnrepresentableValueError` where a non-zero
    value was rounded to zero (no relative error bounds that).

    >>> input_rounding([[2 ** 53, 1]], np.array([[2.0 ** 53, 1.0]]))
    0.0
    >>> input_rounding([[2 ** 53 + 1, 1]], np.array([[2.0 ** 53, 1.0]])) == 2.0 ** -53
    True
    >>> input_rounding(np.ones((2, 2), dtype=np.float32), np.ones((2, 2)))
    0.0
    >>> input_rounding([[Fraction(25, 2 ** 1077)]], np.array([[3 * 2.0 ** -1074]]))   # among the subnormals
    0.04166666666666667
    """
    if isinstance(data, np.ndarray):
        kind = data.dtype.kind
        if kind == "f" and data.dtype.itemsize <= 8 or kind == "b":
            return 0.0
        if kind in "iu":
            big = np.abs(data.astype(object)) > 2 ** 53 if data.size else np.zeros(0, bool)
            if not np.any(big):
                return 0.0
            return _worst_rounding(zip(data.astype(object)[big], arr[big].tolist()), name)
        flat = data.ravel().tolist() if kind != "O" else list(data.ravel())
    else:
        try:
            plain = np.asarray(data)
        except (TypeError, ValueError, OverflowError):
            plain = None
        # NumPy's own conversion of nested lists may already have rounded: a list
        # with an integer beyond int64 becomes float64. Only integer and boolean
        # arrays are taken as they came; anything else is checked entry by entry.
        if plain is not None and plain.dtype.kind in "iub":
            return input_rounding(plain, arr, name)
        flat = np.array(data, dtype=object).ravel().tolist()
    pairs = ((v, f) for v, f in zip(flat, arr.ravel().tolist())
             if not (isinstance(v, (float, np.floating)) and np.dtype(type(v)).itemsize <= 8))
    return _worst_rounding(pairs, name)


def _worst_rounding(pairs, name: str) -> float:
    """The largest ``|v - f| / |f|`` over ``(value, float)`` pairs, exactly, rounded up."""
    worst = Fraction(0)
    for v, f in pairs:
        if isinstance(v, np.integer):
            # (a Fraction of NumPy integers computes in their fixed width, and overflows)
            v = int(v)
        try:
            exact = Fraction(v)
        except (TypeError, ValueError):
            try:
                exact = Fraction(*v.as_integer_ratio())     # long double
            except (AttributeError, TypeError, ValueError, OverflowError):
                # a number of another kind, converted by float(): its rounding at
                # most half an ulp of what it became (2^-1075 among the subnormals)
                if f != 0.0:
                    worst = max(worst, Fraction(1, 2 ** 52) if abs(f) >= 2.0 ** -1022 else Fraction(1, 2))
                continue
        if exact == f:
            continue
        if f == 0.0:
            raise UnrepresentableValueError(
                f"{name}: an entry of about 2^{abs(exact.numerator).bit_length() - exact.denominator.bit_length()} "
                "is below the smallest binary64 number (2^-1074) and would be held as zero; scale the model by a "
                "power of two") from None
        worst = max(worst, abs(exact - Fraction(f)) / abs(Fraction(f)))
    out = float(worst)
    return math.nextafter(out, math.inf) if Fraction(out) < worst else out


def _has_bool(data) -> bool:
    """Whether a nested list (or a NumPy array inside one) holds a boolean."""
    if isinstance(data, (bool, np.bool_)):
        return True
    if isinstance(data, np.ndarray):
        return data.dtype == bool
    if isinstance(data, (list, tuple)):
        return any(_has_bool(v) for v in data)
    return False


# -- exact scalings by powers of two ---------------------------------------

def row_exponents(X: np.ndarray) -> np.ndarray:
    """Per row ``e`` with ``max|X[i]| * 2^-e`` in ``[1/2, 1)`` (0 for a zero row):
    scaling by ``2^-e`` is exact and makes every row of size about one."""
    if X.shape[1] == 0:
        return np.zeros(X.shape[0], dtype=int)
    top = np.max(np.abs(X), axis=1)
    _, e = np.frexp(top)
    return np.where(top > 0, e, 0).astype(int)


def largest_row_exponents(mats: list[np.ndarray], count: int) -> np.ndarray:
    """Per row, :func:`row_exponents` of the largest entry over all of ``mats``
    (each with ``count`` rows; 0 for a row that is zero in every one). A row
    that is zero in one matrix says nothing of the row's size: counted as
    exponent 0, it would set the scale of a row whose entries elsewhere are
    all below ``2^-1000`` and push their products among the subnormals."""
    none = np.iinfo(np.int64).min
    out = np.full(count, none, dtype=np.int64)
    for X in mats:
        if X.shape[1]:
            top = np.max(np.abs(X), axis=1)
            out = np.where(top > 0, np.maximum(out, np.frexp(top)[1]), out)
    return np.where(out == none, 0, out).astype(int)


def scale_rows(X: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``diag(2^-e) X`` (exact unless an entry lands among the subnormals,
    and then correctly rounded). Where every ``2^-e`` is a normal number, one
    multiplication by it per entry -- IEEE multiplication rounds ``x 2^-e``
    correctly as ``ldexp`` does, so these are the same numbers, at a fraction
    of ``ldexp``'s cost by an array of exponents; ``ldexp`` otherwise."""
    e = np.asarray(e)
    if X.dtype == np.float64 and (e.size == 0 or (int(np.max(e)) < 1000 and int(np.min(e)) > -1000)):
        return X * np.ldexp(1.0, -e)[:, None]
    return np.ldexp(X, -e[:, None])


def live_coordinates(A: np.ndarray, B: np.ndarray, EA: np.ndarray | None = None, EB: np.ndarray | None = None):
    """``(A, B, EA, EB)`` with every coordinate ``j`` that no product of ``A B^T``
    reads set to zero in both factors (and in their entrywise error bounds):
    column ``j`` of ``A`` or of ``B`` zero, with a zero bound where one is given,
    makes every term ``A[i, j] B[l, j]`` of the exact product an exact zero.
    The product is unchanged exactly; a coordinate that only one side uses
    (``2^950`` in a coordinate no token reads) then sets no row's scale."""
    dead_a = ~np.any(A, axis=0)
    if EA is not None:
        dead_a &= ~np.any(EA, axis=0)
    dead_b = ~np.any(B, axis=0)
    if EB is not None:
        dead_b &= ~np.any(EB, axis=0)
    keep = ~(dead_a | dead_b)
    if keep.all():
        return A, B, EA, EB
    cut = (lambda X: None if X is None else np.where(keep[None, :], X, 0.0))
    return cut(A), cut(B), cut(EA), cut(EB)


def scaled_with_error(X: np.ndarray, e: np.ndarray, E: np.ndarray | None = None):
    """``(diag(2^-e) X, bound)``: the rows scaled, and an entrywise bound on
    how far they are from the exact ``diag(2^-e) X*``, where ``X`` is within
    ``E`` of ``X*`` (``E`` None: ``X`` is exact). The bound is ``E`` scaled
    alike, rounded up where that scaling loses bits, plus what the scaling of
    ``X`` lost: nothing where the result is a normal number (a multiplication
    by a power of two is exact), ``2^-1074`` at most (half a subnormal's
    spacing, rounded up to the smallest subnormal) where it lands among the
    subnormals or at zero from a nonzero entry. None where nothing was lost
    and ``E`` is None. So a row whose large entries sit in coordinates another
    factor does not use may be scaled down as any other: the bits its small
    entries lose are a declared error, not a reason to keep the scale."""
    with np.errstate(under="ignore", over="ignore"):
        Xs = scale_rows(X, e)
        lost = (X != 0) & (np.abs(Xs) < _TINY)
        if lost.any():
            lost &= scale_rows(Xs, -e) != X      # (a subnormal result may still be exact)
        bound = None
        if E is not None:
            bound = scale_rows(E, e)
            bound = np.where(scale_rows(bound, -e) < E, np.nextafter(bound, np.inf), bound)
        if lost.any():
            loss = np.where(lost, _SUBNORMAL, 0.0)
            if bound is not None:
                # (a sum rounds only where both terms are nonzero: an exact zero
                # bound stays zero, so an entry that lost nothing costs nothing)
                both = (bound > 0) & lost
                bound = bound + loss
                bound = np.where(both, np.nextafter(bound, np.inf), bound)
            else:
                bound = loss
    return Xs, bound


def exact_rows(X: np.ndarray, Xs: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per row whether ``Xs = scale_rows(X, e)`` kept every bit (scaling down
    is exact unless an entry lands among the subnormals)."""
    with np.errstate(under="ignore"):
        return np.all(scale_rows(Xs, -e) == X, axis=1)


def difference_with_error(G: np.ndarray, pivot: int, input_error: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``G_0 = G - g(y_0)`` and an entrywise bound on its error: the exact
    rounding error of the subtraction (Knuth's TwoSum), plus
    ``input_error (|g(y)| + |g(y_0)|)`` when the inputs themselves carry a
    relative error (a rational instance rounded to binary64). A common offset on
    every ``g(y)`` of exactly given numbers thus costs nothing: the subtraction
    is exact, and measured to be."""
    G0, E0 = subtract_with_error(G, G[pivot], input_error)
    # g_0(y_0) is zero by definition, whatever error g(y_0) carries
    E0[pivot] = 0.0
    return G0, E0


def subtract_with_error(x: np.ndarray, y: np.ndarray, input_error: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``x - y`` and an entrywise bound on its error: the exact rounding error of
    the subtraction (TwoSum), plus ``input_error (|x| + |y|)``."""
    s, err = two_sum(x, -y)
    # (err is two_sum's own array: made absolute in place)
    err = np.abs(err, out=err) if np.ndim(err) else abs(err)
    if input_error:
        err += input_error * (np.abs(x) + np.abs(y))
    return s, err


# Splitting a double into two halves of 26 bits (Veltkamp): exact unless the
# product with the splitter overflows.
_SPLITTER = 134217729.0   # 2^27 + 1
_SPLIT_SAFE = 2.0 ** 995


def two_sum(a, b):
    """``s = fl(a + b)`` and ``e`` with ``a + b = s + e`` exactly (Knuth's TwoSum)."""
    s = np.add(a, b)
    bb = np.subtract(s, a)
    if np.ndim(s) == 0:
        return s, (a - (s - bb)) + (b - bb)
    # the same operations in two arrays, not six: a token matrix's G - g(y_0)
    # was a third of Theorem 5's factoring in fresh temporaries
    e = np.subtract(s, bb)
    np.subtract(a, e, out=e)
    np.subtract(b, bb, out=bb)
    e += bb
    return s, e


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p = fl(a b)`` and ``e`` with ``a b = p + e`` exactly (Dekker's
    TwoProduct, entrywise), for ``|a|, |b| < 2^995`` and no underflow."""
    def split(x):
        c = _SPLITTER * x
        hi = c - (c - x)
        return hi, x - hi
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
    return p, e


#: Terms (rows times their length) that :func:`rounded_dots` sums in
#: rationals where a product came near underflow, rather than bound what
#: underflow may have lost (about 2 us a term).
EXACT_UNDERFLOW_TERMS = 1 << 16


def rounded_dots(pairs: list[tuple[np.ndarray, np.ndarray]], per_row: bool = False):
    """Correctly rounded ``sum_j sum_i A_j[k, i] B_j[k, i]`` for every row ``k``:
    each product split into its rounded value and its exact error (TwoProduct),
    the ``2 d`` terms summed exactly and rounded once (``math.fsum``). Returns the
    values and an absolute bound on what underflow may have lost (``0`` when no
    product came near it): one number for every row, or with ``per_row`` an
    array, each row's own (a row none of whose products came near underflow
    loses nothing, whatever the others do). None when an entry is too large to
    split (the caller then keeps its ordinary bound). The error of each value
    is then at most half an ulp of itself plus that bound -- however much the
    terms cancel, which is what a plain dot product cannot offer."""
    terms, tiny, near = [], None, None
    for A, B in pairs:
        if A.size and (np.max(np.abs(A)) >= _SPLIT_SAFE or np.max(np.abs(B)) >= _SPLIT_SAFE):
            return None
        p, e = _two_product(A, B)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(e))):
            return None
        if A.ndim == 2 and A.size:
            # an error term (or the product itself) may have underflowed: each
            # loses at most the smallest subnormal
            flagged = np.any(_near_underflow(p, A, B), axis=1)
            if np.any(flagged):
                lost = np.where(flagged, 2 * A.shape[1] * 2.0 ** -1074, 0.0)
                tiny = lost if tiny is None else tiny + lost
                near = flagged if near is None else near | flagged
        terms += [p, e]
    if not terms:
        return np.zeros(0), (np.zeros(0) if per_row else 0.0)
    T = np.hstack(terms)
    out = np.array([math.fsum(row) for row in T.tolist()], dtype=float)
    tiny = np.zeros(out.size) if tiny is None else tiny
    if near is not None:
        rows = np.flatnonzero(near)
        width = sum(A.shape[1] for A, _ in pairs if A.ndim == 2)
        if rows.size * width <= EXACT_UNDERFLOW_TERMS:
            # the rows where a product came near underflow summed in rationals:
            # every binary64 number is one, and the conversion of the exact
            # sum rounds once, correctly -- relatively by u, or, among the
            # subnormals (an exact product is a multiple of 2^-2148, not of
            # 2^-1074), by half the smallest subnormal at most (counted as one:
            # half of it is not a binary64 number)
            for i in rows.tolist():
                exact = sum((Fraction(float(a)) * Fraction(float(b))
                             for A, B in pairs if A.ndim == 2 for a, b in zip(A[i], B[i])), Fraction(0))
                out[i] = float(exact)
                tiny[i] = 0.0 if Fraction(float(out[i])) == exact else 2.0 ** -1074
    return out, (tiny if per_row else float(np.max(tiny, initial=0.0)))


def _near_underflow(p: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Where the product ``p = fl(x y)`` or its error term may have underflowed."""
    return ((p != 0) & (np.abs(p) < 2.0 ** -960)) | ((x != 0) & (y != 0) & (p == 0))


# Entries that compensated_dots takes at once (its arrays then stay in the cache).
_DOT2_CHUNK = 4096


def compensated_dots(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray] | None:
    """``sum_j sum_i A_j[k, i] B_j[k, i]`` for every row ``k`` by Ogita, Rump and
    Oishi's Dot2 (SIAM J. Sci. Comput. 26, 2005, Prop. 5.5: the result is as
    if computed in twice the working precision, then rounded), with an
    entrywise bound on its error: ``|r - x^T y| <= u |x^T y| + gamma_n^2
    |x|^T |y|`` (``n`` terms, ``gamma_n = n u / (1 - n u)``), so at most
    ``(u |r| + gamma_n^2 |x|^T |y|) / (1 - u)``, plus what underflow may have
    lost where a product came near it. Vectorised over the rows (a loop over
    the ``n`` terms), far cheaper than :func:`rounded_dots` and as good where
    the terms cancel by less than ``1/(n u)``. Returns ``(values, errors)``,
    or None when an entry is too large to split."""
    cols = [(A, B) for A, B in pairs if A.shape[1]]
    k = cols[0][0].shape[0] if cols else (pairs[0][0].shape[0] if pairs else 0)
    n = sum(A.shape[1] for A, _ in cols)
    if not cols:
        return np.zeros(k), np.zeros(k)
    if any(np.max(np.abs(A), initial=0.0) >= _SPLIT_SAFE or np.max(np.abs(B), initial=0.0) >= _SPLIT_SAFE
           for A, B in cols):
        return None
    u = UNIT_ROUNDOFF
    gamma = n * u / (1 - n * u)
    vals, errs = np.empty(k), np.empty(k)
    for c in range(0, k, _DOT2_CHUNK):
        X = np.ascontiguousarray(np.hstack([A[c:c + _DOT2_CHUNK] for A, _ in cols]).T)
        Y = np.ascontiguousarray(np.hstack([B[c:c + _DOT2_CHUNK] for _, B in cols]).T)
        with np.errstate(under="ignore"):
            p, s = _two_product(X[0], Y[0])
            size = np.abs(p)
            near = _near_underflow(p, X[0], Y[0])
            for i in range(1, n):
                h, r = _two_product(X[i], Y[i])
                p, q = two_sum(p, h)
                s += q + r
                size += np.abs(h)
                near |= _near_underflow(h, X[i], Y[i])
            res = p + s
        if not (np.all(np.isfinite(res)) and np.all(np.isfinite(size))):
            return None
        # |x|^T |y| is taken in floats: (1 + gamma) bounds its own rounding
        err = (u * np.abs(res) + gamma * gamma * size * (1 + gamma)) / (1 - u)
        # an error term (or a product) that may have underflowed loses at most
        # the smallest subnormal each
        err += np.where(near, 4.0 * n * 2.0 ** -1074, 0.0)
        vals[c:c + res.size], errs[c:c + res.size] = res, err * (1 + 4 * u)
    return vals, errs


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
    return svd(X)


def _rank_of(X: np.ndarray, scale: float | None, tol: "Tolerance",
             noise: float = 0.0) -> tuple[int, bool, np.ndarray, float]:
    """Rank, decided, singular values and the zero bound used: the SVD's
    backward error at ``max(scale, ||X||)`` plus ``noise``."""
    if 0 in X.shape:
        return 0, True, np.zeros(0), 0.0
    s = _s_vt(X)[0]
    ref = max(float(scale or 0.0), s[0] if s.size else 0.0)
    bound = svd_noise(max(X.shape), ref) + float(noise)
    r, decided = tol.rank(s, noise=bound, reference=ref if noise else None)
    return r, decided, s, bound


def rank(X: np.ndarray, scale: float | None = None, tol: Tolerance = DEFAULT_TOLERANCE,
         noise: float = 0.0) -> tuple[int, bool]:
    """Numerical rank and whether the decision is clear of the undecided band.

    Singular values are judged against the SVD's backward error at the size
    of ``X`` -- or at ``scale``, the size of the factors whose product ``X`` is
    -- plus ``noise``, an error bound already in ``X`` (propagated from computed
    subspaces). For a data matrix, whose zeros are exact, use
    :func:`data_rank`, which first scales rows and columns.

    >>> rank(np.array([[1.0, 2.0], [2.0, 4.0]]))
    (1, True)
    """
    r, decided, _, _ = _rank_of(X, scale, tol, noise)
    return r, decided


def data_rank(X: np.ndarray, E: np.ndarray | None = None, tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[int, bool]:
    """Rank of a *data* matrix (its entries exact, or known up to the entrywise
    error ``E``): rows and columns are scaled by powers of two first (exact, the
    rank is unchanged), so one huge row or coordinate cannot hide the others.

    >>> data_rank(np.array([[1e9, 1.0], [1e9, 2.0]]))
    (2, True)
    >>> data_rank(np.array([[1.0, 2.0], [2.0, 4.0], [1e-12, 2e-12]]))
    (1, True)
    """
    _, decided, _, r = _data_space(X, E, tol)
    return r, decided


def row_basis(X: np.ndarray, scale: float | None = None,
              tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the row space (rows of an ``r x d`` array) and
    whether its dimension was decided."""
    B, decided, _ = row_basis_with_error(X, scale, tol)
    return B, decided


def row_basis_with_error(X: np.ndarray, scale: float | None = None, tol: Tolerance = DEFAULT_TOLERANCE,
                         data_error: float = 0.0) -> tuple[np.ndarray, bool, float]:
    """Orthonormal basis of the row space of ``X``, whether its dimension was
    decided, and a bound on the sine of the angle between the computed and the
    exact row space (``(noise + data_error) / sigma_r``, Wedin's theorem).

    ``data_error`` is a bound on the spectral norm of the error already in
    ``X``. A full-rank basis is the identity, exactly."""
    m, d = X.shape
    if m == 0 or d == 0:
        return np.zeros((0, d)), True, 0.0
    r, decided, _, _ = _rank_of(X, scale, tol)
    if r == d:
        return np.eye(d), decided, 0.0
    if r == 0:
        return np.zeros((0, d)), decided, 0.0
    s, vt = _s_vt(X)
    noise = svd_noise(max(X.shape), max(float(scale or 0.0), s[0])) + float(data_error)
    err = noise / s[r - 1] if s[r - 1] > 0 else np.inf
    return vt[:r], decided, float(min(err, np.inf))


def column_basis(X: np.ndarray, scale: float | None = None,
                 tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[np.ndarray, bool]:
    """An orthonormal basis of the column space (``m x r``) and whether its
    dimension was decided."""
    B, decided = row_basis(X.T, scale, tol)
    return B.T, decided


def projector_onto_rows(B: np.ndarray) -> np.ndarray:
    """Projector onto the row space of ``B``; rows orthonormal (as returned by
    :func:`row_basis`) or merely independent."""
    if B.shape[0] == 0:
        return np.zeros((B.shape[1], B.shape[1]))
    if B.shape[0] == B.shape[1] and np.array_equal(B, np.eye(B.shape[0])):
        return np.eye(B.shape[0])
    gram = B @ B.T
    if np.allclose(gram, np.eye(B.shape[0]), atol=1e-12):
        return B.T @ B
    return B.T @ np.linalg.solve(gram, B)


def pinv(X: np.ndarray, rank: int | None = None, tol: Tolerance = DEFAULT_TOLERANCE) -> np.ndarray:
    """Pseudo-inverse truncated at ``rank`` (default: the rank decided by
    ``tol``), never at NumPy's default cut, which can keep a singular value
    that is only rounding noise and turn a true identity into a false one."""
    if _is_large_tall(X) or _is_large_tall(X.T):
        # With X^T X = V S^2 V^T (V, S from R), X^+ = (V_r S_r^-2 V_r^T) X^T:
        # one product with X, no U and no copy of X.
        tall = X.shape[0] >= X.shape[1]
        s, vt = _s_vt(X if tall else X.T)
        r = tol.rank(s, size=max(X.shape))[0] if rank is None else int(rank)
        core = (vt[:r].T / s[:r] ** 2) @ vt[:r]
        return core @ X.T if tall else X.T @ core
    u, s, vt = _svd(X)
    r = tol.rank(s, size=max(X.shape))[0] if rank is None else int(rank)
    return (vt[:r].T / s[:r]) @ u[:, :r].T


def solve_left(Y: np.ndarray, X: np.ndarray, rank: int | None = None,
               tol: Tolerance = DEFAULT_TOLERANCE) -> np.ndarray:
    """The minimum-norm least-squares ``W`` of ``W X = Y``, i.e. ``Y X^+``."""
    if _is_large_tall(X.T):
        # Y X^+ = (Y X^T)(V_r S_r^-2 V_r^T): the wide X^+ (n x p) is never formed.
        s, vt = _s_vt(X.T)
        r = tol.rank(s, size=max(X.shape))[0] if rank is None else int(rank)
        return (Y @ X.T) @ ((vt[:r].T / s[:r] ** 2) @ vt[:r])
    return Y @ pinv(X, rank, tol)


def _exponent(A: np.ndarray) -> int:
    top = float(np.max(np.abs(A))) if A.size else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0


def product_scale(*factors: np.ndarray) -> float:
    """``max |A_1| |A_2| ... |A_p|`` (entrywise absolute values): a bound on the
    entries of the product and hence the natural scale of its rounding error.

    Each factor is scaled by a power of two before the product, so no
    intermediate overflows; the result is ``inf`` only when the scale itself
    exceeds the largest float (a decision against it is then undecided)."""
    if any(f.size == 0 for f in factors):
        return 0.0
    exps = [_exponent(f) for f in factors]
    scaled = [np.ldexp(np.abs(f), -e) for f, e in zip(factors, exps)]
    if len(scaled) == 1:
        top = float(scaled[0].max())
    else:
        # The product is formed a block of columns of the last factor at a time, so
        # that no temporary is larger than a block (the product itself can be m x n).
        head = scaled[0]
        for f in scaled[1:-1]:
            head = head @ f
        last = scaled[-1]
        step = max(1, _SCALE_BLOCK // max(head.shape[0], last.shape[0]))
        top = float(max((head @ last[:, j:j + step]).max() for j in range(0, last.shape[1], step)))
    total = sum(exps)
    with np.errstate(over="ignore"):
        return float(np.ldexp(top, total)) if top > 0 else 0.0


def is_zero(R: np.ndarray, scale: float, tol: Tolerance = DEFAULT_TOLERANCE, extra: float = 0.0) -> Decision:
    """Three-valued test that ``R`` vanishes (:meth:`Tolerance.certain`): its
    largest entry, with the rounding bound ``64 u scale`` of a product of that
    size and ``extra`` (a propagated error bound) added as a cost, against
    ``sqrt(gap) rtol * scale``."""
    res = float(max(R.max(), -R.min())) if R.size else 0.0
    scale = float(scale)
    return tol.certain(res, scale, extra + 64.0 * UNIT_ROUNDOFF * scale)


def _graded_orthonormal_rows(B: np.ndarray) -> np.ndarray:
    """Orthonormal rows spanning the rows of ``B`` (``r x d``, independent rows
    whose coordinates may differ in size by many orders of magnitude):
    Householder QR of ``B^T`` with its rows (the coordinates) sorted by size,
    which keeps the small coordinates' relative accuracy."""
    order = np.argsort(-np.max(np.abs(B), axis=0), kind="stable")
    q, _ = scipy.linalg.qr(B.T[order], mode="economic")
    out = np.empty_like(q)
    out[order] = q
    return out.T


def _data_space(X: np.ndarray, E: np.ndarray | None, tol: Tolerance, columns=()):
    """``(right singular vectors of the scaled X, decided, (s, noise, ec), rank)``.

    The rank is unchanged by scaling rows and columns, the singular values are
    not, and scaling rows first and then columns (each to its largest entry)
    need not undo a presentation that scaled them otherwise. A singular value
    clear of its bound proves a rank from below in any presentation: where
    rows first leave the rank short of full, columns first are tried too, and
    so is each presentation in ``columns`` (exponents ``c``: the columns of ``X``
    times ``2^-c``, e.g. a model's coordinates before it was balanced); the
    presentation that proves most is kept (its zeros are then called at the
    tolerance, as always)."""
    best = _data_space_in(X, E, tol, rows_first=True)
    full = min(X.shape)
    tries = [(False, None)] + [(True, np.asarray(c, dtype=int)) for c in columns]
    for rows_first, c0 in tries:
        if best[3] == full:
            break
        out = _data_space_in(X, E, tol, rows_first, c0)
        if int(np.sum(out[2][0] > out[2][1])) > int(np.sum(best[2][0] > best[2][1])):
            best = out
    return best


def _data_space_in(X: np.ndarray, E: np.ndarray | None, tol: Tolerance, rows_first: bool, c0=None):
    m, d = X.shape
    if c0 is not None:
        # a presentation of the columns first (exact where it comes from one)
        Xc = scale_rows(X.T, c0).T
        if not np.array_equal(scale_rows(Xc.T, -c0).T, X):
            return np.zeros((0, d)), False, (np.zeros(0), math.inf, np.zeros(d, dtype=int)), 0
        X, E = Xc, None if E is None else scale_rows(E.T, c0).T
    if rows_first:
        er = row_exponents(X)
        ec = row_exponents(scale_rows(X, er).T)
    else:
        ec = row_exponents(X.T)
        er = row_exponents(scale_rows(X.T, ec).T)
    Y = scale_rows(scale_rows(X, er).T, ec).T
    data_err = 0.0
    if E is not None:
        Ey = scale_rows(scale_rows(E, er).T, ec).T
        data_err = float(np.linalg.norm(Ey))
    s, vt = _s_vt(Y)
    noise = svd_noise(max(m, d), s[0] if s.size else 0.0) + data_err
    r, decided = tol.rank(s, noise=noise)
    return vt, decided, (s, noise, ec if c0 is None else ec + c0), r


def data_row_space(X: np.ndarray, E: np.ndarray | None = None,
                   tol: Tolerance = DEFAULT_TOLERANCE, columns=()) -> tuple[np.ndarray, bool, float]:
    """Row space of a data matrix ``X`` known up to an error ``E`` (entrywise,
    e.g. the exact rounding error of ``G - g(y_0)``; ``None`` for exact data):
    an orthonormal basis (rows), whether its dimension was decided, and a bound
    on the sine of the angle between the computed and the exact row space.

    Rows and columns are scaled by powers of two first: the dimension is
    unchanged, and the basis is computed in the scaled coordinates and mapped
    back, so that a huge coordinate (a hidden component) or a huge row does
    not cost the others their accuracy. A full row space is the identity, exactly.

    >>> B, decided, err = data_row_space(np.array([[1e12, 1.0, 0.0], [1e12, 2.0, 0.0]]))
    >>> B.shape, decided, err < 1e-14
    ((2, 3), True, True)
    >>> np.allclose(B.T @ B, np.diag([1.0, 1.0, 0.0]), atol=1e-15)
    True
    """
    m, d = X.shape
    if m == 0 or d == 0:
        return np.zeros((0, d)), True, 0.0
    vt, decided, (s, noise, ec), r = _data_space(X, E, tol, columns)
    if r == d:
        return np.eye(d), decided, 0.0
    if r == 0:
        return np.zeros((0, d)), decided, 0.0
    err = noise / s[r - 1]
    # rows of vt span the scaled row space; undo the column scaling, re-orthonormalise.
    # A coordinate in which every row is exactly zero is not in the row space at
    # all: its rounding noise must not survive the unscaling of the others.
    # (each row by one more power of two, which its span does not see, so that
    # coordinates scaled 2^1000 apart do not overflow on the way back)
    V = vt[:r]
    with np.errstate(under="ignore", over="ignore"):
        top = np.max(np.where(V != 0, np.frexp(V)[1] + ec[None, :], 0), axis=1)
        B = np.ldexp(V, ec[None, :] - top[:, None])
    B[:, ~np.any(X, axis=0)] = 0.0
    B = _graded_orthonormal_rows(B)
    err = float(err + 8 * math.sqrt(d) * UNIT_ROUNDOFF)
    # Angles are not kept by the column scaling D = diag(2^ec): mapped back, the
    # error may grow by cond(D). Where D is not a multiple of the identity, the
    # error is also measured in the original coordinates, a posteriori, and the
    # smaller bound is kept.
    live = ec[np.any(X, axis=0)]
    if live.size and live.max() > live.min():
        err = min(float(np.ldexp(err, int(live.max() - live.min()))),
                  _row_space_residual_bound(X, E, B, s[r - 1] - noise))
    elif X.size * r <= _TWICE_MAX:
        # small problems: the a posteriori bound is cheap, and usually far tighter
        # than the a priori one (which multiplies worst cases)
        err = min(err, _row_space_residual_bound(X, E, B, s[r - 1] - noise))
    return B, decided, err


# Entries times rank up to which a residual X - (X B^T) B is formed in twice the
# working precision, and up to which the a posteriori bound is computed at all.
_TWICE_MAX = 1 << 22
_POSTERIORI_MAX = 1 << 30


def _dd_residual(X: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``X - (X B^T) B`` evaluated with error-free transformations (Ogita,
    Rump and Oishi's compensated dot products, vectorised): its error is about
    ``u |R| + (c u)^2 |X| |B|^T |B|`` instead of ``c u |X| |B|^T |B|``."""
    m, d = X.shape
    r = B.shape[0]
    # C = X B^T as a pair (hi, lo)
    hi = np.zeros((m, r))
    lo = np.zeros((m, r))
    for j in range(d):
        p, e = _two_product(X[:, j:j + 1], B[None, :, j])
        hi, q = two_sum(hi, p)
        lo += q + e
    # R = X - hi B - lo B, compensated over the r terms
    acc, comp = X.copy(), np.zeros((m, d))
    for k in range(r):
        p, e = _two_product(-hi[:, k:k + 1], B[None, k, :])
        acc, q = two_sum(acc, p)
        comp += q + e - lo[:, k:k + 1] * B[None, k, :]
    return acc + comp


def _row_space_residual_bound(X: np.ndarray, E: np.ndarray | None, B: np.ndarray, s_r: float) -> float:
    """A posteriori bound on the sine of the largest angle between the row
    space ``S`` of ``X`` (rank ``r``, exact up to ``E``) and the span of the
    orthonormal rows ``B``, in the original coordinates.

    With ``C = X B^T = U S W^T`` and ``T = S^-1 U^T``, the rows of
    ``T X = (T C) B + T R`` (``R = X - C B``) lie in ``S``; ``T C`` is nearly
    orthogonal, so ``sin(theta) <= |T R| / sigma_min(T C)``. Each direction of
    the residual is weighed by its own singular value: a huge coordinate's
    rounding, which ``R`` carries along the huge direction, is not divided by
    the smallest one. Rows are scaled by powers of two first; small problems
    form ``R`` in twice the working precision. Every rounding is bounded.
    ``s_r``: the ``r``-th singular value of the scaled data less its noise; when
    it is not positive the rank itself is in doubt and the bound is 1."""
    m, d = X.shape
    r = B.shape[0]
    if s_r <= 0 or m < r:
        return 1.0
    Xr = scale_rows(X, row_exponents(X))
    if Xr.size * r > _POSTERIORI_MAX:
        return 1.0
    u = UNIT_ROUNDOFF
    with np.errstate(over="ignore", invalid="ignore"):
        C = Xr @ B.T
    if not np.all(np.isfinite(C)):
        return 1.0      # (a basis that left binary64 on its way back to these coordinates: no bound but the trivial)
    dC = (d + 2) * u * float(np.linalg.norm(np.abs(Xr) @ np.abs(B.T)))   # |C - fl(C)|_F
    U, S, _ = svd(C)
    if S.size < r or S[-1] <= 0:
        return 1.0
    twice = Xr.size * r <= _TWICE_MAX
    R = _dd_residual(Xr, B) if twice else Xr - C @ B
    c = 2 * (d + r + 2) * u
    rnd = float(np.linalg.norm(Xr)) + float(np.linalg.norm(np.abs(Xr) @ np.abs(B.T))) * math.sqrt(r)
    dR = 4 * u * float(np.linalg.norm(R)) + (c * c if twice else c) * rnd
    if E is not None:
        dR += float(np.linalg.norm(scale_rows(E, row_exponents(X))))
    nT = 1.0 / float(S[-1])
    TR = (U.T @ R) / S[:, None]
    dTR = (m + 2) * u * float(np.linalg.norm(np.abs(U.T) @ np.abs(R))) * nT + nT * dR * 1.01
    Z = (U.T @ C) / S[:, None]
    sz = svd(Z, compute_uv=False)
    dZ = (m + 2) * u * float(np.linalg.norm(np.abs(U.T) @ np.abs(C))) * nT + nT * dC
    low = float(sz[-1]) - dZ
    num = float(np.linalg.norm(TR)) + dTR
    if low <= 0 or num >= low:
        return 1.0
    return num / low


def _r_factor(X: np.ndarray) -> np.ndarray:
    """The triangular factor of ``X = QR`` (``min(m, d) x d``)."""
    if _is_large_tall(X):
        return _tall_r(X)
    return scipy.linalg.qr(X, mode="r", check_finite=False)[0][: min(X.shape), :]
