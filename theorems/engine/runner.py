"""The runner: sample instances, decide every atom exactly and in floats on the
same instance, cross-validate, run the facts F1--F6 and the proof steps, and
summarise.

Each instance is seeded from ``(seed, result id, index)`` alone, so a report does
not depend on the number of worker processes.
"""
from __future__ import annotations

import platform
import random
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

from allornone.decision import Truth
from allornone.theorems import get_record
from allornone.theorems.engine.record import Instance
from allornone.theorems.facts import check_facts

__all__ = ["check_instance", "run", "versions", "instance_rng"]

MAX_FAILURES_KEPT = 5


def instance_rng(seed: int, rid: str, index: int) -> random.Random:
    return random.Random(f"{seed}/{rid}/{index}")


def check_instance(rid: str, seed: int, index: int) -> dict:
    """Evaluate one instance of one result in both realisations; a plain dict
    (picklable, JSON friendly) summarising what happened."""
    rec = get_record(rid)
    return evaluate_instance(rec, rec.sample(instance_rng(seed, rid, index), index), index)


def evaluate_instance(rec, inst, index: int = 0) -> dict:
    """:func:`check_instance` on a given record and instance."""
    out: dict = {"index": index, "kind": inst.kind, "float_only": inst.float_only}
    # The float realisation is made once and shared by the statement and the
    # facts below: each float model then computes its structure (ranks, bases of
    # M and N) once instead of once per realisation, and every check sees the
    # same float models.
    floats = inst.realise("float")
    flt = rec.evaluate(Instance(inst.kind, floats, inst.params, inst.float_only, inst.expect), "float")
    out["float"] = {n: d.truth.value for n, d in flt.atoms.items()}
    held = [float(d.residual) for d in flt.atoms.values() if d.holds and not d.is_exact]
    out["max_float_residual"] = max(held, default=0.0)
    fact_fail, fact_contra = [], []
    if not inst.float_only:
        ex = rec.evaluate(inst, "exact")
        out.update(hypotheses=ex.hypotheses.value, conclusion=ex.conclusion.value, statement=ex.statement.value,
                   exact={n: d.truth.value for n, d in ex.atoms.items()})
        if rec.sides:
            out["side"] = ex.atoms[rec.sides].truth.value
        out["contradictions"] = [n for n, d in flt.atoms.items()
                                 if not d.undecided and d.truth is not ex.atoms[n].truth]
        out["undecided"] = [n for n, d in flt.atoms.items() if d.undecided]
        for j, (em, fm) in enumerate(zip(inst.realise("exact"), floats)):
            ef, ff = check_facts(em), check_facts(fm)
            fact_fail += [f"model {j}: {n}" for n, d in ef.items() if not d.holds]
            fact_contra += [f"model {j}: {n}" for n, d in ff.items() if d.fails]
            exact_L, float_L = log_odds_by_definition(em), log_odds_by_definition(fm)
            fact_fail += [f"model {j}: log-odds by definition"] if not exact_L.holds else []
            fact_contra += [f"model {j}: log-odds by definition (float)"] if float_L.fails else []
        out["intent_checked"] = len(inst.expect)
        out["intent_failed"] = intent_failures(inst, ex)
        out["coverage"] = coverage(inst.models)
        steps = rec.check_steps(inst, "exact")
        out["steps_checked"] = sum(1 for _, o in steps if o.applicable)
        out["steps_failed"] = [s.label for s, o in steps if o.applicable and not o.decision.holds]
        if ex.statement is not Truth.HOLDS or out["steps_failed"] or fact_fail or out["intent_failed"]:
            out["instance"] = inst.to_json()
        elif (ex.hypotheses is Truth.HOLDS and (not rec.sides or ex.atoms[rec.sides].holds)
              and inst.models[0].effective_complexity() >= 1):
            # A candidate non-vacuity witness (every hypothesis holds and the
            # conclusion is not trivially true: its left side holds, k >= 1), as a file
            # that `allornone verify` reproduces.
            from allornone.theorems.engine.edges import instance_file

            expect = {"hypotheses": ex.hypotheses.value, "conclusion": ex.conclusion.value,
                      **{n: d.truth.value for n, d in ex.atoms.items()}}
            out["witness_instance"] = instance_file(rec, inst, expect, f"{rec.number}: non-vacuity witness")
    else:
        out.update(hypotheses=flt.hypotheses.value, conclusion=flt.conclusion.value, statement=flt.statement.value,
                   contradictions=[], undecided=[n for n, d in flt.atoms.items() if d.undecided], steps_checked=0,
                   steps_failed=[], intent_checked=0, intent_failed=[], coverage={})
        if rec.sides:
            out["side"] = flt.atoms[rec.sides].truth.value
    out["facts_failed"] = fact_fail
    out["facts_contradicted"] = fact_contra
    return out


def log_odds_by_definition(model):
    """``L[x, y] = f(x)^T (g(y) - g(y_0))``, computed entry by entry from ``F``,
    ``G`` and the pivot, against :meth:`Model.log_odds` (which goes through
    ``G_0``). Every verdict of every result is unchanged when the reference
    token moves, so a model that took the wrong reference would pass every
    other check.

    >>> from allornone.symbolic import ExactModel
    >>> log_odds_by_definition(ExactModel([[1, 2]], [[0, 1], [1, 0], [2, 2]], pivot=1)).holds
    True
    """
    be = model.backend
    pivot_row = model.G[[model.pivot], :]
    ones = be.as_matrix([[1]] * model.n, "ones")
    direct = model.F @ (model.G - ones @ pivot_row).T
    return be.vanishes(model.log_odds() - direct, model.F, model.G.T)


def intent_failures(inst, ex) -> list[str]:
    """The atoms whose exact truth differs from what the sampler built the
    instance to be (:attr:`Instance.expect`), as readable lines."""
    bad = []
    for name, value in inst.expect.items():
        got = ex.atoms[name].truth
        if got is not Truth.of(value):
            bad.append(f"{name}: built to be {Truth.of(value).value}, is {got.value}")
    return bad


#: The shapes every result must meet where they can occur: an effective
#: complexity of 0, M != N (so code that confuses P_M and P_N is exercised), and
#: two models of different dimensions.
COVERAGE_FEATURES = ("k = 0", "M != N", "d != d~")


def coverage(models) -> list[str]:
    """Which of :data:`COVERAGE_FEATURES` an exact instance shows."""
    found = []
    if any(m.effective_complexity() == 0 for m in models):
        found.append("k = 0")
    if any(m.structure.P_M != m.structure.P_N for m in models):
        found.append("M != N")
    if len(models) >= 2 and models[0].d != models[1].d:
        found.append("d != d~")
    return found


@dataclass
class ResultSummary:
    id: str
    number: str
    title: str
    instances: int = 0
    hypotheses_held: int = 0
    conclusion_held: int = 0
    exact_checked: int = 0
    float_agreed: int = 0
    contradictions: int = 0
    undecided: int = 0
    max_float_residual: float = 0.0
    sides: dict = field(default_factory=dict)
    kinds: dict = field(default_factory=dict)
    statement_failed: int = 0
    steps_checked: int = 0
    steps_failed: int = 0
    facts_failed: int = 0
    facts_contradicted: int = 0
    intent_checked: int = 0
    intent_failed: int = 0
    coverage: dict = field(default_factory=dict)
    coverage_hypotheses: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    sides_atom: str | None = None
    witness: dict | None = None

    def add(self, r: dict) -> None:
        candidate = r.pop("witness_instance", None)
        if candidate is not None and self.witness is None:
            self.witness = {"index": r["index"], "kind": r["kind"], "instance": candidate}
        self.instances += 1
        self.kinds[r["kind"]] = self.kinds.get(r["kind"], 0) + 1
        exact = not r["float_only"]
        self.exact_checked += exact
        if r["hypotheses"] == "holds":
            self.hypotheses_held += 1
            self.conclusion_held += r["conclusion"] == "holds"
            if "side" in r:
                self.sides[r["side"]] = self.sides.get(r["side"], 0) + 1
        if exact and r["statement"] != "holds":
            self.statement_failed += 1
        if r["contradictions"]:
            self.contradictions += 1
        elif r["undecided"]:
            self.undecided += 1
        elif exact:
            self.float_agreed += 1
        self.max_float_residual = max(self.max_float_residual, r["max_float_residual"])
        self.steps_checked += r["steps_checked"]
        self.steps_failed += len(r["steps_failed"])
        self.facts_failed += len(r["facts_failed"])
        self.facts_contradicted += len(r["facts_contradicted"])
        self.intent_checked += r["intent_checked"]
        self.intent_failed += bool(r["intent_failed"])
        for feature in r["coverage"]:
            self.coverage[feature] = self.coverage.get(feature, 0) + 1
            if r["hypotheses"] == "holds":
                self.coverage_hypotheses[feature] = self.coverage_hypotheses.get(feature, 0) + 1
        bad = (exact and r["statement"] != "holds") or r["contradictions"] or r["steps_failed"] \
            or r["facts_failed"] or r["facts_contradicted"] or r["intent_failed"]
        if bad and len(self.failures) < MAX_FAILURES_KEPT:
            self.failures.append(r)

    @property
    def nonvacuous(self) -> bool:
        if self.hypotheses_held == 0:
            return False
        return not self.sides_atom or (self.sides.get("holds", 0) > 0 and self.sides.get("fails", 0) > 0)

    @property
    def verdict(self) -> str:
        # A vacuous run (hypotheses never met, or one side of an equivalence never
        # exercised) shows nothing about the result: it fails too.
        ok = (self.statement_failed == 0 and self.contradictions == 0 and self.steps_failed == 0
              and self.facts_failed == 0 and self.facts_contradicted == 0 and self.intent_failed == 0
              and self.nonvacuous)
        return "pass" if ok else "fail"

    def to_json(self) -> dict:
        return {
            "id": self.id, "number": self.number, "title": self.title,
            "instances": self.instances, "hypotheses_held": self.hypotheses_held,
            "conclusion_held": self.conclusion_held, "exact_checked": self.exact_checked,
            "float_agreed": self.float_agreed, "contradictions": self.contradictions,
            "undecided": self.undecided, "max_float_residual": self.max_float_residual,
            "verdict": self.verdict, "nonvacuous": self.nonvacuous,
            "sides": {"atom": self.sides_atom, **self.sides} if self.sides_atom else None,
            "kinds": self.kinds, "statement_failed": self.statement_failed,
            "steps_checked": self.steps_checked, "steps_failed": self.steps_failed,
            "facts_failed": self.facts_failed, "facts_contradicted": self.facts_contradicted,
            "intent_checked": self.intent_checked, "intent_failed": self.intent_failed,
            "coverage": {f: self.coverage.get(f, 0) for f in COVERAGE_FEATURES},
            "coverage_hypotheses": {f: self.coverage_hypotheses.get(f, 0) for f in COVERAGE_FEATURES},
            "failures": self.failures,
            "witness": self.witness,
        }


def check_edges(rid: str, seed: int = 0) -> dict:
    """Build every declared edge of one result (:attr:`TheoremRecord.edges`) and
    check it exactly: its atoms have the declared values, a boundary case keeps
    the conclusion, a dropped hypothesis fails while the conclusion fails too,
    and every applicable proof step holds on it. The drop searches of
    ``allornone edges`` are not run here (they take minutes)."""
    from allornone.theorems.engine.logic import evaluate3

    rec = get_record(rid)
    out = []
    for edge in rec.edges:
        inst = edge.build(random.Random(f"{seed}/{rec.id}/edge/{edge.name}"))
        ev = rec.evaluate(inst, "exact")
        truths = {rec.atoms[n]: d.truth for n, d in ev.atoms.items() if n in rec.atoms}
        got = {k: ev.atoms[k].holds for k in edge.expect}
        problems = [f"{k}: declared {v}, is {got[k]}" for k, v in edge.expect.items() if got[k] != v]
        if edge.kind == "boundary" and ev.conclusion is not Truth.HOLDS:
            problems.append("the conclusion fails on a boundary case")
        if edge.kind == "drop":
            # the hypothesis dropped fails and so does the conclusion (the others
            # need not all hold: an edge may say why they cannot, as Corollary 6's does)
            if edge.hypothesis and evaluate3(rec.hypothesis(edge.hypothesis).atom, truths) is not Truth.FAILS:
                problems.append(f"the hypothesis {edge.hypothesis!r} does not fail")
            if ev.conclusion is not Truth.FAILS:
                problems.append("the conclusion does not fail on a dropped hypothesis")
        failed_steps = [s.label for s, o in rec.check_steps(inst, "exact") if o.applicable and not o.decision.holds]
        problems += [f"proof step {label!r} fails" for label in failed_steps]
        from allornone.theorems.engine.verify import failed_hypotheses

        out.append({"name": edge.name, "kind": edge.kind, "hypothesis": edge.hypothesis, "ok": not problems,
                    "problems": problems,
                    "failed_hypotheses": failed_hypotheses(rec, {n: d.truth for n, d in ev.atoms.items()})})
    return {"id": rid, "edges": out, "verdict": "pass" if all(e["ok"] for e in out) else "fail"}


def versions() -> dict:
    import numpy
    import scipy
    import sympy

    import allornone

    try:
        import flint

        flint_v = flint.__version__
    except ImportError:  # pragma: no cover - python-flint is a dependency
        flint_v = None
    from sympy.external.gmpy import GROUND_TYPES

    return {"allornone": allornone.__version__, "python": platform.python_version(), "sympy": sympy.__version__,
            "sympy_ground_types": GROUND_TYPES, "python-flint": flint_v, "numpy": numpy.__version__,
            "scipy": scipy.__version__}


def _task(args):
    return check_instance(*args)


def _preload() -> None:
    """Import what the checks import on first use, before the workers are forked,
    so that each worker does not import it again."""
    import allornone.numeric.model  # noqa: F401
    import allornone.theorems.engine.edges  # noqa: F401
    import allornone.theorems.engine.generic  # noqa: F401
    import allornone.theorems.engine.proofs  # noqa: F401
    import allornone.theorems.engine.verify  # noqa: F401


def run(ids: Iterable[str], trials: int = 50, seed: int = 0, jobs: int = 1,
        progress: Callable[[str, int], None] | None = None, generic_check: bool = True,
        edges: bool = False, self_test: bool = False) -> dict:
    """Check each result on ``trials`` instances; returns the JSON report.

    ``progress(rid, done)`` is called after every instance. With
    ``generic_check`` the symbolic identities of the proofs are also evaluated on
    float instances and compared with the float layer (``generic_crossvalidation``).
    With ``edges`` the records' declared edges are checked too (:func:`check_edges`);
    with ``self_test`` the controls of :mod:`allornone.theorems.engine.selftest` run
    (every step, fact and runner verdict shown failing on a broken instance), and
    those of :mod:`allornone.theorems.engine.realmodel_selftest` (the real-model layer).
    """
    ids = list(ids)
    if trials < 1:
        raise ValueError("trials must be >= 1")
    started = time.perf_counter()
    results = []
    recs = [get_record(rid) for rid in ids]
    if jobs > 1:
        _preload()
    pool = ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else None
    try:
        # every task is handed to the pool before any result is awaited, the generic
        # cross-validation's last, so that no worker idles between results
        its = []
        for rec in recs:
            tasks = [(rec.id, seed, i) for i in range(trials)]
            its.append(pool.map(_task, tasks, chunksize=max(1, trials // (4 * jobs))) if pool else map(_task, tasks))
        finish = start_generic_crossvalidation(ids, seed, min(trials, GENERIC_INSTANCES), pool) \
            if generic_check else None
        for rec, it in zip(recs, its):
            summary = ResultSummary(rec.id, rec.number, rec.title, sides_atom=rec.sides)
            for done, r in enumerate(it, 1):
                summary.add(r)
                if progress:
                    progress(rec.id, done)
            results.append(summary.to_json())
        generic = finish() if finish else None
    finally:
        if pool:
            pool.shutdown()
    edge_reports = [check_edges(rid, seed) for rid in ids] if edges else None
    if self_test:
        from allornone.theorems.engine.realmodel_selftest import with_real_models
        from allornone.theorems.engine.selftest import run_self_test

        # (and the real-model layer's controls, as self_test.real_models)
        controls = with_real_models(run_self_test())
    else:
        controls = None
    passed = all(r["verdict"] == "pass" for r in results) and (generic is None or generic["agree"]) \
        and all(e["verdict"] == "pass" for e in edge_reports or ()) and (controls is None or controls["passed"])
    return {
        "seed": seed, "trials": trials, "jobs": jobs, "versions": versions(),
        "elapsed_s": round(time.perf_counter() - started, 3),
        "verdict": "pass" if passed else "fail",
        "results": results,
        "generic_crossvalidation": generic,
        "edges": edge_reports,
        "self_test": controls,
        "generic_limit": GENERIC_LIMIT,
    }


#: Float instances per result on which the generic (symbolic) identities are evaluated.
GENERIC_INSTANCES = 10
#: Largest discrepancy allowed between a generic identity evaluated numerically and the float layer.
GENERIC_LIMIT = 1e-8


def generic_crossvalidation(ids, seed: int, per_result: int, pool=None) -> dict:
    """Evaluate both sides of every generic identity of :mod:`allornone.theorems.engine.generic`
    (numerically) on float instances of the results, against the float layer's own
    computation of the same quantities; with ``pool``, one shape per worker task."""
    return start_generic_crossvalidation(ids, seed, per_result, pool)()


def start_generic_crossvalidation(ids, seed: int, per_result: int, pool=None) -> Callable[[], dict]:
    """:func:`generic_crossvalidation` in two halves: this samples the instances and
    hands the work to ``pool``; the function returned waits for it.

    Parameters
    ----------
    ids : iterable of str
        Result ids whose instances are used.
    seed : int
        The run's seed.
    per_result : int
        Instances per result.
    pool : concurrent.futures.Executor, optional
        Worker processes; without one the work is done when the result is asked for.

    Returns
    -------
    callable
        With no arguments: the report of :func:`generic_crossvalidation`.
    """
    from allornone.theorems.engine.generic import start_crossvalidation

    instances = [get_record(rid).sample(instance_rng(seed, rid, i), i) for rid in ids for i in range(per_result)]
    finish = start_crossvalidation(instances, seed=seed, pool=pool)

    def result() -> dict:
        out = finish()
        values = [v["max_discrepancy"] for v in out["identities"].values()] + [out.get("projectors", 0.0)]
        out["agree"] = all(v <= GENERIC_LIMIT for v in values)
        return out
    return result
