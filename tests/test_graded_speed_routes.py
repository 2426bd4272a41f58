"""The faster routes of the graded comparison, each against the accurate one.

* the Gram route of :func:`allornone.numeric.factor.tall_r` (``method="gram"``):
  taken only where its bound on the relative perturbation holds, and then the
  factor is that of ``(I + N) X`` with ``|N|`` within the bound; refused (and
  the answer is CholeskyQR2's or Householder's) on ill-conditioned matrices;
* the probe on the first block, which sends a rank-deficient matrix to
  Householder QR before the Gram pass runs over every block;
* the distances' elementwise work taken a few rows at a time;
* Wedin's residual norms from the top eigenvalue of a Gram matrix.

Each check was run against a variant built to break it (the Gram route's
bound switched off, the probe switched off, the probe judging the first
block alone, a row of each block skipped by the distances' inner loop, the
residual norm without its scaling or without its rounding up); each variant
failed the checks below.
"""
import numpy as np
import pytest

from allornone.numeric import FloatModel, factor, graded, spectra
from allornone.numeric import distances as distances_module
from test_graded_scale import _ill, _tall


def _relative_perturbation(R, R_exact):
    """``|R_X^-T R^T R R_X^-1 - I|_2``: how far ``R`` is from being an exact factor of ``X``."""
    W = np.linalg.solve(R_exact.T, np.linalg.solve(R_exact.T, R.T @ R).T)
    return np.linalg.norm(W - np.eye(R.shape[0]), 2)


# -- the Gram route ----------------------------------------------------------------------

@pytest.mark.parametrize("n, D, kappa, step", [(700, 12, 2.0, 64), (3000, 40, 5.0, 512), (500, 30, 1.5, 500)])
def test_a_well_conditioned_matrix_takes_the_gram_route_within_its_bound(n, D, kappa, step):
    X = _ill(n, D, kappa) * np.geomspace(1.0, 1e3, D)       # columns of very different sizes
    fast, slow = _tall(X, step, "gram"), _tall(X, step, "householder")
    assert (fast.method, slow.method) == ("gram", "householder")
    blocks = -(-n // step) if n > 2 * step else 1
    eta = factor.gram_perturbation(step if n > 2 * step else n, blocks, D, 2.0 * fast.kappa)
    assert eta <= factor.GRAM_BOUND
    # the factor is exact for (I + N) X, |N| <= eta / 2: here even at rounding level
    got = _relative_perturbation(fast.R, slow.R)
    assert got <= eta and got <= 1e-13
    s, t = np.linalg.svd(fast.R, compute_uv=False), np.linalg.svd(slow.R, compute_uv=False)
    assert np.allclose(s, t, rtol=eta, atol=0)


@pytest.mark.parametrize("offset", [1e2, 1e5])
def test_a_common_offset_of_the_rows_is_centred_away(offset):
    """Every row shifted by one vector (as the pivot's row shifts every token):
    ``X`` itself is far beyond the Gram route's condition, ``[X - 1 mu^T, 1]``
    is not. The route is then taken on the centred matrix, and the factor of
    ``X`` made from it has ``X``'s singular values as accurately as Householder
    QR's (column-wise backward stable: a relative ``u kappa`` on the smallest,
    ``kappa`` the condition of ``X`` with unit columns)."""
    rng = np.random.default_rng(3)
    n, D, step = 3000, 20, 512
    X = _ill(n, D, 3.0) * np.sqrt(n) + offset * rng.standard_normal(D)
    kappa = np.linalg.cond(X / np.linalg.norm(X, axis=0))
    assert factor.gram_perturbation(step, -(-n // step), D, kappa) > factor.GRAM_BOUND
    fast, slow = _tall(X, step, "gram"), _tall(X, step, "householder")
    assert (fast.method, slow.method) == ("gram", "householder")
    assert factor.gram_perturbation(step, -(-n // step), D + 1, 2.0 * fast.kappa) <= factor.GRAM_BOUND
    s, t = np.linalg.svd(fast.R, compute_uv=False), np.linalg.svd(slow.R, compute_uv=False)
    assert np.allclose(s, t, rtol=D * 2.0 ** -53 * kappa, atol=0)


def test_a_constant_column_keeps_the_uncentred_route():
    """A folded bias is a column of ones: centred, it is zero, and ``Z`` is rank
    deficient. ``X`` itself is well conditioned, and takes its own route, not
    Householder QR."""
    X = _ill(2000, 10, 10.0)
    X[:, 9] = 1.0 / np.sqrt(2000)
    block, calls = _counting(X)
    t = factor.tall_r(block, 2000, 10, 100)
    assert t.method == "cholesky-qr2"
    assert _relative_perturbation(t.R, _tall(X, 100, "householder").R) <= 1e-13


@pytest.mark.parametrize("kappa, route", [(1e3, "cholesky-qr2"), (1e6, "householder"), (1e12, "householder")])
def test_an_ill_conditioned_matrix_refuses_the_gram_route(kappa, route):
    """Beyond the bound the Gram route is not taken: the factor is that of the
    route the matrix takes without it, and keeps its small singular values."""
    X = _ill(700, 12, kappa)
    t = _tall(X, method="gram")
    assert t.method == route == _tall(X).method
    assert np.array_equal(t.R, _tall(X).R)
    s = np.linalg.svd(t.R, compute_uv=False)
    assert s[-1] == pytest.approx(1.0 / kappa, rel=1e-4 * kappa * 1e-8 + 1e-6)


def test_without_its_bound_the_gram_route_loses_the_small_singular_values(monkeypatch):
    """The bound is what keeps the answer right: with it switched off, the
    matrix of the test above takes the Gram route and its smallest singular
    value is off by far more than the relative accuracy the route promises
    (and than Householder's, which the test above checks)."""
    X = _ill(700, 12, 1e6)
    promised = factor.GRAM_BOUND
    monkeypatch.setattr(factor, "GRAM_BOUND", np.inf)
    t = _tall(X, method="gram")
    assert t.method == "gram"
    s = np.linalg.svd(t.R, compute_uv=False)
    assert abs(s[-1] * 1e6 - 1.0) > 10 * promised


def test_the_bound_is_its_formula():
    u = 2.0 ** -53
    b, nb, D, k = 4096, 4, 896, 3.0
    want = ((b + nb + 2) * u / (1 - (b + nb + 2) * u) + (D + 1) * u / (1 - (D + 1) * u)) * D * k * k
    assert factor.gram_perturbation(b, nb, D, k) == pytest.approx(want, rel=1e-15)


def _independent(m, n, d, d2, seed=0, kappa=None):
    """Two unrelated models; with ``kappa`` the second head nearly in the span of
    the first (an ill-conditioned joint token matrix)."""
    rng = np.random.default_rng(seed)
    G, G2 = rng.standard_normal((n, d)), rng.standard_normal((n, d2))
    if kappa is not None:
        G2[:, :d] = G + G2[:, :d] / kappa
    return (FloatModel(rng.standard_normal((m, d)), G, 0), FloatModel(rng.standard_normal((m, d2)), G2, 0))


def _same_comparison(auto, slow, rel=1e-9):
    assert (auto.k, auto.el_verdicts, auto.k_decided) == (slow.k, slow.el_verdicts, slow.k_decided)
    assert np.allclose(auto.angles_context, slow.angles_context, rtol=rel, atol=1e-12)
    assert np.allclose(auto.angles_token, slow.angles_token, rtol=rel, atol=1e-12)
    assert auto.wedin_bound == pytest.approx(slow.wedin_bound, rel=rel)
    for e in ("EL1", "EL2", "EL3"):
        assert auto.el_residuals[e] == pytest.approx(slow.el_residuals[e], rel=rel)
    for sa, sb in zip(auto.spectra, slow.spectra):
        assert np.allclose(sa.sigma_L, sb.sigma_L, rtol=rel, atol=0)
        assert np.allclose(sa.sigma_G0, sb.sigma_G0, rtol=rel, atol=0)


def _householder(monkeypatch):
    real = spectra.factor_pair
    monkeypatch.setattr(graded, "factor_pair", lambda x, y, progress=None: real(x, y, progress, "householder"))


@pytest.mark.parametrize("kappa", [None, 1e9])
def test_compare_by_the_gram_route_is_compare_by_householder(monkeypatch, kappa):
    """A pair whose context matrix takes the Gram route (and, ill-conditioned,
    whose token matrix refuses it) compares as by Householder QR throughout."""
    monkeypatch.setattr(spectra, "TOKEN_BLOCK", 64)
    a, b = _independent(400, 500, 5, 7, kappa=kappa)
    auto = graded.compare(a, b)
    assert auto.factoring["context"] == "gram"
    assert auto.factoring["token"] == ("householder" if kappa else auto.factoring["token"])
    _householder(monkeypatch)
    slow = graded.compare(a, b)
    assert slow.factoring == {"context": "householder", "token": "householder"}
    _same_comparison(auto, slow)


def test_a_pair_whose_centred_heads_are_orthogonal_takes_the_gram_route_on_both_sides(monkeypatch):
    """With the pivot's row zero, ``G_0 = G``: a head of orthogonal columns has
    condition one, and both sides take the Gram route."""
    monkeypatch.setattr(spectra, "TOKEN_BLOCK", 64)
    rng = np.random.default_rng(3)
    Q = np.linalg.qr(rng.standard_normal((600, 12)))[0] * np.sqrt(600.0)
    Q[0] = 0.0
    a = FloatModel(rng.standard_normal((300, 5)), Q[:, :5], 0)
    b = FloatModel(rng.standard_normal((300, 7)), Q[:, 5:] + 1e-3 * rng.standard_normal((600, 7)) * (
        np.arange(600) > 0)[:, None], 0)
    auto = graded.compare(a, b)
    assert auto.factoring == {"context": "gram", "token": "gram"}
    _householder(monkeypatch)
    _same_comparison(auto, graded.compare(a, b))


# -- the probe on the first block --------------------------------------------------------

def _counting(X):
    calls = []

    def block(lo, hi):
        calls.append((lo, hi))
        return X[lo:hi]
    return block, calls


@pytest.mark.parametrize("method", [None, "gram"])
def test_a_rank_deficient_matrix_goes_to_householder_after_one_block(method):
    """The joint token matrix of an equivalent pair is rank deficient: the
    probe sends it to Householder QR after the Gram matrix of its first block,
    not after a Gram pass over every block; the factor is Householder's."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 10))
    X[:, 9] = X[:, 0] - 2 * X[:, 3]
    block, calls = _counting(X)
    t = factor.tall_r(block, 2000, 10, 100, method=method)
    assert t.method == "householder" and t.kappa is None
    # the probe's block (read again for the Gram matrix of X itself), then
    # Householder from the start
    assert calls[:3] == [(0, 100)] * 3
    assert len(calls) == 2 + 20
    assert np.array_equal(t.R, _tall(X, 100, "householder").R)


def test_the_probe_lets_a_well_conditioned_matrix_through():
    X = _ill(2000, 10, 10.0)
    block, calls = _counting(X)
    t = factor.tall_r(block, 2000, 10, 100)
    # the probe's block, the rest of the means' pass, then both passes over all
    # 20 blocks of the centred matrix
    assert t.method == "cholesky-qr2" and len(calls) == 1 + 19 + 40


def test_the_probe_judges_twice_as_many_rows_as_columns():
    """Blocks as short as the matrix is wide: the first block alone is square (here
    singular), so the probe waits for the Gram matrix of ``2 D`` rows, which is
    well conditioned, and CholeskyQR2 runs."""
    X = _ill(2000, 10, 10.0)
    X[:10] = X[:10] @ np.diag([1.0] * 9 + [0.0]) @ np.linalg.qr(np.random.default_rng(2).standard_normal((10, 10)))[0]
    assert np.linalg.matrix_rank(X[:10]) == 9 and np.linalg.matrix_rank(X[:20]) == 10
    t = _tall(X, 10)
    assert t.method == "cholesky-qr2"
    assert np.allclose(t.R.T @ t.R, X.T @ X, rtol=0, atol=1e-13 * np.abs(X.T @ X).max())


def test_a_rank_deficient_first_block_of_a_full_rank_matrix_is_only_slower():
    """The probe chooses a route, not an answer: a first block of rank one
    sends a well-conditioned matrix to Householder QR, whose factor is right."""
    X = _ill(2000, 10, 10.0)
    X[:100] = np.outer(np.arange(1, 101), X[0])
    t = _tall(X, 100)
    assert t.method == "householder"
    assert np.allclose(t.R.T @ t.R, X.T @ X, rtol=0, atol=1e-13 * np.abs(X.T @ X).max())


# -- the distances, a few rows at a time -------------------------------------------------

@pytest.mark.parametrize("rows", [1, 3, 10 ** 9])
def test_distances_do_not_depend_on_the_rows_taken_at_once(monkeypatch, rows):
    rng = np.random.default_rng(6)
    a = FloatModel(rng.standard_normal((57, 4)) * 3, rng.standard_normal((23, 4)), 2)
    b = FloatModel(rng.standard_normal((57, 5)) * 3, rng.standard_normal((23, 5)), 2)
    want = graded.distances(a, b, both_ways=True, entries=3 * 23 * 57)
    monkeypatch.setattr(distances_module, "CACHE_ENTRIES", rows * 23)
    for entries in (3 * 23 * 8, 3 * 23 * 57):     # blocks of 8 rows, and one block
        got = graded.distances(a, b, both_ways=True, entries=entries)
        assert got["witness"] == want["witness"]
        for key, value in want.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-13, abs=1e-15), key
            else:
                # the witnesses, the flag, and the open entries (None when too many)
                assert got[key] == value, key


# -- Wedin's residual norms --------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-200, 1.0, 1e200])
@pytest.mark.parametrize("shape", [(40, 7), (7, 40), (30, 30)])
def test_the_residual_norm_is_the_largest_singular_value_rounded_up(scale, shape):
    rng = np.random.default_rng(7)
    X = rng.standard_normal(shape) * np.geomspace(1.0, 1e-8, shape[1]) * scale
    want = np.linalg.svd(X, compute_uv=False)[0]
    got = graded._spectral_norm(X)
    assert want <= got <= want * (1 + 1e-12)
    assert graded._spectral_norm(np.zeros(shape)) == 0.0 and graded._spectral_norm(np.zeros((0, 3))) == 0.0
