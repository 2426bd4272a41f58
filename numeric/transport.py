r"""Theorem 14's transport and linear steering in floats: the rounding
arguments behind the transported readout subspace ``Γ~`` and the transported
map (docs/float-verdicts.md).

* the transport's kernel ``ker (I - P_Γ) B* V`` (:func:`transported_kernel`,
  :func:`kernel_residual`);
* steering's translations (:func:`translation`) and whether the transported
  map is ``P_Γ~`` (:func:`transported_identity`, :func:`identity_by_inclusion`).

What a bound can decide, the readouts and the regression are in
:mod:`allornone.numeric.relational`; like it, this module knows no result's
objects.
"""
from __future__ import annotations

import math

import numpy as np

from allornone.decision import Decision
from allornone.numeric import linalg as fl
from allornone.numeric import relational as fr
from allornone.numeric import witness as fw

__all__ = ["identity_by_inclusion", "kernel_residual", "map_error", "translation", "translation_witness", "transported_identity", "transported_kernel"]


# -- the transport's kernel ---------------------------------------------------------------

def transported_kernel(model, twin, K, P, V, B, B_error: float, G, equivalent, known_rank, gamma_error):
    """``Γ~ = V C`` for a basis ``V`` of ``Ñ`` and ``C`` a basis of the kernel of
    ``K = (I - P_Γ) B* V``, as computed: ``(Ut, ok, error, readout)``, ``ok``
    whether its dimension was decided, ``error`` a bound on the sine of its
    angle to the exact ``Γ~`` and ``readout`` on what the twin's contexts can
    see of it (:func:`kernel_residual`).

    ``B`` is the certificate's ``B*`` and ``B_error`` its error; ``G`` the given
    columns of ``Γ`` (None for a readout named by tokens). What needs the
    theorem's own decisions comes as functions: ``equivalent()`` whether EL1--EL3
    or ``L = L~`` is decided (asked at most once, and only where needed),
    ``known_rank()`` the exact rank of ``K`` where its premises are decided
    (else None), ``gamma_error()`` the error of a computed basis of ``Γ``."""
    # K carries the errors of B* and of the basis of N~ (at the size of B*)
    eps_N = twin.structure.errors.get("N", 0.0)
    noise = B_error + eps_N * fl.norm2(B)
    scale = model.backend.scale(P, B, V)
    tol = twin.tolerance
    r, ok, sv, bound = fl._rank_of(K, scale, tol, noise)
    # The kernel's dimension is that of Γ ∩ N where its premises are decided:
    # EL3 makes B* a bijection from Ñ onto N, so dim Γ~ = dim (Γ ∩ N) and the
    # exact K has rank r* = dim Ñ - dim (Γ ∩ N). No tolerance then has to tell
    # its zero singular values from small ones: if the computed sigma_r*
    # clears the noise, the computed kernel of dimension dim Ñ - r* is within
    # bound / sigma_r* of the exact one (Wedin, with the exact sigma_{r*+1} = 0).
    # Between equivalent models a computed rank without r* decides nothing;
    # otherwise (no theorem ties Γ~ to Γ) only one whose noise the tolerance resolves.
    is_equivalent = equivalent()
    known = known_rank() if is_equivalent else None
    if is_equivalent:
        ok = False
        if known is not None:
            # the noise above leaves out the error of a computed basis of Γ
            # (a token readout's); count it here, where nothing else is checked
            wide = bound + gamma_error() * fl.norm2(B)
            if known == 0 or float(sv[known - 1]) > wide:
                r, ok, bound = known, True, wide
    elif r < min(K.shape) and not fr.resolves(tol, noise, scale):
        ok = False
    Ut = V @ fl.svd(K, full_matrices=True)[2][r:].T
    # the kernel moves by the noise over the smallest singular value kept out of it
    error = eps_N + (bound / sv[r - 1] if r else 0.0)
    readout = error
    low = float(sv[r - 1]) - bound if r else np.inf
    if Ut.shape[1] and low > 0 and is_equivalent:
        # The a priori noise composes the worst cases of B*, P_N and P~; measure
        # instead how far the computed kernel is from the exact one
        # (:func:`kernel_residual`; it rests on EL1-EL3, which L = L~ gives by
        # Theorem 5): within the tolerance, the cut directions are zero, and the
        # kernel is off by that over sigma_r (Courant--Fischer, Weyl)
        with np.errstate(over="ignore", invalid="ignore"):
            tau, eta = kernel_residual(model, twin, G, P, B, Ut)
        if np.isfinite(tau):
            error = min(error, eps_N + (tau / low if r else 0.0))
            readout = min(error, eta + (tau / low if r else 0.0))
    return Ut, ok, float(error), float(readout)


def kernel_residual(model, twin, G, P, B, Ut) -> tuple[float, float]:
    r"""``(tau, eta)``: an a posteriori bound ``tau`` on ``||(I - P_Γ) B* ũ_j||``
    (Frobenius over the columns ``ũ_j`` of ``Ut``, orthonormal columns in the
    computed ``Ñ``), for the exact ``P_Γ`` and ``B*`` (``B`` the computed one,
    ``G`` the given columns of ``Γ``; None for a readout named by tokens), and
    ``eta`` on the part of ``Ut`` off the exact ``SG~`` (``inf`` unless ``Ut``
    vanishes where ``g~_0`` does); ``inf`` when they cannot be formed. By
    Courant--Fischer the singular values of the exact ``(I - P_Γ) B*`` on ``Ñ``
    beyond the computed rank are then at most about ``tau``, and the computed
    kernel is within ``tau / sigma_r`` of the exact one.

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
    others, checked, as does every exact ``SG``: :func:`silent_coordinates`)."""
    from allornone.numeric.equivalence import _common_exponents

    u = fl.UNIT_ROUNDOFF
    if Ut.shape[1] == 0:
        return 0.0, 0.0
    VN = model.basis_N
    if VN.shape[1] == 0 or G is None or G.shape[1] == 0:
        return math.inf, math.inf
    F, Ft = model.F, twin.F
    ex = _common_exponents(F, Ft)
    Fs, Fts = fl.scale_rows(F, ex), fl.scale_rows(Ft, ex)
    Uc = B @ Ut
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

    sil_a, sil_b = fr.silent_coordinates(model), fr.silent_coordinates(twin)
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
    s_min = float(fl.svd(FV, compute_uv=False)[-1]) - 1.01 * (d + 2) * u * float(
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


# -- steering (W = I) ---------------------------------------------------------------------

def translation(model, pairs, FS, FT, D, basis, P, gamma_error: float, in_N: bool, token=None):
    """Whether every row of the readouts' differences ``D = (F_T - F_S) P`` is
    the same, ``(decision, D)`` (``D`` formed through ``F`` where that bounds it
    better; ``gamma_error``, ``in_N`` and ``token`` as in
    :func:`readouts_with_error`).

    Each row of ``D`` carries the error of ``Γ`` (a token readout's ``P_N``, a
    transported ``Γ~``) and the rounding of the product, confined to the
    coordinates that can carry a readout (:func:`readout_error`), and the
    subtraction's rounding (at most ``u |f(s⊕q) - f(s)|`` entrywise, read
    through ``P``); a row of the residual ``D - 1 D[0]`` is the difference of two
    rows of ``D``. The modelling tolerance is relative to the readouts'
    differences, not to ``|f| |P_Γ|``, which counts hidden components that
    ``P_Γ`` cancels."""
    be = model.backend
    diff = FT - FS
    u = fl.UNIT_ROUNDOFF
    targets, sources = [t for _, t in pairs], [s for s, _ in pairs]
    # what the contexts see of a token readout's error, measured; the computed
    # differences are off the exact ones by their rounding, which reads the
    # basis's whole error (below)
    direct = fr.token_direct(model, *token, basis, targets, sources) if token is not None else None
    per_row = fr.readout_error(model, diff, basis, P, gamma_error, in_N=in_N, direct=direct) \
        + 1.01 * u * (fl.norm2(np.abs(diff) @ np.abs(P))
                      + fl.norm2(diff) * (2 * gamma_error + 4 * math.sqrt(model.d) * u))
    # A token readout: the differences (F_T Q - F_S Q) Q^T from correctly
    # rounded F Q, against (F_T - F_S) Z Q^T for a basis Z of the exact Γ_T
    # within 1/gap of Q, which is steered exactly when the exact readouts are;
    # each F Q is off F Z by |R| + R_err and its half ulp, the subtraction
    # rounds once
    tw = fr.token_through(model, *token, basis) if token is not None else None
    if tw is not None:
        FQ, R, Rerr = tw[:3]
        dQ = FQ[targets] - FQ[sources]
        off = np.abs(R[targets]) + np.abs(R[sources]) + Rerr[targets] + Rerr[sources] \
            + u * (np.abs(FQ[targets]) + np.abs(FQ[sources]) + np.abs(dQ))
        nQ = fl.norm2(basis) * (1 + 4 * u)
        e_d = 1.01 * fl.norm2(off) * nQ + 1.01 * (basis.shape[1] + 2) * u * fl.norm2(np.abs(dQ) @ np.abs(basis.T))
        if e_d < per_row:
            D, per_row = dQ @ basis.T, float(e_d)
    extra = 2 * per_row
    # (Tolerance.certain: a bound as large as the tolerance leaves "holds" open)
    return be.vanishes(be.minus_row(D, 0), D, extra=extra), D


def translation_witness(model, pairs, readout, decision: Decision) -> Decision | None:
    """"Steered", shown by a witness, or None: the readouts of ``f(s⊕q) - f(s)``
    on functionals spanning ``Γ`` exactly (``readout``, from
    :func:`witness_readouts` with ``minus``) are constant over the pairs when
    the constant column fits them: a fit on the regressors ``[1]``
    (:func:`allornone.numeric.witness.fit_witness`; "holds" only)."""
    if readout is None or model.input_error:
        return None
    Y, Y_err = readout
    w = fw.fit_witness(np.ones((len(pairs), 1)), 0.0, Y, Y_err, model.tolerance.rtol)
    return w.decision(model.tolerance, **decision.detail)


def transported_identity(model, twin, A, B, errors: dict, gt, gt_decided: bool, gt_error: float, Wt, Pt,
                         identity: Decision) -> Decision:
    """The float verdict on whether the transported map ``W~`` is ``P_Γ~``, from
    ``identity`` (``W~ - P_Γ~`` judged against :func:`map_error`; ``A``, ``B``
    the certificate's maps, ``errors`` their error bounds): undecided on an
    undecided ``Γ~`` or structure, and where the error bound is within ``gap``
    of the map itself (it says nothing); where it is left undecided, decided
    as ``Γ~ ⊆ M~`` (:func:`identity_by_inclusion`)."""
    structures = model.structure.decided and twin.structure.decided
    if not gt_decided or not structures:
        identity = fr._undecided(identity)
    elif identity.holds:
        err = map_error(model, twin, A, B, errors, gt_error)
        if err * model.backend.tolerance.gap > fl.norm2(Wt) + fl.norm2(Pt):
            identity = fr._undecided(identity)
    if identity.undecided and gt_decided and structures:
        identity = identity_by_inclusion(twin, gt, gt_error, identity)
    return identity


def identity_by_inclusion(twin, gt, gt_error: float, identity: Decision) -> Decision:
    """Whether the transported map is ``P_Γ~``, decided as ``Γ~ ⊆ SF~``.

    For ``ũ ∈ Γ~`` (so ``u = B* ũ ∈ Γ``), ``W~^T ũ = P~_M~ A*^T P_M u`` is the
    functional in ``M~`` that reads ``u^T f(x) = ũ^T f~(x)`` on every context;
    so is ``P~_M~ ũ`` (F4, ``ũ ∈ Ñ ⊆ SG~``), and only one functional in
    ``M~ ⊆ SF~`` reads given values on the contexts. Hence ``W~^T ũ = P~_M~ ũ``,
    and ``W~ = P_Γ~`` exactly when ``P~_M~ ũ = ũ`` on ``Γ~``: ``Γ~ ⊆ M~``. And
    for ``ũ ∈ SG~`` that is ``ũ ∈ SF~``: ``SF~ = M~ ⊕ (SF~ ∩ M~^⊥)`` and
    ``SF~ ∩ M~^⊥ ⊥ SG~`` (F3), so the part of ``ũ ∈ SF~`` off ``M~`` is
    orthogonal to ``ũ`` and to ``M~``, hence zero. So where the twin's ``SF~``
    is the whole space (its dimension decided ``d~``), the map is the identity
    whatever ``Γ~`` was computed as; otherwise the residual ``|(I - P~_F) P_Γ~|``
    is a sine, off the exact one by at most the errors of the two subspaces
    (sines of their angles to the exact ones, their dimensions decided) and the
    rounding; neither ``A*`` nor ``B*`` enters, nor ``M~``'s error (which the
    cosines between ``SF~`` and ``SG~`` set). Returns ``identity`` unless this
    decides it."""
    if gt.shape[1] == 0:
        return identity
    s = twin.structure
    if s.decided and s.basis_SF.shape[0] == twin.d:
        return twin.backend.decision(True, by_inclusion=True, SF_full=True)
    Q = np.linalg.qr(gt)[0]
    resid = fl.norm2(Q - s.P_F @ Q)
    extra = float(gt_error) + s.errors.get("SF", 0.0) + 16 * math.sqrt(twin.d) * fl.UNIT_ROUNDOFF
    alt = twin.tolerance.certain(resid, 1.0, extra, by_inclusion=True)
    return identity if alt.undecided else alt


def map_error(model, twin, A, B, errors: dict, gt_error: float) -> float:
    """A bound on the error of ``W~ = P_Γ~ B*^T P_Γ P_M A* P~_M~`` from the
    errors of the computed ``Γ~``, ``B*``, ``A*`` (``errors``) and projectors."""
    nA, nB = fl.norm2(A), fl.norm2(B)
    dA, dB = errors.get("A", 0.0), errors.get("B", 0.0)
    eps = model.structure.errors.get("M", 0.0) + twin.structure.errors.get("M", 0.0)
    c = 16 * math.sqrt(max(model.d, twin.d)) * fl.UNIT_ROUNDOFF
    return float(2 * gt_error * (nA * nB + 1) + dB * nA + nB * dA + (eps + c) * (nA * nB + 1))
