"""The Gram route looks for a witness of L != L~ first at the tokens that carry
the shared null directions (``numeric.gram._witness_tokens``): a token one model
moved inside its row space is found there, with the verdict of the whole
entrywise comparison, and an equivalent pair still goes through every entry.

Run once against broken variants, each failing here: with the witness's token
left in the index of the columns checked (``idx[y]`` read as ``y``) the witness
test fails; with the candidate tokens taken from the smallest shares instead of
the largest, the route test fails (the comparison then runs over every entry)."""
from __future__ import annotations

import numpy as np
import pytest
from allornone.decision import Truth
from allornone.numeric import FloatModel, gram
from allornone.numeric import equivalence as feq
from allornone.numeric.scale import b5_twin, random_model
from allornone.theorems import thm5


def _pair(seed, move):
    rng = np.random.default_rng(seed)
    F, G = random_model(60, 400, 8, 7, 6, seed=rng)
    a = FloatModel(F, G)
    F2, G2 = b5_twin(F, G, extra=(2, 1), seed=rng)
    y, z = 137 + seed, 250 + seed
    if move:
        # inside the row space of G~_0: no rank changes, another distribution
        G2 = G2.copy()
        G2[y] += move * (G2[z] - G2[0])
    return a, FloatModel(F2, G2), y


@pytest.mark.parametrize("seed", range(3))
def test_a_moved_token_is_found_at_the_tokens_of_the_cross_residual(monkeypatch, seed):
    monkeypatch.setattr(gram, "MIN_TOKENS", 0)   # the automatic route takes the Gram products
    a, b, y = _pair(seed, 1e-6)
    assert gram.use_gram(a, b)
    r = thm5.equivalence(a, b)
    assert r.verdict == "not equivalent"
    assert r.distribution.detail["route"] == "gram, tokens of the cross residual"
    assert r.witness[1] == y
    # the whole entrywise comparison and the QR route say the same
    assert feq.same_distribution(a, b).fails
    assert thm5.equivalence(a, b, route="qr").verdict == "not equivalent"


def _exact_twin(seed):
    """A model and a twin whose logits are equal in exact arithmetic on their
    binary64 numbers: ``F~ = [F A, F C]``, ``G~ = [G A^-T, 0]`` with ``A`` a
    signed permutation times powers of two (every product exact). A B.5 twin
    made in floats differs from its model by the rounding of ``A`` and ``B``,
    which a logit far smaller than its features may see beyond ``rtol``."""
    rng = np.random.default_rng(seed)
    F, G = random_model(60, 400, 8, 7, 6, seed=rng)
    A = np.diag(rng.choice([-1.0, 1.0], 8) * 2.0 ** rng.integers(-3, 4, 8))[rng.permutation(8)]
    F2 = np.hstack([F @ A, F @ rng.standard_normal((8, 3))])
    G2 = np.hstack([G @ np.linalg.inv(A).T, np.zeros((400, 3))])
    return FloatModel(F, G), FloatModel(F2, G2)


def test_an_equivalent_pair_is_still_judged_at_every_entry(monkeypatch):
    monkeypatch.setattr(gram, "MIN_TOKENS", 0)
    a, b = _exact_twin(0)
    r = thm5.equivalence(a, b)
    assert r.verdict == thm5.equivalence(a, b, route="qr").verdict == "equivalent"
    assert r.distribution.detail["route"] == "gram, entry by entry"


@pytest.mark.parametrize("seed", [0, 3])
def test_el_conditions_left_open_by_the_gram_route_are_decided_on_l_without_the_qr_route(monkeypatch, seed):
    """Where the Gram route's certificate leaves EL1--EL3 open and ``L = L~``
    holds at equal decided ranks, the conditions hold by Theorem 5: the QR
    route's certificate (a second structure of both models, most of the time
    of an equivalent pair) is not computed, and the verdicts are those it
    would give, each saying it was decided on ``L = L~`` where it was."""
    monkeypatch.setattr(gram, "MIN_TOKENS", 0)
    a, b = _exact_twin(seed)
    dist, cert, ks = gram.equivalence_parts(a, b)
    assert dist.holds and cert.decided and cert.el1.undecided and ks[0] == ks[1]
    qr = thm5.equivalence(a, b, route="qr")

    def refused(*args):
        raise AssertionError("the QR route's certificate was computed")
    monkeypatch.setattr(feq, "el_certificate", refused)
    r = thm5.equivalence(a, b)
    assert r.verdict == qr.verdict == "equivalent"
    els = [r.certificate.el1, r.certificate.el2, r.certificate.el3]
    assert [d.truth for d in els] == [qr.certificate.el1.truth, qr.certificate.el2.truth,
                                      qr.certificate.el3.truth] == [Truth.HOLDS] * 3
    assert r.certificate.el1.detail.get("by") == "L = L~"


def test_the_columns_checked_are_judged_as_in_the_whole_comparison():
    a, b, y = _pair(1, 1e-6)
    whole = feq.same_distribution(a, b)
    cols = feq.same_distribution_at_tokens(a, b, np.array([3, y, 300]))
    assert cols.fails and whole.fails
    assert cols.detail["witness"] == whole.detail["witness"]
    assert gram.WITNESS_TOKENS >= 1
