"""The dual of Lemma 8 for contexts (an addition of this project)."""
import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.decision import Truth
from allornone.errors import InputFormatError, ShapeError
from allornone.symbolic import ExactModel
from allornone.symbolic import parallel as planting
from allornone.theorems import get_record, records
from allornone.theorems.lem8ctx import RECORD, parallel_contexts, proportional_log_odds_rows
from allornone.theorems.runner import run

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


def test_bad_input():
    with pytest.raises(ShapeError, match="context index 5 is out of range"):
        parallel_contexts(HIDDEN, (0, 5), (1, 2))
    with pytest.raises(ShapeError):
        proportional_log_odds_rows(HIDDEN, 0, (1, 2))
    with pytest.raises(InputFormatError):
        parallel_contexts(HIDDEN, (0, 2), (1, 2), space="N")


@given(st.sampled_from(planting.KINDS), st.integers(0, 2**32))
def test_dual_planted(kind, seed):
    pp = planting.planted_pair(random.Random(seed), kind, side="contexts")
    m, x12, x34 = pp.model, pp.ab, pp.ce
    a, b = parallel_contexts(m, x12, x34, lam=pp.lam), proportional_log_odds_rows(m, x12, x34, lam=pp.lam)
    assert a.decision.truth is b.decision.truth
    ea, eb = parallel_contexts(m, x12, x34), proportional_log_odds_rows(m, x12, x34)
    assert (ea.verdict, ea.lam, ea.unique) == (eb.verdict, eb.lam, eb.unique)
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
