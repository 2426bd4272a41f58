"""The record of Theorem 15: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.thm15`)."""
from __future__ import annotations

import random
from fractions import Fraction

from sympy import Equivalent, Symbol

from allornone.decision import Decision
from allornone.symbolic import generators as gen
from allornone.symbolic import parallel as planting
from allornone.symbolic.model import ExactModel
from allornone.theorems import lem8, thm5
from allornone.theorems.lem8 import ParallelIn, RawParallel, parallel, proportional_log_odds
from allornone.theorems.engine.logic import Diverse, SameDistribution, model_symbols
from allornone.theorems.engine.record import Edge, Hypothesis, Instance, ProofStep, StepOutcome, TheoremRecord


# -- the record ------------------------------------------------------------

f1_, f2_ = model_symbols(2)
N_, Nt_ = Symbol("N"), Symbol(r"\tilde{N}")
a_, b_, c_, e_, lam_ = (Symbol(s) for s in ("a", "b", "c", "e", "lambda"))
ATOMS = {
    "same_distribution": SameDistribution(f1_, f2_),
    "parallel_N": ParallelIn(N_, f1_, a_, b_, c_, e_, lam_),
    "parallel_N~": ParallelIn(Nt_, f2_, a_, b_, c_, e_, lam_),
    "raw_parallel": RawParallel(f1_, a_, b_, c_, e_, lam_),
    "raw_parallel~": RawParallel(f2_, a_, b_, c_, e_, lam_),
    "diverse": Diverse(f1_),
    "diverse~": Diverse(f2_),
}
"""The statement uses ``same_distribution``, ``parallel_N`` and ``parallel_N~``;
raw parallelism and diversity are decided on every instance too, for the edges."""
HYPOTHESES = (Hypothesis("same distribution", "L = L~ (the two models define the same next-token distribution)",
                         ATOMS["same_distribution"],
                         latex=r"\(L = \tilde L\) (the two models define the same next-token distribution)"),)


def decide(models, params) -> dict[str, Decision]:
    a, b = models
    ab, ce, lam = params["ab"], params["ce"], params["lam"]
    return {
        "same_distribution": thm5.same_distribution(a, b),
        "parallel_N": parallel(a, ab, ce, "N", lam).decision,
        "parallel_N~": parallel(b, ab, ce, "N", lam).decision,
        "raw_parallel": parallel(a, ab, ce, "raw", lam).decision,
        "raw_parallel~": parallel(b, ab, ce, "raw", lam).decision,
        "diverse": a.is_diverse(),
        "diverse~": b.is_diverse(),
    }


def instance(kind: str, model, twin, ab, ce, lam, expect=None) -> Instance:
    return Instance(kind, (model, twin), {"ab": tuple(ab), "ce": tuple(ce), "lam": Fraction(lam)},
                    expect=expect or {})


_KINDS = (("b5", "raw parallel"), ("b5", "parallel after projection only"), ("basis", "raw parallel"),
          ("b5", "wrong lambda"), ("b5", "lambda = 0"), ("b5", "degenerate pair"), ("b5", "not parallel"),
          ("perturbed", "raw parallel"), ("diverse", "raw parallel"), ("diverse", "not parallel"))


def _b5(model, rng):
    k = model.effective_complexity()
    a = rng.randint(0, 2)
    return gen.b5_twin(model, rng, a=a, b=rng.randint(0 if k + a else 1, 2))


def _diverse_pair(rng, kind: str):
    """Diversity on both sides of the equivalence: a diverse model (``d >= 2``)
    with ``g(a) - g(b) = λ (g(c) - g(e))`` planted (``raw parallel``) or not, and
    a diverse twin (a change of basis, or a B.5 twin with ``a = b = 0``: random
    ``T``, ``R`` and offset)."""
    while True:
        d = rng.randint(2, 3)
        n = rng.randint(d + 2, d + 4)
        model = gen.random_model(rng, rng.randint(d, d + 2), n, d, d, d, pivot=rng.randrange(n))
        ab, ce = planting.choose_indices(rng, n)
        lam = rng.choice(planting.RATIOS)
        if kind == "raw parallel":
            model = planting.plant_parallel(model, ab, ce, lam)
        # planting (or chance) can lower rank G_0 below d; draw again then
        if model.is_diverse().holds and (kind == "raw parallel" or not parallel(model, ab, ce, "raw", lam).holds):
            break
    twin = gen.change_of_basis(model, rng=rng) if rng.random() < 0.5 else gen.b5_twin(model, rng, a=0, b=0)
    return model, twin, ab, ce, lam


def sample(rng: random.Random, i: int) -> Instance:
    """A model with a planted pair (see :mod:`allornone.symbolic.parallel`) and
    a twin: a B.5 twin (random ``T``, ``R``, offset and non-linear ``φ``, ``ψ``),
    a change of basis, or -- so that the hypothesis also fails sometimes -- a
    model whose log-odds of token ``a`` (or ``b``) differ in one context; and two
    kinds in which both models are diverse, with raw parallelism planted or
    absent, so that the diversity step is exercised on both of its sides."""
    how, kind = _KINDS[i % len(_KINDS)]
    if how == "diverse":
        return instance(f"both diverse, {kind}", *_diverse_pair(rng, kind))
    pp = planting.planted_pair(rng, kind)
    model = pp.model
    if how == "b5":
        twin = _b5(model, rng)
    elif how == "basis":
        twin = gen.change_of_basis(model, rng=rng)
    else:
        y = pp.ab[0] if pp.ab[0] != model.pivot else pp.ab[1]
        twin = gen.perturb_log_odds(model, rng.randrange(model.m), y, rng.choice([-1, 1, 2, Fraction(1, 2)]))
    # what was built: the twin's relation to the model, and the property planted in the model
    expect = {"same_distribution": how != "perturbed"}
    expect.update({name: v for k, v in planting.promised(pp).items()
                   if (name := {"raw": "raw_parallel", "parallel": "parallel_N"}.get(k))})
    return instance(f"{'B.5 twin' if how == 'b5' else 'change of basis' if how == 'basis' else 'not equivalent'}, "
                    f"{kind}", model, twin, pp.ab, pp.ce, pp.lam, expect)


# proof steps

def _lemma8(which):
    def check(models, params) -> StepOutcome:
        m = models[which]
        ab, ce, lam = params["ab"], params["ce"], params["lam"]
        rN, rL = parallel(m, ab, ce, "N", lam), proportional_log_odds(m, ab, ce, lam)
        return StepOutcome(lem8.agree(m.backend, rN.decision, rL.decision),
                           {"parallel in N" + ("~" if which else ""): rN.verdict, "log-odds": rL.verdict})
    return check


def _step_same_log_odds(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    ab, ce, lam = params["ab"], params["ce"], params["lam"]
    ra, rb = proportional_log_odds(a, ab, ce, lam), proportional_log_odds(b, ab, ce, lam)
    be = a.backend
    # "they are the same numbers", from the definition rather than from L = L~:
    # log p(i|x)/p(j|x) = f(x)^T (g(i) - g(j)) in each model
    same = [be.vanishes(a.F @ a.unembedding_difference(i, j) - b.F @ b.unembedding_difference(i, j),
                        a.F, a.G[[i, j], :].T, b.F, b.G[[i, j], :].T) for (i, j) in (ab, ce)]
    return StepOutcome(Decision.all(same + [lem8.agree(be, ra.decision, rb.decision)]),
                       {"log-odds of f": ra.verdict, "log-odds of f~": rb.verdict})


def _step_transport(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    be = a.backend
    cert = thm5.el_certificate(a, b)
    checks = [cert.el2]
    for (i, j) in (params["ab"], params["ce"]):
        u = a.projector_N @ a.unembedding_difference(i, j)
        ut = b.projector_N @ b.unembedding_difference(i, j)
        # Rounding scale: the rows g(i), g(j) (g~(i), g~(j)) behind each side, not their difference.
        scale = max(be.scale(a.projector_N, a.G[[i, j], :].T), be.scale(cert.B, b.projector_N, b.G[[i, j], :].T))
        checks.append(be.is_zero(u - cert.B @ ut, scale))
    checks.append(be.rank_equals(cert.B @ b.basis_N, b.effective_complexity(), cert.B, b.basis_N)
                  if b.effective_complexity() else be.decision(True))
    return StepOutcome(Decision.all(checks), {"B*": cert.B})


def _step_same_ratio(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    ra, rb = parallel(a, params["ab"], params["ce"]), parallel(b, params["ab"], params["ce"])
    # both ratios re-derived from the definition too (u = lambda v), not only compared
    return StepOutcome(Decision.all([lem8.same_ratio(a.backend, ra, rb), lem8.ratio_by_definition(a.backend, ra),
                                     lem8.ratio_by_definition(b.backend, rb)]),
                       {"lambda in N": ra.lam, "lambda in N~": rb.lam, "unique": ra.unique})


def _step_diverse(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    if not (a.is_diverse().holds and b.is_diverse().holds):
        return StepOutcome.not_applicable("not both models are diverse")
    ab, ce, lam = params["ab"], params["ce"], params["lam"]
    raw, raw_t = parallel(a, ab, ce, "raw", lam), parallel(b, ab, ce, "raw", lam)
    inN, inN_t = parallel(a, ab, ce, "N", lam), parallel(b, ab, ce, "N", lam)
    be = a.backend
    checks = [be.decision(a.structure.k == a.d and b.structure.k == b.d),
              lem8.agree(be, raw.decision, inN.decision), lem8.agree(be, raw_t.decision, inN_t.decision),
              lem8.agree(be, raw.decision, raw_t.decision)]
    return StepOutcome(Decision.all(checks), {"raw": raw.verdict, "raw~": raw_t.verdict, "k": a.structure.k,
                                              "d": a.d})


STEPS = (
    ProofStep("Lemma 8 (f)", "P_N(g(a) - g(b)) = lambda P_N(g(c) - g(e)) iff the log-odds of f are proportional "
              "with ratio lambda", "Lemma 8 applied to (f, g)", _lemma8(0), ("lem8",),
              latex=r"\(P_N(g(a) - g(b)) = \lambda P_N(g(c) - g(e))\) if and only if the log-odds of \(f\) are "
                    r"proportional with ratio \(\lambda\)",
              reason_latex=r"Lemma 8 applied to \((f, g)\)"),
    ProofStep("L = L~", "the log-odds of f are proportional with ratio lambda iff those of f~ are",
              "they are the same numbers: L = L~", _step_same_log_odds,
              latex=r"the log-odds of \(f\) are proportional with ratio \(\lambda\) if and only if those of "
                    r"\(\tilde f\) are",
              reason_latex=r"they are the same numbers: \(L = \tilde L\)"),
    ProofStep("Lemma 8 (f~)", "P~(g~(a) - g~(b)) = lambda P~(g~(c) - g~(e)) iff the log-odds of f~ are proportional "
              "with ratio lambda", "Lemma 8 applied to (f~, g~)", _lemma8(1), ("lem8",),
              latex=r"\(\tilde P_{\tilde N}(\tilde g(a) - \tilde g(b)) = \lambda \tilde P_{\tilde N}(\tilde g(c) - "
                    r"\tilde g(e))\) if and only if the log-odds of \(\tilde f\) are proportional with ratio "
                    r"\(\lambda\)",
              reason_latex=r"Lemma 8 applied to \((\tilde f, \tilde g)\)"),
    ProofStep("via B*", "P_N(g(a) - g(b)) = B* P~(g~(a) - g~(b)) and B* is injective on N~",
              "a second route: EL2 of Theorem 5's certificate, on differences; EL3 makes B*|N~ a bijection",
              _step_transport, ("thm5",),
              latex=r"\(P_N(g(a) - g(b)) = B^* \tilde P_{\tilde N}(\tilde g(a) - \tilde g(b))\) and \(B^*\) is "
                    r"injective on \(\tilde N\)",
              reason_latex=r"a second route: EL2 of Theorem 5's certificate, on differences; EL3 makes "
                           r"\(B^*\vert_{\tilde N}\) a bijection"),
    ProofStep("same ratio", "the ratio found in N equals the ratio found in N~ (same existence and uniqueness)",
              "the chain above holds for every lambda at once", _step_same_ratio, ("Lemma 8 (f)", "Lemma 8 (f~)"),
              latex=r"the ratio found in \(N\) equals the ratio found in \(\tilde N\) (same existence and uniqueness)",
              reason_latex=r"the chain above holds for every \(\lambda\) at once"),
    ProofStep("diversity", "if both models are diverse, N = R^d and N~ = R^d~, so raw parallelism is parallelism "
              "in N (in N~) and is shared",
              "diversity: SF = SG = R^d gives P_F = P_G = I, so M = N = R^d (k = d); then the chain above",
              _step_diverse, ("same ratio",),
              latex=r"if both models are diverse, \(N = \mathbb R^d\) and \(\tilde N = \mathbb R^{\tilde d}\), so raw "
                    r"parallelism is parallelism in \(N\) (in \(\tilde N\)) and is shared",
              reason_latex=r"diversity: \(SF = SG = \mathbb R^d\) gives \(P_F = P_G = I\), so \(M = N = \mathbb R^d\) "
                           r"(\(k = d\)); then the chain above"),
)


# edges: small explicit integer instances

_LINE = ExactModel([[1], [2]], [[0], [1], [2], [3]])
_DIVERSE = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 0], [0, 1], [2, 1]])


def _edge_raw_not_shared(rng):
    # psi = indicator of token 3 moves g~(3) - g~(2) off the line through g~(1) - g~(0).
    twin = gen.b5_twin(_LINE, a=0, b=1, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0], psi=lambda y, g, b: [int(y == 3)])
    return instance("B.5 twin, psi moves g~(a) - g~(b)", _LINE, twin, (3, 2), (1, 0), 1)


def _edge_diverse(rng):
    return instance("diverse, change of basis", _DIVERSE, gen.change_of_basis(_DIVERSE, [[1, 1], [0, 1]]),
                    (3, 2), (1, 0), 2)


def _edge_drop(rng):
    return instance("log-odds of token 3 changed in context 0", _DIVERSE, gen.perturb_log_odds(_DIVERSE, 0, 3, 1),
                    (3, 2), (1, 0), 2)


def _edge_every_ratio(rng):
    twin = gen.b5_twin(lem8.record._INVISIBLE, a=1, b=1, T=[[2]], R=[[1, 0, 0], [0, 1, 0], [1, 0, 1]], c=[1, 0, 0])
    return instance("degenerate pairs, B.5 twin", lem8.record._INVISIBLE, twin, (2, 0), (3, 0), 5)


EDGES = (
    Edge("drop same distribution", "drop",
         "one log-odds entry of token a changed: parallel in N (ratio 2) but not in N~", _edge_drop,
         {"same_distribution": False, "parallel_N": True, "parallel_N~": False}, "same distribution",
         latex=r"one log-odds entry of token \(a\) changed: parallel in \(N\) (ratio \(2\)) but not in \(\tilde N\)"),
    Edge("raw parallelism not shared", "boundary",
         "equivalent B.5 twin with psi(y) = 1 for y = 3, else 0: g(3) - g(2) = g(1) - g(0) but g~(3) - g~(2) = (1, 1) is off "
         "the line of g~(1) - g~(0) = (1, 0); inside N and N~ both are parallel with ratio 1",
         _edge_raw_not_shared, {"same_distribution": True, "raw_parallel": True, "raw_parallel~": False,
                                "parallel_N": True, "parallel_N~": True}, "same distribution",
         latex=r"equivalent B.5 twin with \(\psi(y) = 1\) for \(y = 3\), else \(0\): \(g(3) - g(2) = g(1) - g(0)\) "
               r"but \(\tilde g(3) - \tilde g(2) = (1, 1)\) is off the line of "
               r"\(\tilde g(1) - \tilde g(0) = (1, 0)\); inside \(N\) and \(\tilde N\) both are parallel with ratio "
               r"\(1\)"),
    Edge("diversity: raw parallelism shared", "boundary",
         "both models diverse (Corollary 6), so N = R^d and raw parallelism is parallelism in N: shared, ratio 2",
         _edge_diverse, {"same_distribution": True, "diverse": True, "diverse~": True, "raw_parallel": True,
                         "raw_parallel~": True, "parallel_N": True, "parallel_N~": True}, "same distribution",
         latex=r"both models diverse (Corollary 6), so \(N = \mathbb R^d\) and raw parallelism is parallelism in "
               r"\(N\): shared, ratio \(2\)"),
    Edge("every ratio", "boundary",
         "both differences invisible (P_N of each is 0, p(a|x) = p(b|x), p(c|x) = p(e|x)) in both models: "
         "parallel for every lambda (here 5) in N and in N~", _edge_every_ratio,
         {"same_distribution": True, "parallel_N": True, "parallel_N~": True}, "same distribution",
         latex=r"both differences invisible (\(P_N\) of each is \(0\), \(p(a \mid x) = p(b \mid x)\), "
               r"\(p(c \mid x) = p(e \mid x)\)) in both models: parallel for every \(\lambda\) (here \(5\)) in \(N\) "
               r"and in \(\tilde N\)"),
)

RECORD = TheoremRecord(
    coordinate_free=True,
    id="thm15",
    number="Theorem 15",
    title="Only parallelism inside N is shared by models with the same distribution",
    summary="If L = L~: P_N(g(a) - g(b)) = lambda P_N(g(c) - g(e)) <=> "
            "P~(g~(a) - g~(b)) = lambda P~(g~(c) - g~(e)), with the same lambda.",
    atoms=ATOMS,
    hypotheses=HYPOTHESES,
    conclusion=Equivalent(ATOMS["parallel_N"], ATOMS["parallel_N~"]),
    conclusion_text="parallel in N with ratio lambda iff parallel in N~ with the same ratio lambda",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="parallel_N",
    conclusion_latex=r"parallel in \(N\) with ratio \(\lambda\) if and only if parallel in \(\tilde N\) with the same "
                     r"ratio \(\lambda\)",
)
