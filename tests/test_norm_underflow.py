"""Norms that underflow make the bounds built on them vanish. A model whose
rows are scaled as a far larger model's (the tiled comparison of ``L = L~``
brings both to common powers of two), or whose entries lie some 600 binades
down, has rows whose squares underflow; their ``np.linalg.norm`` is 0, and a
rounding bound or a residual of 0 is read as exact. Each instance here has
its exact answer; the float verdict must be that answer or undecided."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from allornone.numeric import FloatModel
from allornone.numeric import equivalence as feq
from allornone.numeric import linalg as fl
from allornone.symbolic import ExactModel
from allornone.theorems import cor6, thm5

# a b = HI + LO exactly: the logit f^T g_0 = a b - HI - LO is 0, and the
# ordinary product's rounding leaves -171
A_, B_ = 1987092631.0, 1757674227.0
HI = A_ * B_
LO = float(Fraction(A_) * Fraction(B_) - Fraction(HI))


def _exact(X):
    return [[Fraction(float(v)) for v in row] for row in X]


def test_row_norms_do_not_underflow_and_bound_the_norm_from_above():
    rng = np.random.default_rng(0)
    for e in (-1070, -900, -600, -300, 0, 300, 500):
        X = np.ldexp(rng.standard_normal((20, 7)), e)
        X[3] = 0.0
        got = fl.row_norms(X)
        exact = [float(sum(Fraction(v) ** 2 for v in row)) ** 0.5 if e > -500 else None for row in X]
        assert got[3] == 0.0 and np.all(got[np.arange(20) != 3] > 0)
        scaled = np.ldexp(fl.row_norms(np.ldexp(X, -e)), e)
        assert np.all(got >= scaled * (1 - 1e-15) - 2.0 ** -1074), e
        assert all(x is None or g >= x for g, x in zip(got, exact))
    assert np.array_equal(fl.col_norms(X), fl.row_norms(X.T))


@pytest.mark.parametrize("e", [0, 300, 600])
def test_an_equivalent_pair_stays_equivalent_when_one_model_is_scaled_by_powers_of_two(e):
    """Model b is model a with its coordinates permuted; a is then given as
    ``2^-e f``, ``2^e g``: the same distribution. At ``e = 600`` the rows of a,
    scaled as b's, have norms that underflow, and the rounding of b's logit
    (``-171`` for an exact 0) was read as a certain difference."""
    F = np.array([[1.0, 1.0, A_], [2.0, 1.0, 3.0]])
    G = np.array([[0.0, 0.0, 0.0], [-HI, -LO, B_], [1.0, 2.0, 3.0]])
    P = [2, 0, 1]
    s = 2.0 ** e
    fa, fb = FloatModel(F / s, G * s), FloatModel(F[:, P], G[:, P])
    ea, eb = ExactModel(_exact(F / s), _exact(G * s)), ExactModel(_exact(F[:, P]), _exact(G[:, P]))
    assert thm5.equivalence(ea, eb).verdict == "equivalent"
    assert thm5.equivalence(fa, fb).verdict in ("equivalent", "undecided")
    assert cor6.equivalence(fa, fb).verdict in ("equivalent", "undecided")


def test_zero_logits_next_to_rows_600_binades_down_are_not_called_different():
    """Both models' log-odds are exactly 0: a's because ``f`` is zero where
    ``g_0`` lives, b's by cancellation that the ordinary product leaves at -171."""
    Fa, Ga = [[2.0 ** -900, 0.0]], [[0.0, 0.0], [0.0, 2.0 ** 880]]
    Fb, Gb = [[1.0, 1.0, A_]], [[0.0, 0.0, 0.0], [-HI, -LO, B_]]
    ea, eb = ExactModel(_exact(Fa), _exact(Ga)), ExactModel(_exact(Fb), _exact(Gb))
    fa, fb = FloatModel(np.array(Fa), np.array(Ga)), FloatModel(np.array(Fb), np.array(Gb))
    assert fb.log_odds()[0, 1] == -171.0 and thm5.same_distribution(ea, eb).holds
    assert not thm5.same_distribution(fa, fb).fails
    for x, y in ((fa, fb), (fb, fa)):
        assert thm5.equivalence(x, y).verdict in ("equivalent", "undecided")


def test_linear_identification_is_not_held_on_residuals_that_underflow():
    """``f = (2^-700, 2^-700)`` against ``f~ = (1, 2)`` (``G_0 = 0``): no ``A`` gives
    ``f = A f~``. The residual ``F^T - A_p F~^T`` and the features' norms used to
    underflow to 0, and a residual of 0 was a witness of consistency."""
    s = 2.0 ** -700
    Fa, Ga, Fb, Gb = [[s], [s]], [[0.0], [0.0]], [[1.0], [2.0]], [[0.0], [0.0]]
    exact = cor6.linear_identification(ExactModel(_exact(Fa), _exact(Ga)), ExactModel(_exact(Fb), _exact(Gb)))
    got = cor6.linear_identification(FloatModel(np.array(Fa), np.array(Ga)), FloatModel(np.array(Fb), np.array(Gb)))
    assert exact.decision.fails and not got.decision.holds and got.A is None


def test_linear_identification_in_units_it_cannot_share():
    """``f = (2^-1030, 2^-1029)`` against ``f~ = (1, 1)``: no ``A`` gives ``f = A f~``.
    The first model cannot be brought to the second's units (``g_0`` carries
    a bit that ``2^-1030`` times it loses), so ``A`` stays near ``2^-1030`` and
    both systems' residuals near ``2^-1031``, whose squares underflow: a
    residual norm of 0 was a witness of consistency, and an invertible ``A``
    was "found"."""
    s, w = 2.0 ** -1030, 1 + 2.0 ** -52
    Fa, Ga, Fb, Gb = [[s], [2 * s]], [[0.0], [w]], [[1.0], [1.0]], [[0.0], [s]]
    exact = cor6.linear_identification(ExactModel(_exact(Fa), _exact(Ga)), ExactModel(_exact(Fb), _exact(Gb)))
    got = feq.linear_identification(FloatModel(np.array(Fa), np.array(Ga)), FloatModel(np.array(Fb), np.array(Gb)))
    assert exact.decision.fails and not got.decision.holds, got.decision
