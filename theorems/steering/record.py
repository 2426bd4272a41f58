"""The record of linear steering: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.steering`)."""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
from sympy import And, Equivalent, Symbol

from allornone.decision import Decision, Truth
from allornone.numeric import transport as ftr
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic import relational as rel
from allornone.symbolic.model import ExactModel
from allornone.theorems import lem8, thm5, thm14
from allornone.theorems.engine.logic import Predicate, SameDistribution, model_symbols
from allornone.theorems.readouts import TokenPairs, tokens
from allornone.theorems.engine.record import Edge, Hypothesis, Instance, ProofStep, StepOutcome, TheoremRecord
from allornone.theorems import steering


# -- the record -----------------------------------------------------------------------------

class Steered(Predicate):
    """``P_Γ(f(s⊕q) - f(s))`` is the same for every pair of the query."""


class SteeringEvidence(Predicate):
    """At least two pairs (one difference is always a translation) and neither
    readout is ``{0}``: ``Γ~ != {0}``, ``Γ_T != {0}``."""


class TransportedMapIsIdentity(Predicate):
    """Theorem 14's transport of the translation reading ``M`` is ``P_Γ~`` itself."""


f1_, f2_ = model_symbols(2)
S_ = Symbol("S")
GAMMA_, GAMMA_T = Symbol(r"\Gamma"), Symbol(r"\tilde{\Gamma}")
GT1_, GT2_ = Symbol(r"\Gamma_T"), Symbol(r"\tilde{\Gamma}_T")
R1_, R2_ = Symbol("R^d"), Symbol(r"R^{\tilde d}")

ATOMS = {
    "same_distribution": SameDistribution(f1_, f2_),
    "gamma_in_N": thm14.record.GammaInN(f1_, GAMMA_),
    "evidence": SteeringEvidence(f1_, f2_, S_, GAMMA_),
    "steered": Steered(f1_, S_, GAMMA_),
    "steered~": Steered(f2_, S_, GAMMA_T),
    "steered_T": Steered(f1_, S_, GT1_),
    "steered_T~": Steered(f2_, S_, GT2_),
    "raw_steered": Steered(f1_, S_, R1_),
    "raw_steered~": Steered(f2_, S_, R2_),
    "identity~": TransportedMapIsIdentity(f1_, f2_, GAMMA_),
}
"""The statement uses the first seven; raw steering (``Γ = R^d``) and whether
the transported map is literally the identity are decided too, for the edges."""

HYPOTHESES = (
    Hypothesis("same distribution", "L = L~ (Theorem 5: the models are ~EL, with certificate A*, B*)",
               ATOMS["same_distribution"],
               latex=r"\(L = \tilde L\) (Theorem 5: the models are \(\sim_{EL}\), with certificate \(A^*, B^*\))"),
    Hypothesis("Γ ⊆ N", "the readout subspace lies in N; Γ~ := (B*|Ñ)^{-1}(Γ) (not needed by the token form: "
               "Γ_T ⊆ N always)", ATOMS["gamma_in_N"],
               latex=r"the readout subspace lies in \(N\); \(\tilde\Gamma := (B^*\vert_{\tilde N})^{-1}(\Gamma)\) "
                     r"(not needed by the token form: \(\Gamma_T \subseteq N\) always)"),
    Hypothesis("evidence", "(evidence filter, not needed for truth) at least two pairs, Γ~ != {0} and Γ_T != {0}, "
               "so that no side holds vacuously", ATOMS["evidence"],
               evidence_only="the proof does not use it: a single pair is always a translation, and an empty "
                             "readout is translated in every model, so where it fails both sides hold",
               latex=r"(evidence filter, not needed for truth) at least two pairs, \(\tilde\Gamma \ne \{0\}\) and "
                     r"\(\Gamma_T \ne \{0\}\), so that no side holds vacuously"),
)


@dataclass
class _Analysis:
    cert: Any
    same: Decision
    in_N: Decision
    gamma_t: Any
    gt_decided: bool
    tokens: TokenPairs
    results: dict
    criteria: tuple
    evidence: Decision
    transported: steering.TransportedSteering | None
    gt_error: float = 0.0


def _analyse(models, params) -> _Analysis:
    a, b = models
    thm14._check_model(a)
    a.check_comparable(b)
    pairs = thm14._check_pairs(a, params["pairs"])
    gamma = thm14._as_matrix(a, params["gamma"], "gamma")
    T = tokens(params["tokens"])
    cert = thm5.el_certificate(a, b)
    gamma_t, gt_decided, gt_error, gt_readout = thm14._transport_gamma(a, b, gamma, cert)
    be = a.backend
    same, in_N = thm5.same_distribution(a, b), thm14.gamma_in_N(a, gamma)
    results = {
        "steered": steering.steering(a, pairs, gamma),
        "steered~": steering.steering(b, pairs, gamma_t, gt_readout, gamma_in_N=True),
        "steered_T": steering.steering(a, pairs, T),
        "steered_T~": steering.steering(b, pairs, T),
        "raw_steered": steering.steering(a, pairs, be.eye(a.d)),
        "raw_steered~": steering.steering(b, pairs, b.backend.eye(b.d)),
    }
    on_forms = None
    if not be.exact and in_N.holds and same.holds:
        # with L = L~ and Γ ⊆ N the twin reads on Γ~ what the model reads on Γ
        # (u~^T f~(x) = (B* u~)^T f(x)): steering on Γ~ is decided on those readouts,
        # linear forms of the model's numbers
        from allornone.numeric.parallel import constant_readouts

        on_forms = constant_readouts(a, pairs, [np.asarray(gamma, dtype=float).T])
    if on_forms is not None and not on_forms.undecided:
        results["steered~"].decision = on_forms
    elif not gt_decided and "witness" not in results["steered~"].decision.detail:
        # a readout of undecided dimension may be too large (steering fails
        # spuriously) or too small (holds spuriously): neither verdict stands
        # (a witness's readouts do not rest on the computed basis)
        r = results["steered~"]
        r.decision = Decision(Truth.UNDECIDED, r.decision.residual, r.decision.tolerance, r.decision.detail)
    criteria = tuple(steering.log_odds_steering(m, pairs, T) for m in (a, b))
    dims = (gamma_t.shape[1], results["steered_T"].dim_gamma)
    # (a single pair is no evidence, whatever the readouts' dimensions)
    evidence = be.decision(len(pairs) >= 2 and min(dims) > 0,
                           decided=len(pairs) < 2 or (gt_decided and results["steered_T"].decided),
                           pairs=len(pairs), dim_gamma_tilde=dims[0], dim_gamma_T=dims[1])
    on_products = thm14.record._seen_on_products(a, gamma, T, in_N, same) if len(pairs) >= 2 else None
    if on_products is not None:
        evidence = on_products
    transported = None
    if same.holds and cert.decision.holds and in_N.holds and results["steered"].holds:
        transported = steering.transport_steering(a, b, results["steered"], cert)
    return _Analysis(cert, same, in_N, gamma_t, gt_decided, T, results, criteria, evidence, transported,
                     float(gt_error))


_CACHE: dict = {}


def _analysis(models, params) -> _Analysis:
    """One analysis per (models, params) object triple, reused by the proof steps."""
    key = (id(models[0]), id(models[1]), id(params))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is models[0] and hit[1] is models[1] and hit[2] is params:
        return hit[3]
    out = _analyse(models, params)
    _CACHE.clear()  # keep one: steps run right after decide on the same instance
    _CACHE[key] = (models[0], models[1], params, out)
    return out


def decide(models, params) -> dict[str, Decision]:
    an = _analysis(models, params)
    out = {"same_distribution": an.same, "gamma_in_N": an.in_N, "evidence": an.evidence}
    out.update({k: r.decision for k, r in an.results.items()})
    if an.transported is not None:
        out["identity~"] = an.transported.identity
    else:
        # nothing transported: no map to be the identity -- unless a float premise
        # was only undecided, and then neither is this
        # (one premise that fails, decided, is enough: then nothing is transported
        # exactly either, whatever the others are)
        premises = (an.same, an.cert.decision, an.in_N, an.results["steered"].decision)
        out["identity~"] = models[0].backend.decision(
            False, decided=any(d.fails for d in premises) or not any(d.undecided for d in premises))
    a, b = models
    if (not a.exact and out["identity~"].undecided and an.same.holds and an.in_N.holds
            and an.results["steered"].holds and an.gt_decided and a.structure.decided and b.structure.decided):
        # L = L~ gives EL1--EL3 exactly (Theorem 5), so the exact certificate
        # holds and the map is transported exactly, whether or not the float
        # certificate (or the transported map's residual, which carries its
        # error) was decided; whether it is P_Γ~ is Γ~ ⊆ M~, which needs
        # neither A* nor B* (ftr.identity_by_inclusion)
        out["identity~"] = ftr.identity_by_inclusion(b, an.gamma_t, an.gt_error, out["identity~"])
    return out


# -- sampling -------------------------------------------------------------------------------

KINDS = ("steered, B.5 twin", "steered, change of basis", "raw steered, cubed twin", "not steered, B.5 twin",
         "partly steered, B.5 twin", "Γ ⊄ N", "one pair", "not equivalent")


def _ints(rng, rows, cols, bound=2):
    return [[rng.randint(-bound, bound) for _ in range(cols)] for _ in range(rows)]


def plant(rng: random.Random, kind: str):
    """A model in canonical coordinates (``k`` identified, ``h`` hidden context,
    ``t`` hidden token coordinates), mixed by a unimodular change of basis, with
    the query's pairs, ``Γ`` (in ``N`` unless ``kind == "Γ ⊄ N"``) and token
    pairs ``T``. ``steered``: the identified coordinates of ``f(s⊕q)`` are those
    of ``f(s)`` plus ``v``; ``raw steered``: the hidden ones too; ``partly``: only
    the first identified coordinate, with ``Γ`` and ``T`` reading it alone."""
    k = 2 if "partly" in kind else rng.randint(1, 2)
    h = 1 if "raw" in kind or kind == "Γ ⊄ N" else rng.randint(0, 1)
    t = rng.randint(0, 1)
    d = k + h + t
    p = 1 if kind == "one pair" else k + h + 2 + rng.randint(0, 1)
    v = [rng.choice([-2, -1, 1, 2]) for _ in range(d)]
    src = [row[:k + h] + [0] * t for row in _ints(rng, p, k + h)]
    tgt = []
    for row in src:
        ident = [row[j] + v[j] for j in range(k)]
        if kind.startswith("not steered"):
            ident = [rng.randint(-3, 3) for _ in range(k)]
        elif "partly" in kind:
            ident[1] = rng.randint(-3, 3)
        hidden = [row[k + j] + v[k + j] for j in range(h)] if "raw" in kind else \
            [rng.randint(-3, 3) for _ in range(h)]
        tgt.append(ident + hidden + [0] * t)
    # g_0 spans the identified and the hidden token coordinates (so that N is the
    # identified span); token 1 is the first identified coordinate alone, so that
    # T = {(1, 0)} reads it
    unit = lambda j: [int(i == j) for i in range(d)]  # noqa: E731
    G = [[0] * d] + [unit(j) for j in range(k)] + [unit(k + h + j) for j in range(t)]
    for _ in range(rng.randint(0, 1)):
        G.append([rng.randint(-2, 2) for _ in range(k)] + [0] * h + [rng.randint(-2, 2) for _ in range(t)])
    n = len(G)
    model = ExactModel(src + tgt, G, 0)
    pairs = tuple((i, p + i) for i in range(p))
    if "partly" in kind or rng.random() < 0.3:
        gamma = [[int(i == 0)] for i in range(d)]
        toks = ((1, 0),)
    else:
        gamma = [[rng.randint(-2, 2) if i < k else 0] for i in range(d)]
        if all(r[0] == 0 for r in gamma):
            gamma[0][0] = 1
        toks = tuple((y, 0) for y in range(1, n)) if rng.random() < 0.5 else ((1, 0),)
    R = ql.as_qmatrix(gen.random_unimodular(rng, d))
    mixed = gen.change_of_basis(model, R)
    # readouts are covectors, u^T f = (R^{-T} u)^T (R f); a change of basis does not
    # carry orthogonal projections along, so N of the mixed model is found anew and
    # P_N R^{-T} u (the same readouts on every context) is the readout inside it
    gamma_m = rel.integer_columns(mixed.projector_N @ R.inv().T @ ql.as_qmatrix(gamma))
    if kind == "Γ ⊄ N":  # and the hidden direction, whose readouts are the hidden coordinates
        gamma_m = ql.QMatrix.hstack(gamma_m, rel.integer_columns(R.inv().T @ ql.as_qmatrix([[int(i == k)]
                                                                                         for i in range(d)])))
    return mixed, pairs, gamma_m, toks


def _twin(model, rng, kind):
    if "change of basis" in kind:
        return gen.change_of_basis(model, rng=rng)
    if "cubed" in kind:
        hid = rel.hidden_coordinates(model)[0].shape[1]
        return gen.b5_twin(model, rng, a=max(hid, 1), b=rng.randint(0, 1), phi=rel.cube_hidden_phi(model))
    return gen.b5_twin(model, rng, a=rng.randint(0, 2), b=rng.randint(0, 1))


def instance(kind, model, twin, pairs, gamma, toks) -> Instance:
    return Instance(kind, (model, twin), {"pairs": tuple(tuple(p) for p in pairs), "gamma": ql.as_qmatrix(gamma),
                                          "tokens": tuple(tuple(p) for p in toks)})


def sample(rng: random.Random, i: int) -> Instance:
    """Planted translations (all of the identified part, or only part of it),
    raw translations with a cubed twin, planted failures, readouts with a hidden
    direction, single pairs, and non-equivalent pairs, in turn."""
    kind = KINDS[i % len(KINDS)]
    model, pairs, gamma, toks = plant(rng, kind)
    if kind == "not equivalent":
        twin = gen.perturb_log_odds(model, pairs[-1][1], 1, rng.choice([-1, 1, 2]))
    else:
        twin = _twin(model, rng, kind)
    # what was built: every twin keeps the distribution, a perturbed one does not;
    # a planted translation steers f on Γ ⊆ N, a planted failure does not
    return dataclasses.replace(instance(kind, model, twin, pairs, gamma, toks),
                               expect={"same_distribution": kind != "not equivalent",
                                       **({"steered": True, "gamma_in_N": True} if kind.startswith("steered")
                                          else {"steered": False} if kind.startswith("not steered") else {})})


# -- proof steps ----------------------------------------------------------------------------

def _premises(models, params, need_N: bool = True):
    an = _analysis(models, params)
    if not an.same.holds:
        return an, "L != L~"
    if not an.cert.decision.holds:
        return an, "the certificate does not satisfy EL1-EL3"
    if need_N and not an.in_N.holds:
        return an, "Γ ⊄ N"
    return an, None


def _criterion_step(which: int):
    def check(models, params) -> StepOutcome:
        an = _analysis(models, params)
        rep = an.results["steered_T~" if which else "steered_T"]
        crit = an.criteria[which]
        return StepOutcome(lem8.agree(models[which].backend, rep.decision, crit.decision),
                           {"on Γ_T": rep.verdict, "from L": crit.verdict, "c": crit.c})
    return check


def _step_tokens_all_or_none(models, params) -> StepOutcome:
    an, why = _premises(models, params, need_N=False)
    if not an.same.holds:
        return StepOutcome.not_applicable("L != L~")
    r1, r2 = an.results["steered_T"].decision, an.results["steered_T~"].decision
    return StepOutcome(lem8.agree(models[0].backend, r1, r2), {"f on Γ_T": r1.truth.value,
                                                               "f~ on Γ~_T": r2.truth.value})


def _step_readouts(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    gt = an.gamma_t
    if gt.shape[1] == 0:
        return StepOutcome(a.backend.decision(True), {"Γ~": gt})
    d = a.backend.vanishes(b.F @ gt - a.F @ an.cert.B @ gt, a.F, an.cert.B, gt)
    return StepOutcome(d, {"F~ Γ~ - F B* Γ~": d.residual})


def _step_translation(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    if an.transported is None:
        return StepOutcome.not_applicable("f is not steered on Γ")
    t = an.transported
    return StepOutcome(Decision.all([t.decision, t.verified.decision]), {"v": an.results["steered"].v, "v~": t.v})


def _step_backward(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    r2 = an.results["steered~"]
    if not r2.holds:
        return StepOutcome.not_applicable("f~ is not steered on Γ~")
    a, b = models
    back = steering.transport_steering(b, a, r2)
    return StepOutcome(Decision.all([back.decision, back.verified.decision,
                                     thm14.record._same_span(a.backend, back.gamma, an.results["steered"].gamma)]),
                       {"v": back.v})


def _step_map(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    if an.transported is None:
        return StepOutcome.not_applicable("f is not steered on Γ")
    a, b = models
    be = b.backend
    t = an.transported
    gt = t.gamma
    if gt.shape[1] == 0:
        return StepOutcome(be.decision(True), {"Γ~": gt})
    PM = b.projector_M
    d = Decision.all([be.vanishes(t.W.T @ gt - PM @ gt, t.W, gt),
                      be.vanishes(b.F @ (PM @ gt - gt), b.F, PM, gt)])
    return StepOutcome(d, {"W~ = P_Γ~": t.identity.truth.value, "W~^T Γ~ - P~_M~ Γ~": d.residual})


def _step_all_or_none(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    r1, r2 = an.results["steered"].decision, an.results["steered~"].decision
    return StepOutcome(lem8.agree(models[0].backend, r1, r2), {"f on Γ": r1.truth.value, "f~ on Γ~": r2.truth.value})


STEPS = (
    ProofStep("criterion (f)", "f is steered on Γ_T iff every L[s⊕q, a] - L[s⊕q, b] - (L[s, a] - L[s, b]), "
              "(a, b) ∈ T, is the same for every pair (decided from L alone)",
              "u = P_N(g(a) - g(b)) reads u^T f(x) = L[x, a] - L[x, b] (F4), and Γ_T is spanned by these u",
              _criterion_step(0), ("F4",),
              latex=r"\(f\) is steered on \(\Gamma_T\) if and only if every "
                    r"\(L[s \oplus q, a] - L[s \oplus q, b] - (L[s, a] - L[s, b])\), \((a, b) \in T\), is the same "
                    r"for every pair (decided from \(L\) alone)",
              reason_latex=r"\(u = P_N(g(a) - g(b))\) reads \(u^\top f(x) = L[x, a] - L[x, b]\) (F4), and "
                           r"\(\Gamma_T\) is spanned by these \(u\)"),
    ProofStep("criterion (f~)", "the same for f~ on its own Γ~_T", "the criterion applied to (f~, g~)",
              _criterion_step(1), ("criterion (f)",),
              latex=r"the same for \(\tilde f\) on its own \(\tilde\Gamma_T\)",
              reason_latex=r"the criterion applied to \((\tilde f, \tilde g)\)"),
    ProofStep("all or none (tokens)", "if L = L~: f is steered on Γ_T iff f~ is on Γ~_T (no certificate)",
              "both are the same statement about the same L", _step_tokens_all_or_none,
              ("criterion (f)", "criterion (f~)"),
              latex=r"if \(L = \tilde L\): \(f\) is steered on \(\Gamma_T\) if and only if \(\tilde f\) is on "
                    r"\(\tilde\Gamma_T\) (no certificate)",
              reason_latex=r"both are the same statement about the same \(L\)"),
    ProofStep("readout transport", "for every ũ ∈ Γ~: ũ^T f~(x) = (B* ũ)^T f(x) for every context x",
              "F4 for both models, EL1 and EL3 (as in Theorem 14)", _step_readouts, ("F4", "EL1", "EL3"),
              latex=r"for every \(\tilde u \in \tilde\Gamma\): "
                    r"\(\tilde u^\top \tilde f(x) = (B^* \tilde u)^\top f(x)\) for every context \(x\)"),
    ProofStep("=>", "if f is steered on Γ ⊆ N by v, then f~ is steered on Γ~ by ṽ ∈ Γ~ with ũ^T ṽ = (B* ũ)^T v "
              "(checked, and re-decided from scratch)",
              "ũ^T (f~(s⊕q) - f~(s)) = (B* ũ)^T (f(s⊕q) - f(s)) = (B* ũ)^T v for every pair: no hypothesis "
              "Γ_q ⊆ M is needed", _step_translation, ("readout transport",),
              latex=r"if \(f\) is steered on \(\Gamma \subseteq N\) by \(v\), then \(\tilde f\) is steered on "
                    r"\(\tilde\Gamma\) by \(\tilde v \in \tilde\Gamma\) with "
                    r"\(\tilde u^\top \tilde v = (B^* \tilde u)^\top v\) (checked, and re-decided from scratch)",
              reason_latex=r"\(\tilde u^\top (\tilde f(s \oplus q) - \tilde f(s)) = (B^* \tilde u)^\top (f(s \oplus "
                           r"q) - f(s)) = (B^* \tilde u)^\top v\) for every pair: no hypothesis "
                           r"\(\Gamma_q \subseteq M\) is needed"),
    ProofStep("<=", "if f~ is steered on Γ~, the same transport with the certificate of (f~, f) steers f on a "
              "subspace equal to Γ", "~EL is symmetric (Theorem 5)", _step_backward, ("=>",),
              latex=r"if \(\tilde f\) is steered on \(\tilde\Gamma\), the same transport with the certificate of "
                    r"\((\tilde f, f)\) steers \(f\) on a subspace equal to \(\Gamma\)",
              reason_latex=r"\(\sim_{EL}\) is symmetric (Theorem 5)"),
    ProofStep("transported map", "Theorem 14's transport of W = P_Γ P_M is W~ with W~^T ũ = P~_M~ ũ on Γ~ -- the "
              "identity matrix only when Γ~ ⊆ M~ -- and F~ P~_M~ ũ = F~ ũ, so on every context it acts as the "
              "identity", "EL3: P~_M~ A*^T B* ũ = P~_M~ ũ for ũ ∈ Ñ; F4 for f~", _step_map, ("EL3", "F4"),
              latex=r"Theorem 14's transport of \(W = P_\Gamma P_M\) is \(\tilde W\) with "
                    r"\(\tilde W^\top \tilde u = \tilde P_{\tilde M} \tilde u\) on \(\tilde\Gamma\) — the identity "
                    r"matrix only when \(\tilde\Gamma \subseteq \tilde M\) — and "
                    r"\(\tilde F \tilde P_{\tilde M} \tilde u = \tilde F \tilde u\), so on every context it acts as "
                    r"the identity",
              reason_latex=r"EL3: \(\tilde P_{\tilde M} A^{*\top} B^* \tilde u = \tilde P_{\tilde M} \tilde u\) for "
                           r"\(\tilde u \in \tilde N\); F4 for \(\tilde f\)"),
    ProofStep("all or none (Γ)", "if L = L~ and Γ ⊆ N: f is steered on Γ iff f~ is on Γ~",
              "the two transports", _step_all_or_none, ("=>", "<="),
              latex=r"if \(L = \tilde L\) and \(\Gamma \subseteq N\): \(f\) is steered on \(\Gamma\) if and only if "
                    r"\(\tilde f\) is on \(\tilde\Gamma\)"),
)


# -- edges ----------------------------------------------------------------------------------

def _d2(targets_hidden):
    """d = 2, two tokens, M = N = span e_0, hidden e_1; four pairs with
    f(s⊕q)_0 = f(s)_0 + 1 and the given hidden coordinates of f(s⊕q)."""
    sources = [[0, 1], [1, -1], [2, 0], [-1, 2]]
    targets = [[x + 1, t] for (x, _), t in zip(sources, targets_hidden)]
    return ExactModel(sources + targets, [[0, 0], [1, 0]], 0), [(i, 4 + i) for i in range(4)]


def _edge_gamma_outside_N(rng):
    model, pairs = _d2([0, 2, 0, 1])
    twin = gen.b5_twin(model, a=1, b=0, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0])
    return instance("Γ = identified + hidden", model, twin, pairs, [[1, 0], [0, 1]], [(1, 0)])


def _edge_not_same(rng):
    model, pairs = _d2([0, 2, 0, 1])
    F = model.F.to_fraction_rows()
    F[5][0] += 1
    return instance("L != L~", model, ExactModel(F, model.G, 0), pairs, [[1], [0]], [(1, 0)])


def _edge_raw(rng):
    model, pairs = _d2([2, 0, 1, 3])  # the hidden coordinate translated by +1 too
    return instance("raw steering, cubed twin", model, rel.d1_twin(model), pairs, [[1], [0]], [(1, 0)])


def _edge_map(rng):
    model, pairs = _d2([0, 2, 0, 1])
    # d~ = 3, a hidden context and a hidden token coordinate, mixed by R: Ñ = span(1, -1, 1) is not inside M~
    twin = gen.b5_twin(model, a=1, b=1, T=[[1]], R=[[1, 1, 0], [0, 1, 0], [0, 0, 1]], c=[0, 0, 0],
                       psi=lambda y, g, b: [y])
    return instance("Γ~ ⊄ M~", model, twin, pairs, [[1], [0]], [(1, 0)])


def _edge_one_pair(rng):
    model, pairs = _d2([0, 2, 0, 1])
    return instance("one pair", model, rel.d1_twin(model), pairs[:1], [[1, 0], [0, 1]], [(1, 0)])


EDGES = (
    Edge("Γ reads a hidden direction", "drop",
         "d = 2, M = N = span e_0: f(s⊕q) = f(s) + e_0 on the identified coordinate, while the hidden one is not "
         "translated; Γ = R^2 ⊄ N is not steered, its twin on Γ~ = Ñ != {0} is. The token readout is steered in both",
         _edge_gamma_outside_N, {"same_distribution": True, "gamma_in_N": False, "evidence": True, "steered": False,
                                 "steered~": True, "steered_T": True, "steered_T~": True}, "Γ ⊆ N",
         latex=r"\(d = 2\), \(M = N = \operatorname{span} e_0\): \(f(s \oplus q) = f(s) + e_0\) on the identified "
               r"coordinate, while the hidden one is not translated; \(\Gamma = \mathbb R^2 \not\subseteq N\) is not "
               r"steered, its twin on \(\tilde\Gamma = \tilde N \ne \{0\}\) is. The token readout is steered in both"),
    Edge("different distribution", "drop", "one target context moved: a model with other log-odds need not be steered",
         _edge_not_same, {"same_distribution": False, "gamma_in_N": True, "evidence": True, "steered": True,
                          "steered~": False, "steered_T": True, "steered_T~": False}, "same distribution"),
    Edge("map not the identity", "boundary",
         "a B.5 twin (d~ = 3, hidden context and token coordinates mixed) whose Ñ = span(1, -1, 1) is not inside M~: "
         "Theorem 14's transported map W~ is not the identity on Γ~ (W~^T = P~_M~ there), yet the twin is steered on "
         "Γ~: on contexts the two agree",
         _edge_map, {"same_distribution": True, "gamma_in_N": True, "evidence": True, "steered": True,
                     "steered~": True, "identity~": False, "steered_T": True, "steered_T~": True}, "Γ ⊆ N",
         latex=r"a B.5 twin (\(\tilde d = 3\), hidden context and token coordinates mixed) whose "
               r"\(\tilde N = \operatorname{span}(1, -1, 1)\) is not inside \(\tilde M\): Theorem 14's transported "
               r"map \(\tilde W\) is not the identity on \(\tilde\Gamma\) (\(\tilde W^\top = \tilde P_{\tilde M}\) "
               r"there), yet the twin is steered on \(\tilde\Gamma\): on contexts the two agree"),
    Edge("raw steering not shared", "boundary",
         "f(s⊕q) = f(s) + (1, 1): steered on all of R^2; its B.5 twin with the hidden coordinate cubed is not "
         "steered on R^3, while on N, Ñ and the token readouts both are",
         _edge_raw, {"same_distribution": True, "gamma_in_N": True, "raw_steered": True, "raw_steered~": False,
                     "steered": True, "steered~": True, "steered_T": True, "steered_T~": True}, "Γ ⊆ N",
         latex=r"\(f(s \oplus q) = f(s) + (1, 1)\): steered on all of \(\mathbb R^2\); its B.5 twin with the hidden "
               r"coordinate cubed is not steered on \(\mathbb R^3\), while on \(N\), \(\tilde N\) and the token "
               r"readouts both are"),
    Edge("one pair", "boundary", "a single pair: every readout is translated (flagged, not evidence)",
         _edge_one_pair, {"evidence": False, "steered": True, "steered~": True, "raw_steered~": True}, "evidence"),
)

RECORD = TheoremRecord(
    id="steering",
    number="Linear steering",
    title="Linear steering is all or none (the case W = I of relational linearity; an addition of this project, "
          "not in the paper)",
    summary="If L = L~: appending q translates each model's own token readout Γ_T (P_Γ f(s⊕q) = P_Γ(f(s) + v)) "
            "in f iff in f~, decided from L alone; on a general Γ, if also Γ ⊆ N, on Γ~ = (B*|Ñ)^{-1}(Γ) -- "
            "no Γ_q ⊆ M needed, though the transported map is the identity matrix only when Γ~ ⊆ M~.",
    atoms=ATOMS,
    hypotheses=HYPOTHESES,
    conclusion=And(Equivalent(ATOMS["steered"], ATOMS["steered~"]),
                   Equivalent(ATOMS["steered_T"], ATOMS["steered_T~"])),
    conclusion_text="P_Γ(f(s⊕q) - f(s)) is constant on S iff P_Γ~(f~(s⊕q) - f~(s)) is; and likewise on each "
                    "model's own Γ_T",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="steered",
    paper=False,
    conclusion_latex=r"\(P_\Gamma(f(s \oplus q) - f(s))\) is constant on \(S\) if and only if "
                     r"\(P_{\tilde\Gamma}(\tilde f(s \oplus q) - \tilde f(s))\) is; and likewise on each model's own "
                     r"\(\Gamma_T\)",
)


