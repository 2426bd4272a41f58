"""The record of Theorem 5: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.thm5`)."""
from __future__ import annotations

import random
from fractions import Fraction

from sympy import Equivalent

from allornone.decision import Decision
from allornone.symbolic import generators as gen
from allornone.theorems.engine.logic import ExtendedLinearEquivalent, SameDistribution, model_symbols
from allornone.theorems.engine.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord
from allornone.theorems import thm5


# -- the record ------------------------------------------------------------

f1_, f2_ = model_symbols(2)
ATOMS = {"same_distribution": SameDistribution(f1_, f2_), "el_equivalent": ExtendedLinearEquivalent(f1_, f2_)}


def decide(models, params) -> dict[str, Decision]:
    a, b = models
    return {"same_distribution": thm5.same_distribution(a, b), "el_equivalent": thm5.el_certificate(a, b).decision}


def random_shape(rng: random.Random, max_m=6, max_n=6, max_d=5):
    m, n, d = rng.randint(1, max_m), rng.randint(2, max_n), rng.randint(1, max_d)
    rank_F = rng.randint(0, min(m, d))
    rank_G = rng.randint(0, min(n - 1, d))
    return dict(m=m, n=n, d=d, rank_F=rank_F, rank_G=rank_G, pivot=rng.randrange(n))


def sample(rng: random.Random, i: int) -> Instance:
    """Equivalent pairs (B.5 twins, changes of basis) and non-equivalent ones
    (one log-odds entry changed, the rank changed, the unembeddings scaled), in
    turn. Scaling ``g`` by ``c != 1`` keeps EL1 and EL2 (``A = I``, ``B = I/c``)
    and breaks only EL3, where ``k >= 1``; for ``k = 0`` it changes nothing."""
    model = gen.random_model(rng, **random_shape(rng))
    kind = ("b5 twin", "change of basis", "perturbed log-odds entry", "perturbed rank",
            "scaled unembeddings")[i % 5]
    if kind == "b5 twin":
        k = model.effective_complexity()
        a = rng.randint(0, 2)
        b = rng.randint(0 if (k + a) else 1, 2)
        twin = gen.b5_twin(model, rng, a=a, b=b)
    elif kind == "change of basis":
        twin = gen.change_of_basis(model, rng=rng)
    elif kind == "perturbed log-odds entry":
        y = rng.choice([j for j in range(model.n) if j != model.pivot])
        twin = gen.perturb_log_odds(model, rng.randrange(model.m), y, rng.choice([-2, -1, 1, "1/2", 3]))
    elif kind == "perturbed rank":
        twin = gen.perturb_rank(model, rng)
    else:
        c = rng.choice([2, -1, Fraction(1, 2), 3])
        twin = type(model)(model.F, model.G * c, model.pivot, model.contexts, model.tokens)
    # B.5 twins and changes of basis are equivalent by construction; a changed
    # log-odds entry or rank gives another distribution, and so do scaled
    # unembeddings unless L = 0
    equivalent = not kind.startswith("perturbed") and (kind != "scaled unembeddings"
                                                       or model.effective_complexity() == 0)
    return Instance(kind, (model, twin), expect={"same_distribution": equivalent, "el_equivalent": equivalent})


# proof steps: each checks its claim on the instance it is given

def _step_f4(models, params) -> StepOutcome:
    from allornone.theorems.facts import f4

    a, b = models
    return StepOutcome(Decision.all([f4(a), f4(b)]), {"k": (a.effective_complexity(), b.effective_complexity())})


def _step_if(models, params) -> StepOutcome:
    a, b = models
    cert = thm5.el_certificate(a, b)
    if not cert.decision.holds:
        return StepOutcome.not_applicable("EL1-EL3 do not hold for the canonical certificate")
    be = a.backend
    sb = b.structure
    # (P_M f)^T (P_N g_0) = (A P~ f~)^T (B P~ g~_0) = f~^T P~_M~ A^T B P~_N~ g~_0 = f~^T P~_M~ P~_N~ g~_0
    via_cert = (b.F @ sb.P_M) @ cert.A.T @ cert.B @ (b.G0 @ sb.P_N).T
    d = Decision.all([be.vanishes(a.log_odds() - via_cert, b.F, sb.P_M, cert.A.T, cert.B, sb.P_N, b.G0.T),
                      thm5.same_distribution(a, b)])
    return StepOutcome(d, {"A": cert.A, "B": cert.B})


def _same_left_kernel(be, X, Y, scale) -> Decision:
    """``{c : c^T X = 0} = {c : c^T Y = 0}`` iff ``rank X = rank Y = rank [X Y]``."""
    rx, dx = be.rank(X, scale)
    ry, dy = be.rank(Y, scale)
    rxy, dxy = be.rank(be.hstack(X, Y), scale) if X.shape[1] + Y.shape[1] else (0, True)
    return be.decision(rx == ry == rxy, decided=dx and dy and dxy, ranks=(rx, ry, rxy))


def _step_kernels(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    be = a.backend
    FA, FB = a.F @ a.projector_M, b.F @ b.projector_M
    L = a.log_odds()
    scale = max(be.scale(a.F), be.scale(b.F), a.log_odds_scale(), b.log_odds_scale())
    d = Decision.all([_same_left_kernel(be, FA, L, scale), _same_left_kernel(be, FB, b.log_odds(), scale),
                      _same_left_kernel(be, FA, FB, scale)])
    return StepOutcome(d, {"rank L": be.rank(L)[0]})


def _step_el(which):
    def check(models, params) -> StepOutcome:
        a, b = models
        if not thm5.same_distribution(a, b).holds:
            return StepOutcome.not_applicable("L != L~")
        cert = thm5.el_certificate(a, b)
        dec = {"EL1": cert.el1, "EL2": cert.el2, "EL3": cert.el3}[which]
        # The certificate's own verdict decides the conclusion; the step also
        # re-derives the condition another way, so that it can disagree.
        again = thm5.el_conditions_on_bases(a, b, cert.A, cert.B)[which]
        return StepOutcome(Decision.all([dec, again]),
                           {"A*" if which == "EL1" else "B*" if which == "EL2" else "residual":
                            cert.A if which == "EL1" else cert.B if which == "EL2" else dec.residual,
                            "re-derived": again.truth.value})
    return check


def _step_k(models, params) -> StepOutcome:
    a, b = models
    if not thm5.same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    ka, kb = a.effective_complexity(), b.effective_complexity()
    return StepOutcome(a.backend.decision(ka == kb, decided=a.structure.decided and b.structure.decided),
                       {"k": ka, "k~": kb, "d": a.d, "d~": b.d})


STEPS = (
    ProofStep("F4", "L = (F P_M)(G_0 P_N)^T for both models",
              "F3: what f has off M and g_0 off N never reaches a logit", _step_f4, ("F3", "F4"),
              latex=r"\(L = (F P_M)(G_0 P_N)^\top\) for both models",
              reason_latex=r"F3: what \(f\) has off \(M\) and \(g_0\) off \(N\) never reaches a logit"),
    ProofStep("<=", "EL1-EL3 imply L = L~",
              "substitute EL1, EL2 into F4, then EL3 removes A and B", _step_if, ("F4",),
              latex=r"EL1–EL3 imply \(L = \tilde L\)",
              reason_latex=r"substitute EL1, EL2 into F4, then EL3 removes \(A\) and \(B\)"),
    ProofStep("kernels", "sum_x c_x P_M f(x) = 0 <=> sum_x c_x L[x,:] = 0 <=> sum_x c_x P~ f~(x) = 0",
              "F4 and F6: M is exactly what the distribution sees; L = L~", _step_kernels, ("F4", "F6"),
              latex=r"\(\sum_x c_x P_M f(x) = 0\) \(\iff\) \(\sum_x c_x L[x,:] = 0\) \(\iff\) "
                    r"\(\sum_x c_x \tilde P_{\tilde M} \tilde f(x) = 0\)",
              reason_latex=r"F4 and F6: \(M\) is exactly what the distribution sees; \(L = \tilde L\)"),
    ProofStep("EL1", "A* = (F P_M)^T ((F~ P~)^T)^+ satisfies EL1",
              "the rows of F P_M and F~ P~ obey the same linear relations (previous step)", _step_el("EL1"),
              ("kernels",),
              latex=r"\(A^* = (F P_M)^\top ((\tilde F \tilde P_{\tilde M})^\top)^+\) satisfies EL1",
              reason_latex=r"the rows of \(F P_M\) and \(\tilde F \tilde P_{\tilde M}\) obey the same linear "
                           r"relations (previous step)"),
    ProofStep("EL2", "B* = (G_0 P_N)^T ((G~_0 P~)^T)^+ satisfies EL2", "the token-side twin of the two previous steps",
              _step_el("EL2"), ("F4", "F6"),
              latex=r"\(B^* = (G_0 P_N)^\top ((\tilde G_0 \tilde P_{\tilde N})^\top)^+\) satisfies EL2"),
    ProofStep("EL3", "P~_M~ A*^T B* P~_N~ = P~_M~ P~_N~",
              "F4 and L = L~ give (A* u)^T (B* v) = u^T v on M~ x N~, and F5 says these span", _step_el("EL3"),
              ("F4", "F5", "EL1", "EL2"),
              latex=r"\(\tilde P_{\tilde M} A^{*\top} B^* \tilde P_{\tilde N} = \tilde P_{\tilde M} \tilde P_{\tilde "
                    r"N}\)",
              reason_latex=r"F4 and \(L = \tilde L\) give \((A^* u)^\top (B^* v) = u^\top v\) on "
                           r"\(\tilde M \times \tilde N\), and F5 says these span"),
    ProofStep("k", "k = k~ (while d and d~ may differ)", "F1: k = rank L", _step_k, ("F1",),
              latex=r"\(k = \tilde k\) (while \(d\) and \(\tilde d\) may differ)",
              reason_latex=r"F1: \(k = \operatorname{rank} L\)"),
)


def _edge_k0(rng):
    model = gen.random_model(rng, m=3, n=3, d=2, rank_F=2, rank_G=0)
    return Instance("k = 0", (model, gen.b5_twin(model, rng, a=1, b=1)))


def _edge_dims(rng):
    model = gen.random_model(rng, m=4, n=4, d=2, rank_F=2, rank_G=2)
    return Instance("d != d~", (model, gen.b5_twin(model, rng, a=2, b=1)))


def _edge_pivot(rng):
    model = gen.random_model(rng, m=4, n=4, d=3, rank_F=2, rank_G=3)
    twin = gen.b5_twin(model, rng, a=1, b=1)
    return Instance("pivot changed", (model.with_pivot(2), twin.with_pivot(2)))


EDGES = (
    Edge("k = 0", "boundary", "all logits equal (G_0 = 0): M = N = {0}; any model with L = 0 is equivalent",
         _edge_k0, {"same_distribution": True, "el_equivalent": True},
         latex=r"all logits equal (\(G_0 = 0\)): \(M = N = \{0\}\); any model with \(L = 0\) is equivalent"),
    Edge("d != d~", "boundary", "equivalent models of different dimensions (B.5 with extra coordinates)",
         _edge_dims, {"same_distribution": True, "el_equivalent": True}),
    Edge("pivot change", "boundary", "the same pair with another pivot token: the verdict does not change",
         _edge_pivot, {"same_distribution": True, "el_equivalent": True}),
)

RECORD = TheoremRecord(
    coordinate_free=True,
    id="thm5",
    number="Theorem 5",
    title="Identifiability: same distribution iff extended linear equivalence",
    summary="For two models on the same X and A: L = L~ <=> (f, g) ~EL (f~, g~).",
    atoms=ATOMS,
    hypotheses=(),
    conclusion=Equivalent(ATOMS["same_distribution"], ATOMS["el_equivalent"]),
    conclusion_text="p_{f,g} = p_{f~,g~} (L = L~) iff EL1-EL3 hold for some A, B",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="same_distribution",
    conclusion_latex=r"\(p_{f,g} = p_{\tilde f, \tilde g}\) (that is, \(L = \tilde L\)) if and only if EL1–EL3 hold "
                     r"for some \(A, B\)",
)


