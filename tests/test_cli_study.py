"""``allornone study``: the findings in words, the tables, and the outputs; bad
input is one line, exit status 2, and nothing is written."""
import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.theorems.engine.cli import main
from test_study import GOOD, _write_models


@pytest.fixture
def folder(tmp_path):
    """a, its reparametrisation b (same distribution), and c, another model without a bias;
    short.npz (one context fewer) and wide.npz (one token more) for the bad cases."""
    _write_models(tmp_path, np.random.default_rng(5))
    (tmp_path / "study.toml").write_text(GOOD)
    return tmp_path


def _run(*args):
    return CliRunner().invoke(main, ["study", *map(str, args)])


def test_study_prints_the_findings_and_writes_the_outputs(folder):
    out = folder / "out"
    out.mkdir()
    args = [folder / "study.toml", "--json", out / "r.json", "--report", out / "r.md", "--null", 20, "--seed", 1]
    r = _run(*args)
    assert r.exit_code == 0, r.output
    assert "Significance at alpha = 0.05" in r.stdout
    assert "a and b have the same distribution to rounding" in r.stdout
    assert "distances between the models" in r.stdout and "parallelism of the categories" in r.stdout
    assert "null: 20 draws, seed 1" in r.stdout
    report = json.loads((out / "r.json").read_text())
    assert report["models"] == ["a", "b", "c"] and report["null"] == {"draws": 20, "seed": 1}
    assert {(d["a"], d["b"]) for d in report["distances"]} == {("a", "b"), ("a", "c"), ("b", "c")}
    ab = next(d for d in report["distances"] if d["b"] == "b")
    assert ab["max_abs_log_odds_diff"] < 1e-10
    assert (out / "r.md").read_text().startswith("#")
    # the table prints what the report holds
    assert f"{report['parallelism'][0]['models']['a']['cos_logodds_mean']:.4f}" in r.stdout


def test_study_plots(folder):
    pytest.importorskip("matplotlib")
    r = _run(folder / "study.toml", "--null", 10, "--plot", folder / "plots")
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (folder / "plots").iterdir())
    assert names == ["angles.png", "distances.png", "parallel_first.png", "parallel_second.png"]


BAD = [
    ("unknown token", lambda t: t.replace('"w2", "w3"', '"w2", "zz"'), "'zz' is not a token"),
    ("one pair", lambda t: t.replace('second = [["w6", "w7"], ["w8", "w9"]]', 'second = [["w6", "w7"]]'),
     "category 'second' has 1 pair(s)"),
    ("other contexts", lambda t: t.replace("c.npz:features", "short.npz:features").replace(
        "c.npz:weight", "short.npz:weight"), "context sets differ"),
    ("other vocabulary", lambda t: t.replace("c.npz:features", "wide.npz:features").replace(
        'head = "c.npz:weight"', 'head = "wide.npz:weight"\ntokens = "wide.npz:tokens"'),
     "vocabularies differ: 12 tokens vs 13"),
    ("malformed", lambda t: t.replace("[pairs]", "[pairs"), "not valid TOML"),
    ("missing array", lambda t: t.replace("a.npz:weight", "a.npz:nope"), "no array 'nope'"),
]


@pytest.mark.parametrize("case, edit, text", BAD, ids=[b[0] for b in BAD])
def test_bad_study_input_is_one_line_and_writes_nothing(folder, case, edit, text):
    (folder / "study.toml").write_text(edit(GOOD))
    before = sorted(p.name for p in folder.iterdir())
    r = _run(folder / "study.toml", "--json", folder / "r.json", "--report", folder / "r.md",
             "--plot", folder / "plots")
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr
    assert "Traceback" not in r.output and r.stdout == ""
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.parametrize("args, text", [
    (["--json", "{f}/absent/r.json"], "does not exist"),
    (["--report", "{f}/absent/r.md"], "does not exist"),
    (["--plot", "{f}/a.npz"], "is a file"),
    (["--plot", "{f}/absent/plots"], "does not exist"),
    (["--json", "{f}/r.json", "--report", "{f}/r.json"], "the same file"),
    (["--json", "{f}/study.toml"], "overwrite STUDY.toml"),
    (["--null", "0"], "--null"),
    (["--null", "1000000"], "--null"),
    (["--seed", str(2 ** 32)], "--seed"),
], ids=["json folder", "report folder", "plot is a file", "plot folder", "same file", "over the study", "null 0",
        "null beyond the limit", "seed beyond the legacy generator's"])
def test_output_paths_are_checked_before_any_work(folder, args, text):
    before = sorted(p.name for p in folder.iterdir())
    r = _run(folder / "study.toml", *[a.format(f=folder) for a in args])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (folder / "study.toml").read_text() == GOOD


def test_a_missing_study_file(tmp_path):
    r = _run(tmp_path / "absent.toml", "--json", tmp_path / "r.json")
    assert r.exit_code == 2 and "no such file" in r.stderr and not (tmp_path / "r.json").exists()


def test_plot_without_matplotlib_is_refused_before_any_work(folder, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = _run(folder / "study.toml", "--json", folder / "r.json", "--plot", folder / "plots")
    assert r.exit_code == 2 and "needs matplotlib" in r.stderr, r.output
    assert not (folder / "r.json").exists() and not (folder / "plots").exists()


def test_the_pairs_run_on_a_local_dask_cluster_by_default_with_the_serial_results(folder):
    pytest.importorskip("dask.distributed")
    out = folder / "out"
    out.mkdir()
    base = [folder / "study.toml", "--null", 20, "--seed", 1]
    r1 = _run(*base, "--json", out / "dask.json")
    r2 = _run(*base, "--json", out / "serial.json", "--scheduler", "none")
    assert r1.exit_code == 0 and r2.exit_code == 0, (r1.output, r2.output)
    on_dask, serial = (json.loads((out / f).read_text()) for f in ("dask.json", "serial.json"))
    assert "distributed" in on_dask["versions"] and "distributed" not in serial["versions"]
    for key in ("distances", "parallelism", "null"):
        assert on_dask[key] == serial[key], key


def test_a_plot_that_cannot_be_written_leaves_the_other_outputs_unwritten(folder):
    """A folder where a plot is to go: the plots are written first, and the
    error comes before the report and the JSON are."""
    pytest.importorskip("matplotlib")
    (folder / "plots" / "distances.png").mkdir(parents=True)
    r = _run(folder / "study.toml", "--null", 10, "--json", folder / "r.json", "--report", folder / "r.md",
             "--plot", folder / "plots")
    assert r.exit_code == 2 and "is a folder" in r.stderr, r.output
    assert not (folder / "r.json").exists() and not (folder / "r.md").exists()


def test_model_names_that_are_not_printable_are_escaped(folder):
    """A model named with a right-to-left override (U+202E) would turn the rest
    of each terminal line it is printed on around: it is escaped as token
    names are, in the tables and in the progress lines; the JSON report keeps
    the name as given."""
    (folder / "study.toml").write_text(GOOD.replace('name = "a"', 'name = "a\\u202e"'))
    out = folder / "r.json"
    r = _run(folder / "study.toml", "--null", 10, "--json", out)
    assert r.exit_code == 0, r.output
    assert "\u202e" not in r.output and "a\\u202e" in r.stdout
    assert json.loads(out.read_text())["models"][0] == "a\u202e"
