"""The graded comparison's shared coordinates and distances, checked against
dense computations on models small enough to form ``L`` and ``L~``.

The joint token QR is streamed in blocks of ``spectra.TOKEN_BLOCK`` tokens; the
tests shrink the block so that the streaming path (LAPACK ``tpqrt``) runs over
many blocks, as it does at vocabulary scale.
"""
import numpy as np
import pytest
import scipy.linalg
from scipy.special import logsumexp

from allornone.numeric import FloatModel, graded, scale, spectra
from allornone.numeric import distances as distances_module


def _pair(m, n, d, extra=(2, 3), seed=0, pivot=0):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((m, d))
    G = rng.standard_normal((n, d))
    F[:, -1] = F[:, 0]  # rank F = d - 1
    a = FloatModel(F, G, pivot)
    F2, G2 = scale.b5_twin(F, G, pivot, extra=extra, seed=seed + 1)
    return a, FloatModel(F2, G2, pivot)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(spectra, "TOKEN_BLOCK", 64)


@pytest.mark.parametrize("m, n, d", [(40, 1500, 12), (9, 700, 15), (30, 20, 6), (25, 12, 6)])
def test_joint_factors_put_both_models_in_one_basis(small_blocks, m, n, d):
    """Each model's own singular values, and the cross products of the two
    models' token and context matrices, are reproduced by the joint factors
    (``G_0^T G~_0 = (W_G R_G)^T (W~_G R~_G)``: the shared ``Q_t`` cancels)."""
    a, b = _pair(m, n, d, pivot=3)
    fa, fb = spectra.factor_pair(a, b)
    for model, f in ((a, fa), (b, fb)):
        s = np.linalg.svd(model.log_odds(), compute_uv=False)
        r = min(s.size, f.s.size)
        assert np.allclose(f.s[:r], s[:r], rtol=0, atol=1e-12 * s[0])
        assert np.allclose(f.Q_F @ f.R_F, model.F, rtol=0, atol=1e-12 * np.abs(model.F).max())
    Ga, Gb = a.G0, b.G0
    cross = (fa.W_G @ fa.R_G).T @ (fb.W_G @ fb.R_G)
    assert np.allclose(cross, Ga.T @ Gb, rtol=0, atol=1e-11 * np.linalg.norm(Ga) * np.linalg.norm(Gb))
    ctx = (fa.W_F @ fa.R_F).T @ (fb.W_F @ fb.R_F)
    assert np.allclose(ctx, a.F.T @ b.F, rtol=0, atol=1e-11 * np.linalg.norm(a.F) * np.linalg.norm(b.F))
    with pytest.raises(ValueError, match="implicit"):
        fa.right(1)


def _dense_angles(A, B):
    return np.sort(scipy.linalg.subspace_angles(A, B))[::-1]


@pytest.mark.parametrize("noise", [1e-9, 1e-4, 1e-1])
def test_angles_and_wedin_match_a_dense_computation(small_blocks, noise):
    """Principal angles between the top-k singular subspaces of L and L~ as
    scipy computes them from the dense matrices; the bound holds."""
    rng = np.random.default_rng(5)
    m, n, d, k = 30, 900, 8, 5
    F = rng.standard_normal((m, d)) * np.logspace(0, -2, d)
    G = rng.standard_normal((n, d))
    a = FloatModel(F, G)
    b = FloatModel(F + noise * rng.standard_normal((m, d)), G + noise * rng.standard_normal((n, d)))
    w = graded.wedin_bound(a, b, k)
    Ua, _, Vta = np.linalg.svd(a.log_odds(), full_matrices=False)
    Ub, _, Vtb = np.linalg.svd(b.log_odds(), full_matrices=False)
    for got, want in ((w["angles_context"], _dense_angles(Ua[:, :k], Ub[:, :k])),
                      (w["angles_token"], _dense_angles(Vta[:k].T, Vtb[:k].T))):
        assert np.allclose(got, want, rtol=1e-6, atol=1e-12)
    assert w["sin_max"] <= w["bound"] <= 1.0


def _dense_distances(a, b):
    La, Lb = a.log_odds(), b.log_odds()
    lpa = La - logsumexp(La, axis=1, keepdims=True)
    lpb = Lb - logsumexp(Lb, axis=1, keepdims=True)
    pa, pb = np.exp(lpa), np.exp(lpb)
    kl = (pa * (lpa - lpb)).sum(axis=1)
    tv = 0.5 * np.abs(pa - pb).sum(axis=1)
    E = np.abs(La - Lb)
    return {"max_abs_log_odds_diff": E.max(), "rel_log_odds_diff": np.linalg.norm(La - Lb) / np.linalg.norm(La),
            "kl_mean": kl.mean(), "kl_max": kl.max(), "tv_mean": tv.mean(), "tv_max": tv.max(),
            "witness": np.unravel_index(np.argmax(E), E.shape)}


@pytest.mark.parametrize("pivot", [0, 4])
def test_distances_match_a_dense_computation(monkeypatch, pivot):
    monkeypatch.setattr(distances_module, "BLOCK_ENTRIES", 1000)  # many blocks of contexts
    rng = np.random.default_rng(pivot)
    m, n, d = 37, 120, 5
    a = FloatModel(rng.standard_normal((m, d)), rng.standard_normal((n, d)), pivot)
    b = FloatModel(a.F + 0.3 * rng.standard_normal((m, d)), a.G + 0.3 * rng.standard_normal((n, d)), pivot)
    got, want = graded.distances(a, b), _dense_distances(a, b)
    for key in ("max_abs_log_odds_diff", "rel_log_odds_diff", "kl_mean", "kl_max", "tv_mean", "tv_max"):
        assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-15), key
    assert (got["witness"]["x"], got["witness"]["y"]) == tuple(int(i) for i in want["witness"])


def test_distances_read_a_common_offset_at_the_log_odds_scale():
    """``g(y) + c`` for every token with ``|c|`` about 1e12 (``g`` on a grid of
    2^-10 and ``c`` integer, so ``G + c`` and ``G_0`` are exact): the
    distributions are those of ``g``, and so are the distances, to rounding at
    the size of the log-odds -- not at the size of ``f(x)^T c``, which scores
    taken with ``G`` itself would carry (about 1e-4 here)."""
    rng = np.random.default_rng(7)
    m, n, d = 20, 50, 4
    F = rng.standard_normal((m, d))
    G = np.round(1024 * rng.standard_normal((n, d))) / 1024
    c = np.round(1e12 * rng.uniform(0.5, 1.0, d))
    a = FloatModel(F, G)
    shifted = FloatModel(F, G + c)
    assert np.array_equal(shifted.G0, a.G0)
    r = graded.distances(a, shifted)
    assert r["max_abs_log_odds_diff"] <= 1e-13 * np.abs(a.log_odds()).max()
    assert r["kl_max"] <= 1e-13 and r["tv_max"] <= 1e-13


def _scaled_pair(e: int):
    """A pair with ``F`` and ``G`` scaled by ``2^(e/2)`` each (exactly), ``L`` by ``2^e``."""
    rng = np.random.default_rng(11)
    F, G = rng.standard_normal((8, 3)), rng.standard_normal((10, 3))
    G2 = G + 1e-6 * rng.standard_normal((10, 3))
    h = e // 2
    return (FloatModel(np.ldexp(F, h), np.ldexp(G, e - h)), FloatModel(np.ldexp(F, h), np.ldexp(G2, e - h)))


@pytest.mark.parametrize("e", [-1060, -600, 500, 1000])
def test_wedin_bound_and_angles_do_not_depend_on_the_scale(e):
    """Scaling ``L`` and ``L~`` alike by ``2^e`` (``F`` and ``G`` each by
    ``2^(e/2)``, all entries normal numbers): angles and the bound are ratios
    and must not move -- at ``2^-1060`` the log-odds are subnormal, where a
    bound formed from them would round to zero."""
    a, b = _scaled_pair(0)
    ref = graded.wedin_bound(a, b, 2)
    a, b = _scaled_pair(e)
    w = graded.wedin_bound(a, b, 2)
    assert w["sin_max"] <= w["bound"]
    assert w["bound"] == pytest.approx(ref["bound"], rel=1e-9)
    assert w["sin_max"] == pytest.approx(ref["sin_max"], rel=1e-6)


def test_relative_distance_of_huge_log_odds():
    """Log-odds near 1e250: their squares overflow, the relative Frobenius
    distance must not (it is a ratio)."""
    a, b = _scaled_pair(0)
    want = graded.distances(a, b)["rel_log_odds_diff"]
    a, b = _scaled_pair(830)
    got = graded.distances(a, b)["rel_log_odds_diff"]
    assert got == pytest.approx(want, rel=1e-9)


def test_log_odds_beyond_binary64_are_a_clear_error(tmp_path):
    from click.testing import CliRunner

    from allornone.errors import NonFiniteValueError
    from allornone.theorems.engine.cli import main

    a, b = _scaled_pair(1200)
    with pytest.raises(NonFiniteValueError, match="overflow binary64"):
        graded.compare(a, b)
    with pytest.raises(NonFiniteValueError, match="not finite"):
        graded.distances(a, b)
    for name, m in (("a", a), ("b", b)):
        np.savez(tmp_path / f"{name}.npz", features=np.asarray(m.F), weight=np.asarray(m.G))
    res = CliRunner().invoke(main, ["compare", "--features", f"{tmp_path / 'a.npz'}:features", "--head",
                                    f"{tmp_path / 'a.npz'}:weight", "--features", f"{tmp_path / 'b.npz'}:features",
                                    "--head", f"{tmp_path / 'b.npz'}:weight"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1 and "overflow binary64" in res.output
