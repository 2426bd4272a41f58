r"""Float decisions of Theorem 5 with error bounds at the scale of each row.

Two float models are compared on the *same* contexts and tokens, so every
context ``x`` (and every token ``y``) may be rescaled by one power of two in
both models at once: ``L = L~`` and the EL relations are unchanged, and the
canonical certificate ``A*``, ``B*`` is unchanged whenever EL1/EL2 are
consistent (it is the unique solution whose rows lie in ``Im P~_M~ F~^T``).
So one huge context cannot set the scale at which the others are judged.

* :func:`same_distribution` compares ``L`` and ``L~`` entry by entry, in row
  blocks (no log-odds array larger than a block), each entry against its own
  bound ``rtol max(|L|, |L~|) + u (sqrt(d) + 2)(|f(x)| |g_0(y)| + |f~(x)| |g~_0(y)|)``
  plus the exact rounding error of the two subtractions ``G - g(y_0)``.
* :func:`el_certificate` builds ``A* = (F P_M)^T ((F~ P~)^T)^+`` and
  ``B* = (G_0 P_N)^T ((G~_0 P~)^T)^+`` and judges EL1--EL3 column by column
  against the errors the computed subspaces propagate (``Structure.errors``):
  a row of ``F`` of norm ``|f(x)|`` enters EL1 with error ``eps_M |f(x)|``,
  however little of it reaches the distribution.

Every decision is three-valued; a structure whose rank is undecided makes the
certificate undecided, never "fails".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from allornone.decision import Decision, Truth
from allornone.numeric import linalg as fl

__all__ = ["same_distribution", "el_certificate", "FloatCertificate"]

_U = fl.UNIT_ROUNDOFF
# Entries of one block of the log-odds comparison.
_BLOCK = 1 << 21


def _common_exponents(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return np.maximum(fl.row_exponents(X), fl.row_exponents(Y))


def _scaled_pair(a, b):
    """Both models' ``F`` and ``G_0`` (with subtraction errors), rows scaled by
    common powers of two; also the exponents."""
    G0a, E0a = fl.difference_with_error(a.G, a.pivot)
    G0b, E0b = fl.difference_with_error(b.G, b.pivot)
    ex = _common_exponents(a.F, b.F)
    ey = _common_exponents(G0a, G0b)
    sc = fl.scale_rows
    return (sc(a.F, ex), sc(b.F, ex), sc(G0a, ey), sc(G0b, ey), sc(E0a, ey), sc(E0b, ey), ex, ey)


def same_distribution(a, b) -> Decision:
    """``L = L~`` in floats, each entry against its own bound (module docstring).

    On failure ``detail["witness"]`` is the pair ``(x, y)`` whose difference is
    largest relative to its bound. The residual reported is ``max |L - L~|``,
    and the tolerance the bounds at the entry that decided."""
    tol = a.backend.tolerance
    Fa, Fb, Ga, Gb, Ea, Eb, ex, ey = _scaled_pair(a, b)
    da, db = a.d, b.d
    ca, cb = _U * (math.sqrt(da) + 2), _U * (math.sqrt(db) + 2)
    nFa, nFb = np.linalg.norm(Fa, axis=1), np.linalg.norm(Fb, axis=1)
    nGa, nGb = np.linalg.norm(Ga, axis=1), np.linalg.norm(Gb, axis=1)
    nEa, nEb = np.linalg.norm(Ea, axis=1), np.linalg.norm(Eb, axis=1)
    m, n = Fa.shape[0], Ga.shape[0]
    step = max(1, _BLOCK // max(n, 1))
    worst = (-1.0, (0, 0), 0.0, 0.0)   # ratio, entry, residual, bound
    max_res = 0.0
    any_fail = False
    any_undecided = False
    for i in range(0, m, step):
        La = Fa[i:i + step] @ Ga.T
        Lb = Fb[i:i + step] @ Gb.T
        diff = np.abs(La - Lb)
        nat = np.maximum(np.abs(La), np.abs(Lb))
        del La, Lb
        rnd = (ca * np.outer(nFa[i:i + step], nGa) + cb * np.outer(nFb[i:i + step], nGb)
               + np.outer(nFa[i:i + step], nEa) + np.outer(nFb[i:i + step], nEb))
        bound = tol.rtol * nat + rnd
        del nat, rnd
        bound = np.maximum(bound, np.finfo(float).tiny)
        ratio = diff / bound
        j = int(np.argmax(ratio))
        x, y = divmod(j, n)
        if ratio.flat[j] > worst[0]:
            worst = (float(ratio.flat[j]), (i + x, y), float(diff.flat[j]), float(bound.flat[j]))
        any_fail |= bool(np.any(ratio > tol.gap))
        any_undecided |= bool(np.any((ratio > 1) & (ratio <= tol.gap)))
        max_res = max(max_res, float(np.ldexp(diff, ex[i:i + step, None] + ey[None, :]).max()) if diff.size else 0.0)
    truth = Truth.FAILS if any_fail else Truth.UNDECIDED if any_undecided else Truth.HOLDS
    x, y = worst[1]
    e = int(ex[x] + ey[y]) if m and n else 0
    lo = float(np.ldexp(worst[3], e))
    detail = {} if truth is Truth.HOLDS else {"witness": (int(x), int(y))}
    return Decision(truth, max_res, (lo, tol.gap * lo), detail)


@dataclass
class FloatCertificate:
    """``A*``, ``B*`` with their EL1--EL3 decisions and error estimates."""

    A: Any
    B: Any
    el1: Decision
    el2: Decision
    el3: Decision
    decided: bool
    errors: dict


def _solve(Y, Z, k, tol):
    """``W = Y Z^+`` truncated at rank ``k``, ``sigma_k(Z)`` and ``|W|``."""
    if k == 0 or 0 in Z.shape:
        return np.zeros((Y.shape[0], Z.shape[0])), np.inf, 0.0
    u, s, vt = np.linalg.svd(Z, full_matrices=False)
    W = ((Y @ vt[:k].T) / s[:k]) @ u[:, :k].T
    return W, float(s[k - 1]), float(np.linalg.norm(W, 2))


def _maps(tol, X, Xt, EX, EXt, P, Pt, eps, eps_t, k):
    """``P X^T = W Pt Xt^T`` (EL1 with ``X = F``, EL2 with ``X = G_0``), ``W``
    the canonical solution; column by column against propagated errors."""
    c = 8 * _U * math.sqrt(max(P.shape[0], Pt.shape[0]))
    Y = P @ X.T
    Z = Pt @ Xt.T
    W, smin, nW = _solve(Y, Z, k, tol)
    nX, nXt = np.linalg.norm(X, axis=1), np.linalg.norm(Xt, axis=1)
    nEX = np.linalg.norm(EX, axis=1) if EX is not None else 0.0
    nEXt = np.linalg.norm(EXt, axis=1) if EXt is not None else 0.0
    dY = (eps + c) * np.linalg.norm(X, 2) + (np.linalg.norm(EX) if EX is not None else 0.0)
    dZ = (eps_t + c) * np.linalg.norm(Xt, 2) + (np.linalg.norm(EXt) if EXt is not None else 0.0)
    dW = (dY + nW * dZ) / smin if k else 0.0
    WZ = W @ Z
    R = Y - WZ
    res = np.linalg.norm(R, axis=0)
    nat = np.linalg.norm(Y, axis=0) + np.linalg.norm(WZ, axis=0)
    err = (eps + c) * nX + nEX + nW * ((eps_t + c) * nXt + nEXt) + dW * np.linalg.norm(Z, axis=0)
    return W, _columns(tol, res, nat, err), dW, nW


def _columns(tol, res, nat, err) -> Decision:
    bound = np.maximum(tol.rtol * nat + err, np.finfo(float).tiny)
    ratio = res / bound
    if ratio.size == 0:
        return Decision(Truth.HOLDS, 0.0, (0.0, 0.0))
    j = int(np.argmax(ratio))
    truth = (Truth.FAILS if ratio[j] > tol.gap else Truth.UNDECIDED if ratio[j] > 1 else Truth.HOLDS)
    if not np.isfinite(bound[j]):
        truth = Truth.UNDECIDED
    return Decision(truth, float(res.max()), (float(bound[j]), float(tol.gap * bound[j])))


def el_certificate(a, b) -> FloatCertificate:
    """Canonical certificate and EL1--EL3, in floats (module docstring)."""
    tol = a.backend.tolerance
    sa, sb = a.structure, b.structure
    Fa, Fb, Ga, Gb, Ea, Eb, _, _ = _scaled_pair(a, b)
    eM, eN = sa.errors.get("M", 0.0), sa.errors.get("N", 0.0)
    tM, tN = sb.errors.get("M", 0.0), sb.errors.get("N", 0.0)
    A, el1, dA, nA = _maps(tol, Fa, Fb, None, None, sa.P_M, sb.P_M, eM, tM, sb.k)
    B, el2, dB, nB = _maps(tol, Ga, Gb, Ea if np.any(Ea) else None, Eb if np.any(Eb) else None,
                           sa.P_N, sb.P_N, eN, tN, sb.k)
    lhs = sb.P_M @ A.T @ B @ sb.P_N
    rhs = sb.P_M @ sb.P_N
    c = 8 * _U * math.sqrt(max(a.d, b.d))
    err3 = dA * nB + nA * dB + (2 * (tM + tN) + c) * (nA * nB + 1)
    nat3 = float(np.linalg.norm(lhs, 2) + np.linalg.norm(rhs, 2))
    el3 = tol.decide(float(np.abs(lhs - rhs).max()) if lhs.size else 0.0, nat3, err3)
    decided = sa.decided and sb.decided
    return FloatCertificate(A, B, el1, el2, el3, decided, {"dA": dA, "dB": dB})
