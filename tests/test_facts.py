"""Facts F1-F6 (docs/theory/facts.md): they hold on every exact instance, and each
check is able to fail when the structure it is given is wrong."""
import dataclasses
from functools import cached_property

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from allornone.model import Model
from allornone.numeric import strategies as ans
from allornone.symbolic import ExactModel
from allornone.symbolic import linalg as ql
from allornone.theorems import facts

MODELS = st.one_of(ans.exact_models(), ans.exact_models(rank_F=st.integers(0, 3), rank_G=st.integers(0, 3)),
                   ans.diverse_models(), ans.equivalent_pairs().map(lambda p: p[1]),
                   ans.inequivalent_pairs().map(lambda p: p[1]))


@given(MODELS)
def test_facts_hold_exactly(model):
    out = facts.check_facts(model)
    assert list(out) == ["F1", "F2", "F3", "F4", "F5", "F6"]
    for name, d in out.items():
        assert d.holds and d.is_exact, (name, d)


@given(MODELS)
def test_facts_are_never_contradicted_in_floats(model):
    for name, d in facts.check_facts(model.to_float()).items():
        assert not d.fails, (name, d)


@given(MODELS)
def test_structure_matches_an_independent_derivation(exact, model):
    s = exact.structure_of(model)
    assert exact.sym(model.projector_F) == s.P_F
    assert exact.sym(model.projector_G) == s.P_G
    assert exact.sym(model.projector_M) == s.P_M
    assert exact.sym(model.projector_N) == s.P_N
    assert model.effective_complexity() == s.k == s.L.rank()
    assert exact.sym(model.log_odds()) == s.L


@given(ans.exact_models(rank_F=st.integers(1, 3), rank_G=st.integers(1, 3)))
def test_k_is_rank_L_and_at_most_both_ranks(model):
    k = model.effective_complexity()
    assert k == ql.rank(model.log_odds())
    assert k <= min(model.dim_SF(), model.dim_SG())
    # k = 0 with both ranks >= 1 exactly when SF is orthogonal to SG
    assert (k == 0) is (model.projector_F @ model.projector_G).is_zero


# -- every check can fail -------------------------------------------------------

# d = 3, SF = span(e1, e2), SG = span(e1, e3): M = N = span(e1), k = 1.
BASE = ExactModel([[1, 0, 0], [0, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 0, 1]])


def broken(monkeypatch, **fields):
    """Make every ExactModel report a structure with ``fields`` replaced."""
    original = Model.structure.func

    def structure(self):
        s = original(self)
        return dataclasses.replace(s, **{k: (v(s) if callable(v) else v) for k, v in fields.items()})

    monkeypatch.setattr(ExactModel, "structure", cached_property(structure))
    cached_property.__set_name__(ExactModel.structure, ExactModel, "structure")


def e(i, d=3):
    return ql.as_qmatrix([[1 if j == i else 0] for j in range(d)])


def test_base_instance_is_as_described():
    s = BASE.structure
    assert s.k == 1
    assert s.P_M.to_fractions() == s.P_N.to_fractions() == [["1", "0", "0"], ["0", "0", "0"], ["0", "0", "0"]]
    assert all(d.holds for d in facts.check_facts(BASE).values())


BREAKAGES = {
    # a "basis of M" outside SF (and outside SG)
    "F1": dict(basis_M=e(2), basis_N=e(1)),
    # P_N projecting onto span(e2), orthogonal to M: P_N restricted to M is not injective
    "F2": dict(P_N=ql.projector_onto_columns(e(1))),
    # P_M onto span(e2): SF ∩ M^⊥ now contains e1, which SG sees
    "F3": dict(P_M=ql.projector_onto_columns(e(1))),
    # the wrong projector in the key identity
    "F4": dict(P_M=ql.projector_onto_columns(e(1))),
    # P_N = 0: {P_N g_0(y)} spans nothing
    "F5": dict(P_N=ql.zeros(3, 3)),
    # a "basis of N" that f never sees (e3 is orthogonal to SF)
    "F6": dict(basis_N=e(2)),
}


@pytest.mark.parametrize("name", sorted(BREAKAGES))
def test_each_fact_check_can_fail(monkeypatch, name):
    assert facts.FACTS[name](BASE).holds
    broken(monkeypatch, **BREAKAGES[name])
    model = ExactModel(BASE.F, BASE.G)
    d = facts.FACTS[name](model)
    assert d.fails and d.is_exact
    assert not facts.check_facts(model)[name].holds


@given(ans.exact_models(rank_F=st.integers(1, 3), rank_G=st.integers(1, 3)))
def test_zero_projector_onto_M_breaks_F3_F4_F5(model):
    assume(model.effective_complexity() >= 1)
    # pretend M = {0} while keeping its basis
    fake = dataclasses.replace(model.structure, P_M=ql.zeros(model.d, model.d))
    model.__dict__["structure"] = fake
    out = facts.check_facts(model)
    assert out["F3"].fails and out["F4"].fails and out["F5"].fails


@given(ans.exact_models(rank_F=st.integers(1, 3), rank_G=st.integers(1, 3)))
def test_wrong_k_breaks_F1(model):
    model.__dict__["structure"] = dataclasses.replace(model.structure, k=model.structure.k + 1)
    assert facts.f1(model).fails


def test_float_f1_when_SF_is_orthogonal_to_SG():
    # exact: k = 0 and F1 holds; in floats P_F P_G is 1e-16 noise, which must not count as rank
    # against the (equally tiny) entrywise scale of the product -- projectors have unit norm
    exact_model = ExactModel([[0, 1, 1], [0, 1, 1]], [[0, 0, 0], [1, 0, 0]])
    assert exact_model.effective_complexity() == 0 and facts.f1(exact_model).holds
    float_model = exact_model.to_float()
    assert float_model.effective_complexity() == 0
    assert not facts.f1(float_model).fails


def test_float_facts_on_an_undecided_structure_are_undecided_not_failed():
    # Two contexts whose representations differ by 3e-14 along (0, 1): the second
    # singular values of F, of L and the second cosine are all within gap of their
    # rounding bounds, so the float structure is undecided, and F1 must not be
    # called false.
    from fractions import Fraction

    from allornone.numeric import FloatModel
    from allornone.symbolic import ExactModel

    t = 2.0 ** -45
    F, G = [[1.0, 1.0], [1.0, 1.0 + t]], [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
    exact_twin = ExactModel([[Fraction(v) for v in row] for row in F], [[Fraction(v) for v in row] for row in G])
    float_twin = FloatModel(F, G)
    assert all(d.holds for d in facts.check_facts(exact_twin).values())
    assert not float_twin.structure.decided
    out = facts.check_facts(float_twin)
    assert not any(d.fails for d in out.values())
    assert out["F1"].undecided
