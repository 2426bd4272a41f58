"""Every proof step and every fact can fail, and so can the runner's verdict:
``check``'s self-test (:mod:`allornone.theorems.engine.selftest`) gives each of them an
instance built to break it. Here each case runs on its own, and the self-test is
shown to notice when a check stops being able to fail."""
import dataclasses

import pytest

from allornone.decision import Decision, Truth
from allornone.theorems import get_record, records
from allornone.theorems.engine import selftest as st
from allornone.theorems.constructions import CONSTRUCTIONS
from allornone.theorems.facts import FACTS
from allornone.theorems.engine.record import StepOutcome


@pytest.mark.parametrize("sid, label, index, breaker", st.STEP_CASES,
                         ids=[f"{c[0]}:{c[1]}:{c[3]}" for c in st.STEP_CASES])
def test_step_fails_on_a_broken_instance(sid, label, index, breaker):
    before, after = st.check_step_case(sid, label, index, breaker)
    assert not before.applicable or before.decision.holds, before
    assert not isinstance(after, str), after
    assert after.applicable, after.values
    assert after.decision.fails, (after.decision, after.values)


def test_every_step_has_a_breaking_case():
    covered = {(sid, label) for sid, label, _, _ in st.STEP_CASES}
    subjects = {**records(), **CONSTRUCTIONS}
    every = {(sid, s.label) for sid, subject in subjects.items() for s in subject.steps}
    assert every == covered, (every - covered, covered - every)


def test_every_fact_has_a_breaking_case():
    assert {case[0] for case in st.FACT_CASES} == set(FACTS)


def test_breakers_restore_what_they_replace():
    from allornone.theorems import thm5

    original = thm5.same_distribution, thm5.canonical_certificate, thm5.el_certificate
    for case in st.STEP_CASES:
        st.check_step_case(*case)
    assert (thm5.same_distribution, thm5.canonical_certificate, thm5.el_certificate) == original


def test_the_self_test_passes():
    out = st.run_self_test()
    assert out["passed"], out
    assert out["steps"]["checked"] == len(st.STEP_CASES)
    assert out["facts"]["checked"] == len(st.FACT_CASES)
    assert out["runner"]["checked"] == len(st.RUNNER_CANARIES) + 1


def test_the_self_test_notices_a_step_that_cannot_fail(monkeypatch):
    rec = get_record("thm5")
    i = [s.label for s in rec.steps].index("<=")
    always = dataclasses.replace(rec.steps[i], check=lambda models, params: StepOutcome(Decision.exact(True)))
    monkeypatch.setattr(rec, "steps", (*rec.steps[:i], always, *rec.steps[i + 1:]))
    out = st.run_self_test(only_steps=[("thm5", "<=")])
    cases = [c for c in st.STEP_CASES if c[:2] == ("thm5", "<=")]
    assert not out["passed"] and len(out["steps"]["missed"]) == len(cases) == 2
    assert all(line.startswith("thm5 step '<=' on instance") and line.endswith(": holds")
               for line in out["steps"]["missed"])


def test_the_self_test_notices_a_fact_that_cannot_fail(monkeypatch):
    monkeypatch.setitem(FACTS, "F3", lambda model: Decision.exact(True))
    out = st.run_self_test()
    assert not out["passed"] and out["facts"]["missed"] == ["F3: holds with P_M onto span(e2)"]


def test_the_self_test_notices_a_runner_that_ignores_failed_steps(monkeypatch):
    from allornone.theorems.engine import runner

    real = runner.ResultSummary.verdict
    monkeypatch.setattr(runner.ResultSummary, "verdict", property(
        lambda self: "pass" if self.steps_failed and self.statement_failed == 0 else real.fget(self)))
    out = st.run_self_test()
    assert not out["passed"] and out["runner"]["missed"] == ["a proof step fails: the runner says pass"]


def test_the_self_test_notices_F2_checked_on_the_wrong_basis(monkeypatch):
    # P_N injective on N instead of on M: the same on every model with M = N
    from allornone.theorems import facts

    def weak_f2(model):
        be, s = model.backend, model.structure
        return Decision.all([be.rank_equals(s.P_N @ s.basis_N, s.k), be.rank_equals(s.P_M @ s.basis_N, s.k)])

    monkeypatch.setitem(FACTS, "F2", weak_f2)
    out = st.run_self_test()
    assert out["facts"]["missed"] == ["F2: holds with P_N onto e2: orthogonal to M, not to N (M != N)"]


def test_the_self_test_notices_a_float_layer_without_an_undecided_band(monkeypatch):
    from allornone.theorems import thm5

    real = thm5.same_distribution

    def no_band(a, b):
        d = real(a, b)
        return Decision(Truth.FAILS, d.residual, d.tolerance) if d.undecided else d

    monkeypatch.setattr(thm5, "same_distribution", no_band)
    missed = st.float_band_controls()
    assert len(missed) == 1 and missed[0].startswith("log-odds differences") and "undecided" not in missed[0]


def test_the_self_test_notices_residual_tests_without_an_undecided_band(monkeypatch):
    from allornone.numeric import linalg as fl

    real = fl.Tolerance.certain

    def no_band(self, residual, scale, extra=0.0, underflow=True, **detail):
        d = real(self, residual, scale, extra, underflow, **detail)
        return Decision(Truth.FAILS, d.residual, d.tolerance) if d.undecided else d

    monkeypatch.setattr(fl.Tolerance, "certain", no_band)
    missed = st.float_band_controls()
    assert any(line.startswith("residuals from 1e-18 to 1e-4") for line in missed), missed


def test_the_self_test_notices_a_solve_that_cuts_where_numpy_does(monkeypatch):
    import numpy as np

    from allornone.numeric import linalg as fl

    monkeypatch.setattr(fl, "pinv", lambda X, rank=None, tol=fl.DEFAULT_TOLERANCE: np.linalg.pinv(X))
    missed = st.float_band_controls()
    assert len(missed) == 1 and missed[0].startswith("a solve at rank 3 is thrown off"), missed
