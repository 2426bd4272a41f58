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

import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any


from allornone.decision import Decision
from allornone.symbolic import linalg as ql
from allornone.theorems import thm5

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
    if ident.decision.holds and ident.A is not None:
        res.A = ident.A
        res.A_inv_T = ident.A.inv().T if a.exact else _inv_T_float(ident.A)
    return res


def _inv_T_float(A):
    import numpy as np

    return np.linalg.inv(A).T


def linear_identification(a, b) -> LinearIdentification:
    """Decide Corollary 6's right-hand side: is there an invertible ``A`` with
    ``f(x) = A f~(x)`` and ``g_0(y) = A^{-T} g~_0(y)`` for all ``x, y``?

    The two conditions are linear in ``A`` (``A F~^T = F^T``, ``G_0 A = G~_0``);
    the question is whether their affine solution set meets ``GL(d)``.

    The rank conditions ``rank F = rank F~``, ``rank G_0 = rank G~_0`` are
    necessary, and with consistent conditions they suffice: the solution set
    ``A_0 + K_G W K_F^T`` (``K_G``, ``K_F`` bases of ``ker G_0`` and ``ker F~``)
    then always has an invertible member (proved in the comments below). So
    the verdict is consistency and the two ranks; the map handed back is the
    particular solution or a random member.

    Float models (:func:`allornone.numeric.equivalence.linear_identification`):
    the same argument on ``A_p`` from two least-squares solves, each condition
    judged by its residuals and the ranks by the models' structures: memory
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

        # f = A f~, g_0 = A^-T g~_0 give the same logits: where L != L~ is decided
        # (on the logits, which no change of basis moves) nothing is identified
        dist = feq.same_distribution(a, b)
        if dist.fails:
            return LinearIdentification(dist, None, "L != L~, and a linear identification keeps every logit")
        r = feq.linear_identification(a, b)
        return LinearIdentification(r.decision, r.A, r.reason)
    # f = A f~, g_0 = A^-T g~_0 give the same logits: where they differ,
    # nothing is identified (and the d^2 x d^2 system need not be solved)
    dist = thm5.same_distribution(a, b)
    if dist.fails:
        return LinearIdentification(dist, None, "L != L~, and a linear identification keeps every logit")
    rf, dec_f = be.rank(a.F)
    rft, dec_ft = be.rank(b.F)
    rg, dec_g = be.rank(a.G0)
    rgt, dec_gt = be.rank(b.G0)
    if dec_f and dec_ft and dec_g and dec_gt and (rf != rft or rg != rgt):
        return LinearIdentification(be.decision(False), None,
                                    f"an invertible A preserves ranks: rank F {rf} vs {rft}, rank G_0 {rg} vs {rgt}")
    # The solutions of A F~^T = F^T are A_1 + Z K_F^T (A_1 the minimum-norm
    # one, K_F a basis of ker F~); G_0 A = G~_0 then asks G_0 Z K_F^T =
    # G~_0 - G_0 A_1, whose solutions are Z_0 + K_G W (K_G a basis of ker G_0:
    # K_F^T has full row rank, so Z K_F^T = 0 only for Z = 0). So the solution
    # set is A_0 + K_G W K_F^T, from d x d solves (the float side's form; the
    # d^2 x d^2 Kronecker system of vec A took minutes at d = 15)
    A1, ok = ql.solve_left(a.F.T, b.F.T)
    KF, KG = ql.nullspace(b.F), ql.nullspace(a.G0)
    rhs = b.G0 - a.G0 @ A1
    if ok and KF.shape[1]:
        Z0 = ql.pinv(a.G0) @ rhs @ ql.pinv(KF.T)
        ok = a.G0 @ Z0 @ KF.T == rhs
        A0 = A1 + Z0 @ KF.T
    else:
        ok, A0 = ok and rhs == ql.zeros(*rhs.shape), A1
    if not ok:
        return LinearIdentification(be.decision(False), None, "the linear conditions on A are inconsistent")
    # Consistent conditions with equal ranks always have an invertible
    # solution. The largest rank on A_0 + K_G W K_F^T is
    # min(rank [A_0, K_G], rank [A_0; K_F^T]) (the maximal-rank completion), and
    # both are d:
    #   * G_0 maps col A_0 + ker G_0 onto col G_0 A_0 = col G~_0, of dimension
    #     rank G~_0 = rank G_0, with kernel ker G_0: the sum has dimension d;
    #   * a v orthogonal to row A_0 and to ker F~ is v = F~^T w with
    #     A_0 F~^T w = F^T w = 0; A_0 F~^T = F^T puts ker F~^T inside ker F^T,
    #     and equal ranks make them equal, so F~^T w = 0 and v = 0.
    # So the verdict is decided; a member is A_0 where it is invertible, else
    # A_0 + K_G W K_F^T for a W drawn from 2 * 10^6 + 1 integers a coordinate:
    # det is a non-zero polynomial in W of degree at most d, so a draw is
    # singular with probability at most d / (2 * 10^6) (Schwartz--Zippel). The
    # products stay d x d: the solution set written as dim ker G_0 x dim ker F~
    # directions of d x d matrices each had taken d^4 rationals (gigabytes at
    # d = 100).
    if ql.rank(A0) == d:
        return LinearIdentification(be.decision(True), A0, "an invertible solution was found")
    rng = random.Random(0)
    for _ in range(64):
        W = ql.as_qmatrix([[rng.randint(-10 ** 6, 10 ** 6) for _ in range(KF.shape[1])]
                           for _ in range(KG.shape[1])])
        A = A0 + KG @ W @ KF.T
        if ql.rank(A) == d:
            return LinearIdentification(be.decision(True), A, "an invertible solution was found")
    return LinearIdentification(be.decision(True), None, "an invertible solution exists (consistent conditions, "
                                "equal ranks); no draw found one")  # pragma: no cover (each draw fails with probability < d / 2e6)


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.cor6.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample  # noqa: E402,F401
