"""Lemma 8: parallelism in N <=> proportional log-odds, exact and float."""
import random
from fractions import Fraction

import numpy as np

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.decision import Truth
from allornone.errors import (AllOrNoneError, InputFormatError, NonFiniteValueError, NonRationalValueError,
                              ShapeError, VocabularyError)
from allornone.numeric import FloatModel
from allornone.numeric.strategies import exact_models
from allornone.symbolic import ExactModel
from allornone.symbolic import parallel as planting
from allornone.theorems import get_record
from allornone.theorems.lem8 import RECORD, instance, parallel, proportional_log_odds
from allornone.theorems.engine.runner import run

HIDDEN = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
INVISIBLE = ExactModel([[1, 0], [3, 0]], [[0, 0], [1, 0], [0, 1], [0, 2]])


def test_registered():
    assert get_record("lem8") is RECORD
    assert RECORD.sides == "parallel_N" and RECORD.paper


def test_hidden_component_values():
    r = parallel(HIDDEN, (1, 0), (2, 0))
    assert r.verdict == "parallel" and r.lam == Fraction(2) and r.unique is True
    assert r.u.to_fractions() == [["2"], ["0"]]
    raw = parallel(HIDDEN, (1, 0), (2, 0), space="raw")
    assert raw.verdict == "not parallel" and raw.lam is None
    assert proportional_log_odds(HIDDEN, (1, 0), (2, 0)).lam == Fraction(2)
    assert parallel(HIDDEN, (1, 0), (2, 0), lam=2).holds
    assert not parallel(HIDDEN, (1, 0), (2, 0), lam="5/2").holds
    assert not proportional_log_odds(HIDDEN, (1, 0), (2, 0), lam=3).holds


def test_hidden_component_float():
    fm = HIDDEN.to_float()
    r = parallel(fm, (1, 0), (2, 0))
    assert r.holds and isinstance(r.lam, float) and abs(r.lam - 2) < 1e-12
    assert not r.decision.is_exact
    assert parallel(fm, (1, 0), (2, 0), space="raw").decision.truth is Truth.FAILS
    assert abs(proportional_log_odds(fm, (1, 0), (2, 0)).lam - 2) < 1e-12


def test_degenerate_convention():
    # P_N(g(2) - g(3)) = 0 and g(1) - g(0) is visible: no ratio at all
    r = parallel(INVISIBLE, (1, 0), (2, 3))
    assert (r.verdict, r.lam, r.unique) == ("not parallel", None, False)
    # both invisible: every ratio, reported as 0
    r = parallel(INVISIBLE, (2, 0), (3, 0))
    assert (r.verdict, r.lam, r.unique) == ("parallel", Fraction(0), False)
    assert parallel(INVISIBLE, (2, 0), (3, 0), lam=-7).holds
    r = proportional_log_odds(INVISIBLE, (2, 0), (3, 0))
    assert (r.verdict, r.lam, r.unique) == ("proportional", Fraction(0), False)
    assert r.degenerate.holds and parallel(INVISIBLE, (2, 0), (3, 0)).degenerate.holds
    # raw: (0, 1) = 1/2 (0, 2) only
    assert parallel(INVISIBLE, (2, 0), (3, 0), space="raw").lam == Fraction(1, 2)


def test_lambda_zero():
    r = parallel(INVISIBLE, (2, 3), (1, 0))
    assert (r.verdict, r.lam, r.unique) == ("parallel", Fraction(0), True)
    assert proportional_log_odds(INVISIBLE, (2, 3), (1, 0)).lam == 0
    assert parallel(INVISIBLE, (2, 3), (1, 0), space="raw").verdict == "not parallel"


BAD_INPUT = [
    # (call, exception, message fragment)
    (lambda: parallel(HIDDEN, (1, 0), (4, 0)), VocabularyError, "token pair \\(c, e\\): token index 4 is out of range"),
    (lambda: parallel(HIDDEN, (9, 0), (2, 0)), VocabularyError, "token pair \\(a, b\\)"),
    (lambda: proportional_log_odds(HIDDEN, (-1, 0), (2, 0)), VocabularyError, "token index -1"),
    (lambda: parallel(HIDDEN, (1, 0, 2), (2, 0)), ShapeError, "expected a pair"),
    (lambda: parallel(HIDDEN, 1, (2, 0)), ShapeError, "expected a pair"),
    (lambda: parallel(HIDDEN, "10", (2, 0)), ShapeError, "expected a pair"),
    (lambda: parallel(HIDDEN, (True, 0), (2, 0)), ShapeError, "not a token index"),
    (lambda: parallel(HIDDEN, (1.0, 0), (2, 0)), ShapeError, "not a token index"),
    (lambda: parallel(HIDDEN, (1, 0), (2, 0), space="M"), InputFormatError, "space must be 'N' or 'raw'"),
    (lambda: parallel(HIDDEN, (1, 0), (2, 0), space=None), InputFormatError, "space must be"),
    (lambda: parallel(HIDDEN, (1, 0), (2, 0), lam=0.5), NonRationalValueError, "lambda: 0.5 is a float"),
    (lambda: proportional_log_odds(HIDDEN, (1, 0), (2, 0), lam=0.5), NonRationalValueError, "lambda"),
    (lambda: parallel(HIDDEN, (1, 0), (2, 0), lam=True), NonRationalValueError, "bool"),
    (lambda: parallel(HIDDEN.to_float(), (1, 0), (2, 0), lam="two"), InputFormatError, "not a number"),
    (lambda: parallel(HIDDEN.to_float(), (1, 0), (2, 0), lam=True), InputFormatError, "bool"),
    (lambda: parallel(HIDDEN.to_float(), (1, 0), (2, 0), lam=float("nan")), NonFiniteValueError, "finite"),
    (lambda: proportional_log_odds(HIDDEN.to_float(), (1, 0), (2, 0), lam=float("inf")), NonFiniteValueError,
     "finite"),
]


@pytest.mark.parametrize("call, exc, message", BAD_INPUT)
def test_bad_input(call, exc, message):
    assert issubclass(exc, AllOrNoneError)
    with pytest.raises(exc, match=message):
        call()


def test_verdict_words():
    assert parallel(HIDDEN, (1, 0), (2, 0)).verdict == "parallel"
    assert parallel(HIDDEN, (1, 0), (2, 0), "raw").verdict == "not parallel"
    assert proportional_log_odds(HIDDEN, (1, 0), (2, 0)).verdict == "proportional"
    assert proportional_log_odds(HIDDEN, (1, 0), (2, 0), lam=3).verdict == "not proportional"
    # a residual of 2e-7 on numbers of size 1 is in the undecided band (1e-9, 1e-6]
    # off by 2^-30 in one coordinate of size 2: a misfit of about 1e-10 of the
    # size compared, beyond sqrt(gap) rtol (a "holds" must be certain) and within
    # gap rtol (a "fails" must be too)
    near = FloatModel([[1, 0], [0, 1]], [[0, 0], [2, 2 + 2.0 ** -30], [1, 1]])
    assert parallel(FloatModel([[1, 0], [0, 1]], [[0, 0], [2, 2e-7], [1, 0]]), (1, 0), (2, 0), "raw").verdict == \
        "not parallel"  # 2e-7 where the other difference is exactly 0: decided
    assert parallel(near, (1, 0), (2, 0), "raw").verdict == "undecided"
    assert parallel(near, (1, 0), (2, 0)).verdict == "undecided"
    assert proportional_log_odds(near, (1, 0), (2, 0)).verdict == "undecided"
    # a misfit of 2^-36 of the size (1.5e-11) is certain to be within sqrt(gap) rtol
    close = FloatModel([[1, 0], [0, 1]], [[0, 0], [2, 2 + 2.0 ** -33], [1, 1]])
    assert parallel(close, (1, 0), (2, 0), "raw").verdict == "parallel"


@pytest.mark.parametrize("frac", [Fraction(1, 3), Fraction(1, 4)])
def test_large_rows_float_scale(frac):
    # g(1), g(2) are ~1e12 and differ by 1/3 = g(3) - g(0): parallel with ratio 1.
    # With 1/4 every number is held exactly: the differences are formed correctly
    # rounded and every atom is decided. With 1/3 the inputs are rounded and
    # declared so (about 2e-4 on a difference of 1/3).
    big = Fraction(10**12) + frac
    m = ExactModel([[1, 0], [0, 1]], [[0, 0], [big, 0], [10**12, 0], [frac, 0]])
    inst = instance("large rows", m, (1, 2), (3, 0), 1)
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert ex.atoms["raw_parallel"].holds and ex.atoms["parallel_N"].holds
    assert not ex.atoms["degenerate_N"].holds and not ex.atoms["equal_probabilities"].holds
    # Rounded, the equations between differences of 1/3 known to 2e-4 cannot be
    # certified at the tolerance of the values they compare, raw or on the log-odds
    # (the logits' own size, 1e12, is no measure: a change of pivot moves it);
    # that the differences are not zero is still decided.
    rounded = frac.denominator == 3
    equations = ("raw_parallel", "parallel_N", "proportional")
    assert all(fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms if not (rounded and k in equations))
    assert not rounded or all(fl.atoms[k].undecided for k in equations)
    assert all(not o.decision.fails if rounded else o.decision.holds
               for _, o in RECORD.check_steps(inst, "float") if o.applicable)


def _check_lemma(model, ab, ce, lam):
    rN, rL = parallel(model, ab, ce, lam=lam), proportional_log_odds(model, ab, ce, lam=lam)
    assert rN.decision.truth is rL.decision.truth
    eN, eL = parallel(model, ab, ce), proportional_log_odds(model, ab, ce)
    assert (eN.decision.truth, eN.lam, eN.unique) == (eL.decision.truth, eL.lam, eL.unique)
    assert eN.degenerate.truth is eL.degenerate.truth
    return rN, eN


def _float_agrees(model, ab, ce, lam):
    fm = model.to_float()
    for space in ("N", "raw"):
        ex, fl = parallel(model, ab, ce, space, lam), parallel(fm, ab, ce, space, lam)
        assert fl.decision.undecided or fl.decision.truth is ex.decision.truth
        ex, fl = parallel(model, ab, ce, space), parallel(fm, ab, ce, space)
        assert fl.decision.undecided or fl.decision.truth is ex.decision.truth
        if ex.holds and fl.holds and ex.unique:
            assert abs(fl.lam - float(ex.lam)) <= 1e-8 * max(1, abs(ex.lam))
    ex, fl = proportional_log_odds(model, ab, ce, lam), proportional_log_odds(fm, ab, ce, lam)
    assert fl.decision.undecided or fl.decision.truth is ex.decision.truth


@given(st.sampled_from(planting.KINDS), st.integers(0, 2**32))
def test_lemma8_planted(kind, seed):
    pp = planting.planted_pair(random.Random(seed), kind)
    rN, eN = _check_lemma(pp.model, pp.ab, pp.ce, pp.lam)
    if kind in ("raw parallel", "parallel after projection only", "lambda = 0"):
        assert rN.holds
        if eN.unique:
            assert eN.lam == pp.lam
    if kind == "raw parallel":
        assert parallel(pp.model, pp.ab, pp.ce, "raw", pp.lam).holds
    if kind == "parallel after projection only":
        assert not parallel(pp.model, pp.ab, pp.ce, "raw", pp.lam).holds
    if kind == "degenerate pair":
        assert eN.unique is False
    _float_agrees(pp.model, pp.ab, pp.ce, pp.lam)


@given(exact_models(m=st.integers(1, 4), n=st.integers(3, 5), d=st.integers(1, 3)), st.integers(0, 2**32),
       st.sampled_from([Fraction(0), Fraction(1), Fraction(-2), Fraction(1, 2)]))
def test_lemma8_random(model, seed, lam):
    ab, ce = planting.choose_indices(random.Random(seed), model.n)
    _check_lemma(model, ab, ce, lam)
    _float_agrees(model, ab, ce, lam)


@pytest.mark.parametrize("edge", RECORD.edges, ids=lambda e: e.name)
def test_edges(edge):
    inst = edge.build(random.Random(0))
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert {k: ex.atoms[k].holds for k in edge.expect} == dict(edge.expect)
    assert all(fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms)
    assert ex.statement is Truth.HOLDS
    assert all(o.decision.holds for _, o in RECORD.check_steps(inst) if o.applicable)


def test_wrong_ratio_fails_both_sides():
    pp = planting.planted_pair(random.Random(3), "wrong lambda")
    rN, _ = _check_lemma(pp.model, pp.ab, pp.ce, pp.lam)
    assert not rN.holds or parallel(pp.model, pp.ab, pp.ce).unique is False


def test_runner_nonvacuous():
    rep = run(["lem8"], trials=24, seed=5)
    r = rep["results"][0]
    assert r["verdict"] == "pass" and r["contradictions"] == 0 and r["steps_failed"] == 0
    assert r["sides"]["holds"] > 0 and r["sides"]["fails"] > 0
    assert set(r["kinds"]) == set(planting.KINDS)


def test_two_ratios_agree_only_within_what_their_tests_accept():
    """``same_ratio`` compares two float ratios with each one's error (its
    residual test's error bound over ``|v|``) as a cost for "the same": a ratio
    moved by a thousandth of itself is apart, one moved by ``1e-15`` of itself
    is the same, and a ratio with ``v = 0`` (an unbounded error) decides
    nothing."""
    import dataclasses

    from allornone.symbolic import ExactModel
    from allornone.theorems.lem8 import _ratio_error, parallel, proportional_log_odds, same_ratio

    f = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]]).to_float()
    r1, r2 = parallel(f, (1, 0), (2, 0)), proportional_log_odds(f, (1, 0), (2, 0))
    assert r1.lam == r2.lam == 2.0
    be = f.backend
    assert same_ratio(be, r1, r2).holds
    assert same_ratio(be, r1, dataclasses.replace(r2, lam=2.0 * (1 + 1e-15))).holds
    assert same_ratio(be, r1, dataclasses.replace(r2, lam=2.0 * (1 + 1e-3))).fails
    assert same_ratio(be, r1, dataclasses.replace(r2, v=0.0 * r2.v)).undecided
    # a ratio of a difference that cancels (v of size 4e-3 read off log-odds
    # of 1e6) is known only to about 1e-7 of itself: two such ratios 1.2 %
    # apart are apart, not "the same within what each test accepts"
    m = FloatModel(np.array([[1.0]]), np.array([[0.0], [1e6 + 4e-3], [1e6], [1e6 + 4.05e-3], [1e6]]))
    s1, s2 = proportional_log_odds(m, (1, 2), (3, 4)), proportional_log_odds(m, (3, 4), (3, 4))
    assert abs(s1.lam - s2.lam) > 1e-2 and same_ratio(m.backend, s1, s2).fails
    # a ratio whose error is larger than the tolerance (a model that declares
    # an input error of 6e-12): the same ratio moved by less than that error,
    # but by more than the tolerance, may or may not be the same -- undecided
    g = FloatModel(f.F, f.G, input_error=6e-12)
    t1, t2 = parallel(g, (1, 0), (2, 0)), proportional_log_odds(g, (1, 0), (2, 0))
    err = _ratio_error(be, t1) + _ratio_error(be, t2)
    assert t1.lam == t2.lam == 2.0 and err > 1000 ** 0.5 * 1e-12 * 2     # beyond sqrt(gap) rtol of λ
    assert same_ratio(g.backend, t1, dataclasses.replace(t2, lam=2.0 + err / 2)).undecided


def test_a_ratio_beyond_binary64_is_a_clear_error_on_floats_and_exact_on_rationals():
    """``λ = 10^400`` has no float; the float side says so with the package's
    own error (it raised a bare ``OverflowError``), the exact side decides it
    (the size its residual is judged against was a float product that overflowed)."""
    from allornone.errors import NonFiniteValueError
    from allornone.symbolic import ExactModel
    from allornone.theorems import lem8

    m = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 2], [2, 1]])
    assert lem8.parallel(m, (1, 0), (2, 0), "N", 10 ** 400).verdict == "not parallel"
    for lam in (10 ** 400, "1e400"):
        with pytest.raises(NonFiniteValueError):
            lem8.parallel(m.to_float(), (1, 0), (2, 0), "N", lam)


def test_an_equation_of_log_odds_is_compared_at_the_values_it_compares_whatever_the_pivot():
    """``ℓ_ab = λ ℓ_ce`` compares two log-odds vectors, which no choice of pivot
    moves; the logits they are formed from move with it. Compared at the
    logits' size, a pivot whose ``g(y_0)`` is ``2^40`` made ``(1, 3) = 1.5 (-2, -6)``
    hold, and a pair of one token twice (``ℓ_ce = 0``) next to logits of ``2^36``
    made ``(1, 3) = λ 0`` hold. Both are "not proportional" exactly."""
    F, G = [[1], [3]], [[0], [1], [2], [4], [2 ** 40], [2 ** 36], [2 ** 36]]
    for pivot in (0, 4):
        exact, fm = ExactModel(F, G, pivot), FloatModel(np.array(F, float), np.array(G, float), pivot)
        for lam in (Fraction(-1, 2), Fraction(3, 2), None):
            want = proportional_log_odds(exact, (1, 0), (2, 3), lam)
            for got in (proportional_log_odds(fm, (1, 0), (2, 3), None if lam is None else float(lam)),
                        parallel(fm, (1, 0), (2, 3), "N", None if lam is None else float(lam))):
                assert got.decision.truth is want.decision.truth, (pivot, lam)
                assert lam is not None or got.lam == -0.5
        for ce in ((5, 5), (5, 6)):                  # ℓ_ce = 0 beside logits of 2^36
            assert not proportional_log_odds(exact, (1, 0), ce, 1).decision.holds
            for lam in (1.0, 2.0 ** 20):
                assert proportional_log_odds(fm, (1, 0), ce, lam).verdict == "not proportional"
                assert parallel(fm, (1, 0), ce, "N", lam).verdict == "not parallel"
        assert proportional_log_odds(fm, (6, 6), (1, 0), 1.0).verdict == "not proportional"   # ℓ_ab = 0 beside 2^36


def test_a_presentation_a_thousand_binades_wide_is_decided_and_reported_in_its_own_units():
    """``F D``, ``G D^-1`` with ``D = diag(2^E, 2^-E, 2)`` is the same model; from
    ``E = 500`` the forms of the given arrays lost the small coordinates and the
    parallelism was undecided. It is decided on the balanced presentation, and
    the differences and residuals are reported in the units of the arrays given."""
    rng = np.random.default_rng(2)
    F = rng.integers(-4, 5, size=(5, 3)).astype(float)
    G = rng.integers(-4, 5, size=(6, 3)).astype(float)
    G[4] = G[1] + 2 * (G[2] - G[3])
    for E in (0, 700, 1000):
        D = np.ldexp(1.0, np.array([E, -E, 1]))
        fm = FloatModel(F * D, G / D)
        exact = ExactModel([[Fraction(v) for v in r] for r in F * D], [[Fraction(v) for v in r] for r in G / D])
        for space in ("N", "raw"):
            got, want = parallel(fm, (4, 1), (2, 3), space), parallel(exact, (4, 1), (2, 3), space)
            assert got.verdict == want.verdict == "parallel" and got.lam == 2.0
        raw = parallel(fm, (4, 1), (2, 3), "raw")
        assert np.array_equal(np.ravel(raw.u), (G / D)[4] - (G / D)[1])
        odds = proportional_log_odds(fm, (4, 1), (2, 3))
        L = F @ G.T
        assert np.array_equal(np.ravel(odds.u), L[:, 4] - L[:, 1]) and odds.verdict == "proportional"
        assert not parallel(fm, (1, 0), (2, 3), "N", 2.0).decision.undecided


def test_a_ratio_below_binary64_is_refused_not_flushed_to_zero():
    """Token 4 duplicates token 1, so ``u = 0``, and ``v != 0``: ``u = λ v``
    fails for every ``λ != 0``. A ``λ`` of ``2^-1100`` became ``0.0`` on the
    float side, where ``0 = 0 v`` holds; it is refused there, in one line."""
    from allornone.errors import UnrepresentableValueError
    from allornone.numeric import FloatModel
    from allornone.theorems import lem8
    F, G = [[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 0], [0, 1], [2, 1], [1, 0]]
    exact, floats = ExactModel(F, G), FloatModel(np.array(F, float), np.array(G, float))
    for lam in (Fraction(1, 2 ** 1100), Fraction(-1, 2 ** 1080), f"1/{2 ** 1075}"):
        for call in (lambda m, x: lem8.parallel(m, (1, 4), (2, 0), "N", lam=x),
                     lambda m, x: lem8.parallel(m, (1, 4), (2, 0), "raw", lam=x),
                     lambda m, x: lem8.proportional_log_odds(m, (1, 4), (2, 0), lam=x)):
            assert call(exact, lam).decision.fails
            with pytest.raises(UnrepresentableValueError, match="below binary64's range"):
                call(floats, lam)
    assert lem8.parallel(floats, (1, 4), (2, 0), "N", lam=2.0 ** -1074).decision.undecided
