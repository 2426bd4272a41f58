r"""Metamorphic invariance of the float verdicts.

A float verdict may be *undecided*; when it is decided it must agree with the
exact verdict, and so it must not move under a transformation that leaves the
truth of the claim unchanged. This module takes the sampled exact instances of
every result (``allornone.theorems.records()``), applies random *symmetry
transforms* to them, and compares, on the transformed instance, every atom's
float verdict with its exact verdict.

The transforms (:data:`TRANSFORMS`), each applied where it is a symmetry of the
result:

* ``hidden coordinates`` -- B.5-style extra coordinates: ``f`` gets coordinates
  carrying arbitrary values ``φ(x)``, ``g`` others carrying ``ψ(y)``, of size up
  to ``1e12``, at random positions;
* ``hidden components`` -- components of ``f`` in ``SF ∩ M^⊥`` and of ``g_0`` in
  ``SG ∩ N^⊥`` (same ``d``), of size up to ``1e12``;
* ``change of basis`` -- ``f -> T f``, ``g -> T^{-T} g`` with ``T`` an integer
  unimodular matrix (a product of elementary integer matrices, so ``T^{-T}`` is
  integral too) of condition number up to ``1e8``;
* ``global scaling`` -- ``f -> s f``, ``g -> g / s`` with ``s = 2^e``, ``|e| <= 300``;
* ``per-context scaling`` -- ``f(x) -> s_x f(x)`` with the same ``s_x`` in every
  model, ratios up to ``1e8`` (results whose claims are about token pairs or
  ``L = L~`` only);
* ``per-token scaling`` -- ``g_0(y) -> t_y g_0(y)`` with the same ``t_y`` in every
  model, ratios up to ``1e8`` (results whose claims are about context pairs,
  ``L = L~`` or relational linearity on a given ``Γ``, which reads ``f`` only);
* ``common offset`` -- ``g(y) -> g(y) + c`` with integer entries up to ``1e12``;
* ``B.5 twin`` -- a model replaced by its B.5 twin of dimension ``d~`` up to 400
  (the second model of a pair, so the first keeps its parameters).

Parameters travel with the models: readout vectors ``Γ`` of Theorem 14 transform
like ``g`` (``T^{-T} Γ`` under a change of basis, zeros on extra coordinates).

**Ground truth is the exact verdict of the instance the float layer sees.**
Every transformed instance is made exactly representable in binary64
(:func:`exact_binary64`): the ``F`` of all models are multiplied by one common
integer and the ``G`` by another (``L`` and ``L~`` scale alike, so every claim
keeps its truth), readout vectors by their own, and a ratio ``λ`` that is not a
binary64 number is replaced by ``1/λ`` with the two pairs swapped (the same claim
when ``λ != 0``). Representability is then *verified* by converting every float
array back to rationals and comparing with the exact models; instances that fail
are counted as ``not representable``, never dropped silently.

**Separation.** An instance is *separated* when every quantity that decides its
atoms and is not exactly zero exceeds its rounding bound by ``SEPARATION = 1e3``
(:func:`separation`). With ``u = 2^-53``, ``r_x = ‖f(x)‖``,
``c_y = ‖g(y)‖ + ‖g(y_0)‖`` (``c_{y_0} = 0``; the scale of the subtraction that forms
``g_0``) and ``d`` the model's dimension, the quantities and their bounds are:

* the smallest non-zero singular value of ``L̂ = [L[x,y] / (r_x c_y)]``, bound
  ``u (d+2) sqrt(m n)`` (the rank of ``L``, i.e. ``k``);
* the smallest non-zero singular value of ``F`` with rows scaled to unit length,
  and of ``G_0`` with row ``y`` divided by ``c_y``, bound ``u (d+2) sqrt(rows d)``
  (``dim SF``, ``dim SG``);
* for two models with ``L != L~``: ``max |L - L~|[x,y] / (u (d+2) r_x c_y + u (d~+2) r~_x c~_y)``;
* for parallelism of token pairs ``(a, b), (c, e)`` with ratio ``λ``: the
  log-odds residual ``L[:,a] - L[:,b] - λ (L[:,c] - L[:,e])``, entry ``x`` over
  ``u (d+2) r_x (c_a + c_b + |λ| (c_c + c_e))``, largest entry; the same for
  ``L[:,c] - L[:,e]``; and the raw residual ``‖g(a) - g(b) - λ (g(c) - g(e))‖``
  over ``2u (‖g(a)‖ + ‖g(b)‖ + |λ| (‖g(c)‖ + ‖g(e)‖))``; dually for context pairs.

The consistency residuals of relational linearity (Theorem 14) and of the linear
system of Corollary 6 are not measured: there the margin covers only the ranks
and ``L - L~``. The singular values are computed in floats from the exact
matrices rounded once, which is accurate to about one unit of the bound: far
below the factor ``1e3`` that the criterion asks for.

>>> report = run(["lem8"], ["change of basis"], per_cell=2, seed=1)
>>> cell, = report["cells"]
>>> cell["result"], cell["transform"], cell["instances"], cell["contradict"]
('lem8', 'change of basis', 2, 0)
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from functools import lru_cache
from fractions import Fraction
from typing import Callable, Iterable

import numpy as np

from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel
from allornone.theorems import get_record, records
from allornone.theorems.engine.record import Instance
from allornone.theorems.engine.runner import instance_rng, versions

__all__ = ["Transform", "TRANSFORMS", "NotRepresentable", "exact_binary64", "is_binary64", "separation",
           "transform_instance", "check", "run", "format_table", "UNIT_ROUNDOFF", "SEPARATION"]

#: Unit roundoff of binary64.
UNIT_ROUNDOFF = 2.0 ** -53
#: Factor by which the exact answer must clear its rounding bound for an instance to count as separated.
SEPARATION = 1e3
#: Largest change of basis condition number, extra dimension, hidden size, offset, scaling exponent, scaling ratio.
MAX_CONDITION = 1e8
MAX_TWIN_DIM = 400
MAX_HIDDEN = 1e12
MAX_OFFSET = 1e12
MAX_EXPONENT = 300
MAX_RATIO = 1e8

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
    for j, (em, fm) in enumerate(zip(inst.realise("exact"), inst.realise("float"))):
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
    for j in range(len(raw.F)):
        d = len(raw.F[j][0])
        a, b = rng.randint(0, 3), rng.randint(0, 3)
        if a + b == 0:
            a = 1
        top = 10 ** rng.uniform(0, math.log10(MAX_HIDDEN))
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
        raw.F[j] = [place(r, [Fraction(rng.randint(-int(top), int(top))) for _ in range(a)] + [0] * b)
                    for r in raw.F[j]]
        raw.G[j] = [place(r, [0] * a + [Fraction(rng.randint(-int(top), int(top))) for _ in range(b)])
                    for r in raw.G[j]]
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
        T, Ti = unimodular(rng, d, 10 ** rng.uniform(0, math.log10(MAX_CONDITION)))
        raw.F[j] = _matmul(raw.F[j], _transpose(T))
        raw.G[j] = _matmul(raw.G[j], Ti)
        if j == 0 and (g := _gamma_rows(raw)) is not None and g and g[0]:
            _set_gamma(raw, _matmul(_transpose(Ti), g), d)


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
    Transform("common offset", "g(y) -> g(y) + c, integer c up to 1e12", _common_offset, _ALL,
              {"steering": _STEERING_EDGES}),
    Transform("B.5 twin", "the last model replaced by a B.5 twin of dimension up to 400",
              _b5_twin, _ALL - {"cor6"},
              {"lem8": {"raw_parallel"}, "lem8ctx": {"raw_parallel"},
               "thm15": {"raw_parallel~", "diverse~"},
               "thm14": {"rel_lin~", "rel_lin_M~", "rel_lin_T~", "enough_pairs"}, "steering": _STEERING_EDGES}),
)
_BY_NAME = {t.name: t for t in TRANSFORMS}


@lru_cache(maxsize=1024)
def _base(rid: str, seed: int, index: int) -> Instance:
    return exact_binary64(get_record(rid).sample(instance_rng(seed, rid, index), index), rid)


@lru_cache(maxsize=1024)
def _base_truths(rid: str, seed: int, index: int) -> dict:
    return {n: d.truth for n, d in get_record(rid).evaluate(_base(rid, seed, index), "exact").atoms.items()}


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
    raw = _Raw.of(base)
    raw.F = [[list(r) for r in F] for F in raw.F]
    raw.G = [[list(r) for r in G] for G in raw.G]
    t = _BY_NAME[name]
    t.apply(random.Random(f"{seed}/{rid}/{name}/{index}"), raw, rid)
    if t.gamma_like_g and "gamma" in raw.params and raw.params["gamma"].shape[1]:
        after = ExactModel(raw.F[0], raw.G[0], base.models[0].pivot)
        moved = _transport_like_g(base.models[0], after, base.params["gamma"], raw.params["gamma"])
        raw.params["gamma"] = ql.as_qmatrix(moved)
    out = exact_binary64(raw.instance(base.kind), rid)
    return base, out


# -- separation ---------------------------------------------------------------------------------

def _floats(X: ql.QMatrix) -> np.ndarray:
    return X.to_numpy()


def _norms(X: np.ndarray) -> np.ndarray:
    # hypot avoids the overflow of a sum of squares of entries near 1e154
    return np.array([math.hypot(*r) if len(r) else 0.0 for r in X])


def _sigma_min(X: np.ndarray, rank: int) -> float:
    if rank == 0 or 0 in X.shape:
        return math.inf
    return float(np.linalg.svd(X, compute_uv=False)[rank - 1])


def _scaled(X: np.ndarray, rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    keep_r = rows > 0
    out = X[keep_r] / rows[keep_r, None]
    if cols is not None:
        keep_c = cols > 0
        out = out[:, keep_c] / cols[keep_c]
    return out


@dataclass
class _Scales:
    L: np.ndarray
    r: np.ndarray
    c: np.ndarray
    gnorm: np.ndarray
    F: np.ndarray
    G: np.ndarray
    d: int


def _scales(model: ExactModel) -> _Scales:
    F, G = _floats(model.F), _floats(model.G)
    gnorm = _norms(G)
    c = gnorm + gnorm[model.pivot]
    c[model.pivot] = 0.0
    return _Scales(_floats(model.log_odds()), _norms(F), c, gnorm, F, G, model.d)


def _ratio_max(value: np.ndarray, bound: np.ndarray) -> float | None:
    """``max value / bound`` over the non-zero entries of ``value`` (None when it is zero)."""
    nz = value != 0
    if not nz.any():
        return None
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(value[nz]) / bound[nz]))


def separation(rid: str, inst: Instance) -> float:
    """The margin of an exact instance: the smallest ratio of a decisive
    quantity that is not zero to its rounding bound (``inf`` when none); the
    instance is *separated* when it is at least :data:`SEPARATION`. The
    quantities are listed in the module docstring.

    Parameters
    ----------
    rid : str
        The result id (for the pair parameters of parallelism).
    inst : Instance
        An exact instance.

    Returns
    -------
    float
        The margin (``inf`` when nothing decisive is non-zero).

    Examples
    --------
    >>> a = ExactModel([[1, 0]], [[0, 0], [1, 0]])
    >>> b = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 44), 0]])
    >>> separation("thm5", Instance("x", (a, b))) < SEPARATION
    True
    >>> c = ExactModel([[1, 0]], [[0, 0], [1 + Fraction(1, 2 ** 20), 0]])
    >>> separation("thm5", Instance("x", (a, c))) < SEPARATION
    False
    """
    u = UNIT_ROUNDOFF
    margins = []
    scales = []
    for model in inst.models:
        s = _scales(model)
        scales.append(s)
        m, n = s.L.shape
        Lh = _scaled(_scaled(s.L, s.r).T, s.c).T if s.L.size else s.L
        margins.append(_sigma_min(Lh, model.effective_complexity()) / (u * (s.d + 2) * math.sqrt(m * n)))
        Fh = _scaled(s.F, s.r)
        margins.append(_sigma_min(Fh, ql.rank(model.F)) / (u * (s.d + 2) * math.sqrt(m * s.d)))
        G0h = _scaled(_floats(model.G0), s.c)
        margins.append(_sigma_min(G0h, ql.rank(model.G0)) / (u * (s.d + 2) * math.sqrt(n * s.d)))
    if len(inst.models) == 2:
        a, b = scales
        diff = _floats(inst.models[0].log_odds() - inst.models[1].log_odds())
        bound = u * ((a.d + 2) * np.outer(a.r, a.c) + (b.d + 2) * np.outer(b.r, b.c))
        margins.append(_ratio_max(diff, bound))
    if rid in _PAIR_KEYS:
        one, two = _PAIR_KEYS[rid]
        (p, q), (v, w) = inst.params[one], inst.params[two]
        lam = Fraction(inst.params["lam"])
        tokens = rid != "lem8ctx"
        for model, s in zip(inst.models, scales):
            L = model.log_odds()
            if not tokens:
                L = L.T
            cols = (lambda i: L[:, [i]])
            resid = _floats(cols(p) - cols(q) - (cols(v) - cols(w)) * lam)[:, 0]
            degen = _floats(cols(v) - cols(w))[:, 0]
            side, other = (s.c, s.r) if tokens else (s.r, s.c)
            bound = u * (s.d + 2) * other
            margins.append(_ratio_max(resid, bound * (side[p] + side[q] + abs(float(lam)) * (side[v] + side[w]))))
            margins.append(_ratio_max(degen, bound * (side[v] + side[w])))
            X = model.G if tokens else model.F
            raw = _floats(X[[p], :] - X[[q], :] - (X[[v], :] - X[[w], :]) * lam)[0]
            norms = s.gnorm if tokens else s.r
            rb = 2 * u * (norms[p] + norms[q] + abs(float(lam)) * (norms[v] + norms[w]))
            if raw.any():
                margins.append(math.hypot(*raw) / rb if rb else math.inf)
    values = [x for x in margins if x is not None]
    return min(values, default=math.inf)


# -- checking -----------------------------------------------------------------------------------

def check(rid: str, name: str, seed: int, index: int) -> dict:
    """Decide one transformed instance exactly and in floats.

    Parameters
    ----------
    rid, name, seed, index
        As in :func:`transform_instance`.

    Returns
    -------
    dict
        ``outcome``: ``agree`` (every atom's float verdict equals the exact
        one), ``contradict`` (some decided float verdict differs: listed in
        ``contradicted``), ``undecided`` (none differs, some are undecided:
        ``undecided_atoms``), ``error`` (the float layer raised: ``why``),
        ``not representable`` or ``skipped``; ``exact_changed``, the atoms whose
        exact truth moved although the transform is declared a symmetry of them
        (a defect of the harness); ``margin``, see :func:`separation`.

    Examples
    --------
    >>> check("lem8", "global scaling", 0, 0)["outcome"]
    'agree'
    """
    rec = get_record(rid)
    out = {"result": rid, "transform": name, "seed": seed, "index": index}
    try:
        base, inst = transform_instance(rid, name, seed, index)
        verify_representable(inst)
    except _Skip as exc:
        return {**out, "outcome": "skipped", "why": str(exc)}
    except NotRepresentable as exc:
        return {**out, "outcome": "not representable", "why": str(exc)}
    out["kind"] = inst.kind
    out["dims"] = [m.d for m in inst.models]
    before = _base_truths(rid, seed, index)
    exact = rec.evaluate(inst, "exact").atoms
    variant = _BY_NAME[name].variant.get(rid, set())
    out["exact_changed"] = sorted(n for n, d in exact.items()
                                  if n not in variant and d.truth is not before[n])
    out["margin"] = separation(rid, inst)
    try:
        flt = rec.evaluate(inst, "float").atoms
    except Exception as exc:  # a float layer that raises on a valid instance is a defect too
        return {**out, "outcome": "error", "why": f"{type(exc).__name__}: {exc}"}
    out["contradicted"] = sorted(n for n, d in flt.items() if not d.undecided and d.truth is not exact[n].truth)
    out["undecided_atoms"] = sorted(n for n, d in flt.items() if d.undecided)
    out["outcome"] = "contradict" if out["contradicted"] else "undecided" if out["undecided_atoms"] else "agree"
    return out


OUTCOMES = ("agree", "contradict", "undecided", "error", "not representable", "skipped")
#: Contradicting instances kept per cell in the report (their seeds reproduce them).
EXAMPLES_KEPT = 3


def _task(args):
    return check(*args)


def cells(ids: Iterable[str] | None = None, transforms: Iterable[str] | None = None) -> list[tuple[str, str]]:
    """The ``(result, transform)`` pairs where the transform is a symmetry of the result.

    Parameters
    ----------
    ids : iterable of str, optional
        Result ids (default: every record).
    transforms : iterable of str, optional
        Transform names (default: all of :data:`TRANSFORMS`).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    ValueError
        For an unknown transform name.
    allornone.theorems.UnknownResultError
        For an unknown result id.

    Examples
    --------
    >>> cells(["lem8ctx"], ["per-context scaling", "per-token scaling"])
    [('lem8ctx', 'per-token scaling')]
    """
    ids = list(records()) if ids is None else list(ids)
    names = [t.name for t in TRANSFORMS] if transforms is None else list(transforms)
    for n in names:
        if n not in _BY_NAME:
            raise ValueError(f"unknown transform {n!r}; known: {', '.join(_BY_NAME)}")
    for rid in ids:
        get_record(rid)
    return [(rid, n) for rid in ids for n in names if rid in _BY_NAME[n].results]


def run(ids: Iterable[str] | None = None, transforms: Iterable[str] | None = None, per_cell: int = 20,
        seed: int = 0, jobs: int = 1, progress: Callable[[str, str, int], None] | None = None) -> dict:
    """Check ``per_cell`` transformed instances of every applicable (result, transform) cell.

    Parameters
    ----------
    ids, transforms : iterable of str, optional
        As in :func:`cells`.
    per_cell : int
        Transformed instances per cell (indices ``0 .. per_cell - 1``).
    seed : int
        Seed of the base instances and of the transforms.
    jobs : int
        Worker processes (the report does not depend on it).
    progress : callable, optional
        Called as ``progress(rid, name, done)``.

    Returns
    -------
    dict
        The JSON report: ``cells`` (per cell the counts of each outcome,
        ``separated``, ``undecided_separated``, ``exact_changed``, atom counts
        and a few examples), ``totals`` and ``elapsed_s``.

    Raises
    ------
    ValueError
        When ``per_cell < 1`` or a name is unknown.
    """
    if per_cell < 1:
        raise ValueError("per_cell must be >= 1")
    started = time.perf_counter()
    todo = cells(ids, transforms)
    pool = None
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=jobs)
    out = []
    try:
        for rid, name in todo:
            tasks = [(rid, name, seed, i) for i in range(per_cell)]
            it = pool.map(_task, tasks, chunksize=max(1, per_cell // (4 * jobs))) if pool else map(_task, tasks)
            cell = {"result": rid, "transform": name, "instances": 0, **{o: 0 for o in OUTCOMES},
                    "separated": 0, "undecided_separated": 0, "exact_changed": 0, "atoms_contradicted": {},
                    "atoms_undecided": {}, "examples": [], "errors": [], "changed": []}
            for done, r in enumerate(it, 1):
                if progress:
                    progress(rid, name, done)
                cell["instances"] += 1
                cell[r["outcome"]] += 1
                if r["outcome"] in ("not representable", "skipped"):
                    continue
                if r["exact_changed"]:
                    cell["exact_changed"] += 1
                    if len(cell["changed"]) < EXAMPLES_KEPT:
                        cell["changed"].append(r)
                if r["outcome"] == "error":
                    if len(cell["errors"]) < EXAMPLES_KEPT:
                        cell["errors"].append(r)
                    continue
                for a in r["contradicted"]:
                    cell["atoms_contradicted"][a] = cell["atoms_contradicted"].get(a, 0) + 1
                for a in r["undecided_atoms"]:
                    cell["atoms_undecided"][a] = cell["atoms_undecided"].get(a, 0) + 1
                if r["margin"] >= SEPARATION:
                    cell["separated"] += 1
                    cell["undecided_separated"] += r["outcome"] == "undecided"
                if r["outcome"] == "contradict" and len(cell["examples"]) < EXAMPLES_KEPT:
                    cell["examples"].append(r)
            out.append(cell)
    finally:
        if pool:
            pool.shutdown()
    keys = ("instances",) + OUTCOMES + ("separated", "undecided_separated", "exact_changed")
    totals = {k: sum(c[k] for c in out) for k in keys}
    decided_checked = totals["agree"] + totals["contradict"] + totals["undecided"] + totals["error"]
    totals["checked"] = decided_checked
    totals["undecided_separated_rate"] = (totals["undecided_separated"] / totals["separated"]
                                          if totals["separated"] else 0.0)
    return {"seed": seed, "per_cell": per_cell, "separation": SEPARATION, "unit_roundoff": UNIT_ROUNDOFF,
            "versions": versions(), "elapsed_s": round(time.perf_counter() - started, 3), "cells": out,
            "totals": totals}


def format_table(report: dict) -> str:
    """The report of :func:`run` as a fixed-width table, one line per cell and a total.

    Parameters
    ----------
    report : dict

    Returns
    -------
    str
    """
    head = ("result", "transform", "n", "agree", "contra", "undec", "error", "not repr", "skip",
            "separ", "undec|sep", "exact chg")
    rows = [head]
    for c in report["cells"] + [{"result": "total", "transform": "", **report["totals"]}]:
        sep = c["separated"]
        und = f"{c['undecided_separated']} ({100 * c['undecided_separated'] / sep:.1f}%)" if sep else "0"
        rows.append((c["result"], c["transform"], c["instances"], c["agree"], c["contradict"], c["undecided"],
                     c["error"], c["not representable"], c["skipped"], sep, und, c["exact_changed"]))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = ["  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
