"""The record of the context dual of Lemma 8: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.lem8ctx`)."""
from __future__ import annotations

import random
from fractions import Fraction

from sympy import Equivalent, Symbol

from allornone.decision import Decision
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems.lem8 import CONTEXTS, ParallelIn, VanishesIn
from allornone.theorems.lem8.record import (decide_side, step_degenerate, step_difference, step_f4, step_injective,
                                            step_ratio)
from allornone.theorems.engine.logic import model_symbols
from allornone.theorems.engine.record import Edge, Instance, ProofStep, TheoremRecord
from allornone.theorems import lem8ctx


# -- the record ------------------------------------------------------------

f_, = model_symbols(1)
M_ = Symbol("M")
x1_, x2_, x3_, x4_, lam_ = (Symbol(s) for s in ("x_1", "x_2", "x_3", "x_4", "lambda"))
ATOMS = {
    "parallel_M": ParallelIn(M_, f_, x1_, x2_, x3_, x4_, lam_),
    "proportional_rows": lem8ctx.ProportionalLogOddsRows(f_, x1_, x2_, x3_, x4_, lam_),
    "raw_parallel": lem8ctx.RawParallelContexts(f_, x1_, x2_, x3_, x4_, lam_),
    "degenerate_M": VanishesIn(M_, f_, x3_, x4_),
    "same_conditionals": lem8ctx.SameConditionals(f_, x3_, x4_),
}


def decide(models, params) -> dict[str, Decision]:
    (model,) = models
    d = decide_side(CONTEXTS, model, params)
    return {"parallel_M": d["parallel"], "proportional_rows": d["proportional"], "raw_parallel": d["raw"],
            "degenerate_M": d["degenerate"], "same_conditionals": d["log-odds degenerate"]}


def instance(kind: str, model: ExactModel, x12, x34, lam, expect=None) -> Instance:
    return Instance(kind, (model,), {"x12": tuple(x12), "x34": tuple(x34), "lam": Fraction(lam)},
                    expect=expect or {})


#: Atom names of the side-neutral promises of :func:`allornone.symbolic.parallel.promised`.
PROMISE_ATOMS = {"raw": "raw_parallel", "parallel": "parallel_M", "proportional": "proportional_rows",
                 "degenerate": "degenerate_M", "log-odds degenerate": "same_conditionals"}


def sample(rng: random.Random, i: int) -> Instance:
    """Context pairs planted as in :func:`allornone.symbolic.parallel.planted_pair`
    (``side="contexts"``): raw parallel, parallel only after projection (a
    component in ``SF ∩ SG^perp``), ``λ = 0``, degenerate, a wrong ratio, none."""
    kind = planting.KINDS[i % len(planting.KINDS)]
    pp = planting.planted_pair(rng, kind, side="contexts")
    expect = {PROMISE_ATOMS[k]: v for k, v in planting.promised(pp, "contexts").items()}
    return instance(kind, pp.model, pp.ab, pp.ce, pp.lam, expect)


STEPS = (
    ProofStep("rows", "L[x1] - L[x2] = G_0 (f(x1) - f(x2)), and f(x1) - f(x2) lies in SF (likewise x3, x4)",
              "L = F G_0^T; SF is spanned by the f(x)", step_difference(CONTEXTS),
              latex=r"\(L[x_1] - L[x_2] = G_0 (f(x_1) - f(x_2))\), and \(f(x_1) - f(x_2)\) lies in \(SF\) (likewise "
                    r"\(x_3, x_4\))",
              reason_latex=r"\(L = F G_0^\top\); \(SF\) is spanned by the \(f(x)\)"),
    ProofStep("F4 (dual)", "(f(x1) - f(x2))^T g_0(y) = (P_M (f(x1) - f(x2)))^T P_N g_0(y)",
              "F4 holds for every f(x), hence for every w in SF by linearity", step_f4(CONTEXTS), ("F4",),
              latex=r"\((f(x_1) - f(x_2))^\top g_0(y) = (P_M (f(x_1) - f(x_2)))^\top P_N g_0(y)\)",
              reason_latex=r"F4 holds for every \(f(x)\), hence for every \(w \in SF\) by linearity"),
    ProofStep("injective", "w in M with w^T P_N g_0(y) = 0 for every y is zero; so the rows are proportional with "
                           "ratio lambda iff w = P_M(f(x1) - f(x2)) - lambda P_M(f(x3) - f(x4)) = 0",
              "F5: the P_N g_0(y) span N; F2: P_N is injective on M", step_injective(CONTEXTS), ("F2", "F5"),
              latex=r"\(w \in M\) with \(w^\top P_N g_0(y) = 0\) for every \(y\) is zero; so the rows are "
                    r"proportional with ratio \(\lambda\) if and only if "
                    r"\(w = P_M(f(x_1) - f(x_2)) - \lambda P_M(f(x_3) - f(x_4)) = 0\)",
              reason_latex=r"F5: the \(P_N g_0(y)\) span \(N\); F2: \(P_N\) is injective on \(M\)"),
    ProofStep("ratio", "the ratio found in M equals the ratio of the log-odds rows",
              "the previous step for every lambda at once", step_ratio(CONTEXTS), ("injective",),
              latex=r"the ratio found in \(M\) equals the ratio of the log-odds rows",
              reason_latex=r"the previous step for every \(\lambda\) at once"),
    ProofStep("degenerate", "P_M(f(x3) - f(x4)) = 0 iff p(.|x3) = p(.|x4)",
              "the injectivity step with w = P_M(f(x3) - f(x4)); equal log-odds rows are equal distributions",
              step_degenerate(CONTEXTS), ("injective",),
              latex=r"\(P_M(f(x_3) - f(x_4)) = 0\) if and only if \(p(\cdot \mid x_3) = p(\cdot \mid x_4)\)",
              reason_latex=r"the injectivity step with \(w = P_M(f(x_3) - f(x_4))\); equal log-odds rows are equal "
                           r"distributions"),
)


# edges: small explicit integer instances

_HIDDEN = ExactModel([[2, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [2, 0]])
"""``SG = span(e1)``, ``SF = R^2``: ``(0, 1)`` lies in ``SF ∩ SG^perp``."""
_SAME = ExactModel([[1, 0], [0, 1], [0, 3], [0, 0]], [[0, 0], [1, 0], [2, 0]])
"""Contexts 1, 2, 3 differ only along ``(0, 1)``, which no token sees."""


def _edge_hidden(rng):
    return instance("component in SF ∩ SG^perp", _HIDDEN, (0, 2), (1, 2), 2)


def _edge_degenerate(rng):
    return instance("degenerate pair", _SAME, (0, 3), (1, 2), 1)


def _edge_zero(rng):
    return instance("lambda = 0", _SAME, (1, 2), (0, 3), 0)


EDGES = (
    Edge("parallel in M, not raw", "boundary",
         "f(x1) - f(x2) - 2 (f(x3) - f(x4)) = (0, 1) lies in SF ∩ SG^perp: raw parallelism fails, the log-odds rows "
         "are proportional and P_M removes the component", _edge_hidden,
         {"raw_parallel": False, "parallel_M": True, "proportional_rows": True},
         latex=r"\(f(x_1) - f(x_2) - 2\,(f(x_3) - f(x_4)) = (0, 1)\) lies in \(SF \cap SG^\perp\): raw parallelism "
               r"fails, the log-odds rows are proportional and \(P_M\) removes the component"),
    Edge("degenerate pair", "boundary",
         "P_M(f(x3) - f(x4)) = 0 iff the two contexts give the same next-token distribution; with f(x1) - f(x2) "
         "visible no ratio works", _edge_degenerate,
         {"degenerate_M": True, "same_conditionals": True, "parallel_M": False, "proportional_rows": False},
         latex=r"\(P_M(f(x_3) - f(x_4)) = 0\) if and only if the two contexts give the same next-token distribution; "
               r"with \(f(x_1) - f(x_2)\) visible no ratio works"),
    Edge("lambda = 0", "boundary", "P_M(f(x1) - f(x2)) = 0 with f(x3) - f(x4) visible: parallel with ratio 0",
         _edge_zero, {"degenerate_M": False, "parallel_M": True, "proportional_rows": True, "raw_parallel": False},
         latex=r"\(P_M(f(x_1) - f(x_2)) = 0\) with \(f(x_3) - f(x_4)\) visible: parallel with ratio \(0\)"),
)

RECORD = TheoremRecord(
    coordinate_free=True,
    id="lem8ctx",
    number="Lemma 8, dual for contexts",
    title="Parallelism of context differences inside M (an addition of this project, not in the paper)",
    summary="An addition of this project: P_M(f(x1) - f(x2)) = lambda P_M(f(x3) - f(x4)) <=> "
            "L[x1] - L[x2] = lambda (L[x3] - L[x4]).",
    atoms=ATOMS,
    hypotheses=(),
    conclusion=Equivalent(ATOMS["parallel_M"], ATOMS["proportional_rows"]),
    conclusion_text="parallel in M with ratio lambda iff the log-odds rows are proportional with ratio lambda",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="parallel_M",
    paper=False,
    conclusion_latex=r"parallel in \(M\) with ratio \(\lambda\) if and only if the log-odds rows are proportional "
                     r"with ratio \(\lambda\)",
)
