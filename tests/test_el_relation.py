"""~EL is an equivalence relation: reflexive, symmetric, transitive."""
from hypothesis import given
from hypothesis import strategies as st

from allornone.numeric import strategies as ans
from allornone.theorems.thm5 import equivalence


@given(ans.exact_models())
def test_reflexive_with_the_projectors_as_certificate(exact, model):
    # A* = (F P_M)^T ((F P_M)^T)^+ is the projector onto Im((F P_M)^T) = M (F5).
    r = equivalence(model, model)
    assert r.verdict == "equivalent"
    s = exact.structure_of(model)
    assert exact.sym(r.A) == s.P_M
    assert exact.sym(r.B) == s.P_N
    assert exact.el_conditions(model, model, r.A, r.B) == (True, True, True)


@given(ans.equivalent_pairs())
def test_symmetric_on_equivalent_pairs(exact, pair):
    model, twin = pair
    back = equivalence(twin, model)
    assert back.verdict == "equivalent"
    assert back.A.shape == (twin.d, model.d)
    assert exact.el_conditions(twin, model, back.A, back.B) == (True, True, True)


@given(ans.inequivalent_pairs())
def test_symmetric_on_inequivalent_pairs(pair):
    model, twin = pair
    there, back = equivalence(model, twin), equivalence(twin, model)
    assert there.verdict == back.verdict == "not equivalent"
    assert there.witness == back.witness


@given(ans.equivalent_pairs(), st.data())
def test_transitive_along_chains_of_twins(exact, pair, data):
    a, b = pair
    c = data.draw(ans.equivalent_pairs(models=st.just(b)), label="twin of the twin")[1]
    d = data.draw(ans.equivalent_pairs(models=st.just(c)), label="third link")[1]
    ab, bc, ac = equivalence(a, b), equivalence(b, c), equivalence(a, c)
    assert ab.verdict == bc.verdict == ac.verdict == "equivalent"
    assert equivalence(a, d).verdict == "equivalent"
    assert ac.k == (a.effective_complexity(), c.effective_complexity())
    # The composed maps A_ab A_bc, B_ab B_bc are themselves certificates for (a, c).
    assert exact.el_conditions(a, c, ab.A @ bc.A, ab.B @ bc.B) == (True, True, True)


@given(ans.equivalent_pairs(), st.data())
def test_equivalent_then_inequivalent_is_inequivalent(pair, data):
    a, b = pair
    c = data.draw(ans.inequivalent_pairs(models=st.just(b)), label="perturbed twin")[1]
    assert equivalence(a, c).verdict == "not equivalent"
    assert equivalence(c, a).verdict == "not equivalent"
