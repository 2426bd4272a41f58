"""The dual of Lemma 8 for contexts (an addition of this project)."""
import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.decision import Truth
from allornone.errors import AllOrNoneError, InputFormatError, NonFiniteValueError, NonRationalValueError, ShapeError
from allornone.symbolic import ExactModel
from allornone.symbolic import parallel as planting
from allornone.theorems import get_record, records
from allornone.theorems.lem8ctx import RECORD, context_pair, instance, parallel_contexts, proportional_log_odds_rows
from allornone.theorems.engine.runner import run

HIDDEN = ExactModel([[2, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [2, 0]])
SAME = ExactModel([[1, 0], [0, 1], [0, 3], [0, 0]], [[0, 0], [1, 0], [2, 0]])


def test_registered_as_addition():
    assert "lem8ctx" in records() and get_record("lem8ctx") is RECORD
    assert RECORD.paper is False and "addition of this project" in RECORD.summary


def test_values():
    r = parallel_contexts(HIDDEN, (0, 2), (1, 2))
    assert (r.verdict, r.lam, r.unique) == ("parallel", Fraction(2), True)
    assert parallel_contexts(HIDDEN, (0, 2), (1, 2), "raw").lam is None
    assert proportional_log_odds_rows(HIDDEN, (0, 2), (1, 2)).lam == Fraction(2)
    assert not proportional_log_odds_rows(HIDDEN, (0, 2), (1, 2), lam=1).holds
    fr = parallel_contexts(HIDDEN.to_float(), (0, 2), (1, 2))
    assert fr.holds and abs(fr.lam - 2) < 1e-12


def test_degenerate_and_zero():
    r = parallel_contexts(SAME, (0, 3), (1, 2))
    assert (r.verdict, r.lam, r.unique) == ("not parallel", None, False)
    r = parallel_contexts(SAME, (1, 3), (2, 3), lam=9)
    assert r.holds and r.unique is False
    r = parallel_contexts(SAME, (1, 2), (0, 3))
    assert (r.verdict, r.lam) == ("parallel", Fraction(0))
    assert proportional_log_odds_rows(SAME, (1, 2), (0, 3)).lam == 0


BAD_INPUT = [
    (lambda: parallel_contexts(HIDDEN, (0, 5), (1, 2)), ShapeError,
     "context pair \\(x1, x2\\): context index 5 is out of range"),
    (lambda: parallel_contexts(HIDDEN, (0, 2), (1, -1)), ShapeError, "context pair \\(x3, x4\\)"),
    (lambda: proportional_log_odds_rows(HIDDEN, 0, (1, 2)), ShapeError, "expected a pair"),
    (lambda: parallel_contexts(HIDDEN, (0, "1"), (1, 2)), ShapeError, "not a context index"),
    (lambda: context_pair(HIDDEN, (0, 3)), ShapeError, "context index 3"),
    (lambda: parallel_contexts(HIDDEN, (0, 2), (1, 2), space="N"), InputFormatError, "space must be 'M' or 'raw'"),
    (lambda: parallel_contexts(HIDDEN, (0, 2), (1, 2), lam=0.5), NonRationalValueError, "lambda"),
    (lambda: proportional_log_odds_rows(HIDDEN.to_float(), (0, 2), (1, 2), lam=float("nan")), NonFiniteValueError,
     "finite"),
]


@pytest.mark.parametrize("call, exc, message", BAD_INPUT)
def test_bad_input(call, exc, message):
    assert issubclass(exc, AllOrNoneError)
    with pytest.raises(exc, match=message):
        call()


def test_verdict_words():
    assert parallel_contexts(HIDDEN, (0, 2), (1, 2)).verdict == "parallel"
    assert proportional_log_odds_rows(HIDDEN, (0, 2), (1, 2)).verdict == "proportional"
    assert proportional_log_odds_rows(HIDDEN, (0, 2), (1, 2), lam=1).verdict == "not proportional"


@pytest.mark.parametrize("frac", [Fraction(1, 3), Fraction(1, 4)])
def test_large_rows_float_scale(frac):
    # f(x0), f(x1) are ~1e12 and differ by 1/3 = f(x2) - f(x3): with 1/4 held
    # exactly every atom is decided; with 1/3 the inputs are rounded and declared.
    big = Fraction(10**12) + frac
    m = ExactModel([[big, 0], [10**12, 0], [frac, 0], [0, 0]], [[0, 0], [1, 0], [0, 1]])
    inst = instance("large rows", m, (0, 1), (2, 3), 1)
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert ex.atoms["raw_parallel"].holds and not ex.atoms["same_conditionals"].holds
    # Rounded (about 2e-4 on a difference of 1/3), the equations between the
    # differences cannot be certified at the size of the values they compare, raw
    # or on the log-odds rows; that the differences are not zero is still decided.
    rounded = frac.denominator == 3
    equations = ("raw_parallel", "parallel_M", "proportional_rows")
    assert all(fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms if not (rounded and k in equations))
    assert not rounded or all(fl.atoms[k].undecided for k in equations)
    assert all(not o.decision.fails if rounded else o.decision.holds
               for _, o in RECORD.check_steps(inst, "float") if o.applicable)


@given(st.sampled_from(planting.KINDS), st.integers(0, 2**32))
def test_dual_planted(kind, seed):
    pp = planting.planted_pair(random.Random(seed), kind, side="contexts")
    m, x12, x34 = pp.model, pp.ab, pp.ce
    a, b = parallel_contexts(m, x12, x34, lam=pp.lam), proportional_log_odds_rows(m, x12, x34, lam=pp.lam)
    assert a.decision.truth is b.decision.truth
    ea, eb = parallel_contexts(m, x12, x34), proportional_log_odds_rows(m, x12, x34)
    assert (ea.decision.truth, ea.lam, ea.unique) == (eb.decision.truth, eb.lam, eb.unique)
    assert ea.degenerate.truth is eb.degenerate.truth
    if kind in ("raw parallel", "parallel after projection only", "lambda = 0"):
        assert a.holds
    if kind == "parallel after projection only":
        assert not parallel_contexts(m, x12, x34, "raw", pp.lam).holds
    fm = m.to_float()
    for space in ("M", "raw"):
        e, f = parallel_contexts(m, x12, x34, space, pp.lam), parallel_contexts(fm, x12, x34, space, pp.lam)
        assert f.decision.undecided or f.decision.truth is e.decision.truth


@pytest.mark.parametrize("edge", RECORD.edges, ids=lambda e: e.name)
def test_edges(edge):
    inst = edge.build(random.Random(0))
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert {k: ex.atoms[k].holds for k in edge.expect} == dict(edge.expect)
    assert all(fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms)
    assert ex.statement is Truth.HOLDS
    assert all(o.decision.holds for _, o in RECORD.check_steps(inst) if o.applicable)


def test_runner_nonvacuous():
    r = run(["lem8ctx"], trials=18, seed=4)["results"][0]
    assert r["verdict"] == "pass" and r["contradictions"] == 0
    assert r["sides"]["holds"] > 0 and r["sides"]["fails"] > 0


def test_a_hidden_coordinate_sets_no_scale_for_zero_differences():
    """``f`` carries ``2^985`` in a coordinate no token reads (and others
    beside it), ``g`` a subnormal and ``-51683`` in coordinates no context
    uses: the log-odds rows of contexts 4, 3 and 0 are equal, so
    ``0 = 2 * 0`` holds exactly in ``M`` and on the rows. Scaled by that
    coordinate, the ordinary entries split by ``λ = 2`` came near underflow,
    and what that could lose left the exact zeros uncertain."""
    s = Fraction(2) ** -1074
    F = [[5, 0, 0, 0, 0, 0], [0, 0, 3, 0, 0, 2 ** 966], [-1, 0, 0, 0, 2 ** 935, 2 ** 923],
         [1, 0, -2, 0, 2 ** 985, 0], [3, 0, -1, 0, -390271, 0]]
    G = [[4, s, -5, -51683, 0, 0], [3, s, -3, 0, 0, 0]]
    m = ExactModel(F, G)
    inst = instance("hidden", m, (4, 3), (0, 3), 2)
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert ex.atoms["parallel_M"].holds and ex.atoms["proportional_rows"].holds
    assert all(fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms)


def test_a_subnormal_ratio_does_not_make_zero_a_multiple_in_scaled_units():
    """``u = 0`` and ``v = (0, 4)`` (log-odds rows), ``λ = 2^-1074``: not
    parallel. The rows span ``2^-1060`` to ``2^955``, so the forms keep the
    features unscaled and report values in units of ``2^1006``; what the split
    of ``λ x`` lost (the smallest subnormal per coordinate) underflowed on the
    way to those units, and ``0 = λ v`` was held as an exact zero."""
    hexes = [['-0x1.4p-44', '0x1.0p-47', '0x1.4p-45', '-0x1.8p-45'], ['-0x1.8p-45', '0x1.8p-46', '0x1.8p-46', '-0x1.8p-45'],
             ['-0x1.0p-45', '0x1.0p-46', '0x1.0p-46', '-0x1.0p-45'], ['-0x1.8p-315', '0x1.8p-316', '0x1.8p-316', '-0x1.8p-315'],
             ['-0x1.0p+955', '0x1.0p+954', '0x1.0p+954', '-0x1.0p+955'],
             ['-0x0.0000050000000p-1022', '0x0.0000008000000p-1022', '0x0.0000028000000p-1022',
              '-0x0.0000030000000p-1022']]
    F = [[Fraction(float.fromhex(v)) for v in row] for row in hexes]
    G = [[-3 * 2 ** 47, -2 ** 48, -3 * 2 ** 47, 2 ** 47], [-2 ** 49, -2 ** 48, -5 * 2 ** 47, -2 ** 47]]
    exact = ExactModel(F, G)
    floats = exact.to_float()
    lam = Fraction(1, 2 ** 1074)
    for call in (lambda m, x: parallel_contexts(m, (0, 1), (1, 2), "M", x),
                 lambda m, x: proportional_log_odds_rows(m, (0, 1), (1, 2), x)):
        want, got = call(exact, lam), call(floats, float(lam))
        assert not want.holds and not got.holds
