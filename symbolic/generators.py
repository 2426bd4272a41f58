r"""Generators of exact (rational) instances.

Every generator returns :class:`~allornone.symbolic.ExactModel` objects built from
small integers, so an instance exists exactly and, through
:meth:`ExactModel.to_float`, in floating point: the runner evaluates both
realisations of the same instance.

* :func:`random_model` -- a random model with chosen ``m, n, d`` and ranks of
  ``F`` and ``G_0`` (diverse when both ranks equal ``d``);
* :func:`b5_twin` -- the generator of docs/constructions.md#b5 (Appendix B.5): an
  equivalent model of another dimension, with arbitrary, even non-linear, ``phi``
  and ``psi`` filling the directions the distribution never sees;
* :func:`change_of_basis` -- ``f -> R f``, ``g -> R^{-T} g``;
* :func:`perturb_log_odds`, :func:`perturb_rank` -- non-equivalent neighbours.

>>> import random
>>> rng = random.Random(0)
>>> model = random_model(rng, m=4, n=4, d=3, rank_F=2, rank_G=2)
>>> twin = b5_twin(model, rng, a=1, b=2)
>>> twin.d == model.effective_complexity() + 3
True
>>> twin.log_odds() == model.log_odds()
True
"""
from __future__ import annotations

import random
from fractions import Fraction
from typing import Callable, Sequence

from allornone.errors import InputFormatError, RealisationMismatchError, ShapeError
from allornone.symbolic import linalg as ql
from allornone.symbolic.model import ExactModel

__all__ = [
    "random_integer_matrix",
    "random_unimodular",
    "random_model",
    "b5_twin",
    "change_of_basis",
    "perturb_log_odds",
    "perturb_rank",
    "default_phi",
    "default_psi",
]

Row = Sequence[Fraction]


def _rng(rng) -> random.Random:
    if isinstance(rng, random.Random):
        return rng
    return random.Random(rng)


def _rational(value, where: str) -> Fraction:
    """One exact rational of a generator's input (an int, a Fraction, a string
    like ``"3/4"``), refused as the exact side refuses anything inexact."""
    q = ql.to_rational(value, where)
    return Fraction(int(q.numerator), int(q.denominator))


def _exact(model, what: str) -> None:
    if not isinstance(model, ExactModel):
        raise RealisationMismatchError(f"{what} builds exact models: expected an ExactModel, got "
                                       f"{type(model).__name__}")


def random_integer_matrix(rng, rows: int, cols: int, rank: int | None = None, bound: int = 3) -> list[list[int]]:
    """A ``rows x cols`` integer matrix with entries of modest size and the given
    rank (a product of two random integer factors, retried until the rank is
    exact)."""
    rng = _rng(rng)
    if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
        # (entries in [-bound, bound]: with no non-zero entry to draw the retries never end)
        raise InputFormatError(f"bound must be a positive integer, got {bound!r}")
    full = min(rows, cols)
    r = full if rank is None else rank
    if not 0 <= r <= full:
        raise ShapeError(f"rank {r} impossible for a {rows}x{cols} matrix")
    while True:
        if r == full:
            X = [[rng.randint(-bound, bound) for _ in range(cols)] for _ in range(rows)]
        else:
            A = [[rng.randint(-bound, bound) for _ in range(r)] for _ in range(rows)]
            B = [[rng.randint(-bound, bound) for _ in range(cols)] for _ in range(r)]
            X = [[sum(A[i][t] * B[t][j] for t in range(r)) for j in range(cols)] for i in range(rows)]
        if rows == 0 or cols == 0 or ql.rank(ql.as_qmatrix(X)) == r:
            return X


def random_unimodular(rng, size: int, bound: int = 1) -> list[list[int]]:
    """A random integer matrix with determinant ``+-1`` (so its inverse is an
    integer matrix too): a product of unit triangular factors and a signed
    permutation."""
    rng = _rng(rng)
    Lo = [[(1 if i == j else rng.randint(-bound, bound) if j < i else 0) for j in range(size)] for i in range(size)]
    Up = [[(1 if i == j else rng.randint(-bound, bound) if j > i else 0) for j in range(size)] for i in range(size)]
    perm = list(range(size))
    rng.shuffle(perm)
    signs = [rng.choice((-1, 1)) for _ in range(size)]
    P = [[(signs[i] if perm[i] == j else 0) for j in range(size)] for i in range(size)]
    X = ql.as_qmatrix(P) @ ql.as_qmatrix(Lo) @ ql.as_qmatrix(Up) if size else ql.zeros(0, 0)
    return [[int(v) for v in row] for row in X.to_fraction_rows()]


def random_model(rng, m: int, n: int, d: int, rank_F: int | None = None, rank_G: int | None = None,
                 bound: int = 3, pivot: int = 0, offset: bool = True) -> ExactModel:
    """A random rational model with ``rank F = rank_F`` and ``rank G_0 = rank_G``
    (defaults: as large as the shape allows). ``rank_F = rank_G = d`` gives a
    diverse model (Corollary 6)."""
    rng = _rng(rng)
    F = random_integer_matrix(rng, m, d, rank_F, bound)
    rows0 = random_integer_matrix(rng, n - 1, d, rank_G, bound)
    c = [rng.randint(-bound, bound) if offset else 0 for _ in range(d)]
    G0 = rows0[:pivot] + [[0] * d] + rows0[pivot:]
    G = [[G0[i][j] + c[j] for j in range(d)] for i in range(n)]
    return ExactModel(F, G, pivot)


def default_phi(x: int, f: Row, a: int) -> list[Fraction]:
    """A deliberately non-linear filler for the hidden context coordinates:
    cubes and a parity of the context index and of ``f(x)``."""
    s = sum(f, Fraction(0))
    return [Fraction(((x + 2 * j + 1) ** 3) % 7 - 3) + (s * s if j == 0 else Fraction((x * (j + 1)) % 2))
            for j in range(a)]


def default_psi(y: int, g0: Row, b: int) -> list[Fraction]:
    """A deliberately non-linear filler for the hidden token coordinates (it
    vanishes on the pivot, as B.5 requires)."""
    s = sum(g0, Fraction(0))
    return [Fraction(((y + j + 2) ** 3) % 5 - 2) + (s ** 3 if j == 0 else 0) for j in range(b)]


def b5_twin(model: ExactModel, rng=None, *, a: int = 1, b: int = 1, T=None, R=None, c=None,
            phi: Callable[[int, Row, int], Sequence] | None = None,
            psi: Callable[[int, Row, int], Sequence] | None = None) -> ExactModel:
    r"""An equivalent model built as in Appendix B.5 (docs/constructions.md#b5).

    With ``U``, ``V`` rational bases of ``M`` and ``N`` (``d x k``) and
    :math:`C = (U^\top U)^{-1} U^\top V (V^\top V)^{-1}`:

    .. math::

        \tilde f(x) = R\,[T U^\top f(x);\ \varphi(x);\ 0_b], \qquad
        \tilde g_0(y) = R^{-\top} [T^{-\top} C V^\top g_0(y);\ 0_a;\ \psi(y)], \qquad
        \tilde g(y) = \tilde g_0(y) + c.

    ``T`` (``k x k``) and ``R`` (``(k+a+b)^2``) default to random unimodular
    integer matrices, ``c`` to a random integer offset, ``phi``/``psi`` to the
    non-linear :func:`default_phi` / :func:`default_psi`. ``phi(x, f(x), a)``
    and ``psi(y, g_0(y), b)`` may be any functions returning ``a`` (``b``)
    rationals; ``psi`` is forced to vanish on the pivot.
    """
    _exact(model, "b5_twin")
    rng = _rng(rng if rng is not None else 0)
    k = model.effective_complexity()
    D = k + a + b
    if a < 0 or b < 0:
        raise ShapeError("a and b must be >= 0")
    if D == 0:
        raise ShapeError("k + a + b must be >= 1 (k = 0 here): pass a >= 1 or b >= 1")
    U, V = model.basis_M, model.basis_N
    C = (U.T @ U).inv() @ U.T @ V @ (V.T @ V).inv() if k else ql.zeros(0, 0)
    T = ql.as_qmatrix(random_unimodular(rng, k) if T is None else T, "T") if k else ql.zeros(0, 0)
    R = ql.as_qmatrix(random_unimodular(rng, D) if R is None else R, "R")
    if T.shape != (k, k) or R.shape != (D, D):
        raise ShapeError(f"T must be {k}x{k} and R {D}x{D}")
    if (k and ql.rank(T) < k) or ql.rank(R) < D:
        raise ShapeError("T and R must be invertible")
    phi = phi or default_phi
    psi = psi or default_psi
    F_rows, G0_rows = model.F.to_fraction_rows(), model.G0.to_fraction_rows()
    Phi = ql.as_qmatrix([[_rational(v, "phi") for v in phi(x, F_rows[x], a)] for x in range(model.m)], "phi") \
        if a else ql.zeros(model.m, 0)
    Psi = ql.as_qmatrix([[Fraction(0)] * b if y == model.pivot else [_rational(v, "psi") for v in psi(y, G0_rows[y], b)]
                         for y in range(model.n)], "psi") if b else ql.zeros(model.n, 0)
    if Phi.shape != (model.m, a) or Psi.shape != (model.n, b):
        raise ShapeError("phi must return a values per context and psi b values per token")
    Tinv = T.inv() if k else T
    F_core = model.F @ U @ T.T if k else ql.zeros(model.m, 0)
    G_core = model.G0 @ V @ C.T @ Tinv if k else ql.zeros(model.n, 0)
    F_new = ql.QMatrix.hstack(F_core, Phi, ql.zeros(model.m, b)) @ R.T
    G0_new = ql.QMatrix.hstack(G_core, ql.zeros(model.n, a), Psi) @ R.inv()
    c = ql.as_qmatrix([c] if c is not None else [[rng.randint(-2, 2) for _ in range(D)]], "c")
    ones = ql.as_qmatrix([[1]] * model.n)
    return ExactModel(F_new, G0_new + ones @ c, model.pivot, model.contexts, model.tokens)


def change_of_basis(model: ExactModel, R=None, rng=None) -> ExactModel:
    """``f -> R f``, ``g -> R^{-T} g`` for an invertible ``R`` (random unimodular by default)."""
    _exact(model, "change_of_basis")
    R = ql.as_qmatrix(random_unimodular(_rng(rng if rng is not None else 0), model.d) if R is None else R, "R")
    if R.shape != (model.d, model.d) or ql.rank(R) < model.d:
        raise ShapeError(f"R must be an invertible {model.d}x{model.d} matrix")
    return ExactModel(model.F @ R.T, model.G @ R.inv(), model.pivot, model.contexts, model.tokens)


def perturb_log_odds(model: ExactModel, x: int, y: int, delta=1) -> ExactModel:
    """A model whose log-odds equal ``model``'s except ``L[x, y] + delta``
    (``y`` must not be the pivot): one extra coordinate carries the change."""
    _exact(model, "perturb_log_odds")
    if y == model.pivot:
        raise ShapeError("the pivot's log-odds are identically 0 and cannot be perturbed")
    if not (0 <= x < model.m and 0 <= y < model.n):
        raise ShapeError(f"({x}, {y}) is outside the {model.m}x{model.n} log-odds matrix")
    delta = _rational(delta, "delta")
    if delta == 0:
        raise ShapeError("delta must be non-zero")
    u = ql.as_qmatrix([[delta if i == x else 0] for i in range(model.m)])
    v = ql.as_qmatrix([[1 if j == y else 0] for j in range(model.n)])
    return ExactModel(ql.QMatrix.hstack(model.F, u), ql.QMatrix.hstack(model.G, v), model.pivot,
                      model.contexts, model.tokens)


def perturb_rank(model: ExactModel, rng=None, bound: int = 2) -> ExactModel:
    """A model whose log-odds matrix has a different rank: ``k + 1`` by a rank-one
    update when there is room, otherwise ``k - 1`` by Wedderburn's rank reduction."""
    _exact(model, "perturb_rank")
    rng = _rng(rng if rng is not None else 0)
    L = model.log_odds()
    k = ql.rank(L)
    if k < min(model.m, model.n - 1):
        for _ in range(100):
            u = [[rng.randint(-bound, bound)] for _ in range(model.m)]
            v = [[rng.randint(-bound, bound)] for _ in range(model.n)]
            twin = ExactModel(ql.QMatrix.hstack(model.F, ql.as_qmatrix(u)),
                              ql.QMatrix.hstack(model.G, ql.as_qmatrix(v)), model.pivot,
                              model.contexts, model.tokens)
            if ql.rank(twin.log_odds()) == k + 1:
                return twin
    if k:
        # Wedderburn rank reduction: with L[i, j] != 0, L - L e_j e_i^T L / L[i, j]
        # has rank k - 1; one extra coordinate carries the rank-one correction.
        i, j, pivot_value = next((i, j, v) for i, row in enumerate(L.to_fraction_rows())
                                 for j, v in enumerate(row) if v)
        u = L[:, [j]] * (Fraction(-1) / pivot_value)
        v = L[[i], :].T
        return ExactModel(ql.QMatrix.hstack(model.F, u), ql.QMatrix.hstack(model.G, v), model.pivot,
                          model.contexts, model.tokens)
    raise ShapeError("this model's log-odds rank cannot be changed (k = 0 and no room to grow)")
