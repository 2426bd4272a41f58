r"""Float decisions of Lemma 8: parallelism and proportional log-odds, decided where they live.

**Where the claim lives.** For tokens ``a, b, c, e`` the differences
``v = g(a) - g(b)`` and ``w = g(c) - g(e)`` lie in ``SG``, where ``F v = F P_N v``
(F4) and ``F`` is injective on ``N`` (F6). Hence

    ``P_N v = λ P_N w``  ⟺  ``F (v - λ w) = 0``  ⟺  ``ℓ_ab = λ ℓ_ce``,

with ``ℓ_ab = L[:, a] - L[:, b]`` the log-odds differences: parallelism in
``N`` is a claim about the distribution, and is decided on the log-odds, whose
exact values no change of basis, hidden component, offset or scaling of ``f``
against ``g`` moves. No projector is computed, so no angle between subspaces
enters a bound. Dually, on contexts, ``P_M (f(x1) - f(x2)) = λ P_M (f(x3) -
f(x4))`` ⟺ ``G_0 (Δ12 - λ Δ34) = 0``. Raw parallelism (no projection) is
decided on the differences themselves, coordinate by coordinate.

**One computation.** Every vector is a set of linear forms ``R w`` of the
model's own numbers: a *reader* ``R`` (``F``; ``G_0 = G - 1 g(y_0)^T`` kept as
the unevaluated pair ``G``, ``-1 g(y_0)^T``; or the identity) applied to an exact
combination ``w = sum_k c_k x_k`` of rows (with ``c_k x_k`` split into two floats
where ``c_k`` is not ``±1``). :func:`forms` evaluates them correctly rounded
(:func:`~allornone.numeric.witness.rounded_matmul`), so each value is within
half an ulp of the exact one plus what underflow may lose, however much it
cancels; beyond :data:`~allornone.numeric.primitives.ROUNDED_LIMIT`
multiply-adds it uses the dot product's a priori bound ``gamma |R| |w|``
(Higham). A declared relative input error ``ε`` adds ``(2 + ε) ε |R| |w|``.

**The decisions** (:func:`entrywise`, the rule of
:meth:`~allornone.numeric.linalg.Tolerance.certain` entry by entry): an entry
``r`` with error ``e`` and natural size ``s`` *holds* when ``|r| + e <= sqrt(gap)
rtol s`` (or it is an exact zero: ``r = e = 0``), *fails* when ``|r| > gap (rtol s
+ e)``. For ``u = λ v`` the size is ``|u| + |λ| |v|`` at that entry: the values
the equation compares, as for ``L = L~``; for ``v = 0`` it is zero (only an
exact zero holds). Never the logits a log-odds difference is formed from:
their size depends on the pivot, which no claim here does (a pivot with a
large ``g(y_0)`` would make any two log-odds "equal"); they enter only
through the error ``e``. With ``λ`` not given, the candidate
``<u, v>/<v, v>`` can show "holds"; "fails" needs every ``λ`` excluded:
:func:`no_ratio` intersects, over the entries, the intervals of ``λ`` at which
an entry could still not fail.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl
from allornone.numeric.primitives import ROUNDED_LIMIT

__all__ = ["Bounded", "Forms", "entrywise", "vanishes", "equation", "no_ratio", "collinear", "differences",
           "log_odds_differences"]

_U = fl.UNIT_ROUNDOFF
_TINY = 2.0 ** -1074


@dataclass(frozen=True)
class Bounded:
    """A column vector ``value`` with an entrywise error bound ``error`` (the
    exact vector is within ``error`` of ``value`` in every entry); ``size``, where
    given, the natural size of each entry (for readouts combined, the sizes of
    the readouts; None: the value's own)."""

    value: np.ndarray
    error: np.ndarray
    size: tuple[np.ndarray, np.ndarray] | None = None
    """Lower and upper bounds of the natural size of each entry, or None."""
    units: np.ndarray | None = None
    """Per entry the exponent ``e`` with the entry's true value ``value 2^e`` (None: the model's units)."""

    @property
    def in_model_units(self) -> np.ndarray:
        """``value`` in the model's units (what is reported; decisions are taken in the entries' own)."""
        if self.units is None:
            return self.value
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(self.value, np.asarray(self.units).reshape(-1, 1))


# -- evaluating linear forms ------------------------------------------------------------------------

def _split(coef: float, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray | float]:
    """Floats whose exact sum is ``coef x``, and per coordinate a bound on
    what underflow may have lost from it (the smallest subnormal where the
    product came near underflow, else 0: a coordinate that lost nothing
    reaches no entry through it)."""
    if coef == 1.0:
        return [x], 0.0
    if coef == -1.0:
        return [-x], 0.0
    if coef == 0.0:
        return [], 0.0
    hi, lo = fl._two_product(np.full_like(x, coef), x)
    if not (np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
        raise OverflowError
    nz = hi != 0
    return [hi, lo], np.where((nz & (np.abs(hi) < 2.0 ** -968)) | ((x != 0) & ~nz), _TINY, 0.0)


class Forms:
    """Linear forms ``R w`` of one model's numbers: ``R = sum_r readers[r]`` (each
    ``p x d``) applied to exact combinations ``w = sum_k c_k X[i_k]`` of rows of
    ``X`` (plus the fixed combination ``base`` added to every *term*, e.g. ``-g(y_0)``
    for logits).

    Values and error bounds are given in units of their own per entry: entry
    ``x`` in units of ``2^(e_x + e_X)``, ``e_x`` the exponent of the readers' row
    ``x`` and ``e_X`` that of ``X``. Every quantity compared at one entry is in the
    same units, so no comparison loses anything to underflow; ``units`` gives
    the exponents to report a value in the model's units."""

    def __init__(self, readers: list[np.ndarray], X: np.ndarray, base=(), input_error: float = 0.0,
                 zero_rows=()):
        # a coordinate that no reader reads, or in which every row of X is zero,
        # adds exact zeros to every form: dropped, it sets no scale (a hidden
        # coordinate of 2^980 would push the others' splits among the subnormals)
        live = np.any(X, axis=0) & np.any([np.any(R, axis=0) for R in readers], axis=0)
        if not live.all():
            X = np.where(live[None, :], X, 0.0)
            readers = [np.where(live[None, :], R, 0.0) for R in readers]
        self.readers, self.base, self.eps = readers, list(base), float(input_error)
        self.p, self.d = readers[0].shape[0], X.shape[1]
        self.er = fl.largest_row_exponents(readers, readers[0].shape[0])
        self._abs_reader = sum(np.abs(R) for R in readers)   # |R|, for the a priori and underflow bounds
        top = float(np.max(np.abs(X))) if X.size else 0.0
        self.ew = int(np.frexp(top)[1]) if top > 0 else 0
        # the rows of X at size about one before a coefficient splits them, so that
        # the split of c x does not underflow where x is tiny (when that is exact)
        with np.errstate(under="ignore"):
            Xs = np.ldexp(X, -self.ew)
        self.shift = self.ew if np.array_equal(np.ldexp(Xs, self.ew), X) else 0
        self.X = Xs if self.shift else X
        self.units = self.er + self.ew
        # entries whose reader row is zero by definition (g_0(y_0)), whatever
        # error the numbers it is computed from carry
        self.zero_rows = list(zero_rows)
        self._terms: dict[int, Bounded] = {}

    def evaluate(self, combos: list[list[tuple[float, int]]]) -> list[Bounded] | None:
        """The forms of ``combos`` (each a list of ``(c_k, i_k)``) with rigorous
        entrywise bounds, or None when one does not fit binary64."""
        try:
            parts = [[_split(float(c), self.X[i]) for c, i in combo] for combo in combos]
        except OverflowError:
            return None
        vecs = [[v for vs, _ in combo for v in vs] for combo in parts]
        lost = np.zeros((len(combos), self.d))
        for j, combo in enumerate(parts):
            for _, t in combo:
                lost[j] += t
        K, q, d, p = max((len(v) for v in vecs), default=0), len(combos), self.d, self.p
        if K == 0:
            return [Bounded(np.zeros((p, 1)), np.zeros((p, 1)), units=self.units) for _ in combos]
        W = np.zeros((K, d, q))
        for j, vs in enumerate(vecs):
            for k, v in enumerate(vs):
                W[k, :, j] = v
        cols = np.full(q, self.ew - self.shift)
        rounded = p * d * q * K * len(self.readers) <= ROUNDED_LIMIT
        n = d * K * len(self.readers) + 2
        with np.errstate(over="ignore", under="ignore"):
            if rounded:
                from allornone.numeric.witness import rounded_matmul

                out = rounded_matmul([(R, W[k]) for R in self.readers for k in range(K)], (self.er, cols))
                if out is None:
                    return None
                value, error = out
            else:
                back = -(self.units - self.shift)[:, None]
                value = np.ldexp(sum(R @ W[k] for R in self.readers for k in range(K)), back)
                mag = self._abs_reader @ np.abs(W).sum(axis=0)
                error = np.ldexp(1.01 * n * _U * mag + n * _TINY, back)
            # what underflow took from the split terms reaches each entry through
            # |R| in the coordinates that lost it (a reader that is zero there
            # sees none of it); rounded up: each product of the sum may itself
            # underflow, by at most the smallest subnormal
            if np.any(lost):
                R = np.ldexp(self._abs_reader, -self.er[:, None])
                Lq = np.ldexp(lost, self.shift - self.ew).T
                # (counted where something was lost, before the change of units:
                # there the loss may itself underflow, and it is at most the
                # smallest subnormal per product)
                hits = (R > 0).astype(float) @ (lost.T > 0).astype(float)
                error = error + (R @ Lq) * (1 + 4 * (d + 2) * _U) + hits * _TINY
            if self.eps:
                error = error + (2 + self.eps) * self.eps * (1 + 4 * n * _U) * self._magnitude(W)
        if not (np.all(np.isfinite(value)) and np.all(np.isfinite(error))):
            return None
        if self.zero_rows:
            value[self.zero_rows], error[self.zero_rows] = 0.0, 0.0
        return [Bounded(value[:, [j]], error[:, [j]], units=self.units) for j in range(q)]

    def _magnitude(self, W: np.ndarray) -> np.ndarray:
        """An upper bound of ``sum |R| |w|`` in the forms' units."""
        from allornone.numeric.witness import rounded_matmul

        absW = np.abs(W).sum(axis=0)
        out = rounded_matmul([(np.abs(R), absW) for R in self.readers],
                             (self.er, np.full(W.shape[2], self.ew - self.shift)))
        if out is None:
            return np.full((self.p, W.shape[2]), np.inf)
        return (out[0] + out[1]) * (1 + 4 * (W.shape[1] + 2) * _U)

    def term(self, i: int) -> Bounded:
        """The form of the single row ``X[i]`` (with ``base``): a logit, or a coordinate."""
        if i not in self._terms:
            out = self.evaluate([[(1, i)] + self.base])
            self._terms[i] = out[0] if out is not None else _undecidable(self.p, self.units)
        return self._terms[i]

    def size(self, combo: list[tuple[float, int]]) -> tuple[np.ndarray, np.ndarray]:
        """The natural size ``sum_k |c_k| |term(i_k)|`` of a combination, from below and from above."""
        lo = sum(abs(c) * _lower(self.term(i)) for c, i in combo)
        hi = sum(abs(c) * _upper(self.term(i)) for c, i in combo)
        return lo, hi

    def sized(self, combos) -> list[Bounded] | None:
        """:meth:`evaluate` with each form's natural size attached."""
        out = self.evaluate(combos)
        if out is None:
            return None
        return [Bounded(b.value, b.error, self.size(c), b.units) for b, c in zip(out, combos)]


# -- the decisions ----------------------------------------------------------------------------------

def entrywise(tol, r: Bounded, size_lo: np.ndarray, size_hi: np.ndarray) -> Decision:
    """``r = 0`` entry by entry: holds where ``|r| + e <= sqrt(gap) rtol s`` (``s``
    from below; an exact zero always), fails where ``|r| > gap (rtol s + e)``
    (``s`` from above). The verdict is the conjunction; the residual and the
    bounds reported are those of the entry that decided it (the one farthest
    beyond its bound, or closest to it), in the model's units."""
    a, e = np.abs(r.value), r.error
    if a.size == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    lo = tol.resolution * tol.rtol * size_lo - e
    hi = tol.gap * (tol.rtol * size_hi + e)
    held = ((a == 0) & (e == 0)) | (a <= lo)
    over = a > hi
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.any(over):
            j, truth = int(np.argmax(np.where(over, a / np.maximum(hi, _TINY), -np.inf))), Truth.FAILS
        elif np.all(held):
            j, truth = int(np.argmax(np.where(a > 0, a / np.maximum(lo, _TINY), 0.0))), Truth.HOLDS
        else:
            j, truth = int(np.argmax(np.where(held, -np.inf, a - lo))), Truth.UNDECIDED
    u = 0 if r.units is None else int(r.units.flat[j])
    return Decision(truth, float(np.ldexp(a.flat[j], u)),
                    (float(np.ldexp(max(float(lo.flat[j]), 0.0), u)), float(np.ldexp(hi.flat[j], u))), {"entry": j})


def _lower(b: Bounded) -> np.ndarray:
    return np.maximum(np.abs(b.value) - b.error, 0.0)


def _upper(b: Bounded) -> np.ndarray:
    return np.abs(b.value) + b.error


def _size(b: Bounded) -> tuple[np.ndarray, np.ndarray]:
    return b.size if b.size is not None else (_lower(b), _upper(b))


def vanishes(tol, v: Bounded) -> Decision:
    """``v = 0`` at the natural size of each entry (``v.size``; none: only an exact zero holds)."""
    if v.size is None:
        return entrywise(tol, v, np.zeros_like(v.value), np.zeros_like(v.value))
    return entrywise(tol, v, *v.size)


def equation(tol, u: Bounded, v: Bounded, lam: float, residual: Bounded) -> Decision:
    """``u = λ v`` entry by entry, on ``residual`` (``u - λ v`` evaluated as one
    set of forms), at the natural size ``s(u) + |λ| s(v)`` of each entry (its
    upper bound rounded up where ``|λ| s(v)`` falls among the subnormals: a
    "fails" is never judged against a size that underflow shrank)."""
    (ul, uh), (vl, vh) = _size(u), _size(v)
    with np.errstate(under="ignore"):
        return entrywise(tol, residual, ul + abs(lam) * vl, uh + _product_up(abs(lam), vh))


def _product_up(x, y) -> np.ndarray:
    """``x y`` (entries >= 0), rounded up where it falls below the normal range
    (there a product loses up to all of itself; above it, half an ulp)."""
    with np.errstate(under="ignore"):
        p = np.multiply(x, y)
        return np.where((p < 2.0 ** -1022) & (np.asarray(x) > 0) & (np.asarray(y) > 0), np.nextafter(p, np.inf), p)


def no_ratio(tol, u: Bounded, v: Bounded) -> bool:
    """Whether no ``λ`` satisfies ``u = λ v`` even at ``gap`` times the tolerance.

    At an entry, not failing at ``λ`` means ``|u* - λ v*| <= gap rtol (s_u + |λ|
    s_v)`` for the exact values (``s`` the natural sizes, from above), hence
    ``|u - λ v| <= α + β |λ|`` with ``α = gap rtol s_u + e_u`` and ``β = gap rtol
    s_v + e_v``. Where ``|v| >
    β`` this confines ``|λ| <= Λ = (α + |u|)/(|v| - β)`` and so ``λ`` to the
    interval ``(u ± (α + β Λ))/v``; an entry with ``v = e_v = 0`` and ``|u| > α``
    admits no ``λ`` at all. When these sets (widened for their own rounding)
    have no common point, every ``λ`` fails somewhere."""
    g = tol.gap * tol.rtol
    uu, vv = u.value[:, 0], v.value[:, 0]
    su, sv = _size(u)[1][:, 0], _size(v)[1][:, 0]
    alpha = (g * su + u.error[:, 0]) * (1 + 8 * _U)
    beta = (g * sv + v.error[:, 0]) * (1 + 8 * _U)
    if np.any((vv == 0) & (beta == 0) & (np.abs(uu) > alpha)):
        return True
    use = np.abs(vv) > 2 * beta
    if np.count_nonzero(use) < 2:
        return False
    uu, vv, alpha, beta = uu[use], vv[use], alpha[use], beta[use]
    with np.errstate(over="ignore"):
        Lam = (alpha + np.abs(uu)) / (np.abs(vv) - beta) * (1 + 8 * _U)
        centre = uu / vv
        rad = (alpha + beta * Lam) / np.abs(vv) * (1 + 8 * _U) + 4 * _U * np.abs(centre) + _TINY
    if not (np.all(np.isfinite(centre)) and np.all(np.isfinite(rad))):
        return False
    return bool(np.max(centre - rad) > np.min(centre + rad))


def collinear(tol, u: Bounded, v: Bounded, residual, lam=None) -> tuple[Decision, float | None, Decision]:
    """``(decision, λ, v_zero)`` for ``u = λ v``: ``λ`` given, or the only
    candidate ``<u, v>/<v, v>``; for ``v = 0`` the equation is ``u = 0``.
    ``residual(λ)`` evaluates ``u - λ v`` as one set of forms (a :class:`Bounded`),
    or returns None when it does not fit binary64 (then undecided)."""
    v_zero = vanishes(tol, v)

    def at(x):
        r = residual(x)
        if r is None:
            return Decision(Truth.UNDECIDED, math.inf, (0.0, 0.0), {"why": "a value beyond binary64"})
        return equation(tol, u, v, x, r)

    if lam is not None:
        return at(lam), lam, v_zero
    if v_zero.undecided:
        return Decision(Truth.UNDECIDED, v_zero.residual, v_zero.tolerance, {"why": "cannot tell whether v = 0"}), \
            None, v_zero
    if v_zero.holds:
        return vanishes(tol, u), 0.0, v_zero
    with np.errstate(over="ignore", invalid="ignore"):
        sv = float(np.max(np.abs(v.value)))
        un, vn = u.value / sv, v.value / sv
        lam = float((un.T @ vn)[0, 0] / (vn.T @ vn)[0, 0])
    if not math.isfinite(lam):
        return Decision(Truth.UNDECIDED, math.inf, (0.0, 0.0), {"why": "a ratio beyond binary64"}), None, v_zero
    d = at(lam)
    if not d.holds and no_ratio(tol, u, v):
        d = Decision(Truth.FAILS, d.residual, d.tolerance, {**d.detail, "why": "no ratio fits every entry"})
    elif d.fails:
        d = Decision(Truth.UNDECIDED, d.residual, d.tolerance,
                     {**d.detail, "why": "the candidate ratio fails, another is not excluded"})
    return d, lam, v_zero


# -- the two kinds of vector --------------------------------------------------------------------------

def _undecidable(p: int, units=None) -> Bounded:
    return Bounded(np.zeros((p, 1)), np.full((p, 1), np.inf), units=units)


def _pair_vectors(forms: Forms, ab, ce):
    """``u`` (pair ``ab``), ``v`` (pair ``ce``), and ``residual(λ)``."""
    (a, b), (c, e) = ab, ce
    out = forms.evaluate([[(1, a), (-1, b)], [(1, c), (-1, e)]])
    u, v = out if out is not None else (_undecidable(forms.p, forms.units),) * 2

    def residual(lam):
        combo = [(1, a), (-1, b), (-lam, c), (lam, e)]
        r = forms.evaluate([combo])
        return None if r is None else r[0]
    return u, v, residual


def differences(X: np.ndarray, ab, ce, input_error: float = 0.0):
    """Raw differences ``u = X[a] - X[b]``, ``v = X[c] - X[e]`` (columns, each
    coordinate at its own size) with their bounds,
    and ``residual(λ)`` for :func:`collinear`."""
    # a difference of rows is compared at its own size: the rows' size would
    # move with a common offset, which leaves the differences unchanged
    return _pair_vectors(Forms([np.eye(X.shape[1])], X, (), input_error), ab, ce)


def raw_differences(model, ab, ce, tokens: bool = True):
    """:func:`differences` of the rows of ``G`` (``tokens``) or ``F``, on the
    model balanced by powers of two where its coordinates span more than
    :data:`~allornone.numeric.balance.SPREAD` binades
    (:func:`~allornone.numeric.balance.spread_balanced`: raw parallelism is
    kept by any change of basis, and coordinates a thousand binades apart then
    lose nothing): that presentation and the differences."""
    from allornone.numeric.balance import spread_balanced

    bal = spread_balanced(model)
    return bal, differences(np.asarray(bal.G if tokens else bal.F), ab, ce, bal.input_error)


def context_reference(model, rows) -> int:
    """The token that rows of log-odds of the contexts ``rows`` are taken
    against: :func:`~allornone.numeric.linalg.reference_token` among those
    contexts' logits, which no change of basis moves (in ``G``'s coordinates a
    pivot ``2^60`` off the other tokens in what the contexts read had looked
    near, beside a coordinate no context reads that spreads them by ``2^100``)."""
    from allornone.numeric.relational import _reference_in_logits

    return _reference_in_logits(np.asarray(model.F)[list(rows)], np.asarray(model.G), model.pivot)


def log_odds_differences(model, ab, ce, tokens: bool, reference: int | None = None):
    """The log-odds differences of the pairs, each entry compared at its own
    size (not its logits', which the pivot moves): ``L[:, a] - L[:, b]`` and ``L[:, c] - L[:, e]``
    on the token side (``tokens``; rows of ``G`` read by ``F``, logits
    ``f(x)^T (g(y) - g(y_0))``: the pivot cancels), ``L[x1, :] - L[x2, :]`` and
    ``L[x3, :] - L[x4, :]`` on the context side (rows of ``F`` read by
    ``G - 1 g(y_0)^T``); and ``residual(λ)`` for :func:`collinear`.

    On the context side the rows are against ``reference`` (default
    :func:`context_reference`): ``u = λ v`` against one
    token holds iff it does against any other (against another, each row
    moves by its own entry there times the ones vector), but a pivot far
    from the other tokens adds that distance to every entry, and two rows of
    differences then look parallel at the size of their values."""
    F, G = model.F, model.G
    y0 = model.pivot if tokens else (context_reference(model, [*ab, *ce]) if reference is None else reference)
    if tokens:
        forms = Forms([F], G, [(-1, y0)], model.input_error)
    else:
        forms = Forms([G, np.broadcast_to(-G[y0], G.shape)], F, (), model.input_error, zero_rows=[y0])
    return _pair_vectors(forms, ab, ce)


def _all_vanish(tol, vectors: list[Bounded], what: str) -> Decision:
    """Every vector vanishes (:func:`vanishes`): the first that fails, else the
    first left undecided, else the one closest to its bound; ``detail[what]``
    says which."""
    ds = [vanishes(tol, b) for b in vectors]
    for truth in (Truth.FAILS, Truth.UNDECIDED):
        for i, d in enumerate(ds):
            if d.truth is truth:
                return Decision(truth, d.residual, d.tolerance, {**d.detail, what: i})
    i = max(range(len(ds)), key=lambda i: ds[i].residual)
    return Decision(Truth.HOLDS, ds[i].residual, ds[i].tolerance, {**ds[i].detail, what: i})


def constant_readouts(model, pairs, readers: list[np.ndarray]) -> Decision | None:
    """Linear steering decided where it lives: the readouts ``R f(t) - R f(s)``
    are the same for every pair ``(s, t)`` (``R = sum readers``: the functionals
    spanning ``Γ``). Each pair is compared with a reference pair, ``R (f(t_i) -
    f(s_i) - f(t_r) + f(s_r))`` a set of linear forms of the model's own
    numbers (:class:`Forms`), judged to vanish entry by entry at the size of
    the four readouts it combines. The reference is, entry by entry, the pair
    whose readouts are smallest there: equal within the tolerance of the sizes
    is then equal within twice it for any two pairs, in any order (against a
    first pair ``2^400`` large, pairs of units that differ by one were all
    "equal" to it). None when a form does not fit binary64."""
    if len(pairs) < 2 or readers[0].shape[0] == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    forms = Forms(readers, np.asarray(model.F), (), model.input_error)
    # each pair's own size per entry (every form's entry x is in the same units)
    own = np.hstack([forms.size([(1, t), (-1, s)])[1] for s, t in pairs])
    refs = np.argmin(np.where(np.isnan(own), np.inf, own), axis=1)
    vectors = []
    for r in np.unique(refs):
        (sr, tr), at = pairs[r], refs == r
        out = forms.sized([[(1, t), (-1, s), (-1, tr), (1, sr)] for s, t in pairs])
        if out is None:
            return None
        # entries another reference serves are exact zeros here (held)
        vectors += [Bounded(np.where(at[:, None], b.value, 0.0), np.where(at[:, None], b.error, 0.0),
                            b.size, b.units) for b in out]
    return _all_vanish(model.backend.tolerance, vectors, "pair")


def token_readouts_vanish(model, T) -> Decision | None:
    """``Γ_T = {0}`` for the readout named by the token pairs ``T``, decided on
    the log-odds: ``P_N (g(a) - g(b)) = 0`` iff ``L[:, a] - L[:, b] = 0`` (F4 and
    F6), so it holds iff every pair's log-odds difference is zero: exactly, as
    no pivot-free size lets a non-zero one count as zero (:func:`vanishes`; the
    logits it is formed from move with the pivot). None when a form does not
    fit binary64."""
    pairs = list(T)
    if not pairs:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    forms = Forms([np.asarray(model.F)], np.asarray(model.G), [(-1, model.pivot)], model.input_error)
    out = forms.evaluate([[(1, a), (-1, b)] for a, b in pairs])
    if out is None:
        return None
    return _all_vanish(model.backend.tolerance, out, "token pair")
