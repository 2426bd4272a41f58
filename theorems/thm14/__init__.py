r"""Theorem 14 (relational linearity is all or none) and Appendix D.1.

As encoded here (docs/results/thm14.md). A query ``q`` is a finite set ``S`` of
pairs of context indices ``(s, s⊕q)``; a readout subspace ``Γ ⊆ R^d`` is given
by a ``d x r`` matrix whose columns span it.

* ``(f, g)`` is **relationally linear for q on Γ** if there are ``W`` (``d x d``)
  and ``b`` with ``P_Γ f(s⊕q) = P_Γ (W f(s) + b)`` for every pair; its **input
  subspace** is ``Γ_q = Im(W^T P_Γ)``.
* **Reading M** (``Γ_q ⊆ M``) is decided by regressing the readouts
  ``F_{S⊕q} P_Γ`` on ``[F_S P_M, 1]``; **reading anything** on ``[F_S, 1]``;
  the property holds iff the linear system is consistent
  (:func:`relational_linearity`).
* **Theorem 14.** If ``L = L~`` and ``Γ ⊆ N``, then ``(f, g)`` is relationally
  linear for ``q`` on ``Γ`` reading ``M`` iff ``(f~, g~)`` is, on
  ``Γ~ = (B*|Ñ)^{-1}(Γ)``, reading ``M~``; :func:`transport` carries ``Γ, W, b``
  across with Theorem 5's certificate ``(A*, B*)``.
* **Appendix D.1.** Reading a hidden coordinate (``Γ_q ⊄ M``) is not shared:
  a B.5 twin with a non-linear ``phi`` breaks it.

The record's statement makes the last point a hypothesis that can be dropped:
"``Γ_q ⊆ M``" says that in both models every relational linearity can be had
reading only ``M`` (``RelationallyLinear ⟹ RelationallyLinearReadingM``). Under
it, relationally linear (reading anything) ⟺ relationally linear reading
``M``, and the conclusion is the paper's all-or-none; without it the D.1
instance is a counterexample. "Enough pairs" keeps trivially true instances
(``[F_S, 1]`` of full row rank: every readout fits) from counting as evidence.
The paper's form without the ``Γ_q ⊆ M`` hypothesis is checked on every
instance by the proof step "all or none (reading M)".

>>> from allornone.symbolic import relational as rel
>>> ex = rel.d1_example()
>>> relational_linearity(ex.model, ex.pairs, ex.gamma, reading="any").verdict
'relationally linear'
>>> relational_linearity(ex.model, ex.pairs, ex.gamma, reading="M").verdict
'not relationally linear'
>>> twin = rel.d1_twin(ex.model)
>>> relational_linearity(twin, ex.pairs, transport_gamma(ex.model, twin, ex.gamma), reading="any").verdict
'not relationally linear'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from allornone.decision import Decision, Truth
from allornone.errors import (AllOrNoneError, InputFormatError, RealisationMismatchError, ShapeError,
                              VocabularyError)
from allornone.model import Model
from allornone.symbolic import linalg as ql
from allornone.symbolic import relational as rel
from allornone.theorems import readouts, thm5
from allornone.theorems.readouts import TokenPairs, log_odds_criterion, tokens

__all__ = [
    "READINGS",
    "VERDICTS",
    "NotEquivalentError",
    "TransportError",
    "RelationalLinearity",
    "Transported",
    "Probe",
    "ReadoutSubspace",
    "relational_linearity",
    "tokens",
    "TokenPairs",
    "log_odds_criterion",
    "gamma_in_N",
    "transport_gamma",
    "transport",
    "linear_probing",
    "implied_probe",
    "transport_probe",
    "readout_subspace",
    "GammaInN",
    "EnoughPairs",
    "RelationallyLinear",
    "RelationallyLinearReadingM",
    "RECORD",
]

READINGS = ("M", "any")
VERDICTS = {Truth.HOLDS: "relationally linear", Truth.FAILS: "not relationally linear",
            Truth.UNDECIDED: "undecided"}
PROBE_VERDICTS = {Truth.HOLDS: "probe fits", Truth.FAILS: "probe does not fit", Truth.UNDECIDED: "undecided"}
SUBSPACE_VERDICTS = {Truth.HOLDS: "readouts in the subspace", Truth.FAILS: "readouts not in the subspace",
                     Truth.UNDECIDED: "undecided"}


class NotEquivalentError(AllOrNoneError, ValueError):
    """Transport across models that do not have the same distribution."""


class TransportError(AllOrNoneError, ValueError):
    """A relational linearity that Theorem 14 does not carry across (it does not
    hold, does not read only ``M``, or ``Γ ⊄ N``)."""


# -- input handling -----------------------------------------------------------------

def _check_model(model, what: str = "model"):
    if not isinstance(model, Model):
        raise InputFormatError(f"{what}: expected an ExactModel or a FloatModel, got {type(model).__name__}")
    return model


def _check_reading(reading) -> str:
    if not isinstance(reading, str) or reading not in READINGS:
        raise InputFormatError(f"reading must be 'M' (regress on [F_S P_M, 1]) or 'any' (on [F_S, 1]), "
                               f"got {reading!r}")
    return reading


def _index(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputFormatError(f"{what}: {value!r} is not an integer index")
    return int(value)


def _check_pairs(model, pairs) -> tuple:
    """Pairs ``(s, s⊕q)`` of context indices, validated against ``model``."""
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        raise InputFormatError(f"pairs must be a list of (s, s⊕q) context-index pairs, got {type(pairs).__name__}")
    out = []
    for i, pair in enumerate(pairs):
        # an ordered pair: a set or a dict has no first and second element
        if not isinstance(pair, (tuple, list, np.ndarray)) or len(pair) != 2:
            raise InputFormatError(f"pair {i}: expected two context indices (s, s⊕q), got {pair!r}")
        s, t = (_index(v, f"pair {i}") for v in pair)
        for v in (s, t):
            if not 0 <= v < model.m:
                raise InputFormatError(f"pair {i}: context index {v} is out of range for {model.m} contexts "
                                       f"(0..{model.m - 1})")
        out.append((s, t))
    if not out:
        raise InputFormatError("pairs is empty: a query needs at least one pair (s, s⊕q)")
    return tuple(out)


def _as_matrix(model, X, name: str):
    """``X`` on ``model``'s realisation: exact rationals for an exact model
    (floats rejected), floats for a float model (an exact matrix is rounded)."""
    if model.exact:
        return ql.as_qmatrix(X, name)
    if isinstance(X, ql.QMatrix):
        X = X.to_numpy()
    return model.backend.as_matrix(X, name)


def _gamma(model, gamma):
    """Basis (independent columns, ``d x r``), projector ``P_Γ`` and whether the
    dimension was decided."""
    return _gamma_with_error(model, gamma)[:3]


def _resolves(tol, error: float, size: float) -> bool:
    """Whether a propagated error bound is small enough to support a decision
    that something vanishes (a direction cut from a rank, a fit that holds):
    within ``sqrt(gap) rtol`` of the natural size, between the modelling
    tolerance ``rtol`` and the ``gap rtol`` at which a residual fails. A larger
    bound cannot tell an exact zero from a small value that the tolerance
    would still count, so the decision is left undecided."""
    import math

    return error <= math.sqrt(tol.gap) * tol.rtol * size


def _resolved_rank(X, scale, tol, noise: float, size: float | None = None):
    """:func:`~allornone.numeric.linalg._rank_of`, undecided as well when a
    direction is called zero under a propagated error bound ``noise`` that
    the tolerance does not resolve at ``size`` (default: the largest singular
    value; :func:`_resolves`)."""
    from allornone.numeric.linalg import _rank_of

    r, decided, sv, bound = _rank_of(X, scale, tol, noise)
    if r < min(X.shape) and not _resolves(tol, noise, float(sv[0]) if size is None else size):
        decided = False
    return r, decided, sv, bound


def _silent_coordinates(model):
    """Float side: the coordinates in which every ``g_0(y)`` is exactly zero
    (a boolean mask). ``G - g(y_0)`` is measured with TwoSum and the declared
    input error, so a coordinate whose difference and error both vanish is zero
    in the exact ``G_0`` too: ``SG`` -- hence ``N`` and every readout in it --
    has no component there."""
    import numpy as np

    from allornone.numeric.linalg import difference_with_error

    G0, E0 = difference_with_error(model.G, model.pivot, model.input_error)
    return ~(np.any(G0, axis=0) | np.any(E0, axis=0))


def readout_error(model, rows, basis, P, gamma_error: float = 0.0, in_N: bool = False, direct=None) -> float:
    """Float side: a bound on the spectral norm of the error of ``rows @ P``
    (the readouts ``P_Γ f`` of the given rows of ``F``, or of differences of
    rows) against the exact ``rows P_Γ``.

    Three parts. The computed ``P`` is the projector onto the span of
    ``basis`` up to ``4 sqrt(d) u`` (rounding, orthonormality); that span is
    within the angle ``gamma_error`` of the exact ``Γ`` (twice that in the
    projector); and the product is rounded, entrywise at most
    ``gamma_(d+2) |rows| |P|`` (Higham), so that a coordinate in which ``P`` is
    zero costs nothing, however large. When the exact ``Γ`` lies in ``N``
    (``in_N``: a token readout, a transported ``Γ~``) and the computed basis is
    exactly zero in the coordinates where ``G_0`` is (:func:`_silent_coordinates`),
    both ``P`` and the exact ``P_Γ`` vanish there, and the first two parts act
    only on the rest of each row: a hidden coordinate of ``f``, however large,
    enters neither. (Without ``in_N`` only the rounding part is so confined.)

    ``direct = (a, delta)`` measures instead what the rows see of the basis's
    error: ``|rows (Q - Z)| <= a + |rows| delta`` for the basis ``Q`` and a basis
    ``Z`` of the exact ``Γ`` within ``1/gap`` of it (:func:`_token_readout_residual`).
    The fit of ``rows Q Q^T`` then differs from that of ``rows Z Q^T`` -- consistent
    exactly when the exact readouts are, with the same misfit up to that
    ``1/gap`` -- by at most that much, which replaces the angle's part when
    smaller."""
    import math

    import numpy as np

    from allornone.numeric.linalg import UNIT_ROUNDOFF, norm2

    u = UNIT_ROUNDOFF
    if rows.size == 0 or basis.shape[1] == 0:
        return 0.0
    silent = _silent_coordinates(model)
    confined = bool(np.any(silent)) and not np.any(basis[silent])
    live = rows[:, ~silent] if confined else rows
    n_live = norm2(live)
    # (|E| <= |A| entrywise gives ||E||_2 <= || |A| ||_2)
    product = 1.01 * (model.d + 2) * u * norm2(np.abs(rows) @ np.abs(P))
    n_gamma = n_live if in_N else norm2(rows)
    part = 2 * gamma_error * n_gamma
    if direct is not None:
        part = min(part, direct[0] + direct[1] * n_live)
    return float(part + 4 * math.sqrt(model.d) * u * n_live + product)


def _gamma_with_error(model, gamma):
    """:func:`_gamma` and a bound on the error of the basis (float side: the
    sine of the angle to the exact ``Γ``; a token readout ``Γ_T`` is computed
    through ``P_N`` and carries its error at the size of the token differences)."""
    be = model.backend
    named = isinstance(gamma, readouts.TokenPairs)
    # a readout named by tokens is this model's own Γ_T
    G = readouts.token_readout(model, gamma) if named else _as_matrix(model, gamma, "gamma")
    if G.shape[0] != model.d:
        raise ShapeError(f"gamma: expected a d x r matrix whose columns span Γ (d = {model.d}), got shape "
                         f"{G.shape[0]}x{G.shape[1]}")
    if G.shape[1] == 0:
        return G, be.zeros(model.d, model.d), True, 0.0
    if be.exact or not named:
        basis, decided = be.column_basis(G, be.scale(G))
        return basis, be.projector_onto_rows(basis.T), decided, 0.0
    import numpy as np

    from allornone.numeric.linalg import norm2

    D = np.hstack([model.unembedding_difference(a, b) for a, b in gamma.pairs])
    eps = model.structure.errors.get("N", 0.0)
    # (hidden components of g make the differences large and their projections
    # small: a direction may be called zero under an error that cannot tell)
    scale = be.scale(model.projector_N, D)
    r, decided, sv, bound = _resolved_rank(G, scale, model.tolerance, eps * norm2(D), scale)
    basis = np.linalg.svd(G)[0][:, :r]
    error = eps + (bound / sv[r - 1] if r else 0.0)
    return basis, be.projector_onto_rows(basis.T), decided and model.structure.decided, float(error)


def _token_readout_residual(model, T, basis):
    r"""Float side: what the contexts see of the error of the computed basis
    ``Q`` of a token readout ``Γ_T``, measured, for a basis ``Z`` of the exact
    ``Γ_T`` and any ``rows`` that combine rows of ``F`` (``R_rows`` the same
    combination of the rows of ``R``); None when it cannot be formed (a
    declared input error, entries too large to split). Returns
    ``(R, R_err, C, delta)``: ``R`` and an entrywise bound on its error, so
    that ``|rows (Q - Z)| <= |R_rows C| + | |R_err|_rows | |C| + |rows| delta``.

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
    from allornone.numeric import linalg as fl

    parts = _token_parts(model, T, basis)
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


def _token_parts(model, T, basis):
    """``G = P_N D`` as computed, the token differences ``D + E = g(a) - g(b)``
    exactly (TwoSum) and ``C = V_r S_r^{-1}`` from the SVD of ``G`` at the rank
    of ``basis``; None when that rank exceeds what ``G`` holds, or when the
    model declares an input error (the differences are then not exact)."""
    from allornone.numeric import linalg as fl

    if model.input_error or basis.shape[1] == 0:
        return None
    G = readouts.token_readout(model, T)
    ga = np.vstack([model.G[a] for a, _ in T.pairs]).T
    gb = np.vstack([model.G[b] for _, b in T.pairs]).T
    D, E = fl._two_sum(ga, -gb)          # ga - gb = D + E exactly
    _, S, Vt = np.linalg.svd(G, full_matrices=False)
    r = basis.shape[1]
    if r > S.size or S[r - 1] <= 0:
        return None
    return G, D, E, Vt[:r].T / S[:r]


# Most entries recomputed with correctly rounded dot products by one a posteriori
# bound (beyond, the bound is not formed and the propagated one stands).
_REDO_LIMIT = 1 << 18


def _token_through(model, T, basis):
    r"""Float side: ``(FQ, R, R_err)`` as :func:`_twin_readout_residual` gives
    them, for the computed basis ``Q`` of a token readout ``Γ_T``: ``FQ = F Q``
    correctly rounded and ``|F[x] (Q - Z)| <= |R[x]| + R_err[x]`` for the basis
    ``Z = P_N D C`` of the exact ``Γ_T`` of :func:`_token_readout_residual`
    (within ``1/gap`` of ``Q`` by the rank decision). ``F P_N D = F D`` exactly
    (F4), so ``F (Q - Z) = F Q - (F D) C``, with ``F Q`` and ``F D`` (the exact
    differences, TwoSum) correctly rounded: neither ``|F|`` nor ``Q``'s distance
    from ``G C`` enters. None when it cannot be formed."""
    from allornone.numeric import linalg as fl

    parts = None if model.F.shape[0] * (basis.shape[1] + len(T.pairs)) > _REDO_LIMIT else \
        _token_parts(model, T, basis)
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


def _token_direct(model, T, basis, plus, minus=()):
    """``(a, delta)`` for :func:`readout_error` on the rows ``F[plus] - F[minus]``
    (``minus`` empty, or as long as ``plus``) of a token readout's basis, from
    :func:`_token_readout_residual`; None when that is not available."""
    from allornone.numeric.linalg import norm2

    tok = _token_readout_residual(model, T, basis)
    if tok is None:
        return None
    R, Rerr, C, delta = tok
    Rr, Er = R[list(plus)], Rerr[list(plus)]
    if len(minus):
        Rr, Er = Rr - R[list(minus)], Er + Rerr[list(minus)]
        # (the subtraction's rounding, half an ulp of each entry)
        Er = Er + 1.01 * 2.0 ** -53 * np.abs(Rr)
    return float(norm2(Rr @ C) + norm2(Er) * norm2(C)), delta


# -- a posteriori witnesses of a fit ------------------------------------------------------

def _witness_regressors(model, pairs, reading):
    """Float side: the regressors of :func:`_regress` for :func:`_fit_witness`,
    ``(X, X_err)`` with an entrywise bound on their error against the exact
    ones; None when they cannot be formed (a declared input error, too large).

    Reading anything, ``[F_S, 1]``: the inputs themselves, exact. Reading
    ``M``, ``[L_S, 1]``, whose column space is that of ``[F_S P_M, 1]``
    exactly (:func:`_regress_logits`): the logits ``L_S = F_S G_0^T`` with
    ``G_0 = G - g(y_0)`` split exactly by TwoSum, each entry correctly
    rounded -- no ``P_M`` and no rank enter."""
    from allornone.numeric import linalg as fl
    from allornone.numeric.witness import rounded_matmul

    FS = model.F[[s for s, _ in pairs], :]
    ones = np.ones((len(pairs), 1))
    if model.input_error or not len(pairs):
        return None
    if reading == "any":
        return np.hstack([FS, ones]), 0.0
    if len(pairs) * model.n * (model.d + 1) > _REDO_LIMIT:
        return None
    D, E = fl._two_sum(model.G, -model.G[model.pivot][None, :])   # G_0 = D + E exactly
    out = rounded_matmul([(FS, D.T), (FS, E.T)])
    if out is None:
        return None
    L, L_err = out
    return np.hstack([L, ones]), np.hstack([L_err, np.zeros((len(pairs), 1))])


def _witness_readouts(model, rows, gamma, minus=None):
    """Float side: the readouts of the contexts ``rows`` as values of linear
    functionals that span the readout exactly, ``(Y, Y_err)``; None when they
    cannot be formed.

    ``P_Γ x = P_Γ y`` exactly when ``B^T x = B^T y`` for any ``B`` whose columns
    span ``Γ``, so relational linearity on ``Γ`` is the consistency of the
    readouts ``F_{S⊕q} B`` on the regressors, whichever spanning set. For a
    ``Γ`` given as a matrix, ``B`` is that matrix. For a readout named by
    tokens, ``Γ_T = span P_N (g_0(a) - g_0(b))``, and ``u^T f(x)`` is the
    log-odds ``L[x, a] - L[x, b] = f(x)^T (g(a) - g(b))`` for those ``u``
    (F4): no ``P_N`` enters. Either is formed with correctly rounded dot
    products (the token differences split exactly by TwoSum). With ``minus``
    (as many context indices as ``rows``), the differences of the readouts of
    ``rows`` and ``minus``, each entry rounded once."""
    from allornone.numeric import linalg as fl
    from allornone.numeric.witness import rounded_matmul

    if model.input_error:
        return None
    sides = [model.F[list(rows), :]]
    if minus is not None:
        sides.append(-model.F[list(minus), :])
    if isinstance(gamma, readouts.TokenPairs):
        ga = np.vstack([model.G[a] for a, _ in gamma.pairs]).T
        gb = np.vstack([model.G[b] for _, b in gamma.pairs]).T
        D, E = fl._two_sum(ga, -gb)          # g(a) - g(b) = D + E exactly
        parts = [D, E]
    else:
        parts = [_as_matrix(model, gamma, "gamma")]
    if len(rows) * model.d * parts[0].shape[1] * len(sides) > _REDO_LIMIT:
        return None
    return rounded_matmul([(Fr, B) for Fr in sides for B in parts])


def _witness_source(model, gamma, gamma_error: float, gamma_in_N: bool, seen=None):
    """Float side: the readouts a witness may use for ``gamma`` on ``model``, as a
    function ``(rows, minus=None) -> (Y, Y_err) or None``; None when there are
    none. ``seen`` (:func:`_seen_through`) gives a transported ``Γ~``'s; a
    readout named by tokens, or a ``Γ`` given exactly (no ``gamma_error``, not a
    computed ``Γ~``), gives its own (:func:`_witness_readouts`)."""
    if seen is not None:
        return seen
    if isinstance(gamma, readouts.TokenPairs) or not (gamma_error or gamma_in_N):
        return lambda rows, minus=None: _witness_readouts(model, rows, gamma, minus)
    return None


def _seen_through(model, twin, gamma, in_N, same, cert):
    """Float side: the twin's readouts on ``Γ~`` for a witness, where ``Γ ⊆ N``
    and ``L = L~`` (or EL1--EL3) are decided: ``ũ^T f~(x) = (B* ũ)^T f(x)``, so
    they are the original model's readouts on ``Γ``, whichever basis of ``Γ~``
    was computed. None otherwise (and on the exact side)."""
    if model.backend.exact or not (in_N.holds and (cert.decision.holds or same.holds)):
        return None
    return lambda rows, minus=None: _witness_readouts(model, rows, gamma, minus)


def _input_dimension_on_readouts(model, pairs, gamma) -> int | None:
    """Float side: ``dim Γ_q`` of a fit reading ``M`` that holds, decided on the
    readouts; None when that cannot be told.

    With ``X = [F_S P_M, 1]`` and ``Θ = X^+ Y`` the columns of ``Θ_W`` lie in
    the row space of ``F_S P_M``, on which ``F_S P_M`` is injective, so
    ``dim Γ_q = rank Θ_W = rank F_S P_M Θ_W``; where the fit is exact that is
    ``Y - 1 Θ_1``, and when ``1`` is not in the column space of ``F_S P_M``
    (that of ``L_S``), ``rank [Y, 1] = dim Γ_q + 1``. ``rank [Y, 1] - 1`` is the
    rank of the differences ``Y[i] - Y[0]``, and ``Y`` may be any readouts
    spanning ``Γ`` (:func:`_witness_readouts`). Both ranks are decided on
    correctly rounded entries, against the spectral norm of their entrywise
    error bounds (at most their Frobenius norm) and the SVD's backward error."""
    from allornone.numeric.linalg import svd_noise

    if len(pairs) < 2:
        return None
    rows = [t for _, t in pairs]
    D = _witness_readouts(model, rows[1:], gamma, minus=[rows[0]] * (len(rows) - 1))
    X = _witness_regressors(model, pairs, "M")
    if D is None or X is None:
        return None
    tol = model.tolerance

    def rank(A, err):
        if not A.size:
            return 0, True
        # (scaled by a power of two, so that no square overflows)
        e = float(np.ldexp(1.0, int(np.frexp(float(np.max(np.abs(A))) or 1.0)[1])))
        sv = np.linalg.svd(A / e, compute_uv=False)
        noise = float(np.linalg.norm(err / e)) * (1 + 1e-6) + svd_noise(max(A.shape), float(sv[0]) if sv.size else 0.0)
        return tol.rank(sv, noise=noise)

    L, L_err = X[0][:, :-1], X[1][:, :-1]
    c = float(np.ldexp(1.0, int(np.frexp(float(np.max(np.abs(L))) if L.size else 1.0)[1])))
    r_L, ok_L = rank(L, L_err)
    r_L1, ok_L1 = rank(np.hstack([L, np.full((L.shape[0], 1), c)]), np.hstack([L_err, np.zeros((L.shape[0], 1))]))
    if not (ok_L and ok_L1) or r_L1 != r_L + 1:
        return None                     # 1 may lie in the span of the inputs
    r_D, ok_D = rank(*D)
    return r_D if ok_D else None


def _readouts_nonzero(model, gamma) -> bool | None:
    """Float side: whether a readout is not ``{0}``, decided on its readouts
    over every context; None when that cannot be told.

    For ``Γ ⊆ N`` (a token readout always), ``u -> (f(x)^T u)_x`` is injective
    (F6), so ``Γ != {0}`` exactly when some readout ``f(x)^T u`` is non-zero. The
    readouts are formed correctly rounded with an error bound
    (:func:`_witness_readouts`): an entry larger than its bound is non-zero
    exactly, and entries that are all zero with a zero bound are exactly zero."""
    out = _witness_readouts(model, range(model.m), gamma)
    if out is None:
        return None
    Y, err = out
    if np.any(np.abs(Y) > err):
        return True
    if not np.any(Y) and not np.any(err):
        return False
    return None


def _fit_witness(model, pairs, reading, readout, decision: Decision) -> Decision | None:
    """Float side: "holds", shown by a witness (:func:`allornone.numeric.witness.fit_witness`),
    for a fit the propagated bounds leave undecided; None when none is found.

    ``readout`` is ``(Y, Y_err)`` from :func:`_witness_readouts` (or the same
    functionals measured elsewhere). A fit through inputs of condition ``1e8``
    has an a priori error far above the tolerance, but the refined map's
    residual, formed with correctly rounded dot products, is a rigorous bound
    on the least misfit against the exact data: within ``rtol`` of each
    readout's size, the readouts fit."""
    from allornone.numeric.witness import fit_witness

    if readout is None:
        return None
    regressors = _witness_regressors(model, pairs, reading)
    if regressors is None:
        return None
    Y, Y_err = readout
    X, X_err = regressors
    if X.shape[0] * X.shape[1] * max(Y.shape[1], 1) > _REDO_LIMIT:
        return None
    return fit_witness(X, X_err, Y, Y_err, model.tolerance.rtol).decision(model.tolerance, **decision.detail)


def _check_result(model, result, cls=None, what: str = "result"):
    """``result`` is a :class:`RelationalLinearity` (or ``cls``) computed on a
    model of ``model``'s realisation, dimension and context set."""
    cls = cls or RelationalLinearity
    _check_model(model)
    if not isinstance(result, cls):
        raise InputFormatError(f"{what}: expected a {cls.__name__}, got {type(result).__name__}")
    matrix = result.projector if cls is RelationalLinearity else result.w
    if matrix is not None:
        if isinstance(matrix, ql.QMatrix) != model.exact:
            raise RealisationMismatchError(f"{what} was computed on {'a float' if model.exact else 'an exact'} "
                                           f"model, this one is {'exact' if model.exact else 'float'}")
        if matrix.shape[0] != model.d:
            raise ShapeError(f"{what} was computed on a model of dimension {matrix.shape[0]}, "
                             f"this one has d = {model.d}")
    if cls is RelationalLinearity:
        _check_pairs(model, result.pairs)
    return result


def _ones(be, count: int):
    return be.as_matrix([[1]] * count, "ones")


def _undecided(d: Decision) -> Decision:
    """A verdict whose structure (a rank) is undecided: undecided, whatever its residual said."""
    return Decision(Truth.UNDECIDED, d.residual, d.tolerance, d.detail)


def _mark_undecided(result):
    result.decision, result.decided = _undecided(result.decision), False
    return result


def _regress(model, pairs, Y, y_scale: float, reading: str, y_error: float = 0.0):
    """Regress ``Y`` (``|S| x c``) on ``X = [F_S P_M, 1]`` (reading ``M``) or
    ``[F_S, 1]``: ``(X, Θ = X^+ Y, residual decision, rank X, decided)``.

    Θ is the minimum-norm solution on both sides. On the float side the rank of
    ``X`` is decided with the intercept column brought to the size of the inputs,
    so that the decision does not depend on the units of ``f`` (a column of ones
    next to inputs of size ``1e6`` would otherwise be a singular value of relative
    size ``1e-7``: undecided). ``decided`` also covers ``P_M`` when reading ``M``."""
    be = model.backend
    FS = model.F[[s for s, _ in pairs], :]
    inputs = FS @ model.projector_M if reading == "M" else FS
    ones = _ones(be, len(pairs))
    if be.exact:
        X = be.hstack(inputs, ones)
        rank, decided = be.rank(X)
        Theta = be.pinv(X, rank) @ Y
        dec = be.is_zero(X @ Theta - Y, max(be.scale(X, Theta), y_scale))
        return X, Theta, dec, rank, True
    import numpy as np

    from allornone.numeric import linalg as fl

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
    rank, decided, sv, bound = _resolved_rank(Xs, None, model.tolerance, noise)
    Theta_s = fl.pinv(Xs, rank) @ Y
    Theta, norm_error, ambiguous = _unscaled_minimum_norm(Xs, Theta_s, rank, c, inputs, bound, sv, model.tolerance)
    X = be.hstack(inputs, ones)
    # the fitted readouts move by (error of the inputs)/sigma_r times the readouts
    # and the readouts carry their own error, which a least-squares residual passes on.
    # The residual is judged by its largest entry, and each column's residual moves
    # by at most that times its own readouts' (and coefficients') norm: the largest
    # column norm, not the spectral norm of all of them (up to sqrt(d) larger)
    nY, nT = _largest_column_norm(Y), _largest_column_norm(Theta_s)
    extra = (bound / sv[rank - 1] * nY if rank else 0.0) + noise * nT + y_error
    # the modelling tolerance is relative to the readouts; the rounding of X Θ is
    # at the size of |X| |Θ|, which a badly conditioned basis makes much larger
    size = max(be.scale(Xs, Theta_s), y_scale)
    dec = be.tolerance.decide(float(np.abs(Xs @ Theta_s - Y).max()) if Y.size else 0.0, y_scale,
                              extra + 64 * fl.UNIT_ROUNDOFF * size)
    # (readouts that are exactly zero, Γ = {0}, are fitted exactly by Θ = 0)
    if dec.holds and np.any(Y) and not _resolves(be.tolerance, extra, y_scale):
        # a fit through inputs so ill-conditioned that its error bound is not
        # within the tolerance of the readouts cannot tell a small misfit from
        # none: a change of basis of condition 1e8 shrinks an exact misfit that much
        dec = Decision(Truth.UNDECIDED, dec.residual, dec.tolerance, dec.detail)
    on_logits = False
    if reading == "M" and (dec.undecided or not decided) and model.structure.decided:
        # the same question without P_M: the fit on the logits of S decides it
        # where the error of P_M leaves it open (both decisions are sound; they
        # differ only in what they leave undecided)
        alt = _regress_logits(model, pairs, Y, y_scale, y_error)
        if alt is not None:
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


def _regress_logits(model, pairs, Y, y_scale: float, y_error: float = 0.0):
    r"""Float side, reading ``M``: whether ``Y`` fits ``[F_S P_M, 1]``, decided on
    ``[L_S, 1]`` instead (``L_S = F_S G_0^T``, the logits of the contexts ``S``);
    None when it cannot be formed.

    Exactly, ``G_0 P_M f = G_0 f`` for every context (the logits see only the
    ``M``-component), so ``L_S = F_S B_M (B_M^T G_0^T)`` for a basis ``B_M`` of
    ``M``, and ``B_M^T G_0^T`` (``k x n``) has rank ``k = rank L``: the columns of
    ``L_S`` span those of ``F_S P_M``. The two systems are consistent together,
    and ``L_S`` carries neither ``P_M`` nor its error: its entries are formed
    with correctly rounded dot products (``G_0 = G - g(y_0)`` split exactly by
    TwoSum), accurate to half an ulp."""
    import math

    from allornone.numeric import linalg as fl

    if model.input_error or not len(pairs) or len(pairs) * model.n > _REDO_LIMIT:
        return None
    u = fl.UNIT_ROUNDOFF
    FS = model.F[[s for s, _ in pairs], :]
    D, E = fl._two_sum(model.G, -model.G[model.pivot][None, :])   # G_0 = D + E exactly
    n = D.shape[0]
    L = np.empty((FS.shape[0], n))
    tiny = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for y in range(n):
            out = fl.rounded_dots([(FS, np.broadcast_to(D[y], FS.shape)), (FS, np.broadcast_to(E[y], FS.shape))])
            if out is None:
                return None
            L[:, y], tiny = out[0], tiny + out[1]
        if not np.all(np.isfinite(L)):
            return None
        # (the entrywise error, half an ulp, bounds the spectral norm's through |.|)
        noise = 1.01 * u * fl.norm2(np.abs(L)) + tiny * math.sqrt(L.size)
        ones = np.ones((len(pairs), 1))
        c = float(np.ldexp(1.0, fl.row_exponents(np.array([[float(np.max(np.abs(L))) or 1.0]]))[0]))
        Xs = np.hstack([L, c * ones])
        rank, decided, sv, bound = _resolved_rank(Xs, None, model.tolerance, noise)
        if not decided:
            return None
        Theta = fl.pinv(Xs, rank) @ Y
        nY, nT = _largest_column_norm(Y), _largest_column_norm(Theta)
        extra = (bound / sv[rank - 1] * nY if rank else 0.0) + noise * nT + y_error
        size = max(model.backend.scale(Xs, Theta), y_scale)
        dec = model.tolerance.decide(float(np.abs(Xs @ Theta - Y).max()) if Y.size else 0.0, y_scale,
                                     extra + 64 * u * size)
    if dec.holds and np.any(Y) and not _resolves(model.tolerance, extra, y_scale):
        return None
    return dec if not dec.undecided else None


def _largest_column_norm(A) -> float:
    """An upper bound on the largest Euclidean norm of a column of ``A`` (float
    side), the matrix scaled by a power of two first so that no square overflows
    or underflows (a column of entries ``1e-170`` is not of norm zero)."""
    import numpy as np

    from allornone.numeric import linalg as fl

    if not A.size or not np.any(A):
        return 0.0
    e = int(fl.row_exponents(np.array([[float(np.max(np.abs(A)))]]))[0])
    B = np.ldexp(A, -e)
    return float(np.ldexp(np.sqrt(np.max(np.sum(B * B, axis=0))) * (1 + 4 * fl.UNIT_ROUNDOFF * A.shape[0]), e))


def _unscaled_minimum_norm(Xs, Theta_s, rank: int, c: float, inputs, bound: float, sv, tol):
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
    import numpy as np

    from allornone.numeric import linalg as fl

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
    K = np.linalg.svd(Xs)[2][rank:].T
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


def _input_subspace(be, W, P, readout_scale: float, input_scale: float, noise: float = 0.0):
    """A basis of ``Γ_q = Im(W^T P_Γ)`` and whether its dimension was decided.

    ``W`` maps inputs to readouts, so on the float side its singular values are
    judged against readout size over input size, not against ``W`` itself
    (whose entries may be pure rounding noise) nor the readout size alone, plus
    ``noise``: how far the fitted ``W`` can be from the exact one."""
    scale = readout_scale / input_scale if input_scale else None
    if be.exact or not noise:
        return be.column_basis(W.T @ P, scale)
    import numpy as np

    from allornone.numeric.linalg import svd_noise

    # ``noise`` bounds how far W is from the exact map, so the singular values
    # are judged against it and the SVD's own backward error at |W|; the natural
    # size (readouts over inputs) only says whether that bound says anything
    X = W.T @ P
    sv = np.linalg.svd(X, compute_uv=False)
    bound = svd_noise(max(X.shape), float(sv[0]) if sv.size else 0.0) + noise
    tol = be.tolerance
    r, decided = tol.rank(sv, noise=bound, reference=scale)
    if r < sv.size and scale is not None and not _resolves(tol, noise, scale):
        # a singular value called zero under a propagated error larger than the
        # modelling tolerance resolves: zero or merely small, it cannot tell
        decided = False
    return np.linalg.svd(X)[0][:, :r], decided


# -- relational linearity -------------------------------------------------------------

@dataclass
class RelationalLinearity:
    """Outcome of :func:`relational_linearity`.

    ``decision`` (exact, or three-valued with its tolerance on floats) says
    whether ``P_Γ f(s⊕q) = P_Γ(W f(s) + b)`` on every pair, with ``W`` reading
    ``reading`` (``"M"``: only ``P_M f(s)``; ``"any"``: all of ``f(s)``);
    ``verdict`` says the same in words: ``"relationally linear"``,
    ``"not relationally linear"`` or (floats only) ``"undecided"``. When it
    holds, ``W`` (``d x d``) and ``b`` (``d x 1``) are the minimum-norm fit
    (exact rationals on an exact model), with ``W = P_Γ W`` and, reading ``M``,
    ``W = W P_M``; ``gamma_q`` is a basis of ``Γ_q = Im(W^T P_Γ)`` (columns).
    ``residual`` is ``max |X Θ - F_{S⊕q} P_Γ|`` for the regressors ``X``.
    ``trivial`` is True when ``X`` has full row rank (rank ``|S|``, possible only
    when ``|S| <= rank X <= (dimension of the regressors) + 1``): every readout
    fits, and the verdict is no evidence. ``gamma`` is a basis of ``Γ``,
    ``projector`` is ``P_Γ``.
    """

    decision: Decision
    reading: str
    pairs: tuple
    gamma: Any
    projector: Any
    residual: Any
    regressor_rank: int
    trivial: bool
    W: Any = None
    b: Any = None
    gamma_q: Any = None
    decided: bool = True
    """Float side: whether every rank decision behind the verdict and ``gamma_q`` was decided."""
    rank_decided: bool = True
    """Whether the regressors' rank (hence ``trivial``) was decided."""
    scale: float = 0.0
    """Float side: the scale of the readouts (``max(|X| |Θ|, |F_{S⊕q}| |P_Γ|)``)
    against which the residual was judged."""
    gamma_decided: bool = True
    """Float side: whether the dimension of ``Γ`` (of a token readout ``Γ_T``, computed through ``P_N``) was decided."""

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]

    @property
    def dim_gamma(self) -> int:
        return self.gamma.shape[1]

    @property
    def dim_gamma_q(self) -> int | None:
        return None if self.gamma_q is None else self.gamma_q.shape[1]


def relational_linearity(model, pairs, gamma, reading: str = "M", gamma_error: float = 0.0,
                         gamma_in_N: bool = False, _through=None, _readouts=None) -> RelationalLinearity:
    r"""Decide whether ``model`` is relationally linear for the query given by
    ``pairs`` on ``Γ = span(columns of gamma)``:
    :math:`P_\Gamma f(s\oplus q) = P_\Gamma(W f(s) + b)` for all ``(s, s⊕q)``.

    Reading ``"M"`` regresses ``F_{S⊕q} P_Γ`` on ``[F_S P_M, 1]`` (so that
    ``Γ_q ⊆ M``); reading ``"any"`` on ``[F_S, 1]``; it holds iff that linear
    system is consistent. Exact on an exact model; on a float model the verdict
    is three-valued and undecided when a rank decision was; ``gamma_error``
    (float side) bounds the error of ``gamma`` itself when it was computed (the
    sine of the angle to the exact ``Γ``), which the readouts then carry at the
    size of the rows of ``F``.
    With ``gamma_in_N`` the caller asserts that the exact ``Γ`` lies in ``N``
    (a transported ``Γ~``): its error then reaches only the coordinates in
    which ``g_0`` is not identically zero (:func:`readout_error`).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> r = relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]])
    >>> r.verdict, r.trivial, r.residual
    ('relationally linear', False, Fraction(0, 1))
    >>> r.W.to_fractions(), r.b.to_fractions(), r.gamma_q.to_fractions()
    ([['2', '0'], ['0', '0']], [['0'], ['0']], [['2'], ['0']])
    >>> relational_linearity(m, [(0, 3), (1, 4)], [[1], [0]]).trivial
    True
    >>> relational_linearity(m, [(0, 4), (1, 3), (2, 5)], [[1], [0]]).verdict
    'not relationally linear'
    >>> relational_linearity(m.to_float(), [(0, 3), (1, 4), (2, 5)], [[1.0], [0.0]]).verdict
    'relationally linear'

    ``gamma`` may name the readout by token pairs, ``tokens([(a, b), ...])``:
    it is then the model's own ``Γ_T = span{P_N(g(a) - g(b))}``.

    >>> relational_linearity(m, [(0, 3), (1, 4), (2, 5)], tokens([(1, 0)])).gamma.to_fractions()
    [['1'], ['0']]
    """
    _check_model(model)
    reading = _check_reading(reading)
    pairs = _check_pairs(model, pairs)
    be = model.backend
    basis, P, g_decided, own_error = _gamma_with_error(model, gamma)
    FT = model.F[[t for _, t in pairs], :]
    Y = FT @ P
    y_error = 0.0
    if not be.exact:
        # the readouts carry the rounding of F P_Γ and the error of Γ itself (a
        # token readout lies in N by construction; a given Γ when the caller says so)
        named = isinstance(gamma, readouts.TokenPairs)
        direct = None
        if named and not gamma_error:
            direct = _token_direct(model, gamma, basis, [t for _, t in pairs])
        y_error = readout_error(model, FT, basis, P, float(gamma_error) + own_error, in_N=named or gamma_in_N,
                                direct=direct)
        # A transported Γ~ (``_through``, :func:`_twin_readout_residual`): the
        # readouts (F~_T Q) Q^T from correctly rounded F~_T Q, against a basis Z of
        # the exact Γ~ that the contexts see through the original model. Y' =
        # F~_T Z Q^T fits exactly when the exact readouts do (Q^T Q is invertible),
        # and |Y - Y'| <= |F~_T Q_computed - F~_T Z| |Q| plus the rounding of the product.
        tw = _through(basis) if _through is not None and not named else None
        if named and not gamma_error:
            tw = _token_through(model, gamma, basis)
        if tw is not None:
            from allornone.numeric import linalg as fl

            FQ, R, Rerr = tw[:3]
            idx = [t for _, t in pairs]
            FQt = FQ[idx]
            Yd = FQt @ basis.T
            nQ = fl.norm2(basis) * (1 + 4 * fl.UNIT_ROUNDOFF)
            # (F~_T Q is off the exact F~_T Q by half an ulp, besides R's own bound)
            e_d = (fl.norm2(R[idx]) + fl.norm2(Rerr[idx]) + fl.UNIT_ROUNDOFF * fl.norm2(FQt)) * 1.01 * nQ \
                + 1.01 * (basis.shape[1] + 2) * fl.UNIT_ROUNDOFF * fl.norm2(np.abs(FQt) @ np.abs(basis.T))
            if e_d < y_error:
                Y, y_error = Yd, float(e_d)
    # The modelling tolerance is relative to the readouts themselves: |F_{S⊕q}| |P_Γ|
    # counts a hidden component of f that P_Γ cancels (a change of basis of
    # condition 1e8 makes it 1e8 times the readouts), which would let rtol
    # cover an exact misfit. Their rounding is in y_error (readout_error).
    y_scale = be.scale(FT, P) if be.exact else be.scale(Y)
    X, Theta, decision, rank, r_decided = _regress(model, pairs, Y, y_scale, reading, y_error)
    decided = r_decided and g_decided
    # (a verdict decided on the logits stands although the rank on P_M does not;
    # Γ_q, read off Θ, stays undecided with it)
    if not (decided or ("on_logits" in decision.detail and g_decided)):
        decision = _undecided(decision)
    if decision.undecided and not be.exact:
        # A fit left open by the propagated bounds may still be shown by a
        # witness: readouts spanning Γ exactly (the given basis, a token
        # readout's log-odds, or -- ``_readouts`` -- a transported Γ~'s as the
        # original model sees them), no rank decided. "Holds" only: a witness
        # that cannot be found says nothing.
        source = _witness_source(model, gamma, gamma_error, gamma_in_N, _readouts)
        readout = source([t for _, t in pairs]) if source is not None else None
        shown = _fit_witness(model, pairs, reading, readout, decision)
        if shown is not None:
            decision = shown
    res = RelationalLinearity(decision, reading, pairs, basis, P, decision.residual, rank, rank == len(pairs),
                              decided=decided, rank_decided=r_decided, gamma_decided=g_decided,
                              scale=max(be.scale(X, Theta), be.scale(FT, P)))
    if decision.holds:
        d = model.d
        # Θ = X^+ Y has its columns in Im(X^T), so W^T = Θ[:d] already lies in M when
        # reading M, and Θ P_Γ = Θ; the projections only clear float rounding.
        W = P @ Theta[:d, :].T
        res.W = W @ model.projector_M if reading == "M" else W
        res.b = P @ Theta[d:, :].T
        x = be.scale(X[:, :d])
        if decision.detail.get("intercept_in_span"):
            # the minimum-norm map weighs inputs of size x against the column of
            # ones: its natural size is readouts times x / (x^2 + 1), not over x
            x = (x * x + 1) / x if x else x
        res.gamma_q, ok = _input_subspace(be, res.W, P, res.scale, x, decision.detail.get("theta_error", 0.0))
        res.decided = decided and ok
    return res


def gamma_in_N(model, gamma) -> Decision:
    """``Γ ⊆ N`` (every column of ``gamma`` is fixed by ``P_N``).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0]])
    >>> gamma_in_N(m, [[1], [0]]).holds, gamma_in_N(m, [[0], [1]]).holds
    (True, False)
    """
    _check_model(model)
    be = model.backend
    basis, _, decided = _gamma(model, gamma)
    if basis.shape[1] == 0:
        return be.decision(True)
    d = be.vanishes(basis - model.projector_N @ basis, model.projector_N, basis,
                    extra=model.structure.errors.get("N", 0.0))
    return d if decided and model.structure.decided else _undecided(d)


def _certificate(a, b, certificate):
    _check_model(a)
    a.check_comparable(b)
    if certificate is None:
        return thm5.el_certificate(a, b)
    if not isinstance(certificate, thm5.Certificate):
        raise InputFormatError(f"certificate: expected thm5.el_certificate(model, twin), got "
                               f"{type(certificate).__name__}")
    if certificate.A.shape != (a.d, b.d) or certificate.B.shape != (a.d, b.d):
        raise ShapeError(f"certificate: A* and B* must be {a.d}x{b.d} (from thm5.el_certificate(model, twin))")
    return certificate


def _equivalent_certificate(a, b, certificate):
    """The certificate of ``(a, b)``, or :class:`NotEquivalentError` unless
    ``L = L~`` and it satisfies EL1--EL3."""
    cert = _certificate(a, b, certificate)
    same = thm5.same_distribution(a, b)
    if not same.holds:
        why = "is undecided at the float tolerance" if same.undecided else "fails (L != L~)"
        raise NotEquivalentError(f"same distribution {why}: Theorem 14 transports only within an equivalence "
                                 "class")
    if not cert.decision.holds:
        raise NotEquivalentError(f"the certificate (A*, B*) does not satisfy EL1-EL3 ({cert.decision})")
    return cert


def _transport_gamma(model, twin, gamma, cert):
    """``(Γ~, decided, error, readout_error)``: ``Γ~ = V C`` for a basis ``V`` of
    ``Ñ`` and ``C`` a basis of ``ker (I - P_Γ) B* V``; ``error`` bounds the sine
    of the angle between the computed and the exact ``Γ~``, ``readout_error``
    what the twin's contexts can see of it (float side; 0 when exact): the
    computed basis ``Q`` is within ``readout_error`` (Frobenius) of a basis ``Z``
    of the exact ``Γ~`` up to a part that every ``f~(x)`` is orthogonal to, and
    off ``Z`` only in coordinates where ``g~_0`` is not identically zero, so that
    ``|F~ (Q - Z)| <= |F~ restricted to those| readout_error``
    (:func:`_kernel_residual`). It never exceeds ``error``."""
    be = model.backend
    _, P, decided = _gamma(model, gamma)
    V = twin.basis_N
    if V.shape[1] == 0:
        return be.zeros(twin.d, 0), decided, 0.0, 0.0
    K = (be.eye(model.d) - P) @ cert.B @ V
    if be.exact:
        C = ql.nullspace(K)
        return (rel.integer_columns(V @ C) if C.shape[1] else be.zeros(twin.d, 0)), True, 0.0, 0.0
    from allornone.numeric.linalg import _rank_of, norm2

    # K carries the errors of B* and of the basis of N~ (at the size of B*)
    eps_N = twin.structure.errors.get("N", 0.0)
    noise = cert.errors.get("B", 0.0) + eps_N * norm2(cert.B)
    scale = be.scale(P, cert.B, V)
    tol = twin.tolerance
    r, ok, sv, bound = _rank_of(K, scale, tol, noise)
    equivalent = None
    if not ok:
        # The kernel's dimension is known when its premises are decided: EL3
        # makes B* a bijection from Ñ onto N, so for Γ ⊆ N, dim Γ~ = dim Γ and
        # the exact K has rank r* = dim Ñ - dim Γ. Then no tolerance has to
        # tell its zero singular values from small ones: if the computed
        # sigma_r* clears the noise, the computed kernel of dimension
        # dim Ñ - r* is within bound / sigma_r* of the exact one (Wedin, with
        # the exact sigma_{r*+1} = 0), whatever band the rank fell in.
        equivalent = cert.decision.holds or thm5.same_distribution(model, twin).holds
        known = _known_kernel_rank(model, twin, gamma, cert, decided, V.shape[1]) if equivalent else None
        if known is not None:
            # the noise above leaves out the error of a computed basis of Γ
            # (a token readout's); count it here, where nothing else is checked
            wide = bound + _gamma_with_error(model, gamma)[3] * norm2(cert.B)
            if known == 0 or float(sv[known - 1]) > wide:
                r, ok, bound = known, True, wide
    Ut = V @ np.linalg.svd(K)[2][r:].T
    # the kernel moves by the noise over the smallest singular value kept out of it
    error = eps_N + (bound / sv[r - 1] if r else 0.0)
    readout = error
    low = float(sv[r - 1]) - bound if r else np.inf
    if Ut.shape[1] and low > 0:
        # The a priori noise composes the worst cases of B*, P_N and P~; measure
        # instead how far the computed kernel is from the exact one
        # (:func:`_kernel_residual`; it rests on EL1-EL3, which L = L~ gives by
        # Theorem 5): within the tolerance, the cut directions are zero, and the
        # kernel is off by that over sigma_r (Courant--Fischer, Weyl)
        if equivalent is None:
            equivalent = cert.decision.holds or thm5.same_distribution(model, twin).holds
        with np.errstate(over="ignore", invalid="ignore"):
            tau, eta = _kernel_residual(model, twin, gamma, P, cert, Ut) if equivalent else (np.inf, np.inf)
        if np.isfinite(tau):
            error = min(error, eps_N + (tau / low if r else 0.0))
            readout = min(error, eta + (tau / low if r else 0.0))
        if r < min(K.shape) and not _resolves(tol, noise, scale) and not _resolves(tol, tau, scale):
            # The kernel's dimension is also known when Γ ⊆ N (or the
            # dimension of Γ ∩ N) is decided: EL3 makes B* a bijection from Ñ
            # onto N, so dim Γ~ = dim (Γ ∩ N); a computed rank that agrees
            # with it (its kept singular values clear of the noise band) cuts
            # no direction that might be merely small.
            ok = equivalent and ok and r == _known_kernel_rank(model, twin, gamma, cert, decided, V.shape[1])
    elif r < min(K.shape) and not _resolves(tol, noise, scale):
        ok = False
    ok = ok and decided and twin.structure.decided and model.structure.decided and cert.decided
    return Ut, ok, float(error), float(readout)


def _known_kernel_rank(model, twin, gamma, cert, decided, n) -> int | None:
    """Float side: the exact rank of ``(I - P_Γ) B*`` on ``Ñ`` (``n`` its
    computed dimension), ``dim Ñ - dim Γ``, when every premise of
    ``dim Γ~ = dim (Γ ∩ N)`` is decided: the dimensions of ``Γ``, ``N``,
    ``Ñ`` and the certificate's, and ``Γ ⊆ N`` or else the dimension of
    ``Γ ∩ N`` (the caller has decided EL1--EL3 or ``L = L~``, so that ``B*``
    is a bijection from ``Ñ`` onto ``N``); ``None`` otherwise."""
    if not (decided and model.structure.decided and twin.structure.decided and cert.decided):
        return None
    Q = _gamma(model, gamma)[0]
    inside = gamma_in_N(model, gamma)
    if inside.holds:
        meet = Q.shape[1]
    elif inside.fails:
        # B* maps Γ~ onto Γ ∩ N, of dimension dim Γ - rank (I - P_N) Q for an
        # orthonormal basis Q of Γ; P_N is off by the error of N, and Q by the
        # sine of its angle to the exact Γ (an orthonormal basis of it is
        # within twice that): a token readout's propagated error, or for a
        # data matrix the SVD's backward error over its smallest kept
        # singular value (Wedin; its rank is decided)
        import numpy as np

        from allornone.numeric.linalg import norm2, svd_noise

        eQ = _gamma_with_error(model, gamma)[3]
        if not isinstance(gamma, readouts.TokenPairs):
            G = _as_matrix(model, gamma, "gamma")
            sG = np.linalg.svd(G, compute_uv=False)
            eQ = 4 * svd_noise(max(G.shape), float(sG[0])) / float(sG[Q.shape[1] - 1])
        R = Q - model.projector_N @ Q
        eps = model.structure.errors.get("N", 0.0)
        cut, ok, _, _ = _resolved_rank(R, 1.0, model.tolerance, eps * norm2(Q) + 2 * eQ, 1.0)
        if not ok:
            return None
        meet = Q.shape[1] - cut
    else:
        return None
    known = n - meet
    return known if 0 <= known <= n else None


def _kernel_residual(model, twin, gamma, P, cert, Ut) -> tuple[float, float]:
    r"""Float side: ``(tau, eta)``: an a posteriori bound ``tau`` on
    ``||(I - P_Γ) B* ũ_j||`` (Frobenius over the columns ``ũ_j`` of ``Ut``,
    orthonormal columns in the computed ``Ñ``), for the exact ``P_Γ`` and ``B*``,
    and ``eta`` on the part of ``Ut`` off the exact ``SG~`` (``inf`` unless
    ``Ut`` vanishes where ``g~_0`` does); ``inf`` when they cannot be formed. By Courant--Fischer the singular values of the exact
    ``(I - P_Γ) B*`` on ``Ñ`` beyond the computed rank are then at most about
    ``tau``, and the computed kernel is within ``tau / sigma_r`` of the exact one.

    Needs EL1--EL3 (the caller checks them, or ``L = L~``). Then the exact
    ``u = B* ũ`` lies in ``N`` and reads the contexts as ``ũ`` does: ``B*``
    vanishes on ``Ñ^⊥`` (so on the part ``ũ_⊥`` of ``ũ`` off ``SG~``), and
    ``F u = F~ P~ ũ_S = F~ ũ_S`` for the part ``ũ_S`` in ``SG~`` (F4, EL1, EL3;
    ``SG~ ∩ Ñ^⊥ ⊆ SF~^⊥``). Likewise ``F`` does not see the part of any vector
    in ``SG ∩ N^⊥``. So for the computed ``u_c = B_c ũ``, ``e = P_N P_SG u_c - u``
    lies in ``N`` with ``F e = (F u_c - F~ ũ) - F (I - P_SG) u_c + F~ ũ_⊥``, and
    ``F`` is injective on ``N``: ``|e| <= |F e| / sigma_min(F|N)``.

    The residual ``F u_c - F~ ũ`` is formed with correctly rounded dot products
    (contexts scaled by common powers of two), so the large terms of a hidden
    component cancel exactly. The parts off ``SG`` and ``SG~`` are bounded by
    what the vectors have off the computed bases of ``SG`` (measured) plus those
    bases' angles -- not by the angles of ``N`` and ``Ñ``, which divide by the
    cosines between ``SF`` and ``SG`` -- and are read by ``F`` only in the
    coordinates where ``g_0`` is not identically zero (the vectors vanish in the
    others, checked, as does every exact ``SG``: :func:`_silent_coordinates`)."""
    import math

    from allornone.numeric import linalg as fl
    from allornone.numeric.equivalence import _common_exponents

    u = fl.UNIT_ROUNDOFF
    if Ut.shape[1] == 0:
        return 0.0, 0.0
    VN = model.basis_N
    G = _as_matrix(model, gamma, "gamma") if not isinstance(gamma, readouts.TokenPairs) else None
    if VN.shape[1] == 0 or G is None or G.shape[1] == 0:
        return math.inf, math.inf
    F, Ft = model.F, twin.F
    ex = _common_exponents(F, Ft)
    Fs, Fts = fl.scale_rows(F, ex), fl.scale_rows(Ft, ex)
    Uc = cert.B @ Ut
    d, dt = model.d, twin.d
    sa, sb = model.structure, twin.structure

    def confined(silent, vectors):
        return bool(np.any(silent)) and not np.any(vectors[silent])

    def live_norm(X, silent, vectors):
        # F reads a vector that vanishes where g_0 does only in the other coordinates
        return fl.norm2(X[:, ~silent] if confined(silent, vectors) else X)

    def off_sg(X, BG, eG, dim):
        # |(I - P_SG) X|_F for the exact SG: off the computed basis (measured,
        # with the rounding of the two products) plus the basis's angle
        nX = float(np.linalg.norm(X))
        meas = float(np.linalg.norm(X - BG.T @ (BG @ X)))
        return meas + (eG + 4 * (dim + 2) * u) * nX * 1.01

    sil_a, sil_b = _silent_coordinates(model), _silent_coordinates(twin)
    eta_b = off_sg(Ut, sb.basis_SG, sb.errors.get("SG", 0.0), dt)
    Fb_live = live_norm(Fts, sil_b, Ut)
    Fb_live_confined = confined(sil_b, Ut) or not np.any(sil_b)

    def residual(Uc):
        # F u_c - F~ ũ, each entry correctly rounded (error: half an ulp of itself)
        res = np.empty((F.shape[0], Ut.shape[1]))
        tiny = 0.0
        for j in range(Ut.shape[1]):
            out = fl.rounded_dots([(Fs, np.broadcast_to(Uc[:, j], Fs.shape)),
                                   (Fts, np.broadcast_to(-Ut[:, j], Fts.shape))])
            if out is None:
                return None, 0.0
            res[:, j] = out[0]
            tiny += out[1]
        return res, tiny

    # The bound holds for any u_c; B_c ũ carries the certificate's own error,
    # which iterative refinement on the accurate residual removes: a step
    # within the computed N by least squares on F (the bases are the model's own)
    res, tiny = residual(Uc)
    if res is None:
        return math.inf, math.inf
    FV = Fs @ VN
    for _ in range(2):
        step = VN @ np.linalg.lstsq(FV, res, rcond=None)[0]
        new_res, new_tiny = residual(Uc - step)
        if new_res is None or not np.linalg.norm(new_res) < np.linalg.norm(res):
            break
        Uc, res, tiny = Uc - step, new_res, new_tiny
    eta_a = off_sg(Uc, sa.basis_SG, sa.errors.get("SG", 0.0), d)
    Fa_live = live_norm(Fs, sil_a, np.hstack([Uc, VN]))
    n_Fe = float(np.linalg.norm(res)) * (1 + 2 * u) + tiny * math.sqrt(res.size) \
        + Fa_live * eta_a + Fb_live * eta_b
    # sigma_min of F on the exact N, from F on the computed basis and the angle of N
    e_v = sa.errors.get("N", 0.0) + 4 * math.sqrt(d) * u
    s_min = float(np.linalg.svd(FV, compute_uv=False)[-1]) - 1.01 * (d + 2) * u * float(
        np.linalg.norm(np.abs(Fs) @ np.abs(VN)))
    low = s_min * (1 - 2 * e_v) - Fa_live * e_v
    if low <= 0 or not math.isfinite(n_Fe):
        return math.inf, math.inf
    nU = float(np.linalg.norm(Uc))
    # u_c - u = e + (I - P_N P_SG) u_c: its part off the computed N (measured)
    # and the angle of N, and its part off SG
    off_N = float(np.linalg.norm(Uc - VN @ (VN.T @ Uc))) + (e_v + 4 * (d + 2) * u) * nU * 1.01
    e_u = n_Fe / low + off_N + eta_a
    # (I - P_Γ) u_c with the computed projector, plus its error: the basis of Γ
    # was computed from the given columns (Wedin: their SVD's backward error
    # over the smallest kept singular value)
    g_err = fl.row_basis_with_error(G.T, model.backend.scale(G), model.tolerance)[2]
    kappa = float(np.linalg.norm(Uc - P @ Uc)) * 1.01 + (2 * g_err + 8 * math.sqrt(d) * u) * nU
    tau, eta = float(kappa + e_u), float(eta_b if Fb_live_confined else math.inf)
    # (a sum of squares may overflow at the extremes of binary64: no bound then)
    return (tau if math.isfinite(tau) else math.inf), (eta if math.isfinite(eta) else math.inf)


def _twin_readout_residual(model, twin, gamma, basis):
    r"""Float side: the twin's readouts on a computed basis ``Q`` of ``Γ~``,
    measured through the original model's contexts. Returns
    ``(FQ, R, R_err, Rc)`` (one row per context) or None: ``FQ`` is ``F~ Q``, each
    entry correctly rounded, and ``|F~[x] (Q - Z)| <= |R[x]| + R_err[x]``
    (entrywise) for a basis ``Z`` of the exact ``Γ~`` within ``1/gap`` of ``Q``.

    Needs ``Γ ⊆ N`` and EL1--EL3 (the caller checks them, or ``L = L~``). Then
    ``B*`` maps ``Ñ`` onto ``N``, and for ``ũ ∈ Ñ`` the exact ``F B* ũ = F~ ũ``
    (:func:`_kernel_residual`). For any ``Rc`` the columns ``w = G Rc`` of the
    given ``G`` lie in ``Γ ⊆ N``, so ``Z = (B*|Ñ)^{-1}(G Rc)`` lies in ``Γ~`` and
    ``F~ Z = (F G) Rc`` exactly: the twin's readouts are the original model's,
    and ``F~ (Q - Z) = F~ Q - (F G) Rc`` is measured with correctly rounded dot
    products -- neither the certificate's error nor that of ``Γ~`` enters.
    ``Rc`` is the least-squares fit of ``F~ Q`` by ``F G``.

    ``Z`` is close to ``Q``: ``e = P_Ñ P_SG~ Q - Z`` lies in ``Ñ``, on which
    ``F~`` is injective, with ``F~ e = F~ (Q - Z) - F~ (I - P_SG~) Q`` (``F~`` does
    not see ``SG~ ∩ Ñ^⊥``), and ``Q - Z = e + (I - P_Ñ P_SG~) Q``; the parts off
    ``Ñ`` and ``SG~`` are measured off the computed bases plus their angles. So
    ``Z`` has the dimension of ``Q`` and the fit of ``F~ Z`` has the misfit of
    the exact readouts up to that factor; beyond ``1/gap`` the bound is not used."""
    import math

    from allornone.numeric import linalg as fl

    if isinstance(gamma, readouts.TokenPairs) or model.input_error or twin.input_error or basis.shape[1] == 0:
        return None
    u = fl.UNIT_ROUNDOFF
    G = _as_matrix(model, gamma, "gamma")
    F, Ft = model.F, twin.F
    r, rg = basis.shape[1], G.shape[1]
    if rg == 0 or Ft.shape[0] * (r + rg) > _REDO_LIMIT:
        return None

    def dots(A, X):
        # A X, each entry correctly rounded; (values, underflow bound)
        out, tiny = np.empty((A.shape[0], X.shape[1])), 0.0
        for j in range(X.shape[1]):
            got = fl.rounded_dots([(A, np.broadcast_to(X[:, j], A.shape))])
            if got is None:
                return None, 0.0
            out[:, j], tiny = got[0], tiny + got[1]
        return out, tiny

    with np.errstate(over="ignore", invalid="ignore"):
        FQ, t1 = dots(Ft, basis)
        H, t2 = dots(F, G)
        if FQ is None or H is None:
            return None
        Rc = np.linalg.lstsq(H, FQ, rcond=None)[0]
        HR = H @ Rc
        R = FQ - HR
        # FQ and H to half an ulp (and underflow), the product H Rc (Higham) with
        # H's own error carried by |Rc|, and the subtraction's rounding
        Rerr = 1.01 * u * (np.abs(FQ) + np.abs(R)) + 1.01 * (rg + 3) * u * (np.abs(H) @ np.abs(Rc)) \
            + t1 + t2 * float(np.abs(Rc).sum())
        if not (np.all(np.isfinite(R)) and np.all(np.isfinite(Rerr))):
            return None
        # how far Z is from Q, in rows scaled by powers of two (exact; any scaling
        # of the contexts keeps F~ injective on Ñ)
        ex = fl.row_exponents(Ft)
        Fs = fl.scale_rows(Ft, ex)
        Rs = fl.scale_rows(np.abs(R) + Rerr, ex)
        sb = twin.structure
        V, dt = twin.basis_N, twin.d
        if V.shape[1] < r:
            return None
        silent = _silent_coordinates(twin)
        # (F~ reads vectors that vanish where g~_0 does only in the other coordinates)
        confined = np.any(silent) and not np.any(basis[silent]) and not np.any(V[silent])
        live = Fs[:, ~silent] if confined else Fs
        BG = sb.basis_SG
        nQ = float(np.linalg.norm(basis))
        eta = float(np.linalg.norm(basis - BG.T @ (BG @ basis))) \
            + (sb.errors.get("SG", 0.0) + 4 * (dt + 2) * u) * nQ * 1.01
        e_v = sb.errors.get("N", 0.0) + 4 * math.sqrt(dt) * u
        FV = Fs @ V
        s_min = float(np.linalg.svd(FV, compute_uv=False)[-1]) - 1.01 * (dt + 2) * u * float(
            np.linalg.norm(np.abs(Fs) @ np.abs(V)))
        n_live = fl.norm2(live)
        low = s_min * (1 - 2 * e_v) - n_live * e_v
        if not low > 0:
            return None
        e = (float(np.linalg.norm(Rs)) * 1.01 + n_live * eta) / low
        off_N = float(np.linalg.norm(basis - V @ (V.T @ basis))) + (e_v + 4 * (dt + 2) * u) * nQ * 1.01
        close = e + off_N + eta
    if not (math.isfinite(close) and close * twin.tolerance.gap <= 1.0):
        return None
    return FQ, R, Rerr, Rc


def transport_gamma(model, twin, gamma, certificate=None):
    r"""``Γ~ = (B*|Ñ)^{-1}(Γ)``: the readouts ``ũ ∈ Ñ`` with ``B* ũ ∈ Γ``
    (columns of a ``d~ x r~`` matrix; for ``Γ ⊄ N`` this is the preimage of
    ``Γ ∩ N``). ``certificate`` defaults to ``thm5.el_certificate(model, twin)``.

    >>> from allornone.symbolic import ExactModel
    >>> a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0]])
    >>> b = ExactModel([[2], [0]], [[0], ["1/2"]])
    >>> transport_gamma(a, b, [[1], [0]]).to_fractions()
    [['1']]
    """
    cert = _certificate(model, twin, certificate)
    return _transport_gamma(model, twin, gamma, cert)[0]


@dataclass
class Transported:
    """Outcome of :func:`transport`: ``gamma`` (``Γ~``), ``W``, ``b`` on the twin
    (``W~ = P_Γ~ B*^T W A* P~_M~``, ``b~ = P_Γ~ B*^T b``, so ``Γ~_q ⊆ M~`` by
    construction); ``decision``: they fit on the twin (``verdict`` in words, as
    for :class:`RelationalLinearity`); ``result``: the same as a
    :class:`RelationalLinearity` of the twin; ``verified``: the twin re-decided
    from scratch by :func:`relational_linearity` on ``Γ~``, reading ``M``."""

    gamma: Any
    W: Any
    b: Any
    decision: Decision
    result: RelationalLinearity
    verified: RelationalLinearity

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]


def transport(model, twin, result: RelationalLinearity, certificate=None) -> Transported:
    r"""Carry a relational linearity of ``model`` reading ``M`` to ``twin``
    (Theorem 14's proof, docs/results/thm14.md): with Theorem 5's certificate
    ``(A*, B*)``, ``Γ~ = (B*|Ñ)^{-1}(Γ)``,
    :math:`\tilde W^\top \tilde u = \tilde P_{\tilde M} A^{*\top} W^\top B^* \tilde u`,
    :math:`\tilde u^\top \tilde b = u^\top b` with ``u = B* ũ``; then check the
    fit on the twin and re-decide it there from scratch.

    Raises :class:`NotEquivalentError` unless ``L = L~`` and
    :class:`TransportError` unless ``result`` holds with ``Γ_q ⊆ M`` and ``Γ ⊆ N``.

    >>> from allornone.symbolic import ExactModel, relational as rel
    >>> from allornone.symbolic.generators import b5_twin
    >>> inst = rel.plant(0, k=1, hidden=1, gamma_dim=1)
    >>> twin = b5_twin(inst.model, 1, a=2, b=1)
    >>> r = relational_linearity(inst.model, inst.pairs, inst.gamma)
    >>> t = transport(inst.model, twin, r)
    >>> t.verdict, t.verified.verdict, t.gamma.shape
    ('relationally linear', 'relationally linear', (4, 1))
    """
    _check_result(model, result)
    cert = _equivalent_certificate(model, twin, certificate)
    be = model.backend
    if not result.holds:
        raise TransportError(f"the relational linearity to transport does not hold ({result.decision})")
    sM = model.structure
    if not be.vanishes(result.gamma_q - sM.P_M @ result.gamma_q, sM.P_M, result.gamma_q).holds:
        raise TransportError("Γ_q ⊄ M: the fit reads coordinates the distribution does not determine "
                             "(Appendix D.1); Theorem 14 does not transport it")
    if not gamma_in_N(model, result.gamma).holds:
        raise TransportError("Γ ⊄ N: Theorem 14 needs the readouts inside N")
    gt, gt_decided, gt_error, _ = _transport_gamma(model, twin, result.gamma, cert)
    _, Pt, _ = _gamma(twin, gt)
    Wt = Pt @ cert.B.T @ result.W @ cert.A @ twin.projector_M
    bt = Pt @ cert.B.T @ result.b
    pairs = result.pairs
    FS = twin.F[[s for s, _ in pairs], :]
    FT = twin.F[[t for _, t in pairs], :]
    scale = max(be.scale(FS, Wt.T), be.scale(FT, Pt), be.scale(bt))
    # Wt = Pt Wt and bt = Pt bt, so the fitted readouts need no further projection.
    decision = be.is_zero(FT @ Pt - FS @ Wt.T - _ones(be, len(pairs)) @ bt.T, scale)
    verified = relational_linearity(twin, pairs, gt, "M")
    gq, ok = _input_subspace(be, Wt, Pt, scale, be.scale(FS @ twin.projector_M))
    if not gt_decided:
        decision = _undecided(decision)
        _mark_undecided(verified)
    as_result = RelationalLinearity(decision, "M", pairs, gt, Pt, decision.residual, verified.regressor_rank,
                                    verified.trivial, Wt, bt, gq, gt_decided and ok, verified.rank_decided, scale)
    return Transported(gt, Wt, bt, decision, as_result, verified)


# -- implied properties -----------------------------------------------------------------

@dataclass
class Probe:
    """A relational linear probe: ``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on
    every pair. ``decision`` says it fits (and, for :func:`implied_probe`, that
    ``P_N(g(a) - g(b)) ∈ Γ`` and ``w ∈ Γ_q ⊆ M``); ``verdict`` in words:
    ``"probe fits"``, ``"probe does not fit"`` or (floats only) ``"undecided"``.
    ``w`` is ``d x 1``, ``c`` a number (exact on an exact model);
    ``applicable`` (implied probes) whether ``P_N(g(a) - g(b)) ∈ Γ``; ``trivial``
    (:func:`linear_probing`) whether the regressors have full row rank."""

    decision: Decision
    tokens: tuple
    w: Any = None
    c: Any = None
    residual: Any = 0
    trivial: bool = False
    applicable: Decision | None = None

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return PROBE_VERDICTS[self.decision.truth]


def _tokens(model, a, b) -> tuple[int, int]:
    out = []
    for v in (a, b):
        v = _index(v, "token")
        if not 0 <= v < model.n:
            raise VocabularyError(f"token index {v} is out of range for {model.n} tokens (0..{model.n - 1})")
        out.append(v)
    return tuple(out)


def _target_log_odds(model, pairs, a, b):
    """``log p(a|s⊕q) - log p(b|s⊕q)`` for every pair (``|S| x 1``), from ``L``."""
    rows = model.log_odds()[[t for _, t in pairs], :]
    # two-step indexing: NumPy would broadcast L[rows, [a]] to a 1-D array
    return rows[:, [a]] - rows[:, [b]]


def _probe_fit(model, pairs, a, b, w, c):
    """``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on every pair."""
    be = model.backend
    FS = model.F[[s for s, _ in pairs], :]
    r = _target_log_odds(model, pairs, a, b) - (FS @ w + _ones(be, len(pairs)) * c)
    return be.is_zero(r, max(be.scale(FS, w), model.log_odds_scale(), abs(float(c))))


def linear_probing(model, pairs, a, b, reading: str = "M") -> Probe:
    """Decide whether the log-odds of token ``a`` against ``b`` after ``s⊕q``
    are an affine function ``w^T f(s) + c`` of ``f(s)`` on the pairs, with ``w``
    in ``M`` (reading ``"M"``) or anywhere (``"any"``), by regression (the same
    regressors as :func:`relational_linearity`; ``w``, ``c`` minimum-norm).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> p = linear_probing(m, [(0, 3), (1, 4), (2, 5)], 1, 0)
    >>> p.verdict, p.w.to_fractions(), p.c
    ('probe fits', [['2'], ['0']], Fraction(0, 1))
    >>> linear_probing(m, [(0, 4), (1, 3), (2, 5)], 1, 0).verdict
    'probe does not fit'
    """
    _check_model(model)
    reading = _check_reading(reading)
    pairs = _check_pairs(model, pairs)
    a, b = _tokens(model, a, b)
    y = _target_log_odds(model, pairs, a, b)
    _, theta, dec, rank, _ = _regress(model, pairs, y, model.log_odds_scale(), reading)
    out = Probe(dec, (a, b), residual=dec.residual, trivial=rank == len(pairs))
    if dec.holds:
        out.w = theta[: model.d, :]
        out.c = model.backend.entry(theta, model.d, 0)
    return out


def implied_probe(model, result: RelationalLinearity, a, b) -> Probe:
    """The probe that a relational linearity reading ``M`` implies (see
    docs/results/thm14.md): if ``u = P_N(g(a) - g(b)) ∈ Γ`` then ``w = W^T u ∈ Γ_q ⊆ M`` and
    ``c = b^T u`` give ``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on ``S``.
    ``applicable`` says whether ``u ∈ Γ``; ``decision`` that ``u ∈ Γ``, the
    result holds, ``w ∈ M`` and the probe fits.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> r = relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]])
    >>> p = implied_probe(m, r, 1, 0)
    >>> p.verdict, p.applicable.holds, p.w.to_fractions(), p.c
    ('probe fits', True, [['2'], ['0']], Fraction(0, 1))
    """
    _check_result(model, result)
    a, b = _tokens(model, a, b)
    be = model.backend
    u = model.projector_N @ model.unembedding_difference(a, b)
    in_gamma = be.vanishes(u - result.projector @ u, result.projector, u)
    if not (in_gamma.holds and result.holds):
        return Probe(Decision.all([in_gamma, result.decision]), (a, b), applicable=in_gamma)
    w = result.W.T @ u
    c = be.entry(result.b.T @ u, 0, 0)
    fit = _probe_fit(model, result.pairs, a, b, w, c)
    in_M = be.vanishes(w - model.projector_M @ w, model.projector_M, w)
    return Probe(Decision.all([in_gamma, fit, in_M]), (a, b), w, c, fit.residual, applicable=in_gamma)


def transport_probe(model, twin, probe: Probe, pairs, certificate=None) -> Probe:
    """The probe ``w``, ``c`` of ``model`` (``w ∈ M``) carried to ``twin`` by the
    input transport ``w~ = P~_M~ A*^T w``, ``c~ = c``, and checked there.

    Raises :class:`NotEquivalentError` unless ``L = L~`` and
    :class:`TransportError` unless the probe fits with ``w ∈ M``."""
    _check_result(model, probe, Probe, "probe")
    cert = _equivalent_certificate(model, twin, certificate)
    if not probe.holds:
        raise TransportError(f"the probe to transport does not hold ({probe.decision})")
    be = model.backend
    if not be.vanishes(probe.w - model.projector_M @ probe.w, model.projector_M, probe.w).holds:
        raise TransportError("the probe reads outside M (w ∉ M): the input transport does not carry it")
    pairs = _check_pairs(twin, pairs)
    wt = twin.projector_M @ cert.A.T @ probe.w
    a, b = probe.tokens
    fit = _probe_fit(twin, pairs, a, b, wt, probe.c)
    return Probe(fit, (a, b), wt, probe.c, fit.residual, applicable=probe.applicable)


@dataclass
class ReadoutSubspace:
    """The readouts ``P_Γ f(s⊕q)`` lie in ``offset + span(directions)``, with
    ``offset = P_Γ b`` and ``directions`` a basis of ``P_Γ W(Γ_q)``, of dimension
    ``dim`` (``= dim Γ_q``, as ``W = P_Γ W``). ``readout_dim`` is the affine
    dimension of the readouts themselves, computed from the readouts alone (a
    property of the distribution); ``decision`` says that the readouts lie in
    the affine subspace and ``readout_dim <= dim``; ``verdict`` in words:
    ``"readouts in the subspace"``, ``"readouts not in the subspace"`` or
    (floats only) ``"undecided"``."""

    decision: Decision
    offset: Any
    directions: Any
    dim: int
    dim_gamma_q: int
    readout_dim: int

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return SUBSPACE_VERDICTS[self.decision.truth]


def readout_subspace(model, result: RelationalLinearity) -> ReadoutSubspace:
    """Decide the linear-subspace property implied by ``result`` (see
    docs/results/thm14.md): every ``P_Γ f(s⊕q) - P_Γ b`` lies in ``P_Γ W(Γ_q)``, a subspace
    of dimension at most ``dim Γ_q``.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> sub = readout_subspace(m, relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]]))
    >>> sub.verdict, sub.dim, sub.readout_dim, sub.directions.to_fractions()
    ('readouts in the subspace', 1, 1, [['2'], ['0']])
    """
    _check_result(model, result)
    if not result.holds:
        raise TransportError("the linear-subspace property is implied only by a relational linearity that holds")
    be = model.backend
    P, pairs = result.projector, result.pairs
    FS = model.F[[s for s, _ in pairs], :]
    FT = model.F[[t for _, t in pairs], :]
    ones = _ones(be, len(pairs))
    Rd = FT @ P - ones @ (P @ result.b).T  # readouts minus the offset, as rows
    # P_Γ W(Γ_q) = Im(P_Γ W W^T P_Γ) = Im(W), judged on the scale of W as in Γ_q
    directions, dd = _input_subspace(be, result.W.T, be.eye(model.d), result.scale, be.scale(FS))
    dim = directions.shape[1]
    if dim:
        inside = be.vanishes(Rd.T - be.projector_onto_rows(directions.T) @ Rd.T, Rd, P)
    else:
        inside = be.vanishes(Rd, FT, P)
    readouts = FT @ P
    rdim, rdec = be.rank(readouts - ones @ readouts[[0], :], be.scale(FT, P))
    dec = Decision.all([inside, be.decision(rdim <= dim, decided=dd and rdec, readout_dim=rdim, dim=dim)])
    return ReadoutSubspace(dec, P @ result.b, directions, dim, result.gamma_q.shape[1], rdim)


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.thm14.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample, EnoughPairs, GAMMA_T, GammaInN, KINDS, ReadoutsSeen, RelationallyLinear, RelationallyLinearReadingM  # noqa: E402,F401
