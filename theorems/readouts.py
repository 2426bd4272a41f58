r"""Readouts named by tokens, and relational linearity decided from the log-odds.

As encoded here (an addition of this project to Theorem 14). A user rarely names
a readout subspace by its coordinates; they name it by tokens ("the answer tokens
of the query"). For a set ``T`` of token pairs ``(a, b)``,

    ``Γ_T := span{P_N(g(a) - g(b)) : (a, b) ∈ T}``,

defined in each model from its own ``g``: ``Γ_T ⊆ N`` always, and for two models
with the same distribution Theorem 5's certificate maps one model's ``Γ_T`` onto
the other's (EL2 on differences), with no certificate needed to name it.

Two facts make relational linearity on ``Γ_T`` a property of the distribution:

* **readouts are log-odds** -- for ``u = P_N(g(a) - g(b))`` and every context,
  ``u^T f(x) = ℓ_ab(x) := L[x, a] - L[x, b]`` (F4: ``f(x)^T v = (P_M f(x))^T P_N v``
  for ``v`` in ``SG``);
* **the criterion** -- the model is relationally linear for ``q`` on ``Γ_T``
  reading ``M`` iff every ``ℓ_ab(s⊕q)``, ``(a, b) ∈ T``, is an affine function of
  the log-odds row ``L[s, :]`` over the pairs: functionals of ``P_M f(s)`` are
  exactly functionals of ``L[s, :]`` (``u ↦ (u^T g_0(y))_y`` is injective on ``M``
  and ``P_M P_N`` maps ``N`` onto ``M``).

:func:`log_odds_criterion` decides the second from ``L`` alone; the Theorem 14
record checks it against the representation-level decision on every instance.
Reading anything (``Γ_q ⊄ M``) is not decided by ``L``: Appendix D.1.

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
>>> T = tokens([(1, 0)])
>>> token_readout(m, T).to_fractions()
[['1'], ['0']]
>>> readout_log_odds(m, T).to_fractions()
[['1'], ['2'], ['3'], ['2'], ['4'], ['6']]
>>> log_odds_criterion(m, [(0, 3), (1, 4), (2, 5)], T).verdict
'relationally linear'
>>> log_odds_criterion(m.log_odds(), [(0, 4), (1, 3), (2, 5)], T).verdict
'not relationally linear'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from allornone.decision import Decision, Truth
from allornone.errors import InputFormatError, VocabularyError
from allornone.model import Model
from allornone.symbolic import linalg as ql

__all__ = ["TokenPairs", "tokens", "token_readout", "readout_log_odds", "LogOddsCriterion", "log_odds_criterion",
           "log_odds_model"]

VERDICTS = {Truth.HOLDS: "relationally linear", Truth.FAILS: "not relationally linear",
            Truth.UNDECIDED: "undecided"}


@dataclass(frozen=True)
class TokenPairs:
    """A readout named by token pairs ``T = ((a, b), ...)``: in each model it
    stands for that model's own ``Γ_T = span{P_N(g(a) - g(b))}``. Build it with
    :func:`tokens`; functions that take a readout subspace ``gamma`` accept it in
    place of a matrix."""

    pairs: tuple

    def __iter__(self):
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)


def _index(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputFormatError(f"{what}: {value!r} is not an integer token index")
    return int(value)


def tokens(pairs) -> TokenPairs:
    """The readout named by the token pairs ``pairs`` (``[(a, b), ...]``, token
    indices); ranges are checked against each model when it is used.

    Parameters
    ----------
    pairs : iterable of pairs of int
        Token pairs ``(a, b)``; each contributes ``P_N(g(a) - g(b))``.

    Returns
    -------
    TokenPairs

    Raises
    ------
    InputFormatError
        When ``pairs`` is empty or an entry is not a pair of integers.

    Examples
    --------
    >>> tokens([(1, 0), [2, 0]])
    TokenPairs(pairs=((1, 0), (2, 0)))
    """
    if isinstance(pairs, TokenPairs):
        return pairs
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        raise InputFormatError(f"tokens: expected a list of token pairs (a, b), got {type(pairs).__name__}")
    out = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list, np.ndarray)) or len(pair) != 2:
            raise InputFormatError(f"tokens: pair {i}: expected two token indices (a, b), got {pair!r}")
        out.append(tuple(_index(v, f"tokens: pair {i}") for v in pair))
    if not out:
        raise InputFormatError("tokens: no token pairs; a readout named by tokens needs at least one pair (a, b)")
    return TokenPairs(tuple(out))


def _checked(model: Model, T) -> TokenPairs:
    T = tokens(T)
    for i, (a, b) in enumerate(T):
        for v in (a, b):
            if not 0 <= v < model.n:
                raise VocabularyError(f"tokens: pair {i}: token index {v} is out of range for {model.n} tokens "
                                      f"(0..{model.n - 1})")
    return T


def token_readout(model: Model, T):
    """``Γ_T`` of ``model``: the ``d x |T|`` matrix whose column ``j`` is
    ``P_N(g(a_j) - g(b_j))`` (columns may be dependent or zero).

    Parameters
    ----------
    model : ExactModel or FloatModel
    T : TokenPairs or list of pairs of int

    Returns
    -------
    matrix
        Exact rationals on an exact model, floats on a float model.

    Examples
    --------
    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0]], [[0, 0], [1, 1], [0, 2]])   # N = span e_0
    >>> token_readout(m, [(1, 0), (2, 0), (2, 1)]).to_fractions()
    [['1', '0', '-1'], ['0', '0', '0']]
    """
    T = _checked(model, T)
    cols = [model.projector_N @ model.unembedding_difference(a, b) for a, b in T]
    return model.backend.hstack(*cols)


def readout_log_odds(model: Model, T):
    """``ℓ_ab(x) = L[x, a] - L[x, b]`` for every context (rows) and pair of ``T``
    (columns): what the readouts ``u_ab^T f(x)`` of ``Γ_T`` equal, from ``L``.

    Examples
    --------
    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 1], [0, 2]])
    >>> readout_log_odds(m, [(2, 1)]).to_fractions()
    [['-1'], ['1']]
    """
    T = _checked(model, T)
    L = model.log_odds()
    return model.backend.hstack(*[L[:, [a]] - L[:, [b]] for a, b in T])


def log_odds_model(L) -> Model:
    """A model whose log-odds matrix is ``L`` (``m x n``): ``F = L``, ``G = I_n``,
    pivot 0 (its ``L`` is ``L`` minus its column 0, which changes no log-odds
    difference and no affine span of rows). Exact for rational input
    (:class:`~allornone.symbolic.linalg.QMatrix` or nested lists of int, Fraction
    or rational strings), float for a NumPy float array.

    Examples
    --------
    >>> log_odds_model([[0, 1], [0, 3]]).log_odds().to_fractions()
    [['0', '1'], ['0', '3']]
    """
    from allornone.numeric.model import FloatModel
    from allornone.symbolic.model import ExactModel

    if isinstance(L, np.ndarray) and L.dtype.kind == "f":
        return FloatModel(L, np.eye(L.shape[1]), 0)
    Lq = ql.as_qmatrix(L, "L")
    return ExactModel(Lq, ql.eye(Lq.shape[1]), 0)


@dataclass
class LogOddsCriterion:
    """Outcome of :func:`log_odds_criterion`.

    ``decision`` says whether every ``ℓ_ab(s⊕q)`` is ``z_ab^T L[s, :] + c_ab`` on
    the pairs (exact, or three-valued with its tolerance on floats); ``verdict``
    in words, as for Theorem 14's relational linearity; ``Z`` (``n x |T|``) and
    ``c`` (``1 x |T|``) the minimum-norm fit when it holds; ``trivial`` whether
    ``[L_S, 1]`` has full row rank (every target fits: no evidence)."""

    decision: Decision
    pairs: tuple
    tokens: TokenPairs
    residual: Any
    regressor_rank: int
    trivial: bool
    Z: Any = None
    c: Any = None

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]


def log_odds_criterion(source, pairs, T) -> LogOddsCriterion:
    r"""Decide relational linearity for the query ``pairs`` on the readout named
    by ``T``, reading ``M``, from the log-odds alone: regress
    ``ℓ_ab(s⊕q)`` (``|S| x |T|``) on ``[L[s, :], 1]`` and test consistency.

    Equivalent to ``relational_linearity(model, pairs, tokens(T), "M")`` for
    every model with this ``L`` (module docstring).

    Parameters
    ----------
    source : ExactModel, FloatModel, QMatrix or ndarray
        A model (only its log-odds are read) or a log-odds matrix ``L``.
    pairs : list of (s, s⊕q)
        Context-index pairs of the query.
    T : TokenPairs or list of pairs of int

    Returns
    -------
    LogOddsCriterion

    Raises
    ------
    InputFormatError, VocabularyError
        On malformed pairs or token indices out of range.

    Examples
    --------
    >>> L = [[0, 1], [0, 2], [0, 3], [0, 3], [0, 5], [0, 7]]
    >>> r = log_odds_criterion(L, [(0, 3), (1, 4), (2, 5)], [(1, 0)])
    >>> r.verdict, r.Z.to_fractions(), r.c.to_fractions()
    ('relationally linear', [['0'], ['2']], [['1']])
    """
    from allornone.theorems.thm14 import _check_pairs, _ones

    model = source if isinstance(source, Model) else log_odds_model(source)
    pairs = _check_pairs(model, pairs)
    T = _checked(model, T)
    be = model.backend
    L = model.log_odds()
    ell = readout_log_odds(model, T)
    LS = L[[s for s, _ in pairs], :]
    Y = ell[[t for _, t in pairs], :]
    ones = _ones(be, len(pairs))
    X = be.hstack(LS, ones)
    # as for Theorem 14's regressions: the intercept at the size of the inputs, so
    # that the rank does not depend on the units of L. A computed L = F G_0^T
    # carries the rounding error of that product, which bounds its noise.
    noise = model.log_odds_scale()
    rank, decided = be.rank(X if be.exact else be.hstack(LS, ones * (be.scale(LS) or 1.0)), noise or None)
    Theta = be.pinv(X, rank) @ Y
    dec = be.is_zero(X @ Theta - Y, max(be.scale(X, Theta), be.scale(ell), noise))
    if not decided and not dec.fails:
        dec = Decision(Truth.UNDECIDED, dec.residual, dec.tolerance, dec.detail)
    shown = dec.holds
    if not be.exact:
        # the fit of products of the model's numbers decides it (as for Theorem 14)
        from allornone.numeric.relational import readout_fit
        from allornone.theorems.thm14 import _on_products, _regressor_rank

        dec = _on_products(dec, readout_fit(model, pairs, "M", ("tokens", T)))
        rank = _regressor_rank(model, pairs, "M", rank)
    out = LogOddsCriterion(dec, pairs, T, dec.residual, rank, rank == len(pairs))
    if dec.holds and shown:
        out.Z, out.c = Theta[: model.n, :], Theta[model.n:, :]
    return out
