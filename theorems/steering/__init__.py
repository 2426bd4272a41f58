r"""Linear steering (an addition of this project, as encoded here).

The paper's summary names linear steering beside parallelism, relational
linearity and linear probing. Encoded here as the case ``W = I`` of relational
linearity: appending ``q`` *translates* the readout,

    ``P_Γ f(s⊕q) = P_Γ (f(s) + v)``  for every pair ``(s, s⊕q)`` of the query,

i.e. ``P_Γ (f(s⊕q) - f(s))`` is the same vector ``P_Γ v`` for every pair.

* **Token form.** On a readout named by token pairs ``T`` (each model's own
  ``Γ_T``, see :mod:`allornone.theorems.readouts`), every ``u = P_N(g(a) - g(b))``
  reads the log-odds, so steering says ``ℓ_ab(s⊕q) - ℓ_ab(s) = c_ab`` for every
  pair: a property of ``L`` alone (:func:`log_odds_steering`), hence all or none.
* **General form.** For ``Γ ⊆ N`` and an equivalent model, with
  ``Γ~ = (B*|Ñ)^{-1}(Γ)``: every ``ũ ∈ Γ~`` has ``ũ^T f~(x) = (B* ũ)^T f(x)`` for
  every context (F4 and EL1-EL3), so ``P_Γ~(f~(s⊕q) - f~(s))`` is constant iff
  ``P_Γ(f(s⊕q) - f(s))`` is: **Γ ⊆ N is the only condition** (beside ``L = L~``),
  and the translation carries over as ``ũ^T ṽ = (B* ũ)^T v``. Theorem 14's
  hypothesis ``Γ_q ⊆ M`` is not needed although ``W = I`` reads ``Γ_q = Γ``:
  on readouts in ``N`` the identity factors through ``M``
  (``u^T f(s) = (P_M u)^T f(s)`` for ``u ∈ N``, F4).
* **The transported map.** Theorem 14's transport of ``W = P_Γ P_M`` (the same
  translation, reading ``M``) gives ``W~^T ũ = P~_M~ ũ`` on ``Γ~``: it is the
  identity matrix on ``Γ~`` only when ``Γ~ ⊆ M~``, which an equivalent model
  need not satisfy (a change of basis that moves ``Ñ`` off ``M~``). Yet on every
  context it acts as the identity, so the twin is steered all the same; the
  record's boundary edge "map not the identity" shows such an instance.
* **Where it fails.** ``Γ ⊄ N``: a readout with a hidden direction (``SF ∩ M^⊥``)
  can be translated in one model and not in an equivalent one (the edge "drop
  Γ ⊆ N", with a twin readout that is not ``{0}``); and raw steering
  ``f(s⊕q) = f(s) + v`` (``Γ = R^d``) is not shared (edge "raw steering").

>>> from allornone.symbolic import ExactModel
>>> m = ExactModel([[1, 0], [2, 5], [3, 1], [2, 0], [3, 7], [4, -2]], [[0, 0], [1, 0]])
>>> r = steering(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]])
>>> r.verdict, r.v.to_fractions()
('steered', [['1'], ['0']])
>>> steering(m, [(0, 3), (1, 4), (2, 5)], [[0], [1]]).verdict
'not steered'
>>> log_odds_steering(m, [(0, 3), (1, 4), (2, 5)], [(1, 0)]).c.to_fractions()
[['1']]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


from allornone.decision import Decision, Truth
from allornone.errors import InputFormatError
from allornone.model import Model
from allornone.numeric import transport as ftr
from allornone.theorems import readouts, thm14
from allornone.theorems.readouts import TokenPairs, tokens  # noqa: F401 (steering.tokens names a readout)

__all__ = ["Steering", "steering", "log_odds_steering", "TransportedSteering", "transport_steering", "Steered",
           "RECORD"]

VERDICTS = {Truth.HOLDS: "steered", Truth.FAILS: "not steered", Truth.UNDECIDED: "undecided"}


@dataclass
class Steering:
    """Outcome of :func:`steering` (and of :func:`log_odds_steering`).

    ``decision`` says whether ``P_Γ(f(s⊕q) - f(s))`` is the same for every pair
    (exact, or three-valued with its tolerance on floats); ``verdict`` in words:
    ``"steered"``, ``"not steered"`` or (floats only) ``"undecided"``. ``v`` is
    the translation ``P_Γ v`` (``d x 1``) when it holds, ``gamma`` a basis of
    ``Γ``, ``projector`` ``P_Γ``; ``trivial`` is True for a single pair (one
    difference is always a translation). For :func:`log_odds_steering`, ``c``
    (``1 x |T|``) holds the constant log-odds shifts ``c_ab`` and ``v``,
    ``gamma``, ``projector`` are None."""

    decision: Decision
    pairs: tuple
    residual: Any
    trivial: bool
    gamma: Any = None
    projector: Any = None
    v: Any = None
    c: Any = None
    decided: bool = True
    given: Any = None
    """``Γ`` as given to :func:`steering` where its numbers are known exactly
    (no declared error): ``gamma`` is the basis computed from it."""

    @property
    def holds(self) -> bool:
        return self.decision.holds

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]

    @property
    def dim_gamma(self) -> int | None:
        return None if self.gamma is None else self.gamma.shape[1]


def _constant_rows(be, D, *factors):
    """Every row of ``D`` equals its first (``D - 1 D[0]`` vanishes)."""
    return be.vanishes(be.minus_row(D, 0), *factors)


def steering(model, pairs, gamma, gamma_error: float = 0.0, gamma_in_N: bool = False) -> Steering:
    r"""Decide linear steering for the query ``pairs`` on
    ``Γ = span(columns of gamma)``: is there ``v`` with
    :math:`P_\Gamma f(s\oplus q) = P_\Gamma (f(s) + v)` for every pair?

    Parameters
    ----------
    model : ExactModel or FloatModel
    pairs : list of (s, s⊕q)
        Context-index pairs of the query.
    gamma : matrix (``d x r``) or TokenPairs
        Columns spanning ``Γ``, or ``tokens([(a, b), ...])``: the model's own
        ``Γ_T``.
    gamma_error : float
        Float side: a bound on the error of ``gamma`` itself when it was
        computed (the sine of the angle to the exact ``Γ``, e.g. a transported
        readout), which the readouts then carry at the size of the rows of ``F``.
    gamma_in_N : bool
        Float side: the exact ``Γ`` lies in ``N`` (a transported ``Γ~``), so its
        error reaches only the coordinates in which ``g_0`` is not identically
        zero (:func:`allornone.numeric.relational.readout_error`).

    Returns
    -------
    Steering

    Raises
    ------
    InputFormatError, ShapeError, VocabularyError
        On malformed pairs, a ``gamma`` of the wrong height, tokens out of range.

    Examples
    --------
    >>> from allornone.symbolic import ExactModel
    >>> m = ExactModel([[1, 0], [2, 5], [3, 0], [4, 9]], [[0, 0], [1, 0]])
    >>> steering(m, [(0, 2), (1, 3)], tokens([(1, 0)])).v.to_fractions()
    [['2'], ['0']]
    >>> steering(m.to_float(), [(0, 2), (1, 3)], [[1.0], [0.0]]).verdict
    'steered'
    """
    thm14._check_model(model)
    pairs = thm14._check_pairs(model, pairs)
    be = model.backend
    basis, P, decided, g_error = thm14._gamma_with_error(model, gamma)
    g_error += float(gamma_error)
    FS = model.F[[s for s, _ in pairs], :]
    FT = model.F[[t for _, t in pairs], :]
    D = (FT - FS) @ P
    if be.exact:
        dec = _constant_rows(be, D, be.vstack(FS, FT), P)
    else:
        # (a token readout's own error is measured through F:
        # numeric.transport.translation)
        named = isinstance(gamma, TokenPairs)
        token = (readouts.token_readout(model, gamma), gamma.pairs) if named and not gamma_error else None
        dec, D = ftr.translation(model, pairs, FS, FT, D, basis, P, g_error, named or gamma_in_N, token)
    if not decided:
        dec = Decision(Truth.UNDECIDED, dec.residual, dec.tolerance, dec.detail)
    if not be.exact and not gamma_error and not gamma_in_N:
        # readouts named by tokens (log-odds differences) or by a Γ given as numbers:
        # decided on the readouts themselves, linear forms of the model's numbers
        from allornone.numeric.parallel import constant_readouts

        G = np.asarray(model.G)
        if isinstance(gamma, TokenPairs):
            readers = [G[[a for a, _ in gamma]], -G[[b for _, b in gamma]]]
        else:
            readers = [np.asarray(thm14._as_matrix(model, gamma, "gamma"), dtype=float).T]
        on_forms = constant_readouts(model, pairs, readers)
        if on_forms is not None and not on_forms.undecided:
            dec = on_forms
    if dec.undecided and not be.exact:
        # a translation left open by the propagated bounds may still be shown by
        # a witness: the differences of readouts spanning Γ exactly, fitted by a
        # constant (numeric.transport.translation_witness; "holds" only)
        shown = _steering_witness(model, pairs, gamma, gamma_error, gamma_in_N, dec)
        if shown is not None:
            dec = shown
    out = Steering(dec, pairs, dec.residual, len(pairs) == 1, basis, P, decided=decided,
                   given=None if gamma_error or gamma_in_N else gamma)
    if dec.holds:
        out.v = D[[0], :].T
    return out


def _steering_witness(model, pairs, gamma, gamma_error, gamma_in_N, dec):
    """Float side: "steered", shown by a witness, or None. The readouts of
    ``f(s⊕q) - f(s)`` on functionals spanning ``Γ`` exactly
    (:func:`thm14._witness_source`) are constant over the pairs when the
    constant column fits them (:func:`allornone.numeric.transport.translation_witness`)."""
    source = thm14._witness_source(model, gamma, gamma_error, gamma_in_N)
    readout = source([t for _, t in pairs], [s for s, _ in pairs]) if source is not None else None
    return ftr.translation_witness(model, pairs, readout, dec)


def log_odds_steering(source, pairs, T) -> Steering:
    """Steering on the readout named by ``T``, decided from the log-odds alone:
    ``ℓ_ab(s⊕q) - ℓ_ab(s)`` is the same for every pair, for every ``(a, b) ∈ T``
    (``c`` holds the shifts). Equivalent to ``steering(model, pairs, tokens(T))``
    for every model with this ``L`` (module docstring). On a float model (or
    a float ``L``) each shift is decided on correctly rounded linear forms of
    the model's own numbers, at the size of the log-odds differences it
    compares (:func:`_log_odds_steering_on_forms`), never on the computed
    product ``F G_0^T``.

    Parameters
    ----------
    source : ExactModel, FloatModel, QMatrix or ndarray
        A model (only its log-odds are read: on floats, as linear forms of
        its ``f`` and ``g``) or a log-odds matrix ``L``.
    pairs : list of (s, s⊕q)
    T : TokenPairs or list of pairs of int

    Returns
    -------
    Steering

    Examples
    --------
    >>> log_odds_steering([[0, 1], [0, 4], [0, 3], [0, 6]], [(0, 2), (1, 3)], [(1, 0)]).c.to_fractions()
    [['2']]
    >>> log_odds_steering([[0, 1], [0, 4], [0, 3], [0, 7]], [(0, 2), (1, 3)], [(1, 0)]).verdict
    'not steered'
    """
    model = source if isinstance(source, Model) else readouts.log_odds_model(source)
    pairs = thm14._check_pairs(model, pairs)
    be = model.backend
    if not be.exact:
        return _log_odds_steering_on_forms(model, pairs, readouts._checked(model, T))
    ell = readouts.readout_log_odds(model, T)
    D = ell[[t for _, t in pairs], :] - ell[[s for s, _ in pairs], :]
    dec = _constant_rows(be, D, ell)
    out = Steering(dec, pairs, dec.residual, len(pairs) == 1)
    if dec.holds:
        out.c = D[[0], :]
    return out


def _log_odds_steering_on_forms(model, pairs, T) -> Steering:
    """Float side of :func:`log_odds_steering`, decided where the claim lives.

    ``ℓ_ab(x) = L[x, a] - L[x, b] = f(x)^T (g(a) - g(b))`` (the pivot's row
    cancels), so each shift ``ℓ_ab(t_i) - ℓ_ab(s_i) - ℓ_ab(t_1) + ℓ_ab(s_1)`` is
    a linear form of the model's own numbers: the readers ``g(a)``, ``-g(b)``
    applied to ``f(t_i) - f(s_i) - f(t_1) + f(s_1)``
    (:func:`allornone.numeric.parallel.constant_readouts`). Each is evaluated
    correctly rounded with a rigorous bound, and judged at the size of the
    four log-odds differences it combines -- the values the equation
    compares, which no change of pivot moves -- never at the size of the
    computed log-odds ``F G_0^T``: a plain product of rows that cancel (a
    hidden coordinate sheared into an identified one) is off by far more than
    the tolerance, and carries no bound. A form beyond binary64 leaves the
    verdict undecided. The shifts ``c`` are the forms of the first pair,
    correctly rounded.

    Parameters
    ----------
    model : FloatModel
    pairs : tuple of (s, s⊕q)
        Validated context-index pairs.
    T : TokenPairs
        Validated token pairs.

    Returns
    -------
    Steering
    """
    from allornone.numeric.parallel import Forms, constant_readouts

    G = np.asarray(model.G)
    readers = [G[[a for a, _ in T]], -G[[b for _, b in T]]]
    dec = constant_readouts(model, pairs, readers)
    if dec is None:
        dec = Decision(Truth.UNDECIDED, float("inf"), (0.0, 0.0), {"why": "a log-odds shift beyond binary64"})
    out = Steering(dec, pairs, dec.residual, len(pairs) == 1)
    if dec.holds:
        s1, t1 = pairs[0]
        first = Forms(readers, np.asarray(model.F), (), model.input_error).evaluate([[(1, t1), (-1, s1)]])
        if first is not None:
            c = first[0].in_model_units[:, 0]
            if np.all(np.isfinite(c)):
                out.c = c[None, :]
    return out


@dataclass
class TransportedSteering:
    """Outcome of :func:`transport_steering`: ``gamma`` (``Γ~``), the carried
    translation ``v`` (``ṽ ∈ Γ~`` with ``ũ^T ṽ = (B* ũ)^T v``), ``decision`` (it
    fits on the twin), ``verified`` (the twin re-decided from scratch),
    ``W`` (Theorem 14's transported map of ``W = P_Γ P_M``, ``W~ = P_Γ~ B*^T W A* P~_M~``)
    and ``identity`` (whether ``W~ = P_Γ~``, i.e. ``Γ~ ⊆ M~``: the transported
    map is literally the identity on ``Γ~``).

    On floats, where the twin's check does not show "holds" and the premises
    are decided, ``decision`` and ``verified`` are the model's steering on
    ``Γ``, which the twin reads on ``Γ~`` (the detail keeps the twin's own
    verdict under ``"as computed"``)."""

    gamma: Any
    v: Any
    decision: Decision
    verified: Steering
    W: Any
    identity: Decision

    @property
    def verdict(self) -> str:
        return VERDICTS[self.decision.truth]


def transport_steering(model, twin, result: Steering, certificate=None) -> TransportedSteering:
    """Carry a steering of ``model`` on ``Γ ⊆ N`` to an equivalent ``twin``: on
    ``Γ~ = (B*|Ñ)^{-1}(Γ)`` the translation ``ṽ`` with ``ũ^T ṽ = (B* ũ)^T v``;
    check it there and re-decide the twin from scratch.

    Raises
    ------
    NotEquivalentError
        Unless ``L = L~`` (and, on exact models, Theorem 5's certificate
        satisfies EL1-EL3, which Theorem 5 makes the same). On floats a
        certificate that leaves EL1-EL3 open where ``L = L~`` holds is no
        reason to refuse: the transport runs, ``Γ~`` undecided.
    TransportError
        Unless ``result`` holds, and where ``Γ ⊆ N`` fails (where that is
        undecided, the transported verdicts are undecided).

    Examples
    --------
    >>> from allornone.symbolic import ExactModel
    >>> from allornone.symbolic.generators import change_of_basis
    >>> m = ExactModel([[1, 0], [2, 5], [3, 1], [2, 0], [3, 7], [4, -2]], [[0, 0], [1, 0]])
    >>> twin = change_of_basis(m, [[1, 1], [0, 1]])
    >>> t = transport_steering(m, twin, steering(m, [(0, 3), (1, 4), (2, 5)], [[1], [0]]))
    >>> t.verdict, t.verified.verdict, t.identity.holds
    ('steered', 'steered', True)

    A twin whose ``Ñ`` leaves ``M~``: the transported map is not the identity
    matrix on ``Γ~``, and the twin is steered all the same.

    >>> from allornone.symbolic.generators import b5_twin
    >>> m2 = ExactModel([[0, 1], [1, -1], [2, 0], [-1, 2], [1, 0], [2, 2], [3, 0], [0, 1]], [[0, 0], [1, 0]])
    >>> tw = b5_twin(m2, a=1, b=1, T=[[1]], R=[[1, 1, 0], [0, 1, 0], [0, 0, 1]], c=[0, 0, 0],
    ...              psi=lambda y, g, b: [y])
    >>> t2 = transport_steering(m2, tw, steering(m2, [(0, 4), (1, 5), (2, 6), (3, 7)], [[1], [0]]))
    >>> t2.verified.verdict, t2.identity.holds
    ('steered', False)
    """
    if not isinstance(result, Steering) or result.gamma is None:
        raise InputFormatError("result: expected a Steering from steering(model, pairs, gamma)")
    cert = thm14._equivalent_certificate(model, twin, certificate)
    if not result.holds:
        raise thm14.TransportError(f"the steering to transport does not hold ({result.decision})")
    given, in_N = thm14._as_given(model, result)
    sure = thm14._premise(in_N, "Γ ⊄ N: a translation of a hidden direction is not carried to equivalent models")
    be = model.backend
    gt, gt_decided, gt_error, gt_readout = thm14._transport_gamma(model, twin, given, cert)
    _, Pt, _ = thm14._gamma(twin, gt)
    pairs = result.pairs
    FS = twin.F[[s for s, _ in pairs], :]
    FT = twin.F[[t for _, t in pairs], :]
    if gt.shape[1]:
        vt = be.pinv(gt.T) @ (cert.B @ gt).T @ result.v
        fit = be.vanishes((FT - FS) @ Pt - thm14._ones(be, len(pairs)) @ vt.T, be.vstack(FS, FT), Pt)
        Wt = Pt @ cert.B.T @ result.projector @ model.projector_M @ cert.A @ twin.projector_M
    else:
        # P_Γ~ = 0: ṽ and W~ vanish, whatever the certificate's maps are
        # (formed as products, maps beyond binary64 would make them NaN)
        vt, fit = be.zeros(twin.d, 1), be.decision(True)
        Wt = be.zeros(twin.d, twin.d)
    if not sure:
        # where Γ ⊆ N is undecided, nothing is carried for certain
        fit = thm14._undecided(fit)
    verified = steering(twin, pairs, gt, gt_readout, gamma_in_N=True)
    if not gt_decided:
        # the twin was re-decided on a Γ~ of undecided dimension
        verified.decided = False
    if not sure and "witness" not in verified.decision.detail:
        # (the same of the twin re-decided on Γ~, unless a witness's readouts,
        # which do not rest on the computed basis, decided it)
        verified.decision = thm14._undecided(verified.decision)
    elif not be.exact:
        # the twin's readouts on Γ~ are the model's on Γ: the carried
        # translation fits, and the twin is steered, where the model is --
        # whatever Γ~ was computed as (one of undecided dimension may make the
        # twin's check fail or hold spuriously; the claim does neither)
        fit = thm14._implied(fit, result.decision)
        verified.decision = thm14._implied(verified.decision, result.decision)
    map_error = 0.0 if be.exact else ftr.map_error(model, twin, cert.A, cert.B, cert.errors, gt_error)
    identity = be.vanishes(Wt - Pt, Pt, cert.B.T, cert.A, twin.projector_M, extra=map_error)
    if not be.exact:
        identity = ftr.transported_identity(model, twin, cert.A, cert.B, cert.errors, gt, gt_decided, gt_error, Wt,
                                           Pt, identity)
    if not sure and identity.holds:
        identity = Decision(Truth.UNDECIDED, identity.residual, identity.tolerance, identity.detail)
    return TransportedSteering(gt, vt, fit, verified, Wt, identity)


# The record (statement, sampler, steps, edges) reads the API above, so it is
# imported last.
from allornone.theorems.steering.record import RECORD, ATOMS, HYPOTHESES, STEPS, EDGES, decide, sample, instance, GAMMA_T, KINDS, Steered, SteeringEvidence, TransportedMapIsIdentity, plant  # noqa: E402,F401
