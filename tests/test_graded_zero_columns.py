"""A log-odds column that is exactly zero is zero in every truncation of
``L`` (``L_k = P_k L``), so the graded parallelism of a zero first column
holds whatever the rounding of the factored ``L_k`` (which, under a change
of basis or a scaling, is normwise and may leave it open). The column is
decided zero on correctly rounded sums, never on an ordinary product: a
column that rounds to zero but is not zero must not be called parallel.

Run once against a broken variant that failed here: with the zero test taken
on the ordinary product (mutant ``graded-zero-column-rounded``), a nonzero
column of ``(1e16, 1, -1e16)`` against ``(1, 1, 1)`` is called zero and
parallel to a column it is not parallel to; with a zero second column
called no multiple of a first whose norm the truncation may take (mutant
``graded-zero-second-column-fails``), a column of ``L`` that ``L_1`` drops
is called no multiple of zero."""
from __future__ import annotations

import numpy as np
import pytest
from allornone.numeric import FloatModel, Tolerance, graded
from allornone.numeric.equivalence import column_vanishes
from allornone.theorems.engine import invariance as inv


def test_an_exact_zero_is_told_from_a_rounded_one():
    t = 2.0 ** -30
    # exactly zero, though its ordinary product rounds to -2^-53 or -2^-54
    F = np.array([[1.0, 3.0]])
    G = np.array([[0.0, 0.0], [0.75 + 3 * t, -0.25 - t]])
    assert column_vanishes(FloatModel(F, G), 1, 0)
    # not zero, though its ordinary product rounds to zero
    F = np.array([[1e16, 1.0, -1e16], [1e16, -1.0, -1e16]])
    G = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    m = FloatModel(F, G)
    assert not np.any(F @ (G[1] - G[0])) and not column_vanishes(m, 1, 0)
    # its column is (1, -1), the other's (1e16, 1e16): orthogonal, not parallel
    r = graded.parallel(m, (m.tokens[1], m.tokens[0]), (m.tokens[2], m.tokens[0]))
    assert r["parallel_N"] != "holds"
    # a declared input error leaves the logits known only to within it
    assert not column_vanishes(FloatModel(np.array([[1.0, 3.0]]), np.zeros((2, 2)), input_error=1e-16), 1, 0)


@pytest.mark.parametrize("transform, index", [("change of basis", 2), ("global scaling", 3), ("B.5 twin", 2),
                                              ("subnormal entries", 2), ("integer shear", 3)])
def test_a_zero_log_odds_column_is_parallel_under_transforms_that_blur_the_factors(transform, index):
    """Harness instances whose first log-odds column is exactly zero, left
    undecided by the factored ``L_k``'s normwise error: decided, and agreeing
    with the exact verdict."""
    out = inv.check("graded-lem8", transform, 0, index)
    assert out["outcome"] == "agree", out


@pytest.mark.parametrize("choice", [{"k": 1}, {"tol": Tolerance(rank_rtol=1e-10)}])
def test_a_zero_second_column_fails_only_where_the_first_survives_the_truncation(choice):
    """``L = diag(1, 1e-20)`` truncated at ``k = 1`` by the user's choice (a
    given ``k``, or ``rank_rtol`` above ``1e-20``): ``L_1 = diag(1, 0)``.
    Against the zero column of two equal tokens, the column ``(1, 0)`` is no
    multiple (fails); the column ``(0, 1e-20)`` of ``L`` is not zero but its
    column of ``L_1`` is, so it is a multiple of zero -- never "fails"."""
    F = np.eye(2)
    G = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1e-20], [0.0, 0.0]])
    m = FloatModel(F, G)
    t = m.tokens
    kept = graded.parallel(m, (t[1], t[0]), (t[3], t[0]), **choice)
    assert kept["k"] == 1 and kept["parallel_N"] == "fails"
    dropped = graded.parallel(m, (t[2], t[0]), (t[3], t[0]), **choice)
    assert dropped["k"] == 1 and dropped["parallel_N"] != "fails"


def test_a_zero_second_column_fails_against_every_nonzero_column_at_k_by_rounding():
    """The same ``L = diag(1, 1e-20)`` by rounding alone: ``k`` is ``rank L =
    2`` (a context scaled by ``1e-20`` is no direction of size zero), ``L_k =
    L``, and neither ``(1, 0)`` nor ``(0, 1e-20)`` is a multiple of the zero
    column: both fail, as they do exactly."""
    F = np.eye(2)
    G = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1e-20], [0.0, 0.0]])
    m = FloatModel(F, G)
    t = m.tokens
    for first in ((t[1], t[0]), (t[2], t[0])):
        r = graded.parallel(m, first, (t[3], t[0]))
        assert r["k"] == 2 and "(decided)" in r["k_label"] and r["parallel_N"] == "fails", r


@pytest.mark.parametrize("transform, index", [("hidden coordinates", 2), ("global scaling", 2),
                                              ("power-of-two basis", 2), ("common offset", 2)])
def test_a_zero_second_column_is_no_multiple_under_transforms_that_blur_the_factors(transform, index):
    out = inv.check("graded-thm14", transform, 0, index)
    assert "parallel_N" not in out["undecided_atoms"] + out["contradicted"], out


def test_a_logit_below_binary64_is_not_shown_zero():
    """Contexts and tokens at ``2^-600``: the logits, near ``2^-1200``, round
    to zero, but with an error bound of the smallest subnormal; they are not
    shown zero (neither a log-odds column nor Theorem 5's zero logits)."""
    from allornone.numeric.equivalence import zero_logits

    G = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 2, 3]])
    m = FloatModel(np.ldexp(np.eye(3), -600), np.ldexp(G, -600))
    assert not np.any(m.F @ (m.G[1] - m.G[2]))
    assert not column_vanishes(m, 1, 2)
    assert not np.any(zero_logits(m, m, contexts=[0, 1, 2]))
    # an exactly equal pair of tokens at that scale is still an exact zero
    twin = FloatModel(np.ldexp(np.eye(3), -600), np.ldexp(G[[0, 1, 1]], -600))
    assert column_vanishes(twin, 1, 2)
