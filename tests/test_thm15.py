"""Theorem 15: parallelism in N is shared by models with the same distribution."""
import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allornone.decision import Truth
from allornone.errors import (AllOrNoneError, NonRationalValueError, RealisationMismatchError, ShapeError,
                              VocabularyError, VocabularyMismatchError)
from allornone.symbolic import ExactModel
from allornone.symbolic import generators as gen
from allornone.symbolic import parallel as planting
from allornone.theorems import get_record
from allornone.theorems.lem8 import parallel
from allornone.theorems.engine.runner import run
from allornone.theorems.thm15 import RECORD, shared_parallelism

LINE = ExactModel([[1], [2]], [[0], [1], [2], [3]])


def test_registered():
    assert get_record("thm15") is RECORD
    assert [h.name for h in RECORD.hypotheses] == ["same distribution"]


def test_raw_not_shared_values():
    twin = gen.b5_twin(LINE, a=0, b=1, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0], psi=lambda y, g, b: [int(y == 3)])
    r = shared_parallelism(LINE, twin, (3, 2), (1, 0))
    assert r == {"same distribution": "holds", "N": "parallel", "lambda": Fraction(1), "N~": "parallel",
                 "lambda~": Fraction(1), "raw": "parallel", "raw~": "not parallel"}
    fr = shared_parallelism(LINE.to_float(), twin.to_float(), (3, 2), (1, 0))
    assert (fr["N~"], fr["raw~"]) == ("parallel", "not parallel") and abs(fr["lambda~"] - 1) < 1e-12


TWIN = gen.b5_twin(LINE, a=0, b=1, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0], psi=lambda y, g, b: [int(y == 3)])

BAD_INPUT = [
    (lambda: shared_parallelism(LINE, ExactModel([[1], [2]], [[0], [1], [2]]), (2, 1), (1, 0)),
     VocabularyMismatchError, "vocabularies differ"),
    (lambda: shared_parallelism(LINE, TWIN.to_float(), (3, 2), (1, 0)), RealisationMismatchError,
     "exact model with a float model"),
    (lambda: shared_parallelism(LINE.to_float(), TWIN, (3, 2), (1, 0)), RealisationMismatchError, "exact"),
    (lambda: RECORD.decide((LINE, TWIN.to_float()), {"ab": (3, 2), "ce": (1, 0), "lam": 1}),
     RealisationMismatchError, "exact"),
    (lambda: shared_parallelism(LINE, TWIN, (3, 2), (1, 0), lam=1.0), NonRationalValueError, "lambda: 1.0"),
    (lambda: shared_parallelism(LINE, TWIN, (3, 4), (1, 0)), VocabularyError, "token index 4 is out of range"),
    (lambda: shared_parallelism(LINE, TWIN, (3, 2), 1), ShapeError, "expected a pair"),
]


@pytest.mark.parametrize("call, exc, message", BAD_INPUT)
def test_bad_input(call, exc, message):
    assert issubclass(exc, AllOrNoneError)
    with pytest.raises(exc, match=message):
        call()


def _step(label, inst):
    return next(o for s, o in RECORD.check_steps(inst) if s.label == label)


def test_diversity_step():
    edges = {e.name: e.build(random.Random(0)) for e in RECORD.edges}
    o = _step("diversity", edges["diversity: raw parallelism shared"])
    assert o.applicable and o.decision.holds and o.values["raw"] == o.values["raw~"] == "parallel"
    assert not _step("diversity", edges["raw parallelism not shared"]).applicable
    assert not _step("diversity", edges["drop same distribution"]).applicable


def _shared(model, twin, ab, ce, lam):
    for m, t in ((model, twin), (model.to_float(), twin.to_float())):
        a, b = parallel(m, ab, ce, lam=lam), parallel(t, ab, ce, lam=lam)
        if m.exact or not (a.decision.undecided or b.decision.undecided):
            assert a.decision.truth is b.decision.truth
        ea, eb = parallel(m, ab, ce), parallel(t, ab, ce)
        if m.exact:
            assert (ea.verdict, ea.lam, ea.unique) == (eb.verdict, eb.lam, eb.unique)


def _b5(model, rng):
    k = model.effective_complexity()
    a = rng.randint(0, 2)
    return gen.b5_twin(model, rng, a=a, b=rng.randint(0 if k + a else 1, 2))


@given(st.sampled_from(planting.KINDS), st.integers(0, 2**32), st.booleans())
def test_theorem15_b5_and_basis(kind, seed, b5):
    rng = random.Random(seed)
    pp = planting.planted_pair(rng, kind)
    twin = _b5(pp.model, rng) if b5 else gen.change_of_basis(pp.model, rng=rng)
    assert twin.log_odds() == pp.model.log_odds()
    _shared(pp.model, twin, pp.ab, pp.ce, pp.lam)
    if kind in ("raw parallel", "parallel after projection only", "lambda = 0"):
        assert parallel(twin, pp.ab, pp.ce, lam=pp.lam).holds


@pytest.mark.parametrize("edge", RECORD.edges, ids=lambda e: e.name)
def test_edges(edge):
    inst = edge.build(random.Random(0))
    ex, fl = RECORD.evaluate(inst, "exact"), RECORD.evaluate(inst, "float")
    assert {k: ex.atoms[k].holds for k in edge.expect} == dict(edge.expect)
    assert all(fl.atoms[k].undecided or fl.atoms[k].truth is ex.atoms[k].truth for k in ex.atoms)
    if edge.kind == "drop":
        assert ex.hypotheses is Truth.FAILS and ex.conclusion is Truth.FAILS
    else:
        assert ex.hypotheses is Truth.HOLDS and ex.conclusion is Truth.HOLDS
    assert all(o.decision.holds for _, o in RECORD.check_steps(inst) if o.applicable)


def test_runner_nonvacuous():
    rep = run(["thm15"], trials=16, seed=2)
    r = rep["results"][0]
    assert r["verdict"] == "pass" and r["contradictions"] == 0 and r["steps_failed"] == 0
    assert r["hypotheses_held"] == 15  # one kind in ten (instance 7 here) is a non-equivalent pair
    assert r["sides"]["holds"] > 0 and r["sides"]["fails"] > 0


def test_sampler_exercises_the_diversity_step_on_both_sides():
    """Among 20 consecutive samples, the diversity step applies (both models
    diverse, L = L~) with raw parallelism holding in both and failing in both."""
    import random

    seen = set()
    for i in range(20):
        inst = RECORD.sample(random.Random(i), i)
        outcome = next(o for s, o in RECORD.check_steps(inst) if s.label == "diversity")
        if outcome.applicable:
            assert outcome.decision.holds
            ev = RECORD.evaluate(inst, "exact")
            seen.add((ev.atoms["raw_parallel"].holds, ev.atoms["raw_parallel~"].holds))
    assert seen == {(True, True), (False, False)}
