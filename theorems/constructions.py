r"""The paper's two constructions as annotated, checkable proofs.

* ``b5`` -- Appendix B.5: everything off ``M`` and ``N`` is free. From a model
  ``(f, g)`` with bases ``U``, ``V`` of ``M``, ``N`` and
  ``C = (U^T U)^{-1} U^T V (V^T V)^{-1}``, the twin
  ``f~(x) = R [T U^T f(x); phi(x); 0]``, ``g~_0(y) = R^{-T} [T^{-T} C V^T g_0(y); 0; psi(y)]``
  has the same distribution for any invertible ``T``, ``R`` and any (even
  non-linear) ``phi``, ``psi``.
* ``d1`` -- Appendix D.1: why Theorem 14 needs ``Gamma_q ⊆ M``. A hidden
  coordinate of ``f(s)`` (in ``SF ∩ M^⊥``) copied into an identified coordinate
  of ``f(s⊕q)`` makes the model relationally linear, but only by reading outside
  ``M``; a B.5 twin with a cubic ``phi`` has the same distribution and no
  ``W``, ``b`` fit at all.

A :class:`Construction` has the same ``steps`` (:class:`ProofStep`) as a theorem
record, so :func:`allornone.theorems.engine.proofs.print_proof` prints it the same way.

>>> from allornone.theorems.constructions import CONSTRUCTIONS
>>> c = CONSTRUCTIONS["d1"]
>>> inst = c.build(0)
>>> all(out.decision.holds for _, out in c.check_steps(inst))
True
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from allornone.decision import Decision
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel
from allornone.theorems.engine.record import Instance, ProofStep, StepOutcome

__all__ = ["Construction", "CONSTRUCTIONS", "get_construction", "affine_fit"]


@dataclass(frozen=True)
class Construction:
    """A construction of the paper: an instance builder and the proof steps that
    check what the construction claims about it."""

    id: str
    number: str
    title: str
    summary: str
    build: Callable[[int], Instance]
    steps: Sequence[ProofStep]

    def check_steps(self, instance: Instance, realisation: str = "exact"):
        models = instance.realise(realisation)
        return [(s, s.check(models, instance.params)) for s in self.steps]


def _thm5():
    from allornone.theorems import thm5

    return thm5


# -- B.5 ----------------------------------------------------------------------


def _build_b5(seed: int) -> Instance:
    rng = random.Random(f"{seed}/b5")
    model = gen.random_model(rng, m=4, n=4, d=3, rank_F=2, rank_G=2)
    k = model.effective_complexity()
    a, b = 1, 1
    T = gen.random_unimodular(rng, k)
    R = gen.random_unimodular(rng, k + a + b)
    twin = gen.b5_twin(model, rng, a=a, b=b, T=T, R=R)
    return Instance("B.5 twin (phi, psi non-linear)", (model, twin), {"a": a, "b": b, "T": ql.as_qmatrix(T),
                                                                      "R": ql.as_qmatrix(R)})


def _C(model):
    U, V = model.basis_M, model.basis_N
    return (U.T @ U).inv() @ U.T @ V @ (V.T @ V).inv()


def _b5_bases(models, params) -> StepOutcome:
    model = models[0]
    be, s = model.backend, model.structure
    d = Decision.all([be.vanishes(s.P_M @ s.basis_M - s.basis_M), be.vanishes(s.P_N @ s.basis_N - s.basis_N),
                      be.rank_equals(s.basis_M, s.k), be.rank_equals(s.basis_N, s.k)])
    return StepOutcome(d, {"k": s.k, "U (basis of M, columns)": s.basis_M, "V (basis of N, columns)": s.basis_N})


def _b5_C(models, params) -> StepOutcome:
    model = models[0]
    be, s = model.backend, model.structure
    if not s.k:
        return StepOutcome.not_applicable("k = 0: M = N = {0}")
    C = _C(model)
    F, G0 = model.F, model.G0
    lhs = (F @ s.P_M) @ (G0 @ s.P_N).T
    rhs = (F @ s.basis_M) @ C @ (G0 @ s.basis_N).T
    return StepOutcome(be.vanishes(lhs - rhs), {"C": C, "residual": (lhs - rhs).max_abs()})


def _b5_L(models, params) -> StepOutcome:
    model, twin = models
    d = _thm5().same_distribution(model, twin)
    return StepOutcome(d, {"d, d~": (model.d, twin.d), "L": model.log_odds(),
                           "residual |L - L~|": (model.log_odds() - twin.log_odds()).max_abs()})


def _b5_equiv(models, params) -> StepOutcome:
    cert = _thm5().el_certificate(*models)
    return StepOutcome(cert.decision, {"A*": cert.A, "B*": cert.B,
                                       "residuals EL1, EL2, EL3": (cert.el1.residual, cert.el2.residual,
                                                                   cert.el3.residual)})


def _b5_dims(models, params) -> StepOutcome:
    model, twin = models
    k, kt = model.effective_complexity(), twin.effective_complexity()
    ok = k == kt and twin.d == k + params["a"] + params["b"]
    return StepOutcome(Decision.exact(ok), {"k, k~": (k, kt), "d~ = k + a + b": twin.d})


B5 = Construction(
    id="b5",
    number="Appendix B.5",
    title="Everything off M and N is free",
    summary="f~ = R[T U^T f; phi; 0], g~_0 = R^{-T}[T^{-T} C V^T g_0; 0; psi] has the same distribution "
            "for every invertible T, R and every phi, psi (psi(y_0) = 0).",
    build=_build_b5,
    steps=(
        ProofStep("bases", "U and V are bases of M and N (k columns each)",
                  "rational bases from exact row reduction; orthonormality is not needed", _b5_bases, ("F1",)),
        ProofStep("C", "(P_M f)^T (P_N g_0) = (U^T f)^T C (V^T g_0) with C = (U^T U)^{-1} U^T V (V^T V)^{-1}",
                  "P_M = U (U^T U)^{-1} U^T and P_N = V (V^T V)^{-1} V^T", _b5_C, ("bases",)),
        ProofStep("same log-odds", "f~^T g~_0 = f^T g_0 for every x, y: L~ = L",
                  "R^T R^{-T} = I; T^T T^{-T} = I; phi meets 0 and psi meets 0; then step C and F4",
                  _b5_L, ("C", "F4")),
        ProofStep("equivalent", "the twin is extended-linearly equivalent to the model",
                  "Theorem 5 (the canonical certificate A*, B*)", _b5_equiv, ("same log-odds", "thm5")),
        ProofStep("dimensions", "k~ = k while d~ = k + a + b", "F1: k = rank L is fixed by the distribution",
                  _b5_dims, ("F1",)),
    ),
)


# -- D.1 ----------------------------------------------------------------------


def affine_fit(design, readouts):
    """Is ``readouts = [design, 1] theta`` solvable exactly? Returns
    ``(decision, theta, residual)`` with the least-squares ``theta``."""
    ones = ql.as_qmatrix([[1]] * design.shape[0])
    X = ql.QMatrix.hstack(design, ones)
    theta = ql.pinv(X) @ readouts
    res = readouts - X @ theta
    return Decision.exact(res.is_zero, res.max_abs()), theta, res.max_abs()


def _build_d1(seed: int) -> Instance:
    """``d = 2``, two tokens: ``g(y_1) - g(y_0) = e_1``, so ``M = N = span(e_1)``;
    ``f(s_i) = (c, i)`` hides ``i`` in ``e_2``, ``f(s_i ⊕ q) = (i, 0)`` shows it."""
    rng = random.Random(f"{seed}/d1")
    c = rng.choice([0, 1, -1])
    S = [0, 1, 2] + ([rng.choice([3, -1])] if rng.random() < 0.5 else [])
    F = [[c, i] for i in S] + [[i, 0] for i in S]
    names = [f"s{j}" for j in range(len(S))] + [f"s{j}+q" for j in range(len(S))]
    model = ExactModel(F, [[1, 2], [2, 2]], 0, contexts=names)
    twin = gen.b5_twin(model, a=1, b=0, T=[[1]], R=[[1, 0], [0, 1]], c=[0, 0],
                       phi=lambda x, f, a: [Fraction(f[1]) ** 3])
    pairs = [(j, len(S) + j) for j in range(len(S))]
    return Instance("hidden coordinate copied; B.5 twin with phi = cube", (model, twin), {"pairs": pairs})


def _split(model, pairs):
    src = model.F[[s for s, _ in pairs], :]
    dst = model.F[[t for _, t in pairs], :]
    return src, dst


def _d1_structure(models, params) -> StepOutcome:
    model = models[0]
    s = model.structure
    hidden = s.P_F - s.P_M
    d = Decision.all([Decision.exact(s.k == 1), Decision.exact(not hidden.is_zero),
                      Decision.exact((s.P_G @ hidden).is_zero)])
    return StepOutcome(d, {"k": s.k, "basis of M": s.basis_M, "basis of N": s.basis_N,
                           "P_F - P_M (projector onto SF ∩ M^⊥, the hidden part)": hidden})


def _d1_linear(models, params) -> StepOutcome:
    model = models[0]
    src, dst = _split(model, params["pairs"])
    readouts = dst @ model.projector_N
    d, theta, res = affine_fit(src, readouts)
    return StepOutcome(d, {"readouts P_N f(s⊕q) (rows)": readouts, "[W^T; b^T] found": theta, "residual": res})


def _d1_not_in_M(models, params) -> StepOutcome:
    model = models[0]
    src, dst = _split(model, params["pairs"])
    d, theta, res = affine_fit(src @ model.projector_M, dst @ model.projector_N)
    return StepOutcome(d.negate(), {"least-squares residual reading only M": res})


def _d1_same(models, params) -> StepOutcome:
    model, twin = models
    return StepOutcome(_thm5().same_distribution(model, twin),
                       {"f~(s) (rows)": _split(twin, params["pairs"])[0], "L": model.log_odds()})


def _d1_twin(models, params) -> StepOutcome:
    twin = models[1]
    src, dst = _split(twin, params["pairs"])
    d, theta, res = affine_fit(src, dst @ twin.projector_N)
    return StepOutcome(d.negate(), {"twin readouts P~_N~ f~(s⊕q)": dst @ twin.projector_N,
                                    "least-squares residual reading anything": res})


D1 = Construction(
    id="d1",
    number="Appendix D.1",
    title="Why Theorem 14 needs the input subspace inside M",
    summary="A hidden coordinate copied into an identified one: relationally linear, but only through "
            "Gamma_q ⊄ M; an equivalent B.5 twin with phi = cube is not relationally linear at all.",
    build=_build_d1,
    steps=(
        ProofStep("structure", "k = 1, M = N = span(e_1), and e_2 ∈ SF ∩ M^⊥ is hidden: P_G (P_F - P_M) = 0",
                  "F3: what f has off M never reaches a logit", _d1_structure, ("F1", "F3")),
        ProofStep("linear", "P_N f(s⊕q) = P_N (W f(s) + b) on S for some W, b",
                  "W copies the hidden coordinate of f(s) into e_1", _d1_linear, ()),
        ProofStep("only off M", "no W, b fit when W may read only M (Gamma_q ⊆ M fails)",
                  "P_M f(s) is the same for every s in S while the readouts vary", _d1_not_in_M, ("structure",)),
        ProofStep("same distribution", "the B.5 twin with phi(x) = (hidden coordinate)^3 has L~ = L",
                  "Appendix B.5", _d1_same, ("b5",)),
        ProofStep("twin fails", "in the twin no W~, b~ fit, whatever they read",
                  "the readouts i are not an affine function of (c, i^3) on S", _d1_twin, ("same distribution",)),
    ),
)

CONSTRUCTIONS = {"b5": B5, "d1": D1}


def get_construction(cid: str) -> Construction:
    from allornone.theorems import UnknownResultError

    if cid not in CONSTRUCTIONS:
        raise UnknownResultError(f"unknown construction {cid!r}; known: {', '.join(CONSTRUCTIONS)}")
    return CONSTRUCTIONS[cid]
