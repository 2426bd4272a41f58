"""Witnessed float verdicts of relational linearity and steering (docs/float-verdicts.md,
"Witnesses"): each rule decides instances the propagated bounds leave open, agrees
with the exact verdict, and is shown to fail where it is made lenient or removed."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from allornone.decision import Truth
from allornone.numeric import FloatModel
from allornone.numeric import relational as fr
from allornone.numeric import transport as ftr
from allornone.numeric import witness
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.theorems import get_record, steering, thm14
from allornone.theorems.engine.invariance import transform_instance
from allornone.theorems.readouts import tokens

# A unimodular change of basis of condition about 1e8 (exact integer inverse).
A_SHEAR = 10_000
T = [[1, A_SHEAR], [0, 1]]
T_INV_T = [[1, 0], [-A_SHEAR, 1]]          # (T^{-1})^T: g -> g T^{-T}


def _mul(X, Y):
    return [[sum(Fraction(a) * Fraction(b) for a, b in zip(row, col)) for col in zip(*Y)] for row in X]


def _model(delta: Fraction = Fraction(0)):
    """d = 2, N = R^2; f(s⊕q) = A f(s) + b on four pairs, the first target moved by ``delta``."""
    A, b = [[2, 1], [-1, 3]], [1, -2]
    S = [[1, 2], [3, -1], [-2, 5], [4, 4]]
    targets = [[sum(A[i][j] * s[j] for j in range(2)) + b[i] for i in range(2)] for s in S]
    targets[0] = [targets[0][0] + delta, targets[0][1]]
    F = S + targets
    G = [[0, 0], [1, 0], [0, 1]]
    return F, G, [(i, i + 4) for i in range(4)]


def _sheared(delta: Fraction = Fraction(0)):
    F, G, pairs = _model(delta)
    Fx, Gx = _mul(F, T), _mul(G, T_INV_T)
    exact = ExactModel(Fx, Gx)
    floats = FloatModel([[float(v) for v in r] for r in Fx], [[float(v) for v in r] for r in Gx], 0)
    # every entry is a binary64 number: the float model is the exact one
    assert all(Fraction(float(v)) == v for r in Fx + Gx for v in r)
    return exact, floats, pairs


GAMMA = [[1, 0], [0, 1]]


def test_the_shear_is_ill_conditioned_enough_to_leave_the_bounds_open(monkeypatch):
    """Without the witness (and without the products' route, which decides it
    first), the a priori bounds of the fit through a basis of condition 1e8 leave
    the verdict undecided (what the witness is for)."""
    _, m, pairs = _sheared()
    monkeypatch.setattr(fr, "witnessed_fit", lambda *a, **k: None)
    monkeypatch.setattr(fr, "readout_fit", lambda *a, **k: None)
    assert thm14.relational_linearity(m, pairs, GAMMA, "any").decision.undecided


@pytest.mark.parametrize("reading", ["any", "M"])
def test_witness_decides_a_fit_through_an_ill_conditioned_basis(reading, monkeypatch):
    # the products' route decides these first (numeric.relational.readout_fit);
    # off, the witness is what decides them
    monkeypatch.setattr(fr, "readout_fit", lambda *a, **k: None)
    ex, m, pairs = _sheared()
    exact = thm14.relational_linearity(ex, pairs, GAMMA, reading)
    flt = thm14.relational_linearity(m, pairs, GAMMA, reading)
    assert exact.holds
    assert flt.decision.truth is Truth.HOLDS
    if reading == "any":
        # (reading M, the fit on the logits already decides it)
        assert "witness" in flt.decision.detail


@pytest.mark.parametrize("delta", [Fraction(1, 2 ** 20), Fraction(1, 2 ** 30)])
def test_witness_never_holds_on_a_misfit(delta):
    """A misfit of 1e-6 or 1e-9 in the original coordinates (exact: not
    relationally linear) is not called a fit in floats, through the same shear."""
    ex, m, pairs = _sheared(delta)
    assert not thm14.relational_linearity(ex, pairs, GAMMA, "any").holds
    for reading in ("any", "M"):
        assert not thm14.relational_linearity(m, pairs, GAMMA, reading).holds


def test_a_lenient_witness_is_caught(monkeypatch):
    """The misfit test above fails for a witness judged at rtol 1e-6 instead of 1e-12."""
    ex, m, pairs = _sheared(Fraction(1, 2 ** 30))
    real = witness.fit_witness
    monkeypatch.setattr(witness, "fit_witness", lambda X, Xe, Y, Ye, rtol, **k: real(X, Xe, Y, Ye, rtol * 1e6))
    assert thm14.relational_linearity(m, pairs, GAMMA, "any").holds  # wrongly


def test_witness_readouts_of_tokens_need_no_projector():
    """A token readout's witness readouts are the log-odds themselves, correctly
    rounded: equal to the exact ``L[x, a] - L[x, b]`` within the reported bound."""
    ex, m, _ = _sheared()
    Y, err = fr.witness_readouts(m, range(m.m), **thm14._functionals(m, tokens([(1, 0), (2, 1)])))
    L = ex.log_odds().to_fractions()
    for x in range(m.m):
        for j, (a, b) in enumerate([(1, 0), (2, 1)]):
            exact = Fraction(L[x][a]) - Fraction(L[x][b])
            assert abs(exact - Fraction(float(Y[x, j]))) <= Fraction(float(err[x, j]))


# -- steering --------------------------------------------------------------------------------

def test_steering_witness_decides_a_translation_through_an_ill_conditioned_basis(monkeypatch):
    F, G, pairs = _model()
    # a translation: f(s⊕q) = f(s) + v
    v = [3, -2]
    F = F[:4] + [[s[0] + v[0], s[1] + v[1]] for s in F[:4]]
    Fx, Gx = _mul(F, T), _mul(G, T_INV_T)
    ex = ExactModel(Fx, Gx)
    m = FloatModel([[float(x) for x in r] for r in Fx], [[float(x) for x in r] for r in Gx], 0)
    assert steering.steering(ex, pairs, GAMMA).holds
    got = steering.steering(m, pairs, GAMMA)
    assert got.decision.truth is Truth.HOLDS
    # moved by 2^-30: no longer a translation, and the witness does not say it is
    F2 = [list(r) for r in F]
    F2[4][0] += Fraction(1, 2 ** 30)
    Fx2 = _mul(F2, T)
    ex2 = ExactModel(Fx2, Gx)
    m2 = FloatModel([[float(x) for x in r] for r in Fx2], [[float(x) for x in r] for r in Gx], 0)
    assert not steering.steering(ex2, pairs, GAMMA).holds
    assert not steering.steering(m2, pairs, GAMMA).holds


def _b5_pair():
    """The twin of transport_steering's docstring whose Ñ leaves M~: the transported
    map is not the identity there."""
    m2 = ExactModel([[0, 1], [1, -1], [2, 0], [-1, 2], [1, 0], [2, 2], [3, 0], [0, 1]], [[0, 0], [1, 0]])
    tw = gen.b5_twin(m2, a=1, b=1, T=[[1]], R=[[1, 1, 0], [0, 1, 0], [0, 0, 1]], c=[0, 0, 0],
                     psi=lambda y, g, b: [y])
    return m2, tw, [(0, 4), (1, 5), (2, 6), (3, 7)]


def test_identity_is_gamma_tilde_inside_M_tilde():
    """On exact instances the transported map is ``P_Γ~`` exactly when ``Γ~ ⊆ M~``
    (the identity behind the float rule), both ways."""
    m2, tw, pairs = _b5_pair()
    t = steering.transport_steering(m2, tw, steering.steering(m2, pairs, [[1], [0]]))
    R = tw.projector_M @ t.gamma - t.gamma
    assert not t.identity.holds and any(str(v) != "0" for row in R.to_fractions() for v in row)
    twin = gen.change_of_basis(m2, [[1, 1], [0, 1]])
    t = steering.transport_steering(m2, twin, steering.steering(m2, pairs, [[1], [0]]))
    R = twin.projector_M @ t.gamma - t.gamma
    assert t.identity.holds and all(str(v) == "0" for row in R.to_fractions() for v in row)


def test_identity_by_inclusion_agrees_with_exact_and_catches_a_wrong_projector(monkeypatch):
    """Float: the inclusion test (``Γ~ ⊆ SF~``) decides the B.5 pair's map "not
    the identity", as the exact side does; with the projector onto ``SF~``
    replaced by the identity matrix it would say "holds" -- the test fails on
    that defect."""
    m2, tw, pairs = _b5_pair()
    a, b = m2.to_float(), tw.to_float()
    gt, ok, gt_error, _ = thm14._transport_gamma(a, b, [[1.0], [0.0]], thm14.thm5.el_certificate(a, b))
    assert ok
    undecided = a.backend.decision(False, decided=False)
    got = ftr.identity_by_inclusion(b, gt, gt_error, undecided)
    assert got.truth is Truth.FAILS

    class _Wrong:
        def __getattr__(self, name):
            return getattr(b, name)

        structure = dataclasses.replace(b.structure, P_F=np.eye(b.d))
    assert ftr.identity_by_inclusion(_Wrong(), gt, gt_error, undecided).truth is Truth.HOLDS


def test_identity_is_not_transported_when_a_premise_fails_decided():
    """No transport when ``L != L~`` is decided, whatever the certificate: "not the
    identity" is then decided on both sides."""
    inst = steering.record._edge_not_same(__import__("random").Random(0)) if hasattr(steering, "_edge_not_same") else None
    if inst is None:
        pytest.skip("no such edge")
    rec = get_record("steering")
    ex = rec.evaluate(inst, "exact").atoms["identity~"]
    fl = rec.evaluate(inst, "float").atoms["identity~"]
    assert not ex.holds and fl.truth is Truth.FAILS


@pytest.mark.parametrize("rid,name,index", [("thm14", "change of basis", 9), ("thm14", "change of basis", 2)])
def test_harness_instances_once_left_open_are_decided(rid, name, index, monkeypatch):
    """Transformed instances whose fits the a priori bounds left undecided are
    decided by the witness (the products' route, which decides them first, off)
    and agree with the exact verdicts; without the witness they are not."""
    monkeypatch.setattr(fr, "readout_fit", lambda *a, **k: None)
    _, inst = transform_instance(rid, name, 0, index)
    rec = get_record(rid)
    exact = rec.evaluate(inst, "exact").atoms
    flt = rec.evaluate(inst, "float").atoms
    decided = [k for k, d in flt.items() if k.startswith("rel_lin") and not d.undecided]
    assert all(flt[k].truth is exact[k].truth for k in decided)
    thm14.record._CACHE.clear()
    monkeypatch.setattr(fr, "witnessed_fit", lambda *a, **k: None)
    before = rec.evaluate(inst, "float").atoms
    assert sum(not before[k].undecided for k in decided) < len(decided)


# -- dim Γ_q on the readouts -------------------------------------------------------------------

def test_input_dimension_on_readouts_matches_the_exact_fit():
    """Through the shear (condition 1e8), ``dim Γ_q`` of the fit reading M is
    decided on the readouts and equals the exact one."""
    ex, m, pairs = _sheared()
    exact = thm14.relational_linearity(ex, pairs, GAMMA, "M")
    assert exact.holds
    assert fr.input_dimension_on_readouts(m, pairs, B=np.eye(2)) == exact.dim_gamma_q == 2


def test_input_dimension_needs_the_ones_outside_the_inputs():
    """Where ``1`` lies in the span of ``F_S P_M`` the minimum-norm map can read a
    direction the readouts' differences do not show: the rule declines (None),
    and the differences' rank alone would contradict the exact ``dim Γ_q``."""
    S = [[1, 1], [2, 1], [-1, 1], [3, 1]]
    F = S + [[2 * s[0] + 1, 1] for s in S]
    G = [[0, 0], [1, 0], [0, 1]]
    pairs = [(i, i + 4) for i in range(4)]
    ex = ExactModel(F, G)
    m = FloatModel([[float(v) for v in r] for r in F], [[float(v) for v in r] for r in G], 0)
    exact = thm14.relational_linearity(ex, pairs, GAMMA, "M")
    assert exact.holds and exact.dim_gamma_q == 2
    assert fr.input_dimension_on_readouts(m, pairs, B=np.eye(2)) is None
    # what the rule would say without its check: rank of the readouts' differences
    D, _ = fr.witness_readouts(m, [4, 5, 6, 7][1:], B=np.eye(2), minus=[4, 4, 4])
    assert np.linalg.matrix_rank(D) == 1 != exact.dim_gamma_q


def _harness_fits(name, reading, count=40):
    """Float and exact fits of the harness's Theorem 14 instances (seed 5) under
    ``name``, where the exact fit holds: ``(float model, pairs, Γ, exact fit)``."""
    from allornone.theorems.engine import transforms as tf

    out = []
    for index in range(count):
        try:
            _, inst = transform_instance("thm14", name, 5, index)
            fi = tf.realise_float(inst, "binary64")
        except Exception:       # not representable, or skipped by the transform
            continue
        pairs, g = inst.params["pairs"], inst.params["gamma"]
        exact = thm14.relational_linearity(inst.models[0], pairs, g, reading)
        if exact.holds:
            B = np.array([[float(Fraction(v)) for v in row] for row in g.to_fractions()])
            out.append((fi.models[0], pairs, B, exact))
    return out


@pytest.mark.parametrize("reading", ["M", "any"])
def test_input_dimension_with_regressors_of_full_row_rank(reading):
    """Where the pairs' regressors ``L_S`` (reading anything ``F_S``) have full
    row rank, ``dim Γ_q`` is the rank of the readouts themselves: decided, and
    the exact one, through changes of basis and shears. Its differences' rank,
    the rule for ``1`` outside the inputs' span, would be one less wherever
    the readouts do not span ``1``."""
    seen = 0
    for name in ("change of basis", "integer shear"):
        for m, pairs, B, exact in _harness_fits(name, reading):
            X, _ = fr.witness_regressors(m, pairs, reading)
            if np.linalg.matrix_rank(X[:, :-1]) < len(pairs):
                continue
            assert fr.input_dimension_on_readouts(m, pairs, B=B, reading=reading) == exact.dim_gamma_q, (name, pairs)
            seen += 1
    assert seen >= 5


def test_a_fit_whose_input_dimension_the_readouts_contradict_is_not_decided(monkeypatch):
    """A fitted ``W`` whose rank disagrees with the readouts' leaves ``Γ_q``
    undecided in the API too: with the readouts made to report another
    dimension, a fit decided before is no longer."""
    F, G, pairs = _model()
    m = FloatModel([[float(v) for v in r] for r in F], [[float(v) for v in r] for r in G], 0)
    r = thm14.relational_linearity(m, pairs, GAMMA, "M")
    assert r.holds and r.decided and r.dim_gamma_q == 2
    monkeypatch.setattr(fr, "input_dimension_on_readouts", lambda *a, **k: 1)
    assert not thm14.relational_linearity(m, pairs, GAMMA, "M").decided


def test_input_dimension_is_decided_on_columns_of_any_sizes():
    """Scaling the columns of Γ by powers of two changes no readout's span:
    ``dim Γ_q`` decided on the readouts is the same (each column of the readouts'
    differences is brought to size one before their rank is decided)."""
    ex, m, pairs = _sheared()
    exact = thm14.relational_linearity(ex, pairs, GAMMA, "M")
    for e in (0, 80, -80):
        B = np.eye(2) * np.array([2.0 ** e, 2.0 ** -e])
        assert fr.input_dimension_on_readouts(m, pairs, B=B) == exact.dim_gamma_q, e


@pytest.mark.parametrize("name, index", [("integer shear", 1), ("hidden coordinates", 25), ("hidden components", 74)])
def test_an_identity_the_transported_residual_leaves_open_is_decided_by_inclusion(name, index):
    """Steering instances whose certificate holds in floats but whose
    transported map's residual carries more error than its tolerance (a shear,
    hidden coordinates or components): with ``L = L~`` certain the exact map is
    transported exactly, and whether it is ``P_Γ~`` is ``Γ~ ⊆ M~``
    (``identity_by_inclusion``), decided and agreeing with the exact side. The
    inclusion was once asked only where the certificate itself was undecided."""
    from allornone.theorems.engine import invariance as inv

    out = inv.check("steering", name, 0, index)
    assert out["outcome"] == "agree", out
