"""``allornone make``: comparison targets of a head, written in the head's own file
format, that ``allornone compare`` reads with the same command line -- a
reparametrisation of a stated condition number, a B.5 twin of a stated
dimension, a copy with one bias or logit moved -- each measured as it is made."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.numeric import targets
from allornone.theorems.engine.cli import main

M, N, D = 40, 12, 6


@pytest.fixture()
def head(tmp_path, monkeypatch):
    """A head with a bias, in a.npz (features 40 x 6, weight 12 x 6, bias 12)."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    np.savez("a.npz", features=rng.normal(size=(M, D)), weight=rng.normal(size=(N, D)), bias=rng.normal(size=N),
             tokens=np.array([f"t{i}" for i in range(N)]))
    return tmp_path


HEAD = ["--features", "a.npz:features", "--head", "a.npz:weight", "--bias", "bias"]


def _make(*args):
    result = CliRunner().invoke(main, ["make", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _compare(out="b.npz", bias=("--bias", "bias"), extra=()):
    result = CliRunner().invoke(main, ["compare", "--features", "a.npz:features", "--head", "a.npz:weight",
                                       "--features", f"{out}:features", "--head", f"{out}:weight", *bias,
                                       "--json", "c.json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(open("c.json").read())["graded"]


def _logits(npz: str, bias: bool = True):
    z = np.load(npz)
    W = z["weight"]
    L = z["features"] @ W.T
    if bias and "bias" in z.files and z["bias"].size:
        L = L + z["bias"]
    return L - L[:, :1]


@pytest.mark.parametrize("condition", [1.0, 10.0, 1e4])
def test_reparam_has_the_condition_asked_for_and_the_same_distribution(head, condition):
    r = _make("reparam", *HEAD, "--out", "b.npz", "--condition", str(condition), "--seed", "3")
    assert r.exit_code == 0, r.output
    assert f"cond(T) = {condition:.6g} (asked {condition:g})" in r.stdout
    z = np.load("b.npz")
    assert sorted(z.files) == ["bias", "features", "weight"]
    assert z["features"].shape == (M, D) and z["weight"].shape == (N, D)
    assert np.array_equal(z["bias"], np.load("a.npz")["bias"])
    assert np.abs(_logits("b.npz") - _logits("a.npz")).max() <= 1e-12 * condition
    assert not np.allclose(z["features"], np.load("a.npz")["features"])  # a real change of basis
    g = _compare()
    assert g["max_abs_log_odds_diff"] <= 1e-12 * condition and g["kl_max"] <= 1e-12


def test_reparam_condition_is_the_condition_of_T():
    rng = np.random.default_rng(0)
    t = targets.reparametrise(rng.normal(size=(9, 5)), rng.normal(size=(7, 5)), condition=250.0, seed=4)
    assert np.linalg.cond(t.info["T"]) == pytest.approx(250.0, rel=1e-9)
    assert t.info["condition"] == pytest.approx(250.0, rel=1e-9)


@pytest.mark.parametrize("extra", [3, 0])
def test_twin_has_the_dimension_asked_for_and_the_same_log_odds(head, extra):
    r = _make("twin", *HEAD, "--out", "b.npz", "--extra-dim", str(extra))
    assert r.exit_code == 0, r.output
    z = np.load("b.npz")
    d_twin = D + 1 + extra  # the bias is one coordinate of d
    assert z["features"].shape == (M, d_twin) and z["weight"].shape == (N, d_twin)
    assert z["bias"].size == 0  # folded into the twin's coordinates
    assert f"d~ = {d_twin} = k 7 + " in r.stdout and "counting the folded bias" in r.stdout
    assert np.abs(_logits("b.npz") - _logits("a.npz")).max() <= 1e-10
    g = _compare()
    # the twin's bias is folded into its coordinates, so compare gives it a zero bias as well
    assert g["max_abs_log_odds_diff"] <= 1e-10 and g["certificate"]["A"]["shape"] == [D + 1, d_twin + 1]


def test_twin_below_k_is_refused(head):
    r = _make("twin", *HEAD, "--out", "b.npz", "--extra-dim", "-1")
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "below k = 7" in r.stderr
    assert not (head / "b.npz").exists()


def test_twin_is_no_change_of_basis(head):
    """Outside M and N the twin is not linear in f: a B.5 twin of a model whose
    k < d has coordinates that no linear map of f(x) gives."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(M, 3)) @ rng.normal(size=(3, D))  # rank 3 < d
    W = rng.normal(size=(N, D))
    t = targets.twin(X, W, None, extra_dim=2, seed=0)
    coef, *_ = np.linalg.lstsq(X, t.features, rcond=None)
    assert np.abs(X @ coef - t.features).max() > 1e-3
    small = targets.twin(X, W, None, extra_dim=-3, seed=0)  # d~ = k = 3: the smallest twin
    assert small.features.shape == (M, 3) and small.info["k"] == 3
    gap, _ = targets.log_odds_gap(X, W, None, small.features, small.weight, None)
    assert gap <= 1e-10 * np.abs(X @ (W - W[0]).T).max()


def test_perturb_moves_one_bias_by_the_amount(head):
    r = _make("perturb", *HEAD, "--out", "b.npz", "--token", "t4", "--amount", "0.25", "--tokens", "a.npz:tokens")
    assert r.exit_code == 0, r.output
    assert "every log-odds of 't4' moves by 0.25" in r.stdout
    diff = _logits("b.npz") - _logits("a.npz")
    assert np.allclose(diff[:, 4], 0.25, atol=1e-12) and np.abs(np.delete(diff, 4, axis=1)).max() <= 1e-12
    g = _compare()
    assert g["max_abs_log_odds_diff"] == pytest.approx(0.25, rel=1e-9) and g["witness"]["token"] == "y4"


def test_perturb_moves_one_logit_only(head):
    r = _make("perturb", *HEAD, "--out", "b.npz", "--token", "2", "--amount", "-1.5", "--context", "7")
    assert r.exit_code == 0, r.output
    diff = _logits("b.npz") - _logits("a.npz")
    assert diff[7, 2] == pytest.approx(-1.5)
    diff[7, 2] = 0
    assert np.abs(diff).max() <= 1e-12
    assert np.load("b.npz")["features"].shape == (M, D + 1)  # one coordinate carries the change


def test_perturb_of_a_head_without_bias_folds_the_bias_in(head):
    r = _make("perturb", "--features", "a.npz:features", "--head", "a.npz:weight", "--out", "b.npz", "--token", "3",
              "--amount", "2")
    assert r.exit_code == 0, r.output
    z = np.load("b.npz")
    assert sorted(z.files) == ["features", "weight"] and z["features"].shape == (M, D + 1)
    g = _compare(bias=())
    assert g["max_abs_log_odds_diff"] == pytest.approx(2.0)


def test_perturb_of_the_pivot_says_what_moves(head):
    r = _make("perturb", *HEAD, "--out", "b.npz", "--token", "0", "--amount", "1")
    assert r.exit_code == 0 and "every other token's log-odds move by -1 (it is the pivot)" in " ".join(r.stdout.split())


def test_the_weight_keeps_the_heads_orientation(head):
    z = np.load("a.npz")
    np.savez("k.npz", features=z["features"], kernel=z["weight"].T, bias=z["bias"])  # d x n, as Keras writes it
    r = _make("twin", "--features", "k.npz:features", "--head", "k.npz:kernel", "--bias", "bias", "--out", "b.npz")
    assert r.exit_code == 0, r.output
    assert np.load("b.npz")["weight"].shape == (D + 1 + 3, N)


@pytest.mark.parametrize("args,needle", [
    (["twin", "--condition", "5"], "--condition is an option of 'make reparam', not of 'make twin'"),
    (["reparam", "--amount", "1"], "--amount is an option of 'make perturb'"),
    (["perturb", "--token", "1"], "make perturb needs --token and --amount"),
    (["perturb", "--token", "zz", "--amount", "1"], "'zz' is neither one of the names"),
    (["perturb", "--token", "99", "--amount", "1"], "99 is out of range 0..11"),
    (["perturb", "--token", "1", "--amount", "0"], "--amount 0"),
    (["reparam", "--condition", "0.5"], "--condition"),
    (["bogus"], "bogus"),
])
def test_a_mistake_is_one_line(head, args, needle):
    out = [] if "--out" in args else ["--out", "b.npz"]
    r = _make(*args[:1], *HEAD, *out, *args[1:])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and needle in lines[0], r.output
    assert not (head / "b.npz").exists()


@pytest.mark.parametrize("out,needle", [("b.json", "must end in .npz"), ("a.npz", "is an input file"),
                                        ("nowhere/b.npz", "does not exist")])
def test_a_bad_out_path_is_one_line_and_nothing_is_overwritten(head, out, needle):
    before = (head / "a.npz").read_bytes()
    r = _make("reparam", *HEAD, "--out", out)
    assert r.exit_code == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert (head / "a.npz").read_bytes() == before
