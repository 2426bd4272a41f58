r"""Exact generators for relational linearity (docs/results/thm14.md, Theorem 14).

A *relational instance* is a rational model ``(f, g)`` together with a query's
pairs of context indices ``(s, s⊕q)`` and a readout subspace ``Γ ⊆ N`` (the
columns of a ``d x r`` matrix). The models are built in canonical coordinates
and then, by default, mixed by a random unimodular change of basis:

* coordinates ``0 .. k-1`` are *identified* (``M = N`` is their span);
* the next ``hidden`` coordinates are hidden context coordinates
  (``SF ∩ M^⊥``: ``f`` has them, ``g_0`` does not);
* the last ``token_hidden`` coordinates are hidden token coordinates
  (``SG ∩ N^⊥``).

``reading`` says how the readouts ``P_Γ f(s⊕q)`` are planted:

* ``"M"`` -- ``P_Γ f(s⊕q) = P_Γ (W f(s) + b)`` with ``W`` reading only the
  identified coordinates, so ``Γ_q ⊆ M`` (relationally linear, reading M);
* ``"hidden"`` -- a hidden coordinate of ``f(s)`` is copied into an identified
  readout of ``f(s⊕q)`` (Appendix D.1): relationally linear, but only through
  ``Γ_q ⊄ M`` (generically: the verdict is always decided by the checker);
* ``"none"`` -- the identified part of ``f(s⊕q)`` is random (generically not
  relationally linear).

>>> import random
>>> inst = plant(random.Random(0), k=2, hidden=1, reading="M")
>>> inst.model.effective_complexity(), len(inst.pairs), inst.gamma.shape[0]
(2, 5, 3)
>>> ex = d1_example()
>>> ex.model.F.to_fractions()[:4]
[['0', '0'], ['0', '1'], ['0', '-1'], ['0', '2']]
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm
from typing import Sequence

from allornone.errors import ShapeError
from allornone.symbolic import linalg as ql
from allornone.symbolic.generators import b5_twin, random_integer_matrix, random_unimodular
from allornone.symbolic.model import ExactModel

__all__ = ["RelationalInstance", "plant", "integer_columns", "hidden_coordinates", "cube_hidden_phi",
           "d1_example", "d1_twin", "READINGS"]

READINGS = ("M", "hidden", "none")


@dataclass(frozen=True)
class RelationalInstance:
    """A model with a query's context pairs and a readout subspace.

    ``gamma`` is ``d x r`` (its columns span ``Γ ⊆ N``); ``probe`` is a token
    pair ``(a, b)`` with ``P_N(g(a) - g(b)) ∈ Γ`` when the generator planted one
    (else None); ``reading`` is how the readouts were planted."""

    model: ExactModel
    pairs: tuple
    gamma: ql.QMatrix
    reading: str
    probe: tuple | None = None


def _rng(rng) -> random.Random:
    return rng if isinstance(rng, random.Random) else random.Random(rng)


def _ints(rng, rows, cols, bound):
    return [[rng.randint(-bound, bound) for _ in range(cols)] for _ in range(rows)]


def integer_columns(X: ql.QMatrix) -> ql.QMatrix:
    """Each column scaled by a positive rational so that its entries are
    coprime integers (the column space is unchanged).

    >>> integer_columns(ql.as_qmatrix([["1/2", 0], ["1/3", 4]])).to_fractions()
    [['3', '0'], ['2', '1']]
    """
    cols = []
    rows = X.to_fraction_rows()
    for j in range(X.shape[1]):
        col = [r[j] for r in rows]
        den = lcm(*[v.denominator for v in col]) if col else 1
        ints = [int(v * den) for v in col]
        g = gcd(*ints)
        cols.append([v // g if g else 0 for v in ints])
    if not cols:
        return X
    return ql.as_qmatrix([[cols[j][i] for j in range(len(cols))] for i in range(X.shape[0])])


def plant(rng, *, k: int = 1, hidden: int = 1, token_hidden: int = 0, pairs: int | None = None,
          gamma_dim: int | None = None, reading: str = "M", extra_contexts: int = 0, bound: int = 2,
          mix: bool = True, probe: bool = True, invertible_W: bool = False) -> RelationalInstance:
    """A relational instance of dimension ``d = k + hidden + token_hidden`` with
    ``pairs`` context pairs (default ``k + max(hidden, 1) + 2``, enough that the
    property is not trivially true) and ``Γ`` of dimension ``gamma_dim``
    (default: random in ``1..k``) inside ``N``.

    ``reading`` is ``"M"``, ``"hidden"`` (needs ``hidden >= 1``) or ``"none"``
    (see the module docstring). ``invertible_W`` plants an invertible map on the
    identified coordinates, so that with ``gamma_dim = k`` the input subspace is
    all of ``M``. ``probe`` makes ``Γ`` contain ``P_N g_0(y)`` for a token
    ``y`` (recorded as ``probe = (y, pivot)``). ``mix`` applies a random
    unimodular change of basis ``f -> R f``, ``g -> R^{-T} g`` and carries
    ``Γ`` along (as ``P_N R^{-T} Γ``, integer columns).
    """
    rng = _rng(rng)
    if reading not in READINGS:
        raise ShapeError(f"reading must be one of {READINGS}, got {reading!r}")
    if k < 1:
        raise ShapeError("k must be >= 1 (Γ ⊆ N needs N != {0} to be interesting)")
    if hidden < 0 or token_hidden < 0:
        raise ShapeError("hidden and token_hidden must be >= 0")
    if reading == "hidden" and hidden < 1:
        raise ShapeError("reading 'hidden' needs at least one hidden context coordinate")
    r = rng.randint(1, k) if gamma_dim is None else gamma_dim
    if not 0 <= r <= k:
        raise ShapeError(f"gamma_dim must be in 0..{k}")
    p = k + max(hidden, 1) + 2 if pairs is None else pairs
    if p < 1:
        raise ShapeError("at least one pair is needed")
    h, t = hidden, token_hidden
    d = k + h + t
    n = k + t + 1 + rng.randint(0, 1)
    pivot = rng.randrange(n)
    # tokens: g_0 = [G_id | 0 | G_tok] with rank G_id = k and rank [G_id G_tok] = k + t
    while True:
        G_id = random_integer_matrix(rng, n - 1, k, k, bound)
        G_tok = _ints(rng, n - 1, t, bound)
        both = [a + b for a, b in zip(G_id, G_tok)]
        if ql.rank(ql.as_qmatrix(both)) == k + t:
            break
    rows0 = [gi + [0] * h + gt for gi, gt in zip(G_id, G_tok)]
    G0 = rows0[:pivot] + [[0] * d] + rows0[pivot:]
    y = pivot
    if probe and r >= 1:
        candidates = [j for j in range(n - 1) if any(G_id[j])]
        j = rng.choice(candidates)
        y = j + (j >= pivot)
    # Γ_c inside the identified coordinates
    while True:
        first = [G_id[y - (y > pivot)]] if probe and r >= 1 else []
        cols = first + _ints(rng, r - len(first), k, bound)
        Gc = ql.as_qmatrix([[cols[j][i] for j in range(r)] for i in range(k)]) if r else ql.zeros(k, 0)
        if ql.rank(Gc) == r:
            break
    perp = ql.nullspace(Gc.T) if r else ql.eye(k)  # k x (k - r): directions Γ ignores
    perp_rows = perp.to_fraction_rows()
    while True:
        W_c = random_integer_matrix(rng, k, k, k if invertible_W else None, bound)
        b_c = [rng.randint(-bound, bound) for _ in range(k)]
        sources = [_ints(rng, 1, k, bound)[0] + _ints(rng, 1, h, bound)[0] for _ in range(p)]
        targets = []
        for s in sources:
            z, hid = s[:k], s[k:]
            noise = [rng.randint(-bound, bound) for _ in range(perp.shape[1])]
            off = [sum((perp_rows[i][c] * noise[c] for c in range(perp.shape[1])), Fraction(0)) for i in range(k)]
            if reading == "M":
                ident = [sum(W_c[i][j] * z[j] for j in range(k)) + b_c[i] + off[i] for i in range(k)]
            elif reading == "hidden":
                v = [row[0] for row in Gc.to_fraction_rows()] if r else [Fraction(1)] + [Fraction(0)] * (k - 1)
                ident = [v[i] * hid[0] + b_c[i] + off[i] for i in range(k)]
            else:
                ident = [rng.randint(-bound, bound) for _ in range(k)]
            targets.append(list(ident) + [rng.randint(-bound, bound) for _ in range(h)])
        extra = [_ints(rng, 1, k + h, bound)[0] for _ in range(extra_contexts)]
        rows = sources + targets + extra
        if ql.rank(ql.as_qmatrix(rows)) == k + h:
            break
    order = list(range(len(rows)))
    rng.shuffle(order)
    where = {old: new for new, old in enumerate(order)}
    F = [list(rows[old]) + [0] * t for old in order]
    pair_idx = tuple((where[i], where[p + i]) for i in range(p))
    c = [rng.randint(-bound, bound) for _ in range(d)]
    G = [[G0[i][j] + c[j] for j in range(d)] for i in range(n)]
    gamma_c = ql.QMatrix.vstack(Gc, ql.zeros(h + t, r)) if r else ql.zeros(d, 0)
    model = ExactModel(F, G, pivot)
    if mix:
        R = ql.as_qmatrix(random_unimodular(rng, d))
        Rinv = R.inv()
        model = ExactModel(model.F @ R.T, model.G @ Rinv, pivot)
        gamma_c = integer_columns(model.projector_N @ Rinv.T @ gamma_c) if r else gamma_c
    return RelationalInstance(model, pair_idx, gamma_c, reading, (y, pivot) if probe and r >= 1 else None)


def hidden_coordinates(model: ExactModel) -> tuple[ql.QMatrix, ql.QMatrix]:
    """A rational basis ``H`` (``d x h``) of ``SF ∩ M^⊥`` -- the directions of
    ``f`` the distribution never sees -- and the coordinates ``C`` (``m x h``)
    of every ``f(x)`` along it: ``(P_F - P_M) f(x) = H C[x]``."""
    H = ql.column_basis(model.projector_F - model.projector_M)
    if H.shape[1] == 0:
        return H, ql.zeros(model.m, 0)
    C = model.F @ H @ (H.T @ H).inv()
    return H, C


def cube_hidden_phi(model: ExactModel):
    """A ``phi`` for :func:`~allornone.symbolic.generators.b5_twin` that cubes
    the hidden coordinates of each context (Appendix D.1): ``phi(x)_j = C[x, j]^3``
    for the coordinates of :func:`hidden_coordinates` (0 beyond them)."""
    _, C = hidden_coordinates(model)
    rows = C.to_fraction_rows()

    def phi(x: int, f_row: Sequence, a: int) -> list:
        vals = [v ** 3 for v in rows[x]]
        return (vals + [Fraction(0)] * a)[:a]

    return phi


def d1_example(sources: Sequence[int] = (0, 1, -1, 2)) -> RelationalInstance:
    """Appendix D.1 in ``d = 2`` with two tokens: ``g(y_0) = 0``, ``g(y_1) = e_0``,
    so ``M = N = span e_0`` and the second coordinate is hidden. Context ``s_i``
    has ``f(s_i) = (0, h_i)`` and ``s_i⊕q`` copies the hidden ``h_i`` into the
    identified coordinate: ``f(s_i⊕q) = (h_i, 0)``. With ``Γ = N`` the model is
    relationally linear through ``W = e_0 e_1^T`` (``Γ_q = span e_1 ⊄ M``), and
    reading only ``M`` fails as soon as the ``h_i`` are not all equal.

    >>> ex = d1_example()
    >>> ex.pairs
    ((0, 4), (1, 5), (2, 6), (3, 7))
    >>> ex.gamma.to_fractions()
    [['1'], ['0']]
    """
    hs = [int(v) for v in sources]
    F = [[0, v] for v in hs] + [[v, 0] for v in hs]
    model = ExactModel(F, [[0, 0], [1, 0]], 0)
    p = len(hs)
    return RelationalInstance(model, tuple((i, p + i) for i in range(p)), ql.as_qmatrix([[1], [0]]), "hidden",
                              (1, 0))


def d1_twin(model: ExactModel, T=None, R=None, c=None) -> ExactModel:
    """The B.5 twin of ``model`` whose hidden coordinates are cubed
    (:func:`cube_hidden_phi`), with ``T``, ``R``, ``c`` as in ``b5_twin``
    (defaults: identities and no offset, for a readable instance).

    >>> ex = d1_example()
    >>> d1_twin(ex.model).F.to_fractions()[:4]
    [['0', '0'], ['0', '1'], ['0', '-1'], ['0', '8']]
    """
    _, C = hidden_coordinates(model)
    k, a = model.effective_complexity(), C.shape[1]
    D = k + a
    eye = lambda s: [[int(i == j) for j in range(s)] for i in range(s)]  # noqa: E731
    return b5_twin(model, a=a, b=0 if D else 1, T=eye(k) if T is None else T, R=eye(D or 1) if R is None else R,
                   c=[0] * (D or 1) if c is None else c, phi=cube_hidden_phi(model))
