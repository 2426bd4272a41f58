"""The counterexamples that ``allornone edges`` finds, pinned as plain
regression tests: one explicit small integer instance per (result, hypothesis)
pair for which dropping the hypothesis breaks the conclusion. Each test checks,
exactly, that every other hypothesis holds, this one fails, and the conclusion
fails."""
import importlib

import pytest

from allornone.decision import Truth
from allornone.symbolic import ExactModel
from allornone.theorems import get_record
from allornone.theorems.logic import evaluate3
from allornone.theorems.record import Instance


def _check_drop(rid: str, hypothesis: str, inst: Instance) -> None:
    rec = get_record(rid)
    ev = rec.evaluate(inst, "exact")
    truth = {rec.atoms[n]: d.truth for n, d in ev.atoms.items() if n in rec.atoms}
    for h in rec.hypotheses:
        expected = Truth.FAILS if h.name == hypothesis else Truth.HOLDS
        assert evaluate3(h.atom, truth) is expected, h.name
    assert ev.conclusion is Truth.FAILS


def test_cor6_needs_diversity():
    # d = d~ = 1 and L = L~ = 0, but g_0(y1) = 0 for f and 1 for f~: no invertible A
    # maps one to the other (f = 0 and G_0 = 0 are not diverse).
    f = ExactModel([[0]], [[0], [0]])
    f_t = ExactModel([[0]], [[0], [1]])
    _check_drop("cor6", "diversity", Instance("pinned", (f, f_t)))


def test_thm15_needs_same_distribution():
    pytest.importorskip("allornone.theorems.thm15")
    from fractions import Fraction

    # f has all logits equal, so P_N = 0 and every pair is parallel in N; f~ is not
    # equivalent to f and g~(3) - g~(2) = 1 is not 2 (g~(1) - g~(0)) = 0.
    f = ExactModel([[0]], [[0], [0], [0], [0]])
    f_t = ExactModel([[1]], [[0], [0], [0], [1]])
    inst = Instance("pinned", (f, f_t), {"ab": (3, 2), "ce": (1, 0), "lam": Fraction(2)})
    _check_drop("thm15", "same distribution", inst)
