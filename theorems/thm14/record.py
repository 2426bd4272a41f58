"""The record of Theorem 14: its statement, hypotheses, sampler, proof steps and edges
(the user API is :mod:`allornone.theorems.thm14`)."""
from __future__ import annotations

import random
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from sympy import And, Equivalent, Implies, Symbol

from allornone.decision import Decision, Truth
from allornone.numeric import relational as fr
from allornone.numeric import transport as ftr
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic import relational as rel
from allornone.symbolic.model import ExactModel
from allornone.theorems import lem8, readouts, thm5
from allornone.theorems.readouts import TokenPairs, tokens
from allornone.theorems.engine.logic import Predicate, SameDistribution, model_symbols
from allornone.theorems.engine.record import Edge, Hypothesis, Instance, ProofStep, StepOutcome, TheoremRecord
from allornone.theorems import thm14


# -- the record ---------------------------------------------------------------------------

class GammaInN(Predicate):
    """``Γ ⊆ N``: the readouts lie in what the distribution sees of ``g``."""


class EnoughPairs(Predicate):
    """Neither model fits every readout: ``[F_S, 1]`` and ``[F~_S, 1]`` have rank
    below ``|S|`` (otherwise relational linearity holds trivially)."""


class RelationallyLinear(Predicate):
    """``P_Γ f(s⊕q) = P_Γ(W f(s) + b)`` on ``S`` for some ``W``, ``b``."""


class RelationallyLinearReadingM(Predicate):
    """Relationally linear with input subspace ``Γ_q ⊆ M``."""


class ReadoutsSeen(Predicate):
    """Neither model's readout is ``{0}``: ``Γ~ != {0}`` and ``Γ_T != {0}``
    (so no relational linearity holds vacuously)."""


f1_, f2_ = model_symbols(2)
S_ = Symbol("S")
GAMMA_, GAMMA_T = Symbol(r"\Gamma"), Symbol(r"\tilde{\Gamma}")
T_ = Symbol("T")
GT1_, GT2_ = Symbol(r"\Gamma_T"), Symbol(r"\tilde{\Gamma}_T")

ATOMS = {
    "same_distribution": SameDistribution(f1_, f2_),
    "gamma_in_N": GammaInN(f1_, GAMMA_),
    "enough_pairs": EnoughPairs(f1_, f2_, S_),
    "rel_lin": RelationallyLinear(f1_, S_, GAMMA_),
    "rel_lin~": RelationallyLinear(f2_, S_, GAMMA_T),
    "rel_lin_M": RelationallyLinearReadingM(f1_, S_, GAMMA_),
    "rel_lin_M~": RelationallyLinearReadingM(f2_, S_, GAMMA_T),
    "readouts_seen": ReadoutsSeen(f1_, f2_, GAMMA_, T_),
    "rel_lin_T": RelationallyLinear(f1_, S_, GT1_),
    "rel_lin_T~": RelationallyLinear(f2_, S_, GT2_),
    "rel_lin_T_M": RelationallyLinearReadingM(f1_, S_, GT1_),
    "rel_lin_T_M~": RelationallyLinearReadingM(f2_, S_, GT2_),
}
HYPOTHESES = (
    Hypothesis("same distribution", "L = L~ (Theorem 5: the models are ~EL, with certificate A*, B*)",
               ATOMS["same_distribution"],
               latex=r"\(L = \tilde L\) (Theorem 5: the models are \(\sim_{EL}\), with certificate \(A^*, B^*\))"),
    Hypothesis("Γ ⊆ N", "the readout subspace lies in N; Γ~ := (B*|Ñ)^{-1}(Γ)", ATOMS["gamma_in_N"],
               latex=r"the readout subspace lies in \(N\); \(\tilde\Gamma := (B^*\vert_{\tilde N})^{-1}(\Gamma)\)"),
    Hypothesis("Γ_q ⊆ M", "in both models, a relational linearity (if any) can be had with input subspace "
               "Γ_q ⊆ M (reading only M), on Γ, Γ~ and on each model's own Γ_T",
               And(Implies(ATOMS["rel_lin"], ATOMS["rel_lin_M"]), Implies(ATOMS["rel_lin~"], ATOMS["rel_lin_M~"]),
                   Implies(ATOMS["rel_lin_T"], ATOMS["rel_lin_T_M"]),
                   Implies(ATOMS["rel_lin_T~"], ATOMS["rel_lin_T_M~"])),
               latex=r"in both models, a relational linearity (if any) can be had with input subspace "
                     r"\(\Gamma_q \subseteq M\) (reading only \(M\)), on \(\Gamma\), \(\tilde\Gamma\) and on each "
                     r"model's own \(\Gamma_T\)"),
    Hypothesis("enough pairs", "(evidence filter, not needed for truth) |S| exceeds rank [F_S, 1] in both models, "
               "so not every readout fits", ATOMS["enough_pairs"],
               evidence_only="the proof does not use it: it only sets aside instances on which [F_S, 1] or "
                             "[F~_S, 1] has full row rank, where every readout fits and relational linearity "
                             "holds trivially; the all-or-none conclusion holds there as everywhere",
               latex=r"(evidence filter, not needed for truth) \(\lvert S\rvert\) exceeds "
                     r"\(\operatorname{rank}\,[F_S, \mathbf 1]\) in both models, so not every readout fits"),
    Hypothesis("readouts seen", "(evidence filter, not needed for truth) Γ~ != {0} and Γ_T != {0}, so that no "
               "side holds vacuously on an empty readout", ATOMS["readouts_seen"],
               evidence_only="the proof does not use it: with Γ ⊆ N, Γ~ = {0} iff Γ = {0}, and Γ_T = {0} iff "
                             "Γ~_T = {0} (the same log-odds); on an empty readout every model is relationally "
                             "linear, so both sides hold",
               latex=r"(evidence filter, not needed for truth) \(\tilde\Gamma \ne \{0\}\) and \(\Gamma_T \ne \{0\}\), "
                     r"so that no side holds vacuously on an empty readout"),
)


@dataclass
class _Analysis:
    gamma: Any
    gamma_t: Any
    cert: Any
    same: Decision
    in_N: Decision
    results: dict
    enough: Decision
    tokens: Any = None
    gamma_T: tuple = ()
    criteria: tuple = ()
    seen: Decision | None = None


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _analyse(models, params) -> _Analysis:
    """Every decision of the statement on one realisation of an instance
    (cached per model pair and params, so the proof steps reuse it)."""
    a, b = models
    cached = _CACHE.get(a)
    if cached is not None and cached[0]() is b and cached[1] is params:
        return cached[2]
    thm14._check_model(a)
    a.check_comparable(b)
    pairs = thm14._check_pairs(a, params["pairs"])
    gamma = thm14._as_matrix(a, params["gamma"], "gamma")
    if params.get("probe") is not None:
        from allornone.theorems.lem8 import token_pair

        token_pair(a, params["probe"], "probe")
    cert = thm5.el_certificate(a, b)
    gamma_t, gt_decided, _, gt_readout = thm14._transport_gamma(a, b, gamma, cert)
    results = {}
    # (the twin's readouts on Γ~ carry what its contexts can see of Γ~'s error)
    same = thm5.same_distribution(a, b)
    in_N = thm14.gamma_in_N(a, gamma)
    for name, model, g, g_err in (("", a, gamma, 0.0), ("~", b, gamma_t, gt_readout)):
        for reading in thm14.READINGS:
            r = thm14.relational_linearity(model, pairs, g, reading, gamma_error=g_err, gamma_in_N=bool(name))
            # a verdict on a Γ~ whose dimension was undecided is undecided too
            # (a witness's does not rest on that basis)
            keep = gt_decided or not name or "witness" in r.decision.detail
            if name and in_N.holds and same.holds and thm14._on_original(r, a, b, pairs, reading, gamma):
                # with L = L~ and Γ ⊆ N the twin reads on Γ~ what the model reads on Γ
                # (u~^T f~(x) = (B* u~)^T f(x)): its fit is decided on those readouts
                keep = True
            results[(name, reading)] = r if keep else thm14._mark_undecided(r)
    trivial = [results[(n, "any")] for n in ("", "~")]
    enough = a.backend.decision(not any(r.trivial for r in trivial), decided=all(r.rank_decided for r in trivial),
                                ranks=[r.regressor_rank for r in trivial], pairs=len(pairs))
    if not a.backend.exact:
        # the regressors' rank as that of a product of each model's own numbers
        ranks = [fr.regressor_rank(m, pairs) for m in (a, b)]
        if all(x is not None and x[1] for x in ranks):
            enough = a.backend.decision(all(x[0] < len(pairs) for x in ranks), ranks=[x[0] for x in ranks],
                                        pairs=len(pairs), on_products=True)
    T = _params_tokens(a, params)
    gamma_T = tuple(readouts.token_readout(m, T) for m in (a, b))
    for name, model in (("", a), ("~", b)):
        for reading in thm14.READINGS:
            results[(name + "T", reading)] = thm14.relational_linearity(model, pairs, T, reading)
    criteria = tuple(thm14.log_odds_criterion(m, pairs, T) for m in (a, b))
    dims = [gamma_t.shape[1], results[("T", "M")].dim_gamma]
    # whether a readout is {0} is a question about its dimension alone, not
    # about the fit on it (the regressors' rank, Γ_q)
    seen = a.backend.decision(min(dims) > 0, decided=gt_decided and results[("T", "M")].gamma_decided,
                              dim_gamma_tilde=dims[0], dim_gamma_T=dims[1])
    on_products = _seen_on_products(a, gamma, T, in_N, same)
    if on_products is not None:
        seen = on_products
    out = _Analysis(gamma, gamma_t, cert, same, in_N, results, enough,
                    T, gamma_T, criteria, seen)
    _CACHE[a] = (weakref.ref(b), params, out)
    return out


def _seen_on_products(model, gamma, T, in_N, same) -> Decision | None:
    """Float side: ``Γ~ != {0}`` and ``Γ_T != {0}`` where they live. With
    ``L = L~``, ``B*`` maps ``Γ~`` onto ``Γ ∩ N``: with ``Γ ⊆ N``, ``Γ~ != {0}`` iff a
    column of the given ``Γ`` is not zero (its numbers are exact), otherwise iff
    ``dim (Γ ∩ N)``, decided on products, is positive; ``Γ_T = {0}`` iff every
    log-odds difference of ``T`` vanishes
    (:func:`allornone.numeric.parallel.token_readouts_vanish`). None where a
    premise is not decided to hold or the forms do not fit binary64."""
    from allornone.numeric.parallel import token_readouts_vanish

    if model.backend.exact or not same.holds or in_N.undecided:
        return None
    # dim Γ~ = dim (Γ ∩ N): B* is a bijection from Ñ onto N where L = L~
    meet = thm14._meet_N(model, gamma) if in_N.fails else int(np.any(np.asarray(gamma, dtype=float)))
    if meet == 0:
        return model.backend.decision(False, on_products=True, gamma_meet_N="{0}")
    empty_T = token_readouts_vanish(model, T)
    if meet is None or empty_T is None or empty_T.undecided:
        return None
    return model.backend.decision(not empty_T.holds, on_products=True)


def _params_tokens(model, params) -> TokenPairs:
    """The instance's token pairs ``T``; without any, every token against the
    pivot (then ``Γ_T = N``)."""
    if params.get("tokens"):
        return tokens(params["tokens"])
    return tokens([(y, model.pivot) for y in range(model.n) if y != model.pivot])


def decide(models, params) -> dict[str, Decision]:
    """Every atom on one realisation, plus ``gamma_q_is_M`` (the reading-M fit
    of ``f`` has ``Γ_q = M``; shown by the boundary edge)."""
    an = _analyse(models, params)
    r = an.results
    out = {
        "same_distribution": an.same,
        "gamma_in_N": an.in_N,
        "enough_pairs": an.enough,
        "rel_lin": r[("", "any")].decision,
        "rel_lin~": r[("~", "any")].decision,
        "rel_lin_M": r[("", "M")].decision,
        "rel_lin_M~": r[("~", "M")].decision,
        "readouts_seen": an.seen,
        "rel_lin_T": r[("T", "any")].decision,
        "rel_lin_T~": r[("~T", "any")].decision,
        "rel_lin_T_M": r[("T", "M")].decision,
        "rel_lin_T_M~": r[("~T", "M")].decision,
    }
    rm = r[("", "M")]
    a = models[0]
    if rm.holds:
        k = a.effective_complexity()
        out["gamma_q_is_M"] = a.backend.decision(rm.dim_gamma_q == k, decided=rm.decided, dim_gamma_q=rm.dim_gamma_q,
                                                 k=k)
        if out["gamma_q_is_M"].undecided and a.structure.decided:
            dim = fr.input_dimension_on_readouts(a, rm.pairs, **thm14._functionals(a, an.gamma))
            if dim is not None:
                out["gamma_q_is_M"] = a.backend.decision(dim == k, dim_gamma_q=dim, k=k, on_readouts=True)
    else:
        out["gamma_q_is_M"] = rm.decision  # no fit reading M: Γ_q = M fails where the fit does
    return out


# -- sampling -----------------------------------------------------------------------------

KINDS = ("planted reading M, B.5 twin", "planted reading M, change of basis", "planted, Γ = N, B.5 twin",
         "not relationally linear, B.5 twin", "not relationally linear, change of basis",
         "reading a hidden coordinate (D.1), cubed twin", "too few pairs", "Γ ⊄ N")


def _twin(model, rng, kind: str):
    if "change of basis" in kind:
        return gen.change_of_basis(model, rng=rng)
    if "D.1" in kind:
        k = model.effective_complexity()
        eye = lambda s: [[int(i == j) for j in range(s)] for i in range(s)]  # noqa: E731
        h = rel.hidden_coordinates(model)[0].shape[1]
        return gen.b5_twin(model, rng, a=h, b=rng.randint(0, 1), phi=rel.cube_hidden_phi(model),
                           T=eye(k) if rng.random() < 0.5 else None)
    return gen.b5_twin(model, rng, a=rng.randint(0, 2), b=rng.randint(0, 1))


def sample(rng: random.Random, i: int) -> Instance:
    """Planted relational linearity (reading M) and planted failures, with B.5
    twins and changes of basis; D.1 instances, too-few-pairs instances and
    ``Γ ⊄ N`` instances (which the hypotheses exclude) in turn."""
    kind = KINDS[i % len(KINDS)]
    k = rng.randint(1, 2)
    hidden = rng.randint(1 if "D.1" in kind else 0, 2)
    reading = "M" if ("planted" in kind or kind in ("too few pairs", "Γ ⊄ N")) else \
        "hidden" if "D.1" in kind else "none"
    extra = 2  # room for the twin's extra coordinates (a <= 2) in the pair count
    pairs = rng.randint(1, k + 1) if kind == "too few pairs" else k + max(hidden, 2) + 2 + rng.randint(0, 1) + extra
    inst = rel.plant(rng, k=k, hidden=hidden, token_hidden=rng.randint(0, 1), pairs=pairs,
                     gamma_dim=k if "Γ = N" in kind else None, reading=reading,
                     extra_contexts=k + hidden if kind == "too few pairs" else rng.randint(0, 1))
    model, gamma = inst.model, inst.gamma
    if kind == "Γ ⊄ N":
        outside = ql.as_qmatrix([[rng.randint(-2, 2)] for _ in range(model.d)])
        gamma = ql.QMatrix.hstack(gamma, outside)
    twin = _twin(model, rng, kind)
    # the readout named by tokens: all of N when Γ = N was planted, else the planted probe pair (Γ_T ⊆ Γ)
    toks = [(y, model.pivot) for y in range(model.n) if y != model.pivot] if "Γ = N" in kind or not inst.probe \
        else [tuple(inst.probe)]
    return Instance(kind, (model, twin), {"pairs": inst.pairs, "gamma": gamma, "probe": inst.probe,
                                          "tokens": tuple(toks)}, expect=_built(kind))


def _built(kind: str) -> dict[str, bool]:
    """What :func:`sample` builds each kind to be: every twin is a B.5 twin or a
    change of basis (same distribution); the planted readout is relationally
    linear reading M, the D.1 one only by reading a hidden coordinate. (A
    too-few-pairs instance may still have enough pairs: nothing is promised.)"""
    out = {"same_distribution": True}
    if kind.startswith("planted"):
        out.update(gamma_in_N=True, rel_lin_M=True, rel_lin=True)
    elif kind.startswith("not relationally linear"):
        out.update(gamma_in_N=True, rel_lin=False, rel_lin_M=False)
    elif "D.1" in kind:
        out.update(gamma_in_N=True, rel_lin=True, rel_lin_M=False)
    return out


# -- proof steps ------------------------------------------------------------------------------

def _premises(models, params, need_N: bool = True):
    """The analysis, or a reason why a step does not apply."""
    an = _analyse(models, params)
    if not an.same.holds:
        return an, "L != L~"
    if not an.cert.decision.holds:
        return an, "the certificate does not satisfy EL1-EL3"
    if need_N and not an.in_N.holds:
        return an, "Γ ⊄ N"
    return an, None


def _step_certificate(models, params) -> StepOutcome:
    an, why = _premises(models, params, need_N=False)
    if why:
        return StepOutcome.not_applicable(why)
    # the premises already require the certificate's verdict: re-derive EL1-EL3
    # for A*, B* another way (one identity over all rows, EL3 on bases)
    again = thm5.el_conditions_on_bases(*models, an.cert.A, an.cert.B)
    return StepOutcome(Decision.all(list(again.values())), {"A*": an.cert.A, "B*": an.cert.B,
                                                            **{k: d.truth.value for k, d in again.items()}})


def _step_readout(models, params) -> StepOutcome:
    an, why = _premises(models, params, need_N=False)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    be = a.backend
    V = b.projector_N
    BV = an.cert.B @ V
    d = Decision.all([be.vanishes(a.F @ BV - b.F @ V, a.F, an.cert.B, V),
                      be.vanishes(BV - a.projector_N @ BV, a.projector_N, an.cert.B, V)])
    return StepOutcome(d, {"F B* P~_Ñ - F~ P~_Ñ": d.residual})


def _step_gamma(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    be = a.backend
    gt = an.gamma_t
    basis, P, _ = thm14._gamma(a, an.gamma)
    r = basis.shape[1]
    if r == 0:
        return StepOutcome(be.decision(gt.shape[1] == 0), {"Γ~": gt})
    image = an.cert.B @ gt
    d = Decision.all([be.vanishes(gt - b.projector_N @ gt, b.projector_N, gt),
                      be.vanishes(image - P @ image, P, an.cert.B, gt),
                      be.rank_equals(image, r, an.cert.B, gt),
                      be.decision(gt.shape[1] == r, dim=gt.shape[1], expected=r)])
    return StepOutcome(d, {"Γ~": gt, "B* Γ~": image})


def _step_input(models, params) -> StepOutcome:
    an, why = _premises(models, params, need_N=False)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    be = a.backend
    lhs = a.F @ a.projector_M
    rhs = b.F @ b.projector_M @ an.cert.A.T @ a.projector_M
    d = be.vanishes(lhs - rhs, b.F, b.projector_M, an.cert.A.T, a.projector_M)
    return StepOutcome(d, {"residual": d.residual})


def _transport_step(forward: bool):
    def check(models, params) -> StepOutcome:
        an, why = _premises(models, params)
        if why:
            return StepOutcome.not_applicable(why)
        a, b = models
        src = an.results[("" if forward else "~", "M")]
        if not src.holds:
            return StepOutcome.not_applicable(f"{'f' if forward else 'f~'} is not relationally linear reading M")
        if forward:
            t = thm14.transport(a, b, src, an.cert)
            back = None
        else:
            t = thm14.transport(b, a, src)
            # and the readout subspace comes back as Γ
            back = _same_span(a.backend, t.gamma, an.gamma)
        parts = [t.decision, t.verified.decision] + ([back] if back is not None else [])
        return StepOutcome(Decision.all(parts), {"W~" if forward else "W": t.W, "b~" if forward else "b": t.b,
                                                 "Γ~_q" if forward else "Γ_q": t.result.gamma_q})
    return check


def _same_span(be, X, Y) -> Decision:
    rx, dx = be.rank(X) if X.shape[1] else (0, True)
    ry, dy = be.rank(Y) if Y.shape[1] else (0, True)
    if rx == ry == 0:
        return be.decision(True)
    rxy, dxy = be.rank(be.hstack(X, Y))
    return be.decision(rx == ry == rxy, decided=dx and dy and dxy, ranks=(rx, ry, rxy))


def _step_all_or_none(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    a = models[0]
    r1, r2 = an.results[("", "M")].decision, an.results[("~", "M")].decision
    if r1.undecided or r2.undecided:
        d = Decision(Truth.UNDECIDED, 0, r1.tolerance or r2.tolerance)
    else:
        d = a.backend.decision(r1.holds == r2.holds)
    return StepOutcome(d, {"f reading M": r1.truth.value, "f~ reading M~": r2.truth.value,
                           "trivial": an.results[("", "M")].trivial})


def _probe_tokens(model, result, params):
    """The planted probe pair if it qualifies, else the first token pair with
    ``P_N(g(a) - g(b)) ∈ Γ`` and ``P_N(g(a) - g(b)) != 0``."""
    be = model.backend
    candidates = ([tuple(params["probe"])] if params.get("probe") else []) + \
        [(y, model.pivot) for y in range(model.n) if y != model.pivot]
    for a, b in candidates:
        u = model.projector_N @ model.unembedding_difference(a, b)
        if be.vanishes(u - result.projector @ u, result.projector, u).holds and \
                not be.vanishes(u, model.projector_N, model.G.T).holds:
            return a, b
    return None


def _step_probe(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    res = an.results[("", "M")]
    if not res.holds:
        return StepOutcome.not_applicable("f is not relationally linear reading M")
    toks = _probe_tokens(a, res, params)
    if toks is None:
        return StepOutcome.not_applicable("no token pair with 0 != P_N(g(a) - g(b)) ∈ Γ")
    p = thm14.implied_probe(a, res, *toks)
    moved = thm14.transport_probe(a, b, p, res.pairs, an.cert) if p.holds else None
    direct = thm14.linear_probing(b, res.pairs, *toks, reading="M")
    d = Decision.all([p.decision] + ([moved.decision] if moved else []) + [direct.decision])
    return StepOutcome(d, {"tokens (a, b)": toks, "w": p.w, "c": p.c, "w~": moved.w if moved else None})


def _step_subspace(models, params) -> StepOutcome:
    an, why = _premises(models, params)
    if why:
        return StepOutcome.not_applicable(why)
    a, b = models
    res = an.results[("", "M")]
    if not res.holds:
        return StepOutcome.not_applicable("f is not relationally linear reading M")
    sub = thm14.readout_subspace(a, res)
    t = thm14.transport(a, b, res, an.cert)
    sub_t = thm14.readout_subspace(b, t.result)
    same_dim = a.backend.decision(sub.readout_dim == sub_t.readout_dim, dims=(sub.readout_dim, sub_t.readout_dim))
    return StepOutcome(Decision.all([sub.decision, sub_t.decision, same_dim]),
                       {"dim Γ_q": sub.dim_gamma_q, "dim P_Γ W(Γ_q)": sub.dim, "affine dim of readouts":
                        sub.readout_dim, "on f~": sub_t.readout_dim})


def _step_token_log_odds(models, params) -> StepOutcome:
    an = _analyse(models, params)
    checks = []
    for m, GT in zip(models, an.gamma_T):
        be = m.backend
        ell = readouts.readout_log_odds(m, an.tokens)
        checks += [be.vanishes(m.F @ GT - ell, m.F, m.projector_N, m.G.T),
                   be.vanishes(GT - m.projector_N @ GT, m.projector_N, GT)]
    return StepOutcome(Decision.all(checks), {"T": an.tokens.pairs, "Γ_T": an.gamma_T[0], "Γ~_T": an.gamma_T[1]})


def _step_token_certificate(models, params) -> StepOutcome:
    an, why = _premises(models, params, need_N=False)
    if why:
        return StepOutcome.not_applicable(why)
    a = models[0]
    GT, GTt = an.gamma_T
    d = a.backend.vanishes(GT - an.cert.B @ GTt, an.cert.B, GTt)
    return StepOutcome(d, {"Γ_T - B* Γ~_T": d.residual})


def _criterion_step(which: int):
    def check(models, params) -> StepOutcome:
        an = _analyse(models, params)
        m = models[which]
        rep = an.results[("~T" if which else "T", "M")]
        crit = an.criteria[which]
        return StepOutcome(lem8.agree(m.backend, rep.decision, crit.decision),
                           {"on Γ_T reading M": rep.verdict, "from L": crit.verdict})
    return check


def _step_token_all_or_none(models, params) -> StepOutcome:
    an = _analyse(models, params)
    if not an.same.holds:
        return StepOutcome.not_applicable("L != L~")
    a = models[0]
    r1, r2 = an.results[("T", "M")].decision, an.results[("~T", "M")].decision
    return StepOutcome(lem8.agree(a.backend, r1, r2), {"f on Γ_T": r1.truth.value, "f~ on Γ~_T": r2.truth.value})


STEPS = (
    ProofStep("certificate", "L = L~ gives Theorem 5's certificate A*, B* with EL1-EL3",
              "Theorem 5", _step_certificate, ("thm5",),
              latex=r"\(L = \tilde L\) gives Theorem 5's certificate \(A^*, B^*\) with EL1–EL3"),
    ProofStep("readout transport", "for every ũ ∈ Ñ, u = B* ũ ∈ N and u^T f(x) = ũ^T f~(x) for every context x",
              "F4 for both models: u^T f(x) = (P_M f(x))^T u = (A* P~ f~(x))^T B* ũ, and EL3 removes A*, B*",
              _step_readout, ("F4", "EL1", "EL3"),
              latex=r"for every \(\tilde u \in \tilde N\), \(u = B^* \tilde u \in N\) and "
                    r"\(u^\top f(x) = \tilde u^\top \tilde f(x)\) for every context \(x\)",
              reason_latex=r"F4 for both models: \(u^\top f(x) = (P_M f(x))^\top u = (A^* \tilde P_{\tilde M} \tilde "
                           r"f(x))^\top B^* \tilde u\), and EL3 removes \(A^*, B^*\)"),
    ProofStep("Γ~", "Γ~ := (B*|Ñ)^{-1}(Γ) lies in Ñ, B* maps it onto Γ, dim Γ~ = dim Γ",
              "EL3 makes B*|Ñ: Ñ -> N a bijection, and Γ ⊆ N", _step_gamma, ("EL3",),
              latex=r"\(\tilde\Gamma := (B^*\vert_{\tilde N})^{-1}(\Gamma)\) lies in \(\tilde N\), \(B^*\) maps it "
                    r"onto \(\Gamma\), \(\dim \tilde\Gamma = \dim \Gamma\)",
              reason_latex=r"EL3 makes \(B^*\vert_{\tilde N} \colon \tilde N \to N\) a bijection, and "
                           r"\(\Gamma \subseteq N\)"),
    ProofStep("input transport", "for every w ∈ M and context s: w^T f(s) = (P~_M~ A*^T w)^T f~(s)",
              "EL1: P_M f(s) = A* P~_M~ f~(s)", _step_input, ("EL1",),
              latex=r"for every \(w \in M\) and context \(s\): "
                    r"\(w^\top f(s) = (\tilde P_{\tilde M} A^{*\top} w)^\top \tilde f(s)\)",
              reason_latex=r"EL1: \(P_M f(s) = A^* \tilde P_{\tilde M} \tilde f(s)\)"),
    ProofStep("=>", "if f is relationally linear on Γ reading M with (W, b), then W~ = P_Γ~ B*^T W A* P~_M~ and "
              "b~ = P_Γ~ B*^T b fit on f~ (re-decided from scratch) with Γ~_q ⊆ M~",
              "ũ^T f~(s⊕q) = u^T f(s⊕q) = (W^T u)^T f(s) + u^T b, and W^T u ∈ Γ_q ⊆ M is moved by the input transport",
              _transport_step(True), ("readout transport", "Γ~", "input transport"),
              latex=r"if \(f\) is relationally linear on \(\Gamma\) reading \(M\) with \((W, b)\), then "
                    r"\(\tilde W = P_{\tilde\Gamma} B^{*\top} W A^* \tilde P_{\tilde M}\) and "
                    r"\(\tilde b = P_{\tilde\Gamma} B^{*\top} b\) fit on \(\tilde f\) (re-decided from scratch) with "
                    r"\(\tilde\Gamma_q \subseteq \tilde M\)",
              reason_latex=r"\(\tilde u^\top \tilde f(s \oplus q) = u^\top f(s \oplus q) = (W^\top u)^\top f(s) + "
                           r"u^\top b\), and \(W^\top u \in \Gamma_q \subseteq M\) is moved by the input transport"),
    ProofStep("<=", "if f~ is relationally linear on Γ~ reading M~, the same transport with the certificate of "
              "(f~, f) gives a fit on f, on a subspace equal to Γ",
              "~EL is symmetric (Theorem 5)", _transport_step(False), ("=>",),
              latex=r"if \(\tilde f\) is relationally linear on \(\tilde\Gamma\) reading \(\tilde M\), the same "
                    r"transport with the certificate of \((\tilde f, f)\) gives a fit on \(f\), on a subspace equal "
                    r"to \(\Gamma\)",
              reason_latex=r"\(\sim_{EL}\) is symmetric (Theorem 5)"),
    ProofStep("all or none (reading M)", "f is relationally linear on Γ reading M iff f~ is on Γ~ reading M~ "
              "(the paper's form, checked whether or not the hypothesis Γ_q ⊆ M holds)",
              "the two previous steps", _step_all_or_none, ("=>", "<="),
              latex=r"\(f\) is relationally linear on \(\Gamma\) reading \(M\) if and only if \(\tilde f\) is on "
                    r"\(\tilde\Gamma\) reading \(\tilde M\) (the paper's form, checked whether or not the hypothesis "
                    r"\(\Gamma_q \subseteq M\) holds)"),
    ProofStep("probing", "if 0 != u = P_N(g(a) - g(b)) ∈ Γ: log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c on S with "
              "w = W^T u ∈ Γ_q ⊆ M, c = b^T u; on f~ with w~ = P~_M~ A*^T w and the same c",
              "log-odds are f(x)^T (g(a) - g(b)) = f(x)^T u (F4); u ∈ Γ reads P_Γ f(s⊕q)", _step_probe,
              ("F4", "=>"),
              latex=r"if \(0 \ne u = P_N(g(a) - g(b)) \in \Gamma\): "
                    r"\(\log p(a \mid s \oplus q)/p(b \mid s \oplus q) = w^\top f(s) + c\) on \(S\) with "
                    r"\(w = W^\top u \in \Gamma_q \subseteq M\), \(c = b^\top u\); on \(\tilde f\) with "
                    r"\(\tilde w = \tilde P_{\tilde M} A^{*\top} w\) and the same \(c\)",
              reason_latex=r"log-odds are \(f(x)^\top (g(a) - g(b)) = f(x)^\top u\) (F4); \(u \in \Gamma\) reads "
                           r"\(P_\Gamma f(s \oplus q)\)"),
    ProofStep("linear subspace", "the readouts P_Γ f(s⊕q), s ∈ S, lie in P_Γ b + P_Γ W(Γ_q), of dimension <= dim Γ_q; "
              "likewise on f~, with the same affine dimension",
              "P_Γ f(s⊕q) - P_Γ b = P_Γ W P_Γq f(s); the readout transport preserves readout coordinates",
              _step_subspace, ("=>", "readout transport"),
              latex=r"the readouts \(P_\Gamma f(s \oplus q)\), \(s \in S\), lie in "
                    r"\(P_\Gamma b + P_\Gamma W(\Gamma_q)\), of dimension at most \(\dim \Gamma_q\); likewise on "
                    r"\(\tilde f\), with the same affine dimension",
              reason_latex=r"\(P_\Gamma f(s \oplus q) - P_\Gamma b = P_\Gamma W P_{\Gamma_q} f(s)\); the readout "
                           r"transport preserves readout coordinates"),
    ProofStep("token readouts are log-odds", "for every (a, b) ∈ T, u = P_N(g(a) - g(b)) ∈ N has u^T f(x) = "
              "L[x, a] - L[x, b] for every context, in each model (Γ_T from its own g)",
              "F4: f(x)^T v = (P_M f(x))^T P_N v for v ∈ SG, and f(x)^T (g(a) - g(b)) is the log-odds",
              _step_token_log_odds, ("F4",),
              latex=r"for every \((a, b) \in T\), \(u = P_N(g(a) - g(b)) \in N\) has "
                    r"\(u^\top f(x) = L[x, a] - L[x, b]\) for every context, in each model (\(\Gamma_T\) from its own "
                    r"\(g\))",
              reason_latex=r"F4: \(f(x)^\top v = (P_M f(x))^\top P_N v\) for \(v \in SG\), and "
                           r"\(f(x)^\top (g(a) - g(b))\) is the log-odds"),
    ProofStep("Γ_T = B* Γ~_T", "Theorem 5's certificate maps each P~(g~(a) - g~(b)) to P_N(g(a) - g(b)): the twin's "
              "own Γ~_T is (B*|Ñ)^{-1}(Γ_T), with no certificate needed to name it",
              "EL2 on differences of tokens", _step_token_certificate, ("EL2",),
              latex=r"Theorem 5's certificate maps each \(\tilde P_{\tilde N}(\tilde g(a) - \tilde g(b))\) to "
                    r"\(P_N(g(a) - g(b))\): the twin's own \(\tilde\Gamma_T\) is "
                    r"\((B^*\vert_{\tilde N})^{-1}(\Gamma_T)\), with no certificate needed to name it"),
    ProofStep("criterion (f)", "f is relationally linear on Γ_T reading M iff every L[s⊕q, a] - L[s⊕q, b] is an affine "
              "function of the row L[s, :] over S (decided from L alone)",
              "functionals of P_M f(s) are functionals of L[s, :]: u ↦ (u^T g_0(y))_y is injective on M (F6) and "
              "P_M P_N maps N onto M (F2)", _criterion_step(0), ("token readouts are log-odds", "F6", "F2"),
              latex=r"\(f\) is relationally linear on \(\Gamma_T\) reading \(M\) if and only if every "
                    r"\(L[s \oplus q, a] - L[s \oplus q, b]\) is an affine function of the row \(L[s, :]\) over \(S\) "
                    r"(decided from \(L\) alone)",
              reason_latex=r"functionals of \(P_M f(s)\) are functionals of \(L[s, :]\): "
                           r"\(u \mapsto (u^\top g_0(y))_y\) is injective on \(M\) (F6) and \(P_M P_N\) maps \(N\) "
                           r"onto \(M\) (F2)"),
    ProofStep("criterion (f~)", "the same for f~ on its own Γ~_T", "the criterion applied to (f~, g~)",
              _criterion_step(1), ("criterion (f)",),
              latex=r"the same for \(\tilde f\) on its own \(\tilde\Gamma_T\)",
              reason_latex=r"the criterion applied to \((\tilde f, \tilde g)\)"),
    ProofStep("all or none (tokens)", "if L = L~: f is relationally linear on Γ_T reading M iff f~ is on Γ~_T reading "
              "M~ (no certificate)", "both are the same statement about the same L (the two criteria)",
              _step_token_all_or_none, ("criterion (f)", "criterion (f~)"),
              latex=r"if \(L = \tilde L\): \(f\) is relationally linear on \(\Gamma_T\) reading \(M\) if and only if "
                    r"\(\tilde f\) is on \(\tilde\Gamma_T\) reading \(\tilde M\) (no certificate)",
              reason_latex=r"both are the same statement about the same \(L\) (the two criteria)"),
)


# -- edges ------------------------------------------------------------------------------------

def _inst(kind, model, twin, pairs, gamma, probe=None, toks=None) -> Instance:
    toks = toks or ([tuple(probe)] if probe else [(y, model.pivot) for y in range(model.n) if y != model.pivot])
    return Instance(kind, (model, twin), {"pairs": tuple(pairs), "gamma": ql.as_qmatrix(gamma), "probe": probe,
                                          "tokens": tuple(tuple(p) for p in toks)})


def _edge_d1(rng):
    ex = rel.d1_example()
    return _inst("Appendix D.1", ex.model, rel.d1_twin(ex.model), ex.pairs, ex.gamma, ex.probe)


def _planted_d2():
    """d = 2, two tokens, M = N = span e_0, hidden e_1: f(s⊕q)_0 = 2 f(s)_0 + 1."""
    sources = [[0, 1], [1, -1], [2, 0], [-1, 2]]
    targets = [[2 * x + 1, (x * h) % 3] for x, h in sources]
    model = ExactModel(sources + targets, [[0, 0], [1, 0]], 0)
    return model, [(i, 4 + i) for i in range(4)]


def _edge_gamma_outside_N(rng):
    model, pairs = _planted_d2()
    # Γ = span(e_0 + e_1) mixes the hidden coordinate of f(s⊕q), which is no affine function of f(s),
    # into the readout; Γ ∩ N = {0} would leave the twin an empty readout, so Γ = R^2: Γ~ = N~ != {0}
    twin = gen.b5_twin(model, a=1, b=0, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0])
    return _inst("Γ = identified + hidden", model, twin, pairs, [[1, 0], [0, 1]], (1, 0))


def _edge_not_same(rng):
    model, pairs = _planted_d2()
    F = model.F.to_fraction_rows()
    F[5][0] += 1  # one readout moved: the distribution changes at s⊕q = x5
    return _inst("L != L~", model, ExactModel(F, model.G, 0), pairs, [[1], [0]], (1, 0))


def _edge_gamma_N(rng):
    model, pairs = _planted_d2()
    return _inst("Γ = N", model, gen.b5_twin(model, rng, a=1, b=1), pairs, [[1], [0]], (1, 0))


def _edge_gamma_zero(rng):
    model, pairs = _planted_d2()
    return _inst("Γ = {0}", model, gen.b5_twin(model, rng, a=1, b=1), pairs, ql.zeros(2, 0))


def _edge_gamma_q_M(rng):
    inst = rel.plant(rng, k=2, hidden=1, gamma_dim=2, reading="M", invertible_W=True, pairs=7)
    return _inst("Γ_q = M", inst.model, gen.b5_twin(inst.model, rng, a=1, b=1), inst.pairs, inst.gamma, inst.probe)


def _edge_few_pairs(rng):
    ex = rel.d1_example()
    pairs = ex.pairs[:2]
    return _inst("too few pairs", ex.model, rel.d1_twin(ex.model), pairs, ex.gamma, ex.probe)


EDGES = (
    Edge("Appendix D.1", "drop",
         "d = 2, two tokens: f(s⊕q) copies the hidden coordinate of f(s) into the identified one; relationally "
         "linear only through Γ_q = span e_1 ⊄ M. Its B.5 twin with the hidden coordinate cubed has no W, b at all; "
         "the same with each model's own token readout Γ_T (T = {(1, 0)}, Γ_T = N != {0})",
         _edge_d1, {"same_distribution": True, "gamma_in_N": True, "enough_pairs": True, "readouts_seen": True,
                    "rel_lin": True, "rel_lin_M": False, "rel_lin~": False, "rel_lin_T": True, "rel_lin_T_M": False,
                    "rel_lin_T~": False}, "Γ_q ⊆ M",
         latex=r"\(d = 2\), two tokens: \(f(s \oplus q)\) copies the hidden coordinate of \(f(s)\) into the "
               r"identified one; relationally linear only through "
               r"\(\Gamma_q = \operatorname{span} e_1 \not\subseteq M\). Its B.5 twin with the hidden coordinate "
               r"cubed has no \(W, b\) at all; the same with each model's own token readout \(\Gamma_T\) "
               r"(\(T = \{(1, 0)\}\), \(\Gamma_T = N \ne \{0\}\))"),
    Edge("Γ reads a hidden direction", "drop",
         "Γ = R^2 (the identified e_0 and the hidden e_1, so Γ ⊄ N): P_Γ f(s⊕q) = f(s⊕q) is no affine function of "
         "f(s) (its hidden coordinate is not), while on Γ~ = (B*|Ñ)^{-1}(Γ ∩ N) = Ñ != {0} the twin is relationally "
         "linear; the token readout Γ_T = N is shared", _edge_gamma_outside_N,
         {"same_distribution": True, "gamma_in_N": False, "enough_pairs": True, "readouts_seen": True,
          "rel_lin": False, "rel_lin~": True, "rel_lin_T": True, "rel_lin_T~": True}, "Γ ⊆ N",
         latex=r"\(\Gamma = \mathbb R^2\) (the identified \(e_0\) and the hidden \(e_1\), so "
               r"\(\Gamma \not\subseteq N\)): \(P_\Gamma f(s \oplus q) = f(s \oplus q)\) is no affine function of "
               r"\(f(s)\) (its hidden coordinate is not), while on "
               r"\(\tilde\Gamma = (B^*\vert_{\tilde N})^{-1}(\Gamma \cap N) = \tilde N \ne \{0\}\) the twin is "
               r"relationally linear; the token readout \(\Gamma_T = N\) is shared"),
    Edge("different distribution", "drop",
         "one readout f(s⊕q) of a relationally linear model moved: a model with another distribution need not be",
         _edge_not_same, {"same_distribution": False, "gamma_in_N": True, "rel_lin": True, "rel_lin~": False},
         "same distribution",
         latex=r"one readout \(f(s \oplus q)\) of a relationally linear model moved: a model with another "
               r"distribution need not be"),
    Edge("Γ = N", "boundary", "the largest admissible readout subspace (d = 2, B.5 twin of dimension 3)",
         _edge_gamma_N, {"same_distribution": True, "gamma_in_N": True, "enough_pairs": True, "rel_lin": True,
                         "rel_lin~": True, "rel_lin_M": True, "rel_lin_M~": True}, "Γ ⊆ N",
         latex=r"the largest admissible readout subspace (\(d = 2\), B.5 twin of dimension \(3\))"),
    Edge("Γ = {0}", "boundary", "the empty readout: relationally linear with W = 0, b = 0 in every model",
         _edge_gamma_zero, {"same_distribution": True, "gamma_in_N": True, "enough_pairs": True, "rel_lin": True,
                            "rel_lin~": True}, "Γ ⊆ N",
         latex=r"the empty readout: relationally linear with \(W = 0\), \(b = 0\) in every model"),
    Edge("Γ_q = M", "boundary", "an invertible map on M and Γ = N: the input subspace is all of M",
         _edge_gamma_q_M, {"same_distribution": True, "gamma_in_N": True, "rel_lin_M": True, "gamma_q_is_M": True,
                           "rel_lin_M~": True}, "Γ_q ⊆ M",
         latex=r"an invertible map on \(M\) and \(\Gamma = N\): the input subspace is all of \(M\)"),
    Edge("too few pairs", "boundary",
         "two pairs of the D.1 instance: [F_S, 1] has full row rank, every readout fits; flagged trivial, not evidence",
         _edge_few_pairs, {"enough_pairs": False, "rel_lin": True, "rel_lin~": True}, "enough pairs",
         latex=r"two pairs of the D.1 instance: \([F_S, \mathbf 1]\) has full row rank, every readout fits; flagged "
               r"trivial, not evidence"),
)

RECORD = TheoremRecord(
    id="thm14",
    number="Theorem 14",
    title="Relational linearity is all or none (and Appendix D.1)",
    summary="If L = L~ and Γ ⊆ N: f is relationally linear for q on Γ with Γ_q ⊆ M iff f~ is, on "
            "Γ~ = (B*|Ñ)^{-1}(Γ), with Γ~_q ⊆ M~; likewise the implied probes and readout subspaces. "
            "With a readout named by token pairs T, each model's own Γ_T = span{P_N(g(a) - g(b))}: the same "
            "all-or-none, decided from L alone. Reading outside M (Appendix D.1) is not shared.",
    atoms=ATOMS,
    hypotheses=HYPOTHESES,
    conclusion=And(Equivalent(ATOMS["rel_lin"], ATOMS["rel_lin~"]),
                   Equivalent(ATOMS["rel_lin_T"], ATOMS["rel_lin_T~"])),
    conclusion_text="P_Γ f(s⊕q) = P_Γ(W f(s) + b) on S for some W, b iff the same holds for f~ on Γ~; and "
                    "likewise on each model's own token readout Γ_T (no certificate)",
    decide=decide,
    sample=sample,
    steps=STEPS,
    edges=EDGES,
    sides="rel_lin",
    conclusion_latex=r"\(P_\Gamma f(s \oplus q) = P_\Gamma(W f(s) + b)\) on \(S\) for some \(W, b\) if and only if "
                     r"the same holds for \(\tilde f\) on \(\tilde\Gamma\); and likewise on each model's own token "
                     r"readout \(\Gamma_T\) (no certificate)",
)
