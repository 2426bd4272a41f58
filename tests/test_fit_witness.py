"""Correctly rounded products and fit witnesses (``allornone.numeric.witness``),
checked against exact rational arithmetic.

Every float is read as the rational it denotes (``Fraction(float)``), so the
true value of a sum of products, and the true least misfit of a linear fit,
are computed without any rounding. A fit is refuted exactly by the
least-squares residual: no ``Θ`` has ``max_i |(X Θ - y)_i| <= τ`` when
``|P⊥ y|_2 > sqrt(m) τ`` (the max norm is at least the 2-norm over
``sqrt(m)``, and the least-squares residual is the smallest 2-norm).
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest

import allornone.numeric.witness as W
from allornone.numeric.witness import rounded_matmul

U = 2.0 ** -53
DBL_MAX = np.finfo(float).max


# -- exact helpers ------------------------------------------------------------


def _q(A) -> list[list[Fraction]]:
    """A float matrix as rows of the rationals its entries denote."""
    return [[Fraction(v) for v in row] for row in np.asarray(A, dtype=float).tolist()]


def _matmul(A: list, B: list) -> list:
    return [[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in zip(*B)] for row in A]


def _exact_sum(terms) -> list:
    """``sum_k A_k B_k`` in rationals."""
    out = None
    for A, B in terms:
        P = _matmul(_q(A), _q(B))
        out = P if out is None else [[x + y for x, y in zip(r, s)] for r, s in zip(out, P)]
    return out


def _dot(u, v) -> Fraction:
    return sum((a * b for a, b in zip(u, v)), Fraction(0))


def _misfit2(Xq: list, y: list) -> Fraction:
    """Squared 2-norm of the exact least-squares residual of ``y`` against the
    columns of ``Xq`` (exact Gram-Schmidt, so a rank-deficient ``X`` is fine)."""
    basis = []
    for x in zip(*Xq) if Xq and Xq[0] else []:
        q = list(x)
        for b, bb in basis:
            c = _dot(q, b) / bb
            q = [qi - c * bi for qi, bi in zip(q, b)]
        qq = _dot(q, q)
        if qq:
            basis.append((q, qq))
    r = list(y)
    for b, bb in basis:
        c = _dot(r, b) / bb
        r = [ri - c * bi for ri, bi in zip(r, b)]
    return _dot(r, r)


def _refuted(Xq: list, Yq: list, rtol: float) -> bool:
    """Exactly: some column ``y`` of ``Yq`` has no ``Θ`` with
    ``max |Xq Θ - y| <= rtol max |y|``."""
    m = len(Yq)
    t = Fraction(rtol)
    for y in zip(*Yq):
        size = max(abs(v) for v in y)
        if _misfit2(Xq, list(y)) > m * (t * size) ** 2:
            return True
    return False


def _misfit_ratio(X, Y) -> float:
    """The exact lower bound ``|P⊥ y|_2 / (sqrt(m) max|y|)`` on the relative
    least misfit (largest over the columns), as a float."""
    Xq, Yq = _q(X), _q(Y)
    m = len(Yq)
    return max(math.sqrt(_misfit2(Xq, list(y)) / m) / float(max(abs(v) for v in y)) for y in zip(*Yq))


def _perturbed(A, err, signs) -> list:
    """``A + signs * err`` in rationals (an exact point of the error box)."""
    E = np.broadcast_to(np.asarray(err, dtype=float), np.shape(A))
    return [[a + s * e for a, s, e in zip(ra, rs, re)]
            for ra, rs, re in zip(_q(A), np.asarray(signs).tolist(), _q(E))]


def _assert_sound(fw, X, X_err, Y, Y_err, rtol, X_star, Y_star):
    """The soundness contract on one exact point of the error box: when the
    exact data there admit no fit within ``rtol``, the witness must not hold."""
    w = fw(X, X_err, Y, Y_err, rtol)
    if _refuted(X_star, Y_star, rtol):
        assert not w.holds, f"witness holds (ratio {w.ratio:.3g}) where no fit within rtol exists"
    return w


# -- instances ------------------------------------------------------------------


def _basis(p: int) -> np.ndarray:
    """An upper triangular change of basis with dyadic entries and condition
    about 1e8 (one pivot is 2^-27, the others 1)."""
    if p == 2:
        return np.array([[1.0, 1.0], [0.0, 2.0 ** -27]])
    return np.array([[1.0, 1.0, 0.0], [0.0, 2.0 ** -27, 1.0], [0.0, 0.0, 1.0]])


def _consistent(seed: int, p: int = 2, m: int = 7):
    """``X = Z T`` (small integers times the ill-conditioned basis, exact in
    floats) and ``Y = X Θ*`` exactly, with ``Θ*`` of size 2^27: ``Y`` lies along
    the weak directions, so a plain solve leaves a residual of about ``u κ``."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(-9, 10, size=(m, p)).astype(float)
    T = _basis(p)
    X = Z @ T
    # Θ* = T^-1 C with C small integers: X Θ* = Z C, exactly representable
    C = rng.integers(-5, 6, size=(p, 2)).astype(float)
    C[-1] = np.where(C[-1] == 0, 1.0, C[-1])
    Y = Z @ C
    Theta = [[Fraction(v) for v in row] for row in np.linalg.solve(T, C).tolist()]
    # the floats are exactly consistent: Y = X Θ* in rationals (Θ* exact too,
    # since T is triangular with power-of-two pivots)
    assert _matmul(_q(X), Theta) == _q(Y)
    assert 1e7 < np.linalg.cond(X) < 1e10
    return X, Y


def _inconsistent(seed: int, rel: float, p: int = 2, m: int = 7):
    """``_consistent`` with a random perturbation of relative size ``rel`` on ``Y``."""
    X, Y = _consistent(seed, p, m)
    rng = np.random.default_rng(1000 + seed)
    Y = Y + rel * np.abs(Y).max(axis=0) * rng.standard_normal(Y.shape)
    return X, Y


def _plain_residual(Y, X, thetas):
    """The defect of a residual in plain floats: no TwoProduct, no exact sum."""
    return Y - X @ sum(thetas), np.zeros(Y.shape[1])


@functools.lru_cache(maxsize=None)
def _masked_instance(rtol: float = 1e-12):
    """An inconsistent system whose plain float residual is exactly zero.

    ``Y`` is iterated to a fixed point of ``Y <- fl(X θ(Y))``, with ``θ`` the
    witness's own first solve (recorded by a spy): the plain residual
    ``fl(Y - fl(X θ))`` then vanishes, while the exact one keeps the rounding
    of the products, of relative size ``u κ`` (about 1e-9 here: ``θ`` is of
    size 2^27). Returns ``(X, Y)`` with the exact misfit above ``rtol``, or
    None."""
    seen = []

    def spy(Y, X, thetas):
        seen.append((X, [t.copy() for t in thetas]))
        return orig(Y, X, thetas)

    orig = W._residual
    for seed in range(200):
        rng = np.random.default_rng(seed)
        Z = rng.integers(-8, 9, size=(6, 2)).astype(float)
        X = Z @ _basis(2)
        X = np.ldexp(X, -W._column_exponents(X)[None, :])  # columns of size about one
        Y = Z[:, [1]] + 0.3 * Z[:, [0]]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(W, "_residual", spy)
            for _ in range(30):
                seen.clear()
                W.fit_witness(X, 0.0, Y, 0.0, rtol, steps=1)
                Xs, (t,) = seen[0]
                Yn = Xs @ t
                if np.array_equal(Yn, Y):
                    break
                Y = Yn
            mp.setattr(W, "_residual", _plain_residual)
            fooled = W.fit_witness(X, 0.0, Y, 0.0, rtol).holds
        if fooled and _refuted(_q(X), _q(Y), rtol):
            return X, Y
    return None


# -- rounded_matmul -------------------------------------------------------------------


def _assert_rounded(terms, *, correctly_rounded=True):
    """``rounded_matmul`` contains the exact value within its ``err`` and (in the
    normal range) equals the exact value rounded once."""
    S, err = rounded_matmul(terms)
    exact = _exact_sum(terms)
    assert np.all(err >= 0) and np.all(np.isfinite(err))
    for i, row in enumerate(exact):
        for j, v in enumerate(row):
            assert abs(v - Fraction(S[i, j])) <= Fraction(err[i, j]), (i, j, float(v), S[i, j], err[i, j])
            if correctly_rounded:
                assert S[i, j] == float(v), (i, j)
    return S, err


def test_rounded_matmul_docstring_cancellation():
    """Guards the basic promise: ``1e16 + 1 - 1e16`` is 1, with an error bound of half an ulp."""
    A = np.array([[1e16, 1.0, -1e16]])
    S, err = _assert_rounded([(A, np.ones((3, 1)))])
    assert S[0, 0] == 1.0 and err[0, 0] <= 2 * U


@pytest.mark.parametrize("seed", range(6))
def test_rounded_matmul_heavy_cancellation_is_exact_to_half_an_ulp(seed):
    """Guards correct rounding where the terms cancel to many orders below their size.

    ``A_1 B_1 + (-A_1) B_2`` with ``B_2`` one or a few ulps off ``B_1`` leaves
    only ``-A_1 (B_2 - B_1)``, about 1e-16 of the terms, plus a third term of
    wildly varying size; a plain product would keep none of those digits."""
    rng = np.random.default_rng(seed)
    m, k, c = 4, 7, 3
    A1 = rng.standard_normal((m, k)) * np.ldexp(1.0, rng.integers(-20, 20, size=(m, k)))
    B1 = rng.standard_normal((k, c)) * np.ldexp(1.0, rng.integers(-20, 20, size=(k, c)))
    B2 = B1 * (1 + rng.integers(-3, 4, size=(k, c)) * 2.0 ** -52)
    A3 = rng.standard_normal((m, 2)) * 2.0 ** -40
    B3 = rng.standard_normal((2, c)) * np.ldexp(1.0, rng.integers(-30, 30, size=(2, c)))
    terms = [(A1, B1), (-A1, B2), (A3, B3)]
    S, err = _assert_rounded(terms)
    # the cancellation is real: the result is far below the size of the terms
    assert np.max(np.abs(S)) < 1e-10 * np.max(np.abs(A1) @ np.abs(B1))
    assert np.all(err <= 2 * U * np.abs(S) + 1e-300)


@pytest.mark.parametrize("row_scale, col_scale", [
    (1e300, 1e-300), (1e-300, 1e300), (1e300, 1.0), (1.0, 1e-300), (1e-300, 1.0),
    (2.0 ** 1000, 2.0 ** -1000), (1e150, 1e150),
])
def test_rounded_matmul_huge_and_tiny_entries(row_scale, col_scale):
    """Guards the power-of-two scaling: entries near 1e300 and 1e-300 (where the
    products, or TwoProduct's splitting, would overflow or underflow) still give
    the correctly rounded value, with cancellation inside each row."""
    rng = np.random.default_rng(7)
    m, k, c = 4, 5, 3
    A = rng.standard_normal((m, k)) * row_scale
    B = rng.standard_normal((k, c)) * col_scale
    A2 = -A
    B2 = B * (1 + rng.integers(-2, 3, size=(k, c)) * 2.0 ** -52)
    A3 = rng.standard_normal((m, 1)) * row_scale
    B3 = rng.standard_normal((1, c)) * col_scale
    _assert_rounded([(A, B), (A2, B2), (A3, B3)])
    # and without cancellation, where the size of the result is that of the scales
    _assert_rounded([(A, B)])


def test_rounded_matmul_subnormal_results_are_bounded():
    """Guards the subnormal range: a result of about 1e-320 (scaled back past the
    normal range) is still contained in its error bound."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 4)) * 1e-160
    B = rng.standard_normal((4, 2)) * 1e-160
    S, err = _assert_rounded([(A, B)], correctly_rounded=False)
    assert np.all(S != 0) and np.all(np.abs(S) < 2.0 ** -1022)
    # the bound stays of the size of a few subnormal units
    assert np.all(err <= 4 * 2.0 ** -1074 + 2 * U * np.abs(S))


def test_rounded_matmul_result_below_the_subnormals_is_bounded():
    """Guards a result that rounds to zero from below the smallest subnormal:
    ``2^-538 * 2^-538 = 2^-1076`` is nonzero, so ``err`` must not be 0."""
    A = np.array([[2.0 ** -538]])
    _assert_rounded([(A, A.copy())], correctly_rounded=False)


def test_rounded_matmul_overflow_gives_none():
    """Guards the overflow contract: None exactly when the correctly rounded
    result is not finite, and a finite result even when the terms are near the
    top of the range."""
    assert rounded_matmul([(np.array([[1e200]]), np.array([[1e200]]))]) is None
    assert rounded_matmul([(np.array([[1e308, 1e308]]), np.ones((2, 1)))]) is None
    assert rounded_matmul([(np.array([[1e308]]), np.array([[1.0]])),
                           (np.array([[1e308]]), np.array([[1.0]]))]) is None
    # DBL_MAX + half an ulp rounds (to even) up to infinity
    half_ulp = 2.0 ** (1023 - 53)
    assert rounded_matmul([(np.array([[DBL_MAX, half_ulp]]), np.ones((2, 1)))]) is None
    # ... while huge cancelling terms, and DBL_MAX itself, are fine
    S, err = _assert_rounded([(np.array([[1e308, -1e308, 1.0], [DBL_MAX, 0.0, 0.0]]), np.ones((3, 1)))])
    assert S[0, 0] == 1.0 and S[1, 0] == DBL_MAX
    S, err = _assert_rounded([(np.array([[DBL_MAX, half_ulp / 2]]), np.ones((2, 1)))])
    assert S[0, 0] == DBL_MAX


def test_rounded_matmul_empty_and_zero():
    """Guards the degenerate shapes: empty inner dimension gives zeros, an exact zero has no error."""
    S, err = rounded_matmul([(np.zeros((3, 0)), np.zeros((0, 2)))])
    assert S.shape == (3, 2) and not S.any() and not err.any()
    S, err = rounded_matmul([(np.zeros((2, 3)), np.ones((3, 2)))])
    assert not S.any() and not err.any()


# -- fit_witness: consistent systems hold ------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("p", [2, 3])
def test_exactly_consistent_ill_conditioned_fit_holds(seed, p):
    """Guards completeness: ``Y = X Θ*`` exactly through a basis of condition
    ~1e8 is shown to fit at ``rtol = 1e-12``, which a plain solve cannot show."""
    X, Y = _consistent(seed, p)
    w = W.fit_witness(X, 0.0, Y, 0.0, 1e-12)
    assert w.holds, w
    assert np.all(w.bound <= 1e-12 * w.scale)
    # a plain least-squares fit leaves an exact residual far above the tolerance:
    # it is the refinement, measured exactly, that shows the fit
    theta = np.linalg.lstsq(X, Y, rcond=None)[0]
    R = [[y - v for y, v in zip(ry, rv)] for ry, rv in zip(_q(Y), _matmul(_q(X), _q(theta)))]
    plain = max(abs(v) for row in R for v in row) / float(np.abs(Y).max())
    assert plain > 1e-12
    assert w.steps >= 2


def test_consistent_fit_with_rounded_targets_holds():
    """Guards the ``Y_err`` path of completeness: ``Y`` is ``X Θ*`` rounded to
    floats (``X`` a generic float matrix of condition ~1e8), with ``Y_err`` the
    exact rounding error rounded up; the fit is shown."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((8, 3)) @ _basis(3)
    Theta = _q(rng.integers(-4, 5, size=(3, 2)) * 2.0 ** 20)
    exact = _matmul(_q(X), Theta)
    Y = np.array([[float(v) for v in row] for row in exact])
    # the exact rounding error, rounded up to a float
    gap = [[abs(Fraction(y) - v) for y, v in zip(ry, rv)] for ry, rv in zip(Y.tolist(), exact)]
    Y_err = np.array([[float(g) if Fraction(float(g)) >= g else np.nextafter(float(g), np.inf) for g in row]
                      for row in gap])
    assert Y_err.any()  # the targets are not exactly consistent as floats
    w = W.fit_witness(X, 0.0, Y, Y_err, 1e-12)
    assert w.holds, w


# -- fit_witness: inconsistent systems never hold -------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rel, rtol", [(1e-9, 1e-12), (1e-6, 1e-9), (1e-6, 1e-12)])
def test_inconsistent_fit_never_holds(seed, rel, rtol):
    """Guards soundness: a misfit of relative size 1e-9 or 1e-6 (confirmed
    exactly above ``rtol``) is never shown to fit."""
    X, Y = _inconsistent(seed, rel, p=2 + seed % 2)
    # the exact least misfit is of the planted size, far above rtol
    assert rel / 10 < _misfit_ratio(X, Y) < 10 * rel
    assert _refuted(_q(X), _q(Y), rtol)
    _assert_sound(W.fit_witness, X, 0.0, Y, 0.0, rtol, _q(X), _q(Y))


@pytest.mark.parametrize("seed", range(4))
def test_inconsistent_fit_never_holds_just_below_its_misfit(seed):
    """Guards soundness at the edge: with ``rtol`` just below the exact lower
    bound on the relative misfit, the witness does not hold; well above it, it does."""
    X, Y = _inconsistent(seed, 1e-7, p=2 + seed % 2)
    ratio = _misfit_ratio(X, Y)
    rtol = 0.999 * ratio
    assert _refuted(_q(X), _q(Y), rtol)
    _assert_sound(W.fit_witness, X, 0.0, Y, 0.0, rtol, _q(X), _q(Y))
    # max norm <= 2-norm <= sqrt(m) times the lower bound: 10 sqrt(m) is ample room
    assert W.fit_witness(X, 0.0, Y, 0.0, 10 * math.sqrt(X.shape[0]) * ratio).holds


def test_masked_misfit_never_holds():
    """Guards soundness where a plain float residual is exactly zero: the exact
    residual (relative ~1e-9) is what the witness measures."""
    inst = _masked_instance()
    assert inst is not None, "no fixed point of the plain residual found"
    X, Y = inst
    assert _misfit_ratio(X, Y) > 1e-10
    _assert_sound(W.fit_witness, X, 0.0, Y, 0.0, 1e-12, _q(X), _q(Y))


# -- fit_witness: the error terms count ------------------------------------------


def _err_instance(side: str):
    """A consistent system whose regressors (``side == "X"``) or targets (``"Y"``)
    carry an error of 1e-6 of their size: ``(X, Y, err, star)`` with ``star`` a
    point of that error box (random signs) where the fit fails at 1e-9."""
    X, Y = _consistent(5, 2, m=6) if side == "X" else _consistent(6, 3, m=6)
    rng = np.random.default_rng(5 if side == "X" else 6)
    A = X if side == "X" else Y
    err = 1e-6 * np.abs(A).max(axis=0)[None, :] * np.ones_like(A)
    return X, Y, err, _perturbed(A, err, rng.choice([-1, 1], size=A.shape))


def _x_err_instance():
    X, Y, X_err, X_star = _err_instance("X")
    return X, X_err, Y, X_star


def _y_err_instance():
    return _err_instance("Y")


def test_regressor_error_is_accounted_for():
    """Guards the spread term ``E_X |Θ|``: the same data fit with ``X_err = 0``
    but not with an ``X_err`` under which some exact ``X*`` admits no fit."""
    X, X_err, Y, X_star = _x_err_instance()
    assert _refuted(X_star, _q(Y), 1e-9)
    assert W.fit_witness(X, 0.0, Y, 0.0, 1e-9).holds
    _assert_sound(W.fit_witness, X, X_err, Y, 0.0, 1e-9, X_star, _q(Y))


def test_target_error_is_accounted_for():
    """Guards the ``E_Y`` term: the same data fit with ``Y_err = 0`` but not with
    a ``Y_err`` under which some exact ``Y*`` admits no fit."""
    X, Y, Y_err, Y_star = _y_err_instance()
    assert _refuted(_q(X), Y_star, 1e-9)
    assert W.fit_witness(X, 0.0, Y, 0.0, 1e-9).holds
    _assert_sound(W.fit_witness, X, 0.0, Y, Y_err, 1e-9, _q(X), Y_star)


def test_target_error_lowers_the_scale():
    """Guards the scale ``max |Y*|`` from below: a target that may be zero gives
    no room, so a column of zeros known only within an error never fits."""
    X = np.array([[1.0], [2.0], [3.0]])
    Y = np.array([[1e-3], [0.0], [-1e-3]])
    w = W.fit_witness(X, 0.0, Y, 1e-3, 0.5)
    assert not w.holds and w.scale[0] == 0.0


# -- fit_witness: zero columns ---------------------------------------------------


def test_zero_column_holds_with_zero_bound():
    """Guards exact zeros: a zero column given exactly is fitted by ``Θ = 0``
    with a bound of exactly 0, next to an ordinary column."""
    X, Y = _consistent(2, 2)
    Y = np.hstack([Y[:, :1], np.zeros((Y.shape[0], 1))])
    w = W.fit_witness(X, 1e-3, Y, np.array([[0.0, 0.0]]), 1e-12)
    assert w.bound[1] == 0.0 and w.scale[1] == 0.0
    w = W.fit_witness(X, 0.0, Y, 0.0, 1e-12)
    assert w.holds and w.bound[1] == 0.0


def test_all_zero_targets_hold():
    """Guards the all-zero ``Y``: it holds, with every bound exactly 0, even when the regressors carry error."""
    X, _ = _consistent(1, 3)
    for X_err in (0.0, 1e-3):
        w = W.fit_witness(X, X_err, np.zeros((X.shape[0], 2)), 0.0, 1e-12)
        assert w.holds and not w.bound.any()


def test_zero_column_with_error_does_not_hold():
    """Guards the other side of exact zeros: a zero column with a nonzero error
    may be a nonzero vector of any direction, and is not shown to fit."""
    X, Y = _consistent(2, 2)
    Y = np.hstack([Y[:, :1], np.zeros((Y.shape[0], 1))])
    assert not W.fit_witness(X, 0.0, Y, 1e-30, 1e-12).holds


# -- fit_witness: scaling invariance --------------------------------------------------


def _scaling_instances():
    X, Y = _consistent(3, 2)
    yield X, Y, True
    X, Y = _consistent(4, 3)
    yield X, Y, True
    X, Y = _inconsistent(3, 1e-9, 2)
    yield X, Y, False
    X, Y = _inconsistent(4, 1e-6, 3)
    yield X, Y, False


@pytest.mark.parametrize("e", [300, -300])
def test_verdict_is_invariant_under_power_of_two_scaling(e):
    """Guards the exact rescaling: one column of ``Y``, or the whole ``X``,
    multiplied by ``2^±300`` (with its error bound) does not change the verdict."""
    rtol = 1e-12
    for X, Y, fits in _scaling_instances():
        # an error small enough to keep the verdict (it is amplified by |Θ| ~ 2^30)
        X_err = 2.0 ** -90 * np.abs(X)
        Y_err = np.zeros_like(Y)
        base = W.fit_witness(X, X_err, Y, Y_err, rtol).holds
        assert base is fits
        Ys, Ye = Y.copy(), Y_err.copy()
        Ys[:, 1] = np.ldexp(Ys[:, 1], e)
        Ye[:, 1] = np.ldexp(Ye[:, 1], e)
        assert W.fit_witness(X, X_err, Ys, Ye, rtol).holds is base
        assert W.fit_witness(np.ldexp(X, e), np.ldexp(X_err, e), Y, Y_err, rtol).holds is base
        # both at once, in opposite directions
        assert W.fit_witness(np.ldexp(X, -e), np.ldexp(X_err, -e), Ys, Ye, rtol).holds is base


# -- the soundness checks catch planted defects ---------------------------------------


def test_plain_float_residual_is_caught(monkeypatch):
    """A residual formed in plain floats (``Y - X Σθ``, no error term) reads the
    masked instance as an exact fit: the soundness check then fails."""
    inst = _masked_instance()
    assert inst is not None
    X, Y = inst
    monkeypatch.setattr(W, "_residual", _plain_residual)
    assert W.fit_witness(X, 0.0, Y, 0.0, 1e-12).holds
    with pytest.raises(AssertionError, match="no fit within rtol"):
        _assert_sound(W.fit_witness, X, 0.0, Y, 0.0, 1e-12, _q(X), _q(Y))


def test_ignoring_target_error_is_caught(monkeypatch):
    """A witness that drops ``Y_err`` holds where some exact ``Y*`` in the box
    admits no fit: the soundness check then fails."""
    X, Y, Y_err, Y_star = _y_err_instance()
    real = W.fit_witness
    monkeypatch.setattr(W, "fit_witness", lambda X, X_err, Y, Y_err, rtol, steps=3:
                        real(X, X_err, Y, 0.0, rtol, steps))
    with pytest.raises(AssertionError, match="no fit within rtol"):
        _assert_sound(W.fit_witness, X, 0.0, Y, Y_err, 1e-9, _q(X), Y_star)


def test_ignoring_regressor_error_is_caught(monkeypatch):
    """A witness without the spread term ``E_X |Θ|`` holds where some exact
    ``X*`` in the box admits no fit: the soundness check then fails."""
    X, X_err, Y, X_star = _x_err_instance()
    real = W.fit_witness
    monkeypatch.setattr(W, "fit_witness", lambda X, X_err, Y, Y_err, rtol, steps=3:
                        real(X, 0.0, Y, Y_err, rtol, steps))
    with pytest.raises(AssertionError, match="no fit within rtol"):
        _assert_sound(W.fit_witness, X, X_err, Y, 0.0, 1e-9, X_star, _q(Y))


# -- rounding of the threshold itself ---------------------------------------------


@pytest.mark.parametrize("Y, Y_err, rtol", [
    # max|Y*| >= 1 - 2^-54, computed as fl(1 - 2^-54) = 1; Y*_2 = 2^-20 misses by 2^-74
    ([[1.0], [0.0]], [[2.0 ** -54], [2.0 ** -20]], 2.0 ** -20),
    # rtol * 3 is 0.30000000000000001665..., its rounding 0.30000000000000004 is the error
    ([[3.0], [0.0]], [[0.0], [0.1 * 3.0]], 0.1),
], ids=["scale", "product"])
def test_threshold_is_not_rounded_up(Y, Y_err, rtol):
    """Guards the comparison ``bound <= rtol * scale`` at the last bit: with
    ``X = e_1``, row 2 of ``Y*`` can be ``Y_err`` itself, which no ``Θ`` fits."""
    X = np.array([[1.0], [0.0]])
    Y, Y_err = np.array(Y), np.array(Y_err)
    (y1,), (y2,) = _perturbed(Y, Y_err, [[-1], [1]])
    # (X Θ - Y*)_2 = -y2 for every Θ: the least misfit is |y2| exactly
    assert abs(y2) > Fraction(rtol) * max(abs(y1), abs(y2))
    assert not W.fit_witness(X, 0.0, Y, Y_err, rtol).holds


def test_negative_error_bounds_are_refused():
    """Guards against a negative bound, which would raise the scale and lower the bound."""
    X = np.array([[1.0], [0.0]])
    Y = np.array([[1.0], [1e-3]])
    with pytest.raises(ValueError):
        W.fit_witness(X, 0.0, Y, np.array([[0.0], [-1.0]]), 1e-12)
    with pytest.raises(ValueError):
        W.fit_witness(X, -1.0, Y, 0.0, 1e-12)
