"""d_LLV against the values of its published code (tests/data/llv_reference/README.md),
and its own properties: the pivot choice, the blocks, the draws, the errors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from allornone.errors import InputFormatError, NonFiniteValueError
from allornone.numeric import FloatModel
from allornone.numeric import llv as llv_module
from allornone.numeric.llv import llv_distance, llv_from_reps

DATA = Path(__file__).parent / "data" / "llv_reference"
REFERENCE = json.loads((DATA / "reference.json").read_text())
ARRAYS = dict(np.load(DATA / "inputs.npz"))
TERMS = ("distance", "t1", "t2", "t3", "t4")


def _ours(ref: dict):
    a, b = ref["a"], ref["b"]
    kw = {"dist_type": ref.get("dist_type", "max"), "combine": ref.get("sum_or_max", "max")}
    if ref.get("given"):
        kw.update(pivot=ref["pivot"], left_out=ref["left_out"], inputs=ref["inputs"])
    else:
        kw.update(seed=ref["seed"], triples=ref["triples"])
    return llv_from_reps(ARRAYS[f"{a}_f"], ARRAYS[f"{a}_g"], ARRAYS[f"{b}_f"], ARRAYS[f"{b}_g"], **kw)


def _label(ref: dict) -> str:
    extra = "given" if ref.get("given") else f"seed{ref['seed']}-{ref['triples']}"
    return f"{ref['a']}-{ref['b']}-{ref['dtype']}-{ref.get('dist_type', 'max')}-{extra}"


@pytest.mark.parametrize("ref", REFERENCE["results"], ids=_label)
def test_reference_values(ref):
    """float64 runs of their code: every term to 1e-11; float32 runs (their default
    precision): to 3e-5. The pivot, the left-out label and the input set are theirs."""
    got = _ours(ref)
    rel = 1e-11 if ref["dtype"] == "float64" else 3e-5
    for term in TERMS:
        assert getattr(got, term) == pytest.approx(ref[term], rel=rel), term
    assert (got.pivot, got.left_out, got.inputs) == (ref["pivot"], ref["left_out"], ref["inputs"])
    assert got.draws == ("given" if ref.get("given") else "disjoint")


def test_reference_covers_the_choices():
    """The references exercise more than one pivot and left-out label, given choices, and both variants."""
    results = REFERENCE["results"]
    assert len({(r["pivot"], r["left_out"]) for r in results}) >= 3
    assert any(r.get("given") for r in results) and any(r.get("dist_type") == "mean" for r in results)
    assert REFERENCE["weight"] == 1e-5 and REFERENCE["sum_or_max"] == "max" and REFERENCE["dist_type"] == "max"


def test_reference_kl_matches_the_study_divergences():
    from allornone.numeric.study import divergences

    for ref in REFERENCE["results"]:
        if ref["dtype"] != "float64" or ref.get("given"):
            continue
        a, b = ref["a"], ref["b"]
        ma = FloatModel(ARRAYS[f"{a}_f"].astype(float), ARRAYS[f"{a}_g"].astype(float))
        mb = FloatModel(ARRAYS[f"{b}_f"].astype(float), ARRAYS[f"{b}_g"].astype(float))
        assert divergences(ma, mb)["kl_mean"][0] == pytest.approx(ref["kl_mean"], rel=1e-10)


def _brute_pivot(f1, g1, f2, g2):
    """The published loop, written out directly: every pivot k and left-out l, T1 of the rest."""
    def lp(F, G):
        S = F @ G.T
        return (S - np.log(np.exp(S - S.max(1, keepdims=True)).sum(1, keepdims=True)) - S.max(1, keepdims=True)).T
    l1, l2 = lp(f1, g1), lp(f2, g2)
    n = g1.shape[0]
    table = np.zeros((n, n - 1))
    for k in range(n):
        others = [j for j in range(n) if j != k]
        terms = []
        for j in others:
            s1 = np.std(l1[j] - l1[k], ddof=1)
            s2 = np.std(l2[j] - l2[k], ddof=1)
            terms.append(max(np.std(l1[j] / s1 - l2[j] / s2, ddof=1), np.std(l1[k] / s1 - l2[k] / s2, ddof=1)))
        terms = np.array(terms)
        for l in range(n - 1):
            table[k, l] = np.delete(terms, l).max()
    k, l = np.argwhere(table == table.min())[0]
    return int(k), int(l + 1 if l >= k else l)


@pytest.mark.parametrize("seed", range(4))
def test_the_pivot_choice_is_the_published_loop(seed):
    rng = np.random.default_rng(seed)
    m, n, d = 60, 9, 3
    f1, g1 = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    f2, g2 = f1 + 0.3 * rng.normal(size=(m, d)), g1 + 0.3 * rng.normal(size=(n, d))
    got = llv_from_reps(f1, g1, f2, g2, triples=5)
    assert (got.pivot, got.left_out) == _brute_pivot(f1, g1, f2, g2)


def test_blocks_of_pivots_give_the_same_choice(monkeypatch):
    rng = np.random.default_rng(20)
    f1, g1 = rng.normal(size=(80, 3)), rng.normal(size=(40, 3))
    f2, g2 = f1 + 0.2 * rng.normal(size=(80, 3)), g1 + 0.2 * rng.normal(size=(40, 3))
    whole = llv_from_reps(f1, g1, f2, g2, triples=10)
    monkeypatch.setattr(llv_module, "BLOCK_ENTRIES", 7 * 40)
    blocked = llv_from_reps(f1, g1, f2, g2, triples=10)
    assert blocked == whole


def test_equivalent_models_are_at_distance_zero_and_others_are_not():
    rng = np.random.default_rng(21)
    F, G = rng.normal(size=(500, 3)), rng.normal(size=(8, 3))
    T = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    a = FloatModel(F, G)
    same = FloatModel(F @ T, G @ np.linalg.inv(T).T)
    other = FloatModel(F, G + 0.1 * rng.normal(size=G.shape))
    assert llv_distance(a, same, triples=100).distance < 1e-12
    assert llv_distance(a, other, triples=100).distance > 1e-3


def test_the_draws_follow_numpy_legacy_seeding():
    """seed=s draws what np.random.seed(s); np.random.choice(...) draws, and an explicit
    RandomState gives the same result; another seed gives other sets."""
    rng = np.random.default_rng(22)
    f1, g1 = rng.normal(size=(700, 2)), rng.normal(size=(6, 2))
    f2, g2 = f1 + 0.1 * rng.normal(size=f1.shape), g1 + 0.1 * rng.normal(size=g1.shape)
    r = llv_from_reps(f1, g1, f2, g2, triples=200, seed=3)
    sets = np.random.RandomState(3).choice(700, 600, replace=False).reshape(200, 3)
    assert any(list(s) == r.inputs for s in sets.tolist())
    assert llv_from_reps(f1, g1, f2, g2, triples=200, rng=np.random.RandomState(3)) == r
    assert llv_from_reps(f1, g1, f2, g2, triples=200, seed=4).inputs != r.inputs


def test_too_few_contexts_for_disjoint_sets_draws_each_set_alone():
    rng = np.random.default_rng(23)
    f1, g1 = rng.normal(size=(50, 4)), rng.normal(size=(7, 4))
    f2, g2 = f1 + 0.1 * rng.normal(size=f1.shape), g1 + 0.1 * rng.normal(size=g1.shape)
    r = llv_from_reps(f1, g1, f2, g2, triples=200)
    assert r.draws == "separate" and r.triples == 200
    assert len(r.inputs) == 5 and len(set(r.inputs)) == 5
    # each set still has d + 1 distinct contexts, even when they are nearly all of them
    sets, how = llv_module._draw_inputs(6, 5, 200, np.random.RandomState(0))
    assert how == "separate" and sets.shape == (200, 5)
    assert all(len(set(row)) == 5 for row in sets.tolist())


def test_mistakes_are_project_errors():
    rng = np.random.default_rng(24)
    f, g = rng.normal(size=(10, 3)), rng.normal(size=(5, 3))
    with pytest.raises(InputFormatError, match="at least 3 labels"):
        llv_from_reps(f, g[:2], f, g[:2])
    with pytest.raises(InputFormatError, match="d \\+ 1 = 4 contexts"):
        llv_from_reps(f[:3], g, f[:3], g)
    with pytest.raises(InputFormatError, match="dist_type"):
        llv_from_reps(f, g, f, g, dist_type="median")
    with pytest.raises(InputFormatError, match="pivot"):
        llv_from_reps(f, g, f, g, pivot=1, left_out=1)
    twin = g.copy()
    twin[3] = twin[2]
    with pytest.raises(NonFiniteValueError, match="labels"):
        llv_from_reps(f, twin, f, twin)


def test_models_on_other_contexts_are_refused():
    from allornone.errors import ContextMismatchError

    rng = np.random.default_rng(25)
    a = FloatModel(rng.normal(size=(10, 2)), rng.normal(size=(4, 2)))
    b = FloatModel(rng.normal(size=(11, 2)), rng.normal(size=(4, 2)))
    with pytest.raises(ContextMismatchError):
        llv_distance(a, b)
