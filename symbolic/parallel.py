r"""Planting parallel pairs in exact models (docs/results/lem8.md, docs/results/thm15.md).

A random model almost never has two parallel differences ``g(a) - g(b)`` and
``g(c) - g(e)``, so a check of Lemma 8 on random models alone would be vacuous.
The generators here put parallel pairs in on purpose, from small integers and
small fractions, on the token side (rows of ``G``) or on the context side (rows
of ``F``):

* :func:`plant_parallel` -- row ``a := row b + lam (row c - row e)``: raw
  parallelism with ratio ``lam``;
* :func:`invisible_direction` -- an integer ``w != 0`` the distribution never
  sees: ``F w = 0`` (token side: ``w`` in ``SF^perp``) or ``G_0 w = 0`` (context
  side: ``w`` in ``SG^perp``), or None when there is none;
* :func:`shift_row` -- add such a ``w`` to one row; the log-odds do not change;
* :func:`planted_pair` -- one instance of a named :data:`KINDS` kind (raw
  parallel, parallel only after projection, ``lam = 0``, degenerate pair, wrong
  ratio, not parallel), the sampler of the ``lem8``, ``thm15`` and ``lem8ctx``
  records.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0], [2, 0]], [[0, 0], [5, 5], [1, 0], [0, 0]])
>>> p = plant_parallel(m, (1, 0), (2, 3), 2)
>>> p.G.to_fractions()[1]
['2', '0']
>>> w = invisible_direction(m, 0)
>>> w
[0, 1]
>>> shift_row(p, 1, w).log_odds() == p.log_odds()
True
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Sequence

from allornone.errors import ShapeError, VocabularyError
from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel

__all__ = ["KINDS", "RATIOS", "PlantedPair", "plant_parallel", "invisible_direction", "shift_row",
           "choose_indices", "planted_pair"]

#: The kinds of instance :func:`planted_pair` builds.
KINDS = ("raw parallel", "parallel after projection only", "lambda = 0", "degenerate pair", "wrong lambda",
         "not parallel")

#: Non-zero ratios used for planting: small integers and fractions with small denominators.
RATIOS = tuple(Fraction(v) for v in ("2", "-1", "1/2", "-3/2", "3", "1/3", "-2/3", "1"))

_SIDES = ("tokens", "contexts")


@dataclass(frozen=True)
class PlantedPair:
    """A model with two index pairs and a ratio: ``ab = (a, b)``, ``ce = (c, e)``
    (tokens, or contexts on the context side), ``lam`` the ratio the instance is
    about; ``kind`` one of :data:`KINDS`."""

    kind: str
    model: ExactModel
    ab: tuple[int, int]
    ce: tuple[int, int]
    lam: Fraction


def _check_side(side: str) -> None:
    if side not in _SIDES:
        raise ShapeError(f"side must be 'tokens' or 'contexts', not {side!r}")


def _rows(model: ExactModel, side: str) -> list[list[Fraction]]:
    return (model.G if side == "tokens" else model.F).to_fraction_rows()


def _rebuild(model: ExactModel, rows, side: str) -> ExactModel:
    F, G = (model.F, rows) if side == "tokens" else (rows, model.G)
    return ExactModel(F, G, model.pivot, model.contexts, model.tokens)


def _check_index(i, count: int, side: str) -> int:
    if isinstance(i, bool) or not isinstance(i, int):
        raise ShapeError(f"{i!r} is not a {side[:-1]} index")
    if not 0 <= i < count:
        err = VocabularyError if side == "tokens" else ShapeError
        raise err(f"{side[:-1]} index {i} is out of range: there are {count} {side}")
    return i


def plant_parallel(model: ExactModel, ab: Sequence[int], ce: Sequence[int], lam, side: str = "tokens") -> ExactModel:
    """The model with row ``a`` replaced by ``row b + lam (row c - row e)``, so
    that ``g(a) - g(b) = lam (g(c) - g(e))`` (rows of ``G``; of ``F`` on the
    context side). ``a`` must differ from ``b``, ``c`` and ``e``."""
    _check_side(side)
    rows = _rows(model, side)
    a, b = (_check_index(i, len(rows), side) for i in ab)
    c, e = (_check_index(i, len(rows), side) for i in ce)
    if a in (b, c, e):
        raise ShapeError(f"the planted row {a} must differ from {b}, {c} and {e}")
    lam = Fraction(lam)
    rows[a] = [rows[b][j] + lam * (rows[c][j] - rows[e][j]) for j in range(len(rows[a]))]
    return _rebuild(model, rows, side)


def invisible_direction(model: ExactModel, rng=None, side: str = "tokens", bound: int = 2) -> list[int] | None:
    """An integer vector ``w != 0`` with ``F w = 0`` (token side) or ``G_0 w = 0``
    (context side): a direction that no log-odds sees. None when ``F`` (``G_0``)
    has full column rank. The first basis vector of the kernel (scaled to
    integers) when ``rng`` is None, else a random integer combination."""
    _check_side(side)
    K = ql.nullspace(model.F if side == "tokens" else model.G0)
    if K.shape[1] == 0:
        return None
    cols = K.T.to_fraction_rows()
    rng = random.Random(rng) if rng is not None and not isinstance(rng, random.Random) else rng
    while True:
        coef = [1] + [0] * (len(cols) - 1) if rng is None else [rng.randint(-bound, bound) for _ in cols]
        w = [sum((t * col[j] for t, col in zip(coef, cols)), Fraction(0)) for j in range(model.d)]
        if any(w):
            scale = lcm(*(v.denominator for v in w))
            return [int(v * scale) for v in w]


def shift_row(model: ExactModel, i: int, w: Sequence, side: str = "tokens") -> ExactModel:
    """The model with ``w`` added to row ``i`` of ``G`` (token side) or ``F``
    (context side)."""
    _check_side(side)
    rows = _rows(model, side)
    i = _check_index(i, len(rows), side)
    if len(w) != model.d:
        raise ShapeError(f"w has {len(w)} entries, the model has dimension {model.d}")
    rows[i] = [rows[i][j] + Fraction(w[j]) for j in range(model.d)]
    return _rebuild(model, rows, side)


def choose_indices(rng: random.Random, count: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Pairs ``(a, b)``, ``(c, e)`` of distinct indices with ``a`` not in
    ``{b, c, e}`` and ``c != e``; ``b`` may coincide with ``c`` or ``e`` (a
    shared index), so at least three indices are needed."""
    if count < 3:
        raise ShapeError(f"parallel pairs need at least 3 indices, got {count}")
    a, c, e = rng.sample(range(count), 3)
    others = [i for i in range(count) if i != a]
    b = rng.choice(others)
    return (a, b), (c, e)


def _base_model(rng: random.Random, side: str, invisible: bool) -> ExactModel:
    """A random small model; with ``invisible`` it has a direction the
    distribution never sees on the chosen side (``rank F < d``, resp.
    ``rank G_0 < d``)."""
    d = rng.randint(2 if invisible else 1, 4)
    if side == "tokens":
        m, n = rng.randint(1, 5), rng.randint(3, 7)
        rank_F = rng.randint(1, min(m, d - 1)) if invisible else rng.randint(0, min(m, d))
        rank_G = rng.randint(1, min(n - 1, d))
    else:
        m, n = rng.randint(3, 6), rng.randint(2, 6)
        rank_F = rng.randint(1, min(m, d))
        rank_G = rng.randint(1, min(n - 1, d - 1)) if invisible else rng.randint(0, min(n - 1, d))
    return gen.random_model(rng, m, n, d, rank_F, rank_G, pivot=rng.randrange(n))


def planted_pair(rng: random.Random, kind: str, side: str = "tokens") -> PlantedPair:
    """One random instance of ``kind`` (see :data:`KINDS`):

    * ``raw parallel`` -- row ``a`` planted on the line: parallel before and
      after projection, with ratio ``lam``;
    * ``parallel after projection only`` -- planted, then row ``a`` moved by an
      invisible ``w != 0`` (a component in ``SG ∩ SF^perp``, resp. ``SF ∩ SG^perp``):
      raw parallelism is broken, the log-odds are not;
    * ``lambda = 0`` -- row ``a`` = row ``b`` + invisible ``w`` (sometimes ``w = 0``);
    * ``degenerate pair`` -- row ``c`` = row ``e`` + invisible ``w``; ``a - b``
      visible or not;
    * ``wrong lambda`` -- planted with one ratio, the instance asks about another;
    * ``not parallel`` -- a random model and random pairs.

    >>> pp = planted_pair(random.Random(1), "raw parallel")
    >>> g = pp.model.G.to_fraction_rows()
    >>> (a, b), (c, e) = pp.ab, pp.ce
    >>> all(g[a][j] - g[b][j] == pp.lam * (g[c][j] - g[e][j]) for j in range(pp.model.d))
    True
    """
    _check_side(side)
    if kind not in KINDS:
        raise ShapeError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    invisible = kind in ("parallel after projection only", "lambda = 0", "degenerate pair")
    model = _base_model(rng, side, invisible)
    count = model.n if side == "tokens" else model.m
    ab, ce = choose_indices(rng, count)
    lam = rng.choice(RATIOS)
    if kind in ("raw parallel", "wrong lambda", "parallel after projection only"):
        model = plant_parallel(model, ab, ce, lam, side)
        if kind == "parallel after projection only":
            model = shift_row(model, ab[0], invisible_direction(model, rng, side), side)
        elif kind == "wrong lambda":
            lam += rng.choice((1, -1, Fraction(1, 2)))
    elif kind == "lambda = 0":
        w = invisible_direction(model, rng, side) if rng.random() < 0.7 else [0] * model.d
        rows = _rows(model, side)
        model = shift_row(_rebuild(model, rows[:ab[0]] + [rows[ab[1]]] + rows[ab[0] + 1:], side), ab[0], w, side)
        lam = Fraction(0)
    elif kind == "degenerate pair":
        c, e = ce
        rows = _rows(model, side)
        rows[c] = list(rows[e])
        model = shift_row(_rebuild(model, rows, side), c, invisible_direction(model, rng, side), side)
        if rng.random() < 0.4:  # a - b invisible as well: then every ratio works
            rows = _rows(model, side)
            rows[ab[0]] = list(rows[ab[1]])
            model = shift_row(_rebuild(model, rows, side), ab[0], invisible_direction(model, rng, side), side)
    return PlantedPair(kind, model, ab, ce, lam)
