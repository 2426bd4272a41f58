"""Vectorised parallelism: the same numbers as the per-query graded.parallel, the
identified form shared by reparametrisations, the centred form blind to a bias."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from allornone.errors import InputFormatError
from allornone.numeric import FloatModel, Tolerance, graded
from allornone.numeric.parallel_gram import (PairMetric, category_cosines, cosine_matrix, mean_offdiagonal,
                                             pair_indices, parallel_rows)


def _model(rng, m, n, d, **kw):
    return FloatModel(rng.normal(size=(m, d)), rng.normal(size=(n, d)), tokens=[f"t{i}" for i in range(n)], **kw)


def _queries(rng, n, count):
    return [((int(a), int(b)), (int(c), int(e))) for a, b, c, e in rng.integers(0, n, size=(count, 4))]


def _assert_rows_equal(want, got, atol=1e-12):
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert list(w) == list(g)
        for key, value in w.items():
            if isinstance(value, float):
                if math.isnan(value):
                    assert math.isnan(g[key]), key
                else:
                    assert g[key] == pytest.approx(value, abs=atol), (key, value, g[key])
            else:
                assert g[key] == value, (key, value, g[key])


@pytest.mark.parametrize("shape", [(60, 25, 6), (30, 40, 12), (8, 20, 6), (200, 50, 3)])
def test_rows_equal_parallel_table(shape):
    """Every field of every row, degenerate queries included (a pair against itself,
    reversed, and a zero difference on either side)."""
    rng = np.random.default_rng(sum(shape))
    m, n, d = shape
    model = _model(rng, m, n, d)
    qs = _queries(rng, n, 150) + [((1, 2), (1, 2)), ((1, 2), (2, 1)), ((3, 3), (1, 2)), ((1, 2), (4, 4)),
                                  ((5, 5), (6, 6)), (("t0", "t1"), ("t2", "t3"))]
    _assert_rows_equal(graded.parallel_table(model, qs), parallel_rows(model, qs))


def test_rows_equal_parallel_table_at_a_given_rank_and_tolerance():
    """A rank-deficient model (k < d) at a given k and at a modelling tolerance:
    the log-odds form is the rank-k truncation's, as in graded.parallel."""
    rng = np.random.default_rng(5)
    F = rng.normal(size=(50, 3)) @ rng.normal(size=(3, 8)) + 1e-7 * rng.normal(size=(50, 8))
    model = FloatModel(F, rng.normal(size=(30, 8)))
    qs = _queries(rng, 30, 80)
    for kw in ({"k": 2}, {"k": 5}, {"tol": Tolerance(rank_rtol=1e-5)}, {"cut": "largest-gap"}):
        _assert_rows_equal(graded.parallel_table(model, qs, **kw), parallel_rows(model, qs, **kw))
    holds = parallel_rows(model, [((1, 2), (2, 1))], k=3)[0]
    assert holds["parallel_N"] == "holds" and holds["parallel_raw"] == "holds"


def test_rows_carry_an_undecided_k():
    """A singular value of L in the undecided band: the rows and the table agree, and what they decide at
    the rank proven is the exact verdict."""
    from allornone.numeric.spectra import analyse

    rng = np.random.default_rng(6)
    F = rng.normal(size=(40, 2)) @ rng.normal(size=(2, 5))
    F += 1e-13 * rng.normal(size=(40, 5))
    model = FloatModel(F, rng.normal(size=(12, 5)))
    assert not analyse(model).k_decided
    qs = _queries(rng, 12, 20)
    got = parallel_rows(model, qs)
    _assert_rows_equal(graded.parallel_table(model, qs), got)
    # k undecided, the rank it is read at is the proven lower bound: what it
    # decides there is the exact verdict on these numbers (their rank is 5),
    # and a pair naming one token twice is a zero column, a multiple of anything
    from fractions import Fraction

    from allornone.symbolic import ExactModel
    from allornone.theorems import lem8

    exact = ExactModel([[Fraction(v) for v in r] for r in model.F], [[Fraction(v) for v in r] for r in model.G])
    assert exact.effective_complexity() == 5
    for r in got:
        if r["tokens"][0][0] == r["tokens"][0][1]:
            assert r["parallel_N"] == "holds"
        elif r["parallel_N"] != "undecided":
            ab, ce = ([exact.tokens.index(t) for t in p] for p in r["tokens"])
            want = lem8.parallel(exact, ab, ce, "N").decision
            assert r["parallel_N"] == want.truth.value, r
    assert parallel_rows(model, []) == []


def test_category_cosines_equal_per_query_cosines():
    """The q x q matrices, entry by entry, against graded.parallel on a full-rank model
    (there L_k = L): the identified form against cos_logodds, raw against cos_raw."""
    rng = np.random.default_rng(7)
    model = _model(rng, 80, 30, 7)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 30, size=(9, 2)) if a != b]
    c = category_cosines(model, pairs)
    for i, p in enumerate(pairs):
        for j, q in enumerate(pairs):
            row = graded.parallel(model, p, q)
            assert c.cos["logodds"][i, j] == pytest.approx(row["cos_logodds"], abs=1e-12)
            assert c.cos["raw"][i, j] == pytest.approx(row["cos_raw"], abs=1e-12)
    up = np.triu_indices(len(pairs), 1)
    assert c.mean["logodds"] == pytest.approx(float(np.mean(c.cos["logodds"][up])), abs=1e-15)


def test_identified_cosines_are_invariant_and_raw_ones_move():
    rng = np.random.default_rng(8)
    model = _model(rng, 100, 40, 6)
    T = rng.normal(size=(6, 6)) + 2 * np.eye(6)
    other = FloatModel(model.F @ T, model.G @ np.linalg.inv(T).T)
    pairs = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (10, 11)]
    a, b = category_cosines(model, pairs), category_cosines(other, pairs)
    assert np.max(np.abs(a.cos["logodds"] - b.cos["logodds"])) < 1e-12
    assert np.max(np.abs(a.cos["centred"] - b.cos["centred"])) < 1e-12
    assert np.max(np.abs(a.cos["raw"] - b.cos["raw"])) > 0.05


def test_the_centred_form_removes_a_planted_bias_direction():
    """Random pairs whose bias (frequency) differences share a sign: the identified
    cosines are inflated towards 1, the centred ones do not see the bias at all."""
    rng = np.random.default_rng(9)
    m, n, d = 300, 40, 5
    X, W = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    pairs = [(2 * i, 2 * i + 1) for i in range(10)]
    plain = FloatModel.from_head(X, W, np.zeros(n))
    b = np.zeros(n)
    b[[a for a, _ in pairs]] = 10.0 + rng.random(10)      # the first token of each pair is far more frequent
    biased = FloatModel.from_head(X, W, b)
    p, q = category_cosines(plain, pairs), category_cosines(biased, pairs)
    assert abs(p.mean["logodds"]) < 0.3 and q.mean["logodds"] > 0.9
    assert np.max(np.abs(p.cos["centred"] - q.cos["centred"])) < 1e-12
    assert abs(q.mean["centred"]) < 0.3


def test_the_centred_cosine_is_the_correlation_over_contexts():
    rng = np.random.default_rng(10)
    model = _model(rng, 50, 10, 4)
    L = model.log_odds()
    u, v = L[:, 1] - L[:, 2], L[:, 5] - L[:, 3]
    c = category_cosines(model, [(1, 2), (5, 3)])
    assert c.cos["centred"][0, 1] == pytest.approx(np.corrcoef(u, v)[0, 1], abs=1e-12)
    assert c.cos["logodds"][0, 1] == pytest.approx(u @ v / np.linalg.norm(u) / np.linalg.norm(v), abs=1e-12)


def test_nearly_parallel_pairs_keep_their_digits():
    """The residual of two differences 1e-9 apart in angle comes from vectors, not
    from 1 - cos^2 (which would give about 1e-8 of rounding)."""
    rng = np.random.default_rng(11)
    G = rng.normal(size=(6, 4))
    e = rng.normal(size=4)
    G[3] = G[2] + (G[0] - G[1]) + 1e-9 * e
    model = FloatModel(rng.normal(size=(30, 4)), G)
    row = parallel_rows(model, [((0, 1), (3, 2))])[0]
    want = graded.parallel(model, (0, 1), (3, 2))
    assert 1e-11 < want["residual_raw"] < 1e-8
    assert row["residual_raw"] == pytest.approx(want["residual_raw"], rel=1e-5)
    assert row["residual_logodds"] == pytest.approx(want["residual_logodds"], rel=1e-5)


def test_zero_differences_are_nan_and_means_skip_them():
    rng = np.random.default_rng(12)
    G = rng.normal(size=(5, 3))
    G[4] = G[3]
    model = FloatModel(rng.normal(size=(20, 3)), G)
    c = category_cosines(model, [(0, 1), (1, 2), (3, 4)])
    assert np.isnan(c.cos["raw"][2]).all() and np.isnan(c.cos["logodds"][:, 2]).all()
    assert c.mean["raw"] == pytest.approx(c.cos["raw"][0, 1])
    assert math.isnan(mean_offdiagonal(cosine_matrix(np.zeros((2, 3)))))


def test_unknown_tokens_and_forms_are_input_errors():
    model = _model(np.random.default_rng(13), 10, 5, 2)
    with pytest.raises(InputFormatError, match="'zz' is not a token"):
        pair_indices(model, [("t0", "zz")])
    with pytest.raises(InputFormatError, match="not a pair"):
        pair_indices(model, [("t0",)])
    with pytest.raises(InputFormatError, match="form 'bogus'"):
        PairMetric.of(model, ["bogus"])
    with pytest.raises(InputFormatError):
        parallel_rows(model, [(("t0", "t1"),)])


def test_a_hundred_thousand_pairs_of_pairs_take_seconds():
    """m = 2000, d = 100: a category of 448 pairs (100,128 pairs of pairs, three forms)."""
    rng = np.random.default_rng(14)
    model = FloatModel(rng.normal(size=(2000, 100)), rng.normal(size=(1500, 100)))
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 1500, size=(448, 2))]
    t = time.perf_counter()
    c = category_cosines(model, pairs)
    assert time.perf_counter() - t < 10.0
    assert c.cos["logodds"].shape == (448, 448)


def test_rows_of_tiny_differences_agree_with_graded_parallel():
    """Token differences of size ``2^-600`` square to zero in a plain norm: two
    orthogonal ones had read as parallel (residual 0) and two parallel ones,
    of sizes 1 and ``2^-600``, as not (residual 1). Each column is scaled by a
    power of two first, as ``graded.parallel`` does, and the study's cosines
    of such differences are defined (model scaled ``2^600`` against ``2^-600``)."""
    from allornone.numeric import graded
    from allornone.numeric.parallel_gram import _unit, parallel_rows
    t = 2.0 ** -600
    F = np.array([[2.0 ** 600, 0.0], [0.0, 2.0 ** 600], [2.0 ** 600, 2.0 ** 600]])
    G = np.array([[0.0, 0.0], [t, 0.0], [0.0, t], [1.0, 0.0], [0.0, 2 * t]])
    m = FloatModel(F, G)
    for (first, second), raw in ((((1, 0), (2, 0)), "fails"), (((3, 0), (1, 0)), "holds"),
                                 (((2, 0), (4, 0)), "holds")):
        row = parallel_rows(m, [(first, second)])[0]
        g = graded.parallel(m, first, second)
        assert row["parallel_raw"] == g["parallel_raw"] == raw, (first, second, row)
        assert row["parallel_N"] == g["parallel_N"]
    U = _unit(np.array([[t, 0.0], [t, t], [0.0, 0.0]]))
    assert np.allclose(U[:2] @ U[:2].T, [[1.0, 0.5 ** 0.5], [0.5 ** 0.5, 1.0]]) and np.isnan(U[2]).all()
