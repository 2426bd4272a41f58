r"""Float decisions of Theorem 5 with error bounds at the scale of each row.

Two float models are compared on the *same* contexts and tokens, so every
context ``x`` (and every token ``y``) may be rescaled by one power of two in
both models at once: ``L = L~`` and the EL relations are unchanged, and the
canonical certificate ``A*``, ``B*`` is unchanged whenever EL1/EL2 are
consistent (it is the unique solution whose rows lie in ``Im P~_M~ F~^T``).
So one huge context cannot set the scale at which the others are judged.

* :func:`same_distribution` compares ``L`` and ``L~`` entry by entry, a tile
  of contexts and tokens at a time (:mod:`~allornone.numeric.logit_tiles`:
  no log-odds array larger than a tile), each entry first against the
  rounding bound of its ordinary dot products, then -- where that bound leaves
  it open -- on the logits formed by sliced products to twice the working
  precision (:mod:`~allornone.numeric.sliced`), and, where even those leave
  it open, on correctly rounded sums
  (:func:`~allornone.numeric.primitives.recomputed_entries`); each time
  judged by :func:`~allornone.numeric.primitives.entry_ratios`.
* :func:`el_certificate` builds ``A* = (F P_M)^T ((F~ P~)^T)^+`` and
  ``B* = (G_0 P_N)^T ((G~_0 P~)^T)^+`` and judges EL1--EL3 column by column
  against the errors the computed subspaces propagate (``Structure.errors``):
  a row of ``F`` of norm ``|f(x)|`` enters EL1 with error ``eps_M |f(x)|``,
  however little of it reaches the distribution.

Every decision is three-valued; a structure whose rank is undecided makes the
certificate undecided, never "fails".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl
from allornone.numeric.logit_tiles import common_exponents as _common_exponents
from allornone.numeric.logit_tiles import common_scaled
from allornone.numeric.logit_tiles import HANDED_BACK, compare_tiles
from allornone.numeric.primitives import recomputed_entries

__all__ = ["FloatCertificate", "FloatIdentification", "el_certificate", "linear_identification", "same_distribution"]

_U = fl.UNIT_ROUNDOFF
# Entries of one block of the log-odds comparison.
_BLOCK = 1 << 21


def _scaled_pair(a, b, own: bool = False, relative: bool = False):
    """Both models' ``F`` and ``G_0`` (with subtraction errors), rows scaled by
    common powers of two; also the exponents. With ``own``, each model's ``F``
    (and ``G_0``) is first scaled as a whole by its own power of two, and the
    whole-matrix exponents ``(eFa, eFb, eGa, eGb)`` are returned too: the EL
    relations then hold for the scaled matrices with ``A`` times
    ``2^(eFb - eFa)``, so two models in very different units (``f -> 2^300 f``)
    are compared at one size.

    With ``relative``, the first model is first brought to the second's units
    as the same model, ``f -> 2^t f``, ``g_0 -> 2^-t g_0`` (``t`` returned last;
    0 where that scaling would not be exact): a map ``A`` with ``F = F~ A^T``,
    ``G~_0 = G_0 A`` becomes ``2^t A``, ranks unchanged. A subnormal context
    against one of ``2^160`` puts ``A`` near ``2^-1200``, and the common row
    scaling sends the subnormal row to zero: every solution had been called
    singular."""
    G0a, E0a = fl.difference_with_error(a.G, a.pivot, a.input_error)
    G0b, E0b = fl.difference_with_error(b.G, b.pivot, b.input_error)
    Fa, Fb = a.F, b.F
    t = _units_shift(np.asarray(Fa), np.asarray(Fb), G0a, E0a) if relative else 0
    if t:
        Fa, G0a, E0a = np.ldexp(Fa, t), np.ldexp(G0a, -t), np.ldexp(E0a, -t)
    whole = (0, 0, 0, 0)
    if own:
        whole = (fl._exponent(Fa), fl._exponent(Fb), fl._exponent(G0a), fl._exponent(G0b))
    # the whole and the row scalings in one step each (a row the whole scaling
    # alone would push among the subnormals would lose bits on the way)
    Fa, Fb, ex = common_scaled(Fa, Fb, whole[0], whole[1])
    ey = _common_exponents(G0a, G0b, whole[2], whole[3])
    sc = fl.scale_rows
    out = (Fa, Fb, sc(G0a, ey + whole[2]), sc(G0b, ey + whole[3]), sc(E0a, ey + whole[2]), sc(E0b, ey + whole[3]),
           ex, ey)
    return out + (whole,) * own + (t,) * relative


def same_distribution(a, b) -> Decision:
    """``L = L~`` in floats, each entry against its own bound (module docstring).

    On failure ``detail["witness"]`` is the pair ``(x, y)`` whose difference is
    largest relative to its bound. The residual reported is ``max |L - L~|``,
    and the tolerance the bounds at the entry that decided.

    The comparison runs in tiles of contexts and tokens
    (:func:`_same_distribution_tiled`), with no copy of the token matrices.
    A pair whose coordinates span more than
    :data:`~allornone.numeric.balance.SPREAD` binades (a presentation ``F D``,
    ``G D^-1`` with ``D`` far from one, or a coordinate no logit reads of
    size ``2^900``) is compared in its balanced presentation
    (:func:`~allornone.numeric.balance.balanced`, ``logits_only``: the same
    log-odds times one power of two), where no row loses its smaller
    coordinates to the scaling that brings its largest to one; the residual
    and tolerance are reported in the models' units.

    The log-odds are compared against the first model's
    :func:`~allornone.numeric.linalg.reference_token`: the pivot, unless it
    lies far from every other token, where it is replaced:
    ``L = L~`` against one token holds iff it does against any other (the
    difference against another is a difference of two columns), but a pivot
    far from the other tokens makes every entry as large as that distance,
    and a tolerance relative to the entries would pass any difference of the
    log-odds between the other tokens. A witness is then handed back as an
    entry of ``L`` against the models' own pivot (of the two columns whose
    difference it is, the one :func:`same_distribution_at_tokens` finds).
    Within the tolerance against the reference is not within it against the
    pivot (an entry near zero there may differ by all of itself): a "holds"
    against the reference stands where the comparison against the pivot does
    not certainly fail."""
    from allornone.numeric.balance import SPREAD, balanced, coordinate_spread, decision_in_units

    x, y, units = a, b, None
    if max(coordinate_spread(a, unread=True), coordinate_spread(b, unread=True)) > SPREAD:
        ba, bb = balanced((a, b), logits_only=True)
        if ba is not a:
            x, y, units = ba, bb, np.array([ba.log_odds_exponent])
    # (the same token in both presentations: balancing keeps the rows' order)
    c = fl.reference_token(np.asarray(x.G), x.pivot)
    d = decision_in_units(_same_distribution_tiled(*_against(x, y, c), a.backend.tolerance), units)
    if d.holds and c != x.pivot:
        # within the tolerance against the reference, but L is the log-odds
        # against the pivot, and an entry there near zero (two tokens about as
        # likely) can differ by all of itself while every entry against the
        # reference is within its own: a certain failure against the pivot is
        # a certain L != L~ (graded.compare, which reads L so, had said "fails"
        # beside this "holds")
        own = decision_in_units(_same_distribution_tiled(x, y, a.backend.tolerance), units)
        if own.fails:
            return own
    return _own_witness(a, b, d, c)


def _against(a, b, c: int):
    """Views of both models (no copy) with token ``c`` as their pivot."""
    from types import SimpleNamespace

    if c == a.pivot:
        return a, b
    return tuple(SimpleNamespace(F=M.F, G=M.G, pivot=c, m=M.m, n=M.n, d=M.d, input_error=M.input_error)
                 for M in (a, b))


def _own_witness(a, b, d: Decision, c: int) -> Decision:
    """A witness found against the reference token ``c`` as an entry of ``L``
    against the models' pivot: ``L_c[x, y] = L[x, y] - L[x, c]``, so where the
    two models differ at ``(x, y)`` against ``c`` they differ at ``(x, y)`` or
    at ``(x, c)`` against the pivot."""
    if "witness" not in d.detail or c == a.pivot:
        return d
    x, y = d.detail["witness"]
    own = same_distribution_at_tokens(a, b, sorted({int(y), int(c)} - {a.pivot}))
    if own.fails and "witness" in own.detail:
        return Decision(d.truth, d.residual, d.tolerance, {**d.detail, "witness": own.detail["witness"]})
    return d


def _conclude(a, b, ex, ey, rows, cols, overflowed, any_fail, worst, max_res, tol) -> Decision:
    """The verdict of a log-odds comparison once every entry has been judged
    by its dot-product bound: the entries collected for it (``rows``,
    ``cols``) recomputed (unless something already fails, or more were to be
    recomputed than allowed: the verdict is then undecided, and recomputing a
    part could only find a witness the bound hides); the witness and the
    tolerance at the entry with the largest ratio, in the models' units."""
    any_undecided = overflowed
    if rows and not any_fail and not overflowed:
        refined = _refined_entries(a, b, ex, ey, np.concatenate(rows), np.concatenate(cols), tol)
        if refined is None:
            any_undecided = True
        else:
            r_ratio, r_diff, r_bound, xs, ys, r_fratio = refined
            any_fail |= bool(np.any(r_fratio > tol.gap))
            any_undecided |= bool(np.any((r_ratio > 1) & (r_fratio <= tol.gap)))
            j = int(np.argmax(r_ratio))
            if r_ratio[j] > worst[0]:
                worst = (float(r_ratio[j]), (int(xs[j]), int(ys[j])), float(r_diff[j]), float(r_bound[j]))
    truth = Truth.FAILS if any_fail else Truth.UNDECIDED if any_undecided else Truth.HOLDS
    x, y = worst[1]
    e = int(ex[x] + ey[y]) if a.m and a.n else 0
    lo = float(np.ldexp(worst[3], e))
    detail = {} if truth is Truth.HOLDS else {"witness": (int(x), int(y))}
    # (lo: the "holds" bound, sqrt(gap) rtol of the entry; "fails" is gap rtol of it)
    return Decision(truth, max_res, (lo, tol.gap * lo / tol.resolution), detail)


# Tiles of the comparison (contexts x tokens).
_TILE_TOKENS = 1024
_TILE_CONTEXTS = 512


def _same_distribution_tiled(a, b, tol, first_failure: bool = False) -> Decision:
    """:func:`same_distribution` a tile of contexts and tokens at a time
    (:mod:`allornone.numeric.logit_tiles`).

    ``G_0`` and ``G~_0`` are formed a block of tokens at a time (with the exact
    error of the subtraction, TwoSum), never whole, and the rounding bound of
    entry ``(x, y)`` is Higham's in its Cauchy--Schwarz form,
    ``u (d + 2) |f(x)| |g_0(y)|`` with Euclidean norms (which bounds
    ``u (d + 2) |f(x)|^T |g_0(y)|``), so that it costs no matrix product of
    its own: two products of ``m x n x d`` flops in all, the token blocks
    shared among threads. Entries the bound leaves open are recomputed as in
    :func:`same_distribution`. ``first_failure``: the pass ends at the first
    tile with a failing entry (:func:`~allornone.numeric.logit_tiles.compare_tiles`;
    the residual is then the largest difference of the entries judged)."""
    ex, t = compare_tiles(a, b, tol, _TILE_TOKENS, _TILE_CONTEXTS, first_failure=first_failure)
    # tiles in their order, as long as they fit in what may be recomputed
    rows, cols, kept, overflowed = [], [], 0, t.redo_count > _REFINE_MAX
    for r, c in zip(t.rows, t.cols):
        if kept + r.size > _REFINE_MAX:
            overflowed = True
            break
        rows.append(r)
        cols.append(c)
        kept += r.size
    return _conclude(a, b, ex, t.ey, rows, cols, overflowed, t.any_fail, t.worst, t.max_res, tol)


def same_distribution_at_tokens(a, b, tokens) -> Decision:
    """The test of :func:`same_distribution` (tiled form) on the columns
    ``tokens`` of ``L`` and ``L~`` only: every context against those tokens,
    each entry judged as it is in the whole comparison. Its "fails" is a
    failure of ``L = L~`` (the witness is in the models' indices; the residual
    is the largest difference in those columns); its "holds" says nothing of
    the other tokens."""
    from types import SimpleNamespace

    tol = a.backend.tolerance
    idx = np.concatenate([[a.pivot], np.asarray(tokens, dtype=int)])
    # the pivot first, so that g_0 is formed as in the whole comparison
    views = [SimpleNamespace(F=M.F, G=M.G[idx], pivot=0, m=M.m, n=idx.size, d=M.d, input_error=M.input_error)
             for M in (a, b)]
    out = _same_distribution_tiled(*views, tol)
    if "witness" in out.detail:
        x, y = out.detail["witness"]
        out.detail["witness"] = (x, int(idx[y]))
    return out


# At most this many entries of L are recomputed with correctly rounded dot products.
_REFINE_MAX = HANDED_BACK


def _refined_entries(a, b, ex, ey, xs, ys, tol):
    """Entries ``(xs, ys)`` of both log-odds recomputed from the models' numbers
    (:func:`~allornone.numeric.primitives.recomputed_entries`, each model at its
    own scale); None when that is not available. Returns ``(ratio, |diff|,
    bound, xs, ys, fails_ratio)``, ``ratio`` and ``bound`` for "holds",
    ``|diff|`` and ``bound`` in the units of the blocked comparison (contexts
    scaled by ``2^-ex``, tokens by ``2^-ey``)."""
    sides = [(m.F, m.G, m.G[m.pivot], m.input_error) for m in (a, b)]
    out = recomputed_entries(*sides, tol, at=(xs, ys))
    if out is None:
        return None
    ratio, diff, hold, fratio, unit = out
    # into the blocked comparison's units, for the report only (the ratios
    # carry the verdict)
    shift = unit - ex[xs] - ey[ys]
    with np.errstate(over="ignore"):
        return ratio, np.ldexp(diff, shift), np.ldexp(hold, shift), xs, ys, fratio


@dataclass
class FloatCertificate:
    """``A*``, ``B*`` with their EL1--EL3 decisions and error estimates."""

    A: Any
    B: Any
    el1: Decision
    el2: Decision
    el3: Decision
    decided: bool
    errors: dict


def _solve(Y, Z, k, tol, basis=None, P=None):
    """``W = Y Z^+`` truncated at rank ``k``, ``sigma_k(Z)`` and ``|W|``. With
    ``basis`` (orthonormal columns ``U`` with ``Z = U U^T Z``, ``k`` of them) the
    SVD is taken of the ``k``-row ``U^T Z`` instead (``Z = U (U^T Z)``: the same
    singular values, left vectors ``U u``).

    Where ``W`` so computed leaves binary64 (the ``k``-th singular value lost
    to rounding: rows of ``C = Z``, or ``U^T Z``, of very different sizes, as
    in a twin whose coordinates are scaled far apart), it is formed from ``C``
    with its rows scaled by powers of two, ``C = S C_s``: ``C_s^+ S^-1`` is a
    generalised inverse ``C^g`` of a ``C`` of rank ``k`` (``C C^g C = C``), so
    ``Y C^g`` acts as ``Y C^+`` on the column space of ``C``, and ``C^+``
    vanishes off it. With ``k`` rows ``C^g = C^+``; otherwise the result is
    projected by ``P``, the orthogonal projector onto that column space
    (``Z = P X^T``), and without ``P`` it is left as computed. ``sigma_k(Z)``
    stays the one first computed, so that the error bound of ``W``
    (:func:`_solution_error`) is that of the SVD it can be certified by
    (infinite where it is lost)."""
    if k == 0 or 0 in Z.shape:
        return np.zeros((Y.shape[0], Z.shape[0])), np.inf, 0.0
    on_basis = basis is not None and basis.shape[1] == k
    C = basis.T @ Z if on_basis else Z
    u, s, vt = np.linalg.svd(C, full_matrices=False)
    # (a k-th singular value lost to rounding divides by zero: W is then not
    # finite, which the fallback below and every bound on W see)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        W = ((Y @ vt[:k].T) / s[:k]) @ (basis @ u[:, :k] if on_basis else u[:, :k]).T
        if not np.all(np.isfinite(W)) and (C.shape[0] == k or P is not None):
            e = fl.row_exponents(C)
            us, ss, vts = np.linalg.svd(fl.scale_rows(C, e), full_matrices=False)
            us = fl.scale_rows(us, e)
            W = ((Y @ vts[:k].T) / ss[:k]) @ (basis @ us[:, :k] if on_basis else us[:, :k]).T
            if C.shape[0] != k:
                W = W @ P
    return W, float(s[k - 1]), float(fl.norm2(W))


def _maps(tol, X, Xt, EX, EXt, P, Pt, eps, eps_t, k, input_error=0.0, basis=None, zero=None):
    """``P X^T = W Pt Xt^T`` (EL1 with ``X = F``, EL2 with ``X = G_0``), ``W``
    the canonical solution; column by column against propagated errors.
    ``basis``: orthonormal columns spanning the range of ``Pt`` (see :func:`_solve`).
    ``zero``: for the columns whose error is not below their size, whether
    both sides are exactly zero there (see :func:`_columns`)."""
    c = 8 * _U * math.sqrt(max(P.shape[0], Pt.shape[0])) + input_error
    Y = P @ X.T
    Z = Pt @ Xt.T
    W, smin, nW = _solve(Y, Z, k, tol, basis, Pt)
    # a zero projector (k = 0) gives exact zeros: no error on that side
    on, on_t = bool(np.any(P)), bool(np.any(Pt))
    # (norms that cannot underflow, as every bound and residual here)
    nX = fl.row_norms(X) if on else np.zeros(X.shape[0])
    nXt = fl.row_norms(Xt) if on_t else np.zeros(Xt.shape[0])
    nEX = fl.row_norms(EX) if EX is not None and on else 0.0
    nEXt = fl.row_norms(EXt) if EXt is not None and on_t else 0.0
    dY = ((eps + c) * fl.norm2(X) + (np.linalg.norm(EX) if EX is not None else 0.0)) if on else 0.0
    dZ = ((eps_t + c) * fl.norm2(Xt) + (np.linalg.norm(EXt) if EXt is not None else 0.0)) if on_t else 0.0
    dW = _solution_error(dY, dZ, nW, smin) if k else 0.0
    WZ = W @ Z
    nat = fl.col_norms(Y) + fl.col_norms(WZ)
    # the residual Y - W Z in WZ's place: one array of the tokens' size fewer
    # at vocabulary scale (the same numbers)
    res = fl.col_norms(np.subtract(Y, WZ, out=WZ))
    err = column_errors(eps, eps_t, c, nX, nEX, nXt, nEXt, nW, dW, fl.col_norms(Z))
    return W, _columns(tol, res, nat, err, zero=zero), dW, nW


def _solution_error(dY: float, dZ: float, nW: float, smin: float) -> float:
    """A bound on ``|W - W0|`` for ``W = Y' Z'^+`` computed from ``Y' = Y + dY``,
    ``Z' = Z + dZ`` (norms at most ``dY``, ``dZ``; ``Z'`` of ``k``-th singular
    value ``smin``) and the exact ``W0 = Y Z^+`` with ``Y = W0 Z`` (the EL
    relation holding exactly, ``Z`` of rank ``k``):
    ``W - W0 = dY Z'^+ + W0 (P_col(Z') - P_col(Z)) - W0 dZ Z'^+``, and Wedin's
    theorem bounds the projectors' distance by ``dZ / smin``, so
    ``|W - W0| <= (dY + 2 |W0| dZ) / smin`` with ``|W0| <= nW + |W - W0|``:
    ``(dY + 2 nW dZ) / (smin - 2 dZ)``. When ``2 dZ`` reaches ``smin`` the
    perturbation may exceed what it perturbs and there is no bound (inf)."""
    if not smin > 2 * dZ:
        return math.inf
    return (dY + 2 * nW * dZ) / (smin - 2 * dZ)


def column_errors(eps, eps_t, c, nX, nEX, nXt, nEXt, nW, dW, nZ):
    """The error a column (token, context) of ``P X^T - W Pt Xt^T`` carries:
    each subspace's error ``eps`` and the products' rounding ``c`` at the size
    ``nX`` of the raw column, the data's own error ``nEX``, the twin's side
    through ``|W| = nW``, and the error ``dW`` of ``W`` itself at the size
    ``nZ`` of the projected twin column. (A side whose projector is exactly
    zero passes zeros.)"""
    # (an unbounded error of W leaves a column unbounded unless the twin's raw
    # column is exactly zero: then so is its projection, exactly)
    nZ = np.asarray(nZ, dtype=float)
    if math.isfinite(dW):
        moved = dW * nZ
    else:
        raw_zero = (np.asarray(nXt) == 0) & (np.asarray(nEXt) == 0)
        moved = np.where(raw_zero, 0.0, math.inf)
    return (eps + c) * nX + nEX + nW * ((eps_t + c) * nXt + nEXt) + moved


def _columns(tol, res, nat, err, zero=None) -> Decision:
    """Columns (rows) ``res``, each of natural size ``nat`` and error bound
    ``err``, by the rule of :meth:`Tolerance.certain
    <allornone.numeric.linalg.Tolerance.certain>` column by column: *holds*
    when every ``res + err <= sqrt(gap) rtol nat`` (an error bound never buys
    it), *fails* when one ``res > gap (rtol nat + err)``. A column whose error
    is as large as that (the part in ``M`` of a context tiny next to its raw
    row, which the error is measured on) still holds where ``zero`` (a
    function of those columns' indices, True when it shows every one of them
    zero: :func:`logits_vanish`) shows both sides exactly zero: where
    the logits of that context, or token, vanish in both models (F6: the part
    in ``M`` is zero exactly when its logits are)."""
    if res.size == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    bound = np.maximum(tol.rtol * nat + err, np.finfo(float).tiny)
    if not (np.all(np.isfinite(bound)) and np.all(np.isfinite(res))):
        # an error bound lost to overflow, or a residual (inf - inf), is no
        # evidence either way
        j = int(np.argmax(~(np.isfinite(bound) & np.isfinite(res))))
        return Decision(Truth.UNDECIDED, float(res[j]), (float(bound[j]), float(tol.gap * bound[j])))
    ratio = res / bound
    j = int(np.argmax(ratio))
    if ratio[j] > tol.gap:
        truth = Truth.FAILS
    else:
        with np.errstate(over="ignore"):
            open_ = np.flatnonzero(res + err > tol.resolution * tol.rtol * nat)
        exact = (res[open_] == 0) & (err[open_] == 0)         # zero by construction
        open_ = open_[~exact]
        truth = Truth.HOLDS if not open_.size or (zero is not None and zero(open_)) \
            else Truth.UNDECIDED
    return Decision(truth, float(res.max()), (float(bound[j]), float(tol.gap * bound[j])))


def _witnessed(tol, res, nat, post, prior) -> Decision:
    """:func:`_columns` for the residuals of a computed witness: "holds" is
    judged against ``post`` (the rounding of the residual itself), "fails"
    against ``prior`` (which also counts the witness's distance from the best
    one); undecided when they disagree."""
    holds = _columns(tol, res, nat, post)
    if holds.holds:
        return holds
    return _columns(tol, res, nat, prior)


def zero_logits(a, b, contexts=None, tokens=None) -> np.ndarray:
    """Per context (or token) of ``contexts`` (``tokens``): whether its logits
    are exactly zero in both models, decided on correctly rounded dot products
    (``G_0`` split exactly by TwoSum): an exact zero is computed as zero and
    nothing else is. False throughout where a model declares an input error
    (its logits are then known only to within it) or the products are not
    formed.

    The correctly rounded products cost a Python-level sum per entry, so a
    context (token) is first screened on ordinary products: one logit beyond
    its rounding bound (:func:`_surely_nonzero`) shows the context is not zero,
    and only those the screen leaves are formed exactly."""
    idx = np.asarray(contexts if contexts is not None else tokens, dtype=int)
    if a.input_error or b.input_error:
        return np.zeros(idx.size, dtype=bool)
    return _zero_logits(_splits(a, b), idx, contexts is not None)


def logits_vanish(a, b, contexts=None, tokens=None) -> bool:
    """Whether every context (token) listed has logits exactly zero in both
    models (:func:`zero_logits`), stopping at the first that has not: blocks of
    a few indices first, then larger ones, so that a generic open column costs
    the screen of a handful of rows, not of all of them."""
    idx = np.asarray(contexts if contexts is not None else tokens, dtype=int)
    if a.input_error or b.input_error:
        return not idx.size
    splits = _splits(a, b)
    lo, step = 0, 16
    while lo < idx.size:
        if not np.all(_zero_logits(splits, idx[lo:lo + step], contexts is not None)):
            return False
        lo, step = lo + step, 4 * step
    return True


def column_vanishes(model, a: int, b: int) -> bool:
    """Whether the log-odds column ``L[:, a] - L[:, b] = F (g(a) - g(b))`` is
    exactly zero (:func:`zero_logits`' screen, then correctly rounded sums of
    ``F`` times the exact difference, split by TwoSum). Then so is that column
    of every truncation ``L_k = P_k L`` of ``L``, whatever ``k``. False where
    the model declares an input error (its logits are known only to within
    it)."""
    if model.input_error:
        return False
    G = np.asarray(model.G, dtype=float)
    g = G[[b]]
    return bool(_zero_logits([(np.asarray(model.F, dtype=float), G[[a]], g)], np.array([0]), False)[0])


def _splits(a, b) -> list:
    """``(F, G, g(y_0))`` of each model: ``G_0 = G - g(y_0)`` is formed a
    chunk of tokens at a time where it is needed (rounded for the screen,
    split exactly by TwoSum for the exact check), never whole."""
    out = []
    for m in (a, b):
        G = np.asarray(m.G)
        out.append((np.asarray(m.F), G, G[m.pivot][None, :]))
    return out


def _chunks(rows: int, width: int):
    """Row ranges of at most ``_BLOCK`` entries (``width`` each) covering ``rows``."""
    step = max(1, _BLOCK // max(width, 1))
    return ((lo, min(rows, lo + step)) for lo in range(0, rows, step))


def _zero_logits(splits: list, idx: np.ndarray, by_context: bool) -> np.ndarray:
    from allornone.numeric.witness import rounded_matmul

    out = np.ones(idx.size, dtype=bool)
    for F, G, p in splits:
        live = np.flatnonzero(out)
        sure = _surely_nonzero(F, G, p, idx[live], by_context)
        out[live[sure]] = False
        live = live[~sure]
        if not live.size:
            break
        js = idx[live]
        # G_0 = D + E exactly (TwoSum's D is the screen's), a chunk of tokens
        # at a time: a context is zero when every chunk of its logits is
        zero = np.ones(js.size, dtype=bool)
        for lo, hi in (_chunks(G.shape[0], F.shape[1] * js.size) if by_context else [(0, 1)]):
            D, E = fl.two_sum(G[lo:hi] if by_context else G[js], -p)
            L = rounded_matmul([(F[js], D.T), (F[js], E.T)] if by_context else [(F, D.T), (F, E.T)])
            if L is None:
                return np.zeros(idx.size, dtype=bool)
            # zero only where the correctly rounded value is zero *and* nothing
            # may have been lost: a logit below binary64's range rounds to zero
            # with an error bound of the smallest subnormal, and is not shown zero
            zero &= ~np.any((L[0] != 0) | (L[1] != 0), axis=1 if by_context else 0)
        out[live] &= zero
    return out


def _surely_nonzero(F: np.ndarray, G: np.ndarray, p: np.ndarray, js: np.ndarray, by_context: bool) -> np.ndarray:
    """Per context ``js`` (rows of ``F``; tokens, rows of ``G``, unless
    ``by_context``): whether some logit ``f(x)^T (d(y) + e(y))`` is certainly
    not zero, ``d = fl(g - g(y_0))`` and ``e`` its TwoSum error (``|e| <= u
    |d|``). The computed ``fl(f^T d)`` is within ``gamma_k |f|^T |d|`` of ``f^T
    d`` (``k`` terms, any order of summation) plus ``k`` smallest subnormals
    lost to underflow, and ``f^T e`` within ``u |f|^T |d|``; the bound used is
    twice the sum of those, with ``|f|^T |d|`` itself computed (its own
    rounding inside the factor two). An entry beyond it is not zero; every
    other is left to the exact check, as is any whose bound overflowed. In
    blocks of both sides, so that no array of ``F``'s or ``G``'s size is
    formed."""
    k = F.shape[1]
    c = 2.0 * ((k + 1) * _U / (1.0 - (k + 1) * _U) + _U)
    tiny = 2.0 * (k + 1) * 2.0 ** -1074
    sure = np.zeros(js.size, dtype=bool)
    # the rows judged (contexts, or tokens' d), against the other side a chunk at a time
    X = F[js] if by_context else G[js] - p
    others = G.shape[0] if by_context else F.shape[0]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        aX = np.abs(X)
        for lo, hi in _chunks(others, k):
            Y = G[lo:hi] - p if by_context else np.asarray(F[lo:hi], dtype=float)
            aY = np.abs(Y)
            left = np.flatnonzero(~sure)
            for r0, r1 in _chunks(left.size, hi - lo):
                rows = left[r0:r1]
                P = X[rows] @ Y.T
                B = aX[rows] @ aY.T
                sure[rows] = np.any(np.isfinite(B) & (np.abs(P) > c * B + tiny), axis=1)
            if sure.all():
                break
    return sure


def el_certificate(a, b) -> FloatCertificate:
    """Canonical certificate and EL1--EL3, in floats (module docstring)."""
    tol = a.backend.tolerance
    sa, sb = a.structure, b.structure
    Fa, Fb, Ga, Gb, Ea, Eb, _, _, (eFa, eFb, eGa, eGb) = _scaled_pair(a, b, own=True)
    eM, eN = sa.errors.get("M", 0.0), sa.errors.get("N", 0.0)
    tM, tN = sb.errors.get("M", 0.0), sb.errors.get("N", 0.0)
    ie = max(a.input_error, b.input_error)
    A, el1, dA, nA = _maps(tol, Fa, Fb, None, None, sa.P_M, sb.P_M, eM, tM, sb.k, ie,
                           zero=lambda js: logits_vanish(a, b, contexts=js))
    B, el2, dB, nB = _maps(tol, Ga, Gb, Ea if np.any(Ea) else None, Eb if np.any(Eb) else None,
                           sa.P_N, sb.P_N, eN, tN, sb.k, ie, zero=lambda js: logits_vanish(a, b, tokens=js))
    return finish_certificate(tol, a, b, sa, sb, A, el1, dA, nA, B, el2, dB, nB, (eFa, eFb, eGa, eGb))


def finish_certificate(tol, a, b, sa, sb, A, el1, dA, nA, B, el2, dB, nB, whole) -> FloatCertificate:
    """EL3 on ``A``, ``B`` of the scaled models (``whole``: the four whole-matrix
    exponents of :func:`_scaled_pair`), and the certificate in the models' own units."""
    eFa, eFb, eGa, eGb = whole
    tM, tN = sb.errors.get("M", 0.0), sb.errors.get("N", 0.0)
    # A and B of the models as given: A = A_s 2^(eFa - eFb), B = B_s 2^(eGa - eGb);
    # A^T B is formed from the scaled ones and scaled once (no overflow on the way)
    t = (eFa - eFb) + (eGa - eGb)
    with np.errstate(over="ignore"):
        lhs = np.ldexp(sb.P_M @ A.T @ B @ sb.P_N, t)
        # entrywise rounding of the four-fold product (Higham: gamma_3d |P||A^T||B||P|)
        # and of P~_M P~_N, largest entry
        dd = max(a.d, b.d)
        round3 = float(np.ldexp((np.abs(sb.P_M) @ np.abs(A.T) @ np.abs(B) @ np.abs(sb.P_N)).max(initial=0.0), t)
                       ) * 3 * dd * _U / (1 - 3 * dd * _U) + float(
            (np.abs(sb.P_M) @ np.abs(sb.P_N)).max(initial=0.0)) * (dd + 1) * _U / (1 - (dd + 1) * _U)
        nAB = float(np.ldexp(nA * nB, t))
        dAB = float(np.ldexp(dA * nB + nA * dB, t))
        A, B = np.ldexp(A, eFa - eFb), np.ldexp(B, eGa - eGb)
        dA, dB = float(np.ldexp(dA, eFa - eFb)), float(np.ldexp(dB, eGa - eGb))
    rhs = sb.P_M @ sb.P_N
    c = 8 * _U * math.sqrt(max(a.d, b.d))
    # projectors have norm 1, or are exactly zero (k~ = 0) and carry no error
    pm = 1.0 if np.any(sb.P_M) and np.any(sb.P_N) else 0.0
    post3 = (2 * (tM + tN) * (nAB + 1) + c) * pm + round3
    err3 = dAB + post3
    nat3 = float(fl.norm2(lhs) + fl.norm2(rhs))
    res3 = float(np.abs(lhs - rhs).max()) if lhs.size else 0.0
    # EL3 is a claim about the canonical A*, B*, of which A and B are the
    # computed approximations: their errors dA, dB count for "holds" as for
    # "fails" (that the computed pair satisfies EL3 says nothing of A*, B*:
    # a B* off by a token's rounded G - g(y_0) had "held" where it fails)
    el3 = tol.certain(res3, nat3, err3)
    decided = sa.decided and sb.decided
    return FloatCertificate(A, B, el1, el2, el3, decided, {"dA": dA, "dB": dB})


def _pinv_parts(X: np.ndarray, r: int):
    """``X^+`` truncated at rank ``r``, ``sigma_r(X)`` and ``|X^+|``."""
    if r == 0 or 0 in X.shape:
        return np.zeros((X.shape[1], X.shape[0])), np.inf
    u, s, vt = np.linalg.svd(X, full_matrices=False)
    return (vt[:r].T / s[:r]) @ u[:, :r].T, float(s[r - 1])


@dataclass
class FloatIdentification:
    """The float decision of Corollary 6's right-hand side."""

    decision: Decision
    A: Any
    reason: str


def linear_identification(a, b) -> FloatIdentification:
    r"""Is there an invertible ``A`` (``d x d``) with ``F = F~ A^T`` and
    ``G~_0 = G_0 A``? Memory ``O((m + n) d + d^2)``: no Kronecker system.

    The solutions of ``A F~^T = F^T`` are ``A_0 + Z P~_perp`` with
    ``A_0 = F^T (F~^T)^+`` and ``P~_perp`` the projector onto ``SF~^perp``;
    ``G_0 A = G~_0`` then fixes ``Z`` up to ``ker G_0``. So, when both systems
    are consistent, the solution set is ``A_p + K_G Y K_F^T`` (``K_G``: a basis of
    ``ker G_0``, ``K_F``: of ``SF~^perp``, ``Y`` free). Consistent conditions
    with ``rank F = rank F~`` and ``rank G_0 = rank G~_0`` always have an
    invertible solution (:func:`allornone.theorems.cor6.linear_identification`
    proves it), so the verdict is consistency and the two ranks; a member clear
    of rounding (``Y`` random) is handed back where one is found."""
    tol = a.backend.tolerance
    d = a.d
    sa, sb = a.structure, b.structure
    # (A in the units of _scaled_pair's relative shift t: 2^t times the model's)
    Fa, Fb, Ga, Gb, Ea, Eb, _, _, t = _scaled_pair(a, b, relative=True)
    c = 8 * _U * math.sqrt(max(Fa.shape[0], Ga.shape[0], d)) + 2 * max(a.input_error, b.input_error)
    rF, rG = sb.basis_SF.shape[0], sa.basis_SG.shape[0]
    decided = (sa.decided and sb.decided)
    # A_0 = F^T (F~^T)^+ = (F~^+ F)^T
    Fb_pinv, sF = _pinv_parts(Fb, rF)
    A0 = (Fb_pinv @ Fa).T
    nA0 = float(fl.norm2(A0)) if A0.size else 0.0
    # the solves' errors with the rotation of the column spaces counted
    # (_solution_error); where the systems are inconsistent no A exists, and
    # these bounds serve only "fails" verdicts, which are then right anyway
    dA0 = _solution_error(c * fl.norm2(Fa), c * fl.norm2(Fb), nA0, sF) if rF else 0.0
    P_perp = np.eye(d) - sb.P_F
    D = Gb - Ga @ A0
    Ga_pinv, sG = _pinv_parts(Ga, rG)
    X = Ga_pinv @ D
    Ap = A0 + X @ P_perp
    nAp = float(fl.norm2(Ap))
    nD = float(fl.norm2(D)) if D.size else 0.0
    nX, nG = float(fl.norm2(X)), float(fl.norm2(Ga))
    with np.errstate(invalid="ignore", over="ignore"):
        # D = G~_0 - G_0 A_0 carries the products' rounding, the data errors and A_0's error
        dD = c * (nD + nG * nA0) + nG * dA0 + float(np.linalg.norm(Eb)) + float(np.linalg.norm(Ea)) * nA0
        dX = _solution_error(dD, c * nG + float(np.linalg.norm(Ea)), nX, sG) if rG else 0.0
        dAp = dA0 + dX + sb.errors.get("SF", 0.0) * nX
    # the two systems, context by context and token by token (an infinite error
    # bound times a zero row is no bound: NaN, which leaves the check undecided)
    R1 = Fa.T - Ap @ Fb.T
    # Two bounds per context and per token. ``post``: the rounding of the
    # residual of the computed A_p itself (Higham: |fl(A_p f) - A_p f| <=
    # gamma_d |A_p| |f|, so ||.|| <= gamma_d ||A_p||_F ||f||) plus the data
    # errors -- A_p is a witness, so a small residual shows the conditions
    # consistent whatever A_p's own error. ``prior`` adds that error (dA_p
    # times the data): a large residual shows them inconsistent only beyond it.
    g = (d + 2) * _U / (1 - (d + 2) * _U) + 2 * max(a.input_error, b.input_error)
    nApF = float(np.linalg.norm(Ap)) if Ap.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        # (norms that cannot underflow: a vanishing bound or residual would be taken as exact)
        nFa, nFb = fl.row_norms(Fa), fl.row_norms(Fb)
        nGa, nGb = fl.row_norms(Ga), fl.row_norms(Gb)
        data2 = fl.row_norms(Eb) + nAp * fl.row_norms(Ea)
        post1 = g * (nFa + nApF * nFb)
        post2 = g * (nGa * nApF + nGb) + data2
        e1 = np.maximum(c * (nFa + nAp * nFb) + dAp * nFb, post1)
        e2 = np.maximum(c * (nGa * nAp + nGb) + dAp * nGa + data2, post2)
    R2 = Ga @ Ap - Gb
    res1, res2 = fl.col_norms(R1), fl.row_norms(R2)
    # (with an ill-conditioned basis the witness's own size makes the rounding
    # of its residual as large as a misfit: that rounding is a cost for "holds")
    consistent = Decision.all([_witnessed(tol, res1, nFa, post1, e1),
                               _witnessed(tol, res2, nGb, post2, e2)])
    if not decided:
        return FloatIdentification(Decision(Truth.UNDECIDED, consistent.residual, consistent.tolerance), None,
                                   "a rank of the structure is undecided")
    ranks = ((sa.basis_SF.shape[0], rF), (rG, sb.basis_SG.shape[0]))
    if any(x != y for x, y in ranks):
        # decided ranks that differ: no invertible A, whatever the residuals say
        return FloatIdentification(Decision(Truth.FAILS, consistent.residual, consistent.tolerance), None,
                                   "an invertible A preserves ranks: rank F {} vs {}, rank G_0 {} vs {}".format(
                                       *ranks[0], *ranks[1]))
    if not consistent.holds:
        return FloatIdentification(consistent, None, "the linear conditions on A are inconsistent"
                                   if consistent.fails else "consistency of the linear conditions is undecided")
    KG = _complement(sa.basis_SG, d) if rG < d else np.zeros((d, 0))
    KF = _complement(sb.basis_SF, d) if rF < d else np.zeros((d, 0))
    # the free directions are brought to the size of A_p (A scales with the
    # models' units: f -> s f, f~ -> s~ f~ gives A -> (s / s~) A)
    unit = nAp if nAp > 0 else 1.0
    # Where one system alone fixes A (rank F~ = d, or rank G_0 = d) the solution
    # A* is unique, and A_p's distance from it is measured, not propagated:
    # (A_p - A*) F~^T = -R_1 gives |A_p - A*| <= |R_1| / sigma_d(F~), and
    # G_0 (A_p - A*) = R_2 gives |R_2| / sigma_d(G_0); |R| counts its rounding
    # (and the data error of G_0), sigma_d its own (less the data error).
    measured = [dAp]
    if rF == d:
        low = sF - fl.svd_noise(max(Fb.shape), float(fl.norm2(Fb)))
        if low > 0:
            measured.append((float(np.linalg.norm(res1)) + float(np.linalg.norm(post1))) / low)
    if rG == d:
        low = sG - fl.svd_noise(max(Ga.shape), float(fl.norm2(Ga))) - float(np.linalg.norm(Ea))
        if low > 0:
            measured.append((float(np.linalg.norm(res2)) + float(np.linalg.norm(post2))) / low)
    noise = min(measured) + fl.svd_noise(2 * d, unit) + (sa.errors.get("SG", 0.0) + sb.errors.get("SF", 0.0)) * nAp
    # Consistent, with equal ranks: an invertible solution exists (the verdict);
    # a member is handed back where its smallest singular value clears the
    # noise, as given or with rows and columns scaled by powers of two
    # (invertibility is unchanged by such scalings, the singular values are not)
    rng = np.random.default_rng(0)
    for _ in range(8):
        Y = rng.standard_normal((KG.shape[1], KF.shape[1])) * unit
        A = Ap + KG @ Y @ KF.T
        s = np.linalg.svd(A, compute_uv=False)
        s_eq, n_eq, _ = _equilibrated_singular_values(A, noise)
        if s[-1] > tol.gap * (noise + fl.svd_noise(d, s[0])) or s_eq[-1] > tol.gap * n_eq:
            held = Decision(Truth.HOLDS, consistent.residual, consistent.tolerance)
            if t and not _exactly_scaled(A, -t):
                return FloatIdentification(held, None, "an invertible solution was found, in units 2^{} "
                                                       "times the models' (in theirs its entries leave binary64)".format(t))
            return FloatIdentification(held, np.ldexp(A, -t), "an invertible solution was found")
    return FloatIdentification(Decision(Truth.HOLDS, consistent.residual, consistent.tolerance), None,
                               "an invertible solution exists (consistent conditions, equal ranks); none of the "
                               "members drawn is clear of rounding")


def _exactly_scaled(X: np.ndarray, t: int) -> bool:
    """Whether ``X 2^t`` is exact and finite (no entry over- or underflows)."""
    with np.errstate(over="ignore"):
        Y = np.ldexp(X, t)
    return bool(np.all(np.isfinite(Y)) and np.array_equal(np.ldexp(Y, -t), X))


def _units_shift(Fa: np.ndarray, Fb: np.ndarray, Ga: np.ndarray, Ea: np.ndarray) -> int:
    """The power of two ``t`` bringing ``Fa`` to ``Fb``'s size, where ``Fa 2^t``,
    ``Ga 2^-t`` and ``Ea 2^-t`` are exact (else 0)."""
    t = fl._exponent(Fb) - fl._exponent(Fa) if Fa.size and Fb.size else 0
    if t and _exactly_scaled(Fa, t) and _exactly_scaled(Ga, -t) and _exactly_scaled(Ea, -t):
        return t
    return 0


def _equilibrated_singular_values(M: np.ndarray, noise: float) -> tuple[np.ndarray, float, float]:
    """The singular values of ``D_1 M D_2`` (rows, then columns, scaled by
    powers of two to size about one: the same rank), a bound on how far they
    are from the exact ones when ``M`` is within ``noise`` of its exact value
    (normwise: ``|D_1| |D_2| noise``, plus the SVD's own error), and the
    largest singular value as the reference size."""
    if M.size == 0:
        return np.zeros(0), noise, 0.0
    er = fl.row_exponents(M)
    X = fl.scale_rows(M, er)
    ec = fl.row_exponents(X.T)
    X = fl.scale_rows(X.T, ec).T
    s = np.linalg.svd(X, compute_uv=False)
    grow = float(np.ldexp(1.0, int(-er.min()) - int(ec.min()))) if er.size and ec.size else 1.0
    with np.errstate(over="ignore"):
        n_eq = grow * noise + fl.svd_noise(max(M.shape), float(s[0]) if s.size else 0.0)
    return s, n_eq, float(s[0]) if s.size else 0.0


def _complement(B: np.ndarray, d: int) -> np.ndarray:
    """Orthonormal columns spanning the orthogonal complement of the (orthonormal) rows of ``B``."""
    if B.shape[0] == 0:
        return np.eye(d)
    q, _ = np.linalg.qr(np.hstack([B.T, np.eye(d)]))
    return q[:, B.shape[0]:d]
