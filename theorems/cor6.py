r"""Corollary 6 (diversity; the linear identifiability of Roeder et al.).

If ``d = d~`` and both models are *diverse* (``SF = SG = R^d`` and likewise for
the twin), then ``L = L~`` iff there is an invertible ``A`` (``d x d``) with
``f(x) = A f~(x)`` and ``g_0(y) = A^{-T} g~_0(y)`` for all ``x, y``. Also: with
``d = d~`` and ``L = L~``, if one model is diverse so is the other (``k = d``).
Hence one diverse model suffices: with ``d = d~`` and exactly one model diverse,
``L != L~`` and no ``A`` exists, so the equivalence holds with both sides false.
And ``d = d~`` is implied: both models diverse with ``L = L~`` give
``d = k = d~``. Both are proof steps, checked on every instance.

Dropping diversity, or ``d = d~``, the B.5 generator gives equivalent pairs that
no invertible square matrix relates (see :data:`RECORD` ``.edges``).

>>> from allornone.symbolic import ExactModel
>>> a = ExactModel([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 0], [0, 1]])
>>> b = ExactModel([[1, 1], [0, 1], [1, 2]], [[0, 0], [1, 0], [-1, 1]])
>>> r = linear_identification(a, b)
>>> r.decision.holds, r.A.to_fractions()
(True, [['1', '0'], ['-1', '1']])
>>> res = equivalence(a, b)
>>> res.verdict, res.hypotheses_hold, res.A.to_fractions()
('equivalent', True, [['1', '0'], ['-1', '1']])
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sympy import And, Equivalent

from allornone.decision import Decision
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel
from allornone.theorems import thm5
from allornone.theorems.logic import Diverse, LinearlyIdentified, SameDimension, SameDistribution, model_symbols
from allornone.theorems.record import Edge, Hypothesis, Instance, ProofStep, StepOutcome, TheoremRecord

__all__ = ["equivalence", "Corollary6Result", "linear_identification", "LinearIdentification", "RECORD"]


@dataclass
class LinearIdentification:
    """Whether an invertible ``A`` with ``F = F~ A^T`` and ``G~_0 = G_0 A`` exists;
    ``A`` is one when it does; ``reason`` says how the answer was reached."""

    decision: Decision
    A: Any = None
    reason: str = ""


@dataclass
class Corollary6Result:
    """Outcome of :func:`equivalence`.

    ``verdict`` (``"equivalent"``, ``"not equivalent"`` or, floats only,
    ``"undecided"``) says whether the two models give the same distribution;
    ``hypotheses`` holds the decisions of ``d = d~`` and of the diversity of each
    model, ``hypotheses_hold`` whether all hold; ``A`` is the square invertible
    matrix with ``f(x) = A f~(x)`` and ``g_0(y) = A^{-T} g~_0(y)`` when one exists
    (always, when the hypotheses hold and the models are equivalent), ``A_inv_T``
    its inverse transpose; ``witness`` a pair ``(x, y)`` where the log-odds differ.
    """

    verdict: str
    hypotheses: dict
    hypotheses_hold: bool
    A: Any = None
    A_inv_T: Any = None
    witness: tuple[int, int] | None = None
    identification: LinearIdentification | None = None


def equivalence(a, b) -> Corollary6Result:
    """Corollary 6 on two models: the verdict of Theorem 5 together with the
    square invertible map that Corollary 6 promises under its hypotheses."""
    dist = thm5.same_distribution(a, b)
    hyps = {"same dimension": a.backend.decision(a.d == b.d), "diverse": a.is_diverse(), "diverse~": b.is_diverse()}
    ident = linear_identification(a, b)
    res = Corollary6Result(thm5.VERDICTS[dist.truth], hyps, all(d.holds for d in hyps.values()),
                           identification=ident, witness=dist.detail.get("witness"))
    if ident.decision.holds:
        res.A = ident.A
        res.A_inv_T = ident.A.inv().T if a.exact else _inv_T_float(ident.A)
    return res


def _inv_T_float(A):
    import numpy as np

    return np.linalg.inv(A).T


def _kron(be, X, Y):
    """Kronecker product on either realisation."""
    if be.exact:
        xs, ys = X.to_fraction_rows(), Y.to_fraction_rows()
        rows = [[a * b for a in xr for b in yr] for xr in xs for yr in ys]
        return ql.as_qmatrix(rows) if rows and rows[0] else ql.zeros(X.shape[0] * Y.shape[0], X.shape[1] * Y.shape[1])
    import numpy as np

    return np.kron(X, Y)


def _unvec(be, v, d):
    """Column-major ``d x d`` matrix from a ``d^2 x 1`` vector."""
    if be.exact:
        flat = [r[0] for r in v.to_fraction_rows()]
        return ql.as_qmatrix([[flat[j * d + i] for j in range(d)] for i in range(d)])
    return v.reshape(d, d, order="F")


def linear_identification(a, b) -> LinearIdentification:
    """Decide Corollary 6's right-hand side: is there an invertible ``A`` with
    ``f(x) = A f~(x)`` and ``g_0(y) = A^{-T} g~_0(y)`` for all ``x, y``?

    The two conditions are linear in ``A`` (``A F~^T = F^T``, ``G_0 A = G~_0``);
    the question is whether their affine solution set meets ``GL(d)``.

    Exact models: consistency; the necessary rank conditions ``rank F = rank F~``,
    ``rank G_0 = rank G~_0``; trying the minimum-norm solution and random points;
    and whether ``det`` vanishes identically on the solution set.

    Float models (:func:`allornone.numeric.equivalence.linear_identification`):
    the solution set is ``A_p + K_G Y K_F^T`` (``A_p`` from two least-squares
    solves, ``K_G`` and ``K_F`` bases of ``ker G_0`` and ``SF~^perp``), and the
    largest rank on it is ``min(rank [A_p, K_G], rank [A_p; K_F^T])``: memory
    ``O((m + n) d + d^2)``, no ``d^2 x d^2`` system, seconds at
    ``(m, n, d) = (256, 20000, 64)`` or ``(400, 465, 357)``.
    """
    a.check_comparable(b)
    be = a.backend
    d = a.d
    if b.d != d:
        return LinearIdentification(be.decision(False), None, f"d = {a.d} != d~ = {b.d}: no square matrix")
    if not be.exact:
        from allornone.numeric import equivalence as feq

        r = feq.linear_identification(a, b)
        return LinearIdentification(r.decision, r.A, r.reason)
    rf, dec_f = be.rank(a.F)
    rft, dec_ft = be.rank(b.F)
    rg, dec_g = be.rank(a.G0)
    rgt, dec_gt = be.rank(b.G0)
    if dec_f and dec_ft and dec_g and dec_gt and (rf != rft or rg != rgt):
        return LinearIdentification(be.decision(False), None,
                                    f"an invertible A preserves ranks: rank F {rf} vs {rft}, rank G_0 {rg} vs {rgt}")
    # vec(A F~^T) = (F~ kron I) vec A ; vec(G_0 A) = (I kron G_0) vec A   (column-major vec)
    I = be.eye(d)
    K = be.vstack(_kron(be, b.F, I), _kron(be, I, a.G0))
    rhs = be.vstack(_vec(be, a.F.T), _vec(be, b.G0))
    Kp = be.pinv(K)
    x0 = Kp @ rhs
    consistent = be.vanishes(K @ x0 - rhs, K, x0)
    if not consistent.holds:
        return LinearIdentification(consistent if consistent.undecided else be.decision(False, consistent.residual),
                                    None, "the linear conditions on A are inconsistent")
    A0 = _unvec(be, x0, d)
    null = be.eye(d * d) - Kp @ K  # projector onto ker K: the directions A may move in
    candidates = [A0]
    rng = random.Random(0)
    for _ in range(8):
        t = be.as_matrix([[rng.randint(-3, 3)] for _ in range(d * d)], "t")
        candidates.append(_unvec(be, x0 + null @ t, d))
    for A in candidates:
        r, decided = be.rank(A)
        if decided and r == d:
            return LinearIdentification(be.decision(True), A, "an invertible solution was found")
    if not be.exact:
        return LinearIdentification(be.decision(False, decided=False), None,
                                    "no invertible solution among the points tried; the float side cannot prove none exists")
    return _exact_det_search(A0, null, d)


def _vec(be, X):
    if be.exact:
        rows = X.to_fraction_rows()
        return ql.as_qmatrix([[rows[i][j]] for j in range(X.shape[1]) for i in range(X.shape[0])])
    return X.reshape(-1, 1, order="F")


def _exact_det_search(A0, null, d) -> LinearIdentification:
    import sympy

    basis = ql.column_basis(null)
    ts = sympy.symbols(f"t0:{basis.shape[1]}")
    A_sym = A0.to_sympy() + sum((t * _unvec_sym(basis[:, [j]], d) for j, t in enumerate(ts)), sympy.zeros(d, d))
    det = sympy.expand(A_sym.det())
    if det == 0:
        return LinearIdentification(Decision.exact(False), None, "det A vanishes identically on the solution set")
    for point in itertools.product(range(-2, 3), repeat=len(ts)):
        if det.subs(dict(zip(ts, point))) != 0:
            A = ql.as_qmatrix(A_sym.subs(dict(zip(ts, point))).tolist())
            return LinearIdentification(Decision.exact(True), A, "an invertible solution was found")
    raise AssertionError("a non-zero polynomial of low degree vanished on a whole grid")  # pragma: no cover


def _unvec_sym(col, d):
    import sympy

    flat = [Fraction(r[0]) for r in col.to_fraction_rows()]
    return sympy.Matrix(d, d, lambda i, j: sympy.Rational(flat[j * d + i].numerator, flat[j * d + i].denominator))


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
                       "L != L~ and no square A exists, so both sides of the equivalence are false"),
    Hypothesis("diversity", "both models diverse: SF = SG = R^d and SF~ = SG~ = R^d~ (one suffices: with d = d~ "
               "and L = L~ one diverse model makes the other diverse, k = d; with L != L~ no A exists either way)",
               And(ATOMS["diverse"], ATOMS["diverse~"])),
)


def decide(models, params) -> dict[str, Decision]:
    a, b = models
    return {
        "same_dimension": a.backend.decision(a.d == b.d, d=a.d, d_tilde=b.d),
        "diverse": a.is_diverse(),
        "diverse~": b.is_diverse(),
        "same_distribution": thm5.same_distribution(a, b),
        "linearly_identified": linear_identification(a, b).decision,
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
    if kind == "one diverse, same d":
        model, other = _one_diverse(rng)
        return Instance(kind, (model, other) if rng.random() < 0.5 else (other, model))
    if kind == "diverse, change of basis":
        model = _diverse_model(rng)
        return Instance(kind, (model, gen.change_of_basis(model, rng=rng)))
    if kind == "diverse, nudged":
        model = _diverse_model(rng)
        return Instance(kind, (model, _nudge(model, rng)))
    if kind == "not diverse, same d (B.5)":
        model = gen.random_model(rng, 4, 4, 3, rank_F=2, rank_G=2)
        k = model.effective_complexity()
        a = rng.randint(0, 3 - k)
        return Instance(kind, (model, gen.b5_twin(model, rng, a=a, b=3 - k - a)))
    model = _diverse_model(rng, rng.randint(1, 2))
    return Instance(kind, (model, gen.b5_twin(model, rng, a=rng.randint(1, 2), b=rng.randint(0, 1))))


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
    same, ident = thm5.same_distribution(a, b), linear_identification(a, b).decision
    be = a.backend
    return StepOutcome(Decision.all([be.decision(same.fails, decided=not same.undecided),
                                     be.decision(ident.fails, decided=not ident.undecided)]),
                       {"L = L~": same.truth.value, "f = A f~": ident.truth.value})


STEPS = (
    ProofStep("d = d~ implied", "if both models are diverse and L = L~, then d = d~",
              "diversity gives k = d and k~ = d~ (M = SF = R^d), and k = rank L = k~ (F1)", _step_same_d, ("F1",)),
    ProofStep("k = d", "with d = d~ and L = L~, one diverse model makes the other diverse",
              "k = rank L is shared (F1) and k = d forces SF = SG = R^d", _step_dims, ("F1",)),
    ProofStep("one diverse suffices", "if d = d~ and exactly one model is diverse, then L != L~ and no A relates "
              "them: the conclusion holds with both sides false",
              "the step k = d: L = L~ would make the other model diverse too", _step_one_diverse, ("k = d",)),
    ProofStep("M = N = R^d", "under diversity P_M = P_N = I", "M = Im(P_F P_G) = Im(I I)", _step_mn, ("F1",)),
    ProofStep("A* invertible", "Theorem 5's certificate is square and invertible with A*^T B* = I",
              "EL1 with P_M = I is f = A* f~; EL3 with P~ = I gives B* = A*^{-T}", _step_square, ("thm5",)),
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
                            "linearly_identified": False}, "diversity"),
    Edge("d = d~ is implied", "boundary",
         "both models diverse with d = 1, d~ = 2: d = k = rank L, so L != L~ and no square A exists; the conclusion "
         "holds with both sides false. d = d~ never fails alone: the other hypotheses imply it where it matters",
         _edge_dims, {"same_dimension": False, "diverse": True, "diverse~": True, "same_distribution": False,
                      "linearly_identified": False}, "same dimension"),
    Edge("one diverse model suffices", "boundary",
         "d = d~ = 2, f diverse, f~ not (rank G~_0 = 1): L != L~ (rank 2 vs 1) and no A relates them; the "
         "conclusion holds although the paper's hypothesis (both diverse) does not",
         _edge_one_diverse, {"same_dimension": True, "diverse": True, "diverse~": False, "same_distribution": False,
                             "linearly_identified": False}, "diversity"),
    Edge("minimal diverse", "boundary", "d = 1, one context, two tokens: diversity holds with nothing to spare",
         _edge_boundary, {"same_dimension": True, "diverse": True, "diverse~": True, "same_distribution": True,
                          "linearly_identified": True}, "diversity"),
)

RECORD = TheoremRecord(
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
)
