r"""Relational linearity and linear steering in floats: the rounding arguments
behind their verdicts (docs/float-verdicts.md, "Zero decisions in relational
linearity and steering" and the sections after it).

:mod:`allornone.theorems.thm14` and :mod:`allornone.theorems.steering` state
the properties and run them on both realisations; on a float model they hand
the numbers to this module, which bounds what rounding can have done to each
quantity a verdict rests on:

* the readouts ``F_{S⊕q} P_Γ`` (:func:`readout_error`), measured through ``F``
  where the readout is a token readout ``Γ_T`` (:func:`token_through`);
* the regression of the readouts on ``[F_S P_M, 1]`` or ``[F_S, 1]``
  (:func:`regress`), decided on the logits of the contexts where ``P_M``'s error
  leaves it open (:func:`regress_logits`), and shown by a witness where the a
  priori bounds cannot (:func:`witnessed_fit`);
* the transport's kernel ``ker (I - P_Γ) B* V`` (:func:`transported_kernel`,
  :func:`kernel_residual`);
* steering's translations (:func:`translation`) and whether the transported
  map is ``P_Γ~`` (:func:`transported_identity`).

A decision that something *vanishes* needs an error bound the tolerance
resolves (:func:`resolves`). Nothing here knows a result's objects: a readout
named by tokens comes as its computed ``Γ_T`` and its token pairs, a readout
given as a matrix as that matrix, Theorem 5's certificate as ``B*`` and its
error, and what needs a theorem's own decisions comes as a callable.

>>> from allornone.numeric import FloatModel
>>> m = FloatModel([[1.0, 2.0, 1e8], [3.0, -1.0, -2e8]], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], 0)
>>> silent_coordinates(m).tolist()
[False, False, True]
>>> resolves(m.tolerance, 1e-12, 1.0), resolves(m.tolerance, 1e-9, 1.0)
(True, False)
"""
from __future__ import annotations

import math

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl
from allornone.numeric import witness as fw
from allornone.numeric.balance import span_columns

__all__ = ["REDO_LIMIT", "resolves", "resolved_rank", "silent_coordinates", "projection_error", "difference_in_readouts", "readout_error", "token_basis",
           "token_parts", "token_readout_residual", "token_through", "token_direct", "readouts_with_error",
           "witness_regressors", "witness_readouts", "input_dimension_on_readouts",
           "witnessed_fit", "regress", "regress_logits", "largest_column_norm", "unscaled_minimum_norm",
           "input_subspace"]

# Most entries recomputed with correctly rounded dot products by one a posteriori
# bound (beyond, the bound is not formed and the propagated one stands).
REDO_LIMIT = 1 << 18


def _undecided(d: Decision) -> Decision:
    return Decision(Truth.UNDECIDED, d.residual, d.tolerance, d.detail)


# -- what a bound can decide ------------------------------------------------------------

def resolves(tol, error: float, size: float) -> bool:
    """Whether a propagated error bound is small enough to support a decision
    that something vanishes (a direction cut from a rank, a fit that holds):
    within ``sqrt(gap) rtol`` of the natural size, between the modelling
    tolerance ``rtol`` and the ``gap rtol`` at which a residual fails. A larger
    bound cannot tell an exact zero from a small value that the tolerance
    would still count, so the decision is left undecided."""
    return error <= math.sqrt(tol.gap) * tol.rtol * size


def resolved_rank(X, scale, tol, noise: float, size: float | None = None):
    """:func:`~allornone.numeric.linalg._rank_of`, undecided as well when a
    direction is called zero under a propagated error bound ``noise`` that
    the tolerance does not resolve at ``size`` (default: the largest singular
    value; :func:`resolves`)."""
    r, decided, sv, bound = fl._rank_of(X, scale, tol, noise)
    if r < min(X.shape) and not resolves(tol, noise, float(sv[0]) if size is None else size):
        decided = False
    return r, decided, sv, bound


def silent_coordinates(model):
    """The coordinates in which every ``g_0(y)`` is exactly zero (a boolean
    mask). ``G - g(y_0)`` is measured with TwoSum and the declared input error,
    so a coordinate whose difference and error both vanish is zero in the exact
    ``G_0`` too: ``SG`` -- hence ``N`` and every readout in it -- has no
    component there."""
    G0, E0 = fl.difference_with_error(model.G, model.pivot, model.input_error)
    return ~(np.any(G0, axis=0) | np.any(E0, axis=0))


# -- the readouts -----------------------------------------------------------------------

def projection_error(model, v, onto: str = "N", gamma_error: float = 0.0) -> float:
    """A bound on the norm of the error of ``P v`` computed with the model's
    projector onto ``onto`` (``"M"`` or ``"N"``), against the exact ``P v``:
    the projector is off the exact one by at most twice the sine of its
    subspace's error (``Structure.errors``) and ``4 sqrt(d) u`` (rounding,
    orthonormality), and the product is rounded, entrywise at most
    ``gamma_(d+2) |P| |v|`` (Higham). It is at the size of ``v``: a ``v``
    mostly off the subspace (hidden components) leaves ``P v`` small and its
    error large beside it. ``gamma_error``: the sine of the angle between a
    computed basis of ``Γ`` and the exact one, for a residual ``P v - P_Γ P v``
    taken with the computed ``P_Γ`` (off by twice that, at the size of ``P v``)."""
    u = fl.UNIT_ROUNDOFF
    P = model.projector_N if onto == "N" else model.projector_M
    v = np.asarray(v, dtype=float)
    angle = 2 * model.structure.errors.get(onto, 0.0) + 4 * math.sqrt(model.d) * u
    out = angle * fl.norm2(v) + 1.01 * (model.d + 2) * u * fl.norm2(np.abs(P) @ np.abs(v))
    if gamma_error:
        out += 2 * gamma_error * (fl.norm2(P @ v) + out)
    return float(out)


def readout_error(model, rows, basis, P, gamma_error: float = 0.0, in_N: bool = False, direct=None) -> float:
    """A bound on the spectral norm of the error of ``rows @ P`` (the readouts
    ``P_Γ f`` of the given rows of ``F``, or of differences of rows) against the
    exact ``rows P_Γ``.

    Three parts. The computed ``P`` is the projector onto the span of
    ``basis`` up to ``4 sqrt(d) u`` (rounding, orthonormality); that span is
    within the angle ``gamma_error`` of the exact ``Γ`` (twice that in the
    projector); and the product is rounded, entrywise at most
    ``gamma_(d+2) |rows| |P|`` (Higham), so that a coordinate in which ``P`` is
    zero costs nothing, however large. When the exact ``Γ`` lies in ``N``
    (``in_N``: a token readout, a transported ``Γ~``) and the computed basis is
    exactly zero in the coordinates where ``G_0`` is (:func:`silent_coordinates`),
    both ``P`` and the exact ``P_Γ`` vanish there, and the first two parts act
    only on the rest of each row: a hidden coordinate of ``f``, however large,
    enters neither. (Without ``in_N`` only the rounding part is so confined.)

    ``direct = (a, delta)`` measures instead what the rows see of the basis's
    error: ``|rows (Q - Z)| <= a + |rows| delta`` for the basis ``Q`` and a basis
    ``Z`` of the exact ``Γ`` within ``1/gap`` of it (:func:`token_readout_residual`).
    The fit of ``rows Q Q^T`` then differs from that of ``rows Z Q^T`` -- consistent
    exactly when the exact readouts are, with the same misfit up to that
    ``1/gap`` -- by at most that much, which replaces the angle's part when
    smaller."""
    u = fl.UNIT_ROUNDOFF
    if rows.size == 0 or basis.shape[1] == 0:
        return 0.0
    silent = silent_coordinates(model)
    confined = bool(np.any(silent)) and not np.any(basis[silent])
    live = rows[:, ~silent] if confined else rows
    n_live = fl.norm2(live)
    # (|E| <= |A| entrywise gives ||E||_2 <= || |A| ||_2)
    product = 1.01 * (model.d + 2) * u * fl.norm2(np.abs(rows) @ np.abs(P))
    n_gamma = n_live if in_N else fl.norm2(rows)
    part = 2 * gamma_error * n_gamma
    if direct is not None:
        part = min(part, direct[0] + direct[1] * n_live)
    return float(part + 4 * math.sqrt(model.d) * u * n_live + product)


def token_basis(model, G, pairs):
    """A basis of a token readout ``Γ_T`` from ``G = P_N D`` as computed (``D``
    the differences ``g(a) - g(b)`` of ``pairs``), whether its dimension was
    decided (with the model's structure), and a bound on the sine of its angle
    to the exact ``Γ_T``: the error of ``P_N`` at the size of the differences."""
    be = model.backend
    D = np.hstack([model.unembedding_difference(a, b) for a, b in pairs])
    # each pair's difference and its projection scaled alike by a power of two
    # of the difference's own, where both scale exactly (the span of the
    # projections unchanged): a pair of tokens far smaller than another is not
    # noise beside it
    D, G = span_columns(D, G)
    eps = model.structure.errors.get("N", 0.0)
    # (hidden components of g make the differences large and their projections
    # small: a direction may be called zero under an error that cannot tell)
    scale = be.scale(model.projector_N, D)
    r, decided, sv, bound = resolved_rank(G, scale, model.tolerance, eps * fl.norm2(D), scale)
    basis = fl.svd(G, full_matrices=True)[0][:, :r]
    error = eps + (bound / sv[r - 1] if r else 0.0)
    return basis, decided and model.structure.decided, float(error)


def token_parts(model, G, pairs, basis):
    """``G = P_N D`` as computed (the token readout ``Γ_T`` of ``pairs``), the
    token differences ``D + E = g(a) - g(b)`` exactly (TwoSum) and
    ``C = V_r S_r^{-1}`` from the SVD of ``G`` at the rank of ``basis``; None when
    that rank exceeds what ``G`` holds, or when the model declares an input
    error (the differences are then not exact)."""
    if model.input_error or basis.shape[1] == 0:
        return None
    ga = np.vstack([model.G[a] for a, _ in pairs]).T
    gb = np.vstack([model.G[b] for _, b in pairs]).T
    D, E = fl.two_sum(ga, -gb)          # ga - gb = D + E exactly
    _, S, Vt = fl.svd(G, full_matrices=False)
    r = basis.shape[1]
    if r > S.size or S[r - 1] <= 0:
        return None
    return G, D, E, Vt[:r].T / S[:r]


def token_readout_residual(model, G, pairs, basis):
    r"""What the contexts see of the error of the computed basis ``Q`` of a
    token readout ``Γ_T`` (``G`` its computed ``P_N D``, ``pairs`` its tokens),
    measured, for a basis ``Z`` of the exact ``Γ_T`` and any ``rows`` that
    combine rows of ``F`` (``R_rows`` the same combination of the rows of
    ``R``); None when it cannot be formed (a declared input error, entries too
    large to split). Returns ``(R, R_err, C, delta)``: ``R`` and an entrywise
    bound on its error, so that
    ``|rows (Q - Z)| <= |R_rows C| + | |R_err|_rows | |C| + |rows| delta``.

    The token differences ``d = g(a) - g(b)`` lie in ``SG``, and ``P_N d`` differs
    from ``d`` by a part in ``SG ∩ N^⊥ ⊆ SF^⊥``: ``F P_N d = F d`` exactly (F4),
    whatever ``P_N`` makes of a hidden component. With ``G = P_N D`` as
    computed and ``Q = G C + Δ`` (``C = V_r S_r^{-1}`` from the SVD of ``G``,
    ``Δ`` measured), ``Z = P_N D C`` (exact ``P_N``, exact differences) spans
    ``Γ_T`` when its dimension is decided, and
    ``F (Q - Z) = (F G - F D) C + F Δ``. ``R = F G - F D`` is formed with correctly
    rounded dot products, the differences ``D`` with the exact error of their
    subtraction (TwoSum), so the large terms of a hidden component of ``g`` cancel
    exactly; its entries are then accurate to half an ulp."""
    parts = token_parts(model, G, pairs, basis)
    if parts is None:
        return None
    G, D, E, C = parts
    u = fl.UNIT_ROUNDOFF
    # Δ = Q - G C, measured, plus the rounding of the product G C
    delta = fl.norm2(basis - G @ C) + 1.01 * (G.shape[1] + 2) * u * fl.norm2(np.abs(G) @ np.abs(C))
    F = model.F
    R = np.empty((F.shape[0], G.shape[1]))
    Rerr = np.empty_like(R)
    for j in range(G.shape[1]):
        cols = [(F, np.broadcast_to(G[:, j], F.shape)), (F, np.broadcast_to(-D[:, j], F.shape)),
                (F, np.broadcast_to(-E[:, j], F.shape))]
        out = fl.rounded_dots(cols)
        if out is None:
            return None
        R[:, j] = out[0]
        # half an ulp of each value, and what underflow may have lost
        Rerr[:, j] = u * np.abs(out[0]) + out[1]
    return R, Rerr, C, float(delta)


def token_through(model, G, pairs, basis):
    r"""``(FQ, R, R_err)`` for the computed basis ``Q`` of a token readout
    ``Γ_T``: ``FQ = F Q`` correctly
    rounded and ``|F[x] (Q - Z)| <= |R[x]| + R_err[x]`` for the basis
    ``Z = P_N D C`` of the exact ``Γ_T`` of :func:`token_readout_residual`
    (within ``1/gap`` of ``Q`` by the rank decision). ``F P_N D = F D`` exactly
    (F4), so ``F (Q - Z) = F Q - (F D) C``, with ``F Q`` and ``F D`` (the exact
    differences, TwoSum) correctly rounded: neither ``|F|`` nor ``Q``'s distance
    from ``G C`` enters. None when it cannot be formed."""
    parts = None if model.F.shape[0] * (basis.shape[1] + len(pairs)) > REDO_LIMIT else \
        token_parts(model, G, pairs, basis)
    if parts is None:
        return None
    G, D, E, C = parts
    u, r = fl.UNIT_ROUNDOFF, basis.shape[1]
    F = model.F
    FQ = np.empty((F.shape[0], r))
    FD = np.empty((F.shape[0], D.shape[1]))
    tiny = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(r):
            out = fl.rounded_dots([(F, np.broadcast_to(basis[:, j], F.shape))])
            if out is None:
                return None
            FQ[:, j], tiny = out[0], tiny + out[1]
        t_fd = 0.0
        for j in range(D.shape[1]):
            out = fl.rounded_dots([(F, np.broadcast_to(D[:, j], F.shape)), (F, np.broadcast_to(E[:, j], F.shape))])
            if out is None:
                return None
            FD[:, j], t_fd = out[0], t_fd + out[1]
        FDC = FD @ C
        R = FQ - FDC
        # F Q and F D to half an ulp (and underflow), the product (F D) C
        # (Higham) with F D's own error carried by |C|, the subtraction's rounding
        Rerr = 1.01 * u * (np.abs(FQ) + np.abs(R)) + 1.01 * (D.shape[1] + 3) * u * (np.abs(FD) @ np.abs(C)) \
            + tiny + t_fd * float(np.abs(C).sum())
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(Rerr))):
        return None
    return FQ, R, Rerr


def token_direct(model, G, pairs, basis, plus, minus=()):
    """``(a, delta)`` for :func:`readout_error` on the rows ``F[plus] - F[minus]``
    (``minus`` empty, or as long as ``plus``) of a token readout's basis, from
    :func:`token_readout_residual`; None when that is not available."""
    tok = token_readout_residual(model, G, pairs, basis)
    if tok is None:
        return None
    R, Rerr, C, delta = tok
    Rr, Er = R[list(plus)], Rerr[list(plus)]
    if len(minus):
        Rr, Er = Rr - R[list(minus)], Er + Rerr[list(minus)]
        # (the subtraction's rounding, half an ulp of each entry)
        Er = Er + 1.01 * 2.0 ** -53 * np.abs(Rr)
    return float(fl.norm2(Rr @ C) + fl.norm2(Er) * fl.norm2(C)), delta


def readouts_with_error(model, targets, FT, Y, basis, P, gamma_error: float, in_N: bool, token=None):
    """The readouts ``Y = F_T P`` of the contexts ``targets`` (rows ``FT``) and a
    bound on their error, ``(Y, y_error)``: the rounding of ``F P_Γ`` and the
    error ``gamma_error`` of ``Γ`` itself (:func:`readout_error`; ``in_N``: the
    exact ``Γ`` lies in ``N``).

    ``token = (G, pairs)`` for a token readout whose error is its own: what the
    contexts see of it is measured (:func:`token_direct`), and the readouts are
    formed through ``F`` (:func:`token_through`): the readouts become ``(F_T Q) Q^T`` from correctly rounded
    ``F_T Q``, against a basis ``Z`` of the exact readout: ``Y' = F_T Z Q^T``
    fits exactly when the exact readouts do (``Q^T Q`` is invertible), and
    ``|Y - Y'| <= |F_T Q_computed - F_T Z| |Q|`` plus the rounding of the
    product; they are used where that bound is the smaller."""
    direct = token_direct(model, *token, basis, targets) if token is not None else None
    y_error = readout_error(model, FT, basis, P, gamma_error, in_N=in_N, direct=direct)
    tw = token_through(model, *token, basis) if token is not None else None
    if tw is not None:
        FQ, R, Rerr = tw[:3]
        idx = list(targets)
        FQt = FQ[idx]
        Yd = FQt @ basis.T
        nQ = fl.norm2(basis) * (1 + 4 * fl.UNIT_ROUNDOFF)
        # (F~_T Q is off the exact F~_T Q by half an ulp, besides R's own bound)
        e_d = (fl.norm2(R[idx]) + fl.norm2(Rerr[idx]) + fl.UNIT_ROUNDOFF * fl.norm2(FQt)) * 1.01 * nQ \
            + 1.01 * (basis.shape[1] + 2) * fl.UNIT_ROUNDOFF * fl.norm2(np.abs(FQt) @ np.abs(basis.T))
        if e_d < y_error:
            Y, y_error = Yd, float(e_d)
    return Y, y_error


# -- a posteriori witnesses of a fit ------------------------------------------------------

def witness_regressors(model, pairs, reading):
    """The regressors of :func:`regress` for :func:`witnessed_fit`,
    ``(X, X_err)`` with an entrywise bound on their error against the exact
    ones; None when they cannot be formed (a declared input error, too large).

    Reading anything, ``[F_S, 1]``: the inputs themselves, exact. Reading
    ``M``, ``[L_S, 1]``, whose column space is that of ``[F_S P_M, 1]``
    exactly (:func:`regress_logits`): the logits ``L_S = F_S G_0^T`` with
    ``G_0 = G - g(y_0)`` split exactly by TwoSum, each entry correctly
    rounded -- no ``P_M`` and no rank enter."""
    FS = model.F[[s for s, _ in pairs], :]
    ones = np.ones((len(pairs), 1))
    if model.input_error or not len(pairs):
        return None
    if reading == "any":
        return np.hstack([FS, ones]), 0.0
    if len(pairs) * model.n * (model.d + 1) > REDO_LIMIT:
        return None
    D, E = fl.two_sum(model.G, -model.G[model.pivot][None, :])   # G_0 = D + E exactly
    out = fw.rounded_matmul([(FS, D.T), (FS, E.T)])
    if out is None:
        return None
    L, L_err = out
    return np.hstack([L, ones]), np.hstack([L_err, np.zeros((len(pairs), 1))])


def witness_readouts(model, rows, B=None, tokens=None, minus=None):
    """The readouts of the contexts ``rows`` as values of linear functionals
    that span the readout exactly, ``(Y, Y_err)``; None when they cannot be
    formed. The readout is the span of the columns of ``B``, or the token
    readout of the pairs ``tokens``.

    ``P_Γ x = P_Γ y`` exactly when ``B^T x = B^T y`` for any ``B`` whose columns
    span ``Γ``, so relational linearity on ``Γ`` is the consistency of the
    readouts ``F_{S⊕q} B`` on the regressors, whichever spanning set. For a
    readout named by tokens, ``Γ_T = span P_N (g_0(a) - g_0(b))``, and ``u^T f(x)``
    is the log-odds ``L[x, a] - L[x, b] = f(x)^T (g(a) - g(b))`` for those ``u``
    (F4): no ``P_N`` enters. Either is formed with correctly rounded dot
    products (the token differences split exactly by TwoSum). With ``minus``
    (as many context indices as ``rows``), the differences of the readouts of
    ``rows`` and ``minus``, each entry rounded once."""
    if model.input_error:
        return None
    sides = [model.F[list(rows), :]]
    if minus is not None:
        sides.append(-model.F[list(minus), :])
    if tokens is not None:
        ga = np.vstack([model.G[a] for a, _ in tokens]).T
        gb = np.vstack([model.G[b] for _, b in tokens]).T
        D, E = fl.two_sum(ga, -gb)          # g(a) - g(b) = D + E exactly
        parts = [D, E]
    else:
        parts = [B]
    if len(rows) * model.d * parts[0].shape[1] * len(sides) > REDO_LIMIT:
        return None
    return fw.rounded_matmul([(Fr, X) for Fr in sides for X in parts])


def input_dimension_on_readouts(model, pairs, B=None, tokens=None, reading: str = "M") -> int | None:
    """``dim Γ_q`` of a fit that holds (reading ``M``, or anything), decided
    on the readouts (of ``B`` or ``tokens``, as in :func:`witness_readouts`):
    a rank of the values of functionals spanning ``Γ``, which no change of
    basis moves; None when that cannot be told.

    With ``X = [F_S P_M, 1]`` and ``Θ = X^+ Y`` the columns of ``Θ_W`` lie in
    the row space of ``F_S P_M``, on which ``F_S P_M`` is injective, so
    ``dim Γ_q = rank Θ_W = rank F_S P_M Θ_W``; where the fit is exact that is
    ``Y - 1 Θ_1``, and when ``1`` is not in the column space of ``F_S P_M``
    (that of ``L_S``), ``rank [Y, 1] = dim Γ_q + 1``. ``rank [Y, 1] - 1`` is the
    rank of the differences ``Y[i] - Y[0]``, and ``Y`` may be any readouts
    spanning ``Γ`` (:func:`witness_readouts`). Where ``L_S`` has full row rank
    instead (``1`` then lies in its column space), ``X X^T`` is invertible and
    ``Θ_W = (F_S P_M)^T (X X^T)^{-1} Y`` with ``(F_S P_M)^T`` injective, so
    ``dim Γ_q = rank Y``. Reading anything, the same with ``F_S`` for
    ``F_S P_M``. The ranks are decided on
    correctly rounded entries, against the spectral norm of their entrywise
    error bounds (at most their Frobenius norm) and the SVD's backward error."""
    if not pairs:
        return None
    rows = [t for _, t in pairs]
    X = witness_regressors(model, pairs, reading)
    if X is None:
        return None
    tol = model.tolerance
    L, L_err = X[0][:, :-1], np.broadcast_to(X[1], X[0].shape)[:, :-1]

    def rank(A, err):
        if not A.size:
            return 0, True
        # each column scaled by a power of two of its own (exact, the rank
        # unchanged), so that a column far smaller than another is not taken
        # for noise; then the whole, so that no square overflows
        A, err = span_columns(A, err)
        e = float(np.ldexp(1.0, int(np.frexp(float(np.max(np.abs(A))) or 1.0)[1])))
        sv = fl.svd(A / e, compute_uv=False)
        noise = float(np.linalg.norm(err / e)) * (1 + 1e-6) \
            + fl.svd_noise(max(A.shape), float(sv[0]) if sv.size else 0.0)
        return tol.rank(sv, noise=noise)

    c = float(np.ldexp(1.0, int(np.frexp(float(np.max(np.abs(L))) if L.size else 1.0)[1])))
    r_L, ok_L = rank(L, L_err)
    if ok_L and r_L == L.shape[0]:
        # L_S, so F_S P_M (reading anything: F_S), of full row rank: X X^T is invertible and
        # Θ_W = (F_S P_M)^T (X X^T)^{-1} Y with (F_S P_M)^T injective, so
        # dim Γ_q = rank Y, the rank of the readouts themselves
        Y = witness_readouts(model, rows, B, tokens)
        if Y is None:
            return None
        r_Y, ok_Y = rank(*Y)
        return r_Y if ok_Y else None
    r_L1, ok_L1 = rank(np.hstack([L, np.full((L.shape[0], 1), c)]), np.hstack([L_err, np.zeros((L.shape[0], 1))]))
    if not (ok_L and ok_L1) or r_L1 != r_L + 1:
        return None                     # 1 may lie in the span of the inputs
    if len(rows) == 1:
        return 0                        # (Θ_W = 0: the fit is the intercept alone)
    D = witness_readouts(model, rows[1:], B, tokens, minus=[rows[0]] * (len(rows) - 1))
    if D is None:
        return None
    r_D, ok_D = rank(*D)
    return r_D if ok_D else None


def witnessed_fit(model, pairs, reading, readout, decision: Decision) -> Decision | None:
    """"Holds", shown by a witness (:func:`allornone.numeric.witness.fit_witness`),
    for a fit the propagated bounds leave undecided; None when none is found.

    ``readout`` is ``(Y, Y_err)`` from :func:`witness_readouts` (or the same
    functionals measured elsewhere). A fit through inputs of condition ``1e8``
    has an a priori error far above the tolerance, but the refined map's
    residual, formed with correctly rounded dot products, is a rigorous bound
    on the least misfit against the exact data: within ``rtol`` of each
    readout's size, the readouts fit."""
    if readout is None:
        return None
    regressors = witness_regressors(model, pairs, reading)
    if regressors is None:
        return None
    Y, Y_err = readout
    X, X_err = regressors
    if X.shape[0] * X.shape[1] * max(Y.shape[1], 1) > REDO_LIMIT:
        return None
    return fw.fit_witness(X, X_err, Y, Y_err, model.tolerance.rtol).decision(model.tolerance, **decision.detail)


# -- the regression -----------------------------------------------------------------------

def regress(model, pairs, FS, inputs, Y, y_scale: float, reading: str, y_error: float = 0.0):
    """Regress ``Y`` (``|S| x c``) on ``X = [inputs, 1]`` (``inputs`` is
    ``F_S P_M`` reading ``M``, ``F_S`` reading anything; ``FS`` the rows ``F_S``):
    ``(X, Θ, residual decision, rank X, decided)``, ``Θ`` the minimum-norm
    solution, as on the exact side.

    The rank of ``X`` is decided with the intercept column brought to the size
    of the inputs, so that the decision does not depend on the units of ``f``
    (a column of ones next to inputs of size ``1e6`` would otherwise be a
    singular value of relative size ``1e-7``: undecided). ``decided`` also
    covers ``P_M`` when reading ``M``."""
    be = model.backend
    ones = be.as_matrix([[1]] * len(pairs), "ones")
    # The intercept column is brought to the size of the inputs by a power of two,
    # for the rank decision and the solve alike (then scaled back), so that
    # neither depends on the units of f.
    # (the raw rows of F set that size: projected inputs may be pure rounding noise)
    c = float(np.ldexp(1.0, fl.row_exponents(np.array([[be.scale(FS) or 1.0]]))[0]))
    Xs = be.hstack(inputs, ones * c)
    # Reading M, the inputs carry the error of P_M at the size of the rows of F.
    noise = model.structure.errors.get("M", 0.0) * fl.norm2(FS) if reading == "M" else 0.0
    # (a direction of the regressors called zero under the propagated error of
    # P_M, at the size of the raw rows, may be merely small: which it is
    # decides whether the readouts fit)
    rank, decided, sv, bound = resolved_rank(Xs, None, model.tolerance, noise)
    Theta_s = fl.pinv(Xs, rank) @ Y
    Theta, norm_error, ambiguous = unscaled_minimum_norm(Xs, Theta_s, rank, c, inputs, bound, sv, model.tolerance)
    X = be.hstack(inputs, ones)
    # the fitted readouts move by (error of the inputs)/sigma_r times the readouts
    # and the readouts carry their own error, which a least-squares residual passes on.
    # The residual is judged by its largest entry, and each column's residual moves
    # by at most that times its own readouts' (and coefficients') norm: the largest
    # column norm, not the spectral norm of all of them (up to sqrt(d) larger)
    nY, nT = largest_column_norm(Y), largest_column_norm(Theta_s)
    extra = (bound / sv[rank - 1] * nY if rank else 0.0) + noise * nT + y_error
    # the modelling tolerance is relative to the readouts; the rounding of X Θ is
    # at the size of |X| |Θ|, which a badly conditioned basis makes much larger
    size = max(be.scale(Xs, Theta_s), y_scale)
    # (Tolerance.certain: a fit through inputs so ill-conditioned that its
    # error bound is not within the tolerance of the readouts cannot tell a
    # small misfit from none -- a change of basis of condition 1e8 shrinks an
    # exact misfit that much -- so the bound is a cost for "holds")
    dec = be.tolerance.certain(float(np.abs(Xs @ Theta_s - Y).max()) if Y.size else 0.0, y_scale,
                               extra + 64 * fl.UNIT_ROUNDOFF * size)
    if dec.fails and reading == "any" and rank < Xs.shape[1] and _drops_a_direction(Xs, rank, model):
        # the fit was solved on the directions its rank kept; the regressors
        # with their rows and columns scaled by powers of two (the same span)
        # prove more of them nonzero, so a direction the fit needs may have
        # been cut at the tolerance, and its misfit proves nothing
        dec = _undecided(dec)
    on_logits = False
    if reading == "M" and model.structure.decided and (dec.undecided or not decided or rank < min(Xs.shape)):
        # the same question without P_M: the fit on the logits of S, where the
        # claim lives, asked where this fit is open or was solved at a rank it
        # cut. The error of P_M is bounded at the size of the raw rows, which a
        # hidden coordinate of 2^980 makes far larger than the inputs it
        # projects: the directions under that error are cut, and the fit
        # through the rest may look decided either way. Where the two differ,
        # the logits decide (also "undecided")
        alt = regress_logits(model, pairs, Y, y_scale, y_error)
        if alt is not None and (dec.undecided or not decided or alt.truth is not dec.truth):
            # (its rank, that of [F_S P_M, 1], is decided there too; Θ and the
            # rank reported stay those of the fit on P_M, undecided as they were)
            dec, on_logits = Decision(alt.truth, dec.residual, dec.tolerance, {**dec.detail, "on_logits": alt}), True
    decided = decided and (reading == "any" or model.structure.decided)
    # how far the fitted map can be from the exact one: (dY + dX |Θ|) / sigma_r
    if rank:
        e_s = float((bound * fl.norm2(Theta_s) + y_error) / sv[rank - 1])
        dec.detail["theta_error"] = norm_error(e_s)
    if ambiguous:
        dec.detail["intercept_in_span"] = True
    return X, Theta, (dec if decided or on_logits else _undecided(dec)), rank, decided


def _drops_a_direction(Xs, rank: int, model) -> bool:
    """Whether the regressors ``Xs`` (the model's numbers and a constant
    column: data, exact but for a declared input error), scaled by powers of
    two row by row and column by column, have more than ``rank`` singular
    values certainly nonzero (:func:`~allornone.numeric.linalg.data_row_space`'s
    presentations): then the rank a fit was solved at cut a direction of
    their span. A coordinate of ``2^980`` beside ordinary ones is the case:
    unscaled, every other direction is below its rounding."""
    X = np.asarray(Xs, dtype=float)
    E = model.input_error * np.abs(X) if model.input_error else None
    _, _, (sv, noise, _), _ = fl._data_space(X, E, model.tolerance)
    return int(np.sum(sv > noise)) > rank


def regress_logits(model, pairs, Y, y_scale: float, y_error: float = 0.0):
    r"""Reading ``M``: whether ``Y`` fits ``[F_S P_M, 1]``, decided on
    ``[L_S, 1]`` instead (``L_S = F_S G_0^T``, the logits of the contexts ``S``):
    a Decision, possibly undecided; None when it cannot be formed or the
    rank of ``[L_S, 1]`` is undecided.

    Exactly, ``G_0 P_M f = G_0 f`` for every context (the logits see only the
    ``M``-component), so ``L_S = F_S B_M (B_M^T G_0^T)`` for a basis ``B_M`` of
    ``M``, and ``B_M^T G_0^T`` (``k x n``) has rank ``k = rank L``: the columns of
    ``L_S`` span those of ``F_S P_M``. The two systems are consistent together,
    and ``L_S`` carries neither ``P_M`` nor its error: its entries are formed
    with correctly rounded dot products (``G_0 = G - g(y_0)`` split exactly by
    TwoSum), accurate to half an ulp, and each token's column is brought to
    size one by a power of two (the column space is the same)."""
    if model.input_error or not len(pairs) or len(pairs) * model.n > REDO_LIMIT:
        return None
    u = fl.UNIT_ROUNDOFF
    FS = model.F[[s for s, _ in pairs], :]
    # (against the reference token: the same column span, L[:, y] - L[:, ref])
    ref = _reference_in_logits(FS, model.G, model.pivot)
    D, E = fl.two_sum(model.G, -model.G[ref][None, :])   # G - g(ref) = D + E exactly
    n = D.shape[0]
    L = np.empty((FS.shape[0], n))
    tiny = np.zeros(n)
    with np.errstate(over="ignore", invalid="ignore"):
        for y in range(n):
            out = fl.rounded_dots([(FS, np.broadcast_to(D[y], FS.shape)), (FS, np.broadcast_to(E[y], FS.shape))])
            if out is None:
                return None
            L[:, y], tiny[y] = out[0], out[1]
        if not np.all(np.isfinite(L)):
            return None
        # each token's column brought to size one by a power of two: the same
        # column space, so the same consistency, and no token far smaller than
        # another is lost to a bound at the other's size (where the scaling is
        # not exact, the columns keep their sizes)
        e = fl.row_exponents(L.T)
        with np.errstate(under="ignore"):
            Le = fl.scale_rows(L.T, e).T
        if np.array_equal(fl.scale_rows(Le.T, -e).T, L):
            L, tiny = Le, np.ldexp(tiny, -e)
        # (the entrywise error, half an ulp, bounds the spectral norm's through |.|)
        noise = 1.01 * u * fl.norm2(np.abs(L)) + float(np.sum(tiny)) * math.sqrt(L.size)
        ones = np.ones((len(pairs), 1))
        c = float(np.ldexp(1.0, fl.row_exponents(np.array([[float(np.max(np.abs(L))) or 1.0]]))[0]))
        Xs = np.hstack([L, c * ones])
        rank, decided, sv, bound = resolved_rank(Xs, None, model.tolerance, noise)
        if not decided:
            return None
        Theta = fl.pinv(Xs, rank) @ Y
        nY, nT = largest_column_norm(Y), largest_column_norm(Theta)
        extra = (bound / sv[rank - 1] * nY if rank else 0.0) + noise * nT + y_error
        size = max(model.backend.scale(Xs, Theta), y_scale)
        dec = model.tolerance.certain(float(np.abs(Xs @ Theta - Y).max()) if Y.size else 0.0, y_scale,
                                      extra + 64 * u * size)
    return dec


def largest_column_norm(A) -> float:
    """An upper bound on the largest Euclidean norm of a column of ``A``, the
    matrix scaled by a power of two first so that no square overflows or
    underflows (a column of entries ``1e-170`` is not of norm zero)."""
    if not A.size or not np.any(A):
        return 0.0
    e = int(fl.row_exponents(np.array([[float(np.max(np.abs(A)))]]))[0])
    B = np.ldexp(A, -e)
    return float(np.ldexp(np.sqrt(np.max(np.sum(B * B, axis=0))) * (1 + 4 * fl.UNIT_ROUNDOFF * A.shape[0]), e))


def unscaled_minimum_norm(Xs, Theta_s, rank: int, c: float, inputs, bound: float, sv, tol):
    """Θ of the exact side's convention from the fit with the intercept scaled by ``c``.

    ``Xs = [inputs, c 1]`` and ``Θ_s`` is its minimum-norm solution; with
    ``S = diag(1, ..., 1, c)``, ``S Θ_s`` solves ``[inputs, 1] Θ = Y``. It is
    also that system's minimum-norm solution -- the exact side's ``Θ``, which
    defines ``W`` and ``Γ_q`` -- unless the column of ones lies in the span of
    the inputs: only then has the null space of ``Xs`` vectors with an
    intercept part, on which the two norms disagree. Then ``S Θ_s`` is
    projected orthogonally to ``S k``, ``k`` the last axis projected on the
    null space (the one null direction with an intercept part; the rest of
    the null space is orthogonal to both), which minimises ``|S (Θ_s + k z)|``.

    Returns ``Θ``, a function mapping a bound on the error of ``Θ_s`` to a
    bound on the error of the ``W`` part of ``Θ`` (the projection passes on the
    error, leaks the intercept's into ``W`` by at most
    ``min(|k_W| / |k_1|, c / 2)``, and moves with the error of ``k``, at most
    ``bound / (sigma_r - sigma_{r+1})``), and whether the ones lie in the span
    of the inputs (or may: then the size of ``W`` follows the balance of the
    inputs against the intercept, not the readouts over the inputs)."""
    STheta = np.vstack([Theta_s[:-1], Theta_s[-1:] * c])
    Theta = STheta
    same = (lambda e: e)
    if rank >= Xs.shape[1]:
        return Theta, same, False
    r_in, d_in, _, _ = fl._rank_of(inputs, None, tol, bound)
    if rank == r_in + 1 and d_in:
        return Theta, same, False
    if c == 1.0:
        return Theta, same, True
    K = fl.svd(Xs, full_matrices=True)[2][rank:].T
    k = K @ K[-1]                       # the last axis projected on the null space
    gap = float(sv[rank - 1]) - (float(sv[rank]) if rank < sv.size else 0.0) - bound
    if not np.any(k[-1]) or gap <= 0:
        return Theta, (lambda e: float("inf")), True
    Sk = k.copy()
    Sk[-1] *= c
    nSk = float(np.linalg.norm(Sk))
    shat = Sk / nSk
    Theta = STheta - np.outer(shat, shat @ STheta)
    kW, k1 = float(np.linalg.norm(k[:-1])), abs(float(k[-1]))
    leak = min(kW / k1, c / 2) if k1 else c / 2
    eps_k = bound / gap
    # |d shat_W| <= eps_k (1 + |shat_W| max(1, c)) / |S k| and |d shat| <= 2 max(1, c) eps_k / |S k|,
    # each times |S Θ_s| (the step subtracts shat_W (shat^T S Θ_s))
    sW = float(np.linalg.norm(shat[:-1]))
    move = eps_k * float(fl.norm2(STheta)) / nSk * (1 + 3 * sW * max(1.0, c))
    return Theta, (lambda e: e * (1 + sW + leak) + move), True


def input_subspace(tol, X, scale: float | None, noise: float):
    """A basis of ``Γ_q``, the column space of ``X = W^T P_Γ``, and whether its
    dimension was decided, for a fitted ``W`` within ``noise`` of the exact map;
    ``scale`` is the natural size of ``W`` (readouts over inputs), or None.

    The singular values are judged against ``noise`` and the SVD's own backward
    error at ``|W|``; the natural size only says whether that bound says
    anything (:func:`resolves`)."""
    sv = fl.svd(X, compute_uv=False)
    bound = fl.svd_noise(max(X.shape), float(sv[0]) if sv.size else 0.0) + noise
    r, decided = tol.rank(sv, noise=bound, reference=scale)
    if r < sv.size and scale is not None and not resolves(tol, noise, scale):
        # a singular value called zero under a propagated error larger than the
        # modelling tolerance resolves: zero or merely small, it cannot tell
        decided = False
    return fl.svd(X, full_matrices=True)[0][:, :r], decided


def _regressors(model, S, reading: str):
    """``L[s, :]`` (reading ``M``) or ``f(s)`` (reading anything) as a product
    ``A B^T`` of the model's own numbers: the regressors of an affine fit, to
    which the fit joins a constant column (``consistent(..., affine=True)``).
    Reading ``M``, the log-odds are taken against
    :func:`~allornone.numeric.linalg.reference_token`, not always the model's
    pivot: the column space with the constant column is the same, and no token
    far from the others inflates it."""
    F, G = np.asarray(model.F), np.asarray(model.G)
    d = model.d
    if reading == "M":
        return np.hstack([F[S], F[S]]), _g0_pair(G, _reference_in_logits(F[S], G, model.pivot))
    return np.asarray(F[S], dtype=float), np.eye(d)


#: Contexts whose logits choose the reference token of a fit reading ``M``.
REFERENCE_CONTEXTS = 64


def _reference_in_logits(FS: np.ndarray, G: np.ndarray, pivot: int) -> int:
    """:func:`~allornone.numeric.linalg.reference_token` among the tokens'
    logits in (at most :data:`REFERENCE_CONTEXTS` of) the contexts ``FS``: the
    columns ``L[S, y]`` share ``-F_S g(y_0)``, and where the pivot is far from
    the other tokens *in what the contexts read* that common part drowns the
    rest of every column in its rounding. Measured in ``G``'s coordinates
    instead, a balancing of the coordinates (or any change of basis) can make
    a far pivot look near. Any reference gives the regressors' span, so the
    choice moves no verdict, only how much of it rounding leaves decided."""
    rows = FS[np.unique(np.linspace(0, FS.shape[0] - 1, min(FS.shape[0], REFERENCE_CONTEXTS)).astype(int))] \
        if FS.shape[0] else FS
    with np.errstate(over="ignore", invalid="ignore"):
        Z = np.asarray(G, dtype=float) @ np.asarray(rows, dtype=float).T
    if not Z.size or not np.all(np.isfinite(Z)):
        return fl.reference_token(G, pivot)
    return fl.reference_token(Z, pivot)


def _g0_pair(G: np.ndarray, y0: int) -> np.ndarray:
    """The rows ``[g(y), -g(y_0)]`` of every token but ``y_0``: against
    ``[F, F]`` (or ``[I, I]``) their products are ``G_0``'s columns, each entry a
    correctly rounded sum of the model's own numbers. The reference's own row
    is left out: ``g_0(y_0)`` is zero by definition, whatever error the numbers
    it would be computed from declare (as a pair it would be a line of the
    product within its own error of zero, which decides no rank), and a zero
    row or column changes no span."""
    return np.delete(np.hstack([G, np.broadcast_to(-G[y0], G.shape)]), y0, axis=0)


def _pair_rows(G: np.ndarray, pairs) -> np.ndarray:
    """The rows ``[g(a), -g(b)]`` of token pairs: against ``[F, F]`` their
    products are the log-odds columns ``F (g(a) - g(b))``, each entry a
    correctly rounded sum of the model's own numbers."""
    if not len(pairs):
        return np.zeros((0, 2 * G.shape[1]))
    return np.vstack([np.concatenate([G[a], -G[b]]) for a, b in pairs])


def readout_fit(model, pairs, reading: str, targets, source=None):
    r"""Relational linearity for the query ``pairs``, decided where it lives:
    is each readout of ``s⊕q`` an affine function of the regressors of ``s``?

    A readout ``P_Γ f(t)`` is known through the functionals ``u^T f(t)``,
    ``u ∈ Γ``. Reading anything the regressors are ``[f(s), 1]``; reading ``M``
    they are the log-odds rows ``[L[s, :], 1]``, since the functionals of ``f(s)``
    that lie in ``M`` are exactly the linear functions of ``L[s, :]`` (F4, F6).
    ``targets`` gives the readouts as a product: ``("tokens", T)`` for the
    readout named by token pairs (``u^T f(t) = L[t, a] - L[t, b]``), ``("gamma",
    U)`` for the columns of ``U`` (``U^T f(t)``), read off ``source`` (default
    ``model``: a twin's readouts on ``Γ~`` are its original's on ``Γ``). So the
    fit's consistency is two ranks of products of the models' numbers
    (:func:`~allornone.numeric.primitives.consistent`), decided on correctly
    rounded entries: reading ``M`` no change of basis moves them, and both
    models are first balanced by powers of two
    (:func:`~allornone.numeric.balance.balanced`), so neither does any such
    diagonal one. None where the products are too large to be formed correctly
    rounded."""
    from allornone.numeric.balance import balanced, in_balanced_coordinates
    from allornone.numeric.primitives import consistent

    kind, what = targets
    source = model if source is None else source
    src = balanced((source,))[0]
    model = src if source is model else balanced((model,))[0]
    S, Tt = [s for s, _ in pairs], [t for _, t in pairs]
    F, G = np.asarray(src.F), np.asarray(src.G)
    if kind == "tokens":
        AY = np.hstack([F[Tt], F[Tt]])
        BY = _pair_rows(G, what)
    else:
        # the same functionals of the balanced f (a span: each column at its own scale)
        U = in_balanced_coordinates(src, what)
        if U is None:
            # readout vectors spanning more binades than binary64 holds: their
            # readouts cannot be formed, nor the fit decided on them
            return Decision(Truth.UNDECIDED, 0.0, (0.0, 0.0), {"why": "the readout vectors exceed binary64's range"})
        AY, BY = F[Tt], U.T
    AX, BX = _regressors(model, S, reading)
    return consistent(AX, BX, AY, BY, model.backend.tolerance, max(model.input_error, source.input_error),
                      affine=True)


def difference_in_readouts(model, a: int, b: int, readers: np.ndarray | None = None, pairs=None):
    r"""``P_N (g(a) - g(b)) ∈ Γ`` for a ``Γ ⊆ N`` (the caller has decided it),
    decided on the log-odds: by a consistency of products of the model's
    numbers (:func:`~allornone.numeric.primitives.consistent`), without a
    computed projector.

    For ``v ∈ SG``, ``f(x)^T P_N v = f(x)^T v`` (F4), and ``u ↦ (f(x)^T u)_x``
    is injective on ``N`` (F6). So, with ``Γ ⊆ N``, ``P_N (g(a) - g(b)) = Γ c``
    iff the log-odds column ``ℓ_ab = F (g(a) - g(b))`` equals ``F Γ c``: iff
    ``ℓ_ab`` lies in the span of the readouts ``F Γ``. ``Γ`` is given by the
    columns of ``readers`` (in the model's coordinates) or, for a readout named
    by token pairs, by ``pairs`` (its readouts are their log-odds). The
    model is first balanced by powers of two
    (:func:`~allornone.numeric.balance.balanced`), so no diagonal change of
    basis moves the decision. None where a product is too large to be formed
    correctly rounded or the readers exceed binary64's range once balanced."""
    from allornone.numeric.balance import balanced, in_balanced_coordinates
    from allornone.numeric.primitives import consistent

    src = balanced((model,))[0]
    F, G = np.asarray(src.F), np.asarray(src.G)
    if pairs is not None:
        AX, BX = np.hstack([F, F]), _pair_rows(G, pairs)
    else:
        U = in_balanced_coordinates(src, readers)
        if U is None:
            return None
        AX, BX = F, U.T
    return consistent(AX, BX, np.hstack([F, F]), _pair_rows(G, [(a, b)]), model.backend.tolerance, model.input_error)


def gamma_in_N(model, basis: np.ndarray):
    r"""``Γ ⊆ N`` for ``Γ`` spanned by the columns of ``basis``, by two
    consistencies of products (:func:`~allornone.numeric.primitives.consistent`),
    without a computed projector.

    ``N = SG ∩ K^⊥`` with ``K = SG ∩ ker F`` (``N`` is the orthogonal complement,
    within ``SG``, of what no context reads). So ``Γ ⊆ N`` iff

    * ``Γ ⊆ SG``: ``[G_0^T, Γ]`` has the rank of ``G_0^T``; and
    * ``Γ ⊥ K``: with ``K = G_0^T ker L`` (``v = G_0^T α`` is read by no context
      iff ``L α = 0``), ``γ ⊥ K`` iff ``G_0 γ`` lies in the span of the columns of
      ``L^T = G_0 F^T``.

    ``G_0`` enters as the pair ``G``, ``-1 g(y_0)^T``, so every entry is a
    correctly rounded sum of the model's own numbers. None when a product is
    too large to be formed correctly rounded."""
    from allornone.numeric.primitives import consistent

    F, G = np.asarray(model.F), np.asarray(model.G)
    d, r = model.d, basis.shape[1]
    if r == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    eye = np.eye(d)
    # SG, ker L and so N are spanned by differences against any token: against a
    # pivot far from every other one, the rounded differences lose the rest
    G0_pair = _g0_pair(G, fl.reference_token(G, model.pivot))
    tol, eps = model.backend.tolerance, model.input_error
    in_SG = consistent(np.hstack([eye, eye]), G0_pair, eye, basis.T, tol, eps)
    if in_SG is None:
        return None
    if in_SG.fails:
        return in_SG
    perp = consistent(G0_pair, np.hstack([F, F]), G0_pair, np.hstack([basis.T, basis.T]), tol, eps)
    if perp is None:
        return None
    if perp.fails or in_SG.undecided:
        return perp if perp.fails else in_SG
    return perp


def meet_N_dimension(model, basis: np.ndarray):
    r"""``dim (Γ ∩ N)`` for ``Γ`` spanned by the columns of ``basis``, decided
    on the rank of one product of the model's numbers: ``(dim, decided)``, or
    None where a product is too large to be formed correctly rounded.

    ``N = SG ∩ (SF + SG^⊥)``: for ``v ∈ SG``, ``v ⊥ (SG ∩ ker F)`` iff ``G_0 v``
    lies in ``G_0(SF)``, the column span of ``L^T = G_0 F^T``. So ``Γ c ∈ N``
    iff there are ``α``, ``z`` with ``Γ c = G_0^T α`` and
    ``G_0 G_0^T α = G_0 F^T z``: the solutions ``(c, α, z)`` are the kernel of

        K = [[I, 0], [0, G_0]] · [[Γ, -G_0^T, 0], [0, G_0^T, -F^T]],

    and ``(c, α, z) ↦ Γ c`` maps that kernel onto ``Γ ∩ N`` with kernel
    ``ker Γ × ker G_0^T × ker L^T``. So
    ``dim (Γ ∩ N) = rank Γ + rank G_0 + k - rank K``. Each rank is that of a product
    (:func:`~allornone.numeric.primitives.product_rank`), with ``G_0``'s
    rounding and any declared input error entering the bounds; the dimension is
    decided when the four ranks are.

    >>> from allornone.numeric import FloatModel
    >>> m = FloatModel([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    >>> meet_N_dimension(m, np.array([[1.0], [0.0], [1.0]]))   # e0 + e2 spans N
    (1, True)
    >>> meet_N_dimension(m, np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))   # e0, e1: in SG only e0, not in N
    (0, True)
    """
    from allornone.numeric.primitives import ROUNDED_LIMIT, log_odds_rank, product_rank

    (m, d), n, r = model.F.shape, model.G.shape[0], basis.shape[1]
    if (d + n) * (r + n + m) * 2 * d > ROUNDED_LIMIT:
        return None     # (checked before the factors are built: they would not fit a model at scale)
    F, G = np.asarray(model.F, dtype=float), np.asarray(model.G, dtype=float)
    # (against the reference token: the same spans, and ranks, as against the pivot)
    G0, E0 = fl.difference_with_error(G, fl.reference_token(G, model.pivot), model.input_error)
    eps = model.input_error
    EF = eps * np.abs(F) if eps else np.zeros_like(F)
    EB = eps * np.abs(basis) if eps else np.zeros_like(basis)
    A = np.zeros((d + n, 2 * d))
    A[:d, :d], A[d:, d:] = np.eye(d), G0
    EA = np.zeros_like(A)
    EA[d:, d:] = E0
    # the second factor, transposed: columns (c, α, z)
    Bt = np.zeros((2 * d, r + n + m))
    Bt[:d, :r], Bt[:d, r:r + n], Bt[d:, r:r + n], Bt[d:, r + n:] = basis, -G0.T, G0.T, -F.T
    EBt = np.zeros_like(Bt)
    EBt[:d, :r], EBt[:d, r:r + n], EBt[d:, r:r + n], EBt[d:, r + n:] = EB, E0.T, E0.T, EF.T
    tol = model.backend.tolerance
    rK = product_rank(A, Bt.T, EA, EBt.T, tol)
    rG = None if rK is None else product_rank(G0, np.eye(d), E0, None, tol)
    if rG is None:
        return None
    rL = log_odds_rank(F, G0, E0, tol, EF if eps else None)
    rB = product_rank(basis, np.eye(r), EB, None, tol)
    dim = rB[0] + rG[0] + rL[0] - rK[0]
    return dim, bool(rK[1] and rG[1] and rL[1] and rB[1] and 0 <= dim <= rB[0])


def regressor_rank(model, pairs, reading: str = "any"):
    """``rank [f(s), 1]`` (or ``[L[s, :], 1]`` reading ``M``) over the pairs'
    first contexts, as the rank of a product of the model's numbers balanced
    by powers of two (:func:`~allornone.numeric.primitives.product_rank`):
    ``(rank, decided)``, or None where the product is too large to be formed
    correctly rounded. Full row rank means every readout fits: no evidence."""
    from allornone.numeric.balance import balanced
    from allornone.numeric.primitives import affine_rank

    model = balanced((model,))[0]
    A, B = _regressors(model, [s for s, _ in pairs], reading)
    out = affine_rank(A, B, model.backend.tolerance, model.input_error)
    return None if out is None else out[:2]
