"""Theorem records: the one declaration of each result that the runner, the CLI,
the docs and the tests read.

A :class:`TheoremRecord` holds the paper number and title, the SymPy statement,
the named hypotheses and the conclusion (as atoms of the statement), a function
that decides every atom on a concrete instance (exact or float), a sampler of
random instances, the ordered proof steps (claim, reason, check) and the edges
(a hypothesis dropped, with a counterexample; a boundary case where the
conclusion still holds).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from sympy.logic.boolalg import And, Boolean, Implies

from allornone.decision import Decision, Truth
from allornone.numeric.balance import balanced
from allornone.numeric.linalg import Unresolved
from allornone.symbolic.model import ExactModel
from allornone.theorems.engine.logic import evaluate, evaluate3

__all__ = ["Instance", "Hypothesis", "ProofStep", "StepOutcome", "Edge", "TheoremRecord", "Evaluation"]


@dataclass(frozen=True)
class Instance:
    """One instance of a result: exact models plus parameters (token indices,
    context pairs, ...). ``realise("float")`` gives the float realisation of the
    same instance; ``float_only`` instances have no exact realisation.

    ``expect`` is what the sampler built the instance to be: atom names mapped to
    the truth value they must have (a B.5 twin gives the same distribution, a
    perturbed pair does not, a planted property holds). The runner decides these
    atoms exactly and fails the run when one differs, so a generator that
    silently builds the wrong kind of instance is caught."""

    kind: str
    models: tuple
    params: Mapping[str, Any] = field(default_factory=dict)
    float_only: bool = False
    expect: Mapping[str, bool] = field(default_factory=dict)

    def realise(self, realisation: str) -> tuple:
        if realisation == "exact":
            if self.float_only:
                raise ValueError("a float-only instance has no exact realisation")
            return self.models
        if realisation == "float":
            return tuple(m.to_float() if isinstance(m, ExactModel) else m for m in self.models)
        raise ValueError(f"unknown realisation {realisation!r}")

    def to_json(self) -> dict:
        return {"kind": self.kind, "models": [m.to_json() for m in self.models if isinstance(m, ExactModel)],
                "params": {k: _jsonable(v) for k, v in self.params.items()}}


def _jsonable(v):
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "to_fractions"):
        return v.to_fractions()
    if isinstance(v, (int, str, float, bool)) or v is None:
        return v
    return str(v)


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis: ``atom`` is its predicate application in the statement."""

    name: str
    description: str
    atom: Boolean
    implied: str = ""
    """Non-empty when the other hypotheses imply this one (on the instances where
    the conclusion's truth depends on it): why. Such a hypothesis is kept because
    the paper states it; dropping it has no counterexample, and a proof step
    checks the implication on every instance."""
    evidence_only: str = ""
    """Non-empty for an evidence filter: a hypothesis the conclusion's truth
    does not need, kept so that an instance counts as evidence only where the
    conclusion does not hold vacuously or trivially. The text says why the
    conclusion holds without it. Dropping it cannot produce a counterexample, so
    ``allornone edges`` does not search for one; it checks the record's own
    edges instead (none may be a counterexample)."""
    latex: str = ""
    """``description`` typeset for the documentation (Markdown, formulas in TeX
    between ``\\(`` and ``\\)``); empty where the plain text has no formula. The
    plain text stays what terminals print."""


@dataclass(frozen=True)
class StepOutcome:
    """The result of checking one proof step on one instance. ``applicable`` is
    False when the step's own premises (e.g. ``L = L~``) do not hold there."""

    decision: Decision
    values: Mapping[str, Any] = field(default_factory=dict)
    applicable: bool = True

    @classmethod
    def not_applicable(cls, why: str) -> "StepOutcome":
        return cls(Decision.exact(True), {"not applicable": why}, False)


@dataclass(frozen=True)
class ProofStep:
    """``claim`` because ``reason``; ``check(models, params)`` verifies it on an instance."""

    label: str
    claim: str
    reason: str
    check: Callable[[tuple, Mapping[str, Any]], StepOutcome]
    uses: tuple[str, ...] = ()
    latex: str = ""
    """``claim`` typeset for the documentation (Markdown, formulas in TeX between
    ``\\(`` and ``\\)``); empty where the plain text has no formula."""
    reason_latex: str = ""
    """``reason`` typeset likewise."""


@dataclass(frozen=True)
class Edge:
    """An edge case of a hypothesis.

    ``kind`` is ``"drop"`` (the hypothesis fails, the others hold, and the
    conclusion fails: a counterexample showing the hypothesis is needed) or
    ``"boundary"`` (the hypothesis holds degenerately or with equality and the
    conclusion still holds). ``expect`` maps atom names to the truth values the
    instance must have.
    """

    name: str
    kind: str
    description: str
    build: Callable[[random.Random], Instance]
    expect: Mapping[str, bool]
    hypothesis: str | None = None
    latex: str = ""
    """``description`` typeset for the documentation (Markdown, formulas in TeX
    between ``\\(`` and ``\\)``); empty where the plain text has no formula."""


@dataclass
class Evaluation:
    """Every atom of the statement decided on one realisation of an instance."""

    atoms: dict[str, Decision]
    hypotheses: Truth
    conclusion: Truth
    statement: Truth
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TheoremRecord:
    id: str
    number: str
    title: str
    summary: str
    atoms: Mapping[str, Boolean]
    hypotheses: Sequence[Hypothesis]
    conclusion: Boolean
    conclusion_text: str
    decide: Callable[[tuple, Mapping[str, Any]], dict[str, Decision]]
    sample: Callable[[random.Random, int], Instance]
    steps: Sequence[ProofStep] = ()
    edges: Sequence[Edge] = ()
    sides: str | None = None
    """For a result stated as an equivalence: the atom whose two values split the
    instances into the two sides that must both be exercised."""
    paper: bool = True
    """False for additions of this project that are not numbered results of the paper."""
    conclusion_latex: str = ""
    """``conclusion_text`` typeset for the documentation (Markdown, formulas in
    TeX between ``\\(`` and ``\\)``); empty where the plain text has no formula."""
    coordinate_free: bool = False
    """Every atom is a claim about the distribution or about subspaces that a
    change of basis carries along (no orthogonal projection in the model's own
    coordinates): the float side then decides on the models balanced by powers
    of two (:func:`allornone.numeric.balance.balanced`)."""

    @property
    def statement(self) -> Boolean:
        if not self.hypotheses:
            return self.conclusion
        return Implies(And(*[h.atom for h in self.hypotheses]), self.conclusion)

    def evaluate(self, instance: Instance, realisation: str) -> Evaluation:
        models = instance.realise(realisation)
        if realisation == "float":
            # every claim is the same in coordinates balanced by powers of two (or,
            # for claims with orthogonal projections, with every F and every G
            # scaled by one common power of two), and there no such presentation
            # of the models can move a verdict
            models = balanced(models, coordinates=self.coordinate_free)
        try:
            decided = self.decide(models, instance.params)
        except Unresolved as exc:
            if realisation == "exact":
                raise
            # a float computation that cannot resolve the instance decides nothing
            why = {"why": str(exc)}
            decided = {n: Decision(Truth.UNDECIDED, math.inf, (0.0, 0.0), why) for n in self.atoms}
        missing = set(self.atoms) - set(decided)
        if missing:
            raise KeyError(f"{self.id}: decide() gave no value for {sorted(missing)}")
        truth = {self.atoms[name]: d.truth for name, d in decided.items() if name in self.atoms}
        hyp = evaluate3(And(*[h.atom for h in self.hypotheses]), truth) if self.hypotheses else Truth.HOLDS
        concl = evaluate3(self.conclusion, truth)
        stmt = evaluate3(self.statement, truth)
        if realisation == "exact":
            # The exact side must decide every atom, and SymPy's own evaluation
            # must agree with the three-valued one.
            exact_values = {self.atoms[n]: d.holds for n, d in decided.items() if n in self.atoms}
            assert all(not d.undecided for d in decided.values()), "exact decisions are never undecided"
            assert bool(evaluate(self.statement, exact_values)) == (stmt is Truth.HOLDS)
        return Evaluation({n: d for n, d in decided.items()}, hyp, concl, stmt)

    def hypothesis(self, name: str) -> Hypothesis:
        for h in self.hypotheses:
            if h.name == name:
                return h
        from allornone.errors import UnknownHypothesisError

        raise UnknownHypothesisError(
            f"{self.id} has no hypothesis {name!r}; it has: {', '.join(h.name for h in self.hypotheses) or 'none'}")

    def atom_name(self, atom: Boolean) -> str:
        for name, a in self.atoms.items():
            if a == atom:
                return name
        raise KeyError(str(atom))

    def check_steps(self, instance: Instance, realisation: str = "exact") -> list[tuple[ProofStep, StepOutcome]]:
        models = instance.realise(realisation)
        return [(s, s.check(models, instance.params)) for s in self.steps]
