"""docs/theory/index.md#floating-point as a regression test: a rank decision where floats lie.

A B.5 twin of a rank-3 model with a badly scaled ``R`` (one row times 1000):
its certificate matrix ``G~_0 P~_Ñ`` has exact rank 3, but in floats a fourth
singular value of about ``1e-14`` survives NumPy's default ``pinv`` cut
(``1e-15 * sigma_max``); the pseudo-inverse then blows that noise up and the
EL2 residual is large -- a false "not equivalent". The project's float layer
truncates at the decided rank and must never say "not equivalent" here.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.numeric import strategies as ans
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.theorems.thm5 import equivalence

MODEL = ExactModel([[2, 0, -1], [2, 2, 0], [2, -1, 1], [-1, -1, -2]],
                   [[0, 0, 0], [1, -1, -1], [2, 2, 2], [-1, 1, -1], [-2, -2, 1]])
T = [[-1, -1, 2], [-1, 0, 0], [-1, -1, 1]]
R = [[-1000, -1000, 0, 1000, 1000], [1, 0, 0, -2, -1], [-1, 0, -1, 2, 2], [0, -1, 1, -2, -1], [0, 0, 1, -1, 0]]
TWIN = gen.b5_twin(MODEL, a=1, b=1, T=T, R=R, c=[0] * 5)


def test_the_instance_is_equivalent_exactly():
    assert MODEL.effective_complexity() == 3 and TWIN.d == 5
    r = equivalence(MODEL, TWIN)
    assert r.verdict == "equivalent"
    assert r.residuals["EL2"] == 0
    assert TWIN.effective_complexity() == 3


def _certificate_matrices():
    a, b = MODEL.to_float(), TWIN.to_float()
    GA = a.G0 @ a.structure.P_N
    GB = b.G0 @ b.structure.P_N
    return GA, GB


def test_numpy_default_pinv_gives_a_false_el2_failure():
    GA, GB = _certificate_matrices()
    sv = np.linalg.svd(GB, compute_uv=False)
    assert sv[2] > 0.1  # three genuine singular values
    assert sv[3] < 1e-12  # the fourth is rounding noise
    if sv[3] <= 1e-15 * sv[0]:
        pytest.skip(f"on this platform the noise singular value {sv[3]:.1e} falls under NumPy's cut")
    B_numpy = GA.T @ np.linalg.pinv(GB.T)
    el2_numpy = np.abs(GA.T - B_numpy @ GB.T).max()
    assert el2_numpy > 1e-3  # the false "not equivalent"
    # truncated at the exact rank 3, the same computation is clean
    u, s, vt = np.linalg.svd(GB.T, full_matrices=False)
    B_cut = GA.T @ (vt[:3].T / s[:3]) @ u[:, :3].T
    assert np.abs(GA.T - B_cut @ GB.T).max() < 1e-9


def test_our_float_equivalence_is_not_fooled():
    r = equivalence(MODEL.to_float(), TWIN.to_float())
    assert r.verdict in ("equivalent", "undecided")
    assert r.verdict == "equivalent"  # on this instance it is in fact decided
    el2 = r.certificate.el2
    assert el2.holds and el2.residual <= el2.tolerance[0]
    assert r.k == (3, 3)


@given(ans.exact_models(m=st.integers(3, 5), n=st.integers(4, 6), d=st.integers(2, 4),
                        rank_F=st.integers(2, 4), rank_G=st.integers(2, 4)),
       st.sampled_from((10, 100, 1000, 10_000)), st.data())
def test_badly_scaled_twins_are_never_called_inequivalent(model, scale, data):
    pair = data.draw(ans.b5_twins(model, a=st.integers(0, 2), b=st.integers(0, 2)), label="twin")
    k, D = model.effective_complexity(), pair[1].d
    R = [[v * (scale if i == 0 else 1) for v in row] for i, row in enumerate(pair.info["R"])]
    twin = gen.b5_twin(model, a=pair.info["a"], b=pair.info["b"], T=pair.info["T"] if k else None, R=R,
                       c=pair.info["c"], phi=lambda x, f, a: pair.info["phi"][x],
                       psi=lambda y, g, b: pair.info["psi"][y])
    assert twin.d == D
    assert equivalence(model, twin).verdict == "equivalent"
    assert equivalence(model.to_float(), twin.to_float()).verdict != "not equivalent"
