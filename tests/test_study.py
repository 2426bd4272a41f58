"""The multi-model study: distances against dense computations, the permutation
tests on models with and without structure, the controls, the report, the study
file's errors, Dask; and the graded comparison's canonical correlations, d_LLV
and bias folding that the study relies on."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.spatial.distance
import scipy.stats

from allornone.errors import (AllOrNoneError, ContextMismatchError, InputFormatError, VocabularyMismatchError)
from allornone.numeric import FloatModel, graded
from allornone.numeric import study as study_module
from allornone.numeric.llv import llv_distance
from allornone.numeric.spectra import analyse
from allornone.numeric.study import divergences, load_study, run_study

DATA = Path(__file__).parent / "data"


def _tokens(n):
    return [f"t{i}" for i in range(n)]


def _random_model(rng, m=200, n=40, d=5, scale=1.0):
    return FloatModel(scale * rng.normal(size=(m, d)), rng.normal(size=(n, d)), tokens=_tokens(n))


def _reparam(model, rng):
    T = rng.normal(size=(model.d, model.d)) + 3 * np.eye(model.d)
    return FloatModel(model.F @ T, model.G @ np.linalg.inv(T).T, tokens=model.tokens)


def _planted(rng, m=200, n=40, d=5, pairs=8):
    """A model whose category pairs (2i, 2i + 1) share one difference exactly."""
    F, G = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    v = rng.normal(size=d)
    for i in range(pairs):
        G[2 * i + 1] = G[2 * i] + v
    cat = [(f"t{2 * i + 1}", f"t{2 * i}") for i in range(pairs)]
    return FloatModel(F, G, tokens=_tokens(n)), cat


# -- distances ------------------------------------------------------------------

def _dense(a, b):
    La, Lb = a.log_odds(), b.log_odds()
    P = scipy.special.softmax(La, axis=1)
    Q = scipy.special.softmax(Lb, axis=1)
    kab = np.array([scipy.stats.entropy(p, q) for p, q in zip(P, Q)])
    kba = np.array([scipy.stats.entropy(q, p) for p, q in zip(P, Q)])
    js = np.array([scipy.spatial.distance.jensenshannon(p, q) ** 2 for p, q in zip(P, Q)])
    tv = 0.5 * np.abs(P - Q).sum(axis=1)
    delta = np.log(P) - np.log(Q)
    centred = delta - delta.mean(axis=1, keepdims=True)
    return {"kl_mean": [kab.mean(), kba.mean()], "kl_max": [kab.max(), kba.max()], "js_mean": js.mean(),
            "tv_mean": tv.mean(), "tv_max": tv.max(), "max_abs_log_odds_diff": np.abs(La - Lb).max(),
            "centred_log_odds_distance": math.sqrt(np.mean(centred ** 2))}


@pytest.mark.parametrize("dims", [(5, 5), (4, 7)])
def test_divergences_match_dense_scipy(dims, monkeypatch):
    rng = np.random.default_rng(sum(dims))
    a = FloatModel(rng.normal(size=(90, dims[0])), rng.normal(size=(30, dims[0])), pivot=3)
    b = FloatModel(rng.normal(size=(90, dims[1])), rng.normal(size=(30, dims[1])), pivot=3)
    want = _dense(a, b)
    for block in (study_module.BLOCK_ENTRIES, 7 * 30):    # one block, and blocks of 7 contexts
        monkeypatch.setattr(study_module, "BLOCK_ENTRIES", block)
        got = divergences(a, b)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-10, abs=1e-14), key
    assert got["kl_mean"][0] == pytest.approx(graded.distances(a, b)["kl_mean"], rel=1e-12)
    assert 0 < got["js_mean"] <= math.log(2)


def test_divergences_of_equal_distributions_are_rounding():
    rng = np.random.default_rng(3)
    a = _random_model(rng)
    d = divergences(a, _reparam(a, rng))
    assert max(d["kl_max"]) < 1e-12 and d["js_mean"] < 1e-14 and d["tv_max"] < 1e-12
    assert d["max_abs_log_odds_diff"] < 1e-11 and d["centred_log_odds_distance"] < 1e-12


@pytest.mark.parametrize("eps", [1.0, 1e-6, 1e-9])
def test_js_is_accurate_to_its_own_size_for_nearby_distributions(eps):
    """Against 60-digit arithmetic on the models' own numbers: the divergence of
    two distributions 1e-9 apart (about 1e-19) to a few parts in 1e6, where a sum
    of p (log p - log r) over the logarithms of the probabilities is off by about
    a factor twenty."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    rng = np.random.default_rng(3)
    F, G = rng.standard_normal((7, 4)), rng.standard_normal((11, 4))
    F2 = F + eps * rng.standard_normal(F.shape)
    got = divergences(FloatModel(F, G), FloatModel(F2, G))["js_mean"]
    total = mpmath.mpf(0)
    for x in range(7):
        ps = []
        for X in (F, F2):
            e = [mpmath.e ** mpmath.fsum(mpmath.mpf(X[x, j]) * mpmath.mpf(G[y, j]) for j in range(4))
                 for y in range(11)]
            z = mpmath.fsum(e)
            ps.append([v / z for v in e])
        total += mpmath.fsum(p * mpmath.log(2 * p / (p + q)) + q * mpmath.log(2 * q / (p + q)) for p, q in zip(*ps))
    want = float(total / 14)
    assert got == pytest.approx(want, rel=1e-5, abs=0.0)


def test_the_centred_distance_ignores_the_normalisation_but_not_the_distribution():
    """A per-context shift of every logit (a changed normaliser) is invisible to it;
    changing one token's log-odds is not."""
    rng = np.random.default_rng(4)
    a = _random_model(rng)
    shifted = FloatModel(np.hstack([a.F, rng.normal(size=(a.m, 1))]), np.hstack([a.G, np.ones((a.n, 1))]),
                         tokens=a.tokens)
    assert divergences(a, shifted)["centred_log_odds_distance"] < 1e-13
    G = np.array(a.G)
    G[5] += 0.1
    assert divergences(a, FloatModel(a.F, G, tokens=a.tokens))["centred_log_odds_distance"] > 1e-3


# -- the graded comparison: canonical correlations, d_LLV, bias ----------------------

def test_compare_returns_every_canonical_correlation_largest_first():
    rng = np.random.default_rng(5)
    a = FloatModel(rng.normal(size=(60, 14)), rng.normal(size=(40, 14)))
    b = FloatModel(a.F + 0.05 * rng.normal(size=a.F.shape), a.G + 0.05 * rng.normal(size=a.G.shape))
    r = graded.compare(a, b)
    assert r.k == 14 and len(r.canonical_correlations) == 14 == len(r.canonical_correlations_token)
    assert r.canonical_correlations == sorted(r.canonical_correlations, reverse=True)
    # against a dense computation: the top-k left/right singular vectors of L and L~
    Ua, _, Vat = np.linalg.svd(a.log_odds(), full_matrices=False)
    Ub, _, Vbt = np.linalg.svd(b.log_odds(), full_matrices=False)
    dense_c = np.sort(np.cos(scipy.linalg.subspace_angles(Ua[:, :14], Ub[:, :14])))[::-1]
    dense_t = np.sort(np.cos(scipy.linalg.subspace_angles(Vat[:14].T, Vbt[:14].T)))[::-1]
    assert np.allclose(r.canonical_correlations, dense_c, atol=1e-10)
    assert np.allclose(r.canonical_correlations_token, dense_t, atol=1e-10)
    js = r.to_json()
    assert len(js["angles_context"]) == 10 and len(js["canonical_correlations"]) == 14
    assert js["llv_distance"] is None and r.llv_distance is None


def test_compare_gives_d_llv_when_asked():
    rng = np.random.default_rng(6)
    a = _random_model(rng, m=300, n=8, d=3)
    b = FloatModel(a.F + 0.1 * rng.normal(size=a.F.shape), a.G, tokens=a.tokens)
    r = graded.compare(a, b, llv=True, llv_options={"triples": 40, "seed": 2})
    assert r.llv_distance == llv_distance(a, b, triples=40, seed=2).distance > 0
    assert r.to_json()["llv_distance"] == r.llv_distance


def test_a_head_with_a_bias_is_compared_with_one_without_through_a_zero_bias():
    """Without the folding, k is cut at the smaller head's dimension, and no longer
    the first model's k its label states; with it, k is the first model's, and a
    bias-free head compared with itself under a zero bias is the same model."""
    rng = np.random.default_rng(7)
    X, W = rng.normal(size=(50, 4)), rng.normal(size=(9, 4))
    b = np.zeros(9)
    b[2] = 1e-3
    with_bias, without = FloatModel.from_head(X, W, b), FloatModel.from_head(X, W)
    assert analyse(with_bias).k == 5
    assert graded.compare(with_bias, without).k == 4
    r = graded.compare(with_bias, without, bias=(True, False))
    assert r.k == 5 and r.k_label.startswith("k = 5")
    assert r.certificate["A"]["shape"] == [5, 5]
    assert r.max_abs_log_odds_diff == pytest.approx(1e-3, rel=1e-6)
    # the bias-free head has rank 4: its rank-5 subspaces are not determined, so
    # EL1 and EL2 at k = 5 are undecided, and EL3 fails (the ranks differ)
    assert r.el_verdicts == {"EL1": "undecided", "EL2": "undecided", "EL3": "fails"}
    same = graded.compare(without, FloatModel.from_head(X, W, np.zeros(9)), bias=(False, True))
    assert same.el_verdicts == {"EL1": "holds", "EL2": "holds", "EL3": "holds"}
    assert same.max_abs_log_odds_diff == 0.0
    swapped = graded.compare(without, with_bias, bias=(False, True))
    assert swapped.certificate["A"]["shape"] == [5, 5]
    assert graded.fold_zero_bias(without).log_odds() == pytest.approx(without.log_odds(), abs=0)


# -- the permutation tests -----------------------------------------------------------

def test_p_values_are_uniform_on_a_model_without_structure():
    """Categories drawn like the null are exchangeable with it: p-values uniform."""
    rng = np.random.default_rng(8)
    model = _random_model(rng, m=150, n=60, d=6)
    cats = {}
    for c in range(80):
        idx = rng.permutation(60)[:16].reshape(8, 2)
        cats[f"c{c}"] = [(f"t{a}", f"t{b}") for a, b in idx]
    r = run_study({"m": model}, cats, null_draws=199, seed=1)
    for key in ("p_value", "p_value_centred"):
        p = np.array([e["models"]["m"][key] for e in r.parallelism])
        assert scipy.stats.kstest(p, "uniform").pvalue > 1e-3, key
        assert 0.0 <= np.mean(p <= 0.05) <= 0.15 and np.mean(p <= 0.5) == pytest.approx(0.5, abs=0.2)


def test_a_planted_parallel_category_is_found_and_named():
    rng = np.random.default_rng(9)
    model, cat = _planted(rng)
    noise = [(f"t{a}", f"t{b}") for a, b in rng.permutation(np.arange(20, 40)).reshape(10, 2)]
    r = run_study({"m": model}, {"planted": cat, "noise": noise}, null_draws=999, seed=0)
    planted, other = r.parallelism
    assert planted["models"]["m"]["cos_logodds_mean"] == pytest.approx(1.0, abs=1e-12)
    assert planted["models"]["m"]["p_value"] == planted["models"]["m"]["p_value_centred"] == 1 / 1000
    assert other["models"]["m"]["p_value"] > 0.05
    named = [line for line in r.summary if "is significantly parallel" in line]
    assert named and all(line.startswith("'planted'") for line in named)
    assert "alpha = 0.05" in r.summary[0] and "4 tests" in r.summary[0]


def test_null_ties_count_against_the_category():
    """d = 1: every cosine is +1 or -1, and a random category of two pairs is
    all-parallel half the time. Those ties count as 'at least as parallel', so
    p is about 1/2, not 1 / (1 + draws)."""
    rng = np.random.default_rng(19)
    model = FloatModel(rng.normal(size=(30, 1)), np.arange(20.0).reshape(20, 1), tokens=_tokens(20))
    r = run_study({"m": model}, {"up": [("t5", "t1"), ("t9", "t2")]}, null_draws=999)
    e = r.parallelism[0]["models"]["m"]
    assert e["cos_logodds_mean"] == pytest.approx(1.0)
    assert 0.4 < e["p_value"] < 0.6


def test_the_centred_form_is_blind_to_a_frequency_direction():
    """Pairs whose first token is much more frequent (a folded bias): the identified
    mean cosine is large and 'significant'; the centred one is not."""
    rng = np.random.default_rng(10)
    m, n, d = 300, 60, 5
    X, W = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    b = rng.normal(size=n)
    pairs = [(2 * i, 2 * i + 1) for i in range(10)]
    b[[p for p, _ in pairs]] += 8.0
    model = FloatModel.from_head(X, W, b, tokens=_tokens(n))
    r = run_study({"m": model}, {"frequency": [(f"t{a}", f"t{c}") for a, c in pairs]}, null_draws=499)
    e = r.parallelism[0]["models"]["m"]
    assert e["cos_logodds_mean"] > 0.8 and e["p_value"] <= 0.01
    assert abs(e["cos_centred_mean"]) < 0.3 and e["p_value_centred"] > 0.05


def test_agreement_across_models_beyond_chance():
    """Two different models with the same pattern among the category's pairs (two
    groups along two directions): their identified cosines correlate far more than
    random categories' do; with unrelated heads, they do not."""
    m, n, d = 200, 60, 6

    def model(seed, structured=True):
        r = np.random.default_rng(seed)
        F, G = r.normal(size=(m, d)), r.normal(size=(n, d))
        if structured:
            v, w = r.normal(size=d), r.normal(size=d)
            for i in range(12):
                G[2 * i + 1] = G[2 * i] + (v if i < 6 else w) + 0.3 * r.normal(size=d)
        return FloatModel(F, G, tokens=_tokens(n))
    cat = {"groups": [(f"t{2 * i + 1}", f"t{2 * i}") for i in range(12)]}
    shared = run_study({"x": model(1), "y": model(2)}, cat, null_draws=499, seed=3).parallelism[0]
    assert shared["agreement"] > 0.5 and shared["agreement_p_value"] <= 0.01
    unrelated = run_study({"x": model(1, False), "y": model(2, False)}, cat, null_draws=499, seed=3).parallelism[0]
    assert unrelated["agreement_p_value"] > 0.01


def test_controls_share_the_identified_form_and_not_the_raw_one():
    """A reparametrisation and a twin with extra dimensions: the same distribution,
    the same identified and centred cosines, other raw cosines -- and the summary says so."""
    rng = np.random.default_rng(12)
    base, cat = _planted(rng, m=300, n=30, d=4)
    extra = 3
    twin = FloatModel(np.hstack([base.F, np.zeros((base.m, extra))]),
                      np.hstack([base.G, rng.normal(size=(base.n, extra))]), tokens=base.tokens)
    models = {"base": base, "reparam": _reparam(base, rng), "twin": twin}
    random_cat = [(f"t{a}", f"t{b}") for a, b in rng.permutation(np.arange(16, 30)).reshape(7, 2)]
    r = run_study(models, {"planted": cat, "random": random_cat}, null_draws=199)
    for d in r.distances:
        assert d["max_abs_log_odds_diff"] < 1e-10 and max(d["kl_max"]) < 1e-12
        assert min(d["canonical_correlations"]) > 1 - 1e-9
    for c in ("planted", "random"):
        cos = r.cosines[c]
        for other in ("reparam", "twin"):
            assert np.nanmax(np.abs(cos["base"]["logodds"] - cos[other]["logodds"])) < 1e-12
            assert np.nanmax(np.abs(cos["base"]["centred"] - cos[other]["centred"])) < 1e-12
    assert np.nanmax(np.abs(r.cosines["random"]["base"]["raw"] - r.cosines["random"]["reparam"]["raw"])) > 0.05
    assert np.nanmax(np.abs(r.cosines["random"]["base"]["raw"] - r.cosines["random"]["twin"]["raw"])) > 0.01
    controls = [line for line in r.summary if "same distribution to rounding" in line]
    assert len(controls) == 3 and all("(shared)" in line and "not shared" in line for line in controls)


# -- the report --------------------------------------------------------------------

def _small_study(null_draws=99):
    rng = np.random.default_rng(13)
    base, cat = _planted(rng, m=120, n=20, d=3, pairs=5)
    other = FloatModel(base.F + 0.1 * rng.normal(size=base.F.shape), base.G, tokens=base.tokens)
    return run_study({"base": base, "other": other},
                     {"planted": cat, "mixed": [("t10", "t11"), ("t12", "t13"), ("t14", "t15")]},
                     null_draws=null_draws, seed=5)


def test_json_fields_are_exactly_the_report_s():
    js = json.loads(json.dumps(_small_study().to_json()))
    assert set(js) == {"models", "distances", "parallelism", "null", "elapsed_s", "versions"}
    assert js["models"] == ["base", "other"] and js["null"] == {"draws": 99, "seed": 5}
    d, = js["distances"]
    assert set(d) == {"a", "b", "kl_mean", "kl_max", "js_mean", "tv_mean", "tv_max", "max_abs_log_odds_diff",
                      "centred_log_odds_distance", "llv_distance", "k", "canonical_correlations",
                      "canonical_correlations_token", "el_residuals"}
    assert (d["a"], d["b"]) == ("base", "other") and len(d["kl_mean"]) == 2 and d["llv_distance"] > 0
    assert set(d["el_residuals"]) == {"EL1", "EL2", "EL3"}
    for e in js["parallelism"]:
        assert set(e) == {"category", "pairs", "agreement", "agreement_p_value", "models"}
        assert set(e["models"]) == {"base", "other"}
        for v in e["models"].values():
            assert set(v) == {"cos_logodds_mean", "cos_centred_mean", "cos_raw_mean", "p_value", "p_value_centred"}
    assert {"allornone", "numpy", "scipy", "python"} <= set(js["versions"])
    full = _small_study().to_json(full=True)
    assert full["summary"] and full["cosines"]["planted"]["base"]["logodds"][0][0] == 1.0


def test_a_study_is_reproducible_from_its_seed():
    a, b = _small_study().to_json(), _small_study().to_json()
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b


def test_markdown_report_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    r = _small_study()
    text = r.to_markdown()
    for part in ("# Study", "## Findings", "## Distances", "### planted (5 pairs)", "| base | other |",
                 "Agreement across models", "null: 99 draws, seed 5"):
        assert part in text, part
    paths = r.plot(tmp_path / "plots")
    assert {p.name for p in paths} == {"distances.png", "parallel_planted.png", "parallel_mixed.png", "angles.png"}
    assert all(p.stat().st_size > 5000 for p in paths)


def test_bad_study_arguments_are_errors_before_any_work():
    rng = np.random.default_rng(14)
    a = _random_model(rng)
    cat = {"c": [("t0", "t1"), ("t2", "t3")]}
    with pytest.raises(VocabularyMismatchError, match="models 'a' and 'b'"):
        run_study({"a": a, "b": _random_model(rng, n=41)}, cat)
    with pytest.raises(ContextMismatchError, match="models 'a' and 'b'"):
        run_study({"a": a, "b": _random_model(rng, m=201)}, cat)
    with pytest.raises(InputFormatError, match="category 'c', pair 2: 'zz' is not a token"):
        run_study({"a": a}, {"c": [("t0", "t1"), ("t2", "zz")]})
    with pytest.raises(InputFormatError, match="at least two"):
        run_study({"a": a}, {"c": [("t0", "t1")]})
    with pytest.raises(InputFormatError, match="same token"):
        run_study({"a": a}, {"c": [("t0", "t1"), ("t2", "t2")]})
    with pytest.raises(InputFormatError, match="null_draws"):
        run_study({"a": a}, cat, null_draws=0)
    with pytest.raises(InputFormatError, match="null token"):
        run_study({"a": a}, cat, tokens=["t0", "nope"])
    with pytest.raises(InputFormatError, match="not a FloatModel"):
        run_study({"a": "model"}, cat)


def test_the_null_pool_restricts_the_random_pairs():
    rng = np.random.default_rng(15)
    pool = np.array([3, 4, 5, 9, 11, 12])
    rows = np.array([[0, 1], [0, 2], [2, 3], [4, 5], [6, 7], [1, 0]])
    pairs = study_module._null_pairs(rows[:4], pool, 50, 0, 0)
    assert pairs.shape == (50, 4, 2) and set(np.unique(pairs)) <= set(pool.tolist())
    assert np.all(pairs[..., 0] != pairs[..., 1])
    assert np.array_equal(pairs, study_module._null_pairs(rows[:4], pool, 50, 0, 0))
    assert not np.array_equal(pairs, study_module._null_pairs(rows[:4], pool, 50, 0, 1))
    model = _random_model(rng)
    r = run_study({"m": model}, {"c": [("t0", "t1"), ("t2", "t3")]}, tokens=["t0", "t1", "t2", "t3"],
                  null_draws=50)
    assert r.null_means["c"]["m"]["logodds"].shape == (50,)
    with pytest.raises(InputFormatError, match="uses 6 distinct tokens, more than the null's pool of 4"):
        run_study({"m": model}, {"c": [("t0", "t1"), ("t2", "t3"), ("t4", "t5")]}, tokens=["t0", "t1", "t2", "t3"])


def test_each_null_category_shares_tokens_as_its_category_does():
    """A null category is the category's pattern over other tokens: a token
    shared by two of its pairs is shared by the same two pairs of every draw
    (and by no others), a pair repeated is repeated."""
    pool = np.arange(40)
    rows = np.array([[7, 1], [7, 2], [2, 3], [5, 6], [5, 6]])
    draws = study_module._null_pairs(rows, pool, 200, 3, 0)
    same = rows[:, None, :, None] == rows[None, :, None, :]
    assert all(np.array_equal(d[:, None, :, None] == d[None, :, None, :], same) for d in draws)
    assert len({tuple(d.ravel()) for d in draws}) > 150


def test_categories_that_share_tokens_are_not_beyond_chance_in_unrelated_models():
    """Every pair of a star ``(t0, t1), (t0, t2), ...`` shares ``t0``: its
    differences have cosines near 0.5 in any model. Against independent pairs
    the star read as parallel beyond chance (p = 1/(1 + draws)) in every random
    model; against its own pattern over other tokens its p-values are uniform."""
    ps = []
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        model = _random_model(rng, m=120, n=60, d=12)
        star = [("t0", f"t{i}") for i in range(1, 7)]
        r = run_study({"m": model}, {"star": star}, null_draws=99, seed=seed)
        ps.append(r.parallelism[0]["models"]["m"]["p_value"])
    ps = np.array(ps)
    assert np.mean(ps <= 0.05) <= 0.2 and np.median(ps) > 0.2, ps


def test_an_undefined_null_draw_counts_against_the_category():
    """Null draws whose statistic is undefined (NaN: a pair of tokens with equal
    rows) count as at least the observed value, so a share of them cannot
    make the p-value smaller than a valid one."""
    null = np.array([0.1, np.nan, 0.9, np.nan])
    assert study_module._p_value(0.5, null) == (1 + 1 + 2) / 5
    assert study_module._p_value(0.95, np.array([np.nan] * 4)) == 1.0


# -- Dask ---------------------------------------------------------------------------

def test_dask_gives_the_serial_results():
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    serial = _small_study(null_draws=49)
    rng = np.random.default_rng(13)
    base, cat = _planted(rng, m=120, n=20, d=3, pairs=5)
    other = FloatModel(base.F + 0.1 * rng.normal(size=base.F.shape), base.G, tokens=base.tokens)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        distributed = run_study({"base": base, "other": other},
                                {"planted": cat, "mixed": [("t10", "t11"), ("t12", "t13"), ("t14", "t15")]},
                                null_draws=49, seed=5, client=client)
    said = []
    local = run_study({"base": base, "other": other},
                      {"planted": cat, "mixed": [("t10", "t11"), ("t12", "t13"), ("t14", "t15")]},
                      null_draws=49, seed=5, scheduler="local", progress=said.append)
    # each pair of models is reported as it finishes, not only the phase
    assert [m for m in said if "of 1 pairs" in m] == ["  1 of 1 pairs: base and other"], said
    a, b, c = serial.to_json(full=True), distributed.to_json(full=True), local.to_json(full=True)
    for x in (a, b, c):
        x.pop("elapsed_s"), x.pop("versions")
    assert a == b == c
    assert "dask" in distributed.versions and "dask" not in serial.versions


def test_an_unreachable_scheduler_is_an_input_error(monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(study_module, "CONNECT_TIMEOUT", "1s")
    rng = np.random.default_rng(20)
    model, cat = _planted(rng, m=40, n=20, d=3, pairs=3)
    said = []
    with pytest.raises(InputFormatError, match="cannot connect"):
        run_study({"m": model}, {"c": cat}, null_draws=5, scheduler="tcp://127.0.0.1:9", progress=said.append)
    # the wait is a phase of its own, named before it begins (a log is not silent through it)
    assert said == ["connecting to the scheduler at tcp://127.0.0.1:9 (waiting up to 1s)"], said
    # a port no machine has is refused at once, not after the timeout
    t0 = time.perf_counter()
    with pytest.raises(InputFormatError, match="port 99999 is beyond 65535"):
        run_study({"m": model}, {"c": cat}, null_draws=5, scheduler="tcp://127.0.0.1:99999")
    assert time.perf_counter() - t0 < 0.9


# -- the study file -------------------------------------------------------------------

def _write_models(tmp_path, rng, m=80, n=12, d=3):
    F, W, bias = rng.normal(size=(m, d)), rng.normal(size=(n, d)), rng.normal(size=n)
    T = rng.normal(size=(d, d)) + 3 * np.eye(d)
    np.savez(tmp_path / "a.npz", features=F, weight=W, bias=bias,
             tokens=np.array([f"w{i}" for i in range(n)]))
    np.savez(tmp_path / "b.npz", features=F @ T, weight=W @ np.linalg.inv(T).T, bias=bias)
    np.savez(tmp_path / "c.npz", features=F, weight=W + 0.1 * rng.normal(size=W.shape))
    np.savez(tmp_path / "short.npz", features=F[:-1], weight=W)
    np.savez(tmp_path / "wide.npz", features=F, weight=np.vstack([W, W[:1]]),
             tokens=np.array([f"w{i}" for i in range(n + 1)]))
    np.savez(tmp_path / "renamed.npz", features=F, weight=W, tokens=np.array([f"v{i}" for i in range(n)]))


GOOD = """
tokens = "a.npz:tokens"

[[models]]
name = "a"
features = "a.npz:features"
head = "a.npz:weight"
bias = "bias"

[[models]]
name = "b"
features = "b.npz:features"
head = "b.npz:weight"
bias = "b.npz:bias"

[[models]]
name = "c"
features = "c.npz:features"
head = "c.npz:weight"

[pairs]
first = [["w0", "w1"], ["w2", "w3"], ["w4", "w5"]]
second = [["w6", "w7"], ["w8", "w9"]]

[null]
draws = 30
seed = 4
"""


def test_load_study_reads_models_pairs_and_null(tmp_path):
    _write_models(tmp_path, np.random.default_rng(16))
    (tmp_path / "study.toml").write_text(GOOD)
    s = load_study(tmp_path / "study.toml")
    assert list(s.models) == ["a", "b", "c"] and s.bias == {"a": True, "b": True, "c": False}
    assert s.models["a"].d == 4 and s.models["c"].d == 3 and s.models["a"].tokens[3] == "w3"
    assert s.pairs["first"] == [("w0", "w1"), ("w2", "w3"), ("w4", "w5")]
    r = s.run()
    assert r.null == {"draws": 30, "seed": 4}
    ab = next(d for d in r.distances if (d["a"], d["b"]) == ("a", "b"))
    assert ab["max_abs_log_odds_diff"] < 1e-10
    ac = next(d for d in r.distances if (d["a"], d["b"]) == ("a", "c"))
    assert ac["k"] == 4      # c gets a zero bias folded in, so k is a's (without it, 3)
    assert s.run(null_draws=10, seed=1).null == {"draws": 10, "seed": 1}


@pytest.mark.parametrize("edit, error, text", [
    (lambda t: t.replace('"w2", "w3"', '"w2", "zz"'), InputFormatError, "'zz' is not a token"),
    (lambda t: t.replace('second = [["w6", "w7"], ["w8", "w9"]]', 'second = [["w6", "w7"]]'),
     InputFormatError, "category 'second' has 1 pair(s)"),
    (lambda t: t.replace("c.npz:features", "short.npz:features").replace("c.npz:weight", "short.npz:weight"),
     ContextMismatchError, "context sets differ"),
    (lambda t: t.replace("c.npz:features", "wide.npz:features").replace(
        'head = "c.npz:weight"', 'head = "wide.npz:weight"\ntokens = "wide.npz:tokens"'),
     VocabularyMismatchError, "vocabularies differ: 12 tokens vs 13"),
    (lambda t: t.replace('head = "c.npz:weight"', 'head = "c.npz:weight"\ntokens = "renamed.npz:tokens"'),
     VocabularyMismatchError, "token names do not match"),
    (lambda t: t.replace("c.npz:features", "wide.npz:features").replace("c.npz:weight", "wide.npz:weight"),
     AllOrNoneError, "12 names for 13 rows"),
    (lambda t: t.replace("[pairs]", "[pairs"), InputFormatError, "not valid TOML"),
    (lambda t: t.replace("b.npz:features", "missing.npz:features"), InputFormatError, "no such file"),
    (lambda t: t.replace("a.npz:weight", "a.npz:nope"), InputFormatError, "no array 'nope'"),
    (lambda t: t.replace('name = "c"', 'name = "a"'), InputFormatError, "used twice"),
    (lambda t: t.replace('name = "c"', 'nmae = "c"'), InputFormatError, "unknown key 'nmae'"),
    (lambda t: t.replace("[null]", "[nul]"), InputFormatError, "unknown key 'nul'"),
    (lambda t: t.replace('head = "c.npz:weight"', ""), InputFormatError, "missing 'head'"),
    (lambda t: t.replace("draws = 30", "draws = 0"), InputFormatError, "null.draws must be an integer from 1 to 100,000"),
    (lambda t: t.replace("seed = 4", 'seed = "four"'), InputFormatError, "null.seed"),
    (lambda t: t.replace("seed = 4", "seed = 4294967296"), InputFormatError, "null.seed must be an integer from 0"),
    # (the model is named once in the message)
    (lambda t: t.replace('features = "c.npz:features"', 'features = ["c"]'), InputFormatError,
     "study.toml: model 'c': features: expected a string"),
    (lambda t: t.replace("draws = 30", "draws = 1000000000000"), InputFormatError, "null.draws must be an integer"),
    (lambda t: t.split("[pairs]")[0], InputFormatError, "[pairs] table"),
])
def test_bad_study_files_give_one_line_errors(tmp_path, edit, error, text):
    _write_models(tmp_path, np.random.default_rng(17))
    (tmp_path / "study.toml").write_text(edit(GOOD))
    with pytest.raises(error) as info:
        load_study(tmp_path / "study.toml")
    message = str(info.value)
    assert text in message and "\n" not in message and message.count("study.toml") <= 1, message


def test_a_missing_study_file():
    with pytest.raises(InputFormatError, match="no such file"):
        load_study("/nonexistent/study.toml")


# -- a real model ---------------------------------------------------------------------

def test_smoke_on_the_textgenrnn_head():
    """The LSTM's head with and without its bias-free twin of 16 extra dimensions
    (f gets zeros there, g anything): the same distribution, so the identified
    cosines of casing pairs are shared and the raw ones are not; casing is
    parallel beyond chance in the identified form; d_LLV is undefined (300
    contexts, fewer than d + 1 = 358)."""
    from allornone.numeric.loaders import load_head

    F = DATA / "textgenrnn_head.npz"
    lstm = load_head(f"{F}:features", f"{F}:weight", bias="bias", tokens=f"{F}:tokens")
    rng = np.random.default_rng(18)
    twin = FloatModel(np.hstack([lstm.F, np.zeros((lstm.m, 16))]), np.hstack([lstm.G, rng.normal(size=(lstm.n, 16))]),
                      tokens=lstm.tokens)
    casing = [("a", "A"), ("e", "E"), ("t", "T"), ("s", "S"), ("o", "O"), ("i", "I"), ("n", "N")]
    r = run_study({"lstm": lstm, "twin": twin}, {"casing": casing}, null_draws=200, bias={"lstm": True, "twin": True})
    d, = r.distances
    assert d["llv_distance"] is None and "358" in r.details[0]["llv"]["undefined"]
    assert d["max_abs_log_odds_diff"] < 1e-10
    e = r.parallelism[0]["models"]
    assert e["lstm"]["cos_logodds_mean"] == pytest.approx(e["twin"]["cos_logodds_mean"], abs=1e-12)
    assert abs(e["lstm"]["cos_raw_mean"] - e["twin"]["cos_raw_mean"]) > 1e-3
    assert e["lstm"]["p_value"] <= 0.01
    assert any(line.startswith("'casing' is significantly parallel in the identified") for line in r.summary)
    assert "d_LLV undefined" in r.to_markdown()


def test_the_bonferroni_level_counts_the_tests_of_agreement():
    """Two models, two categories: 2 x 2 x 2 tests of parallelism and 2 of
    agreement, each of which the summary reports; the level divides alpha by 10."""
    rng = np.random.default_rng(21)
    models = {"a": _random_model(rng), "b": _random_model(rng)}
    cats = {"c": [("t0", "t1"), ("t2", "t3"), ("t4", "t5")], "e": [("t6", "t7"), ("t8", "t9"), ("t10", "t11")]}
    r = run_study(models, cats, null_draws=19, seed=0)
    assert "10 tests (2 categories x 2 models x 2 forms + 2 of agreement), Bonferroni level 0.005" in r.summary[0]


def test_a_category_that_ties_with_every_draw_has_p_one():
    """A pair and its reverse have cosine -1 in every draw of the null (each
    draw relabels the category's tokens, keeping that structure), and a pair
    given twice has cosine 1: in exact arithmetic every draw ties with the
    category, so p = 1. In floats the means differ by units in the last place,
    token by token; a tie within the cosines' rounding counts against the
    category, whichever way its rounding went."""
    rng = np.random.default_rng(3)
    model = FloatModel(rng.normal(size=(60, 16)), rng.normal(size=(80, 16)))
    cats = {f"rv{i}": [(i, i + 7), (i + 7, i)] for i in range(1, 60, 3)}
    cats.update({f"twice{i}": [(i, i + 5), (i, i + 5)] for i in range(2, 60, 9)})
    r = run_study({"a": model}, cats, null_draws=200, seed=0)
    ps = {e["category"]: (e["models"]["a"]["p_value"], e["models"]["a"]["p_value_centred"]) for e in r.parallelism}
    assert all(p == (1.0, 1.0) for p in ps.values()), {c: p for c, p in ps.items() if p != (1.0, 1.0)}


def test_the_study_reports_each_pair_of_models_as_it_finishes():
    """d_LLV costs O(n^2) per pair: a study of large vocabularies is not silent
    between the phase line and its end."""
    rng = np.random.default_rng(2)
    models = {name: FloatModel(rng.normal(size=(30, 3)), rng.normal(size=(12, 3))) for name in ("a", "b", "c")}
    said = []
    run_study(models, {"c": [(1, 0), (3, 2)]}, null_draws=9, progress=said.append)
    assert [m for m in said if "pairs:" in m] == ["  1 of 3 pairs: a and b", "  2 of 3 pairs: a and c",
                                                  "  3 of 3 pairs: b and c"], said


# -- categories some of whose pairs have a zero difference ---------------------------------

_FOUR_PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7)]


def _false_positives(reps, build, key):
    """How many of ``reps`` studies of models built by ``build(rng)`` (where
    nothing is parallel beyond chance) have ``key``'s p-value at most 0.05."""
    hits = 0
    for rep in range(reps):
        rng = np.random.default_rng([31, rep])
        r = run_study(build(rng), {"c": _FOUR_PAIRS}, null_draws=99, seed=rep, llv_triples=2)
        entry = r.parallelism[0]
        p = entry["agreement_p_value"] if key == "agreement" else entry["models"]["a"][key]
        hits += p is not None and p <= 0.05
    return hits


def _with_duplicates(rng, count=2):
    F, G = rng.normal(size=(120, 5)), rng.normal(size=(24, 5))
    for i in range(count):
        G[2 * i + 1] = G[2 * i]          # the pair (2i, 2i + 1): a zero difference in every form
    return FloatModel(F, G)


@pytest.mark.parametrize("key", ["p_value", "p_value_centred"])
def test_a_category_with_zero_differences_is_tested_against_draws_of_its_shape(key):
    """Two of four pairs with equal rows: the category's mean is of the one
    cosine between the other two pairs, and a draw's mean must be of that one
    position too (against the means of all six, 24 % of such null studies
    read as beyond chance at 0.05). 150 null studies: at 5 %, more than 16
    false positives has probability below 0.002."""
    assert _false_positives(150, lambda rng: {"a": _with_duplicates(rng)}, key) <= 16


def test_agreement_with_zero_differences_is_tested_against_draws_of_its_shape():
    """Two independent models, each with a pair of equal rows: the agreement
    correlates the three defined positions, and so must each draw's (21 %
    false positives at 0.05 against correlations over all six)."""
    assert _false_positives(150, lambda rng: {"a": _with_duplicates(rng, 1), "b": _with_duplicates(rng, 1)},
                            "agreement") <= 16


def test_agreement_of_one_distribution_is_a_tie_in_every_draw():
    """A model and a reparametrisation of condition 1e6: the agreement is 1
    in every draw in exact arithmetic, so the p-value is 1 (the draws rounded
    a few units in the last place below the category's 1.0 had given 0.5 to 0.85)."""
    for rep in range(5):
        rng = np.random.default_rng([8, rep])
        F, G = rng.normal(size=(120, 6)), rng.normal(size=(40, 6))
        U, V = np.linalg.qr(rng.normal(size=(6, 6)))[0], np.linalg.qr(rng.normal(size=(6, 6)))[0]
        T = U @ np.diag(np.logspace(0, 6, 6)) @ V
        r = run_study({"a": FloatModel(F, G), "b": FloatModel(F @ T, G @ np.linalg.inv(T).T)},
                      {"c": [(2 * i, 2 * i + 1) for i in range(10)]}, null_draws=99, seed=rep, llv_triples=2)
        assert r.parallelism[0]["agreement_p_value"] == 1.0, r.parallelism[0]
