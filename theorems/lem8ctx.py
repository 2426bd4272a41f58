r"""The dual of Lemma 8 for contexts -- an addition of this project, not a result
of the paper.

As encoded here: for contexts ``x1, x2, x3, x4`` and a ratio ``λ``,

    ``P_M(f(x1) - f(x2)) = λ P_M(f(x3) - f(x4))``  ⟺
    ``L[x1, :] - L[x2, :] = λ (L[x3, :] - L[x4, :])``,

i.e. for every token ``y``: ``log p(y|x1)/p(y_0|x1) - log p(y|x2)/p(y_0|x2)`` is
``λ`` times the same quantity for ``x3, x4``. (Row differences of ``L`` do not
depend on the pivot.) The proof is Lemma 8's with the roles of ``f`` and ``g``
exchanged: ``f(x) - f(x')`` lies in ``SF``; for ``w`` in ``SF``,
``w^T g_0(y) = (P_M w)^T P_N g_0(y)`` (F4, by linearity); and ``w`` in ``M``
with ``w^T P_N g_0(y) = 0`` for every ``y`` is zero (F5 on the token side, F2).
In particular ``P_M(f(x3) - f(x4)) = 0`` iff the two contexts give the same
next-token distribution, ``p(.|x3) = p(.|x4)``.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[2, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [2, 0]])
>>> r = parallel_contexts(m, (0, 2), (1, 2))
>>> r.verdict, r.lam
('parallel', Fraction(2, 1))
>>> parallel_contexts(m, (0, 2), (1, 2), space="raw").verdict
'not parallel'
>>> proportional_log_odds_rows(m, (0, 2), (1, 2)).lam
Fraction(2, 1)
>>> parallel_contexts(m, (0, 3), (1, 2))
Traceback (most recent call last):
...
allornone.errors.ShapeError: context pair (x1, x2): context index 3 is out of range (there are 3 contexts, 0..2)
"""
from __future__ import annotations

import random
from fractions import Fraction

from sympy import Equivalent, Symbol

from allornone.decision import Decision, Truth
from allornone.errors import InputFormatError, ShapeError
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems.lem8 import ParallelIn, ParallelResult, VanishesIn, _index_pair, collinear, ratio_value
from allornone.theorems.logic import Predicate, model_symbols
from allornone.theorems.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord

__all__ = ["RawParallelContexts", "ProportionalLogOddsRows", "SameConditionals", "context_pair",
           "parallel_contexts", "proportional_log_odds_rows", "RECORD"]


class RawParallelContexts(Predicate):
    """``RawParallelContexts(f, x1, x2, x3, x4, λ)``: ``f(x1) - f(x2) = λ (f(x3) - f(x4))``."""


class ProportionalLogOddsRows(Predicate):
    """``ProportionalLogOddsRows(f, x1, x2, x3, x4, λ)``: ``L[x1] - L[x2] = λ (L[x3] - L[x4])``."""


class SameConditionals(Predicate):
    """``SameConditionals(f, x3, x4)``: ``p(y|x3) = p(y|x4)`` for every token ``y``."""


def context_pair(model, pair, what: str = "context pair") -> tuple[int, int]:
    """Validate a pair of context indices; :class:`ShapeError` when out of range."""
    return _index_pair(pair, model.m, what, "context", ShapeError)


def _context_difference(model, i: int, j: int):
    """``f(x_i) - f(x_j)`` as a ``d x 1`` column."""
    return (model.F[[i], :] - model.F[[j], :]).T


def parallel_contexts(model, x12, x34, space: str = "M", lam=None) -> ParallelResult:
    """Decide ``P_M(f(x1) - f(x2)) = λ P_M(f(x3) - f(x4))`` (``space="M"``) or
    raw ``f(x1) - f(x2) = λ (f(x3) - f(x4))`` (``space="raw"``), for the given
    ``lam`` or for some ``λ`` (returned; the degenerate case follows
    :func:`allornone.theorems.lem8.collinear`)."""
    x1, x2 = context_pair(model, x12, "context pair (x1, x2)")
    x3, x4 = context_pair(model, x34, "context pair (x3, x4)")
    be = model.backend
    d12, d34 = _context_difference(model, x1, x2), _context_difference(model, x3, x4)
    if space == "raw":
        return collinear(be, d12, d34, be.scale(d12), be.scale(d34), lam, True, "raw")
    if space != "M":
        raise InputFormatError(f"space must be 'M' or 'raw', not {space!r}")
    P = model.projector_M
    return collinear(be, P @ d12, P @ d34, be.scale(P, d12), be.scale(P, d34), lam, model.structure.decided, "M")


def proportional_log_odds_rows(model, x12, x34, lam=None) -> ParallelResult:
    """Decide ``L[x1, :] - L[x2, :] = λ (L[x3, :] - L[x4, :])`` (row differences
    of the log-odds matrix), for the given ``lam`` or for some ``λ`` (returned)."""
    x1, x2 = context_pair(model, x12, "context pair (x1, x2)")
    x3, x4 = context_pair(model, x34, "context pair (x3, x4)")
    L = model.log_odds()
    s = model.log_odds_scale()
    return collinear(model.backend, (L[[x1], :] - L[[x2], :]).T, (L[[x3], :] - L[[x4], :]).T, s, s, lam, True,
                     "log-odds rows")


def _vanishes_M(model, x34) -> Decision:
    x3, x4 = context_pair(model, x34, "context pair (x3, x4)")
    be, P = model.backend, model.projector_M
    d34 = _context_difference(model, x3, x4)
    d = be.is_zero(P @ d34, be.scale(P, d34))
    return d if model.structure.decided else Decision(Truth.UNDECIDED, d.residual, d.tolerance)


def _same_conditionals(model, x34) -> Decision:
    x3, x4 = context_pair(model, x34, "context pair (x3, x4)")
    L = model.log_odds()
    return model.backend.is_zero(L[[x3], :] - L[[x4], :], model.log_odds_scale())


# -- the record ------------------------------------------------------------

f_, = model_symbols(1)
M_ = Symbol("M")
x1_, x2_, x3_, x4_, lam_ = (Symbol(s) for s in ("x_1", "x_2", "x_3", "x_4", "lambda"))
ATOMS = {
    "parallel_M": ParallelIn(M_, f_, x1_, x2_, x3_, x4_, lam_),
    "proportional_rows": ProportionalLogOddsRows(f_, x1_, x2_, x3_, x4_, lam_),
    "raw_parallel": RawParallelContexts(f_, x1_, x2_, x3_, x4_, lam_),
    "degenerate_M": VanishesIn(M_, f_, x3_, x4_),
    "same_conditionals": SameConditionals(f_, x3_, x4_),
}


def decide(models, params) -> dict[str, Decision]:
    (model,) = models
    x12, x34, lam = params["x12"], params["x34"], params["lam"]
    return {
        "parallel_M": parallel_contexts(model, x12, x34, "M", lam).decision,
        "proportional_rows": proportional_log_odds_rows(model, x12, x34, lam).decision,
        "raw_parallel": parallel_contexts(model, x12, x34, "raw", lam).decision,
        "degenerate_M": _vanishes_M(model, x34),
        "same_conditionals": _same_conditionals(model, x34),
    }


def instance(kind: str, model: ExactModel, x12, x34, lam) -> Instance:
    return Instance(kind, (model,), {"x12": tuple(x12), "x34": tuple(x34), "lam": Fraction(lam)})


def sample(rng: random.Random, i: int) -> Instance:
    """Context pairs planted as in :func:`allornone.symbolic.parallel.planted_pair`
    (``side="contexts"``): raw parallel, parallel only after projection (a
    component in ``SF ∩ SG^perp``), ``λ = 0``, degenerate, a wrong ratio, none."""
    kind = planting.KINDS[i % len(planting.KINDS)]
    pp = planting.planted_pair(rng, kind, side="contexts")
    return instance(kind, pp.model, pp.ab, pp.ce, pp.lam)


# proof steps

def _setup(models, params):
    (model,) = models
    (x1, x2), (x3, x4) = params["x12"], params["x34"]
    lam = ratio_value(model.backend, params["lam"])
    return model, model.backend, model.structure, _context_difference(model, x1, x2), \
        _context_difference(model, x3, x4), lam


def _step_rows(models, params) -> StepOutcome:
    model, be, s, d12, d34, _ = _setup(models, params)
    (x1, x2), (x3, x4) = params["x12"], params["x34"]
    L = model.log_odds()
    checks = []
    for (i, j), dd in (((x1, x2), d12), ((x3, x4), d34)):
        checks.append(be.vanishes((L[[i], :] - L[[j], :]).T - model.G0 @ dd, model.G0, dd))
        checks.append(be.vanishes(s.P_F @ dd - dd, s.P_F, dd))
    return StepOutcome(Decision.all(checks), {"f(x1) - f(x2)": d12.T})


def _step_f4(models, params) -> StepOutcome:
    model, be, s, d12, d34, _ = _setup(models, params)
    GN = model.G0 @ s.P_N
    checks = [be.vanishes(model.G0 @ dd - GN @ (s.P_M @ dd), model.G0, s.P_N, s.P_M, dd) for dd in (d12, d34)]
    return StepOutcome(Decision.all(checks), {"G_0 P_N": GN})


def _step_injective(models, params) -> StepOutcome:
    model, be, s, d12, d34, lam = _setup(models, params)
    w = s.P_M @ (d12 - d34 * lam)
    GN = model.G0 @ s.P_N
    inj = be.rank_equals(GN @ s.basis_M, s.k, model.G0, s.P_N, s.basis_M) if s.k else be.decision(True)
    scale = max(be.scale(model.G0, s.P_N, s.P_M, d12), abs(lam) * be.scale(model.G0, s.P_N, s.P_M, d34))
    seen = be.is_zero(GN @ w, scale)
    zero = be.is_zero(w, max(be.scale(s.P_M, d12), abs(lam) * be.scale(s.P_M, d34)))
    agree = be.decision(seen.holds == zero.holds, decided=not (seen.undecided or zero.undecided))
    return StepOutcome(Decision.all([inj, be.vanishes(s.P_M @ w - w, s.P_M, w), agree]),
                       {"w = P_M(f(x1) - f(x2) - lambda (f(x3) - f(x4)))": w.T, "w is zero": zero.holds})


def _step_ratio(models, params) -> StepOutcome:
    (model,) = models
    rM = parallel_contexts(model, params["x12"], params["x34"])
    rL = proportional_log_odds_rows(model, params["x12"], params["x34"])
    same = rM.decision.truth is rL.decision.truth and rM.unique == rL.unique and (rM.lam is None) == (rL.lam is None)
    if same and rM.lam is not None and rM.unique:
        same = rM.lam == rL.lam if model.exact else abs(rM.lam - rL.lam) <= 1e-6 * max(1.0, abs(rM.lam))
    return StepOutcome(model.backend.decision(same), {"lambda in M": rM.lam, "lambda of the rows": rL.lam})


def _step_degenerate(models, params) -> StepOutcome:
    (model,) = models
    dM, dp = _vanishes_M(model, params["x34"]), _same_conditionals(model, params["x34"])
    return StepOutcome(model.backend.decision(dM.truth is dp.truth),
                       {"P_M(f(x3) - f(x4)) vanishes": dM.truth.value, "p(.|x3) = p(.|x4)": dp.truth.value})


STEPS = (
    ProofStep("rows", "L[x1] - L[x2] = G_0 (f(x1) - f(x2)), and f(x1) - f(x2) lies in SF (likewise x3, x4)",
              "L = F G_0^T; SF is spanned by the f(x)", _step_rows),
    ProofStep("F4 (dual)", "(f(x1) - f(x2))^T g_0(y) = (P_M (f(x1) - f(x2)))^T P_N g_0(y)",
              "F4 holds for every f(x), hence for every w in SF by linearity", _step_f4, ("F4",)),
    ProofStep("injective", "w in M with w^T P_N g_0(y) = 0 for every y is zero; so the rows are proportional with "
                           "ratio lambda iff w = P_M(f(x1) - f(x2)) - lambda P_M(f(x3) - f(x4)) = 0",
              "F5: the P_N g_0(y) span N; F2: P_N is injective on M", _step_injective, ("F2", "F5")),
    ProofStep("ratio", "the ratio found in M equals the ratio of the log-odds rows",
              "the previous step for every lambda at once", _step_ratio, ("injective",)),
    ProofStep("degenerate", "P_M(f(x3) - f(x4)) = 0 iff p(.|x3) = p(.|x4)",
              "the injectivity step with w = P_M(f(x3) - f(x4)); equal log-odds rows are equal distributions",
              _step_degenerate, ("injective",)),
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
         {"raw_parallel": False, "parallel_M": True, "proportional_rows": True}),
    Edge("degenerate pair", "boundary",
         "P_M(f(x3) - f(x4)) = 0 iff the two contexts give the same next-token distribution; with f(x1) - f(x2) "
         "visible no ratio works", _edge_degenerate,
         {"degenerate_M": True, "same_conditionals": True, "parallel_M": False, "proportional_rows": False}),
    Edge("lambda = 0", "boundary", "P_M(f(x1) - f(x2)) = 0 with f(x3) - f(x4) visible: parallel with ratio 0",
         _edge_zero, {"degenerate_M": False, "parallel_M": True, "proportional_rows": True, "raw_parallel": False}),
)

RECORD = TheoremRecord(
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
)
