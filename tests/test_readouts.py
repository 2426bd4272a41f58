"""Readouts named by tokens (``Γ_T``) and the log-odds criterion for relational
linearity reading ``M``: agreement with the representation-level decision, on
both realisations, in each model of an equivalence class."""
import random

import numpy as np
import pytest

from allornone import errors
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.symbolic import relational as rel
from allornone.theorems import readouts, thm14
from allornone.theorems.readouts import log_odds_criterion, token_readout, tokens
from allornone.theorems.thm14 import relational_linearity


def _all_vs_pivot(model):
    return tokens([(y, model.pivot) for y in range(model.n) if y != model.pivot])


@pytest.mark.parametrize("i", range(16))
def test_criterion_agrees_with_the_representation_in_every_model(i):
    rng = random.Random(i)
    reading = ("M", "none", "hidden")[i % 3]
    inst = rel.plant(rng, k=rng.randint(1, 2), hidden=rng.randint(1 if reading == "hidden" else 0, 2),
                     token_hidden=rng.randint(0, 1), reading=reading)
    T = tokens([inst.probe]) if inst.probe and i % 2 else _all_vs_pivot(inst.model)
    twin = gen.b5_twin(inst.model, rng, a=rng.randint(0, 2), b=rng.randint(0, 1))
    crit = log_odds_criterion(inst.model, inst.pairs, T)
    assert log_odds_criterion(inst.model.log_odds(), inst.pairs, T).verdict == crit.verdict
    for m in (inst.model, twin):
        assert relational_linearity(m, inst.pairs, T, "M").verdict == crit.verdict
        assert log_odds_criterion(m, inst.pairs, T).verdict == crit.verdict
    # floats may be undecided (an undecided rank), never the other answer
    for m in (inst.model.to_float(), twin.to_float()):
        assert relational_linearity(m, inst.pairs, T, "M").verdict in (crit.verdict, "undecided")
        assert log_odds_criterion(m, inst.pairs, T).verdict in (crit.verdict, "undecided")


def test_the_sampled_verdicts_cover_both_answers():
    verdicts = set()
    for i in range(6):
        rng = random.Random(i)
        inst = rel.plant(rng, k=2, hidden=1, reading=("M", "none")[i % 2])
        verdicts.add(log_odds_criterion(inst.model, inst.pairs, _all_vs_pivot(inst.model)).verdict)
    assert verdicts == {"relationally linear", "not relationally linear"}


def test_reading_anything_is_not_decided_by_L():
    """Appendix D.1 with T = {(1, 0)}: f fits reading anything, the criterion (and
    reading M) say no, and the twin with the same L does not fit at all -- the
    criterion answers the reading-M question only."""
    ex = rel.d1_example()
    twin = rel.d1_twin(ex.model)
    T = tokens([(1, 0)])
    crit = log_odds_criterion(ex.model, ex.pairs, T)
    assert crit.verdict == "not relationally linear"
    assert relational_linearity(ex.model, ex.pairs, T, "any").holds
    assert not relational_linearity(twin, ex.pairs, T, "any").holds
    assert not relational_linearity(ex.model, ex.pairs, T, "M").holds


def test_token_readout_lies_in_N_and_reads_log_odds():
    # a hidden token coordinate (e_2 is in SG but orthogonal to every f): the raw
    # difference g(3) - g(0) leaves N = span(e_0, e_1), its projection does not
    model = ExactModel([[1, 0, 0], [0, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 1]])
    GT = token_readout(model, [(3, 0), (1, 0)])
    assert GT.to_fractions() == [["0", "1"], ["1", "0"], ["0", "0"]]
    assert model.F @ GT == readouts.readout_log_odds(model, [(3, 0), (1, 0)])
    raw = model.unembedding_difference(3, 0)
    assert model.projector_N @ raw != raw


def test_token_step_fails_on_readouts_outside_N(monkeypatch):
    """The proof step "token readouts are log-odds" checks Γ_T ⊆ N: fed raw
    differences g(a) - g(b) (not projected) on a model with a hidden token
    coordinate, it fails."""
    model = ExactModel([[1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 1]])
    inst = thm14.record._inst("hidden token", model, gen.change_of_basis(model, rng=1), [(0, 2), (1, 3)], [[1], [0], [0]],
                       toks=[(3, 0)])
    step = next(s for s in thm14.RECORD.steps if s.label == "token readouts are log-odds")
    assert step.check(inst.models, inst.params).decision.holds
    monkeypatch.setattr(readouts, "token_readout",
                        lambda m, T: m.backend.hstack(*[m.unembedding_difference(a, b) for a, b in tokens(T)]))
    thm14.record._CACHE.clear()
    fresh = thm14.record._inst("hidden token", model, gen.change_of_basis(model, rng=1), [(0, 2), (1, 3)],
                        [[1], [0], [0]], toks=[(3, 0)])
    assert step.check(fresh.models, fresh.params).decision.fails


def test_criterion_step_detects_a_disagreement(monkeypatch):
    """The proof step "criterion (f)" compares the log-odds criterion with the
    representation-level verdict: with the criterion replaced by reading
    anything, the D.1 instance makes it fail."""
    ex = rel.d1_example()
    inst = thm14.record._inst("D.1", ex.model, rel.d1_twin(ex.model), ex.pairs, ex.gamma, ex.probe)
    step = next(s for s in thm14.RECORD.steps if s.label == "criterion (f)")
    assert step.check(inst.models, inst.params).decision.holds
    monkeypatch.setattr(thm14, "log_odds_criterion",
                        lambda m, pairs, T: relational_linearity(m, pairs, T, "any"))
    fresh = thm14.record._inst("D.1", ex.model, rel.d1_twin(ex.model), ex.pairs, ex.gamma, ex.probe)
    assert step.check(fresh.models, fresh.params).decision.fails


def test_token_all_or_none_needs_reading_M():
    """"all or none (tokens)" holds reading M on D.1; the same comparison reading
    anything fails there (Appendix D.1)."""
    ex = rel.d1_example()
    twin = rel.d1_twin(ex.model)
    T = tokens([(1, 0)])
    assert relational_linearity(ex.model, ex.pairs, T, "M").holds == relational_linearity(twin, ex.pairs, T, "M").holds
    assert relational_linearity(ex.model, ex.pairs, T, "any").holds != \
        relational_linearity(twin, ex.pairs, T, "any").holds


@pytest.mark.parametrize("bad,exc,text", [
    ([], errors.InputFormatError, "no token pairs"),
    ([(1,)], errors.InputFormatError, "pair 0"),
    ([(1, "a")], errors.InputFormatError, "not an integer"),
    ("10", errors.InputFormatError, "list of token pairs"),
])
def test_tokens_rejects_bad_input(bad, exc, text):
    with pytest.raises(exc, match=text):
        tokens(bad)


def test_out_of_range_token_is_a_vocabulary_error():
    model = ExactModel([[1, 0]], [[0, 0], [1, 0]])
    with pytest.raises(errors.VocabularyError, match="out of range for 2 tokens"):
        relational_linearity(model, [(0, 0)], tokens([(2, 0)]))


def test_float_criterion_on_a_float_L():
    inst = rel.plant(random.Random(3), k=2, hidden=1, reading="M")
    L = inst.model.to_float().log_odds()
    assert isinstance(L, np.ndarray)
    T = _all_vs_pivot(inst.model)
    assert log_odds_criterion(L, inst.pairs, T).verdict == log_odds_criterion(inst.model, inst.pairs, T).verdict


def test_readings_of_M_do_not_depend_on_a_pivot_far_from_the_other_tokens():
    """A pivot whose ``g`` is ``2^60`` from the others adds one vector of that
    size to every log-odds column; the regressors ``[L[s, :], 1]`` then differ
    from column to column by units under entries of ``2^61``, and their
    rounding hid the span. The span is the same for every pivot, so the fits
    reading ``M`` take the log-odds against the central token: the verdicts
    are the exact ones, whichever pivot the model was given with."""
    from fractions import Fraction

    from allornone.numeric import FloatModel
    from allornone.symbolic import ExactModel
    from allornone.theorems import thm14

    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(8):
        F = rng.integers(-3, 4, size=(12, 3)).astype(float)
        F[6:12] = F[0:6] + rng.integers(-2, 3, size=3)
        if trial % 2:
            F[11, 0] += 1                                  # no longer relationally linear
        G = rng.integers(-3, 4, size=(6, 3)).astype(float)
        G[5] = np.array([1.0, 3.0, -1.0]) * 2.0 ** 60
        pairs, T = [(i, i + 6) for i in range(6)], [(1, 2), (3, 4)]
        for pivot in (0, 5):
            fm = FloatModel(F, G, pivot)
            em = ExactModel([[Fraction(v) for v in r] for r in F], [[Fraction(v) for v in r] for r in G], pivot)
            want = thm14.relational_linearity(em, pairs, tokens(T), "M").verdict
            seen.add(want)
            assert thm14.relational_linearity(fm, pairs, tokens(T), "M").verdict == want
            assert log_odds_criterion(fm, pairs, T).verdict == log_odds_criterion(em, pairs, T).verdict
            assert thm14.linear_probing(fm, pairs, 1, 2).verdict == thm14.linear_probing(em, pairs, 1, 2).verdict
    assert seen == {"relationally linear", "not relationally linear"}
