r"""The symmetry transforms of the invariance harness
(:mod:`allornone.theorems.engine.invariance`), and the exact binary64
realisation of a transformed instance.

Each transform maps an exact instance to another whose claims have the same
truth (it is applied only to the results of which it is a symmetry); every
transformed instance is then made exactly representable in binary64
(:func:`exact_binary64`) and checked to be so (:func:`verify_representable`).
The list, with what each moves, is on the invariance page and in
:data:`TRANSFORMS`.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from fractions import Fraction
from typing import Callable, Iterable

import numpy as np

from allornone.errors import NonFiniteValueError
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel
from allornone.theorems import get_record
from allornone.theorems.engine.record import Instance
from allornone.theorems.engine.runner import instance_rng

__all__ = ["Transform", "TRANSFORMS", "NotRepresentable", "exact_binary64", "is_binary64", "verify_representable",
           "realise_float", "transform_instance", "unimodular"]

#: Largest change of basis condition number, extra dimension, hidden size, offset, scaling exponent, scaling ratio.
MAX_CONDITION = 1e8
MAX_TWIN_DIM = 400
MAX_HIDDEN = 1e12
MAX_OFFSET = 1e12
MAX_EXPONENT = 300
MAX_RATIO = 1e8
#: Largest condition number of an integer shear, exponent of a power-of-two change of basis, and the odd
#: integer multiplier beyond 2^53 of the rounded-input transform.
MAX_SHEAR_CONDITION = 1e16
MAX_POW2 = 500
BIG_INTEGER_BITS = (54, 62)
#: Largest exponent of the powers of two that set contexts (tokens) far apart.
MAX_SPREAD = 1000

_PAIR_KEYS = {"lem8": ("ab", "ce"), "thm15": ("ab", "ce"), "lem8ctx": ("x12", "x34")}


class NotRepresentable(Exception):
    """A transformed instance whose float realisation is not the exact instance."""


# -- exact rows ---------------------------------------------------------------------------------

@dataclass
class _Raw:
    """Models as rational rows (``F``, ``G``) with their pivot and names, plus parameters."""

    F: list
    G: list
    like: list
    params: dict

    @classmethod
    def of(cls, inst: Instance) -> "_Raw":
        return cls([m.F.to_fraction_rows() for m in inst.models], [m.G.to_fraction_rows() for m in inst.models],
                   list(inst.models), dict(inst.params))

    def instance(self, kind: str) -> Instance:
        models = tuple(ExactModel(F, G, m.pivot, m.contexts, m.tokens) for F, G, m in zip(self.F, self.G, self.like))
        return Instance(kind, models, self.params)


def _matmul(X: list, Y: list) -> list:
    return (ql.as_qmatrix(X) @ ql.as_qmatrix(Y)).to_fraction_rows()


def _transpose(X: list) -> list:
    return [list(c) for c in zip(*X)]


def _denominators_lcm(rows: Iterable[list], odd: bool = False) -> int:
    """Least common multiple of the denominators (``odd``: of their odd parts,
    since a power of two in a denominator is representable)."""
    out = 1
    for row in rows:
        for v in row:
            q = Fraction(v).denominator
            out = math.lcm(out, q >> ((q & -q).bit_length() - 1) if odd else q)
    return out


def is_binary64(q: Fraction) -> bool:
    """Whether ``q`` is a finite binary64 number (so ``float(q)`` is exact).

    Parameters
    ----------
    q : Fraction
        A rational number.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_binary64(Fraction(3, 8)), is_binary64(Fraction(1, 3)), is_binary64(Fraction(2 ** 53 + 1))
    (True, False, False)
    """
    q = Fraction(q)
    try:
        f = float(q)
    except OverflowError:
        return False
    return math.isfinite(f) and Fraction(f) == q


def exact_binary64(inst: Instance, rid: str) -> Instance:
    """The instance rescaled so that it is representable in binary64 where it can be.

    ``F`` of every model times the least common multiple of the odd parts of
    the denominators of all ``F`` (powers of two are representable), likewise
    ``G`` (``L`` and ``L~`` both scale by the product, so every claim keeps its
    truth); readout vectors by their own denominator; a ratio ``λ`` that is not a
    binary64 number by ``1/λ`` with its two pairs swapped when that one is. The
    result is *not* checked here: see :func:`verify_representable`.

    Parameters
    ----------
    inst : Instance
        An exact instance of result ``rid``.
    rid : str
        The result id (it names the pair parameters that go with ``λ``).

    Returns
    -------
    Instance
        A new instance; ``inst`` is not modified.

    Examples
    --------
    >>> m = ExactModel([["1/3", 1]], [[0, 0], ["1/2", 2]])
    >>> inst = exact_binary64(Instance("x", (m,)), "thm5")
    >>> inst.models[0].F.to_fractions(), inst.models[0].G.to_fractions()
    ([['1', '3']], [['0', '0'], ['1/2', '2']])
    """
    raw = _Raw.of(inst)
    dF = _denominators_lcm((r for F in raw.F for r in F), odd=True)
    dG = _denominators_lcm((r for G in raw.G for r in G), odd=True)
    raw.F = [[[v * dF for v in r] for r in F] for F in raw.F]
    raw.G = [[[v * dG for v in r] for r in G] for G in raw.G]
    p = raw.params
    if "gamma" in p:
        rows = p["gamma"].to_fraction_rows()
        dg = _denominators_lcm(rows, odd=True)
        p["gamma"] = ql.as_qmatrix([[v * dg for v in r] for r in rows]) if rows and rows[0] else p["gamma"]
    if "lam" in p and not is_binary64(p["lam"]) and p["lam"] != 0 and is_binary64(1 / Fraction(p["lam"])):
        one, two = _PAIR_KEYS[rid]
        p[one], p[two], p["lam"] = p[two], p[one], 1 / Fraction(p["lam"])
    return raw.instance(inst.kind)


def verify_representable(inst: Instance) -> None:
    """Raise :class:`NotRepresentable` unless the float realisation of ``inst``
    converts back, entry by entry, to its exact models and parameters.

    Parameters
    ----------
    inst : Instance
        An exact instance.

    Raises
    ------
    NotRepresentable
        Naming the first entry (of ``F``, ``G``, ``λ`` or ``Γ``) that differs.

    Examples
    --------
    >>> try:
    ...     verify_representable(Instance("x", (ExactModel([[2 ** 53 + 1]], [[0], [1]]),)))
    ... except NotRepresentable as exc:
    ...     print(exc)
    model 0: F entry (0, 0) = 9007199254740993 is not a binary64 number
    """
    try:
        floats = inst.realise("float")
    except NonFiniteValueError as exc:
        raise NotRepresentable(f"an entry is beyond binary64's range ({exc})") from None
    for j, (em, fm) in enumerate(zip(inst.realise("exact"), floats)):
        for name, E, X in (("F", em.F, fm.F), ("G", em.G, fm.G)):
            for i, row in enumerate(E.to_fraction_rows()):
                for c, v in enumerate(row):
                    if not (math.isfinite(X[i, c]) and Fraction(float(X[i, c])) == v):
                        raise NotRepresentable(f"model {j}: {name} entry ({i}, {c}) = {v} is not a binary64 number")
    p = inst.params
    if "lam" in p and not is_binary64(p["lam"]):
        raise NotRepresentable(f"lambda = {p['lam']} is not a binary64 number")
    if "gamma" in p:
        for row in p["gamma"].to_fraction_rows():
            for v in row:
                if not is_binary64(v):
                    raise NotRepresentable(f"gamma entry {v} is not a binary64 number")


# -- random pieces ------------------------------------------------------------------------------

def _log_uniform_int(rng: random.Random, top: float) -> int:
    """An integer in ``[1, top]``, log-uniformly."""
    return max(1, int(round(10 ** rng.uniform(0, math.log10(top)))))


def unimodular(rng: random.Random, d: int, condition: float) -> tuple[list, list]:
    """An integer ``d x d`` matrix ``T`` with ``det T = ±1`` and its (integer)
    inverse, built from elementary integer row operations until the condition
    number reaches ``condition`` (``d = 1``: ``T = ±1``).

    Parameters
    ----------
    rng : random.Random
    d : int
        The size.
    condition : float
        The 2-norm condition number to reach (at most 400 operations are used).

    Returns
    -------
    tuple of two lists of lists of Fraction
        ``T`` and ``T^{-1}``, both integral.

    Examples
    --------
    >>> T, Ti = unimodular(random.Random(0), 3, 1e6)
    >>> (ql.as_qmatrix(T) @ ql.as_qmatrix(Ti)) == ql.eye(3)
    True
    """
    T = np.eye(d, dtype=object)
    Ti = np.eye(d, dtype=object)
    sign = rng.choice((-1, 1))
    T[0] *= sign
    Ti[:, 0] *= sign
    for _ in range(400 if d > 1 else 0):
        if np.linalg.cond(T.astype(float)) >= condition:
            break
        i, j = rng.sample(range(d), 2)
        c = rng.choice((-2, -1, 1, 2))
        # row_i += c row_j on T is T <- E T with E = I + c e_i e_j^T, E^{-1} = I - c e_i e_j^T
        T[i] += c * T[j]
        Ti[:, j] -= c * Ti[:, i]
    return [[Fraction(int(v)) for v in r] for r in T], [[Fraction(int(v)) for v in r] for r in Ti]


# -- the transforms -----------------------------------------------------------------------------

class _Skip(Exception):
    """The transform has nothing to act on in this instance (e.g. no hidden direction)."""


def _gamma_rows(raw: _Raw) -> list | None:
    return raw.params["gamma"].to_fraction_rows() if "gamma" in raw.params else None


def _set_gamma(raw: _Raw, rows: list, d: int) -> None:
    cols = raw.params["gamma"].shape[1]
    raw.params["gamma"] = ql.as_qmatrix(rows) if cols else ql.zeros(d, 0)


def _transport_like_g(before: ExactModel, after: ExactModel, gamma: ql.QMatrix, fallback: ql.QMatrix) -> list:
    """Readout vectors carried from ``before`` to ``after`` the way ``g`` is:
    ``u = P_N G_0^T α`` becomes ``P_N' G_0'^T α``, which reads the same logits
    (``N`` is defined by orthogonal projections, so a non-orthogonal change of
    basis does not map it to ``T^{-T} N``: the naive image of ``u`` can leave
    ``N'``). A column not in ``N`` keeps its naive image from ``fallback``."""
    K = before.projector_N @ before.G0.T
    alpha = ql.pinv(K) @ gamma
    moved = (after.projector_N @ after.G0.T @ alpha).to_fraction_rows()
    inside = (K @ alpha - gamma).to_fraction_rows()
    padded = fallback.to_fraction_rows()
    out = [list(r) for r in moved]
    for c in range(gamma.shape[1]):
        if any(r[c] for r in inside):
            for i, r in enumerate(out):
                r[c] = padded[i][c]
    return out


def _hidden_coordinates(rng, raw: _Raw, rid: str) -> None:
    def draw(top):
        return Fraction(rng.randint(-int(top), int(top)))
    _hide(rng, raw, (0, 3), lambda: 10 ** rng.uniform(0, math.log10(MAX_HIDDEN)), draw)


def _hidden_extremes(rng, raw: _Raw, rid: str) -> None:
    """Hidden coordinates whose entries mix numbers near ``2^±1000``,
    subnormals, zeros and ordinary integers in one row: no logit sees them,
    and a scaling by a row's largest entry pushes its other entries among the
    subnormals."""
    def draw(_top):
        kind = rng.choice(("large", "subnormal", "zero", "ordinary"))
        k = rng.choice((-1, 1)) * (rng.randrange(1, 1 << 20) | 1)
        if kind == "large":
            return k * Fraction(2) ** rng.randint(900, 1000 - 21)
        if kind == "subnormal":
            return k * Fraction(2) ** rng.randint(-1074 - 0, -1040 - 21) if rng.random() < 0.5 else \
                Fraction(rng.choice((-1, 1))) * Fraction(2) ** -1074
        return Fraction(0) if kind == "zero" else Fraction(k)
    _hide(rng, raw, (1, 2), lambda: None, draw)


def _hide(rng, raw: _Raw, counts: tuple[int, int], top, draw) -> None:
    """Extra coordinates, ``a`` for ``phi(x)`` and ``b`` for ``psi(y)`` (each
    drawn from ``counts``, not both zero), placed among the old ones in a
    random order, their entries ``draw(top())``: ``f(x)`` gets ``phi`` beside
    zeros where ``g`` has ``psi``, so no logit changes."""
    for j in range(len(raw.F)):
        d = len(raw.F[j][0])
        a, b = rng.randint(*counts), rng.randint(*counts)
        if a + b == 0:
            a = 1
        size = top()
        new = d + a + b
        order = list(range(new))
        rng.shuffle(order)
        # old coordinates go to order[:d], phi's to order[d:d+a], psi's to the rest
        def place(old, extra_f):
            out = [Fraction(0)] * new
            for c, v in enumerate(old):
                out[order[c]] = v
            for c, v in enumerate(extra_f):
                out[order[d + c]] = v
            return out
        raw.F[j] = [place(r, [draw(size) for _ in range(a)] + [0] * b) for r in raw.F[j]]
        raw.G[j] = [place(r, [0] * a + [draw(size) for _ in range(b)]) for r in raw.G[j]]
        if j == 0 and (g := _gamma_rows(raw)) is not None:
            cols = raw.params["gamma"].shape[1]
            padded = [[Fraction(0)] * cols for _ in range(new)]
            for c in range(d):
                padded[order[c]] = g[c]
            _set_gamma(raw, padded, new)


def _integer_columns(X: ql.QMatrix) -> list:
    """Columns of ``X`` as integer vectors (each scaled by its denominators)."""
    cols = _transpose(X.to_fraction_rows())
    return [[v * _denominators_lcm([c]) for v in c] for c in cols]


#: Draws of the coefficients of hidden components before an instance is skipped.
HIDDEN_DRAWS = 8


def _hidden_components(rng, raw: _Raw, rid: str) -> None:
    acted = False
    for j in range(len(raw.F)):
        m = ExactModel(raw.F[j], raw.G[j], raw.like[j].pivot)
        L = m.log_odds()
        top = 10 ** rng.uniform(0, math.log10(MAX_HIDDEN))
        # SF ∩ M^perp = F^T ker(L^T) and SG ∩ N^perp = G_0^T ker(L): directions no logit sees
        for which, (X, kernel) in enumerate(((m.F, ql.nullspace(L.T)), (m.G0, ql.nullspace(L)))):
            if kernel.shape[1] == 0:
                continue
            dirs = [h for h in _integer_columns(X.T @ kernel) if any(h)]
            if not dirs:
                continue
            acted = True
            rows = raw.F if which == 0 else raw.G
            # the components stay inside SF (SG), but random coefficients can
            # still cancel a direction of it (small integer models): then SF, M
            # or N would move and the transform is no symmetry -- draw again
            for _ in range(HIDDEN_DRAWS):
                new = [list(r) for r in rows[j]]
                for r in new:
                    for h in dirs:
                        c = rng.randint(-int(top), int(top)) // max(int(max(abs(v) for v in h)), 1)
                        for t, v in enumerate(h):
                            r[t] += c * v
                mat = ql.as_qmatrix(new)
                if which == 1:
                    mat = ExactModel(raw.F[j], new, raw.like[j].pivot).G0
                if ql.rank(mat) == ql.rank(X):
                    rows[j] = new
                    break
            else:
                raise _Skip("every draw of hidden components cancelled a direction of SF or SG")
    if not acted:
        raise _Skip("no direction in SF ∩ M^perp or SG ∩ N^perp")


def _change_of_basis(rng, raw: _Raw, rid: str) -> None:
    for j in range(len(raw.F)):
        d = len(raw.F[j][0])
        _basis(raw, j, *unimodular(rng, d, 10 ** rng.uniform(0, math.log10(MAX_CONDITION))))


def _basis(raw: _Raw, j: int, T: list, Ti: list) -> None:
    """Model ``j`` in the basis ``T``: ``f -> T f``, ``g -> T^{-T} g``, and the
    first model's readout vectors like ``g``."""
    raw.F[j] = _matmul(raw.F[j], _transpose(T))
    raw.G[j] = _matmul(raw.G[j], Ti)
    if j == 0 and (g := _gamma_rows(raw)) is not None and g and g[0]:
        _set_gamma(raw, _matmul(_transpose(Ti), g), len(T))


def _global_scaling(rng, raw: _Raw, rid: str) -> None:
    for j in range(len(raw.F)):
        s = Fraction(2) ** rng.randint(-MAX_EXPONENT, MAX_EXPONENT)
        raw.F[j] = [[v * s for v in r] for r in raw.F[j]]
        raw.G[j] = [[v / s for v in r] for r in raw.G[j]]
        if j == 0 and (g := _gamma_rows(raw)) is not None and g and g[0]:
            _set_gamma(raw, [[v / s for v in r] for r in g], len(g))


def _ratios(rng, count: int) -> list:
    """Factors ``k 2^-27`` with ``k`` log-uniform in ``[1, 1e8]``: ratios up to ``1e8``, binary64 numbers."""
    return [Fraction(_log_uniform_int(rng, MAX_RATIO), 2 ** 27) for _ in range(count)]


def _per_context_scaling(rng, raw: _Raw, rid: str) -> None:
    s = _ratios(rng, len(raw.F[0]))
    raw.F = [[[v * s[x] for v in r] for x, r in enumerate(F)] for F in raw.F]


def _per_token_scaling(rng, raw: _Raw, rid: str) -> None:
    t = _ratios(rng, len(raw.G[0]))
    for j, G in enumerate(raw.G):
        p = raw.like[j].pivot
        raw.G[j] = [r if y == p else [G[p][c] + t[y] * (v - G[p][c]) for c, v in enumerate(r)]
                    for y, r in enumerate(G)]


def _exponent(v: Fraction) -> int:
    """``floor(log2 |v|)`` of a non-zero rational, exactly."""
    v = abs(v)
    k = v.numerator.bit_length() - v.denominator.bit_length()
    return k - (Fraction(2) ** k > v)


def _far_apart(rng, rows: list) -> list:
    """Per row (a list of the rows of every model at one index) a factor
    ``k 2^e``: ``k`` odd, of 20 to 30 bits (so that the entries use their
    bits), ``e`` drawn from ``[-MAX_SPREAD, MAX_SPREAD]`` and cut so that no
    entry leaves ``[2^-1000, 2^1000]``: the rows end up far apart, some near
    the subnormals."""
    out = []
    for same in rows:
        vals = [_exponent(v) for r in same for v in r if v]
        k = rng.randrange(1 << 20, 1 << 30) | 1
        if not vals:
            out.append(Fraction(k))
            continue
        lo, hi = -1000 - min(vals), 1000 - max(vals) - 30
        e = max(min(rng.randint(-MAX_SPREAD, MAX_SPREAD), hi), lo) if lo <= hi else 0
        out.append(k * Fraction(2) ** e)
    return out


def _contexts_apart(rng, raw: _Raw, rid: str) -> None:
    s = _far_apart(rng, [[F[x] for F in raw.F] for x in range(len(raw.F[0]))])
    raw.F = [[[v * s[x] for v in r] for x, r in enumerate(F)] for F in raw.F]


def _tokens_apart(rng, raw: _Raw, rid: str) -> None:
    # g(y) -> t_y g_0(y): the offset g(y_0) removed (a common offset, itself a
    # symmetry; a pivot row kept beside rows 2^±1000 away would not be
    # representable), every other token scaled, in every model
    diffs = [[[v - G[raw.like[j].pivot][c] for c, v in enumerate(G[y])] for j, G in enumerate(raw.G)]
             for y in range(len(raw.G[0]))]
    t = _far_apart(rng, diffs)
    raw.G = [[[t[y] * v for v in diffs[y][j]] for y in range(len(G))] for j, G in enumerate(raw.G)]


def _common_offset(rng, raw: _Raw, rid: str) -> None:
    for j, G in enumerate(raw.G):
        top = 10 ** rng.uniform(0, math.log10(MAX_OFFSET))
        c = [Fraction(rng.randint(-int(top), int(top))) for _ in G[0]]
        raw.G[j] = [[v + c[t] for t, v in enumerate(r)] for r in G]


def _sparse_unimodular(rng, size: int) -> list:
    """A signed permutation times a few elementary integer operations: invertible
    over the integers and cheap to invert exactly at sizes in the hundreds."""
    perm = list(range(size))
    rng.shuffle(perm)
    R = [[0] * size for _ in range(size)]
    for i, p in enumerate(perm):
        R[i][p] = rng.choice((-1, 1))
    for _ in range(min(size, 20) if size > 1 else 0):
        i, j = rng.sample(range(size), 2)
        c = rng.choice((-1, 1))
        R[i] = [u + c * v for u, v in zip(R[i], R[j])]
    return R


def _b5_twin(rng, raw: _Raw, rid: str) -> None:
    j = len(raw.F) - 1
    model = ExactModel(raw.F[j], raw.G[j], raw.like[j].pivot)
    k = model.effective_complexity()
    total = _log_uniform_int(rng, MAX_TWIN_DIM)
    extra = max(total - k, 0 if k else 1)
    a = rng.randint(0, extra)
    twin = gen.b5_twin(model, rng, a=a, b=extra - a, R=_sparse_unimodular(rng, k + extra))
    raw.F[j], raw.G[j] = twin.F.to_fraction_rows(), twin.G.to_fraction_rows()


def _integer_shear(rng, raw: _Raw, rid: str) -> None:
    """``f -> T f``, ``g -> T^{-T} g`` with ``T`` a product of one or two integer
    shears ``I + c e_i e_j^T`` (``T^{-1}`` is ``I - c e_i e_j^T`` for each, integral):
    one shear has condition about ``c^2``, so ``c`` up to ``1e8`` reaches ``1e16``."""
    acted = False
    for j in range(len(raw.F)):
        d = len(raw.F[j][0])
        if d < 2:
            continue
        acted = True
        T = [[Fraction(int(r == c)) for c in range(d)] for r in range(d)]
        Ti = [[Fraction(int(r == c)) for c in range(d)] for r in range(d)]
        shears = rng.randint(1, 2)
        for _ in range(shears):
            i, k = rng.sample(range(d), 2)
            c = rng.choice((-1, 1)) * _log_uniform_int(rng, math.sqrt(MAX_SHEAR_CONDITION) ** (1 / shears))
            # T <- (I + c e_i e_k^T) T and T^{-1} <- T^{-1} (I - c e_i e_k^T)
            T[i] = [a + c * b for a, b in zip(T[i], T[k])]
            for r in range(d):
                Ti[r][k] -= c * Ti[r][i]
        _basis(raw, j, T, Ti)
    if not acted:
        raise _Skip("d = 1: a shear needs two coordinates")


def _power_of_two_basis(rng, raw: _Raw, rid: str) -> None:
    """``f -> D f``, ``g -> D^{-1} g`` with ``D = diag(2^e)``: one coordinate
    (``|e| <= 500``), two with opposite exponents, every coordinate its own,
    or half of them at ``+E`` and half at ``-E`` (``E`` from 400 to 500, so that
    every row mixes entries near ``2^E`` and ``2^-E``). Exact, and a change of
    basis like any other."""
    mode = rng.choice(("one", "two", "mixed", "split"))
    for j in range(len(raw.F)):
        d = len(raw.F[j][0])
        e = [0] * d
        if mode == "one" or d == 1:
            e[rng.randrange(d)] = rng.choice((-1, 1)) * rng.randint(1, MAX_POW2)
        elif mode == "two":
            i, k = rng.sample(range(d), 2)
            e[i] = rng.randint(1, MAX_POW2)
            e[k] = -e[i]
        elif mode == "mixed":
            e = [rng.randint(-MAX_POW2, MAX_POW2) for _ in range(d)]
        else:
            top = rng.randint(400, MAX_POW2)
            e = [top if c % 2 else -top for c in range(d)]
            rng.shuffle(e)
        _basis(raw, j, [[Fraction(2) ** e[r] if r == c else Fraction(0) for c in range(d)] for r in range(d)],
               [[Fraction(2) ** -e[r] if r == c else Fraction(0) for c in range(d)] for r in range(d)])


def _readout_columns(rng, raw: _Raw, rid: str) -> None:
    """Each column of the readout directions given as numbers (``Γ``) times a
    power of two of its own, ``|e| <= 500``: the same span, so the same claims."""
    g = _gamma_rows(raw)
    if not g or not g[0]:
        raise _Skip("no readout directions given as numbers")
    e = [rng.randint(-MAX_POW2, MAX_POW2) for _ in range(len(g[0]))]
    _set_gamma(raw, [[v * Fraction(2) ** e[c] for c, v in enumerate(row)] for row in g], len(g))


def _subnormal_scaling(rng, raw: _Raw, rid: str) -> None:
    """``F`` of every model times one power of two that puts its largest entry
    between ``2^-1030`` and ``2^-1000``: the smaller entries (and the logits)
    are subnormal. Every claim is homogeneous in ``F`` (``L`` and ``L~`` scale
    alike, ``W`` and the readouts are unchanged, the offset ``b`` scales)."""
    top = max((abs(v) for F in raw.F for r in F for v in r), default=Fraction(0))
    if top == 0:
        raise _Skip("F is zero")
    # floor(log2(top)) from the numerator's and denominator's bits: exact also for
    # a top far below 2^-1000, where a float log2 of it would underflow
    k = top.numerator.bit_length() - top.denominator.bit_length()
    k -= Fraction(2) ** k > top
    e = k + rng.randint(1000, 1030)
    s = Fraction(2) ** -e
    raw.F = [[[v * s for v in r] for r in F] for F in raw.F]


def _big_integers(rng, raw: _Raw, rid: str) -> None:
    """``F`` of every model times one odd integer between ``2^54`` and
    ``2^62``: the entries are integers that binary64 cannot hold. The float
    realisation rounds them and must declare it (``input_error``); a verdict
    that the declared error could reverse is undecided."""
    lo, hi = BIG_INTEGER_BITS
    c = rng.randrange(2 ** lo, 2 ** hi) | 1
    raw.F = [[[v * c for v in r] for r in F] for F in raw.F]


@dataclass(frozen=True)
class Transform:
    """A random transformation of an instance that keeps its claims' truth.

    ``apply(rng, raw, rid)`` acts in place on the rational rows; ``results`` the
    ids where it is a symmetry of every claim of the statement; ``variant`` per
    result id the atoms whose truth it may change (atoms decided for the edges,
    such as raw parallelism, which is not a property of the distribution)."""

    name: str
    description: str
    apply: Callable
    results: frozenset
    variant: dict = field(default_factory=dict)
    gamma_like_g: bool = False
    """Readout vectors of the first model follow ``g`` (see ``_transport_like_g``)."""
    realisation: str = "binary64"
    """How the float side receives the transformed instance: ``binary64`` (it
    must be exactly representable, :func:`verify_representable`), ``rounded``
    (Python integers or rationals that binary64 cannot hold, converted by the
    float layer with the error it declares), ``float32`` (single-precision
    arrays, exactly representable)."""


_ALL = frozenset(("thm5", "cor6", "lem8", "thm15", "thm14", "lem8ctx", "steering"))
#: Steering atoms decided for the edges: raw steering (Γ = R^d) sees hidden parts, and whether the
#: transported map is literally the identity matrix depends on the basis.
_STEERING_EDGES = {"raw_steered", "raw_steered~", "identity~"}
_HIDDEN_VARIANT = {"lem8": {"raw_parallel"}, "lem8ctx": {"raw_parallel"},
                   "thm15": {"raw_parallel", "raw_parallel~", "diverse", "diverse~"},
                   "thm14": {"rel_lin", "rel_lin~", "rel_lin_T", "rel_lin_T~", "enough_pairs"},
                   "steering": _STEERING_EDGES}

TRANSFORMS: tuple[Transform, ...] = (
    Transform("hidden coordinates", "extra coordinates carrying phi(x) / psi(y) up to 1e12",
              _hidden_coordinates, _ALL - {"cor6"}, _HIDDEN_VARIANT, gamma_like_g=True),
    Transform("hidden extremes", "extra coordinates whose entries mix 2^±1000, subnormals, zeros and integers",
              _hidden_extremes, _ALL - {"cor6"}, _HIDDEN_VARIANT, gamma_like_g=True),
    Transform("hidden components", "components in SF ∩ M^perp / SG ∩ N^perp up to 1e12",
              _hidden_components, _ALL, {**_HIDDEN_VARIANT, "cor6": {"diverse", "diverse~", "linearly_identified"}}),
    Transform("change of basis", "f -> T f, g -> T^-T g, T integer unimodular, condition up to 1e8",
              _change_of_basis, _ALL, {"steering": _STEERING_EDGES}, gamma_like_g=True),
    Transform("global scaling", "f -> s f, g -> g / s, s = 2^e, |e| <= 300", _global_scaling, _ALL,
              {"steering": _STEERING_EDGES}, gamma_like_g=True),
    Transform("per-context scaling", "f(x) -> s_x f(x) in every model, ratios up to 1e8",
              _per_context_scaling, frozenset(("thm5", "cor6", "lem8", "thm15"))),
    Transform("per-token scaling", "g_0(y) -> t_y g_0(y) in every model, ratios up to 1e8",
              _per_token_scaling, frozenset(("thm5", "cor6", "lem8ctx", "thm14")),
              # readouts named by token pairs (a, b) turn with t_a != t_b
              {"thm14": {"rel_lin_T", "rel_lin_T~", "rel_lin_T_M", "rel_lin_T_M~"}}),
    Transform("contexts far apart", "f(x) -> k_x 2^e_x f(x) in every model, k_x odd of 20-30 bits, |e_x| <= 1000",
              _contexts_apart, frozenset(("thm5", "cor6", "lem8", "thm15"))),
    Transform("tokens far apart", "g(y) -> k_y 2^e_y g_0(y) in every model, k_y odd of 20-30 bits, |e_y| <= 1000",
              _tokens_apart, frozenset(("thm5", "cor6", "lem8ctx", "thm14")),
              {"thm14": {"rel_lin_T", "rel_lin_T~", "rel_lin_T_M", "rel_lin_T_M~"}}),
    Transform("common offset", "g(y) -> g(y) + c, integer c up to 1e12", _common_offset, _ALL,
              {"steering": _STEERING_EDGES}),
    Transform("B.5 twin", "the last model replaced by a B.5 twin of dimension up to 400",
              _b5_twin, _ALL - {"cor6"},
              {"lem8": {"raw_parallel"}, "lem8ctx": {"raw_parallel"},
               "thm15": {"raw_parallel~", "diverse~"},
               "thm14": {"rel_lin~", "rel_lin_M~", "rel_lin_T~", "enough_pairs"}, "steering": _STEERING_EDGES}),
    Transform("integer shear", "f -> T f, g -> T^-T g, T a product of integer shears, condition up to 1e16",
              _integer_shear, _ALL, {"steering": _STEERING_EDGES}, gamma_like_g=True),
    Transform("power-of-two basis", "f -> D f, g -> D^-1 g, D = diag(2^e), |e| <= 500, one coordinate or mixed",
              _power_of_two_basis, _ALL, {"steering": _STEERING_EDGES}, gamma_like_g=True),
    Transform("readout columns scaled", "each column of Γ times its own 2^e, |e| <= 500 (the same span)",
              _readout_columns, frozenset(("thm14", "steering"))),
    Transform("subnormal entries", "F of every model times 2^-e: entries and logits among the subnormals",
              _subnormal_scaling, _ALL),
    Transform("integers beyond 2^53", "F of every model times an odd integer of 54 to 62 bits, rounded on input",
              _big_integers, _ALL, realisation="rounded"),
    Transform("float32 inputs", "the same instance given as float32 arrays", lambda rng, raw, rid: None, _ALL,
              realisation="float32"),
)
_BY_NAME = {t.name: t for t in TRANSFORMS}
#: Separates the transforms of a composition: ``"integer shear + power-of-two basis"``.
COMPOSE = " + "


def transform(name: str) -> Transform:
    """The transform called ``name``, or the composition of several joined by
    :data:`COMPOSE` (applied left to right): a symmetry of the results where
    every part is, whose variant atoms are those of any part. Only the last
    part may hand the float side something other than binary64 numbers.

    >>> t = transform("integer shear + power-of-two basis")
    >>> "thm14" in t.results, t.realisation
    (True, 'binary64')
    """
    parts = name.split(COMPOSE)
    for p in parts:
        if p not in _BY_NAME:
            raise ValueError(f"unknown transform {p!r}; known: {', '.join(_BY_NAME)}")
    if len(parts) == 1:
        return _BY_NAME[name]
    ts = [_BY_NAME[p] for p in parts]
    if any(t.realisation != "binary64" for t in ts[:-1]):
        raise ValueError(f"{name}: only the last transform may change how the float side receives numbers")
    variant: dict = {}
    for t in ts:
        for rid, atoms in t.variant.items():
            variant[rid] = set(variant.get(rid, set())) | set(atoms)

    def apply(rng, raw, rid):   # pragma: no cover - the parts are applied one by one instead
        raise NotImplementedError

    return Transform(name, "; ".join(t.description for t in ts), apply,
                     frozenset.intersection(*(t.results for t in ts)), variant,
                     any(t.gamma_like_g for t in ts), ts[-1].realisation)


@lru_cache(maxsize=1024)
def _base(rid: str, seed: int, index: int) -> Instance:
    return exact_binary64(get_record(rid).sample(instance_rng(seed, rid, index), index), rid)


@lru_cache(maxsize=1024)
def _base_truths(rid: str, seed: int, index: int) -> dict:
    return {n: d.truth for n, d in get_record(rid).evaluate(_base(rid, seed, index), "exact").atoms.items()}


def realise_float(inst: Instance, how: str = "binary64") -> Instance:
    """The float realisation of an exact instance, as a float-only instance.

    ``binary64``: :meth:`Instance.realise` (each model's ``to_float``);
    ``rounded``: each ``F`` and ``G`` given to ``FloatModel`` as Python integers
    and fractions, which the float layer converts and whose rounding it must
    declare; ``float32``: given as single-precision arrays (``NotRepresentable``
    when an entry is not a float32 number).

    Examples
    --------
    >>> m = ExactModel([[2 ** 60 + 1, 1]], [[0, 0], [1, 1]])
    >>> realise_float(Instance("x", (m,)), "rounded").models[0].input_error > 0
    True
    """
    from allornone.numeric.model import FloatModel

    if how == "binary64":
        return Instance(inst.kind, inst.realise("float"), inst.params, float_only=True)
    gamma = inst.params.get("gamma")
    if gamma is not None and hasattr(gamma, "to_numpy"):
        try:
            gamma.to_numpy()
        except NonFiniteValueError:
            raise NotRepresentable("a readout vector is beyond binary64's range") from None
    models = []
    for j, m in enumerate(inst.models):
        if how == "rounded":
            F, G = ([[int(v) if v.denominator == 1 else v for v in r] for r in X.to_fraction_rows()]
                    for X in (m.F, m.G))
        elif how == "float32":
            with np.errstate(over="ignore"):
                F, G = (np.array(X.to_numpy(), dtype=np.float32) for X in (m.F, m.G))
            for name, X, Y in (("F", m.F, F), ("G", m.G, G)):
                if not np.all(np.isfinite(Y)) or not X.represented_by(Y.astype(float)):
                    raise NotRepresentable(f"model {j}: an entry of {name} is not a float32 number")
        else:
            raise ValueError(f"unknown realisation {how!r}")
        models.append(FloatModel(F, G, m.pivot, m.contexts, m.tokens))
    return Instance(inst.kind, tuple(models), inst.params, float_only=True)


def transform_instance(rid: str, name: str, seed: int, index: int) -> tuple[Instance, Instance]:
    """The base instance ``index`` of result ``rid`` and its transform ``name``.

    Parameters
    ----------
    rid : str
        A result id.
    name : str
        A transform name (:data:`TRANSFORMS`).
    seed, index : int
        The base instance is the runner's instance ``index`` for ``seed``; the
        transform is seeded from ``(seed, rid, name, index)`` alone, so every
        transformed instance can be rebuilt from the report.

    Returns
    -------
    tuple of Instance
        The base instance and the transformed one, both passed through
        :func:`exact_binary64` (representability is not yet verified).

    Raises
    ------
    Exception
        The internal skip exception when the transform has nothing to act on.

    Examples
    --------
    >>> base, out = transform_instance("thm5", "common offset", 0, 1)
    >>> base.models[0].F == out.models[0].F, base.models[0].G0 == out.models[0].G0
    (True, True)
    """
    base = _base(rid, seed, index)
    transform(name)   # a name that is not known is refused before anything is built
    current = base
    for step, part in enumerate(name.split(COMPOSE)):
        raw = _Raw.of(current)
        raw.F = [[list(r) for r in F] for F in raw.F]
        raw.G = [[list(r) for r in G] for G in raw.G]
        t = _BY_NAME[part]
        # the first part draws as a transform on its own does, so that a single
        # transform's instances are those of its cell
        key = f"{seed}/{rid}/{part}/{index}" if step == 0 else f"{seed}/{rid}/{name}/{step}/{index}"
        t.apply(random.Random(key), raw, rid)
        if t.gamma_like_g and "gamma" in raw.params and raw.params["gamma"].shape[1]:
            after = ExactModel(raw.F[0], raw.G[0], current.models[0].pivot)
            moved = _transport_like_g(current.models[0], after, current.params["gamma"], raw.params["gamma"])
            raw.params["gamma"] = ql.as_qmatrix(moved)
        current = raw.instance(base.kind)
    out = exact_binary64(current, rid)
    return base, out


