"""Spectra and the choice of ``k`` (``numeric.spectra``) at their boundaries:
the largest-gap cut over a tail of rounding noise, the rounding scale of ``k``
when hidden components cancel in ``L``, strict counts of the rank profile, the
range of a given ``k`` (``0`` and ``min(m, n, d)``), the SG cut of ``N``, the
joint token QR at the block boundary, and empty subspaces. Expected values are
worked out here from the constructions."""
import math

import numpy as np
import pytest

from allornone.errors import InputFormatError
from allornone.numeric import FloatModel, Tolerance, spectra

EPS = np.finfo(float).eps
TINY = np.finfo(float).tiny


# -- largest_gap -------------------------------------------------------------------------

@pytest.mark.parametrize("s, floor, want", [
    ([], 0.0, (0, math.inf)),
    ([0.0, 0.0], 0.0, (0, math.inf)),
    ([3.0], 0.0, (1, 1.0)),                                 # no ratio at all
    ([2.0, 2.0, 2.0], 0.0, (3, 1.0)),                       # ratios all 1: no drop
    ([8.0, 4.0, 2.0, 1.0], 0.0, (1, 2.0)),                  # ties: the first
    ([3.0, 2.0, 1e-6, 1e-7], 0.0, (2, 2.0 / 1e-6)),
    ([1.0, 1e-3, 1e-20, 0.0], 1e-14, (2, 1e-3 / 1e-14)),     # the drop into the noise counts once
    ([1.0, 1e-3, 1e-20, 0.0], 0.0, (3, 1e-20 / TINY)),       # without a floor the cut lands in the noise
    ([1.0, 0.5, 1e-20, 1e-25], 1e-16, (2, 0.5 / 1e-16)),
    ([0.5, 0.25], 1.0, (2, 1.0)),                           # everything at the floor: no drop
])
def test_largest_gap(s, floor, want):
    assert spectra.largest_gap(np.array(s), floor) == want


def test_largest_gap_cut_over_a_noisy_tail_with_an_exact_zero():
    """rank 3 in d = 6 and a token coordinate that is zero: sigma_4, sigma_5 are
    rounding noise, sigma_6 is exactly 0; the cut is at 3."""
    rng = np.random.default_rng(0)
    F = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 6))
    G = rng.standard_normal((30, 6))
    G[:, -1] = 0.0
    s = spectra.analyse(FloatModel(F, G), cut="largest-gap")
    assert s.sigma_L[-1] == 0.0 and s.sigma_L[3] < 1e-12 * s.sigma_L[0]
    assert s.k == 3 and s.k_method == "largest-gap" and s.k_decided
    floor = EPS * 40 * s.sigma_L[0]
    assert s.noise == floor
    assert s.gap_ratio == s.sigma_L[2] / floor


# -- rank_profile, noise_floor -------------------------------------------------------------

def test_rank_profile_counts_strictly():
    s = np.array([1.0, 0.5, 0.25])
    assert spectra.rank_profile(s, [0.5, 0.25, 0.125, 1.0]) == [(0.5, 1), (0.25, 2), (0.125, 3), (1.0, 0)]
    prof = spectra.rank_profile(s)
    assert [t for t, _ in prof] == [10.0 ** -e for e in range(1, 17)] and prof[0] == (0.1, 3)
    assert spectra.rank_profile(np.zeros(2), [0.5]) == [(0.5, 0)]
    assert spectra.rank_profile(np.zeros(0), [0.5]) == [(0.5, 0)]


def test_noise_floor():
    assert spectra.noise_floor(np.array([2.0, 1.0]), (40, 30, 7)) == EPS * 40 * 2.0
    assert spectra.noise_floor(np.array([2.0, 1.0]), (3, 30, 7)) == EPS * 30 * 2.0
    assert spectra.noise_floor(np.zeros(0), (3, 4, 5)) == 0.0


# -- analyse -------------------------------------------------------------------------------

def _head(seed=0, bias=True):
    rng = np.random.default_rng(seed)
    X, W, b = rng.standard_normal((40, 6)), rng.standard_normal((30, 6)), rng.standard_normal(30)
    return FloatModel.from_head(X, W, b if bias else None)


def test_hidden_components_that_cancel_are_cut_at_the_scale_of_the_factors():
    """F has components 1e8 times the identified ones in directions orthogonal
    to SG (mixed by an orthogonal Q, so they are not coordinates): they cancel
    in L, whose sigma_1 is about 70, but leave rounding of about 1e-7 in its
    singular values 4..6. At a ``rank_rtol`` (here 1e-12, far below those
    values relative to sigma_1), the zero bound is the rounding at
    ||F|| ||G_0|| (about 1e9): k = 3; at sigma_1(L) it would say 6.

    By rounding alone ``k`` is ``rank L`` of the numbers given, which is 6
    (``Q`` is orthogonal only to rounding, so the components do not cancel
    exactly): values 4..6 are below the factors' rounding and not shown zero
    either, so k is undecided -- not 3 decided."""
    from fractions import Fraction

    from allornone.symbolic import ExactModel

    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    F = np.hstack([rng.standard_normal((40, 3)), 1e8 * rng.standard_normal((40, 3))]) @ Q
    G = np.hstack([rng.standard_normal((30, 3)), np.zeros((30, 3))]) @ Q
    m = FloatModel(F, G)
    s = spectra.analyse(m, Tolerance(rank_rtol=1e-12))
    assert s.sigma_L[3] > 1e3 * 4 * math.sqrt(40) * 2.0 ** -53 * s.sigma_L[0]   # above rounding at sigma_1(L)
    assert s.sigma_L[3] < 4 * math.sqrt(40) * 2.0 ** -53 * s.sigma_F[0] * s.sigma_G0[0]
    assert s.sigma_L[5] > 1e-12 * s.sigma_L[0]       # (so rank_rtol alone would keep all six)
    assert s.k == 3 and s.k_decided and s.k_method == "tolerance"
    exact = ExactModel([[Fraction(x) for x in row] for row in F], [[Fraction(x) for x in row] for row in G])
    assert exact.effective_complexity() == 6
    s = spectra.analyse(m)
    assert not s.k_decided and s.k >= 3, s.k_label()
    assert "undecided" in s.k_label()


def test_k_is_not_decided_zero_when_the_zero_bound_reaches_sigma_1():
    """Hidden components 1e20 times the identified ones (mixed by an orthogonal
    Q) cancel in L, but their rounding exceeds every singular value of L: the
    bound says nothing about L's own size, so k = 0 is not a decision: at a
    ``rank_rtol``, where k is counted against that bound, and by rounding
    alone (``rank L`` on L itself) alike."""
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    F = np.hstack([rng.standard_normal((40, 3)), 1e20 * rng.standard_normal((40, 3))]) @ Q
    G = np.hstack([rng.standard_normal((30, 3)), np.zeros((30, 3))]) @ Q
    m = FloatModel(F, G)
    s = spectra.analyse(m, Tolerance(rank_rtol=1e-12))
    assert s.band[0] * s.sigma_L[0] > s.sigma_L[0]   # the zero bound is above sigma_1 of the computed L
    assert s.k == 0 and not s.k_decided, s.k_label()
    assert not spectra.analyse(m).k_decided


@pytest.mark.parametrize("k", [0, 1, 7])
def test_a_given_k_from_zero_to_the_number_of_singular_values(k):
    m = _head()
    s = spectra.analyse(m, k=k)
    assert s.k == k and s.k_method == "given" and s.k_decided and s.k_label() == f"k = {k} (given)"
    if 0 < k < 7:
        assert s.gap_ratio == s.sigma_L[k - 1] / s.sigma_L[k]
    else:
        assert s.gap_ratio == math.inf
    js = s.to_json()
    assert js["sigma_k"] == (None if k == 0 else float(s.sigma_L[k - 1]))
    assert js["sigma_k_plus_1"] == (0.0 if k == 7 else float(s.sigma_L[k]))


@pytest.mark.parametrize("k", [-1, 8])
def test_a_given_k_out_of_range_is_refused(k):
    with pytest.raises(InputFormatError):
        spectra.analyse(_head(), k=k)


def test_an_unknown_cut_is_refused():
    with pytest.raises(InputFormatError):
        spectra.analyse(_head(), cut="elbow")


def test_k_by_rounding_and_by_rank_rtol():
    """sigma = (1, 1e-6) on L = U diag(sigma) V^T with ||F|| ||G_0|| = 1: by
    rounding k = 2; with rank_rtol 2e-6 it is cut, with 1e-8 it lies in the
    band (gap 1000 times the cut) and k is undecided."""
    rng = np.random.default_rng(2)
    U = np.linalg.qr(rng.standard_normal((20, 2)))[0]
    V = np.vstack([np.zeros((1, 2)), np.linalg.qr(rng.standard_normal((9, 2)))[0]])
    m = FloatModel(U * [1.0, 1e-6], V)
    s = spectra.analyse(m)
    assert (s.k, s.k_decided) == (2, True) and s.k_label() == "k = 2 at rounding, gap 1000 (decided)"
    s = spectra.analyse(m, Tolerance(rank_rtol=2e-6))
    assert s.k == 1 and s.band[0] == 2e-6 and s.band[1] == 1000 * 2e-6
    s = spectra.analyse(m, Tolerance(rank_rtol=1e-8))
    assert s.k == 2 and not s.k_decided


def test_the_band_of_rounding():
    """The zero bound is the column-paired size S = sum_j |f_j| |g_0j| at the
    SVD's level (both triangular factors, both small QRs, the core product)
    plus the core SVD's own error at sigma_1."""
    m = _head()
    s = spectra.analyse(m)
    u, size, d = 2.0 ** -53, max(s.shape), m.d
    S = float(np.sum(np.linalg.norm(m.F, axis=0) * np.linalg.norm(m.G0, axis=0)))
    sigma = s.sigma_L[0]
    lo = (8 * math.sqrt(size) * u * S + 8 * math.sqrt(d) * u * S + (d + 2) * u * S + 4 * math.sqrt(d) * u * sigma) / sigma
    assert s.band[0] == pytest.approx(lo, rel=1e-9) and s.band[1] == pytest.approx(1000 * s.band[0], rel=1e-12)


@pytest.mark.parametrize("exponents", [(60, -60, 0), (200, 0, -200), (-500, 400, 30)])
def test_k_and_its_band_do_not_move_under_a_diagonal_change_of_basis(exponents):
    """f -> D f, g -> D^-1 g by powers of two changes no logit; the zero bound of
    k is taken at a size that does not move with it (|F| |G_0| grows as 2^120
    for exponents +-60 and once made every singular value of L 'zero')."""
    rng = np.random.default_rng(5)
    F = rng.integers(-4, 5, (12, 3)).astype(float)
    G = rng.integers(-4, 5, (9, 3)).astype(float)
    Dg = 2.0 ** np.array(exponents, dtype=float)
    plain, moved = spectra.analyse(FloatModel(F, G)), spectra.analyse(FloatModel(F * Dg, G / Dg))
    assert (moved.k, moved.k_decided) == (plain.k, plain.k_decided) == (3, True)
    assert moved.band[0] == pytest.approx(plain.band[0], rel=1e-9)


def test_a_zero_bias_and_no_bias():
    X = np.random.default_rng(0).standard_normal((40, 6))
    W = np.random.default_rng(1).standard_normal((30, 6))
    zero = spectra.analyse(FloatModel.from_head(X, W, np.zeros(30)))
    none = spectra.analyse(FloatModel.from_head(X, W))
    assert (zero.k, zero.dims, zero.shape) == (6, (7, 6), (40, 30, 7))
    assert (none.k, none.dims, none.shape) == (6, (6, 6), (40, 30, 6))
    assert np.allclose(zero.sigma_L[:6], none.sigma_L, rtol=1e-12)


# -- empty subspaces ------------------------------------------------------------------------

def test_principal_cosines_when_one_space_is_zero():
    G = np.arange(15.0).reshape(5, 3) ** 2
    zeroF = spectra.analyse(FloatModel(np.zeros((4, 3)), G))
    assert zeroF.dims == (0, np.linalg.matrix_rank(G - G[0])) and zeroF.cosines.size == 0 and zeroF.k == 0
    zeroG = spectra.analyse(FloatModel(np.eye(3), np.ones((5, 3))))        # every token the same: G_0 = 0
    assert zeroG.dims == (3, 0) and zeroG.cosines.size == 0 and zeroG.k == 0
    both = spectra.analyse(FloatModel(np.zeros((2, 2)), np.ones((3, 2))))
    assert both.dims == (0, 0) and both.k == 0 and both.k_label() == "k = 0 at rounding, gap 1000 (decided)"


# -- M and N of the truncation -------------------------------------------------------------

def test_bases_MN_cut_SG_at_no_fewer_than_k_directions():
    """SF = span(e_0, e_1) (F is zero on e_2), SG = R^3: k = 2, M = N = span(e_0, e_1).
    SG has three directions above the cut; keeping only k of them would give
    another N."""
    rng = np.random.default_rng(5)
    F = np.hstack([rng.standard_normal((8, 2)), np.zeros((8, 1))])
    G = rng.standard_normal((9, 3)) * [1.0, 1.0, 30.0]
    fac = spectra.factor(FloatModel(F, G))
    M, N = fac.bases_MN(2)
    P = np.diag([1.0, 1.0, 0.0])
    assert np.allclose(M @ M.T, P, atol=1e-12) and np.allclose(N @ N.T, P, atol=1e-12)
    M0, N0 = fac.bases_MN(0)
    assert M0.shape == N0.shape == (3, 0)


# -- factors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("m, d", [(2, 3), (3, 3), (5, 3)])      # wide, square and tall F
def test_factor_reproduces_L(m, d):
    rng = np.random.default_rng(m)
    model = FloatModel(rng.standard_normal((m, d)), rng.standard_normal((7, d)))
    f = spectra.factor(model)
    L = model.F @ (model.G - model.G[0]).T
    assert np.allclose((f.Q_F @ f.U * f.s) @ (f.Q_G @ f.Vt.T).T, L, atol=1e-12 * np.abs(L).max())
    assert f.s.size == min(m, 7, d)
    assert np.allclose(f.s[:min(m, d)], np.linalg.svd(L, compute_uv=False)[:min(m, d)], rtol=1e-10)


@pytest.mark.parametrize("n", [10, 11, 16, 23])
def test_joint_token_r_at_the_block_boundary(monkeypatch, n):
    """Blocks of max(TOKEN_BLOCK, d + d~) = 5 tokens: n = 10 is one QR, 11 the
    streamed path with a last block of one token; R^T R is X^T X for
    X = [G_0, G~_0] in every case."""
    monkeypatch.setattr(spectra, "TOKEN_BLOCK", 4)
    rng = np.random.default_rng(n)
    a = FloatModel(rng.standard_normal((3, 2)), rng.standard_normal((n, 2)), pivot=1)
    b = FloatModel(rng.standard_normal((3, 3)), rng.standard_normal((n, 3)), pivot=1)
    seen = []
    R = spectra.joint_token_r(a, b, progress=lambda done, total: seen.append((done, total)))
    X = np.hstack([a.G - a.G[1], b.G - b.G[1]])
    assert R.shape == (5, 5) and np.allclose(R.T @ R, X.T @ X, atol=1e-12 * np.abs(X.T @ X).max())
    if n > 10:
        assert seen[-1] == (n, n) and len(seen) == math.ceil(n / 5) - 1
    else:
        assert seen == []


def test_gaps_and_labels():
    s = spectra.analyse(FloatModel([[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]))
    assert s.k == 1 and list(s.gaps()) == [math.inf]
    g = spectra.analyse(_head(), cut="largest-gap")
    assert g.k_label().startswith(f"k = {g.k} at the largest gap (sigma_k / sigma_k+1 = ")


def test_a_zero_spectrum_has_no_gap():
    """Between two zero singular values there is no gap: 0 / 0 is not an
    infinite ratio, and the report lists none (it listed 'k = 1: inf')."""
    s = spectra.analyse(FloatModel(np.zeros((6, 3)), np.random.default_rng(0).normal(size=(5, 3))))
    assert s.k == 0 and np.isnan(s.gaps()).all()
    assert s.to_json()["largest_gaps"] == []
    t = spectra.analyse(FloatModel(np.diag([1.0, 1.0, 0.0]), np.vstack([np.zeros(3), np.eye(3)])))
    assert list(t.gaps())[-1] == math.inf and t.to_json()["largest_gaps"][0]["ratio"] == math.inf
