r"""Comparison targets of a trained head: models whose relation to it is known.

A graded comparison (``allornone compare``) of two real heads says how far
apart they are; these targets say what the figures look like when the answer
is known. Each takes the head as its arrays -- the inputs ``X`` of the output
layer (``m x d``), the weight ``W`` (``n x d``, a row per token) and the bias
``b`` (``n``, or None) -- and returns a :class:`Target` in the same form:

* :func:`reparametrise` -- ``X T`` and ``W T^{-T}`` for a random ``T`` of a
  stated condition number: the same distribution, exactly in exact arithmetic
  and up to rounding in floats (the bias is unchanged);
* :func:`twin` -- the Appendix B.5 construction (docs/constructions.md#b5) at a
  stated dimension: the same log-odds from a model of another dimension, whose
  extra coordinates are a non-linear function of the context and a random one
  of the token (:func:`allornone.numeric.scale.b5_twin`); its ``f`` has no
  coordinate that is 1 everywhere, so the bias is folded into ``X`` and ``W``;
* :func:`perturb` -- one bias moved by a stated amount (every log-odds of that
  token moves by it), or one logit, carried by one extra coordinate as
  :func:`allornone.symbolic.generators.perturb_log_odds` does exactly.

:func:`log_odds_gap` measures what a target achieved: the largest difference of
log-odds from the head's own, computed a block of contexts at a time.

>>> rng = np.random.default_rng(0)
>>> X, W, b = rng.normal(size=(6, 3)), rng.normal(size=(5, 3)), rng.normal(size=5)
>>> t = reparametrise(X, W, b, condition=10, seed=1)
>>> round(t.info["condition"], 6), np.array_equal(t.bias, b)
(10.0, True)
>>> gap, _ = log_odds_gap(X, W, b, t.features, t.weight, t.bias)
>>> bool(gap < 1e-13)
True
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from allornone.errors import InputFormatError, NonFiniteValueError, ShapeError

__all__ = ["Target", "reparametrise", "twin", "perturb", "log_odds_gap", "fold_bias", "KINDS"]

#: The targets, as ``allornone make`` names them.
KINDS = ("reparam", "twin", "perturb")
#: Contexts whose logits are formed at once when measuring a target.
_BLOCK_ENTRIES = 1 << 22


@dataclass
class Target:
    """A head in the form it was given: ``features`` (``m x d'``), ``weight``
    (``n x d'``, a row per token) and ``bias`` (``n``, or None: no bias, as when
    a bias is folded into ``features`` and ``weight``). ``info`` holds what was
    built (the condition number achieved, the dimensions, the moved entry)."""

    features: np.ndarray
    weight: np.ndarray
    bias: np.ndarray | None
    info: dict = field(default_factory=dict)


def _arrays(X, W, b):
    X = np.asarray(X, dtype=float)
    W = np.asarray(W, dtype=float)
    if X.ndim != 2 or W.ndim != 2 or X.shape[1] != W.shape[1]:
        raise ShapeError(f"features {X.shape} and weight {W.shape} must be m x d and n x d")
    if b is not None:
        b = np.asarray(b, dtype=float).reshape(-1)
        if b.shape[0] != W.shape[0]:
            raise ShapeError(f"bias has {b.shape[0]} entries for {W.shape[0]} tokens")
    return X, W, b


def fold_bias(X, W, b):
    """``(F, G)`` with the bias folded in as one more coordinate (``f(x)`` gets a
    1, ``g(y)`` gets ``b_y``), as :meth:`FloatModel.from_head` folds it; the arrays
    themselves when ``b`` is None.

    >>> F, G = fold_bias(np.ones((2, 1)), np.zeros((3, 1)), np.arange(3.0))
    >>> F.tolist(), G[:, 1].tolist()
    ([[1.0, 1.0], [1.0, 1.0]], [0.0, 1.0, 2.0])
    """
    X, W, b = _arrays(X, W, b)
    if b is None:
        return X, W
    return np.hstack([X, np.ones((X.shape[0], 1))]), np.hstack([W, b[:, None]])


def _orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))  # Haar-distributed (Mezzadri's correction)


def reparametrise(X, W, b=None, condition: float = 10.0, seed=None) -> Target:
    """``X T`` and ``W T^{-T}``: a reparametrisation of the head that leaves its
    distribution unchanged (``X T (W T^{-T})^T = X W^T``), with ``T`` of condition
    number ``condition``.

    Parameters
    ----------
    X, W, b : array_like
        The head: inputs ``m x d``, weight ``n x d``, bias ``n`` (or None).
    condition : float
        ``cond(T) = sigma_max / sigma_min >= 1``: ``T = Q_1 diag(s) Q_2`` with
        Haar orthogonal ``Q_1``, ``Q_2`` and ``s`` spread geometrically from
        ``condition^{-1/2}`` to ``condition^{1/2}`` (so ``|T| |T^{-1}|`` is the
        condition and neither factor grows more than the other).
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    Target
        With the same bias, and ``info``: ``condition`` (achieved, computed from
        the singular values of the ``T`` used) and ``T``.

    Examples
    --------
    >>> t = reparametrise(np.eye(3), np.eye(3), condition=100, seed=0)
    >>> round(t.info["condition"], 6), t.features.shape
    (100.0, (3, 3))
    >>> reparametrise(np.eye(2), np.eye(2), condition=0.5)
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: condition 0.5: a condition number is at least 1
    """
    X, W, b = _arrays(X, W, b)
    if not condition >= 1 or not np.isfinite(condition):
        raise InputFormatError(f"condition {condition:g}: a condition number is at least 1")
    d = X.shape[1]
    rng = np.random.default_rng(seed)
    s = np.geomspace(condition ** -0.5, condition ** 0.5, d) if d > 1 else np.ones(1)
    T = (_orthogonal(rng, d) * s) @ _orthogonal(rng, d)
    # T^{-T} = Q_1 diag(1/s) Q_2 as well, without solving a system
    U, sv, Vt = np.linalg.svd(T)
    T_inv_T = (U / sv) @ Vt
    return Target(X @ T, W @ T_inv_T, b, {"condition": float(sv[0] / sv[-1]), "T": T})


def twin(X, W, b=None, extra_dim: int = 3, pivot: int = 0, seed=None, tolerance=None) -> Target:
    """The Appendix B.5 twin of the head at dimension ``d~ = d + extra_dim``
    (``d`` counting a folded bias): the same log-odds, from ``f~`` and ``g~``
    that are no linear image of ``f`` and ``g`` outside ``M`` and ``N``.

    Parameters
    ----------
    X, W, b : array_like
        The head: inputs ``m x d``, weight ``n x d``, bias ``n`` (or None).
    extra_dim : int
        ``d~ - d``; may be negative down to ``k - d`` (``k = rank L``, the
        smallest dimension a model of these log-odds has). The ``d~ - k``
        coordinates beyond ``k`` are split between ones only the contexts use
        (``a``, a non-linear function of the context) and ones only the tokens
        use (``b``), ``a = ceil((d~ - k) / 2)``.
    pivot : int
        The reference token (the twin has the same log-odds against it).
    seed : int or numpy.random.Generator, optional
    tolerance : Tolerance, optional
        The float layer's tolerance deciding ``k``, ``M`` and ``N`` (its
        ``rank_rtol`` counts small singular values as zero).

    Returns
    -------
    Target
        With the bias folded in (``bias`` None) and ``info``: ``k``, ``d``,
        ``d_twin``, ``context_only`` (``a``) and ``token_only`` (``b``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, W = rng.normal(size=(8, 3)), rng.normal(size=(6, 3))
    >>> t = twin(X, W, rng.normal(size=6), extra_dim=2, seed=1)
    >>> t.features.shape, t.weight.shape, t.bias, t.info["k"]
    ((8, 6), (6, 6), None, 4)
    >>> twin(X, W, extra_dim=-1)
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: --extra-dim -1 gives d~ = 2, below k = 3: no model of these log-odds has fewer than k coordinates
    """
    from allornone.numeric.model import FloatModel
    from allornone.numeric.scale import b5_twin

    F, G = fold_bias(X, W, b)
    if not 0 <= pivot < G.shape[0]:
        raise InputFormatError(f"pivot {pivot} is out of range for {G.shape[0]} tokens")
    kw = {} if tolerance is None else {"tolerance": tolerance}
    k = FloatModel(F, G, pivot, **kw).structure.k
    d = F.shape[1]
    d_twin = d + int(extra_dim)
    if d_twin < max(k, 1):
        raise InputFormatError(f"--extra-dim {extra_dim} gives d~ = {d_twin}, below k = {k}: no model of these "
                               "log-odds has fewer than k coordinates")
    a = (d_twin - k + 1) // 2
    F2, G2 = b5_twin(F, G, pivot, extra=(a, d_twin - k - a), seed=seed, tolerance=tolerance)
    return Target(F2, G2, None, {"k": int(k), "d": int(d), "d_twin": int(d_twin), "context_only": int(a),
                                 "token_only": int(d_twin - k - a)})


def perturb(X, W, b, token: int, amount: float, context: int | None = None) -> Target:
    """The head with one bias, or one logit, moved by ``amount``.

    Without ``context``: ``b_token += amount``, so every logit of ``token`` and
    hence (``token`` not the pivot) every log-odds of it moves by ``amount``; a
    head without a bias gets one, folded in as one more coordinate (``f(x)``
    gets a 1, ``g(token)`` gets ``amount``, every other ``g(y)`` 0). With
    ``context``: only the logit ``(context, token)`` moves, carried by one more
    coordinate (``f(context)`` gets ``amount``, ``g(token)`` gets 1).

    Parameters
    ----------
    X, W, b : array_like
        The head: inputs ``m x d``, weight ``n x d``, bias ``n`` (or None).
    token : int
        The token whose bias (or logit) moves.
    amount : float
        How far; not 0.
    context : int, optional
        Move only this context's logit of ``token``.

    Returns
    -------
    Target
        ``info``: ``token``, ``amount``, ``context`` and ``what`` moved (``"bias"``,
        ``"folded bias"`` or ``"logit"``).

    Examples
    --------
    >>> X, W, b = np.eye(2), np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]]), np.zeros(3)
    >>> t = perturb(X, W, b, token=2, amount=0.5)
    >>> t.bias.tolist(), t.info["what"]
    ([0.0, 0.0, 0.5], 'bias')
    >>> log_odds_gap(X, W, b, t.features, t.weight, t.bias)
    (0.5, (0, 2))
    >>> one = perturb(X, W, None, token=1, amount=2.0, context=1)
    >>> one.features.shape, log_odds_gap(X, W, None, one.features, one.weight, one.bias)
    ((2, 3), (2.0, (1, 1)))
    """
    X, W, b = _arrays(X, W, b)
    n = W.shape[0]
    if not 0 <= token < n:
        raise InputFormatError(f"--token {token} is out of range for {n} tokens")
    amount = float(amount)
    if amount == 0 or not np.isfinite(amount):
        raise InputFormatError(f"--amount {amount:g}: give a finite, non-zero amount")
    e = np.zeros(n)
    e[token] = 1.0
    info = {"token": int(token), "amount": amount, "context": context}
    if context is not None:
        if not 0 <= context < X.shape[0]:
            raise InputFormatError(f"--context {context} is out of range for {X.shape[0]} contexts")
        u = np.zeros(X.shape[0])
        u[context] = amount
        return Target(np.hstack([X, u[:, None]]), np.hstack([W, e[:, None]]), b, {**info, "what": "logit"})
    if b is None:
        return Target(np.hstack([X, np.ones((X.shape[0], 1))]), np.hstack([W, amount * e[:, None]]), None,
                      {**info, "what": "folded bias"})
    moved = b.copy()
    with np.errstate(over="ignore"):
        moved[token] += amount
    if not np.isfinite(moved[token]):
        raise NonFiniteValueError(f"--amount {amount:g}: the bias of token {token} moved by it, "
                                  f"{float(b[token]):g} + {amount:g}, is beyond binary64")
    return Target(X.copy(), W.copy(), moved, {**info, "what": "bias"})


def log_odds_gap(X, W, b, X2, W2, b2, pivot: int = 0) -> tuple[float, tuple[int, int]]:
    """``max |L - L~|`` between two heads on the same contexts and tokens, and
    where it is (``(context, token)``), computed a block of contexts at a time
    (``L[x, y] = logit(x, y) - logit(x, pivot)``).

    >>> log_odds_gap(np.eye(2), np.eye(2), None, np.eye(2), 2 * np.eye(2), None)
    (1.0, (0, 1))
    """
    F, G = fold_bias(X, W, b)
    F2, G2 = fold_bias(X2, W2, b2)
    if F.shape[0] != F2.shape[0] or G.shape[0] != G2.shape[0]:
        raise ShapeError("the two heads must share the contexts and the tokens")
    G0, G20 = G - G[pivot], G2 - G2[pivot]
    step = max(1, _BLOCK_ENTRIES // max(G.shape[0], 1))
    worst, where = 0.0, (0, 0)
    for i in range(0, F.shape[0], step):
        diff = np.abs(F[i:i + step] @ G0.T - F2[i:i + step] @ G20.T)
        if not np.isfinite(diff).all():
            # (an overflow, or inf - inf: NaN, which no comparison below would see)
            j = int(np.flatnonzero(~np.isfinite(diff))[0])
            return float("inf"), (i + j // diff.shape[1], j % diff.shape[1])
        j = int(np.argmax(diff))
        if diff.flat[j] > worst:
            worst, where = float(diff.flat[j]), (i + j // diff.shape[1], j % diff.shape[1])
    return worst, where
