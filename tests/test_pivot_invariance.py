"""The choice of pivot moves no claim: the distribution, ``k``, ``SG``, ``M``,
``N`` and every result are the same whichever token the log-odds are taken
against. A pivot far from the other tokens makes every logit as large as that
distance, and decisions taken on those numbers -- a rank of ``G_0`` whose rows
all carry it, an entry of ``L - L~`` at a tolerance relative to it, two rows of
differences that it makes look parallel -- were decided wrong. They are taken
against the reference token (``numeric.linalg.reference_token``: the pivot,
unless it lies far from every other token); what is reported stays in the
model's own pivot."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from allornone.numeric import FloatModel
from allornone.numeric import linalg as fl
from allornone.symbolic import ExactModel
from allornone.theorems import cor6, lem8ctx, thm5, thm15


def _pair(F, G, pivot):
    for row in list(F) + list(G):
        assert all(Fraction(float(v)) == Fraction(v) for v in row)
    exact = ExactModel([[Fraction(v) for v in r] for r in F], [[Fraction(v) for v in r] for r in G], pivot)
    return FloatModel(np.array(F, dtype=float), np.array(G, dtype=float), pivot), exact


def test_the_reference_is_the_pivot_unless_it_lies_far_from_every_other_token():
    G = np.array([[2.0 ** 60, 0.0], [1.0, 2.0], [0.0, 1.0], [2.0, 1.0]])
    assert fl.central_token(G) == 3 and fl.central_token(G[[1, 2, 3, 0]]) == 2
    assert fl.reference_token(G, 0) == 3 and [fl.reference_token(G, y) for y in (1, 2, 3)] == [1, 2, 3]
    # tokens far apart in scale around their pivot keep it
    spread = np.vstack([np.zeros(3), np.ldexp(np.ones((5, 3)), np.arange(-900, 900, 360)[:, None])])
    assert fl.reference_token(spread, 0) == 0


@pytest.mark.parametrize("pivot", [0, 1, 2])
def test_k_and_SG_do_not_depend_on_a_far_pivot(pivot):
    """Against the pivot ``(-2^60, 2^60)`` every row of ``G_0`` was that vector
    plus units: ``dim SG`` and ``k`` were decided 1; they are 2."""
    F = [[0, -2], [1, 1], [1, 1], [-1, -2]]
    G = [[-2 ** 60, 2 ** 60], [1, 1], [2, -2]]
    fm, em = _pair(F, G, pivot)
    assert em.effective_complexity() == 2
    assert fm.effective_complexity() == 2 and fm.structure.decided and fm.structure.basis_SG.shape[0] == 2
    assert cor6.equivalence(fm, fm).hypotheses["diverse"].holds


@pytest.mark.parametrize("P", [60, 200])
@pytest.mark.parametrize("pivot", [0, 1, 3])
def test_the_same_distribution_does_not_depend_on_a_far_pivot(P, pivot):
    """Two models that differ in one token's log-odds by 1, with a token ``2^P``
    from the others: against it as pivot every logit is about ``2^P``, and a
    tolerance relative to the entries called them equal. The witness is an
    entry of the models' own ``L`` where they differ."""
    F = [[1, 0], [1, 1], [2, 1]]
    fa, ea = _pair(F, [[2 ** P, 0], [0, 0], [0, 1], [1, 1]], pivot)
    fb, eb = _pair(F, [[2 ** P, 0], [0, 0], [0, 2], [1, 1]], pivot)
    assert thm5.equivalence(ea, eb).verdict == "not equivalent"
    r = thm5.equivalence(fa, fb)
    assert r.verdict == "not equivalent"
    x, y = r.witness
    assert ea.log_odds().to_fraction_rows()[x][y] != eb.log_odds().to_fraction_rows()[x][y]
    assert cor6.equivalence(fa, fb).verdict == "not equivalent"
    assert thm15.shared_parallelism(fa, fb, (1, 2), (3, 2))["same distribution"] == "fails"
    assert thm5.equivalence(fa, fa.with_pivot(pivot)).verdict == "equivalent"


@pytest.mark.parametrize("pivot", [0, 1, 2])
def test_rows_of_log_odds_differences_do_not_look_parallel_beside_a_far_pivot(pivot):
    """``f(0) - f(1) = (1, 0)`` and ``f(2) - f(3) = (1, 1)`` are not parallel in
    ``M = R^2``; against the pivot ``(2^60, 0)`` both rows of differences were
    about ``-2^60`` in every entry. The rows reported are the model's own."""
    F = [[1, 0], [0, 0], [1, 1], [0, 0]]
    G = [[2 ** 60, 0], [0, 1], [1, 0]]
    fm, em = _pair(F, G, pivot)
    assert lem8ctx.parallel_contexts(em, (0, 1), (2, 3), "M").verdict == "not parallel"
    assert lem8ctx.parallel_contexts(fm, (0, 1), (2, 3), "M").verdict == "not parallel"
    r = lem8ctx.proportional_log_odds_rows(fm, (0, 1), (2, 3))
    assert r.verdict == "not proportional"
    want = [float(v) for v in em.log_odds().to_fraction_rows()[0]]
    assert np.array_equal(np.ravel(r.u), want)


@pytest.mark.parametrize("P", [60, 100, 300])
def test_gamma_in_N_does_not_depend_on_a_far_pivot(P):
    """``SG = N = R^2`` whatever the pivot; against a pivot ``2^P`` from the
    other tokens every rounded difference ``g(y) - g(y_0)`` lies along one
    direction, and ``Γ ⊆ SG`` had been decided *fails* (ranks 1 and 2)."""
    from allornone.theorems import thm14
    fm, ex = _pair([[1, 0], [0, 1], [1, 1]], [[2 ** P, -2 ** P], [1, 0], [0, 1], [1, 1]], 0)
    for gamma in ([[1], [0]], [[1, 0], [0, 1]]):
        assert thm14.gamma_in_N(ex, gamma).holds
        assert thm14.gamma_in_N(fm, np.array(gamma, dtype=float)).holds
    from allornone.numeric import relational as fr
    assert fr.meet_N_dimension(fm, np.eye(2)) == (2, True)


# a pivot 2^101 from the other tokens in what the contexts read, and a context
# coordinate (3) no token reads: balanced by powers of two, the pivot no longer
# looks far in G's coordinates, yet every column of L[S, :] against it is the
# common -F_S g(y_0) and its rounding
_FAR_F = [[0, 2, 0, 0, 3], [-3, -2, 0, 5, 2], [3, -2, 0, -2, -1], [3, -1, 0, 2, -2], [2, -2, 0, -4, -1],
          [-7, 7, 0, -2, 7], [-8, 4, 0, 5, -1], [4, -11, 0, -1, 5], [6, -10, 0, 0, 3], [3, -9, 0, -2, 3]]
_FAR_G = [[-3, 0, -4, 0, 3], [-3, -1, -1, 0, -1], [3, -2, 1, 0, 0], [-2, -3, 0, 0, 2],
          [2 ** 101, -2 ** 101, 3, 0, 2 ** 100], [0, -3, -2, 0, 3]]


def test_fits_reading_M_do_not_depend_on_a_far_pivot():
    """The regressors ``[L_S, 1]`` (exact rank 4, unit-column singular values
    down to 0.28 against a near token) had been decided of rank 2 against the
    far pivot, and every fit reading ``M`` *failed* where it holds."""
    from allornone.theorems import thm14
    from allornone.theorems.thm14 import tokens
    fm, ex = _pair(_FAR_F, _FAR_G, 4)
    pairs = [(i, i + 5) for i in range(5)]
    gamma = [[1], [0], [0], [0], [0]]
    want = thm14.relational_linearity(ex, pairs, gamma, "M").decision
    got = thm14.relational_linearity(fm, pairs, np.array(gamma, dtype=float), "M").decision
    assert want.holds and got.holds, got
    assert thm14.relational_linearity(fm, pairs, tokens([(4, 2)]), "M").decision.holds
    assert thm14.linear_probing(ex, pairs, 4, 2, "M").decision.holds
    assert thm14.linear_probing(fm, pairs, 4, 2, "M").decision.holds
    assert thm14.log_odds_criterion(fm, pairs, tokens([(4, 2)])).decision.holds


# Tokens spread by 2^100 along (1, -1), which no context reads (every context
# has f_0 = f_1), and a pivot 2^100 along (1, 1), which every context reads.
_T = 2 ** 100
_LOGIT_FAR_F = [[0, 0, 3, 5], [-5, -5, 4, 5], [-3, -3, 4, -1], [-2, -2, -3, -1], [2, 2, -5, -5], [4, 4, 4, 0],
                [3, 3, -1, 3], [-4, -4, -4, -1], [-2, -2, 3, -2], [-7, -7, 1, -19], [1, 1, -11, -19], [2, 2, 3, -2],
                [10, 10, -1, 10], [7, 7, -9, 3], [3, 3, 7, 13], [0, 0, 5, -6]]
_LOGIT_FAR_G = [[-2 * _T, 2 * _T, 3, -2], [-_T, _T, -1, 3], [0, 0, -1, -3], [_T, -_T, 0, 2], [_T, _T, 2, 3],
                [3 * _T, -3 * _T, 2, 0]]


def test_a_pivot_far_in_the_logits_alone_is_far():
    """Balanced by powers of two, ``G``'s first two coordinates are units, and
    the pivot ``(1, 1)`` sits among the other tokens there: measured in
    ``G``'s coordinates it is near. In the logits it is ``2^101`` from every
    other token while they lie within units of each other, so the regressors
    of a fit reading ``M`` taken against it drown in their common part: every
    fit *failed* (residual 1) where it holds exactly. The reference is chosen
    among the logits."""
    from allornone.theorems import thm14
    from allornone.theorems.thm14 import tokens
    fm, ex = _pair(_LOGIT_FAR_F, _LOGIT_FAR_G, 4)
    pairs = [(i, i + 8) for i in range(8)]
    for gamma in ([[1], [0], [0], [0]], [[0], [0], [1], [1]]):
        assert thm14.relational_linearity(ex, pairs, gamma, "M").decision.holds
        got = thm14.relational_linearity(fm, pairs, np.array(gamma, dtype=float), "M").decision
        assert got.holds, got
    assert thm14.relational_linearity(ex, pairs, tokens([(3, 2)]), "M").decision.holds
    assert thm14.relational_linearity(fm, pairs, tokens([(3, 2)]), "M").decision.holds
    assert thm14.linear_probing(fm, pairs, 3, 2, "M").decision.holds


def test_the_fit_on_the_logits_does_not_depend_on_a_far_pivot():
    """The fit reading ``M`` on the logits of the contexts (the route that
    decides where the fit through ``P_M`` is open) takes them against the
    reference token too: against the far pivot it *failed* (residual 3.9)."""
    from allornone.numeric import relational as fr
    fm, _ = _pair(_FAR_F, _FAR_G, 4)
    pairs = [(i, i + 5) for i in range(5)]
    FT = np.asarray(fm.F)[[t for _, t in pairs]]
    Y = FT[:, [0]]
    got = fr.regress_logits(fm, pairs, Y, float(np.abs(Y).max()))
    assert got is not None and got.holds, got


def test_a_pivot_far_in_one_coordinate_is_far():
    """Tokens within ``2^-100`` of each other in the coordinates the contexts
    read, spread by units along one no context reads, and a pivot at units in
    the others: measured by its largest coordinate difference the pivot was
    as near the median as any token (the unread coordinate set the scale),
    and ``k`` was decided 1 against it for a model of rank 3. Distances are
    measured coordinate by coordinate, in each one's own spread."""
    t = 2.0 ** -100
    F = [[-3, 1, -2, 0], [0, 3, 0, 0], [2, 2, -1, 0], [-2, 3, 1, 0], [0, 0, -2, 0], [1, -1, 3, 0]]
    G = [[1, -1, 2, 0], [-t, -2 * t, -2 * t, -1], [-3 * t, -3 * t, t, 0], [t, -2 * t, -3 * t, -1],
         [t, -3 * t, -t, -5], [2 * t, 2 * t, 2 * t, -4]]
    fm, ex = _pair(F, G, 0)
    assert fl.reference_token(np.array(G), 0) != 0
    assert ex.effective_complexity() == 3
    # (dim SG, its small coordinates 2^-100 beside the unread one's units in
    # every row, may stay open; k is not decided wrong)
    assert fm.effective_complexity() == 3 or not fm.structure.decided


def test_an_undecided_probe_is_carried_undecided_not_refused():
    """A pivot ``2^60 e_2`` along a coordinate no context reads: the probe a
    fit implies is undecided on the float side (it holds exactly). A
    transport whose premise is undecided runs and says undecided; it raised
    ``TransportError`` ("does not hold") as for a probe that fails."""
    from allornone.theorems import thm14
    F = [[1, -1, 0], [-2, 3, 0], [3, 2, 0], [-2, 2, 0], [0, -1, 0], [-2, -1, 0], [12, -4, 0], [0, 1, 0],
         [10, -4, 0], [0, -2, 0]]
    G = [[3, 1, -3], [0, 1, 2], [3, -1, 0], [0, 3, -2], [3, 3, -8], [0, 0, -2 ** 60]]
    D = [Fraction(1, 8), Fraction(2 ** 27), Fraction(1)]
    fa, ea = _pair(F, G, 5)
    fb, eb = _pair([[Fraction(v) * D[j] for j, v in enumerate(r)] for r in F],
                   [[Fraction(v) / D[j] for j, v in enumerate(r)] for r in G], 5)
    pairs = [(i, i + 5) for i in range(5)]
    fit = thm14.relational_linearity(fa, pairs, np.eye(3))
    probe = thm14.implied_probe(fa, fit, 1, 5)
    exact = thm14.implied_probe(ea, thm14.relational_linearity(ea, pairs, [[1, 0, 0], [0, 1, 0], [0, 0, 1]]), 1, 5)
    assert exact.holds and not probe.decision.fails
    carried = thm14.transport_probe(fa, fb, probe, pairs)
    assert carried.holds or carried.decision.undecided
    if probe.decision.undecided:
        assert carried.decision.undecided


@pytest.mark.parametrize("G", [[[2 ** 60, 0], [0, 1], [0, 0]], [[2 ** 100, 0], [0, 1], [0, 0], [0, 2], [0, 3]]])
def test_a_pivot_alone_off_a_coordinate_is_far(G):
    """Every token but the pivot has 0 in the first coordinate, the pivot
    ``2^60``: that coordinate's median distance is 0, and its unit had been
    the smallest nonzero distance -- the pivot's own -- so the pivot measured
    1 from the median and was kept. Against it every log-odds entry is about
    ``2^60``, and two context differences that differ by one in a unit entry
    were "parallel" (pivot 0) where they are not (any other pivot)."""
    from allornone.numeric import linalg as fl
    from allornone.symbolic import ExactModel
    from allornone.theorems import lem8ctx

    F = [[0, 0], [1, 0], [1, 1]]
    assert fl.reference_token(np.array(G, dtype=float), 0) != 0
    for pivot in range(len(G)):
        assert lem8ctx.parallel_contexts(ExactModel(F, G, pivot=pivot), (1, 0), (2, 0)).decision.fails
        got = lem8ctx.parallel_contexts(FloatModel(np.array(F, float), np.array(G, float), pivot=pivot), (1, 0), (2, 0))
        assert not got.decision.holds, (pivot, got.decision)


def test_a_pivot_far_in_what_the_contexts_read_is_far():
    """The pivot ``2^60`` off the other tokens in the first coordinate, which
    the contexts read, while a third coordinate that no context reads spreads
    the tokens by ``2^100``: in ``G``'s coordinates the pivot looked near and
    was kept, every log-odds entry of the context rows was about ``2^60``, and
    two context differences that differ by one were "parallel". The reference
    is chosen among those contexts' logits."""
    from allornone.symbolic import ExactModel
    from allornone.theorems import lem8ctx

    F = [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    G = [[2 ** 60, 0, 0], [0, 1, 2 ** 100], [0, 0, 0], [0, 0, -2 ** 100], [0, 0, 2 ** 99]]
    for pivot in range(len(G)):
        assert lem8ctx.parallel_contexts(ExactModel(F, G, pivot=pivot), (1, 0), (2, 0)).decision.fails
        got = lem8ctx.parallel_contexts(FloatModel(np.array(F, float), np.array(G, float), pivot=pivot), (1, 0), (2, 0))
        assert not got.decision.holds, (pivot, got.decision)
