"""Float linear algebra: three-valued rank decisions (docs/theory/index.md#floating-point), the
large-matrix paths (QR of row blocks) against plain SVDs, and the generators
of numeric.scale."""
from __future__ import annotations

import numpy as np
import pytest

from allornone.errors import NonFiniteValueError
from allornone.numeric import linalg as fl
from allornone.numeric.scale import b5_twin, random_model, well_conditioned

TOL = fl.DEFAULT_TOLERANCE


def with_singular_values(s, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.standard_normal((rows, len(s))))
    v, _ = np.linalg.qr(rng.standard_normal((cols, len(s))))
    return (u * np.asarray(s, dtype=float)) @ v.T


def test_float_trap_small_singular_value_is_never_a_decided_rank():
    # A B.5 twin's G~_0 P~ had singular values 3.3, 2.9, 0.18 and a 7e-15 that is
    # rounding of the product. Read as data, 7e-15 may be real: undecided, never a
    # decided rank 4; truncated at the rank the structure decided, the
    # pseudo-inverse stays bounded where NumPy's default cut blows up.
    s = [3.3, 2.9, 0.18, 7e-15]
    X = with_singular_values(s, 12, 6)
    assert fl.rank(X) == (4, False)
    # As the product of factors of size 100 (rounding noise ~1e-13) it is zero.
    assert fl.rank(X, scale=100.0) == (3, True)
    P = fl.pinv(X, rank=3)
    assert np.abs(P).max() < 10
    assert np.abs(np.linalg.pinv(X)).max() > 1e10
    u, sv, vt = np.linalg.svd(X, full_matrices=False)
    X3 = (u[:, :3] * sv[:3]) @ vt[:3]
    assert np.allclose(P, np.linalg.pinv(X3), atol=1e-9)


@pytest.mark.parametrize("tiny,expected", [
    (1e-17, (3, True)),      # below the SVD's backward error: zero, decided
    (1e-3, (4, True)),       # far above it: non-zero, decided
    (1e-8, (4, True)),       # a small singular value of data is still a rank
    (1e-14, (4, False)),     # within gap of the rounding bound: undecided
])
def test_rank_is_three_valued(tiny, expected):
    X = with_singular_values([3.3, 2.9, 0.18, 3.3 * tiny], 9, 7, seed=1)
    assert fl.rank(X) == expected


def test_rank_is_invariant_under_row_and_column_scaling():
    # One huge context and one huge coordinate: the rank is that of the pattern.
    X = np.array([[1e9, 1.0], [1e9, 2.0], [3e9, 1.0]])
    assert fl.data_rank(X) == (2, True)
    assert fl.data_rank(X * 2.0 ** 300) == (2, True)
    assert fl.data_rank(X * 2.0 ** -300) == (2, True)
    Y = np.array([[1.0, 2.0], [2.0, 4.0], [1e-12, 2e-12]])
    assert fl.data_rank(Y) == (1, True)
    # a computed matrix whose tiny row is rounding noise is not scaled up
    Z = np.array([[1.0, 2.0], [2.0, 4.0], [1e-17, -3e-17]])
    assert fl.rank(Z) == (1, True) and fl.data_rank(Z)[0] == 2


def test_rank_scale_judges_products_against_their_factors():
    X = with_singular_values([1e-6, 1e-7], 5, 5)
    assert fl.rank(X) == (2, True)                 # data: rank 2
    assert fl.rank(X, scale=1e12)[0] == 0          # a product of factors of size 1e12: noise
    assert fl.rank(X, scale=1e8) == (2, False)     # in the band of that noise


def test_certain_three_values():
    assert TOL.certain(1e-14, 1.0).holds
    assert TOL.certain(0.5, 1.0).fails
    assert TOL.certain(1e-10, 1.0).undecided
    assert TOL.certain(float("nan"), 1.0).undecided
    # an error bound is a cost for "holds": a residual of 1e-14 next to a
    # bound of 1e-13 at size 1e-6 could hide a difference beyond the tolerance
    assert TOL.certain(1e-14, 1e-6, extra=1e-13).undecided
    assert fl.is_zero(np.array([[1e-14]]), 1e-6, extra=1e-13).undecided
    assert fl.is_zero(np.array([[0.0, -3e-15]]), 1.0).holds
    assert fl.is_zero(np.array([[0.0, -0.2]]), 1.0).fails
    assert fl.is_zero(np.array([[1e-10]]), 1.0).undecided
    assert fl.is_zero(np.array([[np.nan]]), 1.0).undecided
    assert fl.is_zero(np.zeros((0, 3)), 1.0).holds


def test_product_scale_is_max_of_abs_product():
    rng = np.random.default_rng(3)
    A, B, C = rng.standard_normal((4, 5)), rng.standard_normal((5, 3)), rng.standard_normal((3, 7))
    assert fl.product_scale(A) == np.abs(A).max()
    assert np.isclose(fl.product_scale(A, B, C), (np.abs(A) @ np.abs(B) @ np.abs(C)).max())


def test_product_scale_blocks_agree(monkeypatch):
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal((6, 40)), rng.standard_normal((40, 1000))
    full = fl.product_scale(A, B)
    monkeypatch.setattr(fl, "_SCALE_BLOCK", 50)
    assert fl.product_scale(A, B) == pytest.approx(full, rel=1e-15)


@pytest.fixture
def small_large(monkeypatch):
    """Make the large-matrix path apply to small test matrices."""
    monkeypatch.setattr(fl, "_LARGE", 1)
    monkeypatch.setattr(fl, "_BLOCK_ROWS", 16)


@pytest.mark.parametrize("shape,rank", [((200, 9), 6), ((57, 20), 20), ((300, 30), 0)])
def test_block_qr_path_matches_svd(shape, rank, small_large, monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((shape[0], rank)) @ rng.standard_normal((rank, shape[1]))
    assert fl._is_large_tall(X)
    s_qr, vt_qr = fl._s_vt(X)
    _, s, vt = np.linalg.svd(X, full_matrices=False)
    assert np.allclose(s_qr, s, atol=1e-12 * max(s[0], 1))
    assert fl.rank(X) == (rank, True) == fl.rank(X.T)
    B, decided = fl.row_basis(X)
    assert decided and B.shape == (rank, shape[1])
    assert np.allclose(fl.projector_onto_rows(B), vt[:rank].T @ vt[:rank], atol=1e-10)
    for Y in (X, X.T):
        P = fl.pinv(Y)
        assert np.allclose(P, np.linalg.pinv(Y, rcond=1e-9), atol=1e-10)
        assert np.allclose(Y @ P @ Y, Y, atol=1e-9)
        W = fl.solve_left(np.ones((3, Y.shape[1])) @ Y.T @ Y, Y)
        assert np.allclose(W, np.ones((3, Y.shape[1])) @ Y.T @ Y @ np.linalg.pinv(Y, rcond=1e-9), atol=1e-8)
    monkeypatch.setattr(fl, "_LARGE", 1 << 60)
    assert not fl._is_large_tall(X)


def test_block_qr_path_cuts_the_trap(small_large):
    X = with_singular_values([3.3, 2.9, 0.18, 7e-15], 400, 8, seed=6)
    assert fl._is_large_tall(X)
    assert fl.rank(X) == (3, True)
    assert np.abs(fl.pinv(X)).max() < 10
    assert np.abs(fl.pinv(X.T)).max() < 10


def test_as_float_matrix_copies_and_rejects_non_finite():
    data = np.ones((3, 2))
    arr = fl.as_float_matrix(data)
    arr[0, 0] = 5
    assert data[0, 0] == 1
    for bad in (np.inf, -np.inf, np.nan):
        data = np.zeros((3, 4))
        data[2, 1] = bad
        with pytest.raises(NonFiniteValueError, match=r"\[2\]\[1\]"):
            fl.as_float_matrix(data)


def test_random_model_ranks_and_seed():
    F, G = random_model(30, 80, 10, rank_f=7, rank_g=5, seed=11)
    assert np.linalg.matrix_rank(F) == 7 and np.linalg.matrix_rank(G) == 5
    F2, G2 = random_model(30, 80, 10, rank_f=7, rank_g=5, seed=11)
    assert (F == F2).all() and (G == G2).all()
    with pytest.raises(ValueError):
        random_model(3, 5, 4, rank_f=4)


def test_b5_twin_same_distribution_other_dimension():
    from allornone.numeric import FloatModel

    F, G = random_model(25, 60, 8, rank_f=6, rank_g=5, seed=2)
    F2, G2 = b5_twin(F, G, pivot=3, extra=(2, 3), seed=3)
    a, b = FloatModel(F, G, pivot=3), FloatModel(F2, G2, pivot=3)
    assert b.d == a.effective_complexity() + 5 == 10
    assert b.effective_complexity() == a.effective_complexity() == 5
    L, L2 = a.log_odds(), b.log_odds()
    assert np.abs(L - L2).max() <= 1e-10 * np.abs(L).max()
    # The twin is not a change of basis of the original: its SF has another dimension.
    assert b.dim_SF() == 5 + 2 and a.dim_SF() == 6


def test_well_conditioned():
    R = well_conditioned(6, seed=1, spread=2.0)
    s = np.linalg.svd(R, compute_uv=False)
    assert s.max() <= 2.0 + 1e-12 and s.min() >= 0.5 - 1e-12


def test_two_sum_is_exact_on_arrays_broadcasts_and_scalars():
    """``a + b = s + e`` exactly, in rationals, for entries of every relative
    size (cancelling, one swallowing the other, equal), a row broadcast
    against a matrix as ``G - g(y_0)`` is formed, and plain floats."""
    from fractions import Fraction

    rng = np.random.default_rng(11)
    A = rng.standard_normal((40, 7)) * 2.0 ** rng.integers(-60, 60, (40, 7))
    b = -A[3] * (1 + 2.0 ** -30) + rng.standard_normal(7) * 2.0 ** rng.integers(-80, 40, 7)
    s, e = fl.two_sum(A, b)
    assert s.shape == e.shape == A.shape
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            assert Fraction(A[i, j]) + Fraction(b[j]) == Fraction(s[i, j]) + Fraction(e[i, j])
            assert s[i, j] == A[i, j] + b[j]
    assert any(e[i, j] != 0 for i in range(40) for j in range(7))
    s0, e0 = fl.two_sum(1.0, 2.0 ** -70)
    assert (float(s0), float(e0)) == (1.0, 2.0 ** -70)
    d, err = fl.subtract_with_error(A, A[3], 1e-3)
    assert np.array_equal(d, A - A[3]) and np.all(err >= 1e-3 * (np.abs(A) + np.abs(A[3])))
