"""Theorem 5: L = L~ <=> (f, g) ~EL (f~, g~), both ways, exactly."""
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.decision import Truth
from allornone.numeric import strategies as ans
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.theorems.thm5 import el_certificate, equivalence, same_distribution


@given(ans.equivalent_pairs())
def test_equivalent_pairs_get_a_certificate_that_rechecks(exact, pair):
    model, twin = pair
    assert exact.structure_of(model).L == exact.structure_of(twin).L  # the generators' promise
    r = equivalence(model, twin)
    assert r.verdict == "equivalent"
    assert r.witness is None and r.witness_names is None
    assert r.A is not None and r.B is not None
    assert r.A.shape == (model.d, twin.d) and r.B.shape == (model.d, twin.d)
    assert exact.el_conditions(model, twin, r.A, r.B) == (True, True, True)
    assert r.residuals == {"L": 0, "EL1": 0, "EL2": 0, "EL3": 0}


@given(ans.equivalent_pairs(kinds=("b5",)))
def test_b5_twin_has_dimension_k_plus_a_plus_b_and_same_k(pair):
    model, twin = pair
    k = model.effective_complexity()
    assert twin.d == k + pair.info["a"] + pair.info["b"]
    assert equivalence(model, twin).k == (k, k)


@given(ans.equivalent_pairs())
def test_certificate_is_the_canonical_one(exact, pair):
    """A* = (F P_M)^T ((F~ P~_M~)^T)^+ and B* = (G_0 P_N)^T ((G~_0 P~_N~)^T)^+ (docs/theory/index.md#extended-linear-equivalence)."""
    model, twin = pair
    r = equivalence(model, twin)
    s, t = exact.structure_of(model), exact.structure_of(twin)
    FA, FB = s.F * s.P_M, t.F * t.P_M
    GA, GB = s.G0 * s.P_N, t.G0 * t.P_N
    pinv = (lambda X: X.pinv() if not X.is_zero_matrix else X.T * 0)
    assert exact.sym(r.A) == FA.T * pinv(FB.T)
    assert exact.sym(r.B) == GA.T * pinv(GB.T)


@given(ans.inequivalent_pairs(kinds=("log-odds",)))
def test_perturbed_log_odds_entry_is_the_witness(exact, pair):
    model, twin = pair
    x, y, delta = pair.info["x"], pair.info["y"], pair.info["delta"]
    r = equivalence(model, twin)
    assert r.verdict == "not equivalent"
    assert r.witness == (x, y)
    assert r.witness_names == (model.contexts[x], model.tokens[y])
    assert r.A is None and r.B is None
    assert r.residuals["L"] == abs(delta)
    diff = exact.structure_of(twin).L - exact.structure_of(model).L
    assert diff[x, y] == delta and sum(1 for v in diff if v != 0) == 1
    # Theorem 5, the other way round: no A, B satisfy EL1-EL3 either.
    assert el_certificate(model, twin).decision.fails


@given(ans.inequivalent_pairs(kinds=("rank",)))
def test_perturbed_rank_is_not_equivalent(exact, pair):
    model, twin = pair
    r = equivalence(model, twin)
    assert r.verdict == "not equivalent"
    assert abs(r.k[0] - r.k[1]) == 1 and r.k == (pair.info["k"], pair.info["k~"])
    L, Lt = exact.structure_of(model).L, exact.structure_of(twin).L
    x, y = r.witness
    assert L[x, y] != Lt[x, y]
    # the first differing entry in row-major order
    first = next((i, j) for i in range(model.m) for j in range(model.n) if L[i, j] != Lt[i, j])
    assert r.witness == first
    assert el_certificate(model, twin).decision.fails


@given(st.one_of(ans.equivalent_pairs(), ans.inequivalent_pairs()), st.data())
def test_verdict_does_not_depend_on_the_pivot(pair, data):
    model, twin = pair
    verdict = equivalence(model, twin).verdict
    p = data.draw(st.integers(0, model.n - 1), label="new pivot")
    a, b = model.with_pivot(p), twin.with_pivot(p)
    assert a.pivot == b.pivot == p
    r = equivalence(a, b)
    assert r.verdict == verdict
    assert el_certificate(a, b).decision.truth is (Truth.HOLDS if verdict == "equivalent" else Truth.FAILS)
    assert r.k == equivalence(model, twin).k


def test_dimensions_may_differ():
    model = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 1]])
    twin = gen.b5_twin(model, a=2, b=1, T=[[1, 0], [0, 1]], R=gen.random_unimodular(3, 5), c=[1, 0, 0, 2, -1])
    assert (model.d, twin.d) == (2, 5)
    r = equivalence(model, twin)
    assert r.verdict == "equivalent" and r.k == (2, 2)
    assert r.A.shape == (2, 5)


@given(ans.exact_models(rank_G=0), st.integers(0, 2), st.integers(1, 2), st.data())
def test_k_zero_edge(exact, model, a, b, data):
    """All logits equal: M = N = {0}, any model with L = 0 is equivalent and the
    certificate is A* = B* = 0."""
    assert model.effective_complexity() == 0
    twin = data.draw(ans.b5_twins(model, a=a, b=b), label="twin")[1]
    r = equivalence(model, twin)
    assert r.verdict == "equivalent" and r.k == (0, 0)
    assert r.A.is_zero and r.B.is_zero
    assert exact.el_conditions(model, twin, r.A, r.B) == (True, True, True)


def test_k_zero_against_nonzero_logits():
    flat = ExactModel([[1, 2]], [[1, 1], [1, 1], [1, 1]])
    other = ExactModel([[1, 2]], [[1, 1], [1, 1], [2, 1]])
    r = equivalence(flat, other)
    assert r.verdict == "not equivalent" and r.k == (0, 1)
    assert r.witness == (0, 2) and r.residuals["L"] == 1


def test_equivalence_result_fields_exact():
    a = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 1]])
    b = ExactModel([[2, 0, 5], [0, 1, 7], [2, 1, 12]], [[0, 0, 0], ["1/2", 2, 0], ["3/2", 1, 0]])
    r = equivalence(a, b)
    assert r.verdict == "equivalent"
    assert r.tolerance is None
    assert r.k == (2, 2)
    assert r.distribution.holds and r.distribution.is_exact
    assert r.certificate.decided and r.certificate.decision.holds
    # a is diverse (P_M = I), so A* = F^T (F~^T)^+ (minimum norm: it does not vanish off SF~)
    assert r.A.to_fractions() == [["4/9", "-7/45", "1/45"], ["-14/45", "29/225", "28/225"]]
    assert r.B.to_fractions() == [["2", "0", "0"], ["0", "1", "0"]]
    assert set(r.residuals) == {"L", "EL1", "EL2", "EL3"}
    assert all(v == 0 and isinstance(v, Fraction) for v in r.residuals.values())

    c = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 2]])
    r = equivalence(a, c)
    assert r.verdict == "not equivalent"
    assert r.witness == (1, 2) and r.witness_names == ("x1", "y2")
    assert r.residuals["L"] == 1 and r.distribution.fails
    assert r.A is None and r.B is None
    assert r.certificate.decision.fails


def test_equivalence_result_fields_float():
    a = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 1]])
    b = ExactModel([[2, 0, 5], [0, 1, 7], [2, 1, 12]], [[0, 0, 0], ["1/2", 2, 0], ["3/2", 1, 0]])
    r = equivalence(a.to_float(), b.to_float())
    assert r.verdict == "equivalent"
    lo, hi = r.tolerance
    assert 0 < lo < hi
    # each residual within its own bound (entry by entry, row by row)
    for dec in (r.distribution, r.certificate.el1, r.certificate.el2, r.certificate.el3):
        assert dec.holds and isinstance(dec.residual, float) and dec.residual <= dec.tolerance[0]
    assert r.A.shape == (2, 3)
    c = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 2]])
    r = equivalence(a.to_float(), c.to_float())
    assert r.verdict == "not equivalent" and r.witness == (1, 2)
    assert r.residuals["L"] == pytest.approx(1.0)


@given(st.one_of(ans.equivalent_pairs(), ans.inequivalent_pairs()))
def test_same_distribution_is_the_log_odds_comparison(exact, pair):
    model, twin = pair
    equal = exact.structure_of(model).L == exact.structure_of(twin).L
    assert same_distribution(model, twin).holds is equal
    assert (equivalence(model, twin).verdict == "equivalent") is equal


def test_float_el_checks_in_row_blocks_agree_with_one_block(monkeypatch):
    import numpy as np

    from allornone.numeric import FloatModel
    from allornone.numeric.scale import b5_twin as float_twin
    from allornone.numeric.scale import random_model as float_model
    from allornone.theorems import thm5

    rng = np.random.default_rng(0)
    a = FloatModel(*float_model(40, 60, 8, 7, 6, seed=rng))
    b = FloatModel(*float_twin(a.F, a.G, extra=(1, 2), seed=rng))
    c = FloatModel(b.F, b.G + rng.normal(size=b.G.shape) * 1e-3)
    whole = [thm5.el_certificate(a, t) for t in (b, c)]
    monkeypatch.setattr(thm5, "BLOCK_ROWS", 7)
    blocked = [thm5.el_certificate(a, t) for t in (b, c)]
    for w, bl in zip(whole, blocked):
        for name in ("el1", "el2", "el3"):
            assert getattr(w, name).truth is getattr(bl, name).truth
            assert getattr(bl, name).residual == pytest.approx(getattr(w, name).residual, rel=1e-6, abs=1e-12)
    assert blocked[0].decision.holds and blocked[1].el2.fails
