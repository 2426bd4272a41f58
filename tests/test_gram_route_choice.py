"""The Gram route's choice (``numeric.gram.use_gram`` and the hand-overs of
``equivalence_parts``): each condition true alone and at its boundary, the
forced routes, the tolerances that make the route step aside, and what the
automatic route re-decides by the QR route -- on stand-ins for the two phases
(so every branch is reached) and on real pairs."""
from types import SimpleNamespace

import numpy as np
import pytest

from allornone.decision import Decision, Truth
from allornone.numeric import FloatModel, Tolerance, gram
from allornone.numeric import equivalence as feq
from allornone.theorems import thm5

N = gram.MIN_TOKENS


def _pair(n, d1, d2):
    return SimpleNamespace(n=n, d=d1), SimpleNamespace(n=n, d=d2)


def test_documented_defaults():
    assert gram.ROUTE == "auto" and gram.MIN_TOKENS == 8192


@pytest.mark.parametrize("n, d1, d2, want", [
    (N, 1, N // 8 - 1, True),                 # n = MIN_TOKENS = 8 (d + d~): both conditions at their boundary
    (N - 1, 1, 1, False),                     # n one below MIN_TOKENS, n >= 8 (d + d~) by far
    (N, 1, N // 8, False),                    # n = MIN_TOKENS, 8 (d + d~) = n + 8: the twin's dimension counts
    (N, N // 8, 1, False),                    # ... and the model's
    (16 * N, 4 * N, 4 * N, False),            # n >= MIN_TOKENS only
    (16 * N, 1, 2 * N - 1, True),             # both, d + d~ = n / 8
    (16 * N, 1, 2 * N, False),
])
def test_the_automatic_route_needs_both_conditions(n, d1, d2, want):
    assert gram.use_gram(*_pair(n, d1, d2), "auto") is want


def test_min_tokens_is_read_when_asked(monkeypatch):
    monkeypatch.setattr(gram, "MIN_TOKENS", 100)
    assert gram.use_gram(*_pair(100, 6, 6), "auto") and not gram.use_gram(*_pair(99, 1, 1), "auto")


def test_forced_routes_and_the_module_switch(monkeypatch):
    assert gram.use_gram(*_pair(2, 5, 5), "gram") is True
    assert gram.use_gram(*_pair(16 * N, 1, 1), "qr") is False
    monkeypatch.setattr(gram, "ROUTE", "gram")
    assert gram.use_gram(*_pair(2, 5, 5)) is True
    monkeypatch.setattr(gram, "ROUTE", "qr")
    assert gram.use_gram(*_pair(16 * N, 1, 1)) is False
    assert gram.use_gram(*_pair(16 * N, 1, 1), "auto") is True      # an explicit route wins over the switch
    for bad in ("fast", "", "GRAM"):
        with pytest.raises(ValueError):
            gram.use_gram(*_pair(N, 1, 1), bad)


# -- when equivalence_parts steps aside ----------------------------------------------------

def _small(seed=5, n=20):
    rng = np.random.default_rng(seed)
    F = rng.integers(-3, 4, (6, 3)).astype(float)
    G = rng.integers(-3, 4, (n, 3)).astype(float)
    G[0] = 0.0
    return F, G


def test_a_decided_pair_on_the_forced_route():
    F, G = _small()
    out = gram.equivalence_parts(FloatModel(F, G), FloatModel(F, G.copy()), "gram")
    assert out is not None and out[0].holds and out[0].detail["route"] == "gram, entry by entry"
    assert out[2] == (3, 3)


@pytest.mark.parametrize("ta, tb", [
    (Tolerance(rank_rtol=1e-6), Tolerance(rank_rtol=1e-6)),        # a modelling tolerance, the same in both
    (Tolerance(rank_rtol=1e-6), Tolerance()),
    (Tolerance(), Tolerance(rank_rtol=1e-6)),
    (Tolerance(), Tolerance(rtol=1e-10)),                          # tolerances that differ, either way round
    (Tolerance(rtol=1e-10), Tolerance()),
    (Tolerance(), Tolerance(gap=10.0)),
])
def test_tolerances_that_make_the_route_step_aside(ta, tb):
    F, G = _small()
    assert gram.equivalence_parts(FloatModel(F, G, tolerance=ta), FloatModel(F, G.copy(), tolerance=tb),
                                  "gram") is None


def test_equal_non_default_tolerances_keep_the_route():
    F, G = _small()
    t = Tolerance(rtol=1e-10)
    assert gram.equivalence_parts(FloatModel(F, G, tolerance=t), FloatModel(F, G.copy(), tolerance=t),
                                  "gram") is not None


def test_routes_that_are_not_taken():
    F, G = _small()
    a, b = FloatModel(F, G), FloatModel(F, G.copy())
    assert gram.equivalence_parts(a, b, "qr") is None
    assert gram.equivalence_parts(a, b, "auto") is None           # 20 tokens: far below MIN_TOKENS


def test_what_the_route_cannot_certify_goes_to_the_qr_route():
    rng = np.random.default_rng(3)
    # a singular value of G_0 at 1e-9 sigma_1: its square is below the Gram's rounding
    U = np.linalg.qr(rng.standard_normal((40, 2)))[0]
    G = np.vstack([np.zeros((1, 2)), U @ np.diag([1.0, 1e-9]) @ np.array([[0.6, 0.8], [-0.8, 0.6]])])
    F = rng.standard_normal((5, 2))
    assert gram.equivalence_parts(FloatModel(F, G), FloatModel(F[:, :1], G[:, :1]), "gram") is None
    # a coordinate 1e-125 times the others: its Gram entries would leave binary64
    F, G = _small()
    G[:, 2] *= 1e-125
    assert gram.equivalence_parts(FloatModel(F, G), FloatModel(F, G.copy()), "gram") is None
    assert thm5.equivalence(FloatModel(F, G), FloatModel(F, G.copy()), route="gram").verdict == "equivalent"
    # units that differ by more than 2^900
    F, G = _small()
    assert gram.equivalence_parts(FloatModel(F * 1e-150, G * 1e-150), FloatModel(F, G), "gram") is None


# -- the hand-overs of the automatic route, on stand-ins for the two phases ----------------------

def _decision(truth, detail=None):
    return Decision(truth, 0.0, (1e-12, 1e-9), dict(detail or {}))


@pytest.fixture
def phases(monkeypatch):
    """Stand-ins for the route's phases and for the QR route's two decisions;
    ``calls`` records which QR decisions were asked for."""
    state = SimpleNamespace(dist=Truth.HOLDS, cert=(True, Truth.HOLDS, Truth.HOLDS, Truth.HOLDS), calls=[])
    monkeypatch.setattr(gram, "MIN_TOKENS", 1)
    monkeypatch.setattr(gram, "_factor", lambda a, b, tol: SimpleNamespace(sa=SimpleNamespace(k=1),
                                                                            sb=SimpleNamespace(k=1)))
    monkeypatch.setattr(gram, "_same_distribution", lambda a, b, P, tol: _decision(state.dist, {"route": "gram"}))

    def certificate(a, b, P, tol):
        decided, *els = state.cert
        return SimpleNamespace(decided=decided, el1=_decision(els[0]), el2=_decision(els[1]), el3=_decision(els[2]),
                               source="gram")
    monkeypatch.setattr(gram, "_certificate", certificate)

    def qr_distribution(a, b):
        state.calls.append("same_distribution")
        return _decision(Truth.FAILS, {"witness": (0, 1)})

    def qr_certificate(a, b):
        state.calls.append("el_certificate")
        return SimpleNamespace(source="qr")
    monkeypatch.setattr(feq, "same_distribution", qr_distribution)
    monkeypatch.setattr(feq, "el_certificate", qr_certificate)
    F, G = _small(n=48)                  # n = 8 (d + d~): the automatic route is taken
    state.models = (FloatModel(F, G), FloatModel(F, G.copy()))
    return state


@pytest.mark.parametrize("route", ["gram", "auto"])
def test_holds_is_confirmed_entry_by_entry_on_both_routes(phases, route):
    phases.dist = Truth.HOLDS
    dist, cert, ks = gram.equivalence_parts(*phases.models, route)
    assert phases.calls == ["same_distribution"] and dist.fails       # the confirmation's verdict stands
    assert dist.detail["route"] == "gram, entry by entry" and cert.source == "gram" and ks == (1, 1)


def test_undecided_is_re_decided_by_the_qr_route_only_when_automatic(phases):
    phases.dist = Truth.UNDECIDED
    dist, _, _ = gram.equivalence_parts(*phases.models, "gram")
    assert phases.calls == [] and dist.undecided and dist.detail == {"route": "gram"}
    dist, _, _ = gram.equivalence_parts(*phases.models, "auto")
    assert phases.calls == ["same_distribution"] and dist.fails and "route" not in dist.detail


@pytest.mark.parametrize("route", ["gram", "auto"])
def test_fails_needs_no_confirmation(phases, route):
    phases.dist = Truth.FAILS
    dist, _, _ = gram.equivalence_parts(*phases.models, route)
    assert phases.calls == [] and dist.fails and dist.detail == {"route": "gram"}


@pytest.mark.parametrize("cert, route, qr", [
    ((True, Truth.HOLDS, Truth.UNDECIDED, Truth.HOLDS), "auto", True),     # decided structures, an undecided EL
    ((True, Truth.HOLDS, Truth.UNDECIDED, Truth.HOLDS), "gram", False),    # ... kept on the forced route
    ((False, Truth.HOLDS, Truth.UNDECIDED, Truth.HOLDS), "auto", False),   # structures undecided: nothing to redo
    ((True, Truth.FAILS, Truth.UNDECIDED, Truth.HOLDS), "auto", False),    # one EL fails: decided
    ((True, Truth.HOLDS, Truth.HOLDS, Truth.HOLDS), "auto", False),
    ((True, Truth.UNDECIDED, Truth.UNDECIDED, Truth.UNDECIDED), "auto", True),
])
def test_an_undecided_certificate_is_re_decided_only_when_automatic(phases, cert, route, qr):
    phases.dist = Truth.FAILS
    phases.cert = cert
    _, got, _ = gram.equivalence_parts(*phases.models, route)
    assert (phases.calls == ["el_certificate"]) is qr and got.source == ("qr" if qr else "gram")


def test_no_qr_certificate_on_structures_it_leaves_undecided(phases):
    # the QR route's certificate on an undecided structure is undecided
    # throughout: it is not asked for, and the route's own is kept
    phases.dist = Truth.FAILS
    phases.cert = (True, Truth.UNDECIDED, Truth.UNDECIDED, Truth.UNDECIDED)
    phases.models[1].__dict__["structure"] = SimpleNamespace(decided=False)
    _, got, _ = gram.equivalence_parts(*phases.models, "auto")
    assert phases.calls == [] and got.source == "gram"


def test_the_module_switch_counts_as_the_route(phases, monkeypatch):
    phases.dist = Truth.UNDECIDED
    monkeypatch.setattr(gram, "ROUTE", "gram")
    dist, _, _ = gram.equivalence_parts(*phases.models)
    assert phases.calls == [] and dist.undecided
    monkeypatch.setattr(gram, "ROUTE", "auto")
    gram.equivalence_parts(*phases.models)
    assert phases.calls == ["same_distribution"]


# -- the same hand-over on a real pair ---------------------------------------------------------

def _cancelling_pair(delta, n=9000):
    """Logits of size 1 formed as differences of products of size 2^40, next to
    one of size 2^40 in the same row: a change of ``delta`` in the small ones
    is far below the row's tolerance."""
    H = 2.0 ** 40
    rng = np.random.default_rng(0)
    G = np.vstack([[0.0, 0.0], [0.0, 1.0], rng.integers(1, 4, (n - 2, 1)) * np.array([[1.0, -1.0]])])[:n]
    return FloatModel([[H + 1, H], [1.0, 0.0]], G), FloatModel([[H + 1 + delta, H], [1.0, 0.0]], G)


def test_a_difference_under_the_rows_tolerance():
    a, b = _cancelling_pair(2.0 ** -12)
    assert gram.use_gram(a, b, "auto")
    dist, _, _ = gram.equivalence_parts(a, b, "gram")
    assert dist.undecided and dist.detail == {"route": "gram"}
    dist, _, _ = gram.equivalence_parts(a, b, "auto")
    assert dist.fails and dist.detail["witness"][0] == 0
