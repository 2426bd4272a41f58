"""Float verdicts of steering and Theorem 14's transport against the exact ones,
on exactly representable instances where the float computation is hard.

* ``log_odds_steering`` on a float model decides the claim on the log-odds
  shifts as linear forms of the model's own numbers, correctly rounded, never
  on a plain product ``F G_0^T`` whose rounding it cannot bound (a hidden
  coordinate sheared into an identified one cancels in every logit).
* A twin ``F D``, ``G D^-1`` under a diagonal power-of-two change of basis
  whose coordinates are far apart: the certificate is formed without leaving
  binary64 where that is possible (rows scaled by powers of two), and where it
  is not, the transported readout is undecided -- never a bare exception.
* A transport between models whose ``L = L~`` is decided runs, although the
  float certificate leaves EL1--EL3 open; its flags agree with one another.

Rule checked throughout: a decided float verdict equals the exact one.
"""
from __future__ import annotations

import os
import warnings
from fractions import Fraction as Fr

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pytest

from allornone.errors import AllOrNoneError
from allornone.numeric.model import FloatModel
from allornone.symbolic import ExactModel
from allornone.theorems import steering as st
from allornone.theorems import thm5, thm14


def _pair(F, G, pivot):
    """The exact model and the float one on the same (exactly representable) numbers."""
    ex = ExactModel(F, G, pivot)
    fl = FloatModel(np.array([[float(v) for v in r] for r in F]), np.array([[float(v) for v in r] for r in G]),
                    pivot)
    assert fl.input_error == 0
    assert [[Fr(v) for v in r] for r in fl.F.tolist()] == [[Fr(v) for v in r] for r in F]
    assert [[Fr(v) for v in r] for r in fl.G.tolist()] == [[Fr(v) for v in r] for r in G]
    return ex, fl


def _twin(F, G, exponents, hidden=None):
    """``F D``, ``G D^-1`` with ``D = diag(2^e)``; with ``hidden``, one more
    coordinate that only ``g`` uses (``f`` is zero there): a symmetry of ``L``."""
    D = [Fr(2) ** e for e in exponents]
    F2 = [[Fr(x) * s for x, s in zip(row, D)] + ([Fr(0)] if hidden else []) for row in F]
    G2 = [[Fr(x) / s for x, s in zip(row, D)] + ([Fr(h)] if hidden else []) for row, h in
          zip(G, hidden or [0] * len(G))]
    return F2, G2


def _agrees(exact, computed) -> bool:
    """A float decision is undecided or the exact one."""
    return computed.undecided or computed.truth is exact.truth


def _decision(x):
    return getattr(x, "decision", x)


# -- log_odds_steering: the shifts as correctly rounded forms --------------------------------------

K_SHEAR, C_SCALE = 2 ** 26 + 1, 105
HIDDEN = [2 ** 26 + 3, 2 ** 26 + 7, 2 ** 26 + 11, 2 ** 26 + 13]


def _sheared(identified):
    """``f = T^T (l, h)``, ``g = T^-1 (c, 0)`` with ``T = [[1, 0], [K, 1]]``:
    ``L[x, 1] = c l_x``; every logit cancels the hidden ``h_x K c`` exactly."""
    F = [[h * K_SHEAR + l, h] for h, l in zip(HIDDEN, identified)]
    G = [[0, 0], [C_SCALE, -C_SCALE * K_SHEAR]]
    return _pair(F, G, 0)


@pytest.mark.parametrize("identified, verdict", [([0, 1, 2, 3], "steered"), ([0, 1, 2, 4], "not steered")])
def test_log_odds_steering_float_is_decided_on_rounded_forms(identified, verdict):
    ex, fl = _sheared(identified)
    pairs, T = [(0, 2), (1, 3)], [(1, 0)]
    # the plain product is far off (the shear), which is what must not decide
    assert not np.array_equal(fl.log_odds()[:, 1], [C_SCALE * x for x in identified])
    e = st.log_odds_steering(ex, pairs, T)
    f = st.log_odds_steering(fl, pairs, T)
    assert e.verdict == verdict
    assert _agrees(e.decision, f.decision), (e.verdict, f.verdict, f.decision)
    # correctly rounded forms of small integers decide it, and give the shift itself
    assert f.verdict == verdict
    if f.holds:
        assert f.c.tolist() == [[float(C_SCALE * (identified[2] - identified[0]))]]
    # the same claim on the readout named by tokens, and on the log-odds given as numbers
    assert _agrees(e.decision, st.steering(fl, pairs, st.tokens(T)).decision)
    L = np.array([[float(v) for v in r] for r in ex.log_odds().to_fraction_rows()])
    assert st.log_odds_steering(L, pairs, T).verdict == verdict


# -- a twin whose coordinates are far apart: a certificate in binary64, or an undecided Γ~ ------------

# a model relationally linear on e0 (f(t)_0 = 2 f(s)_0 + 1), and one steered on e0 (f(t)_0 = f(s)_0 + 1)
S_ROWS = [[1, -2], [2, 3], [0, -3], [3, 1]]
F_LIN = S_ROWS + [[2 * x + 1, 5 * y - 1] for x, y in S_ROWS]
F_STEER = S_ROWS + [[x + 1, 7 * y] for x, y in S_ROWS]
G_SMALL = [[3, -3], [-2, 2], [0, -1], [5, -3]]   # g(3) - g(0) = 2 e0: a token pair read in Γ
PIVOT, PAIRS, GAMMA = 2, [(i, i + 4) for i in range(4)], [[1], [0]]


def _all_transports(F, exponents, hidden=None, G=G_SMALL, tokens=(3, 0)):
    """Exact and float outcomes of every transport of the fit and the
    steering of ``F`` on ``Γ = span e0`` to the twin (and of the linear probe
    of the token pair ``tokens``); a float call that raises fails the test."""
    ex, fl = _pair(F, G, PIVOT)
    ex2, fl2 = _pair(*_twin(F, G, exponents, hidden), PIVOT)
    g = np.array(GAMMA, dtype=float)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out["gamma"] = (thm14.transport_gamma(ex, ex2, GAMMA), thm14.transport_gamma(fl, fl2, g))
        out["gamma_decided"] = thm14._transport_gamma(fl, fl2, g, thm5.el_certificate(fl, fl2))[1]
        rE, rF = thm14.relational_linearity(ex, PAIRS, GAMMA), thm14.relational_linearity(fl, PAIRS, g)
        if rE.holds and rF.holds:
            out["transport"] = (thm14.transport(ex, ex2, rE), thm14.transport(fl, fl2, rF))
            pE, pF = thm14.implied_probe(ex, rE, *tokens), thm14.implied_probe(fl, rF, *tokens)
            out["implied_probe"] = (pE, pF)
            if pE.holds and pF.holds:
                out["transport_probe"] = (thm14.transport_probe(ex, ex2, pE, PAIRS),
                                          thm14.transport_probe(fl, fl2, pF, PAIRS))
        sE, sF = st.steering(ex, PAIRS, GAMMA), st.steering(fl, PAIRS, g)
        if sE.holds and sF.holds:
            out["transport_steering"] = (st.transport_steering(ex, ex2, sE), st.transport_steering(fl, fl2, sF))
    return out


def _check_agreement(out):
    exact_gamma, float_gamma = out["gamma"]
    assert float_gamma.shape[0] == exact_gamma.shape[0]
    if out["gamma_decided"]:
        assert float_gamma.shape[1] == exact_gamma.shape[1]
    for name in ("transport", "transport_steering", "implied_probe", "transport_probe"):
        if name not in out:
            continue
        e, f = out[name]
        assert _agrees(_decision(e), _decision(f)), (name, e, f)
        for part in ("verified", "identity"):
            if hasattr(e, part):
                assert _agrees(_decision(getattr(e, part)), _decision(getattr(f, part))), (name, part)
        for arr in (getattr(f, "W", None), getattr(f, "b", None), getattr(f, "v", None), getattr(f, "w", None)):
            if arr is not None:
                assert np.all(np.isfinite(np.asarray(arr, dtype=float))), (name, arr)


@pytest.mark.parametrize("exponents", [(139, 73), (100, 0)])
def test_transport_gamma_across_far_apart_coordinates(exponents):
    # the reproducer's model: Γ = span e1, the twin F D, G D^-1
    F = [[1, -2], [2, 3], [0, -3], [0, 3], [-4, 2], [7, -3], [2, -2], [-1, 2]]
    G = [[3, -3], [-2, 2], [-2, -1], [-2, 3], [0, -1]]
    ex, fl = _pair(F, G, 4)
    ex2, fl2 = _pair(*_twin(F, G, exponents), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cert = thm5.el_certificate(fl, fl2)
        # B* = D: representable, and formed as such
        assert np.all(np.isfinite(cert.A)) and np.all(np.isfinite(cert.B))
        gt = thm14.transport_gamma(fl, fl2, np.array([[0.0], [1.0]]))
    assert gt.shape == (2, thm14.transport_gamma(ex, ex2, [[0], [1]]).shape[1])


@pytest.mark.parametrize("F", [F_LIN, F_STEER], ids=["fit", "steered"])
@pytest.mark.parametrize("exponents", [(139, 73), (100, 0), (600, -600)])
def test_transports_across_far_apart_coordinates(F, exponents):
    # (600, -600): the certificate cannot be formed in binary64 at all; Γ~ is
    # then undecided and every verdict decided where the claim lives
    _check_agreement(_all_transports(F, exponents))


# -- L = L~ decided, the certificate open: the transport runs ------------------------------------------

def test_transport_runs_where_same_distribution_holds():
    # the reproducer's pair: a power-of-two change of basis and a coordinate
    # only g uses; k = k~ = 4, L = L~ decided, EL1-EL3 of the computed
    # certificate open
    F = [[-2, 3, -3, 1], [-3, -3, 2, -3], [-2, -4, -7, -1], [4, -2, -2, -2]]
    G = [[0, -2, 1, 3], [-3, -2, 3, -2], [-1, 2, 2, 0], [2, -3, 2, -3], [-1, -1, 2, 1]]
    F2, G2 = _twin(F, G, (78, 18, 45, 5), hidden=[0, 0, -6, 4, -7])
    ex, fl = _pair(F, G, 1)
    ex2, fl2 = _pair(F2, G2, 1)
    pairs, T = [(0, 2), (1, 3)], st.tokens([(2, 0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert thm5.same_distribution(fl, fl2).holds
        assert not thm5.el_certificate(fl, fl2).decision.holds
        rE, rF = thm14.relational_linearity(ex, pairs, T), thm14.relational_linearity(fl, pairs, T)
        assert rE.holds and rF.holds
        tE, tF = thm14.transport(ex, ex2, rE), thm14.transport(fl, fl2, rF)
        sE, sF = st.steering(ex, pairs, T), st.steering(fl, pairs, T)
        outs = [(tE, tF)]
        if sE.holds and sF.holds:
            outs.append((st.transport_steering(ex, ex2, sE), st.transport_steering(fl, fl2, sF)))
    for e, f in outs:
        assert _agrees(e.decision, f.decision)
        assert _agrees(_decision(e.verified), _decision(f.verified))
    # Γ~ rests on a certificate that is not shown to satisfy EL1-EL3: undecided
    assert not tF.result.gamma_decided and not tF.verified.gamma_decided


@pytest.mark.parametrize("F", [F_LIN, F_STEER], ids=["fit", "steered"])
@pytest.mark.parametrize("exponents", [(139, 73), (60, 0)])
def test_transports_with_a_coordinate_only_g_uses(F, exponents):
    # three tokens: the twin's g_0 spans a plane of R^3 that mixes the hidden
    # coordinate in; its structure is not decided, the certificate open, and
    # L = L~ decided: the transport runs
    G = G_SMALL[:3]
    ex, fl = _pair(F, G, PIVOT)
    ex2, fl2 = _pair(*_twin(F, G, exponents, [5, -3, 7]), PIVOT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert thm5.same_distribution(fl, fl2).holds
    out = _all_transports(F, exponents, [5, -3, 7], G, (1, 0))
    assert "transport" in out
    _check_agreement(out)


# -- the flags of a transported fit agree --------------------------------------------------------------

@pytest.mark.parametrize("exponents", [(0, 0), (30, 0), (60, 0), (139, 73)])
def test_transported_flags_agree(exponents):
    ex, fl = _pair(F_LIN, G_SMALL, PIVOT)
    ex2, fl2 = _pair(*_twin(F_LIN, G_SMALL, exponents), PIVOT)
    g = np.array(GAMMA, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t = thm14.transport(fl, fl2, thm14.relational_linearity(fl, PAIRS, g))
        exact_dim = thm14.transport(ex, ex2, thm14.relational_linearity(ex, PAIRS, GAMMA)).gamma.shape[1]
        ts = st.transport_steering(fl, fl2, st.steering(fl, PAIRS, g)) if st.steering(fl, PAIRS, g).holds \
            else None
    # one Γ~, one verdict on its dimension
    assert t.result.gamma_decided == t.verified.gamma_decided
    if not t.result.gamma_decided:
        assert not t.result.decided and not t.verified.decided
    else:
        assert t.gamma.shape[1] == exact_dim
    if ts is not None and ts.gamma.shape[1] != exact_dim:
        assert not ts.verified.decided


def test_no_bare_exception_from_a_certificate_beyond_binary64():
    ex, fl = _pair(F_LIN, G_SMALL, PIVOT)
    ex2, fl2 = _pair(*_twin(F_LIN, G_SMALL, (600, -600)), PIVOT)
    g = np.array(GAMMA, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cert = thm5.el_certificate(fl, fl2)
        try:
            gt, decided, error, _ = thm14._transport_gamma(fl, fl2, g, cert)
        except AllOrNoneError:
            pytest.fail("a valid pair must give a transported readout, undecided if need be")
    if not (np.all(np.isfinite(cert.A)) and np.all(np.isfinite(cert.B))):
        assert not decided and error == float("inf")
