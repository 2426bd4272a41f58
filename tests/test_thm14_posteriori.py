"""The a posteriori bounds of relational linearity and steering (docs/float-verdicts.md,
"Zero decisions in relational linearity and steering"): each is checked against the
exact value it bounds, and each is shown to fail where its premise is dropped or the
measured part is replaced by trust in the computed pieces."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from allornone.decision import Truth
from allornone.numeric import FloatModel
from allornone.numeric import relational as fr
from allornone.numeric import transport as ftr
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.theorems import get_record, thm14, thm5
from allornone.theorems.engine.invariance import transform_instance
from allornone.theorems.readouts import tokens


def _fractions(X) -> list:
    return [[Fraction(float(v)) for v in row] for row in np.atleast_2d(X)]


def _exact_norm2(rows: list) -> float:
    return float(np.linalg.norm(np.array([[float(v) for v in r] for r in rows]), 2))


def _matmul(A: list, B: list) -> list:
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*B)] for row in A]


# -- readout_error: confinement to the coordinates where g_0 lives ---------------------

def _silent_model():
    """d = 3; g_0 vanishes in coordinate 2 (silent), where f is huge (a hidden coordinate)."""
    F = [[1.0, 2.0, 1e8], [3.0, -1.0, -2e8], [2.0, 5.0, 5e7], [-1.0, 1.0, 3e8]]
    G = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    return FloatModel(F, G, 0)


def test_silent_coordinates_are_the_exact_zeros_of_g0():
    m = _silent_model()
    assert fr.silent_coordinates(m).tolist() == [False, False, True]
    # a coordinate where every g(y) equals g(y_0) but the numbers carry an error
    # of their own is not known to be zero in the exact G_0
    G = [[0.0, 0.0, 5.0], [1.0, 0.0, 5.0], [0.0, 1.0, 5.0]]
    assert fr.silent_coordinates(FloatModel(m.F, G, 0)).tolist() == [False, False, True]
    assert fr.silent_coordinates(FloatModel(m.F, G, 0, input_error=2.0 ** -53)).tolist() == [False] * 3


def test_readout_error_bounds_a_gamma_in_N_from_its_live_coordinates():
    m = _silent_model()
    eps = 1e-7
    Q = np.array([[np.cos(eps)], [np.sin(eps)], [0.0]])        # the computed basis, at angle eps
    P = Q @ Q.T
    P_ex = np.diag([1.0, 0.0, 0.0])                            # the exact Γ = span e_0 ⊆ N
    true = np.linalg.norm(m.F @ (P - P_ex), 2)
    bound = thm14.readout_error(m, m.F, Q, P, 1.01 * eps, in_N=True)
    assert true <= bound
    # confined, the bound is far below the angle times the raw rows (1e8)
    assert bound < 1e-3 * 2 * eps * np.linalg.norm(m.F, 2)


def test_readout_error_confines_the_angle_only_for_a_gamma_in_N():
    """A Γ with a silent component (not in N) read through a basis that is zero
    there: the error of the readouts is the angle times the huge coordinate;
    the confined bound (in_N) misses it, the plain one does not."""
    m = _silent_model()
    t = 1e-9
    Q = np.array([[1.0], [0.0], [0.0]])
    P = Q @ Q.T
    w = np.array([[1.0], [0.0], [t]]) / np.hypot(1.0, t)          # the exact Γ, off N
    true = np.linalg.norm(m.F @ (P - w @ w.T), 2)
    angle = 1.01 * t
    assert thm14.readout_error(m, m.F, Q, P, angle, in_N=False) >= true
    assert thm14.readout_error(m, m.F, Q, P, angle, in_N=True) < true


# -- token readouts: what F sees of the error of Γ_T, measured -------------------------

def _hidden_token_pair():
    """An exact model with a hidden component of g (in SG, orthogonal to SF) of size
    1e9, mixed by a change of basis so that it is in no coordinate of its own:
    P_N, computed, leaks a part of it into the token readout."""
    F = [[1, 2, 0], [2, -1, 0], [3, 1, 0], [-1, 4, 0], [2, 2, 0]]
    G = [[0, 0, 0], [1, 0, 10 ** 9], [0, 1, -(10 ** 9)], [1, 1, 3 * 10 ** 9]]
    model = ExactModel(F, G, 0)
    return gen.change_of_basis(model, ql.as_qmatrix([[1, 1, 0], [0, 1, 1], [1, 0, 1]]))


def test_token_readout_residual_bounds_what_F_sees():
    ex = _hidden_token_pair()
    fm = ex.to_float()
    T = tokens([(1, 0), (2, 0)])
    basis, P, decided, angle = thm14._gamma_with_error(fm, T)
    assert decided and basis.shape[1] == 2
    R, Rerr, C, delta = fr.token_readout_residual(fm, *thm14._token(fm, T), basis)
    # Z = P_N D C with the exact P_N and differences: a basis of the exact Γ_T
    PN = ex.projector_N.to_fractions()
    PN = [[Fraction(v) for v in row] for row in PN]
    D = [[ex.G.to_fractions()[a][j] for a, _ in T.pairs] for j in range(ex.d)]
    D = [[Fraction(v) for v in row] for row in D]
    Z = _matmul(_matmul(PN, D), _fractions(C))
    Fx = [[Fraction(v) for v in row] for row in ex.F.to_fractions()]
    diff = _matmul(Fx, [[q - z for q, z in zip(qr, zr)] for qr, zr in zip(_fractions(basis), Z)])
    true = _exact_norm2(diff)
    a, dlt = fr.token_direct(fm, *thm14._token(fm, T), basis, range(fm.m))
    bound = a + dlt * np.linalg.norm(fm.F, 2)
    assert true <= bound
    # the angle of N times the raw rows would be far larger than the measured bound
    assert bound < 2 * angle * np.linalg.norm(fm.F, 2)
    # trusting the computed P_N (dropping the measured F G - F D) misses the leak
    assert dlt * np.linalg.norm(fm.F, 2) < true


# -- the transport's kernel: an a posteriori bound through the readout transport -------

def _b5_pair():
    """A planted relational linearity on Γ of dimension 1 inside N of dimension 2,
    with a B.5 twin: the transport's kernel is a proper subspace of Ñ."""
    inst = get_record("thm14").sample(__import__("random").Random(5), 0)
    assert inst.kind == "planted reading M, B.5 twin" and inst.params["gamma"].shape[1] == 1
    return inst


def test_kernel_residual_bounds_the_exact_kernel_residual_with_an_inaccurate_certificate():
    """A certificate B_c off by a rank-one 1e-9 (as an ill-conditioned EL2 may
    leave it), built so that a direction ũ1 at angle 1e-9 from the exact Γ~ is
    exactly in its kernel: (I - P_Γ) B_c ũ1 = 0, yet the exact (I - P_Γ) B* ũ1 is
    not. tau, measured through F, covers it; the kernel's own residual does not."""
    inst = _b5_pair()
    a, b = inst.models
    fa, fb = a.to_float(), b.to_float()
    cert = thm5.el_certificate(fa, fb)
    # (the twin's rationals are rounded on input, with a declared error: its
    # certificate is not certain to be exact at the tolerance, only never wrong)
    assert not cert.decision.fails
    gamma = np.array(inst.params["gamma"].to_numpy(), dtype=float)
    _, P, _ = thm14._gamma(fa, gamma)
    V = fb.basis_N
    u0 = np.array(thm14.transport_gamma(a, b, inst.params["gamma"]).to_numpy(), dtype=float)
    u0 = V @ (V.T @ u0)
    u0 /= np.linalg.norm(u0)
    w = V[:, [0]] - u0 * (u0.T @ V[:, [0]]).item()
    if np.linalg.norm(w) < 0.5:
        w = V[:, [1]] - u0 * (u0.T @ V[:, [1]]).item()
    w /= np.linalg.norm(w)
    u1 = (u0 + 1e-9 * w) / np.hypot(1.0, 1e-9)
    B_off = cert.B - ((np.eye(fa.d) - P) @ cert.B @ u1) @ u1.T
    off = thm5.Certificate(cert.A, B_off, cert.el1, cert.el2, cert.el3, cert.decided, dict(cert.errors))
    tau, _ = ftr.kernel_residual(fa, fb, gamma, P, off.B, u1)
    # the exact residual, with the exact B* and P_Γ (floats of exact values)
    B_ex = np.array(thm5.el_certificate(a, b).B.to_numpy(), dtype=float)
    P_ex = gamma @ np.linalg.pinv(gamma)
    true = np.linalg.norm((np.eye(a.d) - P_ex) @ B_ex @ u1)
    assert true > 1e-12                       # the exact residual sees the tilt
    assert tau >= true
    # trusting the computed certificate (the kernel's residual alone) misses it
    assert np.linalg.norm((np.eye(fa.d) - P) @ off.B @ u1) < 1e-3 * true


def test_kernel_residual_is_not_used_without_equivalence(monkeypatch):
    """The bound rests on EL1-EL3; for models with different distributions the
    transport keeps its a priori rule."""
    inst = _b5_pair()
    a, b = inst.models
    F = b.F.to_fractions()
    F[0][0] = Fraction(F[0][0]) + 1                 # L != L~
    b2 = ExactModel(F, b.G, b.pivot)
    fa, fb = a.to_float(), b2.to_float()
    cert = thm5.el_certificate(fa, fb)
    calls = []
    monkeypatch.setattr(ftr, "kernel_residual", lambda *args: calls.append(1) or (0.0, 0.0))
    monkeypatch.setattr(fr, "resolves", lambda tol, error, size: False)
    gamma = np.array(inst.params["gamma"].to_numpy(), dtype=float)
    out = thm14._transport_gamma(fa, fb, gamma, cert)
    assert not thm5.same_distribution(fa, fb).holds and not cert.decision.holds
    assert calls == [] and out[1] is False


def test_kernel_dimension_known_from_gamma_in_N(monkeypatch):
    """With every error bound unresolved, the kernel's dimension is still decided
    where L = L~ is (dim Γ~ = dim (Γ ∩ N): dim Γ where Γ ⊆ N is decided, else
    that of Γ ∩ N decided on products), and agrees with the exact one."""
    monkeypatch.setattr(fr, "resolves", lambda tol, error, size: False)
    rec = get_record("thm14")
    rng = __import__("random").Random(3)
    kinds = {}
    for i in range(256):
        inst = rec.sample(rng, i)
        if inst.kind == "Γ ⊄ N" and thm14.gamma_in_N(inst.models[0], inst.params["gamma"]).holds:
            continue          # (a Γ that happens to lie in N after all)
        if any(m.to_float().input_error for m in inst.models):
            # (rounded on input, a twin whose logits cancel within the declared
            # error has an undecided k~: nothing is then known of its kernel)
            continue
        kinds.setdefault(inst.kind, inst)
    for kind in ("planted reading M, B.5 twin", "Γ ⊄ N"):
        inst = kinds[kind]
        a, b = inst.models
        fa, fb = a.to_float(), b.to_float()
        gamma = np.array(inst.params["gamma"].to_numpy(), dtype=float)
        gt, ok, _, _ = thm14._transport_gamma(fa, fb, gamma, thm5.el_certificate(fa, fb))
        assert ok and gt.shape[1] == thm14.transport_gamma(a, b, inst.params["gamma"]).shape[1], kind


# -- readouts seen: the dimension of Γ_T, not the fit on it ----------------------------

def test_readouts_seen_depends_on_the_readouts_dimension_only(monkeypatch):
    """Whether ``Γ_T != {0}`` is decided on the readouts' dimension, not on the
    fit on ``Γ_T``: with every fit's input subspace left undecided, it is still
    decided, and right."""
    _, inst = transform_instance("thm14", "change of basis", 0, 75)
    fa, fb = (m.to_float() for m in inst.models)
    exact = get_record("thm14").evaluate(inst, "exact").atoms["readouts_seen"]
    real = thm14.relational_linearity

    def undecided_fit(*args, **kwargs):
        r = real(*args, **kwargs)
        r.decided = False
        return r

    monkeypatch.setattr(thm14, "relational_linearity", undecided_fit)
    an = thm14.record._analyse((fa, fb), inst.params)
    assert not an.results[("T", "M")].decided
    assert not an.seen.undecided and an.seen.truth is exact.truth


# -- the modelling tolerance is relative to the readouts -------------------------------

def test_tolerance_is_relative_to_the_readouts_not_to_hidden_components():
    """A change of basis of condition ~1e8 makes |F| |P_Γ| ~1e9 times the readouts
    of the twin's token readout, whose exact misfit is 1.8e-3 (readouts ~1e6):
    rtol times |F| |P_Γ| would call it a fit once the readouts' error bound is
    tight. Judged against the readouts, it is not."""
    _, inst = transform_instance("thm14", "change of basis", 0, 173)
    b = inst.models[1]
    T = thm14.record._params_tokens(b, inst.params)
    exact = thm14.relational_linearity(b, inst.params["pairs"], T, "M")
    assert exact.decision.truth is Truth.FAILS
    flt = thm14.relational_linearity(b.to_float(), inst.params["pairs"], T, "M")
    assert not flt.holds


def test_largest_column_norm_neither_underflows_nor_overflows():
    """The fit's error is taken per column (the residual is judged entry by entry);
    the column norms are scaled first: squares of 1e-170 underflow to zero, and
    a bound of zero would call any misfit of such readouts unresolved noise-free."""
    for size in (1e-170, 1.0, 1e170):
        A = np.full((9, 4), size)
        A[:, 1] *= 2
        got = fr.largest_column_norm(A)
        assert 6 * size <= got <= 6 * size * (1 + 1e-12)
        with np.errstate(over="ignore"):
            naive = float(np.sqrt(np.max(np.sum(A * A, axis=0))))
        if size != 1.0:
            assert not (6 * size <= naive < np.inf)     # the unscaled form fails here


# -- the twin's readouts on a transported Γ~, as the original model reads Γ ------------

def _twin_case(index: int = 10):
    """A planted relational linearity (Γ = N) after a change of basis, with its B.5
    twin: the twin's readouts on Γ~ are the original model's on Γ (L = L~, Γ ⊆ N),
    and its fit is decided on those products."""
    _, inst = transform_instance("thm14", "change of basis", 0, index)
    return inst


def test_twin_readouts_through_f_decide_the_twin(monkeypatch):
    inst = _twin_case()
    exact = get_record("thm14").evaluate(inst, "exact").atoms
    got = get_record("thm14").evaluate(inst, "float").atoms
    assert exact["rel_lin~"].truth is Truth.HOLDS
    assert got["rel_lin~"].truth is Truth.HOLDS


@pytest.mark.parametrize("index, truth", [(24, Truth.HOLDS), (19, Truth.FAILS)])
def test_twin_steering_through_f_decides_the_twin(index, truth):
    # steering in the twin on Γ~ after a change of basis of the pair: decided on
    # the original model's readouts of Γ
    _, inst = transform_instance("steering", "change of basis", 0, index)
    rec = get_record("steering")
    assert rec.evaluate(inst, "exact").atoms["steered~"].truth is truth
    assert rec.evaluate(inst, "float").atoms["steered~"].truth is truth


def test_token_through_bounds_the_exact_residual():
    # F (Q - Z) for Z = P_N D C: F P_N D = F D exactly, so F Q - (F D) C is the
    # exact residual; the computed one is within R_err of it
    _, inst = transform_instance("thm14", "change of basis", 0, 7)
    em = inst.models[1]
    m = inst.realise("float")[1]
    T = thm14.record._params_tokens(m, inst.params)
    basis = thm14._gamma_with_error(m, T)[0]
    FQ, R, Rerr = fr.token_through(m, *thm14._token(m, T), basis)
    G = thm14.readouts.token_readout(m, T)
    C = np.linalg.svd(G, full_matrices=False)[2][:basis.shape[1]].T / np.linalg.svd(G, compute_uv=False)[:basis.shape[1]]
    F = [[Fraction(v) for v in row] for row in em.F.to_fractions()]
    Gx = [[Fraction(v) for v in row] for row in em.G.to_fractions()]
    D = [[Gx[a][k] - Gx[b][k] for a, b in T.pairs] for k in range(m.d)]
    exact = [[x - y for x, y in zip(r1, r2)]
             for r1, r2 in zip(_matmul(F, _fractions(basis)), _matmul(_matmul(F, D), _fractions(C)))]
    assert np.any(R)
    for i, row in enumerate(exact):
        for j, v in enumerate(row):
            assert abs(v - Fraction(float(R[i, j]))) <= Fraction(float(Rerr[i, j]))


def test_token_readouts_through_f_decide():
    _, inst = transform_instance("thm14", "change of basis", 0, 7)
    rec = get_record("thm14")
    assert rec.evaluate(inst, "exact").atoms["rel_lin_T~"].truth is Truth.HOLDS
    assert rec.evaluate(inst, "float").atoms["rel_lin_T~"].truth is Truth.HOLDS


# -- reading M decided on the logits of S ------------------------------------------------

@pytest.mark.parametrize("transform, index, atoms", [
    ("change of basis", 24, ("rel_lin_M", "rel_lin_M~", "rel_lin_T_M~")),   # planted reading M: holds
    ("change of basis", 5, ("rel_lin_M", "rel_lin_M~", "rel_lin_T_M~")),    # D.1: reading M fails
    ("hidden coordinates", 3, ("rel_lin_M", "rel_lin_M~", "rel_lin_T_M~")),  # not relationally linear
    ("hidden coordinates", 13, ("rel_lin_M",)),                              # D.1 with a hidden coordinate
])
def test_reading_M_decided_on_the_logits(transform, index, atoms):
    # the error of P_M (at the size of the raw rows) leaves these open; the same
    # system on [L_S, 1] decides them, and agrees with the exact verdict
    _, inst = transform_instance("thm14", transform, 0, index)
    rec = get_record("thm14")
    exact, got = rec.evaluate(inst, "exact").atoms, rec.evaluate(inst, "float").atoms
    for atom in atoms:
        assert got[atom].truth is exact[atom].truth, atom


def test_logit_regressors_span_the_projected_inputs_exactly():
    # the premise: col(F_S P_M) = col(F_S G_0^T) on exact models, hidden components
    # and coordinates included
    for transform, index in (("change of basis", 5), ("hidden coordinates", 3), ("hidden components", 0)):
        _, inst = transform_instance("thm14", transform, 0, index)
        for m in inst.models:
            S = [s for s, _ in inst.params["pairs"]]
            FS = m.F[S, :]
            X, L = FS @ m.projector_M, FS @ m.G0.T
            assert ql.rank(X) == ql.rank(L) == ql.rank(m.backend.hstack(X, L))


# -- the kernel's dimension from dim Γ~ = dim (Γ ∩ N) ----------------------------------

def _transport_case(transform, index):
    _, inst = transform_instance("steering", transform, 0, index)
    a, b = inst.models
    fa, fb = a.to_float(), b.to_float()
    gamma = np.array(inst.params["gamma"].to_numpy(), dtype=float)
    cert = thm5.el_certificate(fa, fb)
    gt, ok, err, _ = thm14._transport_gamma(fa, fb, gamma, cert)
    exact = np.array(thm14.transport_gamma(a, b, inst.params["gamma"]).to_numpy(), dtype=float)
    decided = thm14._gamma(fa, gamma)[2]
    known = thm14._known_kernel_rank(fa, fb, gamma, cert, decided, fb.basis_N.shape[1])
    return fa, fb, gamma, gt, ok, err, exact, known


def _sine(Q, Z):
    """The sine of the largest angle from span Q to span Z (same dimension)."""
    Qo, Zo = np.linalg.qr(Q)[0], np.linalg.qr(Z)[0]
    return float(np.linalg.norm(Qo - Zo @ (Zo.T @ Qo), 2))


@pytest.mark.parametrize("transform, index, inside", [
    ("change of basis", 26, True),       # the kept singular value in the tolerance's band
    ("hidden components", 21, False),    # Γ ⊄ N, dim (Γ ∩ N) = 1
    ("hidden components", 13, False),    # Γ ⊄ N, Γ~ = Ñ
])
def test_kernel_dimension_known_decides_the_transport(transform, index, inside):
    """Where the computed rank of (I - P_Γ) B* on Ñ is undecided, or cuts a
    direction under an unresolved bound, the known dimension dim Γ~ = dim (Γ ∩ N)
    decides it: the same dimension as the exact Γ~, within the stated error."""
    fa, fb, gamma, gt, ok, err, exact, known = _transport_case(transform, index)
    assert thm14.gamma_in_N(fa, gamma).holds is inside
    assert known == fb.basis_N.shape[1] - exact.shape[1]
    assert ok and gt.shape[1] == exact.shape[1]
    assert err < 1e-3 and _sine(gt, exact) <= err


def test_kernel_dimension_known_needs_the_kept_singular_values_clear_of_the_noise(monkeypatch):
    """The dimension is known, but the computed sigma_r* is below the noise: the
    computed kernel may be anywhere (no bound below 1 on its angle), so the
    transport stays undecided -- even where every error bound would count as
    resolved."""
    monkeypatch.setattr(fr, "resolves", lambda tol, error, size: True)
    fa, fb, gamma, gt, ok, err, exact, known = _transport_case("hidden components", 30)
    assert known == fb.basis_N.shape[1] - exact.shape[1]
    assert not ok
