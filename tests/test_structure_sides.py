"""Where M and N differ, nothing may confuse them: the float structure's
projectors match the exact ones, and Theorem 5's certificate B* is built from
P~_N~ (with P~_M~ in its place it can still pass EL1-EL3, so only the formula
tells the two apart)."""
import numpy as np

from allornone.symbolic import ExactModel
from allornone.theorems import get_record, thm5
from allornone.theorems.engine.runner import instance_rng

# d = 2, SF = span(e1), SG = span(e1 + e2): M = span(e1), N = span(e1 + e2)
SKEW = ExactModel([[1, 0]], [[0, 0], [1, 1]])


def test_the_instance_has_M_not_N():
    s = SKEW.structure
    assert s.P_M.to_fractions() == [["1", "0"], ["0", "0"]]
    assert s.P_N.to_fractions() == [["1/2", "1/2"], ["1/2", "1/2"]]


def test_float_projectors_onto_M_and_N_match_the_exact_ones():
    exact, flt = SKEW.structure, SKEW.to_float().structure
    assert np.abs(flt.P_M - exact.P_M.to_numpy()).max() < 1e-12
    assert np.abs(flt.P_N - exact.P_N.to_numpy()).max() < 1e-12
    assert flt.basis_M.shape == flt.basis_N.shape == (2, 1)


def test_B_star_is_built_from_the_projector_onto_N(exact):
    # a change of basis (equivalent) whose twin has M~ != N~ and k~ = 1
    inst = get_record("thm5").sample(instance_rng(0, "thm5", 11), 11)
    a, b = inst.models
    assert inst.kind == "change of basis" and b.structure.P_M != b.structure.P_N
    _, B = thm5.canonical_certificate(a, b)
    s, t = exact.structure_of(a), exact.structure_of(b)
    GA, GB = s.G0 * s.P_N, t.G0 * t.P_N
    assert exact.sym(B) == GA.T * GB.T.pinv()
    GB_M = t.G0 * t.P_M
    assert exact.sym(B) != GA.T * GB_M.T.pinv()  # the instance tells the two formulas apart
