"""``primitives.exact_residual``: a small fit's least-squares residual on
binary64 numbers, solved in rational arithmetic, so that no condition number
of the regressors enters it.

Run once against a broken variant that failed here: with the exact solve
used on computed regressors whose numerically dependent direction (a folded
bias) the rounding made independent (mutant ``exact-fit-revives-rounding``),
the fit takes in a direction of rounding noise and the readouts' R^2 moves by
0.015 (``test_graded_boundaries.py``'s readouts of a head with a bias)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from allornone.numeric import FloatModel, graded
from allornone.numeric.primitives import EXACT_FIT_LIMIT, exact_residual


def _sheared(c):
    rng = np.random.default_rng(0)
    X = rng.integers(-5, 6, size=(12, 3)).astype(float)
    T = np.eye(3)
    T[0, 2] = c
    return X, X @ T


def test_a_fit_in_a_sheared_basis_is_exact():
    """``Y`` in the span of ``X``; the same span after an integer shear of
    condition about ``1e24`` (every number exactly representable): the exact
    residual is zero, where a floating-point solve's is far from it."""
    X, Xs = _sheared(2.0 ** 40)
    Y = X @ np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 2.0]])
    R, rel = exact_residual(Xs, Y)
    assert rel == 0.0 and not np.any(R)
    coef = np.linalg.lstsq(Xs, Y, rcond=None)[0]
    assert np.linalg.norm(Y - Xs @ coef) / np.linalg.norm(Y) > 1e-8


def test_the_residual_is_the_rational_projection():
    rng = np.random.default_rng(1)
    X = rng.integers(-2 ** 20, 2 ** 20, size=(7, 2)) * 2.0 ** -17
    X = np.hstack([X, X[:, :1] + X[:, 1:]])          # exactly dependent: a basis of two
    Y = rng.normal(size=(7, 1))
    R, rel = exact_residual(X, Y)
    # the projection onto span(x1, x2), in Fractions
    x1, x2, y = ([Fraction(float(v)) for v in col] for col in (X[:, 0], X[:, 1], Y[:, 0]))
    dot = lambda u, v: sum((p * q for p, q in zip(u, v)), Fraction(0))
    a11, a12, a22, b1, b2 = dot(x1, x1), dot(x1, x2), dot(x2, x2), dot(x1, y), dot(x2, y)
    det = a11 * a22 - a12 * a12
    c1, c2 = (a22 * b1 - a12 * b2) / det, (a11 * b2 - a12 * b1) / det
    r = [yi - c1 * p - c2 * q for yi, p, q in zip(y, x1, x2)]
    assert [float(v) for v in r] == R[:, 0].tolist()
    assert rel == pytest.approx(float((dot(r, r) / dot(y, y))) ** 0.5, rel=1e-15)


def test_beyond_the_limit_or_not_finite_there_is_no_answer():
    assert exact_residual(np.ones((EXACT_FIT_LIMIT, 1)), np.ones((EXACT_FIT_LIMIT, 1))) is None
    assert exact_residual(np.array([[np.inf], [1.0]]), np.ones((2, 1))) is None
    R, rel = exact_residual(np.zeros((3, 1)), np.zeros((3, 2)))
    assert rel == 0.0


def test_a_readout_fit_on_sheared_features_is_decided():
    """Reading anything, on features in a basis sheared by ``2^40``: the
    readouts are affine in the features exactly, and the graded query says so
    (the floating-point solve's allowance, ``u`` times the regressors'
    condition, would leave it undecided)."""
    rng = np.random.default_rng(2)
    base = rng.integers(-4, 5, size=(7, 3)).astype(float)
    # each context's partner is the context moved by one fixed offset
    F = np.vstack([base, base + np.array([1.0, -2.0, 3.0])])
    G = rng.integers(-4, 5, size=(5, 3)).astype(float)
    T = np.eye(3)
    T[0, 2] = 2.0 ** 40
    Ti = np.linalg.inv(T)
    m = FloatModel(F @ T, G @ Ti.T)
    assert np.array_equal((F @ T) @ (G @ Ti.T).T, F @ G.T)      # exactly the same logits
    pairs = [(i, i + 7) for i in range(7)]
    out = graded.readout_linearity(m, pairs, [(m.tokens[1], m.tokens[2])], reading="any")
    assert out["relationally_linear"] == "holds", out
