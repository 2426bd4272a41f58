r"""A posteriori witnesses for linear fits: "there is a ``Θ`` with ``X Θ = Y``
up to the tolerance", shown by exhibiting one.

A least-squares solve through an ill-conditioned ``X`` (a change of basis of
condition ``κ``) leaves a residual of about ``u κ |Y|``, and an a priori bound
on the fitted map grows the same way: far above a relative tolerance of
``1e-12``, so a fit that exists cannot be told from a small misfit. But the
question asked -- is there *some* ``Θ`` whose residual is within the
tolerance? -- does not need the computed map to be close to the exact one. It
needs one ``Θ`` and a rigorous bound on its residual against the exact data:

* ``Θ = Θ_1 + Θ_2 + ...`` is kept as an unevaluated sum of floats, each term
  the least-squares correction of the residual left by the previous ones
  (iterative refinement), which brings the residual from ``u κ`` towards
  ``(u κ)^2``;
* the residual ``Y - X Θ_1 - X Θ_2 - ...`` is formed with correctly rounded
  dot products (TwoProduct and an exact sum), so its computed value is within
  half an ulp of the value for the given floats -- however much it cancels;
* the floats ``X`` and ``Y`` are within entrywise bounds ``E_X``, ``E_Y`` of
  the exact data (zero for data given exactly), which add ``E_X |Θ| + E_Y``.

Then for every entry ``|X* Θ - Y*| <= (1 + 2u) |r| + t + E_X |Θ| + E_Y``
(``t`` what underflow may have lost), and column ``j`` fits when that bound
stays within ``rtol`` times the column's own size (``max |Y*_j|``, from below).
No rank is decided and no error of ``Θ`` is estimated: the bound holds for the
``Θ`` exhibited, and the least misfit can only be smaller. A witness never
says "fails"; when it cannot show a fit the caller's own decision stands.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric.linalg import (UNIT_ROUNDOFF, largest_row_exponents, live_coordinates, rounded_dots,
                                      row_exponents, scaled_with_error)

__all__ = ["rounded_matmul", "Witness", "fit_witness"]

# Refinement steps tried before giving up (each costs one correctly rounded residual).
REFINEMENT_STEPS = 3


def _column_exponents(X: np.ndarray) -> np.ndarray:
    return row_exponents(X.T) if X.size else np.zeros(X.shape[1], dtype=int)


def _balanced(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A D``, ``D^-1 B`` for the power of two ``D`` per inner coordinate that
    brings column ``j`` of ``A`` and row ``j`` of ``B`` to the same size: the
    product is unchanged, and so is the pair for every ``A D'``, ``D'^-1 B``
    with ``D'`` a diagonal of powers of two (the exponents shift by exactly
    those of ``D'``), so a change of basis by powers of two cannot change a
    correctly rounded product or any decision taken on it. A coordinate whose
    scaling would not be exact (an entry pushed among the subnormals) is left
    as it is. A coordinate that either factor does not use is set to zero in
    both (:func:`~allornone.numeric.linalg.live_coordinates`)."""
    d = A.shape[1]
    if d == 0 or A.shape[0] == 0 or B.shape[1] == 0:
        return A, B
    # (a coordinate one side does not use adds exact zeros: it sets no scale)
    A, BT = live_coordinates(A, B.T)[:2]
    B = BT.T
    ea, eb = _column_exponents(A), row_exponents(B)
    t = np.where(np.any(A, axis=0) & np.any(B, axis=1), (eb - ea) // 2, 0)
    if not np.any(t):
        return A, B
    with np.errstate(under="ignore", over="ignore"):
        A2, B2 = np.ldexp(A, t[None, :]), np.ldexp(B, -t[:, None])
        ok = (np.all(np.ldexp(A2, -t[None, :]) == A, axis=0) & np.all(np.ldexp(B2, t[:, None]) == B, axis=1)
              & np.all(np.isfinite(A2), axis=0) & np.all(np.isfinite(B2), axis=1))
    if not np.all(ok):
        t = np.where(ok, t, 0)
        A2, B2 = np.ldexp(A, t[None, :]), np.ldexp(B, -t[:, None])
    return A2, B2


def rounded_matmul(terms: list[tuple[np.ndarray, np.ndarray]], units=None) -> tuple[np.ndarray, np.ndarray] | None:
    """``S = sum_k A_k B_k`` with each entry correctly rounded, and an entrywise
    bound on its error (half an ulp, plus what underflow may have lost).

    Rows of the ``A_k`` and columns of the ``B_k`` are first scaled by powers
    of two (exact) to size about one, so that no product overflows the
    error-free transformation; the result is scaled back -- to the model's
    units, or with ``units = (r, c)`` (integer exponents per row and per
    column) to ``S[i, j] 2^-(r_i + c_j)``, so that a caller comparing entries of
    one row at a scale of its own loses nothing to underflow. None when the
    result does not fit binary64.

    Examples
    --------
    >>> A = np.array([[1e16, 1.0, -1e16]])
    >>> S, err = rounded_matmul([(A, np.ones((3, 1)))])
    >>> float(S[0, 0]), bool(err[0, 0] < 2e-16)
    (1.0, True)
    """
    m = terms[0][0].shape[0]
    c = terms[0][1].shape[1]
    if m == 0 or c == 0:
        return np.zeros((m, c)), np.zeros((m, c))
    if m < c:
        # one exact sum per row in a Python loop over the columns: the loop goes
        # over the shorter side (a context's logits against every token are one
        # row of many columns); correct rounding gives the same S either way
        out = rounded_matmul([(B.T, A.T) for A, B in terms], None if units is None else (units[1], units[0]))
        return None if out is None else (out[0].T, out[1].T)
    terms = [_balanced(A, B) for A, B in terms]
    re = largest_row_exponents([A for A, _ in terms], m)
    ce = largest_row_exponents([B.T for _, B in terms], c)
    # scaling down is exact unless an entry lands among the subnormals: each
    # such entry of a factor (now at most one in size) then loses at most the
    # smallest subnormal times the other factor's entry, at most one -- and
    # nothing where that entry is zero: the products an entry of S sums that
    # a lost entry reaches are counted (a hidden coordinate's subnormal beside
    # 2^900, against a zero, costs an exact zero nothing)
    scaled, hits = [], np.zeros((m, c))
    for A, B in terms:
        (As, LA), (BsT, LB) = scaled_with_error(A, re), scaled_with_error(B.T, ce)
        scaled.append((As, BsT.T))
        if LA is not None or LB is not None:
            lost_A = np.zeros(A.shape) if LA is None else (LA > 0).astype(float)
            lost_B = np.zeros(B.shape) if LB is None else (LB > 0).T.astype(float)
            hits += lost_A @ (B != 0).astype(float) + (A != 0).astype(float) @ lost_B
    S = np.empty((m, c))
    tiny = 2.0 * hits * 2.0 ** -1074
    for j in range(c):
        out = rounded_dots([(A, np.broadcast_to(B[:, j], A.shape)) for A, B in scaled if A.shape[1]], per_row=True)
        if out is None:
            return None
        if not len(out[0]):
            out = (np.zeros(m), 0.0)
        S[:, j] = out[0]
        tiny[:, j] += out[1]
    err = UNIT_ROUNDOFF * np.abs(S) + tiny
    with np.errstate(over="ignore", under="ignore"):
        shift = re[:, None] + ce[None, :]
        if units is not None:
            shift = shift - np.asarray(units[0])[:, None] - np.asarray(units[1])[None, :]
        nonzero = (S != 0) | (err != 0)
        S = np.ldexp(S, shift)
        err = np.ldexp(err, shift) * (1 + 2 * UNIT_ROUNDOFF)
        # scaling back is exact unless it lands among the subnormals (or below):
        # one unit of the smallest subnormal covers that rounding (an exact zero
        # stays one)
        sub = nonzero & ((np.abs(S) < 2.0 ** -1022) | (err < 2.0 ** -1022))
        err = np.where(sub, err + 2.0 ** -1074, err)
    if not (np.all(np.isfinite(S)) and np.all(np.isfinite(err))):
        return None
    return S, err


@dataclass
class Witness:
    """Outcome of :func:`fit_witness`.

    ``holds``: every column fits within ``rtol`` of its size. ``bound``: per
    column the largest entry of the bound on ``|X* Θ - Y*|`` for the exhibited
    ``Θ``; ``scale``: per column the lower bound on ``max |Y*_j|`` it was
    judged against; ``steps``: refinement steps used."""

    holds: bool
    bound: np.ndarray
    scale: np.ndarray
    steps: int

    def decision(self, tol, **detail) -> Decision | None:
        """"Holds" as a :class:`~allornone.decision.Decision` under the
        tolerance ``tol``, reported on the column closest to its limit
        (None when the witness does not hold)."""
        if not self.holds:
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(self.bound > 0, self.bound / np.where(self.scale > 0, self.scale, 1.0), 0.0)
        j = int(np.argmax(rel)) if rel.size else 0
        lo = tol.rtol * float(self.scale[j]) if self.scale.size else 0.0
        return Decision(Truth.HOLDS, float(self.bound[j]) if self.bound.size else 0.0, (lo, tol.gap * lo),
                        {**detail, "witness": {"ratio": self.ratio, "steps": self.steps}})

    @property
    def ratio(self) -> float:
        """The largest ``bound / scale`` over the columns (0 where both are 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(self.bound > 0, self.bound / self.scale, 0.0)
        return float(np.max(r)) if r.size else 0.0


def _residual(Y, X, thetas):
    """``Y - X (θ_1 + θ_2 + ...)`` correctly rounded (inputs of size about one)."""
    m, c = Y.shape
    r = np.empty((m, c))
    tiny = np.zeros(c)
    ones = np.ones((m, 1))
    for j in range(c):
        pairs = [(Y[:, [j]], ones)] + [(X, np.broadcast_to(-t[:, j], X.shape)) for t in thetas]
        out = rounded_dots(pairs)
        if out is None:
            return None
        r[:, j], tiny[j] = out
    return r, tiny


def fit_witness(X: np.ndarray, X_err: np.ndarray | float, Y: np.ndarray, Y_err: np.ndarray | float,
                rtol: float, steps: int = REFINEMENT_STEPS) -> Witness:
    """Show that ``X* Θ = Y*`` has a solution within ``rtol`` (column by column,
    relative to each column's largest entry) for every exact ``X*``, ``Y*``
    with ``|X* - X| <= X_err`` and ``|Y* - Y| <= Y_err`` entrywise, by
    exhibiting one (see the module docstring).

    Parameters
    ----------
    X : (m, p) array
        The regressors as floats.
    X_err : array or float
        Entrywise bound on their error (0 for exactly given data).
    Y : (m, c) array
        The targets as floats.
    Y_err : array or float
        Entrywise bound on their error.
    rtol : float
        The relative tolerance.
    steps : int
        Refinement steps at most.

    Returns
    -------
    Witness

    Examples
    --------
    A consistent system through a basis of condition ``1e8`` is shown to fit;
    a misfit of ``1e-6`` relative is not:

    >>> rng = np.random.default_rng(0)
    >>> T = np.diag([1.0, 1e-8]) @ np.array([[1.0, 1.0], [0.0, 1.0]])
    >>> X = rng.standard_normal((6, 2)) @ T
    >>> Y = X @ np.array([[3.0], [-1.0]])
    >>> fit_witness(X, 0.0, Y, 0.0, 1e-12).holds
    True
    >>> Y[0, 0] += 1e-6 * abs(Y).max()
    >>> fit_witness(X, 0.0, Y, 0.0, 1e-12).holds
    False
    """
    m, c = Y.shape
    p = X.shape[1]
    none = Witness(False, np.full(c, np.inf), np.zeros(c), 0)
    if m == 0 or c == 0:
        return Witness(True, np.zeros(c), np.zeros(c), 0)
    X_err = np.broadcast_to(np.asarray(X_err, dtype=float), X.shape)
    Y_err = np.broadcast_to(np.asarray(Y_err, dtype=float), Y.shape)
    if np.any(X_err < 0) or np.any(Y_err < 0):
        raise ValueError("fit_witness: error bounds must be non-negative")
    if not all(np.all(np.isfinite(a)) for a in (X, X_err, Y, Y_err)):
        return none
    # Exact scalings by powers of two: columns of X (Θ's rows absorb them) and of
    # Y (each column is judged relative to itself, so the verdict is unchanged).
    cx, cy = _column_exponents(X), _column_exponents(Y)
    Xs, Xe = np.ldexp(X, -cx[None, :]), np.ldexp(X_err, -cx[None, :])
    Ys, Ye = np.ldexp(Y, -cy[None, :]), np.ldexp(Y_err, -cy[None, :])
    # (the size the fit is judged against: the column's largest entry as the
    # exact data can have it at least)
    # (rounded down, so that the threshold never exceeds what the exact data allow)
    scale = np.max(np.maximum(np.abs(Ys) - Ye, 0.0), axis=0) * (1 - 4 * UNIT_ROUNDOFF)
    if p:
        U, S, Vt = np.linalg.svd(Xs, full_matrices=False)
        keep = S > max(m, p) * np.finfo(float).eps * (S[0] if S.size else 0.0)
        U, S, Vt = U[:, keep], S[keep], Vt[keep]

        def solve(R):
            return Vt.T @ ((U.T @ R) / S[:, None])
    else:
        def solve(R):
            return np.zeros((0, R.shape[1]))
    thetas: list[np.ndarray] = []
    R = Ys
    best = none
    for step in range(1, max(int(steps), 1) + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            t = solve(R)
        if not np.all(np.isfinite(t)):
            break
        thetas.append(t)
        out = _residual(Ys, Xs, thetas)
        if out is None:
            break
        R, tiny = out
        with np.errstate(over="ignore", invalid="ignore"):
            # |X* Θ - Y*| <= |r| (1 + 2u) + t + E_X sum|θ_k| + E_Y; the products of
            # the error terms are rounded too, which 1 % more covers
            spread = Xe @ sum(np.abs(t) for t in thetas) if p else np.zeros_like(Ys)
            B = (1 + 2 * UNIT_ROUNDOFF) * np.abs(R) + tiny[None, :] + 1.01 * spread + Ye
            # (the sum of the bound's terms, rounded up)
            bound = np.max(B, axis=0) * (1 + 4 * UNIT_ROUNDOFF)
        if not np.all(np.isfinite(bound)):
            break
        # rtol * scale rounded down
        holds = bool(np.all(bound <= rtol * scale * (1 - 2 * UNIT_ROUNDOFF)))
        # reported in the units of Y: the columns were scaled by 2^-cy (exactly)
        with np.errstate(over="ignore", under="ignore"):
            best = Witness(holds, np.ldexp(bound, cy), np.ldexp(scale, cy), step)
        if best.holds or not np.any(R):
            break
    return best
