r"""Theorem 5 (identifiability): ``L = L~  <=>  (f, g) ~EL (f~, g~)``.

As encoded here (docs/theory/index.md and docs/results/thm5.md): two models on the same contexts,
vocabulary and pivot give the same next-token distribution iff their log-odds
matrices agree, iff there are ``A, B`` with

* EL1 ``P_M f(x) = A P~_M~ f~(x)`` for every ``x``,
* EL2 ``P_N g_0(y) = B P~_N~ g~_0(y)`` for every ``y``,
* EL3 ``P~_M~ A^T B P~_N~ = P~_M~ P~_N~``.

The two sides are decided independently: the left by comparing ``L`` with
``L~`` (:func:`same_distribution`), the right by building the canonical
certificate ``A* = (F P_M)^T ((F~ P~_M~)^T)^+``, ``B* = (G_0 P_N)^T ((G~_0 P~_N~)^T)^+``
and testing EL1--EL3 on it (:func:`el_certificate`) -- ``A*`` solves EL1 whenever
any ``A`` does, and EL3 only involves ``A`` on ``M~`` and ``B`` on ``N~``, where
EL1 and EL2 pin them down, so this decides ``~EL`` exactly.

>>> from allornone.symbolic import ExactModel
>>> a = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 1]])
>>> b = ExactModel([[2, 0, 5], [0, 1, 7], [2, 1, 12]], [[0, 0, 0], ["1/2", 2, 0], ["3/2", 1, 0]])
>>> r = equivalence(a, b)
>>> r.verdict
'equivalent'
>>> r.A.shape, r.B.shape
((2, 3), (2, 3))
>>> c = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 2], [3, 2]])
>>> equivalence(a, c).verdict, equivalence(a, c).witness
('not equivalent', (1, 2))
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from sympy import Equivalent

from allornone.decision import Decision, Truth
from allornone.symbolic import generators as gen
from allornone.theorems.logic import ExtendedLinearEquivalent, SameDistribution, model_symbols
from allornone.theorems.record import Edge, Instance, ProofStep, StepOutcome, TheoremRecord

__all__ = ["same_distribution", "canonical_certificate", "el_certificate", "equivalence", "EquivalenceResult", "Certificate", "RECORD"]

VERDICTS = {Truth.HOLDS: "equivalent", Truth.FAILS: "not equivalent", Truth.UNDECIDED: "undecided"}


def same_distribution(a, b) -> Decision:
    """``p_{f,g} = p_{f~,g~}`` on ``X x A``, decided as ``L = L~``. On failure
    ``detail["witness"]`` is a pair ``(x, y)`` where the log-odds differ most
    (exact side: the first such pair in row-major order)."""
    a.check_comparable(b)
    be = a.backend
    if not be.exact:
        from allornone.numeric import equivalence as feq

        return feq.same_distribution(a, b)
    diff = a.log_odds() - b.log_odds()
    d = be.is_zero(diff, max(a.log_odds_scale(), b.log_odds_scale()))
    if not d.holds:
        d.detail["witness"] = _witness(diff, be)
    return d


def _witness(diff, be) -> tuple[int, int]:
    m, n = diff.shape
    if be.exact:
        for i, row in enumerate(diff.to_fraction_rows()):
            for j, v in enumerate(row):
                if v != 0:
                    return (i, j)
    import numpy as np

    i, j = np.unravel_index(int(np.argmax(np.abs(diff))), diff.shape)
    return (int(i), int(j))


@dataclass
class Certificate:
    """The canonical certificate ``(A*, B*)`` and its EL1--EL3 decisions."""

    A: Any
    B: Any
    el1: Decision
    el2: Decision
    el3: Decision
    decided: bool
    errors: dict = field(default_factory=dict)
    """Float side: bounds on the errors of ``A*`` and ``B*`` (``"A"``, ``"B"``, spectral norm)."""

    @property
    def decision(self) -> Decision:
        d = Decision.all([self.el1, self.el2, self.el3])
        # residuals measured on an undecided structure say nothing, either way
        if not self.decided:
            return Decision(Truth.UNDECIDED, d.residual, d.tolerance)
        return d


def canonical_certificate(a, b):
    """``A* = (F P_M)^T ((F~ P~_M~)^T)^+`` and ``B* = (G_0 P_N)^T ((G~_0 P~_N~)^T)^+``
    (``d x d~`` each). On the float side the pseudo-inverses are truncated at the
    decided dimension ``k~`` (never at NumPy's default cut, docs/theory/index.md#floating-point)."""
    a.check_comparable(b)
    be = a.backend
    sa, sb = a.structure, b.structure
    A = be.solve_left((a.F @ sa.P_M).T, (b.F @ sb.P_M).T, sb.k)
    B = be.solve_left((a.G0 @ sa.P_N).T, (b.G0 @ sb.P_N).T, sb.k)
    return A, B


#: Rows per block when a float check runs over the contexts or tokens in blocks.
BLOCK_ROWS = 8192


def _maps(be, X, P, W, Xt, Pt) -> Decision:
    """``P X^T = W Pt Xt^T``: ``W`` maps the projected rows of ``Xt`` onto those of ``X``
    (EL1 with ``X = F``, EL2 with ``X = G_0``). Float models are checked in blocks
    of rows, so that no second array as large as ``X`` is formed at vocabulary scale."""
    rows = X.shape[0]
    step = rows if be.exact or rows <= BLOCK_ROWS else BLOCK_ROWS
    blocks = []
    for i in range(0, rows, step):
        Y, Z = (X[i:i + step, :] @ P).T, (Xt[i:i + step, :] @ Pt).T
        blocks.append((be.vanishes(Y - W @ Z, W, Z), be.scale(W, Z)))
    if len(blocks) == 1:
        return blocks[0][0]
    # one verdict at the scale of the whole product, from the largest residual of any block
    worst = max(float(d.residual) for d, _ in blocks)
    return be.is_zero(be.as_matrix([[worst]], "residual"), max(sc for _, sc in blocks))


def el_certificate(a, b) -> Certificate:
    """Build ``A*``, ``B*`` of docs/theory/index.md#extended-linear-equivalence (:func:`canonical_certificate`) and
    decide EL1--EL3 on them."""
    a.check_comparable(b)
    if not a.backend.exact:
        from allornone.numeric import equivalence as feq

        c = feq.el_certificate(a, b)
        return Certificate(c.A, c.B, c.el1, c.el2, c.el3, c.decided, {"A": c.errors["dA"], "B": c.errors["dB"]})
    fast = a.backend.el_certificate(a, b) if a.backend.el_certificate is not None else None
    if fast is not None:  # the same certificate and verdicts, by a faster route
        return Certificate(*fast, a.structure.decided and b.structure.decided)
    A, B = canonical_certificate(a, b)
    be = a.backend
    sa, sb = a.structure, b.structure
    el1 = _maps(be, a.F, sa.P_M, A, b.F, sb.P_M)
    el2 = _maps(be, a.G0, sa.P_N, B, b.G0, sb.P_N)
    el3 = be.vanishes(sb.P_M @ A.T @ B @ sb.P_N - sb.P_M @ sb.P_N, sb.P_M, A.T, B, sb.P_N)
    return Certificate(A, B, el1, el2, el3, sa.decided and sb.decided)


@dataclass
class EquivalenceResult:
    """Outcome of :func:`equivalence`.

    ``verdict`` is ``"equivalent"``, ``"not equivalent"`` or (floats only)
    ``"undecided"``; ``A``, ``B`` the certificate when equivalent; ``witness`` a
    pair ``(x, y)`` of indices where the log-odds differ when not; ``residuals``
    the residuals of ``L - L~`` and of EL1--EL3; ``tolerance`` the float
    tolerance bounds used (None when exact); ``k`` the effective complexities.
    """

    verdict: str
    A: Any = None
    B: Any = None
    witness: tuple[int, int] | None = None
    residuals: dict = field(default_factory=dict)
    tolerance: Any = None
    k: tuple[int, int] = (0, 0)
    distribution: Decision | None = None
    certificate: Certificate | None = None
    witness_names: tuple[str, str] | None = None


def equivalence(a, b, route: str | None = None) -> EquivalenceResult:
    """Decide whether two exact (or two float) models are equivalent (Theorem 5).

    Float models at vocabulary scale are decided from the Gram products of
    ``G_0`` and ``G~_0`` (:mod:`allornone.numeric.gram`), which falls back to the
    QR route wherever it cannot certify what a decision needs. ``route``
    (``"auto"``, ``"gram"``, ``"qr"``; default ``numeric.gram.ROUTE``) forces one."""
    parts = None
    if not a.backend.exact:
        from allornone.numeric import gram

        a.check_comparable(b)
        parts = gram.equivalence_parts(a, b, route)
    if parts is not None:
        dist, fc, ks = parts
        cert = Certificate(fc.A, fc.B, fc.el1, fc.el2, fc.el3, fc.decided, {"A": fc.errors["dA"], "B": fc.errors["dB"]})
    else:
        dist = same_distribution(a, b)
        cert = el_certificate(a, b)
        ks = (a.effective_complexity(), b.effective_complexity())
    res = EquivalenceResult(
        verdict=VERDICTS[dist.truth],
        residuals={"L": dist.residual, "EL1": cert.el1.residual, "EL2": cert.el2.residual, "EL3": cert.el3.residual},
        tolerance=dist.tolerance,
        k=ks,
        distribution=dist,
        certificate=cert,
    )
    if dist.holds and cert.decision.holds:
        res.A, res.B = cert.A, cert.B
    if not dist.holds and "witness" in dist.detail:
        res.witness = dist.detail["witness"]
        x, y = res.witness
        res.witness_names = (a.contexts[x], a.tokens[y])
    return res


# -- the record ------------------------------------------------------------

f1_, f2_ = model_symbols(2)
ATOMS = {"same_distribution": SameDistribution(f1_, f2_), "el_equivalent": ExtendedLinearEquivalent(f1_, f2_)}


def decide(models, params) -> dict[str, Decision]:
    a, b = models
    return {"same_distribution": same_distribution(a, b), "el_equivalent": el_certificate(a, b).decision}


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
    cert = el_certificate(a, b)
    if not cert.decision.holds:
        return StepOutcome.not_applicable("EL1-EL3 do not hold for the canonical certificate")
    be = a.backend
    sb = b.structure
    # (P_M f)^T (P_N g_0) = (A P~ f~)^T (B P~ g~_0) = f~^T P~_M~ A^T B P~_N~ g~_0 = f~^T P~_M~ P~_N~ g~_0
    via_cert = (b.F @ sb.P_M) @ cert.A.T @ cert.B @ (b.G0 @ sb.P_N).T
    d = Decision.all([be.vanishes(a.log_odds() - via_cert, b.F, sb.P_M, cert.A.T, cert.B, sb.P_N, b.G0.T),
                      same_distribution(a, b)])
    return StepOutcome(d, {"A": cert.A, "B": cert.B})


def _same_left_kernel(be, X, Y, scale) -> Decision:
    """``{c : c^T X = 0} = {c : c^T Y = 0}`` iff ``rank X = rank Y = rank [X Y]``."""
    rx, dx = be.rank(X, scale)
    ry, dy = be.rank(Y, scale)
    rxy, dxy = be.rank(be.hstack(X, Y), scale) if X.shape[1] + Y.shape[1] else (0, True)
    return be.decision(rx == ry == rxy, decided=dx and dy and dxy, ranks=(rx, ry, rxy))


def _step_kernels(models, params) -> StepOutcome:
    a, b = models
    if not same_distribution(a, b).holds:
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
        if not same_distribution(a, b).holds:
            return StepOutcome.not_applicable("L != L~")
        cert = el_certificate(a, b)
        dec = {"EL1": cert.el1, "EL2": cert.el2, "EL3": cert.el3}[which]
        # The certificate's own verdict decides the conclusion; the step also
        # re-derives the condition another way, so that it can disagree.
        again = el_conditions_on_bases(a, b, cert.A, cert.B)[which]
        return StepOutcome(Decision.all([dec, again]),
                           {"A*" if which == "EL1" else "B*" if which == "EL2" else "residual":
                            cert.A if which == "EL1" else cert.B if which == "EL2" else dec.residual,
                            "re-derived": again.truth.value})
    return check


def _step_k(models, params) -> StepOutcome:
    a, b = models
    if not same_distribution(a, b).holds:
        return StepOutcome.not_applicable("L != L~")
    ka, kb = a.effective_complexity(), b.effective_complexity()
    return StepOutcome(a.backend.decision(ka == kb, decided=a.structure.decided and b.structure.decided),
                       {"k": ka, "k~": kb, "d": a.d, "d~": b.d})


STEPS = (
    ProofStep("F4", "L = (F P_M)(G_0 P_N)^T for both models",
              "F3: what f has off M and g_0 off N never reaches a logit", _step_f4, ("F3", "F4")),
    ProofStep("<=", "EL1-EL3 imply L = L~",
              "substitute EL1, EL2 into F4, then EL3 removes A and B", _step_if, ("F4",)),
    ProofStep("kernels", "sum_x c_x P_M f(x) = 0 <=> sum_x c_x L[x,:] = 0 <=> sum_x c_x P~ f~(x) = 0",
              "F4 and F6: M is exactly what the distribution sees; L = L~", _step_kernels, ("F4", "F6")),
    ProofStep("EL1", "A* = (F P_M)^T ((F~ P~)^T)^+ satisfies EL1",
              "the rows of F P_M and F~ P~ obey the same linear relations (previous step)", _step_el("EL1"),
              ("kernels",)),
    ProofStep("EL2", "B* = (G_0 P_N)^T ((G~_0 P~)^T)^+ satisfies EL2", "the token-side twin of the two previous steps",
              _step_el("EL2"), ("F4", "F6")),
    ProofStep("EL3", "P~_M~ A*^T B* P~_N~ = P~_M~ P~_N~",
              "F4 and L = L~ give (A* u)^T (B* v) = u^T v on M~ x N~, and F5 says these span", _step_el("EL3"),
              ("F4", "F5", "EL1", "EL2")),
    ProofStep("k", "k = k~ (while d and d~ may differ)", "F1: k = rank L", _step_k, ("F1",)),
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
         _edge_k0, {"same_distribution": True, "el_equivalent": True}),
    Edge("d != d~", "boundary", "equivalent models of different dimensions (B.5 with extra coordinates)",
         _edge_dims, {"same_distribution": True, "el_equivalent": True}),
    Edge("pivot change", "boundary", "the same pair with another pivot token: the verdict does not change",
         _edge_pivot, {"same_distribution": True, "el_equivalent": True}),
)

RECORD = TheoremRecord(
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
)


def el_conditions_on_bases(a, b, A, B) -> dict[str, Decision]:
    """EL1--EL3 for given ``A``, ``B``, derived independently of
    :func:`el_certificate`: EL1 and EL2 as one matrix identity on all rows
    (``F P_M = F~ P~_M~ A^T``, ``G_0 P_N = G~_0 P~_N~ B^T``), and EL3 on bases
    ``U~``, ``V~`` of ``M~``, ``N~`` instead of projectors:
    ``(A U~)^T (B V~) = U~^T V~`` (equivalent, as ``P~_M~ = U~ (U~^T U~)^{-1} U~^T``
    with ``U~`` of full column rank, and likewise for ``N~``).

    >>> from allornone.symbolic import ExactModel
    >>> a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0], [0, 1]])
    >>> b = ExactModel([[2, 0], [0, 1]], [[0, 0], ["1/2", 0], [0, 1]])
    >>> c = el_certificate(a, b)
    >>> [d.holds for d in el_conditions_on_bases(a, b, c.A, c.B).values()]
    [True, True, True]
    >>> [d.holds for d in el_conditions_on_bases(a, b, c.A * 2, c.B).values()]
    [False, True, False]
    """
    be = a.backend
    sa, sb = a.structure, b.structure
    el1 = be.vanishes(a.F @ sa.P_M - b.F @ sb.P_M @ A.T, a.F, sa.P_M, b.F, sb.P_M, A.T)
    el2 = be.vanishes(a.G0 @ sa.P_N - b.G0 @ sb.P_N @ B.T, a.G0, sa.P_N, b.G0, sb.P_N, B.T)
    if sb.basis_M.shape[1] and sb.basis_N.shape[1]:
        U, V = sb.basis_M, sb.basis_N
        el3 = be.vanishes((A @ U).T @ (B @ V) - U.T @ V, A, U, B, V)
    else:
        el3 = be.decision(True)
    return {"EL1": el1, "EL2": el2, "EL3": el3}
