"""What ``allornone compare`` says: whether the heads are equivalent and the
distance that decides it, every canonical correlation, the rank profile at
1e-2 and 1e-3, parallelism columns named by their JSON keys, a head with a bias
against one without, and a plot of the two models; ``analyse --parallel``
prints the rows of ``parallel_rows``."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.numeric import graded
from allornone.numeric.loaders import load_head
from allornone.theorems.engine.cli import main
from allornone.theorems.engine.cli_models import cosines_line

M, N, D = 60, 9, 4


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    F, W, b = rng.normal(size=(M, D)), rng.normal(size=(N, D)), rng.normal(size=N)
    T = rng.normal(size=(D, D)) + 3 * np.eye(D)
    names = np.array([f"t{i}" for i in range(N)])
    np.savez(tmp_path / "a.npz", features=F, weight=W, bias=b, tokens=names)
    np.savez(tmp_path / "reparam.npz", features=F @ T, weight=W @ np.linalg.inv(T).T, bias=b)
    np.savez(tmp_path / "other.npz", features=F + 0.3 * rng.normal(size=F.shape), weight=W, bias=b)
    np.savez(tmp_path / "nobias.npz", features=F, weight=W, bias=np.zeros(0))
    return tmp_path


def _compare(files, second, *extra, bias=("--bias", "bias")):
    out = files / "c.json"
    r = CliRunner().invoke(main, ["compare", "--features", f"{files}/a.npz:features", "--head",
                                  f"{files}/a.npz:weight", "--features", f"{files}/{second}:features", "--head",
                                  f"{files}/{second}:weight", *bias, "--tokens", f"{files}/a.npz:tokens",
                                  "--json", str(out), *extra])
    assert r.exit_code == 0, r.output
    return r.stdout, json.loads(out.read_text())


def _words(text):
    return " ".join(text.split())


def test_an_equivalent_pair_is_said_to_be_equivalent(files):
    out, report = _compare(files, "reparam.npz")
    g = report["graded"]
    assert "equivalent (decided): EL1-EL3 hold at k = 5" in _words(out)
    assert f"||L - L~||_F / ||L||_F = {g['rel_log_odds_diff']:.3g}" in _words(out)
    assert "not equivalent" not in out


def test_a_different_pair_is_not_and_every_cosine_is_printed(files):
    out, report = _compare(files, "other.npz")
    g = report["graded"]
    first = next(e for e in ("EL1", "EL2", "EL3") if g["el_verdicts"][e] == "fails")
    m = g["el_measures"][first]
    assert m["value"] > m["bounds"][1]
    assert (f"not equivalent (decided): {first} fails at k = 5: {m['quantity']} "
            f"{m['value']:.3g} > {m['bounds'][1]:.3g}") in _words(out)
    assert len(g["canonical_correlations"]) == 5 == len(g["canonical_correlations_token"])
    for key in ("canonical_correlations", "canonical_correlations_token"):
        assert cosines_line(g[key]) in _words(out)
    c = np.array(g["canonical_correlations"])
    assert cosines_line(c).startswith(f"min {c.min():.3g}, median {np.median(c):.3g}, max {c.max():.3g} (5): ")


def test_the_rank_profile_shows_tau_1e_2_and_1e_3(files):
    out, _ = _compare(files, "reparam.npz")
    row = next(line for line in out.splitlines() if line.strip().startswith("k(tau)"))
    assert all(f"{t}:" in row for t in ("1e-01", "1e-02", "1e-03", "1e-04", "1e-07", "1e-16")), row


def test_parallel_columns_are_named_by_their_json_keys(files):
    q = '[["t1","t2"],["t3","t4"]]'
    out, report = _compare(files, "reparam.npz", "--parallel", q)
    row = report["parallel"][0]["first"]
    header = next(line for line in out.splitlines() if "cos_logodds" in line)
    for key in ("cos_logodds", "residual_logodds", "parallel_N", "cos_raw", "residual_raw", "parallel_raw"):
        assert key in header and key in row
    assert "cos N (log-odds)" not in out
    assert f"{row['cos_logodds']:.4f}" in out and f"{row['cos_raw']:.4f}" in out
    # the identified cosine is shared by the reparametrisation, the raw one is not
    second = report["parallel"][0]["second"]
    assert second["cos_logodds"] == pytest.approx(row["cos_logodds"], abs=1e-12)


def test_a_head_with_a_bias_is_compared_with_one_without(files):
    # nobias.npz stores an empty bias: the same --bias key reads it as none, and a zero bias is folded in
    _, report = _compare(files, "nobias.npz")
    g = report["graded"]
    assert g["k"] == 5 and g["certificate"]["A"]["shape"] == [5, 5]
    # '-' says "no bias" for one model outright
    _, same = _compare(files, "nobias.npz", bias=("--bias", "bias", "--bias", "-"))
    assert same["graded"]["k"] == 5 and same["bias"][1] is None


def test_the_plot_compares_the_two_models(files):
    pytest.importorskip("matplotlib")
    _compare(files, "other.npz", "--plot", str(files / "both.png"))
    assert (files / "both.png").stat().st_size > 10_000


def test_analyse_parallel_prints_the_rows_of_parallel_table(files):
    queries = [[["t1", "t2"], ["t3", "t4"]], [["t0", "t5"], ["t6", "t8"]]]
    out = files / "a.json"
    args = ["analyse", "--features", f"{files}/a.npz:features", "--head", f"{files}/a.npz:weight", "--bias",
            "bias", "--tokens", f"{files}/a.npz:tokens", "--json", str(out)]
    for q in queries:
        args += ["--parallel", json.dumps(q)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    rows = json.loads(out.read_text())["parallel"]
    model = load_head(f"{files}/a.npz:features", f"{files}/a.npz:weight", "bias", tokens=f"{files}/a.npz:tokens")
    want = graded.parallel_table(model, queries)
    assert [r_["tokens"] for r_ in rows] == [w["tokens"] for w in want]
    for got, w in zip(rows, want):
        for key in ("cos_logodds", "cos_raw", "cos_N", "residual_logodds", "residual_raw"):
            assert got[key] == pytest.approx(w[key], abs=1e-12)
        assert (got["parallel_N"], got["parallel_raw"]) == (w["parallel_N"], w["parallel_raw"])
        assert f"{got['cos_logodds']:.4f}" in r.stdout


def test_an_undecided_pair_names_the_rtol_from_which_its_measures_hold(tmp_path):
    """A trained LSTM and its reparametrisation at k = 292 (rank_rtol 1e-9): the
    truncation is determined to about 1e-6 of sigma_1, so at rtol 1e-11 EL1-EL3
    are undecided, and the line names the rtol from which the three measures,
    their errors included, hold. At that rtol they hold; at half of it they do
    not. (At 1e-12 the pair is not equivalent: the reparametrisation, made in
    floats, moves a logit of 8.7e-5 beside |f| |g_0| = 188 by 1.3e-9 of itself.)"""
    import re

    from allornone.numeric import FloatModel, Tolerance, scale

    path = "tests/data/textgenrnn_head.npz"
    a = load_head(f"{path}:features", f"{path}:weight", bias="bias")
    A = scale.well_conditioned(a.d, np.random.default_rng(3))
    b = FloatModel(a.F @ A, a.G @ np.linalg.inv(A).T, a.pivot)
    np.savez(tmp_path / "a.npz", features=a.F, weight=a.G)
    np.savez(tmp_path / "b.npz", features=b.F, weight=b.G)
    r = CliRunner().invoke(main, ["compare", "--features", f"{tmp_path}/a.npz:features", "--head",
                                  f"{tmp_path}/a.npz:weight", "--features", f"{tmp_path}/b.npz:features",
                                  "--head", f"{tmp_path}/b.npz:weight", "--rank-rtol", "1e-9", "--rtol", "1e-11"])
    assert r.exit_code == 0, r.output
    line = _words(r.stdout)
    assert "undecided whether equivalent: at k = 292" in line
    need = float(re.search(r"from rtol = ([0-9.e+-]+) on\)", line).group(1))
    assert 1e-12 < need < 1e-5

    def measured(rtol):
        g = graded.compare(a, b, Tolerance(rtol, rank_rtol=1e-9))
        assert g.k == 292
        return [m["value"] <= m["bounds"][0] for m in g.el_measures.values()]

    assert all(measured(need * 1.05))       # (the line prints two digits)
    assert not all(measured(need / 2))
