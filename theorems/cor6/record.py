"""The record of Corollary 6: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.cor6`)."""
from __future__ import annotations

import random

from sympy import And, Equivalent

from allornone.decision import Decision, Truth
from allornone.symbolic import generators as gen
from allornone.symbolic.model import ExactModel
from allornone.theorems import thm5
from allornone.theorems.engine.logic import Diverse, LinearlyIdentified, SameDimension, SameDistribution, model_symbols
from allornone.theorems.engine.record import Edge, Hypothesis, Instance, ProofStep, StepOutcome, TheoremRecord
from allornone.theorems import cor6


# -- the record ------------------------------------------------------------

f1_, f2_ = model_symbols(2)
ATOMS = {
    "same_dimension": SameDimension(f1_, f2_),
    "diverse": Diverse(f1_),
    "diverse~": Diverse(f2_),
    "same_distribution": SameDistribution(f1_, f2_),
    "linearly_identified": LinearlyIdentified(f1_, f2_),
}
HYPOTHESES = (
    Hypothesis("same dimension", "d = d~ (implied by the diversity of both models when L = L~; kept as the paper "
               "states it)", ATOMS["same_dimension"],
               implied="both models diverse and L = L~ force d = k = k~ = d~ (F1); with d != d~ and both diverse, "
                       "L != L~ and no square A exists, so both sides of the equivalence are false",
               latex=r"\(d = \tilde d\) (implied by the diversity of both models when \(L = \tilde L\); kept as the "
                     r"paper states it)"),
    Hypothesis("diversity", "both models diverse: SF = SG = R^d and SF~ = SG~ = R^d~ (one suffices: with d = d~ "
               "and L = L~ one diverse model makes the other diverse, k = d; with L != L~ no A exists either way)",
               And(ATOMS["diverse"], ATOMS["diverse~"]),
               latex=r"both models diverse: \(SF = SG = \mathbb R^d\) and "
                     r"\(\widetilde{SF} = \widetilde{SG} = \mathbb R^{\tilde d}\) (one suffices: with "
                     r"\(d = \tilde d\) and \(L = \tilde L\) one diverse model makes the other diverse, \(k = d\); "
                     r"with \(L \ne \tilde L\) no \(A\) exists either way)"),
)


def decide(models, params) -> dict[str, Decision]:
    a, b = models
    return {
        "same_dimension": a.backend.decision(a.d == b.d, d=a.d, d_tilde=b.d),
        "diverse": a.is_diverse(),
        "diverse~": b.is_diverse(),
        "same_distribution": thm5.same_distribution(a, b),
        "linearly_identified": cor6.linear_identification(a, b).decision,
    }


def _diverse_model(rng, d=None):
    d = d or rng.randint(1, 3)
    m, n = rng.randint(d, d + 3), rng.randint(d + 1, d + 4)
    return gen.random_model(rng, m, n, d, d, d, pivot=rng.randrange(n))


def _nudge(model, rng):
    """Change one unembedding entry (keeps d; diversity survives generically)."""
    G = model.G.to_fraction_rows()
    y = rng.choice([j for j in range(model.n) if j != model.pivot])
    G[y][rng.randrange(model.d)] += rng.choice([-1, 1])
    return type(model)(model.F, G, model.pivot)


def _one_diverse(rng):
    """A diverse model and a model of the same dimension that is not (rank of
    ``F`` or of ``G_0`` below ``d``): the case where only one is diverse."""
    model = _diverse_model(rng, rng.randint(1, 3))
    d = model.d
    low_F = rng.random() < 0.5
    other = gen.random_model(rng, model.m, model.n, d, d - 1 if low_F else d, d if low_F else d - 1,
                             pivot=model.pivot)
    return model, other


def sample(rng: random.Random, i: int) -> Instance:
    kind = ("diverse, change of basis", "diverse, nudged", "not diverse, same d (B.5)",
            "diverse vs other d (B.5)", "one diverse, same d")[i % 5]
    # each kind states what it built: a change of basis is an invertible A; a
    # nudged unembedding entry changes L (F has full column rank); B.5 twins keep L
    # and, with a + b >= 1 extra coordinates, cannot be diverse; a diverse model
    # (k = d) and one that is not (k < d) have log-odds of different ranks
    if kind == "one diverse, same d":
        model, other = _one_diverse(rng)
        pair = (model, other) if rng.random() < 0.5 else (other, model)
        return Instance(kind, pair, expect={"same_distribution": False, "same_dimension": True,
                                            "diverse": pair[0] is model, "diverse~": pair[1] is model})
    if kind == "diverse, change of basis":
        model = _diverse_model(rng)
        return Instance(kind, (model, gen.change_of_basis(model, rng=rng)),
                        expect={"same_distribution": True, "same_dimension": True, "linearly_identified": True,
                                "diverse": True, "diverse~": True})
    if kind == "diverse, nudged":
        model = _diverse_model(rng)
        return Instance(kind, (model, _nudge(model, rng)), expect={"same_distribution": False, "diverse": True})
    if kind == "not diverse, same d (B.5)":
        # every other one with G_0 = 0 (k = 0), so that case is met too
        model = gen.random_model(rng, 4, 4, 3, rank_F=2, rank_G=0 if i % 10 == 7 else 2)
        k = model.effective_complexity()
        a = rng.randint(0, 3 - k)
        return Instance(kind, (model, gen.b5_twin(model, rng, a=a, b=3 - k - a)),
                        expect={"same_distribution": True, "same_dimension": True, "diverse": False,
                                "diverse~": False})
    model = _diverse_model(rng, rng.randint(1, 2))
    return Instance(kind, (model, gen.b5_twin(model, rng, a=rng.randint(1, 2), b=rng.randint(0, 1))),
                    expect={"same_distribution": True, "same_dimension": False, "diverse": True,
                            "diverse~": False})


def _step_dims(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    if a.d != b.d or not (a.is_diverse().holds or b.is_diverse().holds):
        return StepOutcome.not_applicable("needs d = d~ and one diverse model")
    be = a.backend
    return StepOutcome(Decision.all([be.decision(a.effective_complexity() == a.d), b.is_diverse(), a.is_diverse()]),
                       {"k": a.effective_complexity(), "d": a.d})


def _step_mn(models, params) -> StepOutcome:
    a, b = models
    if not (a.is_diverse().holds and b.is_diverse().holds):
        return StepOutcome.not_applicable("needs both models diverse")
    be = a.backend
    return StepOutcome(Decision.all([be.vanishes(a.projector_M - be.eye(a.d)), be.vanishes(a.projector_N - be.eye(a.d)),
                                     be.vanishes(b.projector_M - be.eye(b.d))]), {"P_M": a.projector_M})


def _step_square(models, params) -> StepOutcome:
    a, b = models
    hyp = a.d == b.d and a.is_diverse().holds and b.is_diverse().holds
    if not (hyp and thm5.same_distribution(a, b).holds):
        return StepOutcome.not_applicable("needs the hypotheses and L = L~")
    be = a.backend
    cert = thm5.el_certificate(a, b)
    A, B = cert.A, cert.B
    return StepOutcome(Decision.all([cert.decision, be.rank_equals(A, a.d),
                                     be.vanishes(A.T @ B - be.eye(a.d), A.T, B)]), {"A*": A})


def _step_identifies(models, params) -> StepOutcome:
    a, b = models
    hyp = a.d == b.d and a.is_diverse().holds and b.is_diverse().holds
    if not (hyp and thm5.same_distribution(a, b).holds):
        return StepOutcome.not_applicable("needs the hypotheses and L = L~")
    be = a.backend
    ident = cor6.linear_identification(a, b)
    if not ident.decision.holds or ident.A is None:
        # (a map found in other units, whose entries leave binary64 in the
        # models' own, is not handed back: there is nothing to check here)
        return StepOutcome(ident.decision if not ident.decision.holds else
                           Decision(Truth.UNDECIDED, ident.decision.residual, ident.decision.tolerance),
                           {"reason": ident.reason})
    A = ident.A
    # the A returned is checked against the claim itself, row by row:
    # f(x) = A f~(x) and g_0(y) = A^{-T} g~_0(y), i.e. F^T = A F~^T and G~_0 = G_0 A
    return StepOutcome(Decision.all([be.rank_equals(A, a.d, A),
                                     be.vanishes(a.F.T - A @ b.F.T, A, b.F.T),
                                     be.vanishes(b.G0 - a.G0 @ A, a.G0, A)]), {"A": A})


def _step_same_d(models, params) -> StepOutcome:
    a, b = models
    if not (a.is_diverse().holds and b.is_diverse().holds and thm5.same_distribution(a, b).holds):
        return StepOutcome.not_applicable("needs both models diverse and L = L~")
    return StepOutcome(a.backend.decision(a.d == a.effective_complexity() == b.effective_complexity() == b.d),
                       {"d": a.d, "k": a.effective_complexity(), "k~": b.effective_complexity(), "d~": b.d})


def _step_one_diverse(models, params) -> StepOutcome:
    a, b = models
    da, db = a.is_diverse(), b.is_diverse()
    if a.d != b.d or da.holds == db.holds or da.undecided or db.undecided:
        return StepOutcome.not_applicable("needs d = d~ and exactly one model diverse")
    same, ident = thm5.same_distribution(a, b), cor6.linear_identification(a, b).decision
    be = a.backend
    return StepOutcome(Decision.all([be.decision(same.fails, decided=not same.undecided),
                                     be.decision(ident.fails, decided=not ident.undecided)]),
                       {"L = L~": same.truth.value, "f = A f~": ident.truth.value})


STEPS = (
    ProofStep("d = d~ implied", "if both models are diverse and L = L~, then d = d~",
              "diversity gives k = d and k~ = d~ (M = SF = R^d), and k = rank L = k~ (F1)", _step_same_d, ("F1",),
              latex=r"if both models are diverse and \(L = \tilde L\), then \(d = \tilde d\)",
              reason_latex=r"diversity gives \(k = d\) and \(\tilde k = \tilde d\) (\(M = SF = \mathbb R^d\)), and "
                           r"\(k = \operatorname{rank} L = \tilde k\) (F1)"),
    ProofStep("k = d", "with d = d~ and L = L~, one diverse model makes the other diverse",
              "k = rank L is shared (F1) and k = d forces SF = SG = R^d", _step_dims, ("F1",),
              latex=r"with \(d = \tilde d\) and \(L = \tilde L\), one diverse model makes the other diverse",
              reason_latex=r"\(k = \operatorname{rank} L\) is shared (F1) and \(k = d\) forces "
                           r"\(SF = SG = \mathbb R^d\)"),
    ProofStep("one diverse suffices", "if d = d~ and exactly one model is diverse, then L != L~ and no A relates "
              "them: the conclusion holds with both sides false",
              "the step k = d: L = L~ would make the other model diverse too", _step_one_diverse, ("k = d",),
              latex=r"if \(d = \tilde d\) and exactly one model is diverse, then \(L \ne \tilde L\) and no \(A\) "
                    r"relates them: the conclusion holds with both sides false",
              reason_latex=r"the step `k = d`: \(L = \tilde L\) would make the other model diverse too"),
    ProofStep("M = N = R^d", "under diversity P_M = P_N = I", "M = Im(P_F P_G) = Im(I I)", _step_mn, ("F1",),
              latex=r"under diversity \(P_M = P_N = I\)",
              reason_latex=r"\(M = \operatorname{Im}(P_F P_G) = \operatorname{Im}(I\, I)\)"),
    ProofStep("A* invertible", "Theorem 5's certificate is square and invertible with A*^T B* = I",
              "EL1 with P_M = I is f = A* f~; EL3 with P~ = I gives B* = A*^{-T}", _step_square, ("thm5",),
              latex=r"Theorem 5's certificate is square and invertible with \(A^{*\top} B^* = I\)",
              reason_latex=r"EL1 with \(P_M = I\) is \(f = A^* \tilde f\); EL3 with \(\tilde P = I\) gives "
                           r"\(B^* = A^{*-\top}\)"),
    ProofStep("A identifies", "the invertible A found satisfies f(x) = A f~(x) and g_0(y) = A^{-T} g~_0(y)",
              "the previous step: such an A exists; checked on the A returned", _step_identifies,
              ("A* invertible",),
              latex=r"the invertible \(A\) found satisfies \(f(x) = A \tilde f(x)\) and "
                    r"\(g_0(y) = A^{-\top} \tilde g_0(y)\)",
              reason_latex=r"the previous step: such an \(A\) exists; checked on the \(A\) returned"),
)


def _edge_nondiverse(rng):
    # rank F = 1 < d = 2. A fixed small instance (a random one can shrink no further than
    # entries above the size bound): T = R = I, no offset, and psi = [y == 2], which is no
    # linear function of g_0 (g_0(1) = e_0, g_0(2) = e_1, g_0(3) = e_0 + e_1).
    model = ExactModel([[1, 0], [2, 0], [1, 0]], [[0, 0], [1, 0], [0, 1], [1, 1], [2, 1]])
    twin = gen.b5_twin(model, a=0, b=1, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0], psi=lambda y, g, b: [int(y == 2)])
    return Instance("drop diversity", (model, twin))


def _edge_dims(rng):
    a = ExactModel([[1], [2]], [[0], [1], [3]])
    b = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]])
    return Instance("both diverse, d != d~", (a, b))


def _edge_one_diverse(rng):
    a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]])
    b = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [2, 0]])
    return Instance("one diverse, same d", (a, b))


def _edge_boundary(rng):
    model = gen.random_model(rng, m=1, n=2, d=1, rank_F=1, rank_G=1)
    return Instance("d = 1, minimal diverse", (model, gen.change_of_basis(model, [[-1]])))


EDGES = (
    Edge("drop diversity", "drop", "equivalent models of the same dimension, not diverse: no invertible A relates them",
         _edge_nondiverse, {"same_dimension": True, "diverse": False, "same_distribution": True,
                            "linearly_identified": False}, "diversity",
         latex=r"equivalent models of the same dimension, not diverse: no invertible \(A\) relates them"),
    Edge("d = d~ is implied", "boundary",
         "both models diverse with d = 1, d~ = 2: d = k = rank L, so L != L~ and no square A exists; the conclusion "
         "holds with both sides false. d = d~ never fails alone: the other hypotheses imply it where it matters",
         _edge_dims, {"same_dimension": False, "diverse": True, "diverse~": True, "same_distribution": False,
                      "linearly_identified": False}, "same dimension",
         latex=r"both models diverse with \(d = 1\), \(\tilde d = 2\): \(d = k = \operatorname{rank} L\), so "
               r"\(L \ne \tilde L\) and no square \(A\) exists; the conclusion holds with both sides false. "
               r"\(d = \tilde d\) never fails alone: the other hypotheses imply it where it matters"),
    Edge("one diverse model suffices", "boundary",
         "d = d~ = 2, f diverse, f~ not (rank G~_0 = 1): L != L~ (rank 2 vs 1) and no A relates them; the "
         "conclusion holds although the paper's hypothesis (both diverse) does not",
         _edge_one_diverse, {"same_dimension": True, "diverse": True, "diverse~": False, "same_distribution": False,
                             "linearly_identified": False}, "diversity",
         latex=r"\(d = \tilde d = 2\), \(f\) diverse, \(\tilde f\) not (\(\operatorname{rank} \tilde G_0 = 1\)): "
               r"\(L \ne \tilde L\) (rank 2 against 1) and no \(A\) relates them; the conclusion holds although the "
               r"paper's hypothesis (both diverse) does not"),
    Edge("minimal diverse", "boundary", "d = 1, one context, two tokens: diversity holds with nothing to spare",
         _edge_boundary, {"same_dimension": True, "diverse": True, "diverse~": True, "same_distribution": True,
                          "linearly_identified": True}, "diversity",
         latex=r"\(d = 1\), one context, two tokens: diversity holds with nothing to spare"),
)

RECORD = TheoremRecord(
    coordinate_free=True,
    id="cor6",
    number="Corollary 6",
    title="Diversity: linear identifiability up to an invertible matrix",
    summary="If d = d~ and both models are diverse: L = L~ <=> f = A f~, g_0 = A^{-T} g~_0 for an invertible A. "
            "One diverse model suffices (checked exactly), and d = d~ is implied by diversity and L = L~.",
    atoms=ATOMS,
    hypotheses=HYPOTHESES,
    conclusion=Equivalent(ATOMS["same_distribution"], ATOMS["linearly_identified"]),
    conclusion_text="L = L~ iff f = A f~ and g_0 = A^{-T} g~_0 for an invertible d x d matrix A",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="same_distribution",
    conclusion_latex=r"\(L = \tilde L\) if and only if \(f = A \tilde f\) and \(g_0 = A^{-\top} \tilde g_0\) for an "
                     r"invertible \(d \times d\) matrix \(A\)",
)
