r"""The float layer's decision primitives: a claim each, its bound, its proof.

Every float verdict of the package is meant to rest on a few decisions whose
soundness is argued once, here and on the float-verdicts page of the
documentation, rather than rule by rule in each result:

* :func:`product_rank` -- the rank of a product of two factors,
  ``rank(A B^T)`` (the effective complexity ``k = rank F G_0^T``);
* :func:`products_equal` -- entrywise equality of two products,
  ``A B^T = C D^T`` (``L = L~``);
* :func:`allornone.numeric.witness.fit_witness` -- consistency of a linear
  system, shown by an exhibited solution with a rigorous residual bound;
* :func:`consistent` -- consistency of a linear system whose matrix and
  right-hand side are products (a fit on the logits), by two product ranks;
* :func:`certified_nonzero` -- a quantity is not zero, certified by a lower
  bound;
* :func:`exact_residual` -- the least-squares residual of a small fit on
  binary64 numbers, exactly (no rounding, so no condition number, enters it);
* :func:`allornone.numeric.sliced.sliced_product` -- values of a matrix
  product to about twice the working precision, by products of slices that
  BLAS forms exactly (the entries of ``L`` that a dot-product bound leaves
  open, a block at a time).

The three-valued rule they share is :meth:`Tolerance.certain
<allornone.numeric.linalg.Tolerance.certain>`: a residual ``r`` computed with
error at most ``e`` *holds* when ``r + e <= R rtol s`` (the exact residual is
within ``R rtol`` of the natural size ``s``, whatever the rounding did),
*fails* when ``r > gap (rtol s + e)``, and is *undecided* otherwise (``R =
sqrt(gap)``, the resolution of a "holds"). A rounding bound never buys a
"holds".

**Deciding a claim where it lives.** A claim about the distribution -- ``k``,
``L = L~`` -- is decided on quantities of the logits themselves, computed
correctly rounded from the factors (:func:`allornone.numeric.witness.rounded_matmul`:
each entry of ``A B^T`` is the exact value rounded once, so an exact zero stays
zero and a nonzero entry keeps its relative accuracy however much its terms
cancel), and scaled by powers of two taken from the logits' own rows and
columns. The exact values of those quantities are the same in every
presentation of the model: hidden components, changes of basis of any
condition, scalings of ``f`` against ``g``, offsets of ``g`` and powers of two
per context or token leave them unchanged, so no such transformation can move
a decided verdict. Beyond :data:`ROUNDED_LIMIT` multiply-adds the logits are not
formed; the callers then fall back on bounds from the factors, which grow with
the condition of the presentation and leave the verdict undecided where they
do not resolve it.
"""
from __future__ import annotations

import math

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl
from allornone.numeric.linalg import (DEFAULT_TOLERANCE, UNIT_ROUNDOFF, Tolerance, row_exponents, scale_rows,
                                      singular_values)

__all__ = ["ROUNDED_LIMIT", "singular_values", "product_rank", "product_rank_decision", "log_odds_rank",
           "products_equal", "entry_ratios", "recomputed_entries", "consistent", "affine_rank", "certified_nonzero"]

#: Multiply-adds (``m n d``) up to which a product is formed correctly rounded.
ROUNDED_LIMIT = 1 << 22


def _exponents(P: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Per row the power of two that brings it to size about one -- unless the
    row is within its own error of zero, which then keeps the scale of the
    whole matrix (scaling noise up would make it look as large as the rest;
    at the whole's scale it is zero or not at the tolerance on the product)."""
    top = np.max(np.abs(P), axis=1, initial=0.0)
    e = row_exponents(P)
    whole = int(np.frexp(float(np.max(top, initial=0.0)))[1]) if top.size and np.max(top) > 0 else 0
    return np.where(_within_own_error(P, E), whole, e).astype(int)


def _within_own_error(P: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Per row of ``P`` whether no entry is above twice the row's largest error
    (a zero row too): the row cannot be told from zero at a scale of its own."""
    return ~(np.max(np.abs(P), axis=1, initial=0.0) > 2 * np.max(E, axis=1, initial=0.0))


def _equilibrated(P: np.ndarray, E: np.ndarray, rows_first: bool = True):
    """``P`` and its error bound ``E`` with rows, then columns (or columns, then
    rows), scaled by powers of two taken from ``P`` (the rank and the relative
    accuracy of every entry unchanged); a row or column within its own error
    of zero keeps the scale of the whole (see :func:`_exponents`). What the
    scaling loses, where an entry lands among the subnormals, joins the error
    bound (:func:`~allornone.numeric.linalg.scaled_with_error`), so the scaled
    matrix is within the bound of the exactly scaled product."""
    if not rows_first:
        Q, Es = _equilibrated(P.T, E.T)
        return Q.T, Es.T
    er = _exponents(P, E)
    Pr, Er = fl.scaled_with_error(P, er, E)
    ec = _exponents(Pr.T, Er.T)
    Q, Es = fl.scaled_with_error(Pr.T, ec, Er.T)
    return Q.T, Es.T


def _declared(A: np.ndarray, B: np.ndarray, EA, EB) -> np.ndarray | None:
    """An entrywise bound on the change of ``A B^T`` when ``A`` and ``B`` are
    known to within ``EA`` and ``EB`` (entrywise): ``EA |B|^T + |A| EB^T + EA EB^T``,
    rounded up."""
    if EA is None and EB is None:
        return None
    EA = np.zeros_like(A) if EA is None else EA
    EB = np.zeros_like(B) if EB is None else EB
    with np.errstate(over="ignore"):
        out = EA @ np.abs(B).T + np.abs(A) @ EB.T + EA @ EB.T
    return out * (1 + 4 * (A.shape[1] + 2) * UNIT_ROUNDOFF)


def _rounded_product(A: np.ndarray, B: np.ndarray, EA=None, EB=None, extra=None):
    """``A B^T`` correctly rounded with an entrywise error bound (declared input
    errors included: ``extra``, or :func:`_declared` of ``EA``, ``EB``), or None
    when it is too large or does not fit binary64."""
    from allornone.numeric.witness import rounded_matmul

    m, d = A.shape
    if m * B.shape[0] * d > ROUNDED_LIMIT:
        return None
    out = rounded_matmul([(A, B.T)])
    if out is None:
        return None
    P, E = out
    if extra is None:
        extra = _declared(A, B, EA, EB)
    if extra is not None:
        E = E + extra
    if not (np.all(np.isfinite(P)) and np.all(np.isfinite(E))):
        return None
    return P, E


def product_rank(A: np.ndarray, B: np.ndarray, EA: np.ndarray | None = None, EB: np.ndarray | None = None,
                 tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[int, bool, np.ndarray, float] | None:
    r"""``rank(A B^T)``, decided on the product itself.

    **Claim.** With ``P`` the exact product (of the exact ``A``, ``B``, which the
    given arrays approximate to within the entrywise bounds ``EA``, ``EB``), the
    returned rank ``r`` is ``rank P`` whenever the result is *decided* and no
    nonzero singular value of ``P`` lies within ``2 delta`` of zero, where
    ``delta <= rtol sigma_1`` is the bound returned. A singular value counted
    nonzero is certainly nonzero.

    **Proof.** ``Q = fl(A B^T)`` is correctly rounded entry by entry, so
    ``|Q - P| <= E`` with ``E = u |Q|`` plus what underflow may have lost and the
    declared input errors (:func:`_declared`). Rows and columns of ``Q`` and
    ``E`` are scaled by the same powers of two ``D_1``, ``D_2`` (exact), so
    ``|D_1 (Q - P) D_2| <= D_1 E D_2`` and, by Weyl's inequality, every singular
    value of ``D_1 P D_2`` lies within ``delta = ||D_1 E D_2||_F + c u ||D_1 Q D_2||``
    of the computed one (``c u ||.||``: the SVD's backward error). A computed
    value above ``delta`` is therefore the image of a nonzero one; a value below
    is within ``2 delta`` of zero, and zero is decided only when ``delta`` is at
    most ``rtol`` times the largest singular value -- the tolerance on the size of
    the product -- and none lies between ``delta`` and ``gap delta``. ``D_1``,
    ``D_2`` are taken from ``Q`` (a row or column within its own error of zero
    keeps the scale of the whole), quantities of the product and not of the
    factors, so a change of the factors that keeps the product moves them by no
    more than the rounding of ``Q``.

    Returns ``(r, decided, singular values, delta)``, or None when the product
    is not formed (more than :data:`ROUNDED_LIMIT` multiply-adds, or entries
    beyond binary64); the caller then uses a bound from the factors.

    Examples
    --------
    >>> A = np.array([[3.0, 1.0], [1.0, 2.0]]); B = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> product_rank(A, B)[:2]
    (2, True)
    >>> T = np.array([[1.0, 2.0 ** 40], [0.0, 1.0]])       # a shear of condition about 1e24,
    >>> Ti = np.array([[1.0, -2.0 ** 40], [0.0, 1.0]])     # exact in binary64 here
    >>> product_rank(A @ T, B @ Ti.T)[:2]
    (2, True)
    >>> product_rank(A @ T, (B @ Ti.T)[[0, 1, 1]])[:2]   # two equal tokens: rank 1
    (1, True)
    """
    m, d = A.shape
    n = B.shape[0]
    if 0 in (m, n, d):
        return 0, True, np.zeros(0), 0.0
    # a coordinate one factor does not use (exactly, error bound included) adds
    # exact zeros to every entry: it is dropped, so that it sets no row's scale
    A, B, EA, EB = fl.live_coordinates(A, B, EA, EB)
    # rows of the factors first scaled by powers of two (the rank of the product
    # unchanged), so that the product neither overflows nor underflows; where a
    # row's small entries land among the subnormals (its large ones sit in
    # coordinates the other factor does not use), what they lose is an error
    # of the scaled factor like a declared one
    ea, eb = row_exponents(A), row_exponents(B)
    (As, EAs), (Bs, EBs) = fl.scaled_with_error(A, ea, EA), fl.scaled_with_error(B, eb, EB)
    first = _rank_of_product(As, Bs, EAs, EBs, tol)
    if first is None or first[0] == min(m, n) or not (ea.any() or eb.any()):
        return first
    # The factors' rows scaled each to size one scale the product's rows and
    # columns, which its own equilibration need not undo (a coordinate that one
    # factor's row is large in and another's small): the rank is the same in
    # every presentation, and a singular value clear of its bound in any proves
    # it from below. The product of the factors as given is tried too, and the
    # presentation that proves more is kept.
    other = _rank_of_product(A, B, EA, EB, tol)
    if other is not None and np.sum(other[2] > other[3]) > np.sum(first[2] > first[3]):
        return other
    return first


def _rank_of_product(A, B, EA, EB, tol):
    """:func:`product_rank` of factors as they are (their product correctly
    rounded, then equilibrated), or None where the product is not formed."""
    m, n = A.shape[0], B.shape[0]
    out = _rounded_product(A, B, EA, EB)
    if out is None:
        return None
    best = None
    # rows first, then columns; where that proves less than full rank, columns
    # first too (one order need not undo a presentation scaled the other way)
    for rows_first in (True, False):
        Q, E = _equilibrated(*out, rows_first=rows_first)
        s = singular_values(Q)
        if s is None:
            cand = (0, False, np.zeros(min(m, n)), math.inf)
        else:
            top = float(s[0]) if s.size else 0.0
            delta = _frobenius(E) + 4.0 * math.sqrt(max(m, n)) * UNIT_ROUNDOFF * top
            delta *= 1 + 1e-10
            cand = (*product_rank_decision(s, delta, tol), s, delta)
        if best is None or np.sum(cand[2] > cand[3]) > np.sum(best[2] > best[3]):
            best = cand
        if best[0] == min(m, n):
            break
    if best[1] and best[0] < min(m, n) and _loose_line(*out):
        # a row or column within its own error of zero (a token's logits that
        # cancel out of terms 2^60 larger, rounded in G - g(y_0)) was judged at
        # the scale of the whole, which comes from the factors, not from it:
        # its exact entries may be as large as that error, and whether they add
        # a direction is not known
        best = (best[0], False, *best[2:])
    return best


def _loose_line(P: np.ndarray, E: np.ndarray) -> bool:
    """Whether a row or column of ``P`` that is not exactly zero (its error is
    not zero) is within its own error of zero (:func:`_within_own_error`):
    :func:`_exponents` gives such a line the scale of the whole."""
    return any(bool(np.any(_within_own_error(X, Y) & np.any(Y, axis=1))) for X, Y in ((P, E), (P.T, E.T)))


def _frobenius(E: np.ndarray) -> float:
    """``||E||_F`` rounded up, without the underflow of squares of tiny entries
    (an error bound of ``1e-300`` per entry must not come out as zero)."""
    top = float(np.max(np.abs(E))) if E.size else 0.0
    if top == 0.0 or not math.isfinite(top):
        return top
    return float(np.linalg.norm(E / top)) * top * (1 + 4 * UNIT_ROUNDOFF)


def log_odds_rank(F: np.ndarray, G0: np.ndarray, E0: np.ndarray | None = None,
                  tol: Tolerance = DEFAULT_TOLERANCE, EF: np.ndarray | None = None) -> tuple[int, bool, np.ndarray, float]:
    """``k = rank L`` for ``L = F G_0^T``, decided on the logits.

    Up to :data:`ROUNDED_LIMIT` multiply-adds the
    logits are formed correctly rounded and their rank decided on them
    (:func:`product_rank`): a decision about ``L``
    itself, which hidden components, changes of basis of any condition,
    scalings and offsets do not move. ``E0`` and ``EF`` are entrywise error
    bounds of ``G_0`` (the exact error of ``G - g(y_0)``, see
    :func:`~allornone.numeric.linalg.difference_with_error`, and any declared input error) and of ``F``.

    Beyond that size ``L`` is not formed: the singular values of ``R_F R_G^T``
    (``F = Q_F R_F``, ``G_0 = Q_G R_G``, rows first scaled by powers of two) are
    judged against a bound that pairs the columns -- Householder QR is backward
    stable column by column, so the rounding reaching ``L`` is about
    ``u sum_j |F[:, j]| |G_0[:, j]|``, and a coordinate in which ``g_0`` vanishes
    adds nothing. That bound grows with the condition of the basis; a direction
    is called zero only where it is below ``rtol`` of the largest singular
    value, so an ill-conditioned presentation leaves ``k`` undecided, never
    wrong. Returns ``(k, decided, singular values, zero bound)``.

    >>> F = np.array([[1e9, 1.0], [1e9, 2.0]]); G0 = np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    >>> log_odds_rank(F, G0)[:2]
    (1, True)
    """
    m, d = F.shape
    n = G0.shape[0]
    if 0 in (m, n, d):
        return 0, True, np.zeros(0), 0.0
    E0 = E0 if E0 is not None and np.any(E0) else None
    EF = EF if EF is not None and np.any(EF) else None
    exact = product_rank(F, G0, EF, E0, tol)
    if exact is not None:
        return exact
    eF, eG = row_exponents(F), row_exponents(G0)
    Fr, Gr = scale_rows(F, eF), scale_rows(G0, eG)
    RF, RG = fl._r_factor(Fr), fl._r_factor(Gr)
    s = fl.svd(RF @ RG.T, compute_uv=False)
    pair = float(np.sum(np.linalg.norm(Fr, axis=0) * np.linalg.norm(Gr, axis=0)))
    noise = 8.0 * math.sqrt(max(m, n, d)) * UNIT_ROUNDOFF * pair
    if E0 is not None:
        noise += fl.norm2(Fr) * float(np.linalg.norm(scale_rows(E0, eG)))
    if EF is not None:
        noise += fl.norm2(Gr) * float(np.linalg.norm(scale_rows(EF, eF)))
    r, decided = product_rank_decision(s, noise, tol)
    return r, decided, s, noise


def product_rank_decision(s: np.ndarray, noise: float, tol: Tolerance = DEFAULT_TOLERANCE) -> tuple[int, bool]:
    """The rank of a product from its computed singular values ``s`` (largest
    first), each within ``noise`` of the exact one: :meth:`Tolerance.rank <allornone.numeric.linalg.Tolerance.rank>`, and
    undecided as well where every value is within ``gap`` of the bound (the
    product may be zero or not) or where a direction is called zero on a bound
    larger than ``sqrt(gap) rtol`` of the largest value (it may not be).

    >>> product_rank_decision(np.array([1.0, 1e-20]), 1e-16)
    (1, True)
    >>> product_rank_decision(np.array([1.0, 1e-20]), 1e-9)     # a bound as large as the tolerance
    (1, False)
    """
    r, decided = tol.rank(s, noise=noise)
    top = float(s[0]) if s.size else 0.0
    if 0 < top <= tol.gap * noise:
        decided = False
    if r < s.size and noise > tol.resolution * tol.rtol * top:
        decided = False
    return r, decided


def products_equal(A: np.ndarray, B: np.ndarray, C: np.ndarray, D: np.ndarray, tol: Tolerance = DEFAULT_TOLERANCE,
                   errors=(None, None, None, None)) -> Decision | None:
    r"""``A B^T = C D^T`` entry by entry, each judged at ``rtol`` of its own size.

    **Claim.** *holds*: every entry of the exact difference is within
    ``sqrt(gap) rtol`` of the larger of the two exact entries it compares;
    *fails*: some entry
    exceeds ``gap`` times that plus its error, so the exact products differ
    there (``detail["witness"]`` names the entry).

    **Proof.** ``R = fl(A B^T - C D^T)`` is formed correctly rounded as one sum
    (:func:`~allornone.numeric.witness.rounded_matmul`), so ``|R - R*| <= E``
    entrywise with ``E = u |R|`` plus underflow and declared input errors; the
    size ``s = max(|A B^T|, |C D^T|)`` of each entry is taken from the two
    products computed the same way, less their own error (a lower bound of the
    exact size). Each entry is then decided by :meth:`Tolerance.certain`,
    and the verdict is the conjunction. Every quantity is a quantity of the
    products, so no change of the factors that keeps them can move it.

    Returns None when a product is not formed (:data:`ROUNDED_LIMIT`).

    Examples
    --------
    >>> A = np.array([[1.0, 2.0]]); B = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> products_equal(A, B, 2 * A, B / 2).truth.value
    'holds'
    >>> products_equal(A, B, A, B + [[0.0, 0.0], [0.0, 1e-3]]).truth.value
    'fails'
    """
    from allornone.numeric.witness import rounded_matmul

    m, d1 = A.shape
    n = B.shape[0]
    if m * n * (d1 + C.shape[1]) > ROUNDED_LIMIT:
        return None
    EA, EB, EC, ED = errors
    # one power of two per context for both products, one per token: the claim
    # is unchanged, and no product overflows; a row that loses entries to
    # underflow on the way (a row spanning beyond binary64, or one far smaller
    # than its counterpart in the other product) costs each of its entries
    # what it may have lost (fl.underflow_loss: entries of at most one)
    ex = fl.largest_row_exponents([A, C], A.shape[0])
    ey = fl.largest_row_exponents([B, D], B.shape[0])
    orig = (A, B, C, D)
    A, C = scale_rows(A, ex), scale_rows(C, ex)
    B, D = scale_rows(B, ey), scale_rows(D, ey)
    kept = [fl.exact_rows(X0, X, e) for X0, X, e in zip(orig, (A, B, C, D), (ex, ey, ex, ey))]
    lost = fl.underflow_loss(d1, C.shape[1]) * ~((kept[0] & kept[2])[:, None] & (kept[1] & kept[3])[None, :])
    EA, EC = (None if X is None else scale_rows(X, ex) for X in (EA, EC))
    EB, ED = (None if X is None else scale_rows(X, ey) for X in (EB, ED))
    diff = rounded_matmul([(A, B.T), (-C, D.T)])
    extras = (_declared(A, B, EA, EB), _declared(C, D, EC, ED))
    left, right = _rounded_product(A, B, extra=extras[0]), _rounded_product(C, D, extra=extras[1])
    if diff is None or left is None or right is None:
        return None
    R, E = diff
    E = E + lost
    for extra in extras:
        if extra is not None:
            E = E + extra
    # each entry at its own size (a lower bound of the larger exact entry): a
    # log-odds is compared with itself, never with a larger one in its context
    size = np.maximum(np.maximum(np.abs(left[0]) - left[1], np.abs(right[0]) - right[1]) - lost, 0.0)
    lo = tol.resolution * tol.rtol * size - E
    hi = tol.gap * (tol.rtol * size + E)
    absR = np.abs(R)
    exact_zero = (absR == 0) & (E == 0)
    holds = bool(np.all(exact_zero | (absR <= lo)))
    over = absR > hi
    detail = {"route": "rounded"}
    if np.any(over):
        ratio = np.where(over, absR / np.maximum(hi, np.finfo(float).tiny), 0.0)
        x, y = map(int, np.unravel_index(int(np.argmax(ratio)), R.shape))
        detail["witness"] = (x, y)
        return _in_units(tol.certain(float(absR[x, y]), float(size[x, y]), float(E[x, y]), underflow=False,
                                     **detail), int(ex[x] + ey[y]))
    if holds:
        x, y = map(int, np.unravel_index(int(np.argmax(absR)), R.shape)) if absR.size else (0, 0)
        e = int(ex[x] + ey[y]) if absR.size else 0
        bounds = (float(lo[x, y]) if lo.size else 0.0, float(hi[x, y]) if hi.size else 0.0)
        return _in_units(Decision(Truth.HOLDS, float(absR[x, y]) if absR.size else 0.0, bounds, detail), e)
    x, y = map(int, np.unravel_index(int(np.argmax(np.where(exact_zero, -np.inf, absR - lo))), R.shape))
    return _in_units(tol.certain(float(absR[x, y]), float(size[x, y]), float(E[x, y]), underflow=False, **detail),
                     int(ex[x] + ey[y]))


def entry_ratios(diff: np.ndarray, nat: np.ndarray, err: np.ndarray, tol: Tolerance = DEFAULT_TOLERANCE):
    r"""The rule of :func:`products_equal` for entries computed elsewhere (the
    log-odds comparisons at vocabulary scale form their products a block at a
    time): ``diff = |L - L~|`` and ``nat = max(|L|, |L~|)`` as computed, ``err``
    an entrywise bound on how far either may be from its exact value (rounding,
    underflow and any declared input error, both models together).

    **Claim.** Where ``hold <= 1`` the exact entries are within ``sqrt(gap)
    rtol`` of the larger of them; where ``fail > gap`` they are more than
    ``gap rtol`` of it apart. **Proof.** The exact difference is at most
    ``diff + err`` and the larger exact entry at least ``nat - err``; the exact
    difference is at least ``diff - err`` and the larger exact entry at most
    ``nat + err``, and ``diff > gap (rtol nat + err)`` gives ``diff - err > gap
    rtol (nat + err)`` for ``rtol < 1 - 1/gap``. So a rounding bound never buys
    a "holds": where it is as large as the tolerance, the entry is neither.

    Returns ``(hold, fail, lo)``, ``lo`` the bound ``hold`` is measured against
    (an entry with ``diff = err = 0``, exactly equal by construction, has
    ``hold = 0``).

    >>> h, f, _ = entry_ratios(np.array([1e-7]), np.array([1.0]), np.array([5e-4]))
    >>> bool(h[0] > 1), bool(f[0] > Tolerance().gap)      # the bound hides the difference
    (True, False)
    >>> h, f, _ = entry_ratios(np.array([0.0]), np.array([1.0]), np.array([1e-15]))
    >>> bool(h[0] <= 1)
    True
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lo = np.maximum(nat - err, 0.0)
        lo *= tol.resolution * tol.rtol
        top = diff + err
        hold = np.divide(top, lo)
        hold[top == 0] = 0.0
        fail = diff / np.maximum(tol.rtol * nat + err, np.finfo(float).tiny)
    return hold, fail, lo


#: Of the entries a compensated sum leaves open, at most this many are recomputed
#: correctly rounded (``math.fsum`` per entry: about 0.2 ms each at d = 357).
ROUNDED_ENTRIES = 1 << 12
#: Entries recomputed at once (their rows gathered and scaled together).
RECOMPUTED_CHUNK = 1 << 13


def _live_terms(F: np.ndarray, G: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row ``i``, ``F[i]``, ``G[i]``, ``P[i]`` with zeros wherever the
    other side is zero in that coordinate (``F[i, j]`` where ``G[i, j]`` and
    ``P[i, j]`` both are): every product ``F[i, j] G[i, j]`` and ``F[i, j]
    P[i, j]`` is unchanged, and so is each sum of them, exactly."""
    used = (G != 0) | (P != 0)
    read = F != 0
    return np.where(used, F, 0.0), np.where(read, G, 0.0), np.where(read, P, 0.0)


def recomputed_entries(a: tuple, b: tuple, tol: Tolerance = DEFAULT_TOLERANCE, at: tuple | None = None):
    r"""Entries of ``L`` and ``L~`` recomputed from the models' numbers and
    judged by :func:`entry_ratios`: the primitive behind every entrywise
    ``L = L~`` that a dot-product bound leaves open.

    ``a = (F, G, P, input_error)``: per entry ``i`` the context's row ``F[i]``,
    the token's row ``G[i]`` and the pivot's row ``P[i]`` (``k x d`` arrays of
    the model's own numbers), and the relative error the model declares for
    them; ``b`` likewise. With ``at = (xs, ys)``, ``a`` holds the model's whole
    ``F`` and ``G`` and its pivot's row ``P`` instead, and entry ``i`` is
    ``(xs[i], ys[i])``: the rows are gathered a chunk of entries at a time
    (:data:`RECOMPUTED_CHUNK`), never all at once. Entry ``i`` of ``L`` is ``F[i]^T G[i] - F[i]^T
    P[i]``, formed as one sum of ``2d`` products.

    **Scaling.** First each entry keeps only the coordinates where both its
    sides are not zero (a term with a zero factor is an exact zero, so every
    value is unchanged): a coordinate one side does not read sets no scale.
    In each model, ``F[i]`` is then scaled by the power of two that
    brings its largest entry to ``[1/2, 1)``, and ``G[i]``, ``P[i]`` by one
    common power that does the same for the larger of them: no product leaves
    binary64, and two models in different units (``f -> 2^600 f``, ``g ->
    2^-600 g``) are each computed at their own size. A row that spans more
    than the binary64 range loses entries to underflow on the way; each lost
    entry is within the smallest subnormal of the row's unit
    (:func:`~allornone.numeric.linalg.scaled_with_error`), and moves the
    value only through its product with an entry that is not zero, by at most
    that much: the entry's bound gains ``2^-1074`` units per such product
    (:func:`_lost_terms`; a hidden coordinate of size ``2^1000`` beside a
    subnormal one, which no logit reads, costs nothing). Both values are then brought to the larger of the two units
    (that of a side which is exactly zero does not count), which loses at
    most ``2^-1074`` there, added to the bound where it happened.

    **Claim and proof.** Each value is first formed by Dot2
    (:func:`~allornone.numeric.linalg.compensated_dots`) with its proven bound;
    the entries that bound leaves open (terms that cancel by more than about
    ``1/(d u)``), at most :data:`ROUNDED_ENTRIES`, are formed correctly rounded
    (:func:`~allornone.numeric.linalg.rounded_dots`: half an ulp plus what
    underflow may lose). The error of an entry is the bound of each value,
    the scaling losses above, half an ulp of their difference and, where
    declared, ``2 input_error (|F[i]|^T |G[i]| + |F[i]|^T |P[i]|)``;
    :func:`entry_ratios` turns that into a certain "holds" or "fails" or
    neither.

    Returns ``(hold, diff, bound, fail, unit)``: arrays as
    :func:`entry_ratios`, ``diff = |L - L~|`` as computed, ``diff`` and
    ``bound`` in units of ``2^unit`` (per entry).

    >>> F = np.array([[2.0 ** 33, 1.0]]); G = np.array([[1.0, 1.0 - 2.0 ** 33]]); P = np.zeros((1, 2))
    >>> hold, diff, _, fail, unit = recomputed_entries((F, G, P, 0.0), (np.ones((1, 1)), np.array([[1 + 1e-7]]),
    ...                                                                  np.zeros((1, 1)), 0.0))
    >>> bool(fail[0] > DEFAULT_TOLERANCE.gap), float(np.ldexp(diff[0], unit[0]))
    (True, 1.0000000005838672e-07)
    >>> one = lambda e: np.array([[2.0 ** e]])
    >>> _, _, _, fail, _ = recomputed_entries((one(-600), one(600), one(0) * 0, 0.0),
    ...                                       (one(500), one(-499), one(0) * 0, 0.0))   # 1 against 2
    >>> bool(fail[0] > DEFAULT_TOLERANCE.gap)
    True
    """
    # (as float arrays once: a chunk gathers its rows from them)
    a, b = ((*(np.asarray(X, dtype=float) for X in side[:3]), side[3]) for side in (a, b))
    if at is None:
        count = a[0].shape[0]
    else:
        at = (np.asarray(at[0], dtype=int), np.asarray(at[1], dtype=int))
        count = at[0].size

    def scaled(idx):
        """Each side's rows of the entries ``idx``, scaled, and their common unit."""
        sides = []
        for F, G, P, ie in (a, b):
            if at is None:
                F, G, P = F[idx], G[idx], P[idx]
            else:
                F, G = F[at[0][idx]], G[at[1][idx]]
                P = np.broadcast_to(P.reshape(1, -1), G.shape)
            # a term with a zero factor is an exact zero, whatever the other
            # factor: each entry keeps only the coordinates both of its sides
            # use, so that a coordinate of 2^950 that the other side does not
            # read sets no scale (its product with 1 would underflow there)
            F, G, P = _live_terms(F, G, P)
            ex = row_exponents(F)
            ey = fl.largest_row_exponents([G, P], G.shape[0])
            # entries a row spanning beyond binary64 lost on the way (each at most
            # the smallest subnormal, against entries of at most one): each reaches
            # the value only through a product with an entry that is not zero
            (Fs, LF), (Gs, LG), (Ps, LP) = (fl.scaled_with_error(X, e) for X, e in ((F, ex), (G, ey), (P, ey)))
            zero = ~(np.any(F, axis=1) & (np.any(G, axis=1) | np.any(P, axis=1)))
            lost = 2.0 ** -1074 * (_lost_terms(F, LF, G, LG) + _lost_terms(F, LF, P, LP))
            sides.append((Fs, Gs, Ps, ie, ex + ey, zero, lost))
        (_, _, _, _, sa, za, _), (_, _, _, _, sb, zb, _) = sides
        # the common unit: the larger one, where both sides have a value of their own
        return sides, np.where(za, sb, np.where(zb, sa, np.maximum(sa, sb)))

    def judge(idx, dots):
        sides, unit = scaled(idx)
        vals, err = [], np.zeros(idx.size)
        for F, G, P, ie, s, _, lost in sides:
            out = dots([(F, G), (F, -P)])
            if out is None:
                return None
            v, e = out[0], out[1] + lost
            if ie:
                aF = np.abs(F)
                e = e + 2.02 * ie * (np.sum(aF * np.abs(G), axis=1) + np.sum(aF * np.abs(P), axis=1))
            # into the common unit (a shift down: exact unless it underflows,
            # the value then within 2^-1074 of its own and the bound rounded up)
            shift = s - unit
            vs, es = np.ldexp(v, shift), np.ldexp(e, shift)
            inexact = (np.ldexp(vs, -shift) != v) | (np.ldexp(es, -shift) != e)
            vals.append(vs)
            err += es + np.where(inexact, 2.0 * 2.0 ** -1074, 0.0)
        diff = np.abs(vals[0] - vals[1])
        err += 1.01 * UNIT_ROUNDOFF * diff
        hold, fail, lo = entry_ratios(diff, np.maximum(np.abs(vals[0]), np.abs(vals[1])), err, tol)
        return hold, diff, lo, fail, unit

    def rounded(pairs):
        out = fl.rounded_dots(pairs, per_row=True)
        return None if out is None else (out[0], UNIT_ROUNDOFF * np.abs(out[0]) + out[1])

    # a chunk of entries at a time: every array here is (entries x d), and
    # each entry is judged on its own rows, so the chunks change nothing but
    # the memory (2^18 gathered entries at d = 384 would be 0.8 GB an array)
    parts = []
    for lo in range(0, max(count, 1), RECOMPUTED_CHUNK):
        part = judge(np.arange(lo, min(count, lo + RECOMPUTED_CHUNK)), fl.compensated_dots)
        if part is None:
            return None
        parts.append(part)
    first = [np.concatenate(x) for x in zip(*parts)]
    again = np.flatnonzero((first[0] > 1) & (first[3] <= tol.gap))
    if 0 < again.size <= ROUNDED_ENTRIES:
        second = judge(again, rounded)
        if second is not None:
            for whole, part in zip(first[:4], second[:4]):
                whole[again] = part
    return tuple(first)


def _lost_terms(A: np.ndarray, LA, B: np.ndarray, LB) -> np.ndarray:
    """Per row the number of products ``A[i, j] B[i, j]`` that a scaling's loss
    (``LA``, ``LB``: :func:`~allornone.numeric.linalg.scaled_with_error`, None
    for none) can reach: a lost entry times a partner that is not zero, or
    lost itself. Each such product moves by at most the smallest subnormal
    (both scaled entries are at most one), so that count of them bounds what
    the losses move the dot product by; a lost entry beside an exact zero
    moves nothing."""
    hit = np.zeros(A.shape, dtype=bool)
    if LA is not None:
        hit |= (LA > 0) & ((B != 0) | (LB > 0 if LB is not None else False))
    if LB is not None:
        hit |= (LB > 0) & (A != 0)
    return np.count_nonzero(hit, axis=1).astype(float)


def consistent(AX: np.ndarray, BX: np.ndarray, AY: np.ndarray, BY: np.ndarray,
               tol: Tolerance = DEFAULT_TOLERANCE, input_error: float = 0.0, affine: bool = False) -> Decision | None:
    r"""Consistency of ``X Θ = Y`` for ``X = A_X B_X^T`` and ``Y = A_Y B_Y^T``
    (rows aligned): ``rank [X, Y] = rank X``. With ``affine``, of ``X Θ + 1 c^T
    = Y``: ``X`` with a constant column (an intercept) joined to it.

    **Claim.** *holds*: both ranks are decided (:func:`product_rank`) and
    equal, so every column of ``Y`` lies in the span of ``X``'s at the
    tolerance; *fails*: both decided and ``rank [X, Y]`` larger, so some column
    of ``Y`` is off that span by more than the rank bound; otherwise undecided.

    **Proof.** ``[X, Y] = [A_X, A_Y] blockdiag(B_X, B_Y)^T`` is itself a
    product; both ranks are those of products decided on their correctly
    rounded entries, so a change of the factors that keeps ``X`` and ``Y``
    cannot move them; ``input_error`` (a relative error declared for the
    factors' entries) enters both rank bounds. The ranks of an affine fit are
    those of :func:`affine_rank`. Returns None when a product is too large to
    be formed correctly rounded.

    >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]); B = np.eye(2)
    >>> consistent(A, B, A, np.array([[2.0, 3.0]])).truth.value
    'holds'
    >>> consistent(A, B, np.array([[0.0], [0.0], [1.0]]), np.array([[1.0]])).truth.value
    'fails'
    >>> consistent(A[:, :1], np.eye(1), np.array([[7.0], [5.0], [7.0]]), np.eye(1), affine=True).truth.value
    'holds'
    """
    B = np.zeros((BX.shape[0] + BY.shape[0], BX.shape[1] + BY.shape[1]))
    B[:BX.shape[0], :BX.shape[1]], B[BX.shape[0]:, BX.shape[1]:] = BX, BY
    A = np.hstack([AX, AY])
    if affine:
        rx = affine_rank(AX, BX, tol, input_error)
        rxy = None if rx is None else affine_rank(A, B, tol, input_error)
    else:
        rx = product_rank(AX, BX, _declared_factor(AX, input_error), _declared_factor(BX, input_error), tol=tol)
        rxy = product_rank(A, B, _declared_factor(A, input_error), _declared_factor(B, input_error), tol=tol)
    if rx is None or rxy is None:
        return None
    detail = {"ranks": (rx[0], rxy[0]), "route": "ranks of products"}
    # rank [X, Y] < rank X cannot hold exactly: the two products, equilibrated
    # each by its own rows, weigh a row differently, and neither rank is then
    # to be trusted against the other
    if not (rx[1] and rxy[1]) or rxy[0] < rx[0]:
        return Decision(Truth.UNDECIDED, 0.0, (0.0, 0.0), detail)
    return Decision(Truth.HOLDS if rx[0] == rxy[0] else Truth.FAILS, float(rxy[0] - rx[0]), (0.0, 0.0), detail)


def _declared_factor(X: np.ndarray, input_error: float) -> np.ndarray | None:
    """A relative error declared for the inputs, on every factor entry (a
    constant column carries none, so this only widens the bound)."""
    return input_error * np.abs(X) if input_error else None


def affine_rank(A: np.ndarray, B: np.ndarray, tol: Tolerance = DEFAULT_TOLERANCE,
                input_error: float = 0.0) -> tuple[int, bool, np.ndarray, float] | None:
    r"""``rank [A B^T, 1]``: a product with a constant column joined to it (the
    regressors of an affine fit), as :func:`product_rank` decides it.

    **Claim.** As :func:`product_rank`'s, for the matrix ``[X, 1]``, ``X = A
    B^T``; the singular values returned are those of the presentation that
    decided (and the count of those certainly nonzero is a lower bound of the
    rank).

    **Proof.** Subtracting row ``r`` of ``[X, 1]`` from every other row keeps
    its rank and leaves the constant column zero but in row ``r``, so
    ``rank [X, 1] = 1 + rank (X_{-r} - 1 x_r^T)``, and ``X_{-r} - 1 x_r^T =
    (A_{-r} - 1 a_r^T) B^T`` is a product whose first factor is known to the
    exact error of its subtractions (TwoSum) and any declared error. Both
    presentations decide the same rank, each soundly; the one that proves more
    singular values nonzero is kept (the constant column first: where both
    prove as many). The difference frees each row to be scaled by its own
    power of two: joined to a constant column, a row ``2^300`` larger than the
    others keeps them at ``2^-300`` of itself, and their differences, which
    carry the rank, below its rounding. Row ``r`` is the one nearest the
    coordinatewise median of ``A``'s rows (:func:`~allornone.numeric.linalg.central_token`),
    which a few rows far from the rest do not move. Rows of many sizes lose
    the small ones against any one row, so a third presentation takes each
    row less its neighbour in size (:func:`_by_size`): with ``C`` the
    differences of consecutive rows, ``[[C], [e_r^T]]`` is invertible and maps
    ``[X, 1]`` to ``[[C X, 0], [x_r, 1]]``, so ``rank [X, 1] = 1 + rank C X``
    again, and rows ``1`` and ``2`` beside rows ``2^400`` keep their difference.
    None when a product is too large to be formed correctly rounded.

    >>> A = np.array([[2.0 ** 300, 3 * 2.0 ** 300], [1.0, 2.0], [3.0, -1.0]])
    >>> affine_rank(A, np.eye(2))[:2]
    (3, True)
    """
    p, q = A.shape
    A1 = np.hstack([A, np.ones((p, 1))])
    B1 = np.zeros((B.shape[0] + 1, q + 1))
    B1[:-1, :-1], B1[-1, -1] = B, 1.0
    direct = product_rank(A1, B1, _declared_factor(A1, input_error), _declared_factor(B1, input_error), tol=tol)
    if p < 2:
        return direct
    r = fl.central_token(A)
    D, E = fl.subtract_with_error(np.delete(A, r, axis=0), A[r], input_error)
    other = product_rank(D, B, E if np.any(E) else None, _declared_factor(B, input_error), tol=tol)
    order = _by_size(A)
    C, EC = fl.subtract_with_error(A[order[1:]], A[order[:-1]], input_error)
    chained = product_rank(C, B, EC if np.any(EC) else None, _declared_factor(B, input_error), tol=tol)
    best = direct
    for diff in (other, chained):
        if diff is not None and (best is None or _proven(diff) + 1 > _proven(best)):
            best = (diff[0] + 1, diff[1], diff[2], diff[3])
    return best


def _by_size(A: np.ndarray) -> np.ndarray:
    """The rows of ``A`` in order of size (the exponent of each row's largest
    entry): neighbours in it are rows of one scale, whose difference keeps
    what a row far larger would round away."""
    return np.argsort(fl.row_exponents(A), kind="stable")


def _proven(rank) -> int:
    """How many singular values a :func:`product_rank` result proves nonzero."""
    return int(np.sum(np.asarray(rank[2]) > rank[3]))


def _in_units(d: Decision, e: int) -> Decision:
    """``d`` with its residual and bounds scaled back by ``2^e`` (the models' units)."""
    lo, hi = d.tolerance
    return Decision(d.truth, float(np.ldexp(d.residual, e)), (float(np.ldexp(lo, e)), float(np.ldexp(hi, e))),
                    d.detail)


def certified_nonzero(value: float, error: float) -> bool:
    """Whether a computed ``value`` known to within ``error`` is certainly not
    zero (``|value| > error``).

    >>> certified_nonzero(1e-300, 1e-310), certified_nonzero(1e-20, 1e-16)
    (True, False)
    """
    return bool(abs(value) > error >= 0) or (error == 0 and value != 0)


#: Entries (regressors plus targets) up to which :func:`exact_residual` solves
#: a fit in rational arithmetic.
EXACT_FIT_LIMIT = 1 << 13


def exact_residual(X: np.ndarray, Y: np.ndarray, limit: int = EXACT_FIT_LIMIT):
    r"""``(R, rel)``: the least-squares residual ``R = Y - P_X Y`` of the
    binary64 numbers ``X`` (``p x q``) and ``Y`` (``p x t``), each entry
    rounded once to binary64, and ``rel = |R|_F / |Y|_F`` (0 for ``Y = 0``)
    to within a few units in the last place; None beyond ``limit`` entries or
    where a number is not finite.

    **Claim.** ``P_X`` is the orthogonal projector onto the column space of
    ``X`` as given, so ``R`` is the residual of the best fit of every column
    of ``Y`` by the columns of ``X``, whatever their condition.

    **Proof.** Every binary64 number is a rational; FLINT's ``fmpq_mat``
    computes in rationals exactly: the reduced row echelon form of ``X``
    names a basis ``B`` of its columns, ``C = (B^T B)^{-1} B^T Y`` solves the
    normal equations (``B^T B`` is invertible for a basis), and ``R = Y - B C``.
    Only the conversions of ``R`` and of the ratio of the two exact sums of
    squares to binary64 round (and the square root).

    Used where a fit's targets carry an error of their own (a projection does
    not lengthen it) and its regressors none: a least-squares solve in
    floating point loses ``u`` times the regressors' condition, which a change
    of basis raises without bound while the column space, and the claim, stay.
    """
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0] or X.size + Y.size > limit:
        return None
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        return None
    try:
        import flint
    except ImportError:     # pragma: no cover - python-flint is a dependency
        return None
    from fractions import Fraction

    def q(A):
        return flint.fmpq_mat(A.shape[0], A.shape[1], [flint.fmpq(*float(x).as_integer_ratio()) for x in A.ravel()])

    p = X.shape[0]
    Xq, Yq = q(X), q(Y)
    E, r = Xq.rref()
    pivots, j = [], 0
    for i in range(r):
        while E[i, j] == 0:
            j += 1
        pivots.append(j)
        j += 1
    if r:
        B = flint.fmpq_mat(p, r, [Xq[i, c] for i in range(p) for c in pivots])
        Bt = B.transpose()
        Rq = Yq - B * (Bt * B).solve(Bt * Yq)
    else:
        Rq = Yq

    def sumsq(A):
        return sum((A[i, c] ** 2 for i in range(A.nrows()) for c in range(A.ncols())), flint.fmpq(0))

    def fraction(x):
        return Fraction(int(x.p), int(x.q))

    R = np.array([[float(fraction(Rq[i, c])) for c in range(Rq.ncols())] for i in range(p)]).reshape(Y.shape)
    y = sumsq(Yq)
    rel = 0.0 if y == 0 else math.sqrt(float(fraction(sumsq(Rq) / y)))
    return R, rel
