"""The counterexamples that ``allornone edges`` finds, pinned as plain
regression tests: one explicit small integer instance per (result, hypothesis)
pair for which dropping the hypothesis breaks the conclusion. Each test checks,
exactly, that every other hypothesis holds, this one fails, and the conclusion
fails."""
import pytest

from allornone.decision import Truth
from allornone.symbolic import ExactModel
from allornone.theorems import get_record
from allornone.theorems.engine.logic import evaluate3
from allornone.theorems.engine.record import Instance


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


# Theorem 14: three hypotheses whose removal breaks the all-or-none conclusion,
# each found by ``allornone edges thm14`` and shrunk (d = 2, two tokens, 8 contexts,
# pairs (x_i, x_{i+4})).
_PAIRS = [(0, 4), (1, 5), (2, 6), (3, 7)]
_TOKENS = [[0, 0], [1, 0]]


def _thm14_instance(F, F_t, gamma):
    pytest.importorskip("allornone.theorems.thm14")
    f = ExactModel(F, _TOKENS)
    f_t = ExactModel(F_t, [[0], [1]])
    return Instance("pinned", (f, f_t), {"pairs": _PAIRS, "gamma": gamma, "probe": (1, 0), "tokens": ((1, 0),)})


def test_thm14_needs_gamma_q_in_M():
    # Appendix D.1: the hidden second coordinate of f(s) is copied into the identified
    # first coordinate of f(s+q); the twin forgets the hidden coordinate, so its f~(s)
    # are all 0 while the readouts are 0, 1, -1, 2: no W~, b~ fit.
    F = [[0, 0], [0, 1], [0, -1], [0, 2], [0, 0], [1, 0], [-1, 0], [2, 0]]
    F_t = [[0], [0], [0], [0], [0], [1], [-1], [2]]
    _check_drop("thm14", "Γ_q ⊆ M", _thm14_instance(F, F_t, [[1], [0]]))


def test_thm14_needs_gamma_in_N():
    # Γ = R^2 holds the hidden direction e2 of f (outside N = span(e1)): the readouts of f
    # along it (0 except x7) are no affine function of f(s). The twin's readout is
    # Γ~ = (B*|Ñ)^{-1}(Γ ∩ N) = Ñ, not {0}: on it the twin is relationally linear
    # (readouts 1, 3, 5, -1 are 2 f~(s) + 1), so the failure is not vacuous.
    F = [[0, 0], [1, 0], [2, 0], [-1, 0], [1, 0], [3, 0], [5, 0], [-1, 1]]
    F_t = [[0], [1], [2], [-1], [1], [3], [5], [-1]]
    inst = _thm14_instance(F, F_t, [[1, 0], [0, 1]])
    _check_drop("thm14", "Γ ⊆ N", inst)
    ev = get_record("thm14").evaluate(inst, "exact")
    assert ev.atoms["readouts_seen"].holds and ev.atoms["rel_lin~"].holds
    # the token readout Γ_T = N needs no Γ ⊆ N: that part of the conclusion holds
    assert ev.atoms["rel_lin_T"].holds and ev.atoms["rel_lin_T~"].holds


def test_thm14_token_readouts_need_gamma_q_in_M():
    # The D.1 instance above with the readout named by tokens, T = {(1, 0)}: each model's
    # own Γ_T = span P_N(g(1) - g(0)) is N (resp. Ñ), not {0}; f fits reading anything,
    # not reading M, and the twin does not fit at all.
    F = [[0, 0], [0, 1], [0, -1], [0, 2], [0, 0], [1, 0], [-1, 0], [2, 0]]
    F_t = [[0], [0], [0], [0], [0], [1], [-1], [2]]
    inst = _thm14_instance(F, F_t, [[1], [0]])
    _check_drop("thm14", "Γ_q ⊆ M", inst)
    ev = get_record("thm14").evaluate(inst, "exact")
    assert ev.atoms["readouts_seen"].holds
    assert ev.atoms["rel_lin_T"].holds and not ev.atoms["rel_lin_T_M"].holds and ev.atoms["rel_lin_T~"].fails


def test_thm14_needs_same_distribution():
    # f is relationally linear on Γ = N = span(e1): its readouts 1, 3, 5, -1 are
    # 2 f(s) + 1; the twin has other log-odds, f~(s) = 0 on S and readouts 0, 0, 0, -1,
    # so no affine map fits there.
    F = [[0, 0], [1, 0], [2, 0], [-1, 0], [1, 0], [3, 0], [5, 0], [-1, 0]]
    F_t = [[0], [0], [0], [0], [0], [0], [0], [-1]]
    _check_drop("thm14", "same distribution", _thm14_instance(F, F_t, [[1], [0]]))


# Linear steering (an addition of this project): the two counterexamples that
# ``allornone edges steering`` finds and shrinks (d = 2, two tokens, the pairs above).

def _steering_instance(F, F_t, gamma):
    f = ExactModel(F, _TOKENS)
    f_t = ExactModel(F_t, [[0], [1]])
    return Instance("pinned", (f, f_t), {"pairs": _PAIRS, "gamma": gamma, "tokens": ((1, 0),)})


def test_steering_needs_gamma_in_N():
    # f(s+q) = f(s) + e1 on the identified coordinate, but the hidden one moves only at x7:
    # Γ = R^2 is not translated; the twin, on Γ~ = Ñ (not {0}), is.
    F = [[0, 0], [1, 0], [2, 0], [-1, 0], [1, 0], [2, 0], [3, 0], [0, 1]]
    F_t = [[0], [1], [2], [-1], [1], [2], [3], [0]]
    inst = _steering_instance(F, F_t, [[1, 0], [0, 1]])
    _check_drop("steering", "Γ ⊆ N", inst)
    assert get_record("steering").evaluate(inst, "exact").atoms["steered~"].holds


def test_steering_needs_same_distribution():
    # f is translated by 1 along N; the twin has other log-odds (f~(x6) = 1, the rest 0): not translated.
    F = [[0, 0], [1, 0], [2, 0], [-1, 0], [1, 0], [2, 0], [3, 0], [0, 0]]
    F_t = [[0], [0], [0], [0], [0], [0], [1], [0]]
    _check_drop("steering", "same distribution", _steering_instance(F, F_t, [[1], [0]]))
