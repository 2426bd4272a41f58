"""The runner fails a run for every reason it exists for: a failed proof step, a
sampler that built something other than what it says, a vacuous result, a
declared edge that misbehaves. Each check is shown failing on a run built to
break it, next to the same run passing."""
import dataclasses

import pytest
from click.testing import CliRunner

from allornone.decision import Decision
from allornone.symbolic import generators as gen
from allornone.theorems import get_record, records
from allornone.theorems.engine import runner as rn
from allornone.theorems.engine.cli import main
from allornone.theorems.engine.record import StepOutcome


def _run(ids, trials=4, **kw):
    return rn.run(ids, trials=trials, seed=0, generic_check=False, **kw)


def test_a_clean_run_passes():
    rep = _run(["thm5"])
    r = rep["results"][0]
    assert rep["verdict"] == "pass" and r["verdict"] == "pass"
    assert r["intent_checked"] == 8 and r["intent_failed"] == 0


def test_a_failing_proof_step_fails_the_run(monkeypatch):
    rec = get_record("thm5")
    broken = dataclasses.replace(rec.steps[1], check=lambda models, params: StepOutcome(Decision.exact(False)))
    monkeypatch.setattr(rec, "steps", (rec.steps[0], broken, *rec.steps[2:]))
    rep = _run(["thm5"])
    r = rep["results"][0]
    assert r["steps_failed"] == 4 and r["verdict"] == "fail" and rep["verdict"] == "fail"
    assert r["failures"][0]["steps_failed"] == ["<="]


def test_a_failing_step_makes_check_exit_1(monkeypatch):
    rec = get_record("lem8")
    broken = dataclasses.replace(rec.steps[0], check=lambda models, params: StepOutcome(Decision.exact(False)))
    monkeypatch.setattr(rec, "steps", (broken, *rec.steps[1:]))
    result = CliRunner().invoke(main, ["check", "lem8", "--trials", "6"])
    assert result.exit_code == 1, result.output
    assert "steps failed ['log-odds']" in result.output


def test_a_twin_that_is_not_equivalent_fails_the_run(monkeypatch):
    # a "B.5 twin" generator that silently changes one log-odds entry: the
    # statement still holds on every instance (both sides fail together), so
    # only the sampler's declared intent catches it
    real = gen.b5_twin

    def wrong_twin(model, rng=None, **kw):
        twin = real(model, rng, **kw)
        y = next(j for j in range(model.n) if j != model.pivot)
        return gen.perturb_log_odds(twin, 0, y, 1)

    monkeypatch.setattr(gen, "b5_twin", wrong_twin)
    rep = _run(["thm5"])
    r = rep["results"][0]
    assert r["statement_failed"] == 0
    assert r["intent_failed"] == 1 and r["verdict"] == "fail"
    (f,) = r["failures"]
    assert f["kind"] == "b5 twin" and f["intent_failed"][0].startswith("same_distribution: built to be holds")


def test_a_perturbation_that_changes_nothing_fails_the_run(monkeypatch):
    monkeypatch.setattr(gen, "perturb_log_odds", lambda model, x, y, delta=1: gen.change_of_basis(model, rng=0))
    r = _run(["thm15"], trials=8)["results"][0]
    assert r["intent_failed"] >= 1 and r["verdict"] == "fail"


def test_a_planted_property_that_was_not_planted_fails_the_run(monkeypatch):
    from allornone.symbolic import parallel as planting

    monkeypatch.setattr(planting, "plant_parallel", lambda model, ab, ce, lam, side="tokens": model)
    r = _run(["lem8"], trials=6)["results"][0]
    assert r["intent_failed"] >= 1 and r["verdict"] == "fail"


def test_a_vacuous_result_fails():
    # one instance: a B.5 twin, so only one side of the equivalence is exercised
    rep = _run(["thm5"], trials=1)
    r = rep["results"][0]
    assert not r["nonvacuous"] and r["statement_failed"] == 0
    assert r["verdict"] == "fail" and rep["verdict"] == "fail"
    result = CliRunner().invoke(main, ["check", "thm5", "--trials", "1"])
    assert result.exit_code == 1 and "vacuous" in result.output


@pytest.mark.parametrize("rid", sorted(records()))
def test_every_sampler_states_what_it_built(rid):
    rec = get_record(rid)
    kinds_with_intent = {rec.sample(rn.instance_rng(0, rid, i), i).kind for i in range(12)
                         if rec.sample(rn.instance_rng(0, rid, i), i).expect}
    assert len(kinds_with_intent) >= 3, kinds_with_intent


#: Where a feature cannot occur: Lemma 8 and its dual are about one model;
#: Theorem 14's and the steering record's samplers plant a readout subspace
#: inside N, which k = 0 leaves empty.
NOT_SAMPLED = {("lem8", "d != d~"), ("lem8ctx", "d != d~"), ("thm14", "k = 0"), ("steering", "k = 0")}


@pytest.mark.parametrize("rid", sorted(records()))
def test_samplers_cover_k0_M_not_N_and_different_dimensions(rid):
    rec = get_record(rid)
    seen = set()
    for i in range(32):
        seen.update(rn.coverage(rec.sample(rn.instance_rng(0, rid, i), i).models))
    expected = {f for f in rn.COVERAGE_FEATURES if (rid, f) not in NOT_SAMPLED}
    assert expected <= seen, expected - seen


def test_coverage_is_reported():
    r = _run(["thm15"], trials=8)["results"][0]
    assert set(r["coverage"]) == set(rn.COVERAGE_FEATURES) == set(r["coverage_hypotheses"])
    assert r["coverage"]["d != d~"] >= 1


def test_edges_are_checked_and_can_fail(monkeypatch):
    assert rn.check_edges("thm5")["verdict"] == "pass"
    rec = get_record("thm5")
    bad = dataclasses.replace(rec.edges[0], expect={"same_distribution": False})
    monkeypatch.setattr(rec, "edges", (bad, *rec.edges[1:]))
    out = rn.check_edges("thm5")
    assert out["verdict"] == "fail"
    assert out["edges"][0]["problems"] == ["same_distribution: declared False, is True"]
    rep = _run(["thm5"], edges=True)
    assert rep["verdict"] == "fail" and rep["results"][0]["verdict"] == "pass"


def test_a_boundary_edge_whose_conclusion_fails_is_caught(monkeypatch):
    rec = get_record("thm5")
    # a "boundary case" that is in fact a non-equivalent pair: the conclusion
    # (an equivalence) still holds, so declare an atom value it does not have
    edge = rec.edges[1]
    bad = dataclasses.replace(edge, build=lambda rng: get_record("thm5").sample(rn.instance_rng(0, "thm5", 2), 2))
    monkeypatch.setattr(rec, "edges", (rec.edges[0], bad, *rec.edges[2:]))
    out = rn.check_edges("thm5")["edges"][1]
    assert not out["ok"] and any("declared True, is False" in p for p in out["problems"])


def test_check_edges_option(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["check", "thm5", "--trials", "4", "--edges", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "edge thm5: k = 0 (boundary): as declared" in result.output


def test_a_drop_edge_whose_hypothesis_holds_is_caught(monkeypatch):
    rec = get_record("thm15")
    i = [e.kind for e in rec.edges].index("drop")
    # the "dropped" hypothesis (same distribution) in fact holds: a boundary case in disguise
    bad = dataclasses.replace(rec.edges[i], build=rec.edges[i + 2].build, expect={})
    monkeypatch.setattr(rec, "edges", (*rec.edges[:i], bad, *rec.edges[i + 1:]))
    out = rn.check_edges("thm15")["edges"][i]
    assert out["problems"] == ["the hypothesis 'same distribution' does not fail",
                               "the conclusion does not fail on a dropped hypothesis"]


@pytest.mark.parametrize("model_class", ["ExactModel", "FloatModel"])
def test_log_odds_taken_against_the_wrong_reference_fail_the_run(monkeypatch, model_class):
    # every verdict is unchanged when the reference token moves, so only the
    # definition L[x, y] = f(x)^T (g(y) - g(y_0)) notices a model that ignores its pivot
    from functools import cached_property

    from allornone.numeric import FloatModel
    from allornone.symbolic import ExactModel

    cls = {"ExactModel": ExactModel, "FloatModel": FloatModel}[model_class]

    def g0(self):
        return self.backend.minus_row(self.G, 0)

    prop = cached_property(g0)
    prop.__set_name__(cls, "G0")
    monkeypatch.setattr(cls, "G0", prop)
    r = _run(["thm5"], trials=5)["results"][0]
    assert r["verdict"] == "fail"
    assert r["statement_failed"] == 0 and r["contradictions"] == 0
    assert (r["facts_failed"] if model_class == "ExactModel" else r["facts_contradicted"]) > 0
    model = ExactModel([[1, 2]], [[0, 1], [1, 0]], pivot=1)
    assert rn.log_odds_by_definition(model if model_class == "ExactModel" else model.to_float()).fails


@pytest.mark.parametrize("rid", sorted(records()))
def test_a_short_run_of_every_result_passes_with_every_intent_met(rid):
    r = _run([rid], trials=12)["results"][0]
    assert r["verdict"] == "pass", r["failures"]
    assert r["intent_checked"] > 0 and r["intent_failed"] == 0
