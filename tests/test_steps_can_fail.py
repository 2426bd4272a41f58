"""Every proof step of every result and construction can fail: on an instance
built to break its claim (a wrong structure, data that no longer match their
structure, a wrong ratio, a certificate or a distribution test that lies; see
``breakers.py``) the step is applicable and fails, while on the same unbroken
instance it holds. A step that held on everything would check nothing."""
import pytest

from breakers import BREAKERS
from allornone.theorems import get_record, records
from allornone.theorems.constructions import CONSTRUCTIONS
from allornone.theorems.runner import instance_rng

#: (subject, step, instance index, breaker): instance ``index`` of the subject's
#: sampler (seed 0; for a construction, ``build(index)``) broken by ``breaker``.
CASES = [
    ('thm5', 'F4', 2, 'P_M := 0 (model 1)'),
    ('thm5', '<=', 2, 'P_M := 0 (model 1)'),
    ('thm5', 'kernels', 0, 'P_M := P_F (model 0)'),
    ('thm5', 'EL1', 0, 'P_M := P_F (model 0)'),
    ('thm5', 'EL2', 4, 'P_N := P_G (model 0)'),
    ('thm5', 'EL3', 2, 'L = L~ always'),
    ('thm5', 'k', 0, 'k + 1 (model 0)'),
    ('cor6', 'k = d', 0, 'k + 1 (model 0)'),
    ('cor6', 'M = N = R^d', 0, 'P_M := 0 (model 0)'),
    ('cor6', 'A* invertible', 0, 'P_M := 0 (model 0)'),
    ('cor6', 'A identifies', 4, "Corollary 6's A transposed"),
    ('lem8', 'log-odds', 0, 'G changed, structure kept (model 0)'),
    ('lem8', 'F4', 0, 'P_M := 0 (model 0)'),
    ('lem8', 'reduce', 4, 'P_M := 0 (model 0)'),
    ('lem8', 'injective', 1, 'P_N := P_G (model 0)'),
    ('lem8', 'ratio', 0, 'lambda search reports 1/lambda'),
    ('lem8', 'degenerate', 3, 'P_N := P_G (model 0)'),
    ('lem8', 'raw => N', 0, 'parallel in N/M asks about -lambda'),
    ('lem8ctx', 'rows', 1, 'F changed, structure kept (model 0)'),
    ('lem8ctx', 'F4 (dual)', 0, 'P_M := 0 (model 0)'),
    ('lem8ctx', 'injective', 1, 'P_M := P_F (model 0)'),
    ('lem8ctx', 'ratio', 0, 'lambda search reports 1/lambda'),
    ('lem8ctx', 'degenerate', 3, 'P_M := P_F (model 0)'),
    ('thm15', 'Lemma 8 (f)', 1, 'P_N := P_G (model 0)'),
    ('thm15', 'L = L~', 7, 'L = L~ always'),
    ('thm15', 'Lemma 8 (f~)', 0, 'P_N := P_G (model 1)'),
    ('thm15', 'via B*', 1, 'P_N := P_G (model 0)'),
    ('thm15', 'same ratio', 0, 'lambda search reports 1/lambda'),
    ('thm15', 'diversity', 0, 'diversity always'),
    ('thm14', 'certificate', 0, 'certificate lies (A* doubled)'),
    ('thm14', 'readout transport', 0, 'certificate lies (B* doubled)'),
    ('thm14', 'Γ~', 0, 'Γ~ := 0'),
    ('thm14', 'input transport', 0, 'certificate lies (A* doubled)'),
    ('thm14', '=>', 0, 'certificate lies (A* doubled)'),
    ('thm14', '<=', 0, 'certificate lies (A* doubled)'),
    ('thm14', 'all or none (reading M)', 3, 'Γ~ := 0'),
    ('thm14', 'probing', 0, 'certificate lies (A* doubled)'),
    ('thm14', 'linear subspace', 0, 'Γ~ := 0'),
    ('b5', 'bases', 0, 'P_M := 0 (model 0)'),
    ('b5', 'C', 0, 'P_M := 0 (model 0)'),
    ('b5', 'same log-odds', 0, 'F changed, structure kept (model 0)'),
    ('b5', 'equivalent', 5, 'P_M := P_F (model 0)'),
    ('b5', 'dimensions', 0, 'k + 1 (model 0)'),
    ('d1', 'structure', 0, 'P_M := P_F (model 0)'),
    ('d1', 'linear', 0, 'pairs re-paired'),
    ('d1', 'only off M', 0, 'P_M := P_F (model 0)'),
    ('d1', 'same distribution', 0, 'F changed, structure kept (model 0)'),
    ('d1', 'twin fails', 0, 'P_N := 0 (model 1)'),
]


def _subject(sid):
    return CONSTRUCTIONS[sid] if sid in CONSTRUCTIONS else get_record(sid)


def _instance(sid, index):
    if sid in CONSTRUCTIONS:
        return CONSTRUCTIONS[sid].build(index)
    return get_record(sid).sample(instance_rng(0, sid, index), index)


def _step(subject, label):
    (step,) = [s for s in subject.steps if s.label == label]
    return step


@pytest.mark.parametrize("sid, label, index, breaker", CASES, ids=[f"{c[0]}:{c[1]}:{c[3]}" for c in CASES])
def test_step_fails_on_a_broken_instance(monkeypatch, sid, label, index, breaker):
    subject, inst = _subject(sid), _instance(sid, index)
    step = _step(subject, label)
    before = step.check(inst.realise("exact"), inst.params)
    assert not before.applicable or before.decision.holds, before
    with BREAKERS[breaker](inst, monkeypatch) as broken:
        out = step.check(broken.realise("exact"), broken.params)
    assert out.applicable, out.values
    assert out.decision.fails, (out.decision, out.values)


def test_every_step_has_a_breaking_case():
    covered = {(sid, label) for sid, label, _, _ in CASES}
    subjects = {**records(), **CONSTRUCTIONS}
    every = {(sid, s.label) for sid, subject in subjects.items() for s in subject.steps}
    assert every == covered, (every - covered, covered - every)
