"""The facts F1--F6 of docs/theory/facts.md, as checks that run on every model.

Each function takes a model (exact or float) and returns a
:class:`~allornone.decision.Decision`; :func:`check_facts` runs them all.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0, 1], [0, 1, 0]], [[0, 0, 0], [1, 0, 0], [0, 1, 1]])
>>> all(d.holds for d in check_facts(m).values())
True
"""
from __future__ import annotations

from allornone.decision import Decision, Truth

__all__ = ["FACTS", "check_facts", "f1", "f2", "f3", "f4", "f5", "f6"]


def _err(s, *names) -> float:
    """The sum of the structure's error bounds ``names`` (float side; 0 when exact):
    how far a computed projector can be from the exact one."""
    return float(sum(s.errors.get(n, 0.0) for n in names))


def f1(model) -> Decision:
    """F1: ``M ⊆ SF``, ``N ⊆ SG`` and ``dim M = dim N = rank(P_F P_G) = rank L = k``."""
    be, s = model.backend, model.structure
    d = be.eye(model.d)
    return Decision.all([
        be.vanishes((d - s.P_F) @ s.basis_M, s.P_F, s.basis_M, extra=_err(s, "SF", "M")),
        be.vanishes((d - s.P_G) @ s.basis_N, s.P_G, s.basis_N, extra=_err(s, "SG", "N")),
        be.decision(s.basis_N.shape[1] == s.k, decided=s.decided),
        # Projectors have norm 1 and carry rounding error of that size, even where
        # SF and SG are orthogonal and |P_F||P_G| is only that error.
        be.rank_equals(s.P_F @ s.P_G, s.k, scale=1.0, noise=_err(s, "SF", "SG")),
        be.rank_equals(model.log_odds(), s.k, model.F, model.G0.T),
    ])


def f2(model) -> Decision:
    """F2: ``M ∩ N^⊥ = {0}`` and ``N ∩ M^⊥ = {0}``: ``P_N`` is injective on ``M``
    and ``P_M`` on ``N`` (so ``P_F(N) = M`` and ``P_G(M) = N``)."""
    be, s = model.backend, model.structure
    return Decision.all([
        be.rank_equals(s.P_N @ s.basis_M, s.k, s.P_N, s.basis_M, noise=_err(s, "M", "N")),
        be.rank_equals(s.P_M @ s.basis_N, s.k, s.P_M, s.basis_N, noise=_err(s, "M", "N")),
        be.rank_equals(be.hstack(s.P_F @ s.basis_N, s.basis_M), s.k, s.P_F, s.basis_N,
                       noise=_err(s, "SF", "M", "N")) if s.k else be.decision(True),
    ])


def f3(model) -> Decision:
    """F3: ``SF ∩ M^⊥ ⊆ SG^⊥`` and ``SG ∩ N^⊥ ⊆ SF^⊥``. As ``M ⊆ SF``,
    ``SF ∩ M^⊥`` is the image of ``P_F - P_M``; the claim is ``P_G (P_F - P_M) = 0``
    (and symmetrically)."""
    be, s = model.backend, model.structure
    return Decision.all([
        be.vanishes(s.P_G @ (s.P_F - s.P_M), s.P_G, s.P_F, extra=_err(s, "SF", "SG", "M")),
        be.vanishes(s.P_F @ (s.P_G - s.P_N), s.P_F, s.P_G, extra=_err(s, "SF", "SG", "N")),
    ])


def f4(model) -> Decision:
    """F4 (key identity): ``f(x)^T v = (P_M f(x))^T (P_N v)`` for ``v ∈ SG``, i.e.
    ``F P_G = F P_M P_N P_G``; in particular ``L = (F P_M)(G_0 P_N)^T``."""
    be, s = model.backend, model.structure
    F, G0 = model.F, model.G0
    return Decision.all([
        # F P_G itself carries the rounding of P_G at the size of F, also when P_M = 0.
        be.vanishes(F @ s.P_G - F @ s.P_M @ s.P_N @ s.P_G, F, s.P_G,
                    extra=_err(s, "SG", "M", "N") * _norm(be, F)),
        be.vanishes(model.log_odds() - (F @ s.P_M) @ (G0 @ s.P_N).T, F, G0.T),
    ])


def f5(model) -> Decision:
    """F5: ``{P_M f(x)}`` spans ``M`` and ``{P_N g_0(y)}`` spans ``N``."""
    be, s = model.backend, model.structure
    return Decision.all([be.rank_equals(model.F @ s.P_M, s.k, model.F, s.P_M,
                                        noise=_err(s, "M") * _norm(be, model.F)),
                         be.rank_equals(model.G0 @ s.P_N, s.k, model.G0, s.P_N,
                                        noise=_err(s, "N") * _norm(be, model.G0))])


def f6(model) -> Decision:
    """F6: ``w -> (w^T g_0(y))_y`` is injective on ``M`` and ``u -> (f(x)^T u)_x``
    is injective on ``N``."""
    be, s = model.backend, model.structure
    return Decision.all([be.rank_equals(model.G0 @ s.basis_M, s.k, model.G0, s.basis_M,
                                        noise=_err(s, "M") * _norm(be, model.G0)),
                         be.rank_equals(model.F @ s.basis_N, s.k, model.F, s.basis_N,
                                        noise=_err(s, "N") * _norm(be, model.F))])


def _norm(be, X) -> float:
    """Spectral norm (float side; 0 when exact, where no error bound is needed)."""
    if be.exact or 0 in X.shape:
        return 0.0
    import numpy as np

    return float(np.linalg.norm(X, 2))


FACTS = {"F1": f1, "F2": f2, "F3": f3, "F4": f4, "F5": f5, "F6": f6}


def check_facts(model) -> dict[str, Decision]:
    """Run F1--F6 on one model.

    Every fact is about ``M`` and ``N``; when a float rank decision behind them
    fell in the undecided band, a failed residual says nothing about the fact,
    and it is reported undecided."""
    out = {name: fact(model) for name, fact in FACTS.items()}
    if not model.structure.decided:
        out = {name: Decision(Truth.UNDECIDED, d.residual, d.tolerance, d.detail) if d.fails else d
               for name, d in out.items()}
    return out
