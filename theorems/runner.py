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
from allornone.theorems.facts import check_facts

__all__ = ["check_instance", "run", "versions", "instance_rng"]

MAX_FAILURES_KEPT = 5


def instance_rng(seed: int, rid: str, index: int) -> random.Random:
    return random.Random(f"{seed}/{rid}/{index}")


def check_instance(rid: str, seed: int, index: int) -> dict:
    """Evaluate one instance of one result in both realisations; a plain dict
    (picklable, JSON friendly) summarising what happened."""
    rec = get_record(rid)
    inst = rec.sample(instance_rng(seed, rid, index), index)
    out: dict = {"index": index, "kind": inst.kind, "float_only": inst.float_only}
    flt = rec.evaluate(inst, "float")
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
        for j, (em, fm) in enumerate(zip(inst.realise("exact"), inst.realise("float"))):
            ef, ff = check_facts(em), check_facts(fm)
            fact_fail += [f"model {j}: {n}" for n, d in ef.items() if not d.holds]
            fact_contra += [f"model {j}: {n}" for n, d in ff.items() if d.fails]
        steps = rec.check_steps(inst, "exact")
        out["steps_checked"] = sum(1 for _, o in steps if o.applicable)
        out["steps_failed"] = [s.label for s, o in steps if o.applicable and not o.decision.holds]
        if ex.statement is not Truth.HOLDS or out["steps_failed"] or fact_fail:
            out["instance"] = inst.to_json()
        elif (ex.hypotheses is Truth.HOLDS and (not rec.sides or ex.atoms[rec.sides].holds)
              and inst.models[0].effective_complexity() >= 1):
            # A candidate non-vacuity witness (every hypothesis holds and the
            # conclusion is not trivially true: its left side holds, k >= 1), as a file
            # that `allornone verify` reproduces.
            from allornone.theorems.edges import instance_file

            expect = {"hypotheses": ex.hypotheses.value, "conclusion": ex.conclusion.value,
                      **{n: d.truth.value for n, d in ex.atoms.items()}}
            out["witness_instance"] = instance_file(rec, inst, expect, f"{rec.number}: non-vacuity witness")
    else:
        out.update(hypotheses=flt.hypotheses.value, conclusion=flt.conclusion.value, statement=flt.statement.value,
                   contradictions=[], undecided=[n for n, d in flt.atoms.items() if d.undecided], steps_checked=0,
                   steps_failed=[])
        if rec.sides:
            out["side"] = flt.atoms[rec.sides].truth.value
    out["facts_failed"] = fact_fail
    out["facts_contradicted"] = fact_contra
    return out


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
        bad = (exact and r["statement"] != "holds") or r["contradictions"] or r["steps_failed"] \
            or r["facts_failed"] or r["facts_contradicted"]
        if bad and len(self.failures) < MAX_FAILURES_KEPT:
            self.failures.append(r)

    @property
    def nonvacuous(self) -> bool:
        if self.hypotheses_held == 0:
            return False
        return not self.sides_atom or (self.sides.get("holds", 0) > 0 and self.sides.get("fails", 0) > 0)

    @property
    def verdict(self) -> str:
        ok = (self.statement_failed == 0 and self.contradictions == 0 and self.steps_failed == 0
              and self.facts_failed == 0 and self.facts_contradicted == 0)
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
            "failures": self.failures,
            "witness": self.witness,
        }


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
    import allornone.theorems.edges  # noqa: F401
    import allornone.theorems.generic  # noqa: F401
    import allornone.theorems.proofs  # noqa: F401
    import allornone.theorems.verify  # noqa: F401


def run(ids: Iterable[str], trials: int = 50, seed: int = 0, jobs: int = 1,
        progress: Callable[[str, int], None] | None = None, generic_check: bool = True) -> dict:
    """Check each result on ``trials`` instances; returns the JSON report.

    ``progress(rid, done)`` is called after every instance. With
    ``generic_check`` the symbolic identities of the proofs are also evaluated on
    float instances and compared with the float layer (``generic_crossvalidation``).
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
    passed = all(r["verdict"] == "pass" for r in results) and (generic is None or generic["agree"])
    return {
        "seed": seed, "trials": trials, "jobs": jobs, "versions": versions(),
        "elapsed_s": round(time.perf_counter() - started, 3),
        "verdict": "pass" if passed else "fail",
        "results": results,
        "generic_crossvalidation": generic,
        "generic_limit": GENERIC_LIMIT,
    }


#: Float instances per result on which the generic (symbolic) identities are evaluated.
GENERIC_INSTANCES = 10
#: Largest discrepancy allowed between a generic identity evaluated numerically and the float layer.
GENERIC_LIMIT = 1e-8


def generic_crossvalidation(ids, seed: int, per_result: int, pool=None) -> dict:
    """Evaluate both sides of every generic identity of :mod:`allornone.theorems.generic`
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
    from allornone.theorems.generic import start_crossvalidation

    instances = [get_record(rid).sample(instance_rng(seed, rid, i), i) for rid in ids for i in range(per_result)]
    finish = start_crossvalidation(instances, seed=seed, pool=pool)

    def result() -> dict:
        out = finish()
        values = [v["max_discrepancy"] for v in out["identities"].values()] + [out.get("projectors", 0.0)]
        out["agree"] = all(v <= GENERIC_LIMIT for v in values)
        return out
    return result
