"""What ``compare`` and ``study`` print must agree with their own numbers: the line
that says why a comparison is undecided names the condition that left it so, a
failure on differing ranks is not compared with a bound, ``--plot`` and ``--llv``
under a memory limit, the study's tables off a terminal in full with an
undecided k marked, and a folder given where a file is expected."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.numeric import FloatModel, Tolerance, graded
from allornone.theorems.engine.cli import main
from allornone.theorems.engine.cli_models import equivalence_line
from test_cli_inputs_more import _one_line_error

M, N, D = 60, 9, 4


def _run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _words(text):
    return " ".join(text.split())


@pytest.fixture
def pair(tmp_path):
    """a.npz, and b.npz: the same model with one context's features 1% larger, so that
    EL1-EL3 measured against sigma_1 hold at rtol 1e-4 while that context's logits
    differ by about 100 times their tolerance (within the band: undecided)."""
    rng = np.random.default_rng(3)
    F, W = rng.normal(size=(M, D)), rng.normal(size=(N, D))
    F2 = F.copy()
    F2[7] *= 1.01
    np.savez(tmp_path / "a.npz", features=F, weight=W)
    np.savez(tmp_path / "b.npz", features=F2, weight=W)
    return tmp_path


def _compare(folder, first, second, *extra):
    out = folder / "c.json"
    r = _run("compare", "--features", f"{folder}/{first}:features", "--head", f"{folder}/{first}:weight",
             "--features", f"{folder}/{second}:features", "--head", f"{folder}/{second}:weight",
             "--json", out, *extra)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if "equivalent" in x and ("(decided)" in x or "undecided" in x))
    start = r.stdout.index(line)
    return _words(r.stdout[start:]).split(" report written")[0], json.loads(out.read_text())["graded"]


# -- 1. undecided by L = L~ entry by entry, not by a measure ---------------------------

def test_an_undecided_line_names_the_entry_that_left_it_undecided(pair):
    line, g = _compare(pair, "a.npz", "b.npz", "--rtol", "1e-4")
    ms = g["el_measures"]
    assert set(g["el_verdicts"].values()) == {"undecided"}
    assert g["same_distribution"]["verdict"] == "undecided"
    assert all(m["value"] <= m["bounds"][0] for m in ms.values())     # every measure holds on its own
    assert "lies between" not in line, line
    s = g["same_distribution"]
    w = s["witness"]
    assert "whether L = L~ entry by entry is undecided" in line, line
    assert f"at context {w['x']}, token {w['token']!r}, L and L~ differ by {s['ratio']:.3g} times" in line, line
    assert 1 < s["ratio"] <= 1e3 and "not beyond gap 1000 times it" in line
    worst = max(ms, key=lambda e: ms[e]["value"])
    assert f"the largest measure {ms[worst]['value']:.3g} ({worst}) <= {ms[worst]['bounds'][0]:.3g}" in line


# -- 2. a lower bound below zero: the error exceeds the tolerance -------------------------

def test_an_error_beyond_the_tolerance_is_said_so_not_printed_as_a_negative_bound():
    """The numbers of the LSTM against a reparametrisation at --rank-rtol 1e-9 (rtol 1e-12)."""
    q = "sine of the largest angle between the context subspaces of L_k and L~_k"
    g = {"k": 292, "k_decided": True, "rel_log_odds_diff": 5.17e-15, "el_residuals": {},
         "el_verdicts": {"EL1": "undecided", "EL2": "undecided", "EL3": "undecided"},
         "el_measures": {"EL1": {"quantity": q, "value": 2.22e-12, "bounds": [-1.9065e-06, 0.0019066]},
                         "EL2": {"quantity": q, "value": 4.06e-12, "bounds": [-1.9065e-06, 0.0019066]},
                         "EL3": {"quantity": "|P L_k P' - L~_k|_2 / sigma_1", "value": 5.18e-15,
                                 "bounds": [-6.5408e-06, 0.0065408]}},
         "same_distribution": {"verdict": "undecided", "ratio": 0.0037, "witness": {"x": 199, "y": 212}}}
    line = equivalence_line(g, 1e-12, 1e3)
    assert "lies between" not in line and "-1.91e-06" not in line, line
    error = 1e3 ** 0.5 * 1e-12 + 1.9065e-06
    assert (f"EL1: {q} 2.22e-12, but the error bound of the truncations {error:.3g} exceeds sqrt(gap) rtol = "
            f"3.16e-11, within which it would hold, and it fails only above 0.00191") in line, line


# -- 3. differing ranks fail EL3 without a bound -----------------------------------------

def test_a_failure_on_differing_ranks_compares_nothing_with_a_bound(tmp_path):
    rng = np.random.default_rng(3)
    F, W, b = rng.normal(size=(M, D)), rng.normal(size=(N, D)), rng.normal(size=N)
    np.savez(tmp_path / "a.npz", features=F, weight=W, bias=b)
    np.savez(tmp_path / "nobias.npz", features=F, weight=W, bias=np.zeros(0))
    line, g = _compare(tmp_path, "a.npz", "nobias.npz", "--bias", "bias")
    assert g["el_verdicts"]["EL3"] == "fails" and g["el_measures"]["EL3"]["quantity"].startswith("the decided ranks")
    assert line.startswith("not equivalent (decided): EL3 fails at k = 5: the decided ranks differ (5 and 4); "
                           "||L - L~||_F / ||L||_F = "), line
    assert " > " not in line and "inf" not in line


def test_an_undecided_line_with_differing_ranks_says_why_el3_is_open():
    m = {"quantity": "sine", "value": 1e-16, "bounds": [1e-11, 1e-9]}
    g = {"k": 5, "k_decided": True, "rel_log_odds_diff": 1e-16, "el_residuals": {},
         "el_verdicts": {"EL1": "undecided", "EL2": "undecided", "EL3": "undecided"},
         "el_measures": {"EL1": m, "EL2": m, "EL3": dict(m, quantity="the decided ranks differ (5 and 4)")},
         "same_distribution": {"verdict": "holds", "ratio": 0.0, "witness": {"x": 0, "y": 0}}}
    line = equivalence_line(g, 1e-12)
    assert "EL3: the decided ranks differ (5 and 4), but L = L~ entry by entry" in line, line
    assert "lies between" not in line


# -- 4. --plot and --llv under a memory limit ----------------------------------------------

@pytest.fixture
def big(tmp_path):
    """3000 x 20 features (469 KiB as float64) and a 50-token head, twice."""
    rng = np.random.default_rng(0)
    F, W = rng.normal(size=(3000, 20)), rng.normal(size=(50, 20))
    for name, X in (("fa", F), ("ga", W), ("fb", F), ("gb", W)):
        np.save(tmp_path / f"{name}.npy", X)
    return tmp_path


def test_plot_reads_features_a_block_at_a_time(big):
    pytest.importorskip("matplotlib")
    r = _run("compare", "--features", big / "fa.npy", "--head", big / "ga.npy", "--features", big / "fb.npy",
             "--head", big / "gb.npy", "--plot", big / "p.png", env={"ALLORNONE_MEMORY_LIMIT": "200K"})
    assert r.exit_code == 0, r.output
    assert "equivalent (decided)" in r.stdout
    assert (big / "p.png").stat().st_size > 10_000


def test_llv_that_does_not_fit_is_refused_before_the_report(big):
    r = _run("compare", "--features", big / "fa.npy", "--head", big / "ga.npy", "--features", big / "fb.npy",
             "--head", big / "gb.npy", "--llv", env={"ALLORNONE_MEMORY_LIMIT": "200K"})
    line = _one_line_error(r, "--llv reads the features whole", "469 KiB", "200 KiB",
                           "compare without --llv reads them a block of rows at a time")
    assert "analyse, compare and study read" not in line
    assert r.stdout == ""


# -- 5, 6. the study's tables off a terminal; an undecided k is marked -------------------------

STUDY = """
tokens = "a.npz:tokens"

[[models]]
name = "{a}"
features = "a.npz:features"
head = "a.npz:weight"

[[models]]
name = "{b}"
features = "b.npz:features"
head = "b.npz:weight"

[pairs]
first = [["w0", "w1"], ["w2", "w3"], ["w4", "w5"]]
second = [["w6", "w7"], ["w8", "w9"]]
"""


def _study(tmp_path, F, names=("a", "b"), noise=0.1):
    rng = np.random.default_rng(5)
    W = rng.normal(size=(12, F.shape[1]))
    np.savez(tmp_path / "a.npz", features=F, weight=W, tokens=np.array([f"w{i}" for i in range(12)]))
    np.savez(tmp_path / "b.npz", features=F, weight=W + noise * rng.normal(size=W.shape))
    (tmp_path / "s.toml").write_text(STUDY.format(a=names[0], b=names[1]))
    r = _run("study", tmp_path / "s.toml", "--null", 10, "--scheduler", "none", "--full",
             "--json", tmp_path / "r.json", "--report", tmp_path / "r.md")
    assert r.exit_code == 0, r.output
    return r.stdout, json.loads((tmp_path / "r.json").read_text())


def test_study_tables_are_not_cut_off_a_terminal(tmp_path):
    F = np.random.default_rng(4).normal(size=(80, 3))
    out, report = _study(tmp_path, F, names=("a-model-with-a-rather-long-name", "another-model-named-at-length"))
    assert "…" not in out
    d = report["distances"][0]
    row = next(line for line in out.splitlines() if line.lstrip().startswith("a-model-with"))
    assert f"{d['kl_mean'][0]:.3g}/{d['kl_mean'][1]:.3g}" in row.split()
    assert f"{d['max_abs_log_odds_diff']:.3g}" in row.split()
    header = next(line for line in out.splitlines() if "category" in line and "model" in line)
    assert header.split() == ["category", "model", "cos_logodds", "p", "cos_centred", "p", "centred", "cos_raw",
                              "agreement", "p", "agreement"]


def _row(out):
    """The distance table's row of the pair a, b (the header names its columns a and b too)."""
    return next(line for line in out.splitlines() if line.split()[:2] == ["a", "b"] and "KL" not in line)


def test_study_marks_an_undecided_k_and_says_what_the_mark_means(tmp_path):
    F = np.random.default_rng(4).normal(size=(80, 3))
    # the third direction only in contexts 2^-60 the size of the others, and
    # there 1e-13 of their size: on L with its rows at size one (k by
    # rounding is rank L, which no scaling of a context moves) sigma_3 lies
    # in the band above the zero bound, and on L as given far below the
    # factors' bound, which proves two directions only: k undecided
    F[:40, 2] = 0.0
    F[40:, 2] *= 1e-13
    F[40:] *= 2.0 ** -60
    out, report = _study(tmp_path, F)
    assert "(undecided" in report["details"][0]["k_label"]
    row = _row(out)
    k = report["distances"][0]["k"]
    assert f"{k}?" in row.split(), row
    assert "? after k: k is undecided on a's L" in _words(out)
    md = (tmp_path / "r.md").read_text()
    assert f"| {k}? |" in md and "- k? : k is undecided on a's L" in md
    # a decided k is not marked, and then nothing is explained
    (tmp_path / "decided").mkdir()
    out, report = _study(tmp_path / "decided", np.random.default_rng(4).normal(size=(80, 3)))
    row = _row(out)
    assert str(report["distances"][0]["k"]) in row.split() and "?" not in row
    assert "? after k" not in out and "k? :" not in (tmp_path / "decided" / "r.md").read_text()


# -- 7. a folder where a file is expected ------------------------------------------------------

def test_a_folder_given_as_features_is_said_to_be_a_folder(tmp_path):
    np.save(tmp_path / "W.npy", np.ones((4, 2)))
    r = _run("analyse", "--features", tmp_path, "--head", tmp_path / "W.npy")
    _one_line_error(r, f"--features {tmp_path}: a folder, not a file")
    assert "no such file" not in r.stderr


def test_a_folder_given_as_texts_is_said_to_be_a_folder(tmp_path):
    (tmp_path / "model").mkdir()
    r = _run("extract", "--model", tmp_path / "model", "--texts", tmp_path, "--out", tmp_path / "o.npz")
    _one_line_error(r, "is a folder, not a file")
    assert "no such file" not in r.stderr


def test_the_undecided_line_agrees_with_graded_compare():
    """The line is made from what graded.compare decided: same numbers, one reason."""
    rng = np.random.default_rng(3)
    F, W = rng.normal(size=(M, D)), rng.normal(size=(N, D))
    F2 = F.copy()
    F2[7] *= 1.01
    g = graded.compare(FloatModel(F, W), FloatModel(F2, W), Tolerance(1e-4)).to_json()
    line = equivalence_line(g, 1e-4)
    ratio = float(re.search(r"differ by ([0-9.e+-]+) times", line).group(1))
    assert ratio == pytest.approx(g["same_distribution"]["ratio"], rel=1e-2)
