r"""Theorem 14 (relational linearity is all or none) and Appendix D.1.

As encoded here (docs/results/thm14.md). A query ``q`` is a finite set ``S`` of
pairs of context indices ``(s, s⊕q)``; a readout subspace ``Γ ⊆ R^d`` is given
by a ``d x r`` matrix whose columns span it.

* ``(f, g)`` is **relationally linear for q on Γ** if there are ``W`` (``d x d``)
  and ``b`` with ``P_Γ f(s⊕q) = P_Γ (W f(s) + b)`` for every pair; its **input
  subspace** is ``Γ_q = Im(W^T P_Γ)``.
* **Reading M** (``Γ_q ⊆ M``) is decided by regressing the readouts
  ``F_{S⊕q} P_Γ`` on ``[F_S P_M, 1]``; **reading anything** on ``[F_S, 1]``;
  the property holds iff the linear system is consistent
  (:func:`relational_linearity`).
* **Theorem 14.** If ``L = L~`` and ``Γ ⊆ N``, then ``(f, g)`` is relationally
  linear for ``q`` on ``Γ`` reading ``M`` iff ``(f~, g~)`` is, on
  ``Γ~ = (B*|Ñ)^{-1}(Γ)``, reading ``M~``; :func:`transport` carries ``Γ, W, b``
  across with Theorem 5's certificate ``(A*, B*)``.
* **Appendix D.1.** Reading a hidden coordinate (``Γ_q ⊄ M``) is not shared:
  a B.5 twin with a non-linear ``phi`` breaks it.

The record's statement makes the last point a hypothesis that can be dropped:
"``Γ_q ⊆ M``" says that in both models every relational linearity can be had
reading only ``M`` (``RelationallyLinear ⟹ RelationallyLinearReadingM``). Under
it, relationally linear (reading anything) ⟺ relationally linear reading
``M``, and the conclusion is the paper's all-or-none; without it the D.1
instance is a counterexample. "Enough pairs" keeps trivially true instances
(``[F_S, 1]`` of full row rank: every readout fits) from counting as evidence.
The paper's form without the ``Γ_q ⊆ M`` hypothesis is checked on every
instance by the proof step "all or none (reading M)".

>>> from allornone.symbolic import relational as rel
>>> ex = rel.d1_example()
>>> relational_linearity(ex.model, ex.pairs, ex.gamma, reading="any").verdict
'relationally linear'
>>> relational_linearity(ex.model, ex.pairs, ex.gamma, reading="M").verdict
'not relationally linear'
>>> twin = rel.d1_twin(ex.model)
>>> relational_linearity(twin, ex.pairs, transport_gamma(ex.model, twin, ex.gamma), reading="any").verdict
'not relationally linear'
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from allornone.decision import Decision, Truth
from allornone.errors import (AllOrNoneError, InputFormatError, RealisationMismatchError, ShapeError,
                              VocabularyError)
from allornone.model import Model
from allornone.numeric import linalg as fl
from allornone.numeric import relational as fr
from allornone.numeric.balance import span_columns
from allornone.numeric import transport as ftr
from allornone.numeric.relational import readout_error  # noqa: F401 (its public path: thm14.readout_error)
from allornone.symbolic import linalg as ql
from allornone.symbolic import relational as rel
from allornone.theorems import readouts, thm5
from allornone.theorems.readouts import TokenPairs, log_odds_criterion, tokens

__all__ = [
    "READINGS",
    "VERDICTS",
    "NotEquivalentError",
    "TransportError",
    "RelationalLinearity",
    "Transported",
    "Probe",
    "ReadoutSubspace",
    "relational_linearity",
    "tokens",
    "TokenPairs",
    "log_odds_criterion",
    "gamma_in_N",
    "transport_gamma",
    "transport",
    "linear_probing",
    "implied_probe",
    "transport_probe",
    "readout_subspace",
    "GammaInN",
    "EnoughPairs",
    "RelationallyLinear",
    "RelationallyLinearReadingM",
    "RECORD",
]

READINGS = ("M", "any")
VERDICTS = {Truth.HOLDS: "relationally linear", Truth.FAILS: "not relationally linear",
            Truth.UNDECIDED: "undecided"}
PROBE_VERDICTS = {Truth.HOLDS: "probe fits", Truth.FAILS: "probe does not fit", Truth.UNDECIDED: "undecided"}
SUBSPACE_VERDICTS = {Truth.HOLDS: "readouts in the subspace", Truth.FAILS: "readouts not in the subspace",
                     Truth.UNDECIDED: "undecided"}


class NotEquivalentError(AllOrNoneError, ValueError):
    """Transport across models that do not have the same distribution."""


class TransportError(AllOrNoneError, ValueError):
    """A relational linearity that Theorem 14 does not carry across (it does not
    hold, does not read only ``M``, or ``Γ ⊄ N``)."""


# -- input handling -----------------------------------------------------------------

def _check_model(model, what: str = "model"):
    if not isinstance(model, Model):
        raise InputFormatError(f"{what}: expected an ExactModel or a FloatModel, got {type(model).__name__}")
    return model


def _check_reading(reading) -> str:
    if not isinstance(reading, str) or reading not in READINGS:
        raise InputFormatError(f"reading must be 'M' (regress on [F_S P_M, 1]) or 'any' (on [F_S, 1]), "
                               f"got {reading!r}")
    return reading


def _index(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputFormatError(f"{what}: {value!r} is not an integer index")
    return int(value)


def _check_pairs(model, pairs) -> tuple:
    """Pairs ``(s, s⊕q)`` of context indices, validated against ``model``."""
    if isinstance(pairs, (str, bytes, dict)) or not hasattr(pairs, "__iter__"):
        raise InputFormatError(f"pairs must be a list of (s, s⊕q) context-index pairs, got {type(pairs).__name__}")
    out = []
    for i, pair in enumerate(pairs):
        # an ordered pair: a set or a dict has no first and second element
        if not isinstance(pair, (tuple, list, np.ndarray)) or len(pair) != 2:
            raise InputFormatError(f"pair {i}: expected two context indices (s, s⊕q), got {pair!r}")
        s, t = (_index(v, f"pair {i}") for v in pair)
        for v in (s, t):
            if not 0 <= v < model.m:
                raise InputFormatError(f"pair {i}: context index {v} is out of range for {model.m} contexts "
                                       f"(0..{model.m - 1})")
        out.append((s, t))
    if not out:
        raise InputFormatError("pairs is empty: a query needs at least one pair (s, s⊕q)")
    return tuple(out)


def _as_matrix(model, X, name: str):
    """``X`` (columns spanning a readout subspace) on ``model``'s realisation:
    exact rationals for an exact model (floats rejected), floats for a float
    model (an exact matrix is rounded), each column then brought to size one by
    a power of two (:func:`allornone.numeric.balance.span_columns`: the same
    span, and no column lost next to a far larger one)."""
    if model.exact:
        return ql.as_qmatrix(X, name)
    if isinstance(X, ql.QMatrix):
        X = X.to_numpy()
    return span_columns(model.backend.as_matrix(X, name))


def _gamma(model, gamma):
    """Basis (independent columns, ``d x r``), projector ``P_Γ`` and whether the
    dimension was decided."""
    return _gamma_with_error(model, gamma)[:3]


def _gamma_with_error(model, gamma):
    """:func:`_gamma` and a bound on the error of the basis (float side: the
    sine of the angle to the exact ``Γ``; a token readout ``Γ_T`` is computed
    through ``P_N`` and carries its error at the size of the token differences,
    :func:`allornone.numeric.relational.token_basis`)."""
    be = model.backend
    named = isinstance(gamma, readouts.TokenPairs)
    # a readout named by tokens is this model's own Γ_T
    G = readouts.token_readout(model, gamma) if named else _as_matrix(model, gamma, "gamma")
    if G.shape[0] != model.d:
        raise ShapeError(f"gamma: expected a d x r matrix whose columns span Γ (d = {model.d}), got shape "
                         f"{G.shape[0]}x{G.shape[1]}")
    if G.shape[1] == 0:
        return G, be.zeros(model.d, model.d), True, 0.0
    if be.exact or not named:
        basis, decided = be.column_basis(G, be.scale(G))
        return basis, be.projector_onto_rows(basis.T), decided, 0.0
    basis, decided, error = fr.token_basis(model, G, gamma.pairs)
    return basis, be.projector_onto_rows(basis.T), decided, error


def _token(model, T) -> tuple:
    """A readout named by tokens as :mod:`allornone.numeric.relational` measures
    it: this model's computed ``Γ_T`` (``P_N`` applied to the differences) and
    its token pairs."""
    return readouts.token_readout(model, T), T.pairs


def _functionals(model, gamma) -> dict:
    """What spans ``gamma`` exactly, as :func:`allornone.numeric.relational.witness_readouts`
    reads it: the token pairs of a readout named by tokens (its log-odds), or
    the given matrix."""
    if isinstance(gamma, readouts.TokenPairs):
        return {"tokens": gamma.pairs}
    return {"B": _as_matrix(model, gamma, "gamma")}


# -- a posteriori witnesses of a fit ------------------------------------------------------

def _witness_source(model, gamma, gamma_error: float, gamma_in_N: bool):
    """Float side: the readouts a witness may use for ``gamma`` on ``model``, as a
    function ``(rows, minus=None) -> (Y, Y_err) or None``; None when there are
    none. A readout named by tokens, or a ``Γ`` given exactly (no
    ``gamma_error``, not a computed ``Γ~``), gives its own
    (:func:`allornone.numeric.relational.witness_readouts`)."""
    if isinstance(gamma, readouts.TokenPairs) or not (gamma_error or gamma_in_N):
        return lambda rows, minus=None: fr.witness_readouts(model, rows, minus=minus, **_functionals(model, gamma))
    return None


def _check_result(model, result, cls=None, what: str = "result"):
    """``result`` is a :class:`RelationalLinearity` (or ``cls``) computed on a
    model of ``model``'s realisation, dimension and context set."""
    cls = cls or RelationalLinearity
    _check_model(model)
    if not isinstance(result, cls):
        raise InputFormatError(f"{what}: expected a {cls.__name__}, got {type(result).__name__}")
    matrix = result.projector if cls is RelationalLinearity else result.w
    if matrix is not None:
        if isinstance(matrix, ql.QMatrix) != model.exact:
            raise RealisationMismatchError(f"{what} was computed on {'a float' if model.exact else 'an exact'} "
                                           f"model, this one is {'exact' if model.exact else 'float'}")
        if matrix.shape[0] != model.d:
            raise ShapeError(f"{what} was computed on a model of dimension {matrix.shape[0]}, "
                             f"this one has d = {model.d}")
    if cls is RelationalLinearity:
        _check_pairs(model, result.pairs)
    return result


def _ones(be, count: int):
    return be.as_matrix([[1]] * count, "ones")


def _undecided(d: Decision) -> Decision:
    """A verdict whose structure (a rank) is undecided: undecided, whatever its residual said."""
    return Decision(Truth.UNDECIDED, d.residual, d.tolerance, d.detail)


def _implied(computed: Decision, claim: Decision) -> Decision:
    """A float verdict on a claim that a decided one implies, decided where it lives.

    A transport carries a property of the model to its twin through objects
    computed from the certificate (``Γ~``, ``W~``, ``ṽ``, ``w~``); a
    relational linearity implies a probe and a subspace of the readouts
    through its fitted ``W``, ``b``. Where the premises are decided, the
    implied claim is ``claim`` itself, read through a proven identity: the twin
    reads on ``Γ~`` what the model reads on ``Γ`` (``ũ^T f~(x) = (B* ũ)^T
    f(x)``, given ``L = L~``, EL1--EL3 and ``Γ ⊆ N``), and a fit's readouts are
    ``W f(s) + b``. A check on the computed objects measures the errors they
    carry, never the claim: it stands where it shows "holds", and ``claim``
    (a decision on the model's own numbers, or on the log-odds the models
    share) decides otherwise; the computed verdict stays in the detail, under
    ``"as computed"``."""
    if computed.holds:
        return computed
    return Decision(claim.truth, claim.residual, claim.tolerance,
                    {**computed.detail, **claim.detail, "as computed": computed.truth.value,
                     "decided on": "the claim that implies it"})


def _premise(d: Decision, message: str) -> bool:
    """A premise of a transport (``Γ ⊆ N``, a fit reading only ``M``): raises
    :class:`TransportError` with ``message`` where it fails, and says whether it
    holds. Where it is undecided (floats: an error bound the tolerance does not
    resolve), the transport runs and its verdicts are undecided."""
    if d.fails:
        raise TransportError(message)
    return d.holds


def _as_given(model, result) -> tuple:
    """``(Γ, Γ ⊆ N)`` for a transport: ``Γ`` as given to the result where its
    numbers are known exactly (``Γ ⊆ N`` then decided on products of them),
    else the basis computed from it (judged with its error)."""
    given = result.gamma if result.given is None else result.given
    return given, gamma_in_N(model, given, _computed=result.given is None)


def _require_map(result, what: str) -> None:
    """:class:`TransportError` for a float fit kept without its map ``W``, ``b``
    (shown consistent by the ranks of products of the model's numbers, its
    computed map too uncertain to keep): ``what`` says what needed it."""
    if result.W is None or result.gamma_q is None:
        raise TransportError(f"the relational linearity was decided without a map W, b "
                             f"(by {result.decision.detail.get('route', 'another route')}): {what}")


def _mark_undecided(result):
    result.decision, result.decided = _undecided(result.decision), False
    return result


def _regress(model, pairs, Y, y_scale: float, reading: str, y_error: float = 0.0):
    """Regress ``Y`` (``|S| x c``) on ``X = [F_S P_M, 1]`` (reading ``M``) or
    ``[F_S, 1]``: ``(X, Θ = X^+ Y, residual decision, rank X, decided)``, ``Θ``
    the minimum-norm solution on both sides (float side:
    :func:`allornone.numeric.relational.regress`)."""
    be = model.backend
    FS = model.F[[s for s, _ in pairs], :]
    if not be.exact:
        try:
            inputs = FS @ model.projector_M if reading == "M" else FS
            return fr.regress(model, pairs, FS, inputs, Y, y_scale, reading, y_error)
        except fl.Unresolved as exc:
            # regressors beyond binary64 (an intercept brought to rows of 2^1023):
            # the regression decides nothing; the fit of products may still
            d, c = model.d, Y.shape[1]
            return (np.zeros((len(pairs), d + 1)), np.zeros((d + 1, c)),
                    Decision(Truth.UNDECIDED, math.inf, (0.0, 0.0), {"why": str(exc)}), 0, False)
    inputs = FS @ model.projector_M if reading == "M" else FS
    X = be.hstack(inputs, _ones(be, len(pairs)))
    rank, decided = be.rank(X)
    Theta = be.pinv(X, rank) @ Y
    dec = be.is_zero(X @ Theta - Y, max(be.scale(X, Theta), y_scale))
    return X, Theta, dec, rank, True


def _input_subspace(be, W, P, readout_scale: float, input_scale: float, noise: float = 0.0):
    """A basis of ``Γ_q = Im(W^T P_Γ)`` and whether its dimension was decided.

    ``W`` maps inputs to readouts, so on the float side its singular values are
    judged against readout size over input size, not against ``W`` itself
    (whose entries may be pure rounding noise) nor the readout size alone, plus
    ``noise``: how far the fitted ``W`` can be from the exact one
    (:func:`allornone.numeric.relational.input_subspace`)."""
    scale = readout_scale / input_scale if input_scale else None
    if be.exact:
        return be.column_basis(W.T @ P, scale)
    try:
        if not noise:
            return be.column_basis(W.T @ P, scale)
        return fr.input_subspace(be.tolerance, W.T @ P, scale, noise)
    except fl.Unresolved:
        # a fitted W beyond binary64 (inputs among the subnormals): Γ_q unknown
        return np.zeros((W.shape[1], 0)), False


# -- relational linearity -------------------------------------------------------------

@dataclass
class RelationalLinearity:
    """Outcome of :func:`relational_linearity`.

    ``decision`` (exact, or three-valued with its tolerance on floats) says
    whether ``P_Γ f(s⊕q) = P_Γ(W f(s) + b)`` on every pair, with ``W`` reading
    ``reading`` (``"M"``: only ``P_M f(s)``; ``"any"``: all of ``f(s)``);
    ``verdict`` says the same in words: ``"relationally linear"``,
    ``"not relationally linear"`` or (floats only) ``"undecided"``. When it
    holds, ``W`` (``d x d``) and ``b`` (``d x 1``) are the minimum-norm fit
    (exact rationals on an exact model), with ``W = P_Γ W`` and, reading ``M``,
    ``W = W P_M``; ``gamma_q`` is a basis of ``Γ_q = Im(W^T P_Γ)`` (columns).
    ``residual`` is ``max |X Θ - F_{S⊕q} P_Γ|`` for the regressors ``X``.
    ``trivial`` is True when ``X`` has full row rank (rank ``|S|``, possible only
    when ``|S| <= rank X <= (dimension of the regressors) + 1``): every readout
    fits, and the verdict is no evidence. ``gamma`` is a basis of ``Γ``,
    ``projector`` is ``P_Γ``.
    """

    decision: Decision
    reading: str
    pairs: tuple
    gamma: Any
    projector: Any
    residual: Any
    regressor_rank: int
    trivial: bool
    W: Any = None
    b: Any = None
    gamma_q: Any = None
    decided: bool = True
    """Float side: whether every rank decision behind the verdict and ``gamma_q`` was decided."""
    rank_decided: bool = True
    """Whether the regressors' rank (hence ``trivial``) was decided."""
    scale: float = 0.0
    """Float side: the scale of the readouts (``max(|X| |Θ|, |F_{S⊕q}| |P_Γ|)``)
    against which the residual was judged."""
    gamma_decided: bool = True
    """Float side: whether the dimension of ``Γ`` (of a token readout ``Γ_T``, computed through ``P_N``) was decided."""
    given: Any = None
    """``Γ`` as given (a matrix or token pairs): ``gamma`` is the basis computed
    from it, which in floats carries rounding that the given numbers do not.
    None where the caller declared an error on ``Γ`` (a computed ``Γ~``): its
    numbers are not known exactly."""

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]

    @property
    def dim_gamma(self) -> int:
        return self.gamma.shape[1]

    @property
    def dim_gamma_q(self) -> int | None:
        return None if self.gamma_q is None else self.gamma_q.shape[1]


def relational_linearity(model, pairs, gamma, reading: str = "M", gamma_error: float = 0.0,
                         gamma_in_N: bool = False) -> RelationalLinearity:
    r"""Decide whether ``model`` is relationally linear for the query given by
    ``pairs`` on ``Γ = span(columns of gamma)``:
    :math:`P_\Gamma f(s\oplus q) = P_\Gamma(W f(s) + b)` for all ``(s, s⊕q)``.

    Reading ``"M"`` regresses ``F_{S⊕q} P_Γ`` on ``[F_S P_M, 1]`` (so that
    ``Γ_q ⊆ M``); reading ``"any"`` on ``[F_S, 1]``; it holds iff that linear
    system is consistent. Exact on an exact model; on a float model the verdict
    is three-valued and undecided when a rank decision was; ``gamma_error``
    (float side) bounds the error of ``gamma`` itself when it was computed (the
    sine of the angle to the exact ``Γ``), which the readouts then carry at the
    size of the rows of ``F``.
    With ``gamma_in_N`` the caller asserts that the exact ``Γ`` lies in ``N``
    (a transported ``Γ~``): its error then reaches only the coordinates in
    which ``g_0`` is not identically zero (:func:`allornone.numeric.relational.readout_error`).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> r = relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]])
    >>> r.verdict, r.trivial, r.residual
    ('relationally linear', False, Fraction(0, 1))
    >>> r.W.to_fractions(), r.b.to_fractions(), r.gamma_q.to_fractions()
    ([['2', '0'], ['0', '0']], [['0'], ['0']], [['2'], ['0']])
    >>> relational_linearity(m, [(0, 3), (1, 4)], [[1], [0]]).trivial
    True
    >>> relational_linearity(m, [(0, 4), (1, 3), (2, 5)], [[1], [0]]).verdict
    'not relationally linear'
    >>> relational_linearity(m.to_float(), [(0, 3), (1, 4), (2, 5)], [[1.0], [0.0]]).verdict
    'relationally linear'

    ``gamma`` may name the readout by token pairs, ``tokens([(a, b), ...])``:
    it is then the model's own ``Γ_T = span{P_N(g(a) - g(b))}``.

    >>> relational_linearity(m, [(0, 3), (1, 4), (2, 5)], tokens([(1, 0)])).gamma.to_fractions()
    [['1'], ['0']]
    """
    _check_model(model)
    reading = _check_reading(reading)
    pairs = _check_pairs(model, pairs)
    be = model.backend
    basis, P, g_decided, own_error = _gamma_with_error(model, gamma)
    FT = model.F[[t for _, t in pairs], :]
    Y = FT @ P
    y_error = 0.0
    if not be.exact:
        # the readouts carry the rounding of F P_Γ and the error of Γ itself (a
        # token readout lies in N by construction; a given Γ when the caller
        # says so), measured through F where a token readout's error is its own
        named = isinstance(gamma, readouts.TokenPairs)
        token = _token(model, gamma) if named and not gamma_error else None
        Y, y_error = fr.readouts_with_error(model, [t for _, t in pairs], FT, Y, basis, P,
                                            float(gamma_error) + own_error, named or gamma_in_N, token)
    # The modelling tolerance is relative to the readouts themselves: |F_{S⊕q}| |P_Γ|
    # counts a hidden component of f that P_Γ cancels (a change of basis of
    # condition 1e8 makes it 1e8 times the readouts), which would let rtol
    # cover an exact misfit. Their rounding is in y_error (readout_error).
    y_scale = be.scale(FT, P) if be.exact else be.scale(Y)
    X, Theta, decision, rank, r_decided = _regress(model, pairs, Y, y_scale, reading, y_error)
    decided = r_decided and g_decided
    if not be.exact:
        # the rank reported (and whether the fit is trivial) is the regressors'
        # own, decided on products of the model's numbers where they are formed
        rank = _regressor_rank(model, pairs, reading, rank)
    # (a verdict decided on the logits stands although the rank on P_M does not;
    # Γ_q, read off Θ, stays undecided with it)
    if not (decided or ("on_logits" in decision.detail and g_decided)):
        decision = _undecided(decision)
    unmapped = False
    if not be.exact and not gamma_error and not gamma_in_N:
        # readouts named by tokens, or by a Γ given as numbers: the fit is decided
        # on products of the model's own numbers, which no change of basis moves
        targets = ("tokens", gamma) if isinstance(gamma, readouts.TokenPairs) else \
            ("gamma", _as_matrix(model, gamma, "gamma"))
        on_products = fr.readout_fit(model, pairs, reading, targets)
        if on_products is not None and not on_products.undecided:
            # a fit the regression did not show: its W (and Γ_q) are not to be read off Θ;
            # one it did show keeps what the regression knows of Θ's error
            unmapped = on_products.holds and not decision.holds
            decision = Decision(on_products.truth, on_products.residual, on_products.tolerance,
                                {**decision.detail, **on_products.detail})
        elif on_products is not None and decision.fails:
            # where the products leave it open, the regression's residual (an a
            # priori bound through the basis) is no proof of a misfit; a witness
            # may still show a fit below
            decision = Decision(Truth.UNDECIDED, decision.residual, decision.tolerance,
                                {**decision.detail, "why": "the products' ranks are undecided"})
    if decision.undecided and not be.exact:
        # A fit left open by the propagated bounds may still be shown by a
        # witness: readouts spanning Γ exactly (the given basis, a token
        # readout's log-odds), no rank decided. "Holds" only: a witness that
        # cannot be found says nothing.
        source = _witness_source(model, gamma, gamma_error, gamma_in_N)
        readout = source([t for _, t in pairs]) if source is not None else None
        shown = fr.witnessed_fit(model, pairs, reading, readout, decision)
        if shown is not None:
            decision = shown
    res = RelationalLinearity(decision, reading, pairs, basis, P, decision.residual, rank, rank == len(pairs),
                              decided=decided, rank_decided=r_decided, gamma_decided=g_decided,
                              scale=max(be.scale(X, Theta), be.scale(FT, P)),
                              given=None if gamma_error or gamma_in_N else gamma)
    if decision.holds:
        d = model.d
        # Θ = X^+ Y has its columns in Im(X^T), so W^T = Θ[:d] already lies in M when
        # reading M, and Θ P_Γ = Θ; the projections only clear float rounding.
        W = P @ Theta[:d, :].T
        res.W = W @ model.projector_M if reading == "M" else W
        res.b = P @ Theta[d:, :].T
        x = be.scale(X[:, :d])
        if decision.detail.get("intercept_in_span"):
            # the minimum-norm map weighs inputs of size x against the column of
            # ones: its natural size is readouts times x / (x^2 + 1), not over x
            x = (x * x + 1) / x if x else x
        res.gamma_q, ok = _input_subspace(be, res.W, P, res.scale, x, decision.detail.get("theta_error", 0.0))
        if ok and not be.exact and not gamma_error and not gamma_in_N:
            # dim Γ_q is a rank of the readouts themselves, which no change of
            # basis moves; a fitted W of another rank saw P_Γ in a basis that hid a direction
            try:
                dim = fr.input_dimension_on_readouts(model, pairs, reading=reading, **_functionals(model, gamma))
            except fl.Unresolved:
                dim, ok = None, False      # (its readouts beyond binary64: Γ_q's dimension is not known)
            ok = dim is None or dim == res.gamma_q.shape[1]
        res.decided = decided and ok and not unmapped
    return res


def _regressor_rank(model, pairs, reading: str, regressed: int) -> int:
    """The rank of the regressors ``[f(s), 1]`` (``[L[s, :], 1]`` reading ``M``)
    where products of the model's numbers decide it
    (:func:`allornone.numeric.relational.regressor_rank`), else ``regressed``."""
    on_products = fr.regressor_rank(model, pairs, reading)
    return int(on_products[0]) if on_products is not None and on_products[1] else regressed


def gamma_in_N(model, gamma, _computed: bool = False) -> Decision:
    """``Γ ⊆ N`` (every column of ``gamma`` is fixed by ``P_N``).

    On a float model with ``gamma`` as given (numbers known exactly) the claim is
    decided on products of the model's numbers
    (:func:`allornone.numeric.relational.gamma_in_N`); a basis computed in floats
    (``_computed``) carries an error that those products do not know of, and is
    judged through the projector and its error bound.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0]])
    >>> gamma_in_N(m, [[1], [0]]).holds, gamma_in_N(m, [[0], [1]]).holds
    (True, False)
    """
    _check_model(model)
    be = model.backend
    basis, _, decided = _gamma(model, gamma)
    if basis.shape[1] == 0:
        return be.decision(True)
    if not be.exact and not _computed:
        if isinstance(gamma, readouts.TokenPairs):
            return be.decision(True)   # Γ_T is spanned by projections onto N
        # decided on products of the model's numbers and the given columns, with
        # no computed P_N and no orthonormalised basis (which would lose the small
        # coordinates of a column next to its large ones)
        on_products = fr.gamma_in_N(model, np.asarray(_as_matrix(model, gamma, "gamma"), dtype=float))
        if on_products is not None:
            return on_products
    d = be.vanishes(basis - model.projector_N @ basis, model.projector_N, basis,
                    extra=model.structure.errors.get("N", 0.0))
    return d if decided and model.structure.decided else _undecided(d)


def _certificate(a, b, certificate):
    _check_model(a)
    a.check_comparable(b)
    if certificate is None:
        return thm5.el_certificate(a, b)
    if not isinstance(certificate, thm5.Certificate):
        raise InputFormatError(f"certificate: expected thm5.el_certificate(model, twin), got "
                               f"{type(certificate).__name__}")
    if certificate.A.shape != (a.d, b.d) or certificate.B.shape != (a.d, b.d):
        raise ShapeError(f"certificate: A* and B* must be {a.d}x{b.d} (from thm5.el_certificate(model, twin))")
    return certificate


def _equivalent_certificate(a, b, certificate):
    """The certificate of ``(a, b)`` for a transport, or
    :class:`NotEquivalentError` unless ``L = L~`` (exact side: unless it also
    satisfies EL1--EL3, which Theorem 5 makes the same).

    Float side: where ``L = L~`` holds, Theorem 5 makes the exact canonical
    certificate satisfy EL1--EL3, whatever the computed one shows. One whose
    residuals leave EL1--EL3 open (errors of the computed subspaces, an
    undecided structure of either model) or, against ``L = L~``, fail them
    is no reason to refuse the transport: it runs on that certificate, marked
    undecided (``decided`` False), so that what rests on its computed maps
    (the dimension of ``Γ~``) is undecided, while the verdicts that Theorem
    14 ties to the model's own claims are decided there."""
    cert = _certificate(a, b, certificate)
    same = thm5.same_distribution(a, b)
    if not same.holds:
        why = "is undecided at the float tolerance" if same.undecided else "fails (L != L~)"
        raise NotEquivalentError(f"same distribution {why}: Theorem 14 transports only within an equivalence "
                                 "class")
    if not cert.decision.holds:
        if a.backend.exact:
            raise NotEquivalentError(f"the certificate (A*, B*) does not satisfy EL1-EL3 ({cert.decision})")
        cert = thm5.Certificate(cert.A, cert.B, cert.el1, cert.el2, cert.el3, False, cert.errors)
    return cert


def _transport_gamma(model, twin, gamma, cert):
    """``(Γ~, decided, error, readout_error)``: ``Γ~ = V C`` for a basis ``V`` of
    ``Ñ`` and ``C`` a basis of ``ker (I - P_Γ) B* V``; ``error`` bounds the sine
    of the angle between the computed and the exact ``Γ~``, ``readout_error``
    what the twin's contexts can see of it (float side; 0 when exact): the
    computed basis ``Q`` is within ``readout_error`` (Frobenius) of a basis ``Z``
    of the exact ``Γ~`` up to a part that every ``f~(x)`` is orthogonal to, and
    off ``Z`` only in coordinates where ``g~_0`` is not identically zero, so that
    ``|F~ (Q - Z)| <= |F~ restricted to those| readout_error``
    (:func:`allornone.numeric.transport.transported_kernel`). It never exceeds
    ``error``."""
    be = model.backend
    _, P, decided = _gamma(model, gamma)
    V = twin.basis_N
    if V.shape[1] == 0:
        # Ñ = {0} is the twin's structure's claim (k~ = 0), decided or not
        return be.zeros(twin.d, 0), decided and (be.exact or twin.structure.decided), 0.0, 0.0
    if be.exact:
        K = (be.eye(model.d) - P) @ cert.B @ V
        C = ql.nullspace(K)
        return (rel.integer_columns(V @ C) if C.shape[1] else be.zeros(twin.d, 0)), True, 0.0, 0.0
    # A certificate whose map B* left binary64 (a solve whose pivots were
    # lost to its range: a NaN or an infinity of B* reaches every entry of
    # K), a K that overflows, or a kernel that cannot be resolved gives no
    # Γ~: it is undecided, with no bound on its error (an empty basis, which
    # every verdict on it takes as undecided or decides where the claim lives)
    unknown = be.zeros(twin.d, 0), False, float("inf"), float("inf")
    with np.errstate(over="ignore", invalid="ignore"):
        K = (be.eye(model.d) - P) @ cert.B @ V
    if not np.all(np.isfinite(K)):
        return unknown
    # what the float side needs of the theorem: whether EL1-EL3 hold (or L = L~,
    # which gives them by Theorem 5), the kernel's known rank, Γ's own error
    try:
        Ut, ok, error, readout = ftr.transported_kernel(
            model, twin, K, P, V, cert.B, cert.errors.get("B", 0.0),
            None if isinstance(gamma, readouts.TokenPairs) else _as_matrix(model, gamma, "gamma"),
            equivalent=lambda: cert.decision.holds or thm5.same_distribution(model, twin).holds,
            known_rank=lambda: _known_kernel_rank(model, twin, gamma, cert, decided, V.shape[1]),
            gamma_error=lambda: _gamma_with_error(model, gamma)[3])
    except fl.Unresolved:
        return unknown
    ok = ok and decided and twin.structure.decided and model.structure.decided and cert.decided
    return Ut, ok, error, readout


def _known_kernel_rank(model, twin, gamma, cert, decided, n) -> int | None:
    """Float side: the exact rank of ``(I - P_Γ) B*`` on ``Ñ`` (``n`` its
    computed dimension), ``dim Ñ - dim Γ``, when every premise of
    ``dim Γ~ = dim (Γ ∩ N)`` is decided: the dimensions of ``Γ``, ``N``,
    ``Ñ`` and the certificate's, and ``Γ ⊆ N`` or else the dimension of
    ``Γ ∩ N`` (the caller has decided EL1--EL3 or ``L = L~``, so that ``B*``
    is a bijection from ``Ñ`` onto ``N``); ``None`` otherwise."""
    if not (decided and model.structure.decided and twin.structure.decided and cert.decided):
        return None
    Q = _gamma(model, gamma)[0]
    inside = gamma_in_N(model, gamma)
    if inside.holds:
        meet = Q.shape[1]
    elif inside.fails and not isinstance(gamma, readouts.TokenPairs):
        # B* maps Γ~ onto Γ ∩ N, whose dimension is that of products of the
        # model's numbers and the given columns
        meet = _meet_N(model, gamma)
        if meet is None:
            return None
    else:
        return None
    known = n - meet
    return known if 0 <= known <= n else None


def _meet_N(model, gamma) -> int | None:
    """Float side: ``dim (Γ ∩ N)`` for a ``Γ`` given as numbers, decided on
    products (:func:`allornone.numeric.relational.meet_N_dimension`), else None."""
    G = np.asarray(_as_matrix(model, gamma, "gamma"), dtype=float)
    out = fr.meet_N_dimension(model, G)
    return out[0] if out is not None and out[1] else None


def transport_gamma(model, twin, gamma, certificate=None):
    r"""``Γ~ = (B*|Ñ)^{-1}(Γ)``: the readouts ``ũ ∈ Ñ`` with ``B* ũ ∈ Γ``
    (columns of a ``d~ x r~`` matrix; for ``Γ ⊄ N`` this is the preimage of
    ``Γ ∩ N``). ``certificate`` defaults to ``thm5.el_certificate(model, twin)``.

    >>> from allornone.symbolic import ExactModel
    >>> a = ExactModel([[1, 0], [0, 1]], [[0, 0], [1, 0]])
    >>> b = ExactModel([[2], [0]], [[0], ["1/2"]])
    >>> transport_gamma(a, b, [[1], [0]]).to_fractions()
    [['1']]
    """
    cert = _certificate(model, twin, certificate)
    return _transport_gamma(model, twin, gamma, cert)[0]


@dataclass
class Transported:
    """Outcome of :func:`transport`: ``gamma`` (``Γ~``), ``W``, ``b`` on the twin
    (``W~ = P_Γ~ B*^T W A* P~_M~``, ``b~ = P_Γ~ B*^T b``, so ``Γ~_q ⊆ M~`` by
    construction); ``decision``: they fit on the twin (``verdict`` in words, as
    for :class:`RelationalLinearity`); ``result``: the same as a
    :class:`RelationalLinearity` of the twin; ``verified``: the twin re-decided
    from scratch by :func:`relational_linearity` on ``Γ~``, reading ``M``.

    On floats, where the twin's check does not show "holds" and the premises
    are decided, ``decision`` and ``verified`` are decided where their claim
    lives: the twin reads on ``Γ~`` what the model reads on ``Γ``, so both are
    the model's fit reading ``M`` (the detail keeps the twin's own verdict
    under ``"as computed"``)."""

    gamma: Any
    W: Any
    b: Any
    decision: Decision
    result: RelationalLinearity
    verified: RelationalLinearity

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]


def transport(model, twin, result: RelationalLinearity, certificate=None) -> Transported:
    r"""Carry a relational linearity of ``model`` reading ``M`` to ``twin``
    (Theorem 14's proof, docs/results/thm14.md): with Theorem 5's certificate
    ``(A*, B*)``, ``Γ~ = (B*|Ñ)^{-1}(Γ)``,
    :math:`\tilde W^\top \tilde u = \tilde P_{\tilde M} A^{*\top} W^\top B^* \tilde u`,
    :math:`\tilde u^\top \tilde b = u^\top b` with ``u = B* ũ``; then check the
    fit on the twin and re-decide it there from scratch.

    Raises :class:`NotEquivalentError` unless ``L = L~`` and
    :class:`TransportError` unless ``result`` holds, where it carries no map
    ``W``, ``b`` (a float fit decided on the ranks of products), and where
    ``Γ_q ⊆ M`` or ``Γ ⊆ N`` fails (where either is undecided, the transported
    verdicts are).

    >>> from allornone.symbolic import ExactModel, relational as rel
    >>> from allornone.symbolic.generators import b5_twin
    >>> inst = rel.plant(0, k=1, hidden=1, gamma_dim=1)
    >>> twin = b5_twin(inst.model, 1, a=2, b=1)
    >>> r = relational_linearity(inst.model, inst.pairs, inst.gamma)
    >>> t = transport(inst.model, twin, r)
    >>> t.verdict, t.verified.verdict, t.gamma.shape
    ('relationally linear', 'relationally linear', (4, 1))
    """
    _check_result(model, result)
    cert = _equivalent_certificate(model, twin, certificate)
    be = model.backend
    if not result.holds:
        raise TransportError(f"the relational linearity to transport does not hold ({result.decision})")
    _require_map(result, "nothing to transport")
    sM = model.structure
    in_M = be.vanishes(result.gamma_q - sM.P_M @ result.gamma_q, sM.P_M, result.gamma_q)
    if in_M.fails and not be.exact and result.reading != "M":
        # Γ_q is the span of a computed W, and the error of W (the fit's
        # condition in the coordinates given: a coordinate scaled 2^30 left one
        # entry of W off by 1e-6) is not in the bound above. Where no fit reads
        # M alone, every W reads outside M and the premise fails whatever W's
        # error; otherwise it is undecided
        alone = relational_linearity(model, result.pairs, result.gamma if result.given is None else result.given,
                                     "M")
        if not alone.decision.fails:
            in_M = _undecided(in_M)
    sure = _premise(in_M, "Γ_q ⊄ M: the fit reads coordinates the distribution does not determine "
                          "(Appendix D.1); Theorem 14 does not transport it")
    given, in_N = _as_given(model, result)
    sure &= _premise(in_N, "Γ ⊄ N: Theorem 14 needs the readouts inside N")
    gt, gt_decided, gt_error, gt_readout = _transport_gamma(model, twin, given, cert)
    _, Pt, _ = _gamma(twin, gt)
    if gt.shape[1]:
        Wt = Pt @ cert.B.T @ result.W @ cert.A @ twin.projector_M
        bt = Pt @ cert.B.T @ result.b
    else:
        # P_Γ~ = 0: W~ and b~ vanish, whatever the certificate's maps are
        # (formed as products, maps beyond binary64 would make them NaN)
        Wt, bt = be.zeros(twin.d, twin.d), be.zeros(twin.d, 1)
    pairs = result.pairs
    FS = twin.F[[s for s, _ in pairs], :]
    FT = twin.F[[t for _, t in pairs], :]
    scale = max(be.scale(FS, Wt.T), be.scale(FT, Pt), be.scale(bt))
    # Wt = Pt Wt and bt = Pt bt, so the fitted readouts need no further projection.
    decision = be.is_zero(FT @ Pt - FS @ Wt.T - _ones(be, len(pairs)) @ bt.T, scale)
    # Γ~ computed in floats is known to within its error, which the twin's
    # readouts on it carry (and Γ~ ⊆ Ñ by construction)
    verified = relational_linearity(twin, pairs, gt, "M", gamma_error=gt_readout, gamma_in_N=True)
    if not gt_decided:
        # the twin was re-decided on a Γ~ of undecided dimension: its basis,
        # and the ranks read off it, are undecided too
        verified.gamma_decided = verified.decided = False
    gq, ok = _input_subspace(be, Wt, Pt, scale, be.scale(FS @ twin.projector_M))
    if not sure:
        decision = _undecided(decision)
        _mark_undecided(verified)
    elif not be.exact:
        # the carried fit and the twin's fit reading M are the model's fit
        # reading M on Γ, read through L = L~ (Theorem 14's proof), whatever
        # Γ~ was computed as: one of undecided dimension may make the twin's
        # check fail or hold spuriously, the claim does neither
        decision = _implied(decision, result.decision)
        if not verified.holds:
            # (its W~, Γ~_q were not read off a fit that held)
            verified.decision, verified.decided = _implied(verified.decision, result.decision), False
    as_result = RelationalLinearity(decision, "M", pairs, gt, Pt, decision.residual, verified.regressor_rank,
                                    verified.trivial, Wt, bt, gq, gt_decided and ok, verified.rank_decided, scale,
                                    gamma_decided=gt_decided)
    return Transported(gt, Wt, bt, decision, as_result, verified)


def _on_original(r: RelationalLinearity, model, twin, pairs, reading: str, gamma) -> bool:
    """A float twin's fit on its transported ``Γ~`` decided on what it reads
    there, which is what ``model`` reads on ``Γ`` (``ũ^T f~(x) = (B* ũ)^T f(x)``,
    given ``L = L~`` and ``Γ ⊆ N``, which the caller has established): the
    consistency of products of the twin's regressors and the model's readouts
    (:func:`~allornone.numeric.relational.readout_fit`), not of a computed
    ``Γ~`` taken as exact. Updates ``r`` in place when that decides; says
    whether it did."""
    if twin.backend.exact:
        return False
    shown = fr.readout_fit(twin, pairs, reading, ("gamma", gamma), source=model)
    if shown is None or shown.undecided:
        return False
    if shown.holds and not r.decision.holds:
        r.decided = False   # W and Γ~_q were not read off a fit that held
    r.decision = Decision(shown.truth, shown.residual, shown.tolerance, {**r.decision.detail, **shown.detail})
    return True


# -- implied properties -----------------------------------------------------------------

@dataclass
class Probe:
    """A relational linear probe: ``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on
    every pair. ``decision`` says it fits (and, for :func:`implied_probe`, that
    ``P_N(g(a) - g(b)) ∈ Γ`` and ``w ∈ Γ_q ⊆ M``); ``verdict`` in words:
    ``"probe fits"``, ``"probe does not fit"`` or (floats only) ``"undecided"``.
    ``w`` is ``d x 1``, ``c`` a number (exact on an exact model);
    ``applicable`` (implied probes) whether ``P_N(g(a) - g(b)) ∈ Γ``; ``trivial``
    (:func:`linear_probing`) whether the regressors have full row rank;
    ``reading``: ``"M"`` where ``w`` lies in ``M`` by construction (a probe
    fitted reading ``M``, or implied by a fit reading ``M``), ``"any"`` for a
    probe fitted reading anything."""

    decision: Decision
    tokens: tuple
    w: Any = None
    c: Any = None
    residual: Any = 0
    trivial: bool = False
    applicable: Decision | None = None
    reading: str | None = None

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return PROBE_VERDICTS[self.decision.truth]


def _tokens(model, a, b) -> tuple[int, int]:
    out = []
    for v in (a, b):
        v = _index(v, "token")
        if not 0 <= v < model.n:
            raise VocabularyError(f"token index {v} is out of range for {model.n} tokens (0..{model.n - 1})")
        out.append(v)
    return tuple(out)


def _target_log_odds(model, pairs, a, b):
    """``log p(a|s⊕q) - log p(b|s⊕q)`` for every pair (``|S| x 1``), from ``L``."""
    rows = model.log_odds()[[t for _, t in pairs], :]
    # two-step indexing: NumPy would broadcast L[rows, [a]] to a 1-D array
    return rows[:, [a]] - rows[:, [b]]


def _probe_fit(model, pairs, a, b, w, c):
    """``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on every pair."""
    be = model.backend
    FS = model.F[[s for s, _ in pairs], :]
    r = _target_log_odds(model, pairs, a, b) - (FS @ w + _ones(be, len(pairs)) * c)
    return be.is_zero(r, max(be.scale(FS, w), model.log_odds_scale(), abs(float(c))))


def linear_probing(model, pairs, a, b, reading: str = "M") -> Probe:
    """Decide whether the log-odds of token ``a`` against ``b`` after ``s⊕q``
    are an affine function ``w^T f(s) + c`` of ``f(s)`` on the pairs, with ``w``
    in ``M`` (reading ``"M"``) or anywhere (``"any"``), by regression (the same
    regressors as :func:`relational_linearity`; ``w``, ``c`` minimum-norm).

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> p = linear_probing(m, [(0, 3), (1, 4), (2, 5)], 1, 0)
    >>> p.verdict, p.w.to_fractions(), p.c
    ('probe fits', [['2'], ['0']], Fraction(0, 1))
    >>> linear_probing(m, [(0, 4), (1, 3), (2, 5)], 1, 0).verdict
    'probe does not fit'
    """
    _check_model(model)
    reading = _check_reading(reading)
    pairs = _check_pairs(model, pairs)
    a, b = _tokens(model, a, b)
    y = _target_log_odds(model, pairs, a, b)
    _, theta, dec, rank, _ = _regress(model, pairs, y, model.log_odds_scale(), reading)
    shown = dec.holds
    if not model.backend.exact:
        # the probe's target is the readout named by (a, b): decided as that fit
        # of products, which no change of basis moves; the regression only
        # supplies w and c where it shows the same fit
        dec = _on_products(dec, fr.readout_fit(model, pairs, reading, ("tokens", [(a, b)])))
    out = Probe(dec, (a, b), residual=dec.residual, trivial=rank == len(pairs), reading=reading)
    if dec.holds and shown:
        out.w = theta[: model.d, :]
        out.c = model.backend.entry(theta, model.d, 0)
    return out


def _on_products(regressed: Decision, on_products: Decision | None) -> Decision:
    """A fit's float verdict: the products' where they decide it; undecided where
    they are formed but leave it open (a regression's residual through a
    computed basis proves nothing then); the regression's where the products are
    too large to be formed."""
    if on_products is None:
        return regressed
    if on_products.undecided:
        return Decision(Truth.UNDECIDED, regressed.residual, regressed.tolerance,
                        {**regressed.detail, "why": "the products' ranks are undecided"})
    return Decision(on_products.truth, on_products.residual, on_products.tolerance,
                    {**regressed.detail, **on_products.detail})


def implied_probe(model, result: RelationalLinearity, a, b) -> Probe:
    """The probe that a relational linearity reading ``M`` implies (see
    docs/results/thm14.md): if ``u = P_N(g(a) - g(b)) ∈ Γ`` then ``w = W^T u ∈ Γ_q ⊆ M`` and
    ``c = b^T u`` give ``log p(a|s⊕q)/p(b|s⊕q) = w^T f(s) + c`` on ``S``.
    ``applicable`` says whether ``u ∈ Γ``; ``decision`` that ``u ∈ Γ``, the
    result holds, ``w ∈ M`` and the probe fits.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> r = relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]])
    >>> p = implied_probe(m, r, 1, 0)
    >>> p.verdict, p.applicable.holds, p.w.to_fractions(), p.c
    ('probe fits', True, [['2'], ['0']], Fraction(0, 1))
    """
    _check_result(model, result)
    a, b = _tokens(model, a, b)
    be = model.backend
    delta = model.unembedding_difference(a, b)
    u = model.projector_N @ delta
    in_gamma = None
    if not be.exact and result.given is not None and gamma_in_N(model, result.given).holds:
        # with Γ ⊆ N, u ∈ Γ is a claim about the log-odds: that of (a, b) lies
        # in the span of the readouts on Γ (numeric.relational.difference_in_readouts).
        # Decided there whenever those products are formed: the residual of u
        # against the computed P_Γ is relative to |u| in the model's basis, which
        # a diagonal change of basis moves, and carries the computed Γ's error
        named = isinstance(result.given, readouts.TokenPairs)
        in_gamma = fr.difference_in_readouts(
            model, a, b, None if named else np.asarray(_as_matrix(model, result.given, "gamma"), dtype=float),
            result.given.pairs if named else None)
    if in_gamma is None:
        # (float side: u carries the error of P_N at the size of g(a) - g(b),
        # which hidden components can make far larger than u itself, and the
        # computed P_Γ twice the sine of its basis's angle to Γ, at the size of u)
        extra = 0.0
        if not be.exact:
            gamma_error = _gamma_with_error(model, result.given)[3] if result.given is not None else 0.0
            extra = fr.projection_error(model, delta, gamma_error=gamma_error)
        in_gamma = be.vanishes(u - result.projector @ u, result.projector, u, extra=extra)
    if not (in_gamma.holds and result.holds):
        return Probe(Decision.all([in_gamma, result.decision]), (a, b), applicable=in_gamma, reading="M")
    w = result.W.T @ u
    c = be.entry(result.b.T @ u, 0, 0)
    fit = _probe_fit(model, result.pairs, a, b, w, c)
    checks = [fit, be.vanishes(w - model.projector_M @ w, model.projector_M, w)]
    if not be.exact and not Decision.all(checks).holds:
        # with u ∈ Γ and the fit reading M holding, the exact w ∈ M and c fit;
        # the computed ones carry the errors of W and b. The claim, a probe of
        # the log-odds of (a, b) reading M, is decided on those log-odds
        fit = _implied(Decision.all(checks), linear_probing(model, result.pairs, a, b, "M").decision)
        checks = [fit]
    return Probe(Decision.all([in_gamma, *checks]), (a, b), w, c, fit.residual, applicable=in_gamma, reading="M")


def transport_probe(model, twin, probe: Probe, pairs, certificate=None) -> Probe:
    """The probe ``w``, ``c`` of ``model`` (``w ∈ M``) carried to ``twin`` by the
    input transport ``w~ = P~_M~ A*^T w``, ``c~ = c``, and checked there.

    Raises :class:`NotEquivalentError` unless ``L = L~`` and
    :class:`TransportError` where the probe does not fit; where ``w ∈ M`` fails
    too, and where either is undecided (float side) the transported fit is."""
    _check_result(model, probe, Probe, "probe")
    cert = _equivalent_certificate(model, twin, certificate)
    if probe.decision.fails:
        raise TransportError(f"the probe to transport does not hold ({probe.decision})")
    if probe.w is None and probe.decision.undecided:
        # an undecided probe with no w to carry: the carried one is undecided too
        pairs = _check_pairs(twin, pairs)
        fit = Decision(Truth.UNDECIDED, float("inf"), (0.0, 0.0), {"why": "the probe to transport is undecided"})
        return Probe(fit, probe.tokens, None, probe.c, fit.residual, applicable=probe.applicable, reading="M")
    if probe.w is None:
        raise TransportError("the probe was decided without its w, c (on the ranks of products): "
                             "nothing to transport")
    be = model.backend
    in_M = be.vanishes(probe.w - model.projector_M @ probe.w, model.projector_M, probe.w)
    if not be.exact and not in_M.holds and probe.reading == "M":
        # a probe fitted (or implied) reading M has its exact w in M by
        # construction: the computed w carries the fit's errors
        in_M = _implied(in_M, probe.decision)
    # (a probe that is itself undecided is carried as any undecided premise is: its fit, undecided)
    sure = _premise(in_M, "the probe reads outside M (w ∉ M): the input transport does not carry it") and \
        probe.holds
    pairs = _check_pairs(twin, pairs)
    a, b = probe.tokens
    with np.errstate(over="ignore", invalid="ignore"):
        wt = twin.projector_M @ cert.A.T @ probe.w
    if be.exact or np.all(np.isfinite(wt)):
        fit = _probe_fit(twin, pairs, a, b, wt, probe.c)
    else:
        # (float side) a certificate's map A* beyond binary64 (a NaN or an
        # infinity of it reaches every entry of w~) carries no w~: the carried
        # probe is undecided, and decided below where the claim lives
        wt, fit = None, Decision(Truth.UNDECIDED, float("inf"), (0.0, 0.0),
                                 {"why": "the carried w~ is beyond binary64"})
    if not sure:
        fit = _undecided(fit)
    elif not be.exact:
        # where w ∈ M, Theorem 14 makes the exact w~ fit: the claim is a probe
        # of the twin's log-odds of (a, b) reading M, decided on them
        fit = _implied(fit, linear_probing(twin, pairs, a, b, "M").decision)
    return Probe(fit, (a, b), wt, probe.c, fit.residual, applicable=probe.applicable, reading="M")


@dataclass
class ReadoutSubspace:
    """The readouts ``P_Γ f(s⊕q)`` lie in ``offset + span(directions)``, with
    ``offset = P_Γ b`` and ``directions`` a basis of ``P_Γ W(Γ_q)``, of dimension
    ``dim`` (``= dim Γ_q``, as ``W = P_Γ W``). ``readout_dim`` is the affine
    dimension of the readouts themselves, computed from the readouts alone (a
    property of the distribution); ``decision`` says that the readouts lie in
    the affine subspace and ``readout_dim <= dim``; ``verdict`` in words:
    ``"readouts in the subspace"``, ``"readouts not in the subspace"`` or
    (floats only) ``"undecided"``."""

    decision: Decision
    offset: Any
    directions: Any
    dim: int
    dim_gamma_q: int
    readout_dim: int

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return SUBSPACE_VERDICTS[self.decision.truth]


def readout_subspace(model, result: RelationalLinearity) -> ReadoutSubspace:
    """Decide the linear-subspace property implied by ``result`` (see
    docs/results/thm14.md): every ``P_Γ f(s⊕q) - P_Γ b`` lies in ``P_Γ W(Γ_q)``, a subspace
    of dimension at most ``dim Γ_q``.

    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 0], [3, 0], [2, 1], [4, 1], [6, 1]], [[0, 0], [1, 0]])
    >>> sub = readout_subspace(m, relational_linearity(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]]))
    >>> sub.verdict, sub.dim, sub.readout_dim, sub.directions.to_fractions()
    ('readouts in the subspace', 1, 1, [['2'], ['0']])
    """
    _check_result(model, result)
    if not result.holds:
        raise TransportError("the linear-subspace property is implied only by a relational linearity that holds")
    _require_map(result, "no subspace to read off")
    be = model.backend
    P, pairs = result.projector, result.pairs
    FS = model.F[[s for s, _ in pairs], :]
    FT = model.F[[t for _, t in pairs], :]
    ones = _ones(be, len(pairs))
    Rd = FT @ P - ones @ (P @ result.b).T  # readouts minus the offset, as rows
    # P_Γ W(Γ_q) = Im(P_Γ W W^T P_Γ) = Im(W), judged on the scale of W as in Γ_q
    directions, dd = _input_subspace(be, result.W.T, be.eye(model.d), result.scale, be.scale(FS))
    dim = directions.shape[1]
    if dim:
        inside = be.vanishes(Rd.T - be.projector_onto_rows(directions.T) @ Rd.T, Rd, P)
    else:
        inside = be.vanishes(Rd, FT, P)
    readouts = FT @ P
    rdim, rdec = be.rank(readouts - ones @ readouts[[0], :], be.scale(FT, P))
    dec = Decision.all([inside, be.decision(rdim <= dim, decided=dd and rdec, readout_dim=rdim, dim=dim)])
    if not be.exact:
        # the fit's readouts are W f(s) + b: the property is the fit's, and
        # the computed b and directions of W carry its errors
        dec = _implied(dec, result.decision)
    return ReadoutSubspace(dec, P @ result.b, directions, dim, result.gamma_q.shape[1], rdim)


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.thm14.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample, EnoughPairs, GAMMA_T, GammaInN, KINDS, ReadoutsSeen, RelationallyLinear, RelationallyLinearReadingM  # noqa: E402,F401
