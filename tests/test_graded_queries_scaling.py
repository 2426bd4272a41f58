"""The graded queries on one real model (``graded.parallel``, ``steering``,
``readout_linearity``) under a global scaling of the contexts or the tokens by
a power of two: a symmetry of every claim, exact in binary64, so a decided
verdict may not move. Entries near ``2^-550`` square to zero in a plain
Euclidean norm; a residual built of them once read as exactly zero, and each
query said "holds" where the exact claim fails by ``1e-4``."""
from __future__ import annotations

from fractions import Fraction

import pytest

from allornone.numeric import graded
from allornone.symbolic import ExactModel
from allornone.theorems import lem8, steering, thm14

SCALES = (0, 300, -300, -540, -550, -560, -600)


def _contexts(e: int):
    """Six context pairs ``(s, s + q)``, ``q`` nearly constant (one pair off by one
    unit: steering and the relational fit fail by about ``1e-4``), times ``2^e``."""
    s = Fraction(2) ** e
    base = [[1000, 0, 300], [0, 1100, 17], [700, 800, 0], [900, -600, 50], [-400, 300, 1000], [250, 250, -800]]
    w = [100, 200, -100]
    F = []
    for i, b in enumerate(base):
        F.append(b)
        F.append([x + y + (1 if (i == 2 and j == 0) else 0) for j, (x, y) in enumerate(zip(b, w))])
    return [[v * s for v in r] for r in F], [(2 * i, 2 * i + 1) for i in range(6)]


def _model(e: int, tokens_too: bool = False):
    F, pairs = _contexts(e)
    t = Fraction(2) ** (-e if tokens_too else 0)
    G = [[0, 0, 0], [1024, 2048, 3072], [1025, 2048, 3072], [3, 1, -2], [1, 1, 1]]
    return ExactModel(F, [[v * t for v in r] for r in G]), pairs


@pytest.mark.parametrize("e", SCALES)
def test_steering_and_relational_fits_keep_their_verdicts_under_a_scaling(e):
    T = [(1, 0), (3, 4)]
    exact, pairs = _model(0)
    assert steering.steering(exact, pairs, thm14.tokens(T)).verdict.startswith("not")
    assert thm14.relational_linearity(exact, pairs, thm14.tokens(T), "any").decision.fails
    fm = _model(e)[0].to_float()
    assert graded.steering(fm, pairs, T)["steering"] == "fails"
    assert graded.readout_linearity(fm, pairs, T, "any")["relationally_linear"] == "fails"
    # (reading M the regressors are the computed L_k's rows, whose error leaves it open here)
    assert graded.readout_linearity(fm, pairs, T, "M")["relationally_linear"] in ("fails", "undecided")


@pytest.mark.parametrize("e", SCALES)
def test_parallelism_keeps_its_verdicts_under_a_scaling(e):
    exact, _ = _model(0)
    assert lem8.parallel(exact, (1, 0), (2, 0), "N").verdict == "not parallel"
    for tokens_too in (False, True):
        r = graded.parallel(_model(e, tokens_too)[0].to_float(), (1, 0), (2, 0))
        assert r["parallel_N"] == "fails", (e, tokens_too, r)
    # two orthogonal differences of size 2^e: not parallel at every scale
    s = Fraction(2) ** e
    F = [[1 / s, 0, 0], [0, 1 / s, 0], [1 / s, 1 / s, 0], [2 / s, -1 / s, 0]]
    G = [[0, 0, 0], [s, 0, 0], [0, 0, 0], [0, s, 0], [2 * s, s, 0]]
    r = graded.parallel(ExactModel(F, G).to_float(), (1, 0), (3, 2))
    assert r["parallel_raw"] == "fails" and r["residual_raw"] == 1.0, r


def test_a_rank_read_off_subnormal_features_is_not_decided_from_their_rounding():
    """Features near ``2^-1050`` (subnormal, so each operation of their
    triangular factor may lose ``2^-1074`` outright): the exact log-odds have
    rank 1, the computed spectrum shows a second singular value of ``5e-321``
    made of that loss. Counted as certain, ``k`` was decided 2 and steering
    "fails" where it holds; the loss now enters the factor's error."""
    from allornone.theorems.engine import invariance as inv
    from allornone.theorems.engine import transforms as tf

    name = "hidden components + subnormal entries"
    _, inst = inv.transform_instance("steering", name, 34, 95)
    fm = tf.realise_float(inst, tf.transform(name).realisation).models[0]
    assert inst.models[0].effective_complexity() == 1
    spectra = graded.analyse(fm)
    assert not (spectra.k_decided and spectra.k != 1), spectra
    r = inv.check("graded-steering", name, 34, 95)
    assert not r["contradicted"], r


def test_at_a_decided_rank_zero_every_log_odds_query_holds():
    """Every token alike (``g`` constant): ``L = 0``, rank 0 decided. Its
    truncation ``L_0`` is zero exactly, as the exact one is, so any two
    log-odds columns are parallel (the first is ``0`` times the second), every
    readout is steered by a shift of 0 and fits any regressors; the error
    bound of a nonzero truncation once left all three undecided."""
    F, pairs = _contexts(0)
    fm = ExactModel(F, [[1, 2, 3]] * 5).to_float()
    assert graded.analyse(fm).k == 0 and graded.analyse(fm).k_decided
    assert graded.parallel(fm, (1, 0), (2, 0))["parallel_N"] == "holds"
    assert graded.steering(fm, pairs, [(1, 0)])["steering"] == "holds"
    assert graded.readout_linearity(fm, pairs, [(1, 0)], "M")["relationally_linear"] == "holds"
    # tokens 2^-52 apart: L is not zero, and its rank is undecided at 0 -- no verdict of L_0 stands
    t = Fraction(1, 2 ** 52)
    G = [[1, 2, 3], [1 + t, 2, 3], [1, 2 + t, 3], [1, 2, 3 + t], [1 + t, 2 + t, 3]]
    fm = ExactModel(F, G).to_float()
    spectra = graded.analyse(fm)
    assert spectra.k == 0 and not spectra.k_decided
    assert graded.parallel(fm, (1, 0), (2, 0))["parallel_N"] == "undecided"
    assert graded.steering(fm, pairs, [(1, 0)])["steering"] == "undecided"


def test_the_certificate_residuals_of_contexts_of_size_1e200_are_numbers():
    """Contexts scaled by ``1e200`` (another distribution, the same column
    spaces): the least-squares residuals of the certificate squared their
    factors to infinity and printed as NaN beside a verdict that holds."""
    import numpy as np

    from allornone.numeric import FloatModel

    rng = np.random.default_rng(0)
    F, G = rng.normal(size=(20, 5)), rng.normal(size=(30, 5))
    r = graded.compare(FloatModel(1e200 * F, G), FloatModel(F, G))
    assert r.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "fails"}
    assert r.el_residuals["EL1"] < 1e-12 and r.el_residuals["EL2"] < 1e-12
    assert 1e199 < r.el_residuals["EL3"] < 1e201


def test_log_odds_below_binary64_are_not_a_decided_rank_zero():
    """Contexts and tokens each scaled by ``2^-600``: every logit lies below
    binary64's range, the singular values ``s_unit 2^s_exp`` underflow to 0,
    and a rank decided on them read ``k = 0`` -- and with it every query held
    on ``L_0``. The rank is decided in the units the factors carry it in."""
    import numpy as np

    from allornone.numeric import FloatModel

    G = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 2, 3]])
    for e in (0, -600):
        m = FloatModel(np.ldexp(np.eye(3), e), np.ldexp(G, e))
        spectra = graded.analyse(m)
        assert spectra.k == 3 and spectra.k_decided, (e, spectra.k_label())
        assert graded.parallel(m, (1, 2), (3, 4))["parallel_N"] != "holds"
        assert graded.steering(m, [(0, 1), (1, 2)], [(1, 2)])["steering"] != "holds"
