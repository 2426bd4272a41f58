r"""Hypothesis strategies for models and pairs of models (public API).

Every strategy here builds its instance from small integers drawn by
Hypothesis, so when a property fails, shrinking walks towards the smallest
counterexample: entries towards 0, matrices towards the identity, sizes towards
the minimum. Instances are exact (:class:`~allornone.symbolic.ExactModel`); the
float realisation of the same instance is one ``.to_float()`` away, and
:func:`float_models` draws it directly.

* :func:`integer_matrices` -- nested lists of small integers;
* :func:`unimodular_matrices`, :func:`invertible_matrices` -- square integer
  matrices with determinant ``+-1`` (integer inverse) or any non-zero determinant;
* :func:`exact_models` -- a model ``(F, G)`` with chosen (or drawn) ``m, n, d``,
  pivot, and optionally the ranks of ``F`` and ``G_0``;
* :func:`ranked_integer_matrices` -- integer matrices of an exact rank;
* :func:`diverse_models` -- ``SF = SG = R^d`` (Corollary 6);
* :func:`b5_twins` -- the Appendix B.5 twin of a given model, every choice
  (``a``, ``b``, ``T``, ``R``, ``c`` and the values of ``phi``/``psi``) drawn;
* :func:`equivalent_pairs` -- same distribution: a B.5 twin or a change of basis;
* :func:`inequivalent_pairs` -- one log-odds entry changed, or the rank of ``L``;
* :func:`float_models` -- float realisations.

Sizes (``m``, ``n``, ``d``, ranks) are ints or strategies of ints. Pairs are
:class:`ModelPair` objects: tuples ``(model, twin)`` that also carry ``kind``
and ``info`` (the drawn parameters, e.g. the perturbed ``(x, y)``).

A property test of one's own, e.g. "equivalent models have the same effective
complexity":

>>> from hypothesis import given, settings
>>> from allornone.numeric.strategies import equivalent_pairs
>>> @settings(max_examples=10, deadline=None)
... @given(equivalent_pairs(m=3, n=3, d=2))
... def test_same_k(pair):
...     model, twin = pair
...     assert model.effective_complexity() == twin.effective_complexity()
>>> test_same_k()
"""
from __future__ import annotations

import random
from fractions import Fraction

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from allornone.symbolic import generators as gen
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel

__all__ = [
    "ModelPair",
    "integer_matrices",
    "unimodular_matrices",
    "invertible_matrices",
    "ranked_integer_matrices",
    "exact_models",
    "diverse_models",
    "b5_twins",
    "equivalent_pairs",
    "inequivalent_pairs",
    "float_models",
]

DEFAULT_M = st.integers(1, 4)
DEFAULT_N = st.integers(2, 5)
DEFAULT_D = st.integers(1, 4)


class ModelPair(tuple):
    """``(model, twin)`` with the way it was built: ``kind`` (e.g. ``"b5"``,
    ``"change of basis"``, ``"log-odds"``, ``"rank"``) and ``info`` (a dict of
    the drawn parameters). Unpacks like a 2-tuple."""

    def __new__(cls, model, twin, kind: str, info: dict | None = None):
        self = super().__new__(cls, (model, twin))
        self.kind = kind
        self.info = dict(info or {})
        return self

    def __repr__(self) -> str:
        return f"ModelPair({self[0]!r}, {self[1]!r}, kind={self.kind!r}, info={self.info!r})"


def _size(draw, value, what: str) -> int:
    """An int given directly or drawn from a strategy."""
    if isinstance(value, st.SearchStrategy):
        value = draw(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{what} must be an int or a strategy of ints, got {value!r}")
    return value


@st.composite
def integer_matrices(draw, rows, cols, min_value: int = -3, max_value: int = 3):
    """A ``rows x cols`` matrix (list of lists) of integers in
    ``[min_value, max_value]``; shrinks towards the zero matrix."""
    r, c = _size(draw, rows, "rows"), _size(draw, cols, "cols")
    if r < 0 or c < 0:
        raise InvalidArgument(f"a matrix cannot be {r}x{c}")
    entry = st.integers(min_value, max_value)
    return [[draw(entry) for _ in range(c)] for _ in range(r)]


@st.composite
def unimodular_matrices(draw, size, bound: int = 1):
    """A ``size x size`` integer matrix with determinant ``+-1`` (its inverse is
    an integer matrix too): a signed permutation times unit lower and upper
    triangular factors with entries in ``[-bound, bound]``. Shrinks towards the
    identity."""
    k = _size(draw, size, "size")
    if k < 0:
        raise InvalidArgument(f"size must be >= 0, got {k}")
    off = st.integers(-bound, bound)
    lo = [[1 if i == j else draw(off) if j < i else 0 for j in range(k)] for i in range(k)]
    up = [[1 if i == j else draw(off) if j > i else 0 for j in range(k)] for i in range(k)]
    perm = draw(st.permutations(range(k))) if k else []
    signs = [draw(st.sampled_from((1, -1))) for _ in range(k)]
    P = [[signs[i] if perm[i] == j else 0 for j in range(k)] for i in range(k)]
    return _matmul(_matmul(P, lo), up)


@st.composite
def invertible_matrices(draw, size, bound: int = 1, max_scale: int = 3):
    """A ``size x size`` invertible integer matrix ``U diag(s) V`` with ``U``,
    ``V`` unimodular and non-zero ``s_i`` in ``[-max_scale, max_scale]``: its
    inverse has genuine fractions. Shrinks towards the identity."""
    k = _size(draw, size, "size")
    U, V = draw(unimodular_matrices(k, bound)), draw(unimodular_matrices(k, bound))
    scale = st.integers(1, max_scale).flatmap(lambda v: st.sampled_from((v, -v)))
    s = [draw(scale) for _ in range(k)]
    return _matmul([[u * s[j] for j, u in enumerate(row)] for row in U], V)


@st.composite
def ranked_integer_matrices(draw, rows, cols, rank, bound: int = 1):
    """A ``rows x cols`` integer matrix of rank exactly ``rank``: the first
    ``rank`` columns of a unimodular matrix times the first ``rank`` rows of
    another (full column rank times full row rank). Shrinks towards
    ``[I 0; 0 0]``."""
    r, c, k = _size(draw, rows, "rows"), _size(draw, cols, "cols"), _size(draw, rank, "rank")
    if not 0 <= k <= min(r, c):
        raise InvalidArgument(f"rank {k} is impossible for a {r}x{c} matrix")
    if k == 0:
        return [[0] * c for _ in range(r)]
    left = [row[:k] for row in draw(unimodular_matrices(r, bound))]
    right = draw(unimodular_matrices(c, bound))[:k]
    return _matmul(left, right)


def _matmul(X, Y):
    inner = len(Y)
    cols = len(Y[0]) if Y else 0
    return [[sum(X[i][t] * Y[t][j] for t in range(inner)) for j in range(cols)] for i in range(len(X))]


def _rank_value(draw, rank, largest: int, what: str):
    """``None`` (unconstrained), or an exact rank: an int, or drawn from a
    strategy and clipped to the largest rank the shape allows."""
    if rank is None:
        return None
    if isinstance(rank, st.SearchStrategy):
        return max(0, min(draw(rank), largest))
    k = _size(draw, rank, what)
    if not 0 <= k <= largest:
        raise InvalidArgument(f"{what} = {k} is impossible here (at most {largest})")
    return k


@st.composite
def exact_models(draw, m=DEFAULT_M, n=DEFAULT_N, d=DEFAULT_D, rank_F=None, rank_G=None, pivot=None,
                 min_value: int = -3, max_value: int = 3, offset: bool = True):
    """An :class:`~allornone.symbolic.ExactModel` with ``m`` contexts, ``n``
    tokens and dimension ``d`` (ints or strategies).

    With ``rank_F`` / ``rank_G`` left ``None`` the entries of ``F`` and of the
    non-pivot rows of ``G_0`` are free small integers (any rank; shrinking
    reaches ``k = 0``); an int or a strategy fixes ``rank F`` / ``rank G_0``
    exactly (a drawn rank is clipped to what the shape allows). ``pivot``:
    int, strategy, or ``None`` for any token. ``G = G_0 + 1 c^T`` with a drawn
    offset ``c`` unless ``offset=False``.
    """
    m_, n_, d_ = _size(draw, m, "m"), _size(draw, n, "n"), _size(draw, d, "d")
    rF = _rank_value(draw, rank_F, min(m_, d_), "rank_F")
    rG = _rank_value(draw, rank_G, min(n_ - 1, d_), "rank_G")
    F = draw(integer_matrices(m_, d_, min_value, max_value) if rF is None else ranked_integer_matrices(m_, d_, rF))
    rows0 = draw(integer_matrices(n_ - 1, d_, min_value, max_value) if rG is None
                 else ranked_integer_matrices(n_ - 1, d_, rG))
    p = draw(st.integers(0, n_ - 1)) if pivot is None else _size(draw, pivot, "pivot")
    c = draw(integer_matrices(1, d_, min_value, max_value))[0] if offset else [0] * d_
    G0 = rows0[:p] + [[0] * d_] + rows0[p:]
    G = [[G0[i][j] + c[j] for j in range(d_)] for i in range(n_)]
    return ExactModel(F, G, p)


@st.composite
def diverse_models(draw, d=st.integers(1, 3), extra_contexts=st.integers(0, 2), extra_tokens=st.integers(0, 2),
                   pivot=None):
    """A diverse model (``SF = SG = R^d``, so ``k = d``): ``m = d + extra_contexts``
    contexts and ``n = d + 1 + extra_tokens`` tokens, ``rank F = rank G_0 = d``."""
    d_ = _size(draw, d, "d")
    m_ = d_ + _size(draw, extra_contexts, "extra_contexts")
    n_ = d_ + 1 + _size(draw, extra_tokens, "extra_tokens")
    return draw(exact_models(m=m_, n=n_, d=d_, rank_F=d_, rank_G=d_, pivot=pivot))


@st.composite
def b5_twins(draw, model: ExactModel, a=st.integers(0, 2), b=st.integers(0, 2)):
    """A B.5 twin of ``model`` (docs/constructions.md#b5) with every choice drawn: the
    extra sizes ``a``, ``b`` (``k + a + b >= 1``), ``T`` and ``R`` (invertible
    integer matrices), the offset ``c``, and the values ``phi(x)``, ``psi(y)``
    as free integer tables (a table is the most general function on a finite
    set). Returns a :class:`ModelPair` of kind ``"b5"``."""
    k = model.effective_complexity()
    a_, b_ = _size(draw, a, "a"), _size(draw, b, "b")
    if k + a_ + b_ == 0:
        a_ = 1
    D = k + a_ + b_
    T = draw(invertible_matrices(k))
    R = draw(invertible_matrices(D))
    c = draw(integer_matrices(1, D, -2, 2))[0]
    Phi = draw(integer_matrices(model.m, a_))
    Psi = draw(integer_matrices(model.n, b_))
    twin = gen.b5_twin(model, a=a_, b=b_, T=T if k else None, R=R, c=c,
                       phi=lambda x, f, size: Phi[x], psi=lambda y, g, size: Psi[y])
    return ModelPair(model, twin, "b5", {"a": a_, "b": b_, "T": T, "R": R, "c": c, "phi": Phi, "psi": Psi})


@st.composite
def equivalent_pairs(draw, models=None, kinds=("b5", "change of basis"), m=DEFAULT_M, n=DEFAULT_N, d=DEFAULT_D,
                     a=st.integers(0, 2), b=st.integers(0, 2)):
    """A pair with the same distribution (``L = L~``): a B.5 twin (see
    :func:`b5_twins`) or a change of basis ``f -> R f, g -> R^{-T} g`` with a
    drawn invertible ``R``. ``models`` (a strategy of exact models) defaults
    to :func:`exact_models` with sizes ``m, n, d``."""
    model = draw(models if models is not None else exact_models(m=m, n=n, d=d))
    kind = draw(st.sampled_from(tuple(kinds)))
    if kind == "b5":
        return draw(b5_twins(model, a, b))
    if kind == "change of basis":
        R = draw(invertible_matrices(model.d))
        return ModelPair(model, gen.change_of_basis(model, R), kind, {"R": R})
    raise InvalidArgument(f"unknown kind {kind!r}; use 'b5' or 'change of basis'")


DELTAS = st.sampled_from((1, -1, 2, -2, 3, Fraction(1, 2), Fraction(-1, 3)))


@st.composite
def inequivalent_pairs(draw, models=None, kinds=("log-odds", "rank"), m=DEFAULT_M, n=DEFAULT_N, d=DEFAULT_D,
                       deltas=DELTAS):
    """A pair with different distributions (``L != L~``).

    ``"log-odds"``: :func:`~allornone.symbolic.generators.perturb_log_odds` at a
    drawn context ``x``, non-pivot token ``y`` and non-zero ``delta``; ``info``
    holds ``x``, ``y``, ``delta`` (the only entry where the log-odds differ).
    ``"rank"``: :func:`~allornone.symbolic.generators.perturb_rank` (``rank L``
    changes by one), with its random choices seeded from a drawn integer.
    """
    model = draw(models if models is not None else exact_models(m=m, n=n, d=d))
    kind = draw(st.sampled_from(tuple(kinds)))
    if kind == "log-odds":
        x = draw(st.integers(0, model.m - 1))
        y = draw(st.sampled_from([j for j in range(model.n) if j != model.pivot]))
        delta = Fraction(draw(deltas))
        return ModelPair(model, gen.perturb_log_odds(model, x, y, delta), kind, {"x": x, "y": y, "delta": delta})
    if kind == "rank":
        seed = draw(st.integers(0, 2**16))
        twin = gen.perturb_rank(model, random.Random(seed))
        return ModelPair(model, twin, kind, {"seed": seed, "k": model.effective_complexity(),
                                             "k~": ql.rank(twin.log_odds())})
    raise InvalidArgument(f"unknown kind {kind!r}; use 'log-odds' or 'rank'")


def float_models(models=None, tolerance=None, **sizes):
    """Float realisations (:class:`~allornone.numeric.FloatModel`) of exact
    models drawn from ``models`` (default :func:`exact_models` with ``sizes``)."""
    base = models if models is not None else exact_models(**sizes)
    return base.map(lambda model: model.to_float(tolerance))
