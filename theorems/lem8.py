r"""Lemma 8 (parallelism is a property of the distribution).

As encoded here (THEORY section 7): for tokens ``a, b, c, e`` and a ratio ``λ``,

    ``P_N(g(a) - g(b)) = λ P_N(g(c) - g(e))``  ⟺  for every context ``x``:
    ``log p(a|x)/p(b|x) = λ · log p(c|x)/p(e|x)``.

The right-hand side is read off the log-odds matrix ``L``: ``log p(a|x)/p(b|x)
= L[x, a] - L[x, b]``, so it says that column differences of ``L`` are
proportional. :func:`parallel` decides the left side (or *raw* parallelism
``g(a) - g(b) = λ (g(c) - g(e))`` with ``space="raw"``), and
:func:`proportional_log_odds` the right side; both find ``λ`` when it is not
given.

**The degenerate pair.** When ``P_N(g(c) - g(e)) = 0`` (equivalently, by this
lemma, ``p(c|x) = p(e|x)`` for every ``x``) the equation reads
``P_N(g(a) - g(b)) = 0``: it holds for *every* ``λ`` if ``P_N(g(a) - g(b)) = 0``
and for none otherwise. The result then has ``unique = False`` and reports
``λ = 0`` (the minimum-norm solution) when it holds, ``None`` when it does not.
The same rule applies to raw parallelism and to the log-odds side.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
>>> r = parallel(m, (1, 0), (2, 0))
>>> r.verdict, r.lam
('parallel', Fraction(2, 1))
>>> parallel(m, (1, 0), (2, 0), space="raw").verdict
'not parallel'
>>> proportional_log_odds(m, (1, 0), (2, 0)).lam
Fraction(2, 1)
>>> f = m.to_float()
>>> r = parallel(f, (1, 0), (2, 0))
>>> r.verdict, round(r.lam, 12)
('parallel', 2.0)
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Sequence

from sympy import Equivalent, Symbol

from allornone.decision import Decision, Truth
from allornone.errors import InputFormatError, NonFiniteValueError, ShapeError, VocabularyError
from allornone.symbolic import linalg as ql
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems.logic import Predicate, model_symbols
from allornone.theorems.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord

__all__ = ["ParallelIn", "RawParallel", "ProportionalLogOdds", "VanishesIn", "SameProbabilities",
           "ParallelResult", "collinear", "parallel", "proportional_log_odds", "token_pair", "ratio_value",
           "RECORD"]


# -- predicates -------------------------------------------------------------

class ParallelIn(Predicate):
    """``ParallelIn(S, f, a, b, c, e, λ)``: ``P_S(g(a) - g(b)) = λ P_S(g(c) - g(e))``
    for the subspace ``S`` (``N`` of the model ``f``; ``M`` with context indices)."""


class RawParallel(Predicate):
    """``RawParallel(f, a, b, c, e, λ)``: ``g(a) - g(b) = λ (g(c) - g(e))`` (no projection)."""


class ProportionalLogOdds(Predicate):
    """``ProportionalLogOdds(f, a, b, c, e, λ)``: for every context ``x``,
    ``log p(a|x)/p(b|x) = λ log p(c|x)/p(e|x)``."""


class VanishesIn(Predicate):
    """``VanishesIn(S, f, c, e)``: ``P_S(g(c) - g(e)) = 0``."""


class SameProbabilities(Predicate):
    """``SameProbabilities(f, c, e)``: ``p(c|x) = p(e|x)`` for every context ``x``."""


# -- deciding parallelism ---------------------------------------------------

@dataclass
class ParallelResult:
    """Whether ``u = λ v`` for two vectors read off a model.

    ``decision`` is the verdict (exact, or three-valued with its tolerance on
    the float side); ``lam`` the ratio (a :class:`~fractions.Fraction` on exact
    models, a float on float ones; None when not parallel); ``unique`` is False
    when ``v = 0`` (then every ratio works if ``u = 0`` and ``lam`` is reported
    as 0), None when the float side could not decide whether ``v = 0``;
    ``space`` says what ``u`` and ``v`` are (``"N"``, ``"M"``, ``"raw"``,
    ``"log-odds"``).
    """

    decision: Decision
    lam: Any
    unique: bool | None
    space: str
    u: Any = None
    v: Any = None

    @property
    def verdict(self) -> str:
        return {Truth.HOLDS: "parallel", Truth.FAILS: "not parallel", Truth.UNDECIDED: "undecided"}[
            self.decision.truth]

    @property
    def holds(self) -> bool:
        return self.decision.holds


def ratio_value(be, lam):
    """``λ`` in the model's realisation: a :class:`Fraction` on the exact side
    (floats refused there), a finite float on the float side."""
    if be.exact:
        q = ql.to_rational(lam, "lambda")
        return Fraction(int(q.numerator), int(q.denominator))
    try:
        value = float(Fraction(lam)) if isinstance(lam, str) else float(lam)
    except (TypeError, ValueError):
        raise InputFormatError(f"lambda: {lam!r} is not a number") from None
    if not math.isfinite(value):
        raise NonFiniteValueError(f"lambda is {value}; only finite numbers are allowed")
    return value


def _scalar(be, X):
    """The single entry of a ``1 x 1`` matrix."""
    return X.to_fraction_rows()[0][0] if be.exact else float(X[0, 0])


def collinear(be, u, v, scale_u: float = 0.0, scale_v: float = 0.0, lam=None, decided: bool = True,
              space: str = "") -> ParallelResult:
    """Decide ``u = λ v`` for column vectors ``u``, ``v`` of one realisation.

    With ``lam`` given, the equation for that ratio; otherwise whether some
    ``λ`` exists, and which: ``λ = <u, v> / <v, v>`` when ``v != 0`` (the only
    candidate), while for ``v = 0`` the equation is ``u = 0`` and holds for
    every ``λ`` or none (``unique = False``; ``lam = 0`` reported when it
    holds). ``scale_u``/``scale_v`` are the rounding scales of ``u`` and ``v``
    (float side); ``decided = False`` (an undecided float rank behind ``u``,
    ``v``) turns every verdict into undecided.

    >>> u, v = ql.as_qmatrix([[2], [4]]), ql.as_qmatrix([[1], [2]])
    >>> EXACT = __import__("allornone.symbolic.model", fromlist=["EXACT"]).EXACT
    >>> collinear(EXACT, u, v).lam
    Fraction(2, 1)
    >>> collinear(EXACT, u, v, lam=3).verdict
    'not parallel'
    >>> r = collinear(EXACT, v * 0, v * 0)
    >>> r.verdict, r.lam, r.unique
    ('parallel', Fraction(0, 1), False)
    """
    v_zero = be.is_zero(v, scale_v)
    unique = None if v_zero.undecided else not v_zero.holds
    if lam is not None:
        lam = ratio_value(be, lam)
        d = be.is_zero(u - v * lam, max(scale_u, abs(lam) * scale_v))
    elif v_zero.undecided:
        d = Decision(Truth.UNDECIDED, v_zero.residual, v_zero.tolerance, {"why": "cannot tell whether v = 0"})
    elif v_zero.holds:
        d = be.is_zero(u, scale_u)
        lam = ratio_value(be, 0)
    else:
        lam = _scalar(be, u.T @ v) / _scalar(be, v.T @ v)
        d = be.is_zero(u - v * lam, max(scale_u, abs(lam) * scale_v))
    if not decided:
        d = Decision(Truth.UNDECIDED, d.residual, d.tolerance, {"why": "an undecided rank lies behind u and v"})
    return ParallelResult(d, lam if d.holds else None, unique, space, u, v)


def token_pair(model, pair, what: str = "token pair") -> tuple[int, int]:
    """Validate a pair of token indices; :class:`VocabularyError` when out of range."""
    return _index_pair(pair, model.n, what, "token", VocabularyError)


def _index_pair(pair, count: int, what: str, noun: str, err) -> tuple[int, int]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise ShapeError(f"{what}: expected a pair of {noun} indices like (0, 1), got {pair!r}")
    out = []
    for i in pair:
        if isinstance(i, bool) or not isinstance(i, int) and not hasattr(i, "__index__"):
            raise ShapeError(f"{what}: {i!r} is not a {noun} index")
        i = int(i)
        if not 0 <= i < count:
            raise err(f"{what}: {noun} index {i} is out of range (there are {count} {noun}s, 0..{count - 1})")
        out.append(i)
    return out[0], out[1]


def parallel(model, ab, ce, space: str = "N", lam=None) -> ParallelResult:
    r"""Decide ``P_N(g(a) - g(b)) = λ P_N(g(c) - g(e))`` (``space="N"``) or raw
    parallelism ``g(a) - g(b) = λ (g(c) - g(e))`` (``space="raw"``), for the
    given ``lam`` or for some ``λ`` (found and returned). See
    :func:`collinear` for the degenerate case ``P_N(g(c) - g(e)) = 0``.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [3, 0]], [[0, 0], [1, 0], [0, 1], [0, 2]])
    >>> r = parallel(m, (1, 0), (2, 3))            # g(2) - g(3) is invisible
    >>> r.verdict, r.lam, r.unique
    ('not parallel', None, False)
    >>> parallel(m, (2, 0), (3, 0), lam=7).verdict  # both invisible: every ratio
    'parallel'
    >>> parallel(m, (1, 0), (9, 0))
    Traceback (most recent call last):
    ...
    allornone.errors.VocabularyError: token pair (c, e): token index 9 is out of range (there are 4 tokens, 0..3)
    """
    a, b = token_pair(model, ab, "token pair (a, b)")
    c, e = token_pair(model, ce, "token pair (c, e)")
    be = model.backend
    dab, dce = model.unembedding_difference(a, b), model.unembedding_difference(c, e)
    if space == "raw":
        return collinear(be, dab, dce, be.scale(dab), be.scale(dce), lam, True, "raw")
    if space != "N":
        raise InputFormatError(f"space must be 'N' or 'raw', not {space!r}")
    P = model.projector_N
    return collinear(be, P @ dab, P @ dce, be.scale(P, dab), be.scale(P, dce), lam, model.structure.decided, "N")


def proportional_log_odds(model, ab, ce, lam=None) -> ParallelResult:
    """Decide ``log p(a|x)/p(b|x) = λ log p(c|x)/p(e|x)`` for every context
    ``x``, i.e. ``L[:, a] - L[:, b] = λ (L[:, c] - L[:, e])`` for the log-odds
    matrix ``L``, for the given ``lam`` or for some ``λ`` (returned).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [2, 1], [1, 0]])
    >>> proportional_log_odds(m, (1, 0), (2, 0), lam="1/2").verdict
    'not parallel'
    """
    a, b = token_pair(model, ab, "token pair (a, b)")
    c, e = token_pair(model, ce, "token pair (c, e)")
    be = model.backend
    L = model.log_odds()
    s = model.log_odds_scale()
    return collinear(be, L[:, [a]] - L[:, [b]], L[:, [c]] - L[:, [e]], s, s, lam, True, "log-odds")


# -- the record ------------------------------------------------------------

f_, = model_symbols(1)
N_, a_, b_, c_, e_, lam_ = (Symbol(s) for s in ("N", "a", "b", "c", "e", "lambda"))
ATOMS = {
    "parallel_N": ParallelIn(N_, f_, a_, b_, c_, e_, lam_),
    "proportional": ProportionalLogOdds(f_, a_, b_, c_, e_, lam_),
    "raw_parallel": RawParallel(f_, a_, b_, c_, e_, lam_),
    "degenerate_N": VanishesIn(N_, f_, c_, e_),
    "equal_probabilities": SameProbabilities(f_, c_, e_),
}
"""``parallel_N`` and ``proportional`` make the statement; ``raw_parallel``,
``degenerate_N`` and ``equal_probabilities`` are decided (and cross-validated)
on every instance too, for the edges."""


def _params(params: Mapping[str, Any]):
    return params["ab"], params["ce"], params["lam"]


def decide(models, params) -> dict[str, Decision]:
    (model,) = models
    ab, ce, lam = _params(params)
    return {
        "parallel_N": parallel(model, ab, ce, "N", lam).decision,
        "proportional": proportional_log_odds(model, ab, ce, lam).decision,
        "raw_parallel": parallel(model, ab, ce, "raw", lam).decision,
        "degenerate_N": _vanishes_N(model, ce),
        "equal_probabilities": _equal_probabilities(model, ce),
    }


def _vanishes_N(model, ce) -> Decision:
    """``P_N(g(c) - g(e)) = 0``."""
    c, e = token_pair(model, ce, "token pair (c, e)")
    be, P = model.backend, model.projector_N
    dce = model.unembedding_difference(c, e)
    d = be.is_zero(P @ dce, be.scale(P, dce))
    if not model.structure.decided:
        d = Decision(Truth.UNDECIDED, d.residual, d.tolerance)
    return d


def _equal_probabilities(model, ce) -> Decision:
    """``p(c|x) = p(e|x)`` for every ``x``, i.e. ``L[:, c] = L[:, e]``."""
    c, e = token_pair(model, ce, "token pair (c, e)")
    L = model.log_odds()
    return model.backend.is_zero(L[:, [c]] - L[:, [e]], model.log_odds_scale())


def instance(kind: str, model: ExactModel, ab, ce, lam) -> Instance:
    """An instance of this record: one model, two token pairs, a ratio."""
    return Instance(kind, (model,), {"ab": tuple(ab), "ce": tuple(ce), "lam": Fraction(lam)})


def sample(rng: random.Random, i: int) -> Instance:
    """The kinds of :data:`allornone.symbolic.parallel.KINDS` in turn: raw
    parallelism planted, parallelism only after projection (a component in
    ``SG ∩ SF^perp``), ``λ = 0``, degenerate pairs, a wrong ratio, and no
    parallelism at all."""
    kind = planting.KINDS[i % len(planting.KINDS)]
    pp = planting.planted_pair(rng, kind)
    return instance(kind, pp.model, pp.ab, pp.ce, pp.lam)


# proof steps

def _diffs(model, params):
    (a, b), (c, e), lam = _params(params)
    return model.unembedding_difference(a, b), model.unembedding_difference(c, e), ratio_value(model.backend, lam)


def _step_log_odds(models, params) -> StepOutcome:
    (model,) = models
    be, s = model.backend, model.structure
    (a, b), (c, e), _ = _params(params)
    L = model.log_odds()
    checks = []
    for (i, j) in ((a, b), (c, e)):
        dij = model.unembedding_difference(i, j)
        checks.append(be.vanishes(L[:, [i]] - L[:, [j]] - model.F @ dij, model.F, dij))
        checks.append(be.vanishes(s.P_G @ dij - dij, s.P_G, dij))
    return StepOutcome(Decision.all(checks), {"g(a) - g(b)": _diffs(model, params)[0].T})


def _step_f4(models, params) -> StepOutcome:
    (model,) = models
    be, s = model.backend, model.structure
    dab, dce, _ = _diffs(model, params)
    FM = model.F @ s.P_M
    checks = [be.vanishes(model.F @ dd - FM @ (s.P_N @ dd), model.F, s.P_M, s.P_N, dd) for dd in (dab, dce)]
    return StepOutcome(Decision.all(checks), {"F P_M": FM})


def _step_reduce(models, params) -> StepOutcome:
    (model,) = models
    be, s = model.backend, model.structure
    dab, dce, lam = _diffs(model, params)
    L = model.log_odds()
    (a, b), (c, e), _ = _params(params)
    w = s.P_N @ (dab - dce * lam)
    lhs = (L[:, [a]] - L[:, [b]]) - (L[:, [c]] - L[:, [e]]) * lam
    scale = max(model.log_odds_scale(), be.scale(model.F, s.P_M, s.P_N, dab),
                abs(lam) * be.scale(model.F, s.P_M, s.P_N, dce))
    d = be.is_zero(lhs - model.F @ s.P_M @ w, scale)
    return StepOutcome(d, {"w = P_N(g(a) - g(b) - lambda (g(c) - g(e)))": w.T, "lambda": lam})


def _step_injective(models, params) -> StepOutcome:
    (model,) = models
    be, s = model.backend, model.structure
    dab, dce, lam = _diffs(model, params)
    w = s.P_N @ (dab - dce * lam)
    FM = model.F @ s.P_M
    inj = be.rank_equals(FM @ s.basis_N, s.k, model.F, s.P_M, s.basis_N) if s.k else be.decision(True)
    seen = be.is_zero(FM @ w, max(be.scale(model.F, s.P_M, s.P_N, dab), abs(lam) * be.scale(model.F, s.P_M, s.P_N, dce)))
    zero = be.is_zero(w, max(be.scale(s.P_N, dab), abs(lam) * be.scale(s.P_N, dce)))
    agree = be.decision(seen.holds == zero.holds, decided=not (seen.undecided or zero.undecided))
    return StepOutcome(Decision.all([inj, be.vanishes(s.P_N @ w - w, s.P_N, w), agree]),
                       {"k": s.k, "rank(F P_M V_N)": be.rank(FM @ s.basis_N)[0] if s.k else 0,
                        "w is zero": zero.holds})


def _step_ratio(models, params) -> StepOutcome:
    (model,) = models
    ab, ce, _ = _params(params)
    rN, rL = parallel(model, ab, ce, "N"), proportional_log_odds(model, ab, ce)
    same = rN.decision.truth is rL.decision.truth and rN.unique == rL.unique and (rN.lam is None) == (rL.lam is None)
    if same and rN.lam is not None and rN.unique:
        same = rN.lam == rL.lam if model.exact else abs(rN.lam - rL.lam) <= 1e-6 * max(1.0, abs(rN.lam))
    return StepOutcome(model.backend.decision(same), {"lambda in N": rN.lam, "lambda of the log-odds": rL.lam,
                                                      "unique": rN.unique})


def _step_degenerate(models, params) -> StepOutcome:
    (model,) = models
    dN, dp = _vanishes_N(model, params["ce"]), _equal_probabilities(model, params["ce"])
    return StepOutcome(model.backend.decision(dN.truth is dp.truth),
                       {"P_N(g(c) - g(e)) vanishes": dN.truth.value, "p(c|x) = p(e|x) for all x": dp.truth.value})


def _step_raw(models, params) -> StepOutcome:
    (model,) = models
    ab, ce, lam = _params(params)
    if not parallel(model, ab, ce, "raw", lam).holds:
        return StepOutcome.not_applicable("g(a) - g(b) != lambda (g(c) - g(e))")
    return StepOutcome(parallel(model, ab, ce, "N", lam).decision, {"lambda": lam})


STEPS = (
    ProofStep("log-odds", "log p(a|x)/p(b|x) = f(x)^T (g(a) - g(b)), and g(a) - g(b) lies in SG (likewise c, e)",
              "softmax: the normaliser cancels in a ratio; SG is spanned by all differences of g", _step_log_odds),
    ProofStep("F4", "f(x)^T (g(a) - g(b)) = (P_M f(x))^T P_N (g(a) - g(b)) (likewise c, e)",
              "F4, since the differences lie in SG", _step_f4, ("F4",)),
    ProofStep("reduce", "log-odds(a,b) - lambda log-odds(c,e) = (P_M f(x))^T w with "
                        "w = P_N(g(a) - g(b)) - lambda P_N(g(c) - g(e)) in N",
              "linearity of the two previous steps", _step_reduce, ("F4",)),
    ProofStep("injective", "w in N with (P_M f(x))^T w = 0 for every x is zero; so the log-odds are proportional "
                           "with ratio lambda iff w = 0",
              "F5: the P_M f(x) span M; F2: P_M is injective on N (u in N orthogonal to M is 0)",
              _step_injective, ("F2", "F5")),
    ProofStep("ratio", "the ratio found in N equals the ratio of the log-odds (same existence, same uniqueness)",
              "the previous step for every lambda at once", _step_ratio, ("injective",)),
    ProofStep("degenerate", "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x",
              "the injectivity step with w = P_N(g(c) - g(e))", _step_degenerate, ("injective",)),
    ProofStep("raw => N", "raw parallelism with ratio lambda implies parallelism in N with ratio lambda",
              "P_N is linear (the converse fails: see the edges)", _step_raw),
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
         _edge_hidden_component, {"raw_parallel": False, "parallel_N": True, "proportional": True}),
    Edge("degenerate pair", "boundary",
         "P_N(g(c) - g(e)) = 0 iff p(c|x) = p(e|x) for all x; with g(a) - g(b) visible no ratio works on "
         "either side", _edge_degenerate,
         {"degenerate_N": True, "equal_probabilities": True, "parallel_N": False, "proportional": False}),
    Edge("every ratio", "boundary",
         "both differences invisible: P_N of both is 0 and the log-odds vanish, so every lambda works (here 5), "
         "though the raw differences (0, 1), (0, 2) have ratio 1/2 only", _edge_every_ratio,
         {"degenerate_N": True, "parallel_N": True, "proportional": True, "raw_parallel": False}),
    Edge("lambda = 0", "boundary",
         "P_N(g(a) - g(b)) = 0 with g(c) - g(e) visible: parallel with ratio 0, and the log-odds of a against b "
         "vanish", _edge_zero,
         {"degenerate_N": False, "parallel_N": True, "proportional": True, "raw_parallel": False}),
    Edge("raw parallelism", "boundary", "raw parallelism g(a) - g(b) = 2 (g(c) - g(e)) gives parallelism in N and "
         "proportional log-odds with the same ratio", _edge_raw,
         {"raw_parallel": True, "parallel_N": True, "proportional": True}),
)

RECORD = TheoremRecord(
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
)
