"""Corollary 6 and Theorem 5 in floats: the computed maps are witnesses.

Instances from the metamorphic harness (``allornone.theorems.engine.invariance``),
decided exactly and in floats on the same exactly representable numbers:

* a change of basis of condition about 1e4 on each side, where the a priori
  error of the computed ``A_p`` (about 1e-3 of the data) left consistency
  undecided although ``A_p``'s own residual is 1e-12: consistency is judged on
  that residual and its rounding, so the verdict is decided and agrees;
* ill-conditioned maps (``sigma_min(A*) / |A*|`` about 1e-11): ``A_p`` looks
  singular within its error, and "every solution is singular" would contradict
  the exact verdict; it is undecided unless the error is resolved at ``rtol``;
* a hidden component that makes ``rank F~ = 3`` against ``rank F = 2``: no
  invertible map can exist, which decided ranks show directly.
"""
import pytest

from allornone.decision import Truth
from allornone.numeric import equivalence as feq
from allornone.theorems import get_record
from allornone.theorems.engine import invariance as inv


def _pair(name, index):
    _, inst = inv.transform_instance("cor6", name, 0, index)
    exact = get_record("cor6").evaluate(inst, "exact").atoms["linearly_identified"].truth
    a, b = (m.to_float() for m in inst.models)
    return a, b, exact


def test_consistency_is_judged_on_the_witness_residual():
    a, b, exact = _pair("change of basis", 0)
    r = feq.linear_identification(a, b)
    assert exact is Truth.HOLDS
    assert r.decision.truth is Truth.HOLDS and r.A is not None, r.reason


@pytest.mark.parametrize("index", [55, 70])
def test_singular_looking_map_is_not_called_singular_unless_resolved(index):
    a, b, exact = _pair("change of basis", index)
    r = feq.linear_identification(a, b)
    assert exact is Truth.HOLDS
    assert r.decision.truth is not Truth.FAILS, r.reason


def test_ranks_that_differ_rule_out_an_invertible_map():
    a, b, exact = _pair("hidden components", 22)
    r = feq.linear_identification(a, b)
    assert exact is Truth.FAILS
    assert r.decision.truth is Truth.FAILS and "preserves ranks" in r.reason


@pytest.mark.parametrize("name, index", [("change of basis", 20), ("change of basis", 26), ("hidden coordinates", 41)])
def test_theorem5_certificate_is_judged_as_a_witness(name, index):
    """The computed ``A*``, ``B*`` of Theorem 5 are explicit maps, but their
    residuals carry the errors of the computed subspaces at the size of the raw
    rows (products of condition numbers up to 1e8 here): on their own they are
    not certain at the tolerance, and say so, never "fails". Decided where the
    claim lives -- ``L = L~``, each entry certain, ranks decided and equal --
    EL1--EL3 hold (Theorem 5), and the certificate says by what."""
    from allornone.numeric import equivalence as feq
    from allornone.theorems import thm5

    _, inst = inv.transform_instance("thm5", name, 0, index)
    assert get_record("thm5").evaluate(inst, "exact").atoms["el_equivalent"].truth is Truth.HOLDS
    a, b = (m.to_float() for m in inst.models)
    own = feq.el_certificate(a, b)
    assert not any(d.fails for d in (own.el1, own.el2, own.el3))
    cert = thm5.el_certificate(a, b)
    assert [d.truth for d in (cert.el1, cert.el2, cert.el3)] == [Truth.HOLDS] * 3
    assert any(d.detail.get("by") == "L = L~" for d in (cert.el1, cert.el2, cert.el3))


@pytest.mark.parametrize("where", [0, 1])
def test_a_residual_lost_to_overflow_is_no_evidence(where):
    """A NaN residual (``inf - inf``) compares false with every threshold; the
    column test must call it undecided, not "holds"."""
    import numpy as np

    from allornone.numeric import linalg as fl

    res = np.zeros(2)
    res[where] = np.nan
    d = feq._columns(fl.DEFAULT_TOLERANCE, res, np.ones(2), np.zeros(2))
    assert d.truth is Truth.UNDECIDED


# Two linearly identified models (``b = a`` in another basis) whose contexts lie
# 2^-503, 2^-76 and 2^-374 apart: balanced coordinate by coordinate, each on its
# own, the map between them has entries 2^149 apart.
_FAR_A = ([["0x0.0p+0", "-0x1.d1ada00000000p-503"], ["-0x1.f7b6680000000p-76", "-0x1.f7b6680000000p-76"],
           ["0x1.34dc700000000p-374", "0x1.34dc700000000p-373"]],
          [[1, -3], [0, -1], [2, 0], [0, -1], [2, -2], [2, -1]])
_FAR_B = ([["-0x1.d1ada00000000p-503", "0x0.0p+0"], ["0x0.0p+0", "-0x1.f7b6680000000p-76"],
           ["0x1.34dc700000000p-374", "0x1.34dc700000000p-374"]],
          [[-3, -2], [-1, -1], [0, 2], [-1, -1], [-2, 0], [-1, 1]])


def test_a_map_between_far_apart_balanced_presentations_is_not_called_singular():
    """Invertibility is unchanged by scaling the map's rows and columns, its
    singular values are not: the map's say "singular at rtol", its
    equilibrated ones do not. "Singular" is called only where both say so
    (here: undecided, where it was *fails* against an exact *holds*)."""
    from fractions import Fraction

    from allornone.symbolic import ExactModel
    from allornone.theorems.engine.record import Instance

    models = [ExactModel([[Fraction(float.fromhex(v)) for v in r] for r in F], G, 3) for F, G in (_FAR_A, _FAR_B)]
    inst = Instance("x", tuple(models), {})
    rec = get_record("cor6")
    assert rec.evaluate(inst, "exact").atoms["linearly_identified"].truth is Truth.HOLDS
    floats = Instance("x", tuple(m.to_float() for m in models), {}, float_only=True)
    assert not rec.evaluate(floats, "float").atoms["linearly_identified"].fails


@pytest.mark.parametrize("index", [11, 26])
def test_the_el_conditions_are_tied_only_to_an_l_that_holds(index):
    """An equivalent pair with one token's ``g_0`` scaled by ``1 + 1e-6`` in the
    twin: ``L = L~`` fails while ``k = k~`` and both structures are decided,
    and the certificate's own residuals, carrying the errors of its
    ill-conditioned subspaces, are all undecided. Nothing may tie them to
    "holds" then: the models are not equivalent."""
    from allornone.numeric import FloatModel
    from allornone.theorems import thm5

    _, inst = inv.transform_instance("thm5", "change of basis", 0, index)
    a, b = (m.to_float() for m in inst.models)
    y = 1 if b.pivot != 1 else 2
    G = b.G.copy()
    G[y] = G[b.pivot] + (1 + 1e-6) * (G[y] - G[b.pivot])
    b2 = FloatModel(b.F, G, pivot=b.pivot)
    own = feq.el_certificate(a, b2)
    assert own.decided and a.structure.k == b2.structure.k and not own.el1.holds
    assert thm5.same_distribution(a, b2).fails
    cert = thm5.el_certificate(a, b2)
    assert not cert.decision.holds and not any(d.holds for d in (cert.el1, cert.el2, cert.el3))
    assert thm5.equivalence(a, b2).verdict == "not equivalent"
