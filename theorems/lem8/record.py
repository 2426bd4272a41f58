"""The record of Lemma 8: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.lem8`)."""
from __future__ import annotations

import random
from fractions import Fraction

from sympy import Equivalent, Symbol

from allornone.decision import Decision
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems.engine.logic import model_symbols
from allornone.theorems.engine.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord
from allornone.theorems import lem8


# -- proof steps, written once for both sides ---------------------------------

def _setup(side: lem8.Side, models, params):
    """The model, its backend and structure, the two index pairs, the two
    differences and ``λ`` of an instance of a record on ``side``."""
    (model,) = models
    (a, b), (c, e) = params[side.keys[0]], params[side.keys[1]]
    X = side.rows(model)
    return (model, model.backend, model.structure, (a, b), (c, e), lem8._difference(X, a, b), lem8._difference(X, c, e),
            lem8.ratio_value(model.backend, params["lam"]))


def step_difference(side: lem8.Side):
    """``X[i] - X[j]`` is seen as ``L``-differences through the reader (``F``
    resp. ``G_0``) and lies in ``SG`` (resp. ``SF``)."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, dab, _, _ = _setup(side, models, params)
        X, Lx, R, P = side.rows(model), side.log_odds(model), side.reader(model), side.span(s)
        checks = []
        for (i, j) in (ab, ce):
            dij = lem8._difference(X, i, j)
            scale = max(lem8._log_odds_scale(side, model, i, j), lem8._difference_scale(be, X, i, j, R))
            checks.append(be.is_zero(lem8._difference(Lx, i, j) - R @ dij, scale))
            checks.append(be.is_zero(P @ dij - dij, lem8._difference_scale(be, X, i, j, P)))
        return StepOutcome(Decision.all(checks), {side.differences[0]: dab.T})
    return check


def step_f4(side: lem8.Side):
    """F4 on differences: ``R (X[i] - X[j]) = (R P_reader) P_S (X[i] - X[j])``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, _ = _setup(side, models, params)
        X, R, Pr, P = side.rows(model), side.reader(model), side.reader_projector(s), side.projector(s)
        RP = R @ Pr
        checks = [be.is_zero(R @ lem8._difference(X, i, j) - RP @ (P @ lem8._difference(X, i, j)),
                             lem8._difference_scale(be, X, i, j, R, Pr, P)) for (i, j) in (ab, ce)]
        return StepOutcome(Decision.all(checks), {"reader restricted": RP})
    return check


def _w(side: lem8.Side, be, s, X, ab, ce, lam, *factors):
    """``w = P_S(X[a] - X[b]) - λ P_S(X[c] - X[e])`` and the rounding scale of
    ``factors @ w``."""
    P = side.projector(s)
    w = P @ (lem8._difference(X, *ab) - lem8._difference(X, *ce) * lam)
    return w, max(lem8._difference_scale(be, X, *ab, *factors, P), abs(lam) * lem8._difference_scale(be, X, *ce, *factors, P))


def step_reduce(side: lem8.Side):
    """The log-odds combination equals the reader applied to ``w``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, lam = _setup(side, models, params)
        X, Lx, R, Pr = side.rows(model), side.log_odds(model), side.reader(model), side.reader_projector(s)
        w, scale = _w(side, be, s, X, ab, ce, lam, R, Pr)
        lhs = lem8._difference(Lx, *ab) - lem8._difference(Lx, *ce) * lam
        d = be.is_zero(lhs - R @ Pr @ w, max(scale, lem8._log_odds_scale(side, model, *ab),
                                             abs(lam) * lem8._log_odds_scale(side, model, *ce)))
        return StepOutcome(d, {"w": w.T, "lambda": lam})
    return check


def step_injective(side: lem8.Side):
    """``w`` in ``S`` with ``R P_reader w = 0`` is zero: ``R P_reader`` has rank
    ``k`` on a basis of ``S`` (F5, F2), and on this instance ``R P_reader w = 0``
    exactly when ``w = 0``."""
    def check(models, params) -> StepOutcome:
        model, be, s, ab, ce, _, _, lam = _setup(side, models, params)
        X, R, Pr, B = side.rows(model), side.reader(model), side.reader_projector(s), side.basis(s)
        RP = R @ Pr
        inj = be.rank_equals(RP @ B, s.k, R, Pr, B) if s.k else be.decision(True)
        w, w_scale = _w(side, be, s, X, ab, ce, lam)
        _, seen_scale = _w(side, be, s, X, ab, ce, lam, R, Pr)
        seen, zero = be.is_zero(RP @ w, seen_scale), be.is_zero(w, w_scale)
        return StepOutcome(Decision.all([inj, lem8.agree(be, seen, zero)]),
                           {"k": s.k, "rank on a basis": be.rank(RP @ B)[0] if s.k else 0, "w": w.T,
                            "w is zero": zero.truth.value})
    return check


def step_ratio(side: lem8.Side):
    """The ratio found in ``S`` and the ratio of the log-odds agree."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce = params[side.keys[0]], params[side.keys[1]]
        rS, rL = lem8.parallel_on(side, model, ab, ce, side.subspace), lem8.proportional_on(side, model, ab, ce)
        be = model.backend
        # compared, and each re-derived from the definition (the comparison alone
        # would pass two searches that share a wrong formula for lambda)
        return StepOutcome(Decision.all([lem8.same_ratio(be, rS, rL), lem8.ratio_by_definition(be, rS),
                                         lem8.ratio_by_definition(be, rL)]),
                           {f"lambda in {side.subspace}": rS.lam, "lambda of the log-odds": rL.lam,
                            "unique": rS.unique})
    return check


def step_degenerate(side: lem8.Side):
    """``P_S(X[c] - X[e]) = 0`` iff the log-odds difference of ``c, e`` vanishes."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce = params[side.keys[0]], params[side.keys[1]]
        dS = lem8.parallel_on(side, model, ab, ce, side.subspace).degenerate
        dL = lem8.proportional_on(side, model, ab, ce).degenerate
        return StepOutcome(lem8.agree(model.backend, dS, dL),
                           {f"P_{side.subspace}({side.differences[1]}) vanishes": dS.truth.value,
                            side.same_probabilities: dL.truth.value})
    return check


def step_raw(side: lem8.Side):
    """Raw parallelism with ratio ``λ`` implies parallelism in ``S`` with ``λ``."""
    def check(models, params) -> StepOutcome:
        (model,) = models
        ab, ce, lam = params[side.keys[0]], params[side.keys[1]], params["lam"]
        raw = lem8.parallel_on(side, model, ab, ce, "raw", lam)
        if not raw.holds:
            return StepOutcome.not_applicable("the raw differences are not parallel with this ratio")
        return StepOutcome(lem8.parallel_on(side, model, ab, ce, side.subspace, lam).decision, {"lambda": lam})
    return check


# -- the record ------------------------------------------------------------

f_, = model_symbols(1)
N_, a_, b_, c_, e_, lam_ = (Symbol(s) for s in ("N", "a", "b", "c", "e", "lambda"))
ATOMS = {
    "parallel_N": lem8.ParallelIn(N_, f_, a_, b_, c_, e_, lam_),
    "proportional": lem8.ProportionalLogOdds(f_, a_, b_, c_, e_, lam_),
    "raw_parallel": lem8.RawParallel(f_, a_, b_, c_, e_, lam_),
    "degenerate_N": lem8.VanishesIn(N_, f_, c_, e_),
    "equal_probabilities": lem8.SameProbabilities(f_, c_, e_),
}
"""``parallel_N`` and ``proportional`` make the statement; ``raw_parallel``,
``degenerate_N`` and ``equal_probabilities`` are decided (and cross-validated)
on every instance too, for the edges."""


def decide_side(side: lem8.Side, model, params) -> dict[str, Decision]:
    """The five decisions of a record on ``side``, under side-neutral names:
    ``parallel`` (in ``S``), ``proportional``, ``raw``, ``degenerate`` (``P_S``
    of the second difference vanishes) and ``log-odds degenerate``."""
    ab, ce, lam = params[side.keys[0]], params[side.keys[1]], params["lam"]
    rS = lem8.parallel_on(side, model, ab, ce, side.subspace, lam)
    rL = lem8.proportional_on(side, model, ab, ce, lam)
    return {"parallel": rS.decision, "proportional": rL.decision,
            "raw": lem8.parallel_on(side, model, ab, ce, "raw", lam).decision,
            "degenerate": rS.degenerate, "log-odds degenerate": rL.degenerate}


def decide(models, params) -> dict[str, Decision]:
    (model,) = models
    d = decide_side(lem8.TOKENS, model, params)
    return {"parallel_N": d["parallel"], "proportional": d["proportional"], "raw_parallel": d["raw"],
            "degenerate_N": d["degenerate"], "equal_probabilities": d["log-odds degenerate"]}


def instance(kind: str, model: ExactModel, ab, ce, lam, expect=None) -> Instance:
    """An instance of this record: one model, two token pairs, a ratio (and what
    it was built to satisfy, by atom name)."""
    return Instance(kind, (model,), {"ab": tuple(ab), "ce": tuple(ce), "lam": Fraction(lam)}, expect=expect or {})


#: Atom names of the side-neutral promises of :func:`allornone.symbolic.parallel.promised`.
PROMISE_ATOMS = {"raw": "raw_parallel", "parallel": "parallel_N", "proportional": "proportional",
                 "degenerate": "degenerate_N", "log-odds degenerate": "equal_probabilities"}


def sample(rng: random.Random, i: int) -> Instance:
    """The kinds of :data:`allornone.symbolic.parallel.KINDS` in turn: raw
    parallelism planted, parallelism only after projection (a component in
    ``SG ∩ SF^perp``), ``λ = 0``, degenerate pairs, a wrong ratio, and no
    parallelism at all."""
    kind = planting.KINDS[i % len(planting.KINDS)]
    pp = planting.planted_pair(rng, kind)
    expect = {PROMISE_ATOMS[k]: v for k, v in planting.promised(pp).items()}
    return instance(kind, pp.model, pp.ab, pp.ce, pp.lam, expect)


STEPS = (
    ProofStep("log-odds", "log p(a|x)/p(b|x) = f(x)^T (g(a) - g(b)), and g(a) - g(b) lies in SG (likewise c, e)",
              "softmax: the normaliser cancels in a ratio; SG is spanned by all differences of g",
              step_difference(lem8.TOKENS),
              latex=r"\(\log p(a \mid x)/p(b \mid x) = f(x)^\top (g(a) - g(b))\), and \(g(a) - g(b)\) lies in \(SG\) "
                    r"(likewise \(c, e\))",
              reason_latex=r"softmax: the normaliser cancels in a ratio; \(SG\) is spanned by all differences of "
                           r"\(g\)"),
    ProofStep("F4", "f(x)^T (g(a) - g(b)) = (P_M f(x))^T P_N (g(a) - g(b)) (likewise c, e)",
              "F4, since the differences lie in SG", step_f4(lem8.TOKENS), ("F4",),
              latex=r"\(f(x)^\top (g(a) - g(b)) = (P_M f(x))^\top P_N (g(a) - g(b))\) (likewise \(c, e\))",
              reason_latex=r"F4, since the differences lie in \(SG\)"),
    ProofStep("reduce", "log-odds(a,b) - lambda log-odds(c,e) = (P_M f(x))^T w with "
                        "w = P_N(g(a) - g(b)) - lambda P_N(g(c) - g(e)) in N",
              "linearity of the two previous steps", step_reduce(lem8.TOKENS), ("F4",),
              latex=r"the log-odds of \(a\) against \(b\), less \(\lambda\) times those of \(c\) against \(e\), are "
                    r"\((P_M f(x))^\top w\) with \(w = P_N(g(a) - g(b)) - \lambda P_N(g(c) - g(e)) \in N\)"),
    ProofStep("injective", "w in N with (P_M f(x))^T w = 0 for every x is zero; so the log-odds are proportional "
                           "with ratio lambda iff w = 0",
              "F5: the P_M f(x) span M; F2: P_M is injective on N (u in N orthogonal to M is 0)",
              step_injective(lem8.TOKENS), ("F2", "F5"),
              latex=r"\(w \in N\) with \((P_M f(x))^\top w = 0\) for every \(x\) is zero; so the log-odds are "
                    r"proportional with ratio \(\lambda\) if and only if \(w = 0\)",
              reason_latex=r"F5: the \(P_M f(x)\) span \(M\); F2: \(P_M\) is injective on \(N\) (\(u \in N\) "
                           r"orthogonal to \(M\) is \(0\))"),
    ProofStep("ratio", "the ratio found in N equals the ratio of the log-odds (same existence, same uniqueness)",
              "the previous step for every lambda at once", step_ratio(lem8.TOKENS), ("injective",),
              latex=r"the ratio found in \(N\) equals the ratio of the log-odds (same existence, same uniqueness)",
              reason_latex=r"the previous step for every \(\lambda\) at once"),
    ProofStep("degenerate", "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x",
              "the injectivity step with w = P_N(g(c) - g(e))", step_degenerate(lem8.TOKENS), ("injective",),
              latex=r"\(P_N(g(c) - g(e)) = 0\) if and only if \(p(c \mid x) = p(e \mid x)\) for all \(x\)",
              reason_latex=r"the injectivity step with \(w = P_N(g(c) - g(e))\)"),
    ProofStep("raw => N", "raw parallelism with ratio lambda implies parallelism in N with ratio lambda",
              "P_N is linear (the converse fails: see the edges)", step_raw(lem8.TOKENS),
              latex=r"raw parallelism with ratio \(\lambda\) implies parallelism in \(N\) with ratio \(\lambda\)",
              reason_latex=r"\(P_N\) is linear (the converse fails: see the edges)"),
)


# edges: small explicit integer instances

def _edge_hidden_component(rng):
    # SF = span(e1) and SG = R^2: (0, 1) lies in SG ∩ SF^perp.
    m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    return instance("component in SG ∩ SF^perp", m, (1, 0), (2, 0), 2)


_INVISIBLE = ExactModel([[1, 0], [3, 0]], [[0, 0], [1, 0], [0, 1], [0, 2]])
"""``g(2)``, ``g(3)`` differ from ``g(0)`` only along ``(0, 1)``, which no ``f(x)`` sees."""


def _edge_degenerate(rng):
    return instance("degenerate pair, a - b visible", _INVISIBLE, (1, 0), (2, 3), 1)


def _edge_every_ratio(rng):
    return instance("degenerate pairs, every ratio", _INVISIBLE, (2, 0), (3, 0), 5)


def _edge_zero(rng):
    return instance("lambda = 0", _INVISIBLE, (2, 3), (1, 0), 0)


def _edge_raw(rng):
    m = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [2, 4], [-1, 1]])
    return instance("raw parallelism", m, (2, 0), (1, 0), 2)


EDGES = (
    Edge("parallel in N, not raw", "boundary",
         "g(a) - g(b) - 2 (g(c) - g(e)) = (0, 1) lies in SG ∩ SF^perp: raw parallelism fails, yet the log-odds "
         "are proportional and P_N removes the component (the converse of 'raw => N' fails)",
         _edge_hidden_component, {"raw_parallel": False, "parallel_N": True, "proportional": True},
         latex=r"\(g(a) - g(b) - 2\,(g(c) - g(e)) = (0, 1)\) lies in \(SG \cap SF^\perp\): raw parallelism fails, yet "
               r"the log-odds are proportional and \(P_N\) removes the component (the converse of step `raw => N` "
               r"fails)"),
    Edge("degenerate pair", "boundary",
         "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x; with g(a) - g(b) visible no ratio works on "
         "either side", _edge_degenerate,
         {"degenerate_N": True, "equal_probabilities": True, "parallel_N": False, "proportional": False},
         latex=r"\(P_N(g(c) - g(e)) = 0\) if and only if \(p(c \mid x) = p(e \mid x)\) for all \(x\); with "
               r"\(g(a) - g(b)\) visible no ratio works on either side"),
    Edge("every ratio", "boundary",
         "both differences invisible: P_N of both is 0 and the log-odds vanish, so every lambda works (here 5), "
         "though the raw differences (0, 1), (0, 2) have ratio 1/2 only", _edge_every_ratio,
         {"degenerate_N": True, "parallel_N": True, "proportional": True, "raw_parallel": False},
         latex=r"both differences invisible: \(P_N\) of both is \(0\) and the log-odds vanish, so every \(\lambda\) "
               r"works (here \(5\)), though the raw differences \((0, 1)\), \((0, 2)\) have ratio \(1/2\) only"),
    Edge("lambda = 0", "boundary",
         "P_N(g(a) - g(b)) = 0 with g(c) - g(e) visible: parallel with ratio 0, and the log-odds of a against b "
         "vanish", _edge_zero,
         {"degenerate_N": False, "parallel_N": True, "proportional": True, "raw_parallel": False},
         latex=r"\(P_N(g(a) - g(b)) = 0\) with \(g(c) - g(e)\) visible: parallel with ratio \(0\), and the log-odds "
               r"of \(a\) against \(b\) vanish"),
    Edge("raw parallelism", "boundary", "raw parallelism g(a) - g(b) = 2 (g(c) - g(e)) gives parallelism in N and "
         "proportional log-odds with the same ratio", _edge_raw,
         {"raw_parallel": True, "parallel_N": True, "proportional": True},
         latex=r"raw parallelism \(g(a) - g(b) = 2\,(g(c) - g(e))\) gives parallelism in \(N\) and proportional "
               r"log-odds with the same ratio"),
)

RECORD = TheoremRecord(
    coordinate_free=True,
    id="lem8",
    number="Lemma 8",
    title="Parallelism inside N is a property of the distribution",
    summary="P_N(g(a) - g(b)) = lambda P_N(g(c) - g(e)) <=> log p(a|x)/p(b|x) = lambda log p(c|x)/p(e|x) "
            "for every context x.",
    atoms=ATOMS,
    hypotheses=(),
    conclusion=Equivalent(ATOMS["parallel_N"], ATOMS["proportional"]),
    conclusion_text="parallel in N with ratio lambda iff the log-odds are proportional with ratio lambda",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="parallel_N",
    conclusion_latex=r"parallel in \(N\) with ratio \(\lambda\) if and only if the log-odds are proportional with "
                     r"ratio \(\lambda\)",
)
