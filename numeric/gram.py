r"""Theorem 5 for two float models at the cost of their Gram products.

At vocabulary scale (``n`` tokens, ``n >> d + d~``) the float decision of
Theorem 5 is dominated by the ``n``-sized matrices ``G_0`` and ``G~_0``. This
route reads them twice, a block of tokens at a time (no ``n``-sized array is
formed), and solves everything else on ``(d + d~)``-sized matrices.

**Coordinates.** As in :func:`allornone.numeric.equivalence._scaled_pair`
(``own=True``): each model's ``G_0`` is scaled as a whole by its own power of
two, then every token ``y`` by one power of two common to both models, so
``X = [G_0, G~_0]`` (``n x D``, ``D = d + d~``) has rows of size about one and
a huge token cannot hide a small one; the relations of Theorem 5 are unchanged
(module docstring of :mod:`~allornone.numeric.equivalence`). The columns are
then scaled by powers of two to norm about one (``X_e = X 2^-c``), which
changes no rank and pairs a coordinate's size in ``f`` with its size in
``g_0``. Every scaling is exact. The data error ``E`` of ``X`` is the
subtraction's (at most ``u / (1 - u) |G_0|`` entrywise, standard model) plus
the declared input error; it is counted in every bound.

**Pass 1** accumulates ``H = X^T X`` block by block
(``|dH_ij| <= gamma_(b + nb + 1) |X_:i| |X_:j|``, ``b`` tokens per block, ``nb``
blocks: ``|dH| <= e_H = gamma sum_j |X_:j|^2`` in the scaled columns). For
each model's block of ``H``, and for all of it, the eigenvectors
``V = [V_1, V_2]`` are split at ``gap e_H``: on ``V_1`` the Gram is certain
(``|X V_1 c|^2 = c^T Lambda_1 c (1 +- delta)``, ``delta = e_H / lambda_r``);
``V_2`` is what a Gram cannot resolve (the null space and anything near it).

**Pass 2** measures ``Y_2 = X V_2`` directly, so nothing near zero is read off
a squared quantity: ``sigma_(r+1)(X) <= |Y_2|`` (interlacing), and ``span V_1``
is within ``|Y_2| / sigma_r`` of the row space (Wedin). The same pass forms
``C = X^T Y_2`` for each model, which says how much of the certain directions
the Gram's rounding carried into ``V_2``; the split is rotated by
``F = Lambda^-1 V_1^T C`` (:func:`_correct`), with
``|X V_2'|_F^2 <= |Y_2|_F^2 - |Lambda^(1/2) F|_F^2 + 2 |F| |dC| + e_H |F|^2`` and
no further pass. The joint ``V_2`` is re-split as ``[A, V_c]``: ``A`` the two
models' own (rotated) ``V_2``, ``V_c`` the rest -- directions shared by the two
models' column spaces, the part of Theorem 5 that couples them -- measured by
its own product (:func:`_refine`). The rounding of these products is taken at
the SVD backward-error level used everywhere else, ``4 sqrt(D) u |X|``
(``PRODUCT_BOUND = "worst-case"``: Higham's ``gamma_D |X|_F || |V_2| ||_2``).

What is decided from this:

* **ranks and row spaces** of ``G_0`` and ``G~_0``: rank ``r`` (the number of
  certain eigenvalues) when ``|X V_2'|`` is below the zero bound
  (:func:`~allornone.numeric.linalg.svd_noise`, the product's rounding and the
  data error) and ``sigma_r >= sqrt(lambda_r - e_H)`` is ``gap`` times above
  it; the row space ``V_1`` mapped back to the model's coordinates, with the
  sine bound ``(|X V_2'| + rounding + data) / sigma_r``. ``SF`` and ``SF~``
  (``m``-sized) as :func:`~allornone.numeric.linalg.data_row_space` computes them;
* ``k = rank L``: the singular values of ``R_F V_1 Lambda_1^(1/2)`` are those of
  ``L`` up to the factor ``sqrt(1 +- delta)`` and the absolute error
  ``|F| |X V_2'|`` plus the column-paired bound of
  :func:`~allornone.numeric.primitives.log_odds_rank`; where that does not decide,
  the cosines between ``SF`` and ``SG`` (as :func:`~allornone.numeric.model.float_structure`);
* ``L = L~``, **row by row** (a block of ``CONTEXT_BLOCK`` contexts at a
  time): row ``x`` of ``L - L~`` is ``X w_x``,
  ``w_x = [f(x); -f~(x)]`` (contexts scaled by common powers of two), and
  ``|X w| = sqrt(1 +- delta) |Lambda_1^(1/2) V_1^T w| +- |X V_2| |w|``. The
  tolerance of a row is ``rtol`` times the larger of its two rows of ``L``,
  plus the data error (column-paired, ``sum_j |w_j| |E_:j|``: the 2-norm over
  the tokens of the entrywise data term of
  :func:`~allornone.numeric.equivalence.same_distribution`), plus the route's
  own rounding (``gamma_D |Lambda^(1/2)| |V_1|^T |w|`` and the products').
  "Fails" when the lower end exceeds ``gap`` times it, "holds" when the upper
  end is below it. A row is coarser than the entrywise test of the QR route
  (by up to the square root of the number of tokens): a difference that the
  QR route just decides may be undecided here. A failing row's witness
  ``(x, y)`` is read off that row of ``L - L~``, computed (one ``n x d``
  product) with the entrywise bounds; the residual reported is then the
  largest difference in that row, otherwise the bound on ``|L - L~|`` in the
  row closest to its tolerance (with that tolerance, both at the scale of the
  row's largest token);
* EL1 and ``A*`` from ``F``, ``F~`` as in
  :func:`~allornone.numeric.equivalence.el_certificate`; ``B*`` and EL2 with
  ``R = Lambda_1^(1/2) V_1^T 2^c`` in place of the data (``X = Q R + Y_2 V_2^T 2^c``,
  ``Q^T Q = I +- delta``): ``B* = (R_a P_N)^T ((R_b P~)^T)^+`` is the canonical
  certificate (``Q`` cancels when EL2 is consistent), and EL2's residual
  ``|P_N G_0^T - B* P~ G~_0^T|_F`` is ``sqrt(1 +- delta) |P_N R_a^T - B* P~ R_b^T|_F``
  up to ``(1 + |B*|) |X V_2|``, judged against the 2-norm over the tokens of
  the column bounds of :func:`~allornone.numeric.equivalence._maps`; EL3 as before.

**Before every entry.** Where the rows leave ``L = L~`` undecided, the
columns of the ``WITNESS_TOKENS`` tokens with the largest rows of
``X_e V_c`` (the shared null directions, measured in pass 2: a token that one
model moved carries the move) are judged first by the entrywise test
(:func:`~allornone.numeric.equivalence.same_distribution_at_tokens`); an entry
beyond ``gap`` times its bound there is "fails" without the pass over every
entry. A row-level "holds", and everything else, goes to that pass
(:mod:`~allornone.numeric.logit_tiles`): a sound "holds" needs every logit
(docs/float-verdicts.md).

**When the route steps aside.** :func:`equivalence_parts` returns ``None`` --
and :func:`allornone.theorems.thm5.equivalence` runs the QR route -- when a
rank cannot be certified this way (``|X V_2'|`` above the zero bound: a
singular value between what the Gram resolves and the zero bound; or
``sigma_r`` within ``gap`` of it), when a structure is not decided, when a
modelling tolerance ``rank_rtol`` is set, or when scalings would leave the
range of binary64 (columns below ``2^-400``, models whose units differ by more
than ``2^900``). A decision whose interval straddles the band is undecided;
in the ``"auto"`` route an undecided ``L = L~`` or certificate is then
re-decided by the QR route.

**Cost.** ``n D^2`` for the Gram (one ``syrk`` per block), ``2 n (d p + d~ p~)``
for the models' own products (``p = d - rank G_0``) and ``2 n D q`` for the
shared directions (``q`` of them: ``k`` for two equivalent models), then
``(m + D) D^2``-sized dense work. ``LAST_TIMES`` holds the seconds per phase of
the last call.

**Switch.** ``ROUTE`` (module level) or the ``route`` argument: ``"auto"``
(the default: this route when ``n >= MIN_TOKENS`` and ``n >= 8 (d + d~)``),
``"gram"`` (always, for tests on small instances) or ``"qr"`` (never).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from allornone.decision import Decision, Truth
from allornone.numeric import equivalence as feq
from allornone.numeric import linalg as fl
from allornone.numeric import threads as th

__all__ = ["BLOCK", "LAST_TIMES", "MIN_TOKENS", "PRODUCT_BOUND", "ROUTE", "WITNESS_TOKENS", "equivalence_parts", "use_gram"]

#: ``"auto"``, ``"gram"`` or ``"qr"`` (module docstring).
ROUTE = "auto"
#: The automatic route takes the Gram products from this many tokens on.
MIN_TOKENS = 8192
#: The rounding of the product ``X V_2`` of pass 2: ``"realistic"`` (the
#: project's backward-error level ``4 sqrt(D) u |X|``, as for an SVD) or
#: ``"worst-case"`` (Higham's ``gamma_D |X|_F || |V_2| ||_2``).
PRODUCT_BOUND = "realistic"
#: Tokens per block of the two passes.
BLOCK = 4096
#: Contexts per block of the comparison of L and L~.
CONTEXT_BLOCK = 1024
# A column smaller than this (relative to its rows) would leave the range of
# binary64 when its Gram entries are formed.
_MIN_COL_EXP = -400

_U = fl.UNIT_ROUNDOFF


def _gamma(k: int) -> float:
    return k * _U / (1 - k * _U)


def use_gram(a, b, route: str | None = None) -> bool:
    """Whether the Gram route is taken for this pair."""
    route = ROUTE if route is None else route
    if route not in ("auto", "gram", "qr"):
        raise ValueError(f"route must be 'auto', 'gram' or 'qr', not {route!r}")
    if route != "auto":
        return route == "gram"
    return a.n >= MIN_TOKENS and a.n >= 8 * (a.d + b.d)


# -- the two passes ----------------------------------------------------------------

def _g0_exponent(G: np.ndarray, pivot: int) -> int:
    """``fl._exponent(G - g(y_0))`` without forming ``G_0`` (rounding is monotone,
    so ``max_y fl(G_yj - g_j) = fl(max_y G_yj - g_j)``)."""
    g = G[pivot]
    hi = np.max(G, axis=0) - g
    lo = g - np.min(G, axis=0)
    top = float(max(hi.max(), lo.max())) if G.size else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0


def _pow2_scale(X: np.ndarray, e) -> np.ndarray:
    """``X 2^e`` (``e`` broadcasts against ``X``), exact: a multiplication by
    powers of two where they are within range (much faster than ``ldexp``)."""
    e = np.asarray(e)
    if e.size == 0 or (int(np.max(e)) < 1000 and int(np.min(e)) > -1000):
        return X * np.ldexp(1.0, e)
    return np.ldexp(X, e)


def _row_top(X: np.ndarray) -> np.ndarray:
    """``max |X[i]|`` per row, without an array-sized temporary."""
    if X.shape[1] == 0:
        return np.zeros(X.shape[0])
    return np.maximum(X.max(axis=1), -X.min(axis=1))


def _token_exponents(Ga: np.ndarray, Gb: np.ndarray, Ea: int, Eb: int) -> np.ndarray:
    """Per token the larger row exponent of ``G_0 2^-Ea`` and ``G~_0 2^-Eb`` (as
    :func:`~allornone.numeric.equivalence._common_exponents`: a row that is zero
    in one model takes the other's)."""
    ta, tb = _row_top(Ga), _row_top(Gb)
    ra = np.frexp(ta)[1] - Ea
    rb = np.frexp(tb)[1] - Eb
    za, zb = ta == 0, tb == 0
    ra, rb = np.where(za, rb, ra), np.where(zb, ra, rb)
    return np.maximum(ra, rb).astype(int)


def _blocks(a, b, Ea: int, Eb: int, work, ey_all: np.ndarray | None = None):
    """``work(i, e_y, X, Isq)`` on every block of the scaled ``X = [G_0, G~_0]``,
    its results yielded in the blocks' order; ``Isq``: per column, the sum over
    the block of the squared declared input error ``input_error (|g(y)| +
    |g(y_0)|)`` (None when no model declares one; the subtraction's own error,
    at most ``u / (1 - u) |G_0|``, is added from the column norms by
    :func:`_factor`). With ``ey_all`` (the token exponents of a first pass) only
    ``X`` is formed. The blocks run on threads (:mod:`~allornone.numeric.threads`);
    the callers fold the results in order, as one pass would."""
    return th.run_in_order(lambda i: work(*_block_at(a, b, Ea, Eb, i, ey_all)), range(0, a.n, BLOCK))


def _block_at(a, b, Ea: int, Eb: int, i: int, ey_all: np.ndarray | None):
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    d, D = a.d, a.d + b.d
    Ga, Gb = a.G[i:i + BLOCK], b.G[i:i + BLOCK]
    X = np.empty((Ga.shape[0], D))
    np.subtract(Ga, ga, out=X[:, :d])
    np.subtract(Gb, gb, out=X[:, d:])
    if ey_all is None:
        ey = _token_exponents(X[:, :d], X[:, d:], Ea, Eb)
    else:
        ey = ey_all[i:i + BLOCK]
    ta, tb = -ey - Ea, -ey - Eb
    if np.all(np.abs(ta) < 1000) and np.all(np.abs(tb) < 1000):
        # multiplying by a power of two is exact (and much faster than ldexp)
        X[:, :d] *= np.ldexp(1.0, ta)[:, None]
        X[:, d:] *= np.ldexp(1.0, tb)[:, None]
    else:
        X[:, :d] = np.ldexp(X[:, :d], ta[:, None])
        X[:, d:] = np.ldexp(X[:, d:], tb[:, None])
    Isq = None
    if ey_all is None and (a.input_error or b.input_error):
        Isq = np.zeros(D)
        for M, g, ie, t, cols in ((Ga, ga, a.input_error, ta, slice(0, d)),
                                  (Gb, gb, b.input_error, tb, slice(d, D))):
            if ie:
                In = np.ldexp(ie * (np.abs(M) + np.abs(g)), t[:, None])
                Isq[cols] = np.einsum("ij,ij->j", In, In)
    return i, ey, X, Isq


@dataclass
class _Split:
    """Eigen-split of the (equilibrated) Gram of some columns ``J`` of ``X``."""

    J: np.ndarray        # columns with a non-zero entry
    lam: np.ndarray      # certain eigenvalues, descending
    V1: np.ndarray       # |J| x r
    V2: np.ndarray       # |J| x p
    eH: float            # bound on |dH|_2
    top: float           # largest eigenvalue
    fro: float           # |X_e[:, J]|_F
    y2: float = 0.0      # |X_e[:, J] V_2|_F, computed (pass 2)
    products: int = 1    # number of products pass 2 formed for V_2
    @property
    def r(self) -> int:
        return self.lam.size

    @property
    def delta(self) -> float:
        """``|X V_1 c|^2 = c^T Lambda_1 c (1 +- delta)``."""
        return (self.eH / self.lam[-1] if self.r else 0.0) + 4 * self.J.size * _U

    def rounding(self) -> float:
        """A bound on the rounding of the computed ``X_e[:, J] V_2`` (module
        docstring, ``PRODUCT_BOUND``)."""
        if not self.V2.shape[1]:
            return 0.0
        if PRODUCT_BOUND == "worst-case":
            return _gamma(self.J.size) * self.fro * fl.norm2(np.abs(self.V2))
        return self.products * fl.svd_noise(self.J.size, math.sqrt(self.top + self.eH))

    def residual(self) -> float:
        """A bound on ``|X_e[:, J] V_2|_2`` of the computed data: the measured
        Frobenius norm plus the product's rounding."""
        return self.y2 + self.rounding()


def _sub(H: np.ndarray, J: np.ndarray) -> np.ndarray:
    """``H[J][:, J]``, without a copy when ``J`` is every index."""
    return H if J.size == H.shape[0] else H[np.ix_(J, J)]


def _split(H: np.ndarray, colsq: np.ndarray, nz: np.ndarray, nblocks: int, tol) -> _Split:
    J = np.flatnonzero(nz)
    if J.size == 0:
        z = np.zeros((0, 0))
        return _Split(J, np.zeros(0), z, z, 0.0, 0.0, 0.0)
    lam, V = np.linalg.eigh(_sub(H, J))
    top = max(float(lam[-1]), 0.0)
    fro2 = float(colsq[J].sum())
    eH = _gamma(BLOCK + nblocks + 1) * fro2 + J.size * _U * top
    keep = lam > tol.gap * eH
    return _Split(J, lam[keep][::-1].copy(), V[:, keep][:, ::-1].copy(), V[:, ~keep].copy(), eH, top,
                  math.sqrt(fro2))


def _refine(joint: _Split, spa: _Split, spb: _Split, He: np.ndarray, d: int, tol, dry: bool = False,
            cross: np.ndarray | None = None):
    """Re-split the joint Gram so that its ``V_2`` is ``[A, V_c]`` with ``A`` the
    two models' own ``V_2`` (embedded; measured by their own products) and
    ``V_c`` the rest of the joint estimate, orthonormal to ``A``; ``V_1`` is the
    complement, diagonalised again (``V_1^T H V_1 = Lambda``).

    ``dry``: only return ``V_c`` (to be measured), or ``None`` when the joint
    estimate does not contain ``A`` clearly (then the whole joint ``V_2`` is
    measured and nothing is re-split). With ``cross`` (the measured ``V_c``,
    whose measured norm is in ``joint.y2``): re-split with the models' final
    (rotated, :func:`_correct`) ``V_2``, ``V_c`` re-orthogonalised against them
    and ``joint.y2`` updated to bound the new ``|X_e V_c|``."""
    pa, pb = spa.V2.shape[1], spb.V2.shape[1]
    p = joint.V2.shape[1]
    if pa + pb == 0 or p < pa + pb:
        return None
    pos = np.full(He.shape[0], -1)
    pos[joint.J] = np.arange(joint.J.size)
    A = np.zeros((joint.J.size, pa + pb))
    A[pos[spa.J], :pa] = spa.V2
    A[pos[d + spb.J], pa:] = spb.V2
    if cross is None:
        M = joint.V2.T @ A
        if np.linalg.svd(M, compute_uv=False).min() < 0.5:
            return None
        Qm = np.linalg.qr(M, mode="complete")[0]
        Vc = joint.V2 @ Qm[:, pa + pb:]
        if dry:
            return Vc
    else:
        # re-orthogonalise the measured V_c against the models' rotated V_2:
        # |X_e V_c'| <= (|X_e V_c| + |X_e A| |A^T V_c|) / sqrt(1 - |A^T V_c|^2)
        sA = fl.norm2(A.T @ cross)
        if sA >= 0.5:
            raise _Uncertifiable("the models' rotated null spaces left the joint one")
        Vc = np.linalg.qr(cross - A @ (A.T @ cross))[0]
        joint.y2 = (joint.y2 + math.hypot(spa.y2, spb.y2) * sA) / math.sqrt(1 - sA * sA)
    V2 = np.hstack([A, Vc])
    V1 = joint.V1 - V2 @ (V2.T @ joint.V1)
    V1 = np.linalg.qr(V1)[0]
    HJ = _sub(He, joint.J)
    lam, Q = np.linalg.eigh(V1.T @ HJ @ V1)
    if lam.size and lam[0] <= tol.gap * joint.eH:
        raise _Uncertifiable("the joint split is not clear of the Gram's rounding")
    joint.V1, joint.lam, joint.V2 = V1 @ Q[:, ::-1], lam[::-1].copy(), V2
    return Vc


def _correct(sp: _Split, C: np.ndarray, Hs: np.ndarray, gC: float, tol) -> None:
    """Rotate a model's split by what pass 2 measured. The Gram's eigenvectors
    carry about ``e_H / lambda`` of the certain directions into ``V_2``;
    ``C = X_e^T Y_2`` tells how much: with ``F = Lambda^-1 V_1^T C`` the rotated
    ``V_2' = V_2 - V_1 F`` (``V_1' = V_1 + V_2 F^T``, orthogonal to it) has
    ``|X_e V_2'|_F^2 <= |Y_2|_F^2 - |Lambda^(1/2) F|_F^2 + 2 |F| |dC| + e_H |F|^2``
    (``B = X_e V_1``: ``B^T Y_2 = V_1^T C`` up to ``dC``, ``B^T B = Lambda +- e_H``),
    with no further pass. ``V_1'`` is re-diagonalised (``V_1'^T H V_1' = Lambda'``)."""
    if not sp.r or not sp.V2.shape[1]:
        return
    sq = np.sqrt(sp.lam)
    Fm = (sp.V1.T @ C) / sp.lam[:, None]
    nF = float(np.linalg.norm(Fm))
    t = float(np.linalg.norm(Fm * sq[:, None])) ** 2 * (1 - 4 * sp.J.size * _U)
    dC = gC * sp.fro * sp.y2
    y2 = math.sqrt(max(sp.y2 ** 2 - t + 2 * nF * dC + sp.eH * nF * nF, 0.0)) + 4 * sp.J.size * _U * sp.y2
    if not y2 < sp.y2:
        return
    N2 = np.linalg.qr(sp.V2 - sp.V1 @ Fm)[0]
    N1 = np.linalg.qr(sp.V1 + sp.V2 @ Fm.T)[0]
    HJ = _sub(Hs, sp.J)
    lam, Q = np.linalg.eigh(N1.T @ HJ @ N1)
    if lam[0] <= tol.gap * sp.eH:
        return
    sp.V1, sp.lam, sp.V2, sp.y2 = N1 @ Q[:, ::-1], lam[::-1].copy(), N2, y2


def _f_side(F: np.ndarray, ie: float, tol):
    """:func:`~allornone.numeric.linalg.data_row_space` of ``F`` (``m x d``), computed
    from the triangular factor of ``F`` with its rows scaled, which is kept for
    the logit rank: ``(B_F, decided, error, F_r, R_F)``. Scaling columns by powers
    of two commutes with Householder QR, so the factor of the equilibrated
    ``F_r 2^-c`` is ``R_F 2^-c``."""
    m, d = F.shape
    Fr = fl.scale_rows(F, fl.row_exponents(F))
    RF = fl._r_factor(Fr)
    ecF = fl.row_exponents(Fr.T)
    data_err = ie * float(np.linalg.norm(np.ldexp(np.abs(Fr), -ecF[None, :]))) if ie else 0.0
    _, sv, vt = fl._svd(np.ldexp(RF, -ecF[None, :]))
    noise = fl.svd_noise(max(m, d), sv[0] if sv.size else 0.0) + data_err
    r, decided = tol.rank(sv, noise=noise)
    if r == d:
        return np.eye(d), decided, 0.0, Fr, RF
    if r == 0:
        return np.zeros((0, d)), decided, 0.0, Fr, RF
    err = noise / sv[r - 1]
    B = np.ldexp(vt[:r], ecF[None, :])
    B[:, ~np.any(F, axis=0)] = 0.0
    return fl._graded_orthonormal_rows(B), decided, float(err + 8 * math.sqrt(d) * _U), Fr, RF


class _Uncertifiable(Exception):
    """The Gram route cannot certify a decision: the QR route takes over."""


def _structure(model, sp: _Split, ec: np.ndarray, colsq_e: np.ndarray, errsq_e: np.ndarray, n: int, tol):
    """The float structure of one model from its block of the pass-1 Gram and
    its pass-2 residual (module docstring); raises :class:`_Uncertifiable`."""
    from allornone.numeric.model import assemble_structure

    d = model.d
    BF, dF, eF, Fr, RF = _f_side(model.F, model.input_error, tol)
    data = math.sqrt(float(errsq_e.sum()))
    res = sp.residual()
    noise = fl.svd_noise(max(n, d), math.sqrt(sp.top)) + data + (res - sp.y2)
    if sp.y2 > noise:
        raise _Uncertifiable("a singular value of G_0 is neither certainly zero nor certain")
    r = sp.r
    smin = math.sqrt(max(float(sp.lam[-1]) - sp.eH, 0.0)) if r else np.inf
    if r and smin <= tol.gap * noise:
        raise _Uncertifiable("the smallest kept singular value of G_0 is within gap of the zero bound")
    if r == d:
        BG, eG = np.eye(d), 0.0
    elif r == 0:
        BG, eG = np.zeros((0, d)), 0.0
    else:
        B = np.zeros((r, d))
        B[:, sp.J] = np.ldexp(sp.V1.T, ec[sp.J][None, :])
        BG = fl._graded_orthonormal_rows(B)
        eG = float((res + data) / smin + 8 * math.sqrt(d) * _U)
    # k = rank L from R_F V_1 Lambda_1^(1/2): L = (F_r 2^c) X_e^T (rows of F scaled;
    # R_F 2^c is the triangular factor of F_r 2^c)
    m = Fr.shape[0]
    if r == 0:
        st = assemble_structure(BF, dF, eF, BG, True, eG, 0, True, 0.0, d, tol)
        if not st.decided:
            raise _Uncertifiable("the structure is not decided on the Gram route")
        return st
    Re = np.ldexp(RF, ec[None, :])
    s = np.linalg.svd(Re[:, sp.J] @ (sp.V1 * np.sqrt(sp.lam)), compute_uv=False)
    pair = float(np.sum(np.ldexp(np.linalg.norm(Fr[:, sp.J], axis=0), ec[sp.J]) * np.sqrt(colsq_e[sp.J])))
    # |F_r 2^c|_2 <= its Frobenius norm (that of R_F 2^c)
    e_abs = (8.0 * math.sqrt(max(m, n, d)) * _U * pair + float(np.linalg.norm(Re[:, sp.J])) * res
             + float(np.linalg.norm(Re)) * data)
    noise_L = e_abs / math.sqrt(max(1.0 - sp.delta, 0.5))
    k, dk = tol.rank(s, noise=noise_L)
    if s.size and 0 < s[0] <= tol.gap * noise_L:
        dk = False
    # undecided on the logits: assemble_structure reads k off the cosines between
    # SF and SG, as float_structure does
    st = assemble_structure(BF, dF, eF, BG, True, eG, k, dk, noise_L, d, tol)
    if not st.decided:
        raise _Uncertifiable("the structure is not decided on the Gram route")
    return st


def _cols(J: np.ndarray, lo: int, hi: int):
    """Columns ``lo + J`` of a block: a slice (no copy) when they are all of ``lo:hi``."""
    return slice(lo, hi) if J.size == hi - lo else lo + J


# -- the pair ---------------------------------------------------------------------------

@dataclass
class _Pair:
    Ea: int
    Eb: int
    ec: np.ndarray
    colsq: np.ndarray     # |X_e[:, j]|^2
    errsq: np.ndarray     # |E_e[:, j]|^2
    joint: _Split
    sa: object
    sb: object
    n: int
    ey_max: int
    spa: _Split
    spb: _Split
    cross_sq: np.ndarray   # per token |row of X_e V_c|^2 (pass 2)


def _factor(a, b, tol) -> _Pair:
    d, D, n = a.d, a.d + b.d, a.n
    clock = _Clock()
    Ea = _g0_exponent(a.G, a.pivot)
    Eb = _g0_exponent(b.G, b.pivot)
    H = np.zeros((D, D))
    colsq, errsq = np.zeros(D), np.zeros(D)
    ey_all = np.empty(n, dtype=int)
    nblocks = 0
    inputs = False
    # each block's Gram on its own, added in the blocks' order (as one pass would)
    for i, ey, XtX, Isq in _blocks(a, b, Ea, Eb, lambda i, ey, X, Isq: (i, ey, X.T @ X, Isq)):
        ey_all[i:i + ey.size] = ey
        H += XtX
        if Isq is not None:
            errsq += Isq
            inputs = True
        nblocks += 1
    colsq = np.diag(H) * (1 + _gamma(BLOCK + nblocks + 1))   # upper bounds on the sums of squares
    # the subtraction errs by at most u/(1-u) |G_0| (standard model), the input by
    # input_error (|g(y)| + |g(y_0)|); (x + y)^2 <= 2 x^2 + 2 y^2
    uu = (_U / (1 - _U)) ** 2
    errsq = 2 * uu * colsq + 2 * errsq if inputs else uu * colsq
    ey_max = int(ey_all.max())
    nz = colsq > 0
    # columns scaled to norm about one (any power of two is exact)
    ec = np.where(nz, np.frexp(np.sqrt(colsq))[1], 0).astype(int)
    if np.any(ec[nz] < _MIN_COL_EXP):
        raise _Uncertifiable("a coordinate is too small relative to its tokens for a Gram")
    s = np.ldexp(1.0, -ec)
    He = H * s[:, None] * s[None, :]
    colsq_e, errsq_e = colsq * s ** 2, errsq * s ** 2
    del H
    ia, ib = np.arange(d), np.arange(d, D)
    clock("pass 1: Gram of [G_0, G~_0]")
    # three independent eigen-decompositions: side by side where there are threads
    spa, spb, joint = th.side_by_side(lambda: _split(He[:d, :d], colsq_e[ia], nz[ia], nblocks, tol),
                                      lambda: _split(He[d:, d:], colsq_e[ib], nz[ib], nblocks, tol),
                                      lambda: _split(He, colsq_e, nz, nblocks, tol))
    # The joint null estimate contains the two models' own ((V_2a; 0), (0; V_2b))
    # up to the Gram's accuracy: those are measured by the models' own products,
    # and only the rest ("cross") by a joint product. (The models' own V_2 are
    # rotated after pass 2; the joint split is re-done then, see below.)
    cross = _refine(joint, spa, spb, He, d, tol, dry=True)
    clock("eigen-splits")
    # pass 2: Y_2 = X_e V_2 (2^-c folded into V_2: exact), and C = X_e^T Y_2
    V2a = np.ldexp(spa.V2, -ec[ia][spa.J][:, None])
    V2b = np.ldexp(spb.V2, -ec[ib][spb.J][:, None])
    V2j = np.ldexp(joint.V2 if cross is None else cross, -ec[joint.J][:, None])
    Ja, Jb, Jj = _cols(spa.J, 0, d), _cols(spb.J, d, D), _cols(joint.J, 0, D)
    ya = yb = yj = 0.0
    Ca, Cb = np.zeros((spa.J.size, V2a.shape[1])), np.zeros((spb.J.size, V2b.shape[1]))
    # per token, what it carries of the shared null directions: where two
    # models that differ differ (the tokens checked first for a witness)
    cross_sq = np.zeros(n)

    def products(i, _, X, __):
        out = [i, None, None, None]
        for k, (J, V2) in enumerate(((Ja, V2a), (Jb, V2b))):
            if V2.shape[1]:
                Y = X[:, J] @ V2
                out[k + 1] = (float(np.einsum("ij,ij->", Y, Y)), X[:, J].T @ Y)
        if V2j.shape[1]:
            Y = X[:, Jj] @ V2j
            out[3] = np.einsum("ij,ij->i", Y, Y)
        return out

    for i, pa, pb, t in _blocks(a, b, Ea, Eb, products, ey_all):
        if pa is not None:
            ya += pa[0]
            Ca += pa[1]
        if pb is not None:
            yb += pb[0]
            Cb += pb[1]
        if t is not None:
            yj += float(t.sum())
            cross_sq[i:i + t.size] = t
    # the sums of squares are accurate to gamma relatively: upper bounds
    grow = 1 + _gamma(BLOCK + nblocks + 1)
    spa.y2, spb.y2, joint.y2 = (math.sqrt(v * grow) for v in (ya, yb, yj))
    # C = X_e^T Y_2 (the 2^c of X undone: X = X_e 2^c); rotate each model's split
    clock("pass 2: products with V_2")
    gC = _gamma(BLOCK + nblocks + 1)
    _correct(spa, np.ldexp(Ca, -ec[ia][spa.J][:, None]), He[:d, :d], gC, tol)
    _correct(spb, np.ldexp(Cb, -ec[ib][spb.J][:, None]), He[d:, d:], gC, tol)
    if cross is not None:
        # the joint V_2 is [A, V_c] with A the models' own (rotated) V_2 and V_c
        # measured: |X_e [A, V_c] c| <= (|Y_a|^2 + |Y_b|^2 + |Y_c|^2)^(1/2) |c|
        _refine(joint, spa, spb, He, d, tol, cross=cross)
        joint.y2 = math.sqrt(spa.y2 ** 2 + spb.y2 ** 2 + joint.y2 ** 2)
        joint.products = 3
    clock("eigen-splits")
    sa, sb = th.side_by_side(lambda: _structure(a, spa, ec[ia], colsq_e[ia], errsq_e[ia], n, tol),
                             lambda: _structure(b, spb, ec[ib], colsq_e[ib], errsq_e[ib], n, tol))
    clock("structures (F sides, k, M, N)")
    return _Pair(Ea, Eb, ec, colsq_e, errsq_e, joint, sa, sb, n, ey_max, spa, spb, cross_sq)


# -- L = L~ -------------------------------------------------------------------------------

def _same_distribution(a, b, P: _Pair, tol) -> Decision:
    eFa, eFb = fl._exponent(a.F), fl._exponent(b.F)
    sa_, sb_ = eFa + P.Ea, eFb + P.Eb
    s = max(sa_, sb_)
    if min(sa_, sb_) - s < -900:
        raise _Uncertifiable("the two models' units differ beyond the range of binary64")
    # (the whole scaling is applied with each row's own, in one step, in _rows)
    wa, wb = sa_ - s - eFa, sb_ - s - eFb
    Fa, Fb = a.F, b.F
    ex = feq._common_exponents(Fa, Fb, -wa, -wb)
    m = Fa.shape[0]
    hi, lo, b_hold, b_fail = (np.empty(m) for _ in range(4))
    for i in range(0, m, CONTEXT_BLOCK):
        j = min(m, i + CONTEXT_BLOCK)
        hi[i:j], lo[i:j], b_hold[i:j], b_fail[i:j] = _rows(a, b, P, Fa[i:j], Fb[i:j], ex[i:j], tol, wa, wb)
    del Fa, Fb
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(hi) & np.isfinite(b_fail)
        fail = finite & (lo > tol.gap * b_fail)
        hold = finite & (hi <= b_hold)
    scale_x = ex + s + P.ey_max
    if np.any(fail):
        x = int(np.argmax(np.where(fail, lo / b_fail, -np.inf)))
        y, res, bound = _witness_in_row(a, b, x)
        return Decision(Truth.FAILS, res, (bound, tol.gap * bound), {"witness": (x, y), "route": "gram"})
    # reported: the row closest to (or beyond) its bound, its bound on |L - L~|
    # and its tolerance, both at the scale of that row's largest token
    truth = Truth.HOLDS if np.all(hold) else Truth.UNDECIDED
    if not hi.size:
        return Decision(truth, 0.0, tol.bounds(0.0), {"route": "gram"})
    with np.errstate(over="ignore", invalid="ignore"):
        j = int(np.argmax(np.where(np.isfinite(hi / b_hold), hi / b_hold, np.inf)))
        res = float(np.ldexp(hi[j], int(scale_x[j])))
        lo_b = float(np.ldexp(b_hold[j], int(scale_x[j])))
    return Decision(truth, res, (lo_b, tol.gap * lo_b), {"route": "gram"})


def _rows(a, b, P: _Pair, Fa, Fb, ex, tol, wa: int = 0, wb: int = 0):
    """For a block of contexts (``Fa 2^wa``, ``Fb 2^wb``): the bounds
    ``lo <= |X w| <= hi`` on the rows of ``L - L~`` and their tolerances for
    "holds" and for "fails"."""
    d = a.d
    # rows w_x (X w_x = row x of L - L~), columns equilibrated: X w = X_e (w 2^c)
    Wf = np.empty((Fa.shape[0], P.ec.size))
    Wf[:, :d] = _pow2_scale(Fa, wa - ex[:, None] + P.ec[None, :d])
    Wf[:, d:] = _pow2_scale(Fb, wb - ex[:, None] + P.ec[None, d:])
    Wf[:, d:] *= -1.0
    sp = P.joint
    J = sp.J
    We = Wf if J.size == Wf.shape[1] else Wf[:, J]
    Wa = np.abs(Wf)
    WaJ = Wa if J.size == Wf.shape[1] else Wa[:, J]
    sq = np.sqrt(sp.lam)
    main = np.linalg.norm((We @ sp.V1) * sq, axis=1) if sp.r else np.zeros(Wf.shape[0])
    rnd = _gamma(J.size) * np.linalg.norm((WaJ @ np.abs(sp.V1)) * sq, axis=1) if sp.r else 0.0
    wn = np.linalg.norm(We, axis=1)
    # measured: |X w| in [lo, hi] up to the route's own rounding e_route
    hi = math.sqrt(1 + sp.delta) * main + sp.y2 * wn
    lo = math.sqrt(max(1 - sp.delta, 0.0)) * main - sp.y2 * wn
    e_route = rnd + sp.rounding() * wn
    # the tolerance: rtol times the rows of L and L~, the error of the data
    # (subtractions, declared input error: 2-norm over the tokens of the
    # entrywise bound of same_distribution, column-paired) and e_route
    enorm = np.sqrt(P.errsq)
    cnorm = np.zeros(Wf.shape[1])
    cnorm[J] = np.sqrt(P.colsq[J])
    rnd_bound = Wa @ enorm + e_route
    if a.input_error or b.input_error:
        rnd_bound += 2 * (a.input_error * (Wa[:, :d] @ cnorm[:d]) + b.input_error * (Wa[:, d:] @ cnorm[d:]))
    del Wa, WaJ
    # rows of L and L~ from each model's own split
    lo_a, hi_a = _row_norms(Wf[:, :d], P.spa)
    lo_b, hi_b = _row_norms(Wf[:, d:], P.spb)
    nat_lo, nat_hi = np.maximum(lo_a, lo_b), hi_a + hi_b
    tiny = np.finfo(float).tiny
    return hi, lo, np.maximum(tol.rtol * nat_lo + rnd_bound, tiny), np.maximum(tol.rtol * nat_hi + rnd_bound, tiny)


def _row_norms(Wc: np.ndarray, sp: _Split):
    """Lower and upper bounds on ``|X_e w|`` for every row ``w`` of ``Wc`` (the
    columns of one model, equilibrated), from that model's split:
    ``|X_e V_1 c|^2 = c^T Lambda c (1 +- delta)``, ``|X_e V_2| <= |Y_2|`` and the
    rounding of ``V_1^T w`` (``gamma |Lambda^(1/2)| || |V_1| ||_2 |w|``)."""
    W = Wc if sp.J.size == Wc.shape[1] else Wc[:, sp.J]
    wn = np.linalg.norm(W, axis=1)
    if not sp.r:
        return np.zeros(W.shape[0]), sp.residual() * wn
    main = np.linalg.norm((W @ sp.V1) * np.sqrt(sp.lam), axis=1)
    # || |V_1| ||_2 <= |V_1|_F = sqrt(r)
    rnd = _gamma(sp.J.size) * math.sqrt(sp.lam[0] * sp.r) * wn
    eps = sp.residual()
    lo = np.maximum(math.sqrt(max(1 - sp.delta, 0.0)) * main - rnd - eps * wn, 0.0)
    return lo, math.sqrt(1 + sp.delta) * main + rnd + eps * wn


def _witness_in_row(a, b, x: int):
    """Row ``x`` of ``L - L~``, computed a block of tokens at a time with the
    entrywise bounds of :func:`~allornone.numeric.equivalence.same_distribution`:
    the token whose difference is largest relative to its bound, the largest
    difference in the row and the bound at the witness."""
    tol = a.backend.tolerance
    fa, fb = a.F[x:x + 1], b.F[x:x + 1]
    ex = feq._common_exponents(fa, fb)
    fa, fb = fl.scale_rows(fa, ex)[0], fl.scale_rows(fb, ex)[0]
    ca, cb = _U * (a.d + 2) + 2 * a.input_error, _U * (b.d + 2) + 2 * b.input_error
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    best = (-1.0, 0, 0.0)
    top = 0.0
    for i in range(0, a.n, BLOCK):
        G0a, E0a = fl.subtract_with_error(a.G[i:i + BLOCK], ga, a.input_error)
        G0b, E0b = fl.subtract_with_error(b.G[i:i + BLOCK], gb, b.input_error)
        ey = feq._common_exponents(G0a, G0b)
        G0a, G0b, E0a, E0b = (fl.scale_rows(M, ey) for M in (G0a, G0b, E0a, E0b))
        La, Lb = G0a @ fa, G0b @ fb
        diff = np.abs(La - Lb)
        bound = (tol.rtol * np.maximum(np.abs(La), np.abs(Lb)) + ca * (np.abs(G0a) @ np.abs(fa))
                 + cb * (np.abs(G0b) @ np.abs(fb)) + E0a @ np.abs(fa) + E0b @ np.abs(fb))
        bound = np.maximum(bound, np.finfo(float).tiny)
        ratio = diff / bound
        j = int(np.argmax(ratio))
        with np.errstate(over="ignore"):
            top = max(top, float(np.ldexp(diff, ey + int(ex[0])).max()))
            if ratio[j] > best[0]:
                best = (float(ratio[j]), i + j, float(np.ldexp(bound[j], int(ey[j] + ex[0]))))
    return best[1], top, best[2]


# -- B* and EL2 -------------------------------------------------------------------------------

def _certificate(a, b, P: _Pair, tol) -> feq.FloatCertificate:
    sa, sb = P.sa, P.sb
    d = a.d
    ie = max(a.input_error, b.input_error)
    eFa, eFb = fl._exponent(a.F), fl._exponent(b.F)
    Fa, Fb, ex = feq.common_scaled(a.F, b.F, eFa, eFb)
    eM, tM = sa.errors.get("M", 0.0), sb.errors.get("M", 0.0)
    eN, tN = sa.errors.get("N", 0.0), sb.errors.get("N", 0.0)
    A, el1, dA, nA = feq._maps(tol, Fa, Fb, None, None, sa.P_M, sb.P_M, eM, tM, sb.k, ie, basis=sb.basis_M,
                               zero=lambda js: feq.logits_vanish(a, b, contexts=js))
    # R = Lambda^(1/2) V_1^T 2^c: X = Q R + Y_2 V_2^T 2^c, Q^T Q = I +- delta
    sp = P.joint
    R = np.zeros((sp.r, a.d + b.d))
    if sp.r:
        R[:, sp.J] = np.ldexp(sp.V1.T * np.sqrt(sp.lam)[:, None], P.ec[sp.J][None, :])
    Ra, Rb = R[:, :d], R[:, d:]
    Y, Z = sa.P_N @ Ra.T, sb.P_N @ Rb.T
    W, smin, nW = feq._solve(Y, Z, sb.k, tol, sb.basis_N)
    WZ = W @ Z
    res = float(np.linalg.norm(Y - WZ))
    nY, nWZ, nZ = float(np.linalg.norm(Y)), float(np.linalg.norm(WZ)), float(np.linalg.norm(Z))
    on, on_t = bool(np.any(sa.P_N)), bool(np.any(sb.P_N))
    c = 8 * _U * math.sqrt(max(d, b.d)) + ie
    # column norms of X and E in the scaled (not equilibrated) coordinates
    full = np.ldexp(1.0, P.ec)
    cX, cE = np.sqrt(P.colsq) * full, np.sqrt(P.errsq) * full
    nXa, nXb = float(np.linalg.norm(cX[:d])), float(np.linalg.norm(cX[d:]))
    nEa, nEb = float(np.linalg.norm(cE[:d])), float(np.linalg.norm(cE[d:]))
    eps = sp.residual()
    grow = math.sqrt(1 + sp.delta)
    n2a = grow * fl.norm2(Ra) + eps
    n2b = grow * fl.norm2(Rb) + eps
    dY = ((eN + c) * n2a + nEa) if on else 0.0
    dZ = ((tN + c) * n2b + nEb) if on_t else 0.0
    dW = feq._solution_error(dY, dZ, nW, smin) if sb.k else 0.0
    err = (((eN + c) * nXa + nEa) if on else 0.0) + nW * (((tN + c) * nXb + nEb) if on_t else 0.0) + dW * (grow * nZ + eps)
    # measured: the residual in [lo, hi]; the route's own rounding goes to the bound
    sides = (1.0 if on else 0.0) + (nW if on_t else 0.0)
    hi = grow * res + sides * sp.y2
    lo = math.sqrt(max(1 - sp.delta, 0.0)) * res - sides * sp.y2
    err += sides * sp.rounding() + 8 * _U * math.sqrt(a.d + b.d) * (nY + nW * nZ)
    own = sides * eps
    nat_lo = max(math.sqrt(max(1 - sp.delta, 0.0)) * (nY + nWZ) - 2 * own, 0.0)
    nat_hi = grow * (nY + nWZ) + 2 * own
    b_hold, b_fail = tol.rtol * nat_lo + err, tol.rtol * nat_hi + err
    if not (np.isfinite(hi) and np.isfinite(b_fail)):
        truth = Truth.UNDECIDED
    elif lo > tol.gap * b_fail:
        truth = Truth.FAILS
    elif hi + err <= tol.resolution * tol.rtol * nat_lo:
        # (Tolerance.certain: the error bound a cost for "holds", never room for it)
        truth = Truth.HOLDS
    else:
        truth = Truth.UNDECIDED
    el2 = Decision(truth, res, (float(b_hold), float(tol.gap * b_hold)), {"route": "gram"})
    if not el2.fails:
        # The aggregate over the tokens can hide one token's failure under the
        # others' tolerance; "holds" (and an undecided aggregate) is settled token
        # by token, as the QR route judges it (one more pass over the tokens).
        el2 = _el2_by_token(a, b, P, sa, sb, W, dW, nW, eN, tN, c, tol)
    return feq.finish_certificate(tol, a, b, sa, sb, A, el1, dA, nA, W, el2, dW, nW,
                                  (eFa, eFb, P.Ea, P.Eb))


def _el2_by_token(a, b, P: _Pair, sa, sb, W, dW: float, nW: float, eN: float, tN: float, c: float, tol):
    """EL2 token by token: ``|P_N g_0(y) - B* P~_N g~_0(y)|`` against
    ``rtol`` times its two sides plus the errors the QR route propagates
    (:func:`~allornone.numeric.equivalence._maps`): the subspaces' at the size
    of the raw rows, the products', the subtraction's (``u/(1-u) |g_0(y)|``,
    standard model) and the declared input error, and ``B*``'s own error
    ``dW`` times the projected row of the twin."""
    d = a.d
    on, on_t = bool(np.any(sa.P_N)), bool(np.any(sb.P_N))
    ga, gb = a.G[a.pivot], b.G[b.pivot]
    sub = _U / (1 - _U)

    def rows(i, ey, X, _):
        Xa, Xb = X[:, :d], X[:, d:]
        Y = Xa @ sa.P_N
        Z = Xb @ sb.P_N
        WZ = Z @ W.T
        nxa, nxb = fl.row_norms(Xa), fl.row_norms(Xb)
        ea, eb = sub * nxa, sub * nxb
        if a.input_error:
            ea = ea + a.input_error * _scaled_norms(a.G[i:i + X.shape[0]], ga, -ey - P.Ea)
        if b.input_error:
            eb = eb + b.input_error * _scaled_norms(b.G[i:i + X.shape[0]], gb, -ey - P.Eb)
        zero = np.zeros(X.shape[0])
        return (fl.row_norms(Y - WZ), fl.row_norms(Y) + fl.row_norms(WZ),
                feq.column_errors(eN, tN, c, nxa if on else zero, ea if on else zero, nxb if on_t else zero,
                                  eb if on_t else zero, nW, dW, fl.row_norms(Z)))

    res, nat, err = zip(*_blocks(a, b, P.Ea, P.Eb, rows)) if a.n else ((np.zeros(0),),) * 3
    out = feq._columns(tol, np.concatenate(res), np.concatenate(nat), np.concatenate(err))
    out.detail["route"] = "gram, token by token"
    return out


def _scaled_norms(M: np.ndarray, g: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(|M_y| + |g|) 2^t_y`` per row ``y``, each norm taken on the scaled
    numbers: rows of ``G`` beyond 2^512 overflowed a norm taken first (an
    infinite bound, an undecided EL2), though their scaled sizes are ordinary."""
    with np.errstate(under="ignore"):
        rows = np.linalg.norm(np.ldexp(M, t[:, None]), axis=1)
    top = float(np.max(np.abs(g), initial=0.0))
    if top == 0.0:
        return rows
    e = math.frexp(top)[1]
    with np.errstate(over="ignore", under="ignore"):
        return rows + np.ldexp(float(np.linalg.norm(np.ldexp(g, -e))), t + e)


#: Tokens whose columns of ``L - L~`` are judged first for a witness.
WITNESS_TOKENS = 8


def _witness_tokens(a, b, P: _Pair):
    """The entrywise test (:func:`~allornone.numeric.equivalence.same_distribution_at_tokens`)
    on the columns of the :data:`WITNESS_TOKENS` tokens with the largest share
    of the shared null directions (``P.cross_sq``), or None when none has any."""
    cross = getattr(P, "cross_sq", None)
    if cross is None or not cross.size:
        return None
    order = np.argsort(cross)[::-1][:WITNESS_TOKENS]
    tokens = order[cross[order] > 0]
    if not tokens.size:
        return None
    out = feq.same_distribution_at_tokens(a, b, np.sort(tokens))
    out.detail["route"] = "gram, tokens of the cross residual"
    return out


#: Seconds per phase of the last Gram-route decision (for benchmarks).
LAST_TIMES: dict[str, float] = {}


class _Clock:
    """Adds the seconds since the last call to ``LAST_TIMES[phase]``."""

    def __init__(self):
        import time

        self._now = time.perf_counter
        self._t = self._now()

    def __call__(self, phase: str) -> None:
        t = self._now()
        LAST_TIMES[phase] = LAST_TIMES.get(phase, 0.0) + t - self._t
        self._t = t


def equivalence_parts(a, b, route: str | None = None):
    """``(same_distribution decision, FloatCertificate, (k, k~))`` by the Gram
    route, or ``None`` when the route is not taken or cannot certify what it
    needs (module docstring); then the QR route decides."""
    if not use_gram(a, b, route):
        return None
    tol = a.backend.tolerance
    if tol.rank_rtol is not None or b.backend.tolerance != tol:
        return None
    LAST_TIMES.clear()
    try:
        P = _factor(a, b, tol)
        clock = _Clock()
        dist = _same_distribution(a, b, P, tol)
        clock("L = L~ row by row")
        cert = _certificate(a, b, P, tol)
        clock("certificate (EL1 on F, B*, EL2, EL3)")
    except _Uncertifiable:
        return None
    auto = (ROUTE if route is None else route) == "auto"
    if dist.holds or (auto and dist.undecided):
        # Undecided rows, before every entry: the columns of the tokens that
        # carry most of the shared null directions (a token one model moved
        # carries the move), judged by the entrywise test itself; one entry
        # beyond gap times its bound there is a witness, and "fails" needs no
        # more. (A row-level "holds" is confirmed by every entry, as it was.)
        if dist.undecided:
            clock = _Clock()
            witness = _witness_tokens(a, b, P)
            clock("L = L~ at the tokens of the cross residual")
            if witness is not None and witness.fails:
                return witness, cert, (P.sa.k, P.sb.k)
        # A row of L - L~ within its tolerance says every entry is within the
        # row's: a logit of size 1 next to one of size 2^40 could differ by
        # 2^-12 unseen. "Holds" is confirmed entry by entry (two m x n x d
        # products, in tiles); "fails" needs no confirmation.
        clock = _Clock()
        confirmed = dist.holds
        dist = feq.same_distribution(a, b)
        clock("L = L~ entry by entry")
        if confirmed:
            dist.detail["route"] = "gram, entry by entry"
    # the QR route's certificate where this one leaves EL1--EL3 open -- unless
    # L = L~ holds at equal decided ranks: then they hold by Theorem 5 and
    # are decided there (thm5._tied), which the QR route could only confirm
    if auto and (cert.decided and Decision.all([cert.el1, cert.el2, cert.el3]).undecided) \
            and not (dist.holds and P.sa.k == P.sb.k):
        # (on structures it leaves undecided the QR route's certificate is
        # undecided throughout, thm5.Certificate: its solves would decide nothing
        # this one leaves open -- at vocabulary scale, seconds for nothing)
        if a.structure.decided and b.structure.decided:
            cert = feq.el_certificate(a, b)
    return dist, cert, (P.sa.k, P.sb.k)
