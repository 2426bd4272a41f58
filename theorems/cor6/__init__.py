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

        # f = A f~, g_0 = A^-T g~_0 give the same logits: where L != L~ is decided
        # (on the logits, which no change of basis moves) nothing is identified
        dist = feq.same_distribution(a, b)
        if dist.fails:
            return LinearIdentification(dist, None, "L != L~, and a linear identification keeps every logit")
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


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.cor6.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample  # noqa: E402,F401
