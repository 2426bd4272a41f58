r"""Float decisions of parallelism and proportional log-odds, with error bounds.

Differences of rows of ``G`` (or ``F``) are computed with their exact rounding
error (TwoSum), so a common offset on every ``g(y)`` costs nothing: the
difference of two rows is known to the last bit (plus the rows' own relative
error where the model declares one, ``FloatModel.input_error``). Each test ``u = λ v`` is then
judged coordinate by coordinate (context by context, for log-odds) against

* ``rtol (|u_i| + |λ| |v_i|)`` -- the relative tolerance on the size of what is
  compared, and
* the rounding bound of ``u_i`` and ``v_i``: for a projected difference
  ``P_S (x_a - x_b)``, the error of the computed projector ``eps_S`` times the
  size of the raw difference (hidden components included, as they are what
  the error multiplies); for a log-odds difference
  ``L[x, a] - L[x, b] = f(x)^T (g(a) - g(b))``, ``u (d + 2) |f(x)|^T |g(a) - g(b)|``.

A test that something *vanishes* (``v = 0``: the degenerate pair) has no
relative part: ``v`` must be within its rounding bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl

__all__ = ["Bounded", "raw_difference", "projected_difference", "log_odds_difference", "differences",
           "log_odds_differences", "refined", "REFINE_MAX", "collinear"]

_U = fl.UNIT_ROUNDOFF


@dataclass(frozen=True)
class Bounded:
    """A column vector ``value`` with an entrywise error bound ``error`` (the
    exact vector is within ``error`` of ``value`` in every entry)."""

    value: np.ndarray
    error: np.ndarray
    size: float | None = None
    """The natural size of what the vector was computed from (for a projected
    difference, the projected rows), or None where the error bound is rigorous
    entry by entry: a bound not ``gap`` times below it leaves "holds" undecided."""
    eps: float = 0.0
    """The error of the projector behind the vector (sine of an angle)."""
    nat: np.ndarray | None = None
    """Entry by entry, the natural size of what the entry is a difference of
    (for a log-odds difference ``L[x, a] - L[x, b]``, ``|L[x, a]| + |L[x, b]|``),
    or None. A rigorous bound that is not ``gap`` times below it leaves "holds"
    undecided at that entry: a difference of two logits that cancel a hidden
    component is zero to within its bound, but so is a small non-zero one."""


def raw_difference(X: np.ndarray, i: int, j: int, input_error: float = 0.0) -> Bounded:
    """``X[i] - X[j]`` as a column, with its error bound: the exact rounding
    error of the subtraction, plus ``input_error (|X[i]| + |X[j]|)`` when the
    rows carry a relative error of their own."""
    s, err = fl.subtract_with_error(X[i], X[j], input_error)
    return Bounded(s[:, None], err[:, None])


def projected_difference(P: np.ndarray, eps: float, diff: Bounded, rows: np.ndarray) -> Bounded:
    """``P (x_a - x_b)`` with a bound: the projector's error ``eps`` (spectral)
    and the product's rounding, at the size of the raw difference; ``rows``
    (``2 x d``, the two rows) give the natural size ``|P x_a| + |P x_b|``."""
    v = P @ diff.value
    raw = float(np.linalg.norm(diff.value)) + float(np.linalg.norm(diff.error))
    d = P.shape[0]
    if not np.any(P):   # k = 0: an exact zero
        return Bounded(v, np.zeros_like(v), 0.0)
    bound = (eps + 4 * math.sqrt(d) * _U) * raw + float(np.linalg.norm(P @ diff.error)) if d else 0.0
    size = float(np.linalg.norm(rows @ P.T, axis=1).sum())
    return Bounded(v, np.full_like(v, bound), size, float(eps))


def log_odds_difference(reader: np.ndarray, diff: Bounded, reader_error: np.ndarray | None = None,
                        nat: np.ndarray | None = None) -> Bounded:
    """``reader @ (x_a - x_b)`` row by row with a per-row bound (absolute
    values entrywise): ``u (d + 2) |r| |diff| + |r| diff_error``
    (+ ``reader_error (|diff| + diff_error)``); ``nat`` (a column) the sizes
    of the two log-odds each entry is the difference of."""
    d = reader.shape[1]
    v = reader @ diff.value
    A = np.abs(reader)
    bound = _U * (d + 2) * (A @ np.abs(diff.value)) + A @ diff.error
    if reader_error is not None:
        bound = bound + reader_error @ (np.abs(diff.value) + diff.error)
    return Bounded(v, bound, nat=None if nat is None else np.asarray(nat, dtype=float).reshape(v.shape))


def refine(tol, b: Bounded, idx: np.ndarray, values: np.ndarray, nat: np.ndarray, tiny: float,
           declared=0.0) -> Bounded:
    """``b`` with the entries ``idx`` replaced by correctly rounded values (of
    the same exact quantities), whose error is half an ulp of each plus
    ``tiny`` (what underflow may lose), and their natural sizes ``nat``.
    ``declared``: the part of the error due to the inputs' own declared
    precision; it is added to the bound, and the entry is compared at that
    precision (it does not make "holds" uninformative)."""
    value, error = b.value.copy(), b.error.copy()
    value[idx, 0] = values
    error[idx, 0] = 1.01 * _U * np.abs(values) + tiny + 1.01 * np.asarray(declared)
    size = None if b.nat is None else b.nat.copy()
    if size is not None:
        size[idx, 0] = np.maximum(nat, tol.gap * 1.01 * np.asarray(declared))
    return Bounded(value, error, b.size, b.eps, size)


def blind(tol, b: Bounded) -> np.ndarray:
    """Indices of the entries whose bound is not ``gap`` times below their natural size."""
    if b.nat is None:
        return np.zeros(0, dtype=int)
    return np.flatnonzero((b.error[:, 0] > 0) & (b.error[:, 0] * tol.gap > b.nat[:, 0]))


def _entrywise(tol, r: np.ndarray, nat: np.ndarray, err: np.ndarray) -> Decision:
    """``r = 0`` entry by entry: bound ``rtol * nat + err`` per entry."""
    if r.size == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    bound = np.maximum(tol.rtol * nat + err, np.finfo(float).tiny)
    with np.errstate(over="ignore"):
        ratio = np.abs(r) / bound
    j = int(np.argmax(ratio))
    if not np.all(np.isfinite(bound)):
        truth = Truth.UNDECIDED
    else:
        truth = Truth.FAILS if ratio.flat[j] > tol.gap else Truth.UNDECIDED if ratio.flat[j] > 1 else Truth.HOLDS
    return Decision(truth, float(np.abs(r).max()), (float(bound.flat[j]), float(tol.gap * bound.flat[j])))


def _informed(tol, d: Decision, *vectors: Bounded) -> Decision:
    """A "holds" whose error bound is not ``gap`` times below the natural size
    of what was projected says nothing: undecided."""
    if d.holds:
        for b in vectors:
            if b.nat is not None and np.any((b.error > 0) & (b.error * tol.gap > b.nat)):
                return Decision(Truth.UNDECIDED, d.residual, d.tolerance,
                                {"why": "error bound not below the size of the log-odds"})
            err = float(b.error.max()) if b.error.size else 0.0
            if b.size is None or err == 0 or err * tol.gap <= b.size:
                continue
            # Both rows project within the error bound, through a projector accurate
            # to rtol: the projections are zero at the accuracy of the data.
            if b.size <= err and b.eps <= tol.rtol:
                continue
            return Decision(Truth.UNDECIDED, d.residual, d.tolerance, {"why": "error bound too large"})
    return d


def vanishes(tol, v: Bounded) -> Decision:
    """``v = 0``: every entry within its rounding bound (no relative part)."""
    return _informed(tol, _entrywise(tol, v.value, np.zeros_like(v.value), v.error), v)


def equation(tol, u: Bounded, v: Bounded, lam: float) -> Decision:
    """``u = λ v`` entry by entry."""
    d = _entrywise(tol, u.value - lam * v.value, np.abs(u.value) + abs(lam) * np.abs(v.value),
                   u.error + abs(lam) * v.error + _U * np.abs(u.value - lam * v.value))
    return _informed(tol, d, u, v)


def collinear(tol, u: Bounded, v: Bounded, lam=None):
    """``(decision, λ, v_zero)`` for ``u = λ v`` (``λ`` given, or the only
    candidate ``<u, v>/<v, v>``; for ``v = 0`` the equation is ``u = 0``)."""
    v_zero = vanishes(tol, v)
    if lam is not None:
        return equation(tol, u, v, lam), lam, v_zero
    if v_zero.undecided:
        return Decision(Truth.UNDECIDED, v_zero.residual, v_zero.tolerance, {"why": "cannot tell whether v = 0"}), \
            None, v_zero
    if v_zero.holds:
        return vanishes(tol, u), 0.0, v_zero
    lam = float((u.value.T @ v.value)[0, 0] / (v.value.T @ v.value)[0, 0])
    return equation(tol, u, v, lam), lam, v_zero


def differences(X: np.ndarray, ab, ce, input_error: float = 0.0, P: np.ndarray | None = None,
                eps: float = 0.0) -> tuple[Bounded, Bounded]:
    """``u = X[a] - X[b]`` and ``v = X[c] - X[e]`` with their error bounds
    (:func:`raw_difference`), projected by ``P`` (error ``eps``) when it is
    given (:func:`projected_difference`)."""
    u, v = raw_difference(X, *ab, input_error), raw_difference(X, *ce, input_error)
    if P is not None:
        u = projected_difference(P, eps, u, X[list(ab), :])
        v = projected_difference(P, eps, v, X[list(ce), :])
    return u, v


def log_odds_differences(model, ab, ce, tokens: bool) -> tuple[Bounded, Bounded]:
    """The log-odds differences ``u``, ``v`` of the pairs ``ab`` and ``ce`` with
    their bounds: on the token side (``tokens``) ``L[x, a] - L[x, b]`` computed as
    ``f(x)^T (g(a) - g(b))``, on the context side ``L[x1, y] - L[x2, y]`` as
    ``(f(x1) - f(x2))^T g_0(y)``, entry by entry against its own rounding bound
    (:func:`log_odds_difference`) and recomputed correctly rounded where that
    bound is too large to tell zero (:func:`refined`)."""
    X = model.G if tokens else model.F
    if tokens:
        reader, reader_err = model.F, None
    else:
        reader, E0 = fl.difference_with_error(model.G, model.pivot, model.input_error)
        reader_err = E0 if np.any(E0) else None
    if tokens and model.input_error:
        reader_err = model.input_error * np.abs(reader)
    # the log-odds themselves (rows of X less the pivot's on the token side):
    # their sizes say whether a rounding bound leaves room to call a difference zero
    base = X[model.pivot] if tokens else np.zeros(X.shape[1])
    size = np.abs(reader @ (X - base)[[*ab, *ce]].T)

    def nat(i, j):
        return size[:, i] + size[:, j]

    u = log_odds_difference(reader, raw_difference(X, *ab, model.input_error), reader_err, nat(0, 1))
    v = log_odds_difference(reader, raw_difference(X, *ce, model.input_error), reader_err, nat(2, 3))
    return refined(model, u, ab, tokens), refined(model, v, ce, tokens)


# At most this many entries of one log-odds difference are recomputed exactly rounded.
REFINE_MAX = 1 << 16


def refined(model, diff: Bounded, pair, tokens: bool) -> Bounded:
    """``diff`` (a log-odds difference with its bound) with the entries whose
    bound is too large to tell zero recomputed as correctly rounded sums of
    products of the model's own numbers (where it declares no error of its
    own): ``f(x)^T g(a) - f(x)^T g(b)`` on the token side (``tokens``),
    ``(f(x1) - f(x2))^T (g(y) - g(y_0))`` on the context side."""
    tol = model.backend.tolerance
    idx = blind(tol, diff)
    if idx.size == 0 or idx.size > REFINE_MAX:
        return diff
    F, G, y0 = model.F, model.G, model.pivot

    def rows(v):
        return np.broadcast_to(v, (idx.size, v.shape[0]))

    if tokens:
        Fx = F[idx]
        logit = [[(Fx, rows(G[i])), (Fx, rows(-G[y0]))] for i in pair]
        change = [(Fx, rows(G[pair[0]])), (Fx, rows(-G[pair[1]]))]
    else:
        Gy, G0 = G[idx], rows(G[y0])
        logit = [[(rows(F[i]), Gy), (rows(F[i]), -G0)] for i in pair]
        change = logit[0] + [(rows(-F[pair[1]]), Gy), (rows(F[pair[1]]), G0)]
    outs = [fl.rounded_dots(p) for p in (*logit, change)]
    if any(o is None for o in outs):
        return diff
    nat = np.abs(outs[0][0]) + np.abs(outs[1][0])
    # numbers with a declared relative error of their own are compared at that
    # precision: 2 input_error |x|^T |y| per product of the change
    declared = sum(2 * model.input_error * np.sum(np.abs(x) * np.abs(y), axis=1) for x, y in change) \
        if model.input_error else 0.0
    return refine(tol, diff, idx, outs[2][0], nat, sum(o[1] for o in outs), declared)
