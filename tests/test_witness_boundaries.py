"""Fit witnesses (``numeric.witness``) at their boundaries: every column must
fit, both error bounds count, the loop runs at least once, empty shapes, and
the bound and scale reported in the units of the targets. Expected values are
worked out by hand from the definitions in the module docstring."""
import numpy as np
import pytest

from allornone.numeric import Tolerance
from allornone.numeric.linalg import UNIT_ROUNDOFF as U
from allornone.numeric.witness import Witness, fit_witness, rounded_matmul

X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
THETA = np.array([[2.0], [3.0]])
Y = X @ THETA                                    # (2, 3, 5): max |Y| = 5


@pytest.mark.parametrize("steps", [0, 1])
def test_an_exact_fit_is_shown_in_one_step(steps):
    w = fit_witness(X, 0.0, Y, 0.0, 1e-12, steps=steps)
    assert w.holds and w.steps == 1


def test_every_column_must_fit():
    """Column 2 is off by (0, 0, 1): its least misfit is the projection of
    (0, 0, 1) on (1, 1, -1) / sqrt 3, whose largest entry is 1/3."""
    Y2 = np.hstack([Y, Y + np.array([[0.0], [0.0], [1.0]])])
    w = fit_witness(X, 0.0, Y2, 0.0, 1e-12)
    assert not w.holds
    assert w.bound[0] <= 1e-12 * 5
    assert w.bound[1] == pytest.approx(1 / 3, rel=1e-12)


def test_bound_and_scale_are_in_the_units_of_the_targets():
    """``scale`` is a lower bound on ``max |Y*_j|``: here 5 and 6 (less four
    units of rounding), not the columns scaled to size about one."""
    Y2 = np.hstack([Y, Y + np.array([[0.0], [0.0], [1.0]])])
    w = fit_witness(X, 0.0, Y2, 0.0, 1e-12)
    assert w.scale[0] == 5 * (1 - 4 * U) and w.scale[1] == 6 * (1 - 4 * U)
    w = fit_witness(X, 0.0, 1024 * Y, 0.0, 1e-12)
    assert w.scale[0] == 5 * 1024 * (1 - 4 * U)


def test_the_targets_error_lowers_the_scale_it_is_judged_against():
    """|Y* - Y| <= 2: max |Y*| may be 3, and a bound of 2 is beyond rtol 0.5 of 3
    (it would be within 0.5 of 5)."""
    w = fit_witness(X, 0.0, Y, 2.0, 0.5)
    assert w.scale[0] == 3 * (1 - 4 * U)
    assert w.bound[0] >= 2.0 and not w.holds
    assert fit_witness(X, 0.0, Y, 0.1, 0.5).holds


def test_the_regressors_error_counts_at_the_size_of_the_map():
    """|X* - X| <= e entrywise adds e (|θ_1| + |θ_2|) = 5 e to every row."""
    w = fit_witness(X, 0.1, Y, 0.0, 0.5)
    assert w.holds and w.bound[0] == pytest.approx(1.01 * 0.5, rel=1e-12)
    w = fit_witness(X, 0.6, Y, 0.0, 0.5)
    assert not w.holds and w.bound[0] >= 0.6 * 5


def test_empty_shapes():
    w = fit_witness(np.zeros((0, 2)), 0.0, np.zeros((0, 1)), 0.0, 1e-12)
    assert w.holds and w.bound.shape == (1,)
    w = fit_witness(X, 0.0, np.zeros((3, 0)), 0.0, 1e-12)
    assert w.holds and w.bound.shape == (0,)
    # no regressors: only zero targets fit
    assert fit_witness(np.zeros((3, 0)), 0.0, np.zeros((3, 1)), 0.0, 1e-12).holds
    assert not fit_witness(np.zeros((3, 0)), 0.0, Y, 0.0, 1e-12).holds
    S, err = rounded_matmul([(np.zeros((0, 2)), np.ones((2, 3)))])
    assert S.shape == err.shape == (0, 3)


@pytest.mark.parametrize("where", ["X", "X_err", "Y", "Y_err"])
def test_a_non_finite_input_shows_nothing(where):
    args = {"X": X.copy(), "X_err": np.zeros_like(X), "Y": Y.copy(), "Y_err": np.zeros_like(Y)}
    args[where][1, 0] = np.inf
    w = fit_witness(args["X"], args["X_err"], args["Y"], args["Y_err"], 1e-12)
    assert not w.holds and np.all(np.isinf(w.bound))


def test_a_negative_error_bound_is_refused():
    with pytest.raises(ValueError):
        fit_witness(X, -1.0, Y, 0.0, 1e-12)
    with pytest.raises(ValueError):
        fit_witness(X, 0.0, Y, -np.ones_like(Y), 1e-12)


def test_decision_reports_the_column_closest_to_its_limit():
    """Column 2 has an error bound of 1e-14 on its targets, column 1 none: the
    decision is reported on column 2, with its bound as residual and rtol times
    its scale as the "holds" limit."""
    Y2 = np.hstack([Y, 2 * Y])
    Y_err = np.array([[0.0, 1e-14]] * 3)
    w = fit_witness(X, 0.0, Y2, Y_err, 1e-12)
    assert w.holds and w.bound[1] > w.bound[0]
    tol = Tolerance()
    d = w.decision(tol)
    assert d.holds and d.residual == w.bound[1]
    lo, hi = d.tolerance
    assert lo == tol.rtol * w.scale[1] and hi == pytest.approx(tol.gap * lo, rel=1e-15)
    assert d.residual == pytest.approx(1e-14, rel=1e-3)
    assert fit_witness(X, 0.0, Y + np.array([[0.0], [0.0], [1.0]]), 0.0, 1e-12).decision(tol) is None


def test_ratio():
    assert Witness(True, np.zeros(2), np.zeros(2), 1).ratio == 0.0
    assert Witness(True, np.array([1.0, 3.0]), np.array([2.0, 4.0]), 1).ratio == 0.75
    assert Witness(True, np.zeros(0), np.zeros(0), 0).ratio == 0.0
