"""docs/theory/index.md#floating-point as a regression test: a rank decision where floats lie.

A B.5 twin of a rank-3 model with a badly scaled ``R`` (one row times 1000):
its certificate matrix ``G~_0 P~_Ñ`` has exact rank 3, but in floats a fourth
singular value of rounding size survives; where it lies above NumPy's default
``pinv`` cut (``1e-15 * sigma_max``, which depends on the LAPACK) the
pseudo-inverse blows that noise up and the EL2 residual is large -- a false
"not equivalent". So that the test asserts on every platform, the trap is also
built with its spurious singular value planted at a controlled size
(:func:`_controlled_trap`). The project's float layer truncates at the decided
rank and must never say "not equivalent" here.
"""
import numpy as np
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


def test_the_certificate_matrix_has_exact_rank_3_and_a_noise_singular_value():
    GA, GB = _certificate_matrices()
    sv = np.linalg.svd(GB, compute_uv=False)
    assert sv[2] > 0.1  # three genuine singular values
    assert sv[3] < 1e-12  # the fourth is rounding noise (its size depends on the LAPACK)


def _controlled_trap(noise=1e-12, seed=0):
    """The trap with its noise controlled instead of left to the LAPACK: ``X``
    of exact rank 3 plus a spurious singular value ``noise * sigma_1`` --
    a thousand times above NumPy's default ``pinv`` cut (``1e-15 sigma_1``) and
    far below the project's tolerance (``1e-9 sigma_1``); every LAPACK computes
    singular values to about ``1e-16 sigma_1``, so both sides of the cut hold
    everywhere. ``Y = W0 X0`` plus rounding-sized noise along the spurious
    direction. Returns ``X, Y, W0``."""
    GA, GB = _certificate_matrices()
    rng = np.random.default_rng(seed)
    u, s, vt = np.linalg.svd(GB.T)
    X0 = (u[:, :3] * s[:3]) @ vt[:3]
    X = X0 + noise * s[0] * np.outer(u[:, 3], vt[3])
    W0 = rng.standard_normal((GA.shape[1], X.shape[0]))
    Y0 = W0 @ X0
    Y = Y0 + 1e-14 * np.abs(Y0).max() * np.outer(rng.standard_normal(Y0.shape[0]), vt[3])
    return X, Y, W0, X0


def test_numpy_default_pinv_is_fooled_on_every_platform():
    X, Y, W0, X0 = _controlled_trap()
    sv = np.linalg.svd(X, compute_uv=False)
    assert 1e-13 * sv[0] < sv[3] < 1e-11 * sv[0]  # the spurious value, as planted
    # NumPy keeps it: its pseudo-inverse carries 1/sigma_4 ~ 1e12 / sigma_1
    assert np.abs(np.linalg.pinv(X)).max() > 1e10 / sv[0]
    # the map it finds from Y, applied to the noise-free X0, misses Y0 by far more
    # than any tolerance allows: the false EL2 failure ("not equivalent")
    W_numpy = Y @ np.linalg.pinv(X)
    assert np.abs(W_numpy @ X0 - W0 @ X0).max() > 1e-6 * np.abs(Y).max()


def test_the_project_truncates_at_the_decided_rank():
    from allornone.numeric import linalg as fl

    # the certificate is solved at the decided k~ (3 here), never at NumPy's cut
    X, Y, W0, X0 = _controlled_trap()
    W = fl.solve_left(Y, X, 3)
    assert np.abs(W @ X0 - W0 @ X0).max() < 1e-12 * np.abs(Y).max()
    assert np.abs(fl.pinv(X, 3)).max() < 1e3 / np.linalg.svd(X0, compute_uv=False)[2]


def test_a_project_pinv_with_numpys_cut_would_fail_the_trap(monkeypatch):
    # the two previous tests are able to fail: with NumPy's cut in place of the
    # decided rank, the project's solve is as fooled as NumPy's
    from allornone.numeric import linalg as fl

    X, Y, W0, X0 = _controlled_trap()
    monkeypatch.setattr(fl, "pinv", lambda A, rank=None, tol=fl.DEFAULT_TOLERANCE: np.linalg.pinv(A))
    W = fl.solve_left(Y, X, 3)
    assert np.abs(W @ X0 - W0 @ X0).max() > 1e-6 * np.abs(Y).max()


def test_our_float_equivalence_is_not_fooled():
    r = equivalence(MODEL.to_float(), TWIN.to_float())
    assert r.verdict in ("equivalent", "undecided")
    # the twin's rationals are rounded on input, with a declared error, and some of
    # its logits cancel to zero: within that error nothing can call them equal
    assert TWIN.to_float().input_error > 0 and r.verdict == "undecided"
    el2 = r.certificate.el2
    assert not el2.fails and el2.residual <= el2.tolerance[1]
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
