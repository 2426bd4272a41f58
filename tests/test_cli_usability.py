"""Command-line usability: hypothesis slugs, ``-h``, readable statements,
honest shrink messages, trivial relational fits, and a clear word on ``.npy``."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.theorems.engine.cli import main
from allornone.theorems.engine.edges import _shrink_text

SUBCOMMANDS = ("list", "check", "proof", "edges", "verify")


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


@pytest.mark.parametrize("name", ["gamma-in-n", "drop-gamma-in-n", "thm14-drop-gamma-in-n.json", "Γ ⊆ N"])
def test_edges_hypothesis_accepts_the_saved_file_slug(runner, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(main, ["edges", "thm14", "--hypothesis", name])
    assert r.exit_code == 0, r.output
    assert "drop 'Γ ⊆ N'" in r.stdout
    assert "drop 'Γ_q ⊆ M'" not in r.stdout  # only the hypothesis asked for
    assert (tmp_path / "allornone-edges" / "thm14-drop-gamma-in-n.json").is_file()


def test_edges_unknown_hypothesis_lists_names_and_slugs(runner):
    r = runner.invoke(main, ["edges", "thm14", "--hypothesis", "gamma-in-m"])
    assert r.exit_code == 2
    assert "gamma-in-n" in r.stderr and "Γ ⊆ N" in r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("args", [[], *([c] for c in SUBCOMMANDS)])
def test_dash_h_is_help(runner, args):
    short = runner.invoke(main, [*args, "-h"])
    long = runner.invoke(main, [*args, "--help"])
    assert short.exit_code == 0, short.output
    assert short.stdout == long.stdout and "Usage:" in short.stdout


@pytest.mark.parametrize("rid", ["thm5", "thm15", "thm14"])
def test_proof_statement_line_is_readable(runner, rid):
    r = runner.invoke(main, ["proof", rid])
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("statement:"))
    assert "\\" not in line and "{" not in line, line
    assert "f̃" in line


def test_shrink_message_does_not_claim_a_shrink_that_did_not_happen():
    size = {"m": 2, "n": 3, "d": 2, "entry": 4}
    assert "shrunk from" not in _shrink_text(size, dict(size))
    assert "not reduced" in _shrink_text(size, dict(size))
    assert _shrink_text({**size, "entry": 9}, size).startswith("shrunk from m=2 n=3 d=2 max|entry|=9 to")


def test_verify_flags_a_trivial_relational_fit(runner, tmp_path):
    # The bundled example's relational query has two pairs in d = 2: every readout fits.
    out = tmp_path / "report.json"
    r = runner.invoke(main, ["verify", "examples/two_models.json", "--json", str(out)])
    assert r.exit_code == 0, r.output
    (rel,) = [q for q in json.loads(out.read_text())["queries"] if q["kind"] == "relational"]
    assert rel["results"][0]["trivial"] is True
    assert rel["results"][0]["truth"] == "holds"
    assert "trivial fit" in " ".join(r.stdout.split())


@pytest.mark.parametrize("suffix", [".npy", ".json"])
def test_verify_single_npy_says_use_npz(runner, tmp_path, suffix):
    path = tmp_path / f"model{suffix}"
    with open(path, "wb") as fh:
        np.save(fh, np.eye(2))
    r = runner.invoke(main, ["verify", str(path)])
    assert r.exit_code == 2
    assert "use .npz" in r.stderr and "UTF-8" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output


# -- failing hypotheses are named, values are words ---------------------------------------

def _cor6_drop_file(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(main, ["edges", "cor6", "--hypothesis", "diversity"])
    assert r.exit_code == 0, r.output
    return r, tmp_path / "allornone-edges" / "cor6-drop-diversity.json"


def _words(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_edges_names_the_failing_hypotheses_of_a_counterexample(runner, tmp_path, monkeypatch):
    r, _ = _cor6_drop_file(runner, tmp_path, monkeypatch)
    assert "hypotheses failing: diversity (diverse: fails, diverse~: fails); the conclusion fails" in _words(r.stdout)


def test_verify_names_the_failing_hypotheses_of_an_instance(runner, tmp_path, monkeypatch):
    _, path = _cor6_drop_file(runner, tmp_path, monkeypatch)
    out = tmp_path / "v.json"
    r = runner.invoke(main, ["verify", str(path), "--json", str(out)])
    assert r.exit_code == 0, r.output
    text = _words(r.stdout)
    assert "hypotheses failing: diversity (diverse: fails, diverse~: fails); conclusion fails" in text
    assert "hypotheses fails" not in text
    (item,) = json.loads(out.read_text())["queries"][0]["results"]
    assert item["failed_hypotheses"] == [{"hypothesis": "diversity", "truth": "fails",
                                          "because": ["diverse: fails", "diverse~: fails"]}]


def test_check_edges_names_the_failing_hypotheses(runner):
    r = runner.invoke(main, ["check", "cor6", "--trials", "6", "--edges"])
    assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output  # the lines, whatever the verdict
    text = _words(r.stdout)
    assert "edge cor6: drop diversity (drop) (hypotheses failing: diversity (diverse: fails, diverse~: fails))" in text
    assert "minimal diverse (boundary): as declared" in text  # every hypothesis holds there: nothing named


def test_check_names_the_failing_hypotheses_of_a_failing_instance(runner, monkeypatch):
    """A failing instance whose hypotheses fail (a float contradiction, say)
    names them, from the atoms the report keeps."""
    from allornone.theorems.engine import runner as rn

    real = rn.run

    def run(*args, **kw):
        report = real(*args, **kw)
        r = report["results"][0]
        r["failures"] = [{"index": 3, "kind": "planted", "statement": "holds", "hypotheses": "fails",
                          "contradictions": ["diverse~"], "steps_failed": [], "facts_failed": [],
                          "facts_contradicted": [], "intent_failed": [],
                          "exact": {"same_dimension": "holds", "diverse": "holds", "diverse~": "fails",
                                    "same_distribution": "fails", "linearly_identified": "fails"}}]
        return report
    monkeypatch.setattr(rn, "run", run)
    r = runner.invoke(main, ["check", "cor6", "--trials", "6"])
    assert "statement holds, hypotheses failing: diversity (diverse~: fails), contradictions" in _words(r.stdout)


def test_verify_prints_words_not_python_values(runner, tmp_path):
    r = runner.invoke(main, ["verify", "examples/two_models.json"])
    assert r.exit_code == 0, r.output
    text = _words(r.stdout)
    assert "λ: none, unique: yes" in text
    assert "lam None" not in text and "unique True" not in text and "space N" not in text
    data = {"models": {"a": {"F": [[1, 0], [0, 1], [1, 1]], "G": [[0, 0], [1, 2], [2, 4]]}},
            "queries": [{"kind": "parallel", "model": "a", "tokens": [[1, 0], [2, 0]]}]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    r = runner.invoke(main, ["verify", str(path)])
    assert r.exit_code == 0, r.output
    assert "'y1' - 'y0' vs 'y2' - 'y0', in N, λ: 1/2, unique: yes" in _words(r.stdout)


# -- tolerances, decisions, analyse and the help read as words ----------------------------

def test_float_bounds_and_tolerances_print_with_their_names():
    from allornone.decision import Bounds, Decision, Truth
    from allornone.numeric.linalg import Tolerance

    d = Decision(Truth.HOLDS, 0.0, (3.56e-307, 3.56e-304))
    assert d.tolerance == (3.56e-307, 3.56e-304) and isinstance(d.tolerance, Bounds)  # the same pair, named
    assert str(d.tolerance) == "holds if residual <= 3.56e-307, fails if > 3.56e-304, undecided in between"
    assert repr(d) == "Decision(holds, residual 0, hold_below 3.56e-307, fail_above 3.56e-304)"
    assert json.loads(json.dumps({"t": d.tolerance})) == {"t": [3.56e-307, 3.56e-304]}
    assert str(Tolerance()).startswith("rtol = 1e-12 (relative to the natural size of what is compared), gap = 1000 (")
    assert "rank_rtol = 1e-09" in str(Tolerance(rank_rtol=1e-9))


def test_the_readme_tolerance_lines_are_readable(capsys):
    from allornone.symbolic import ExactModel
    from allornone.symbolic.generators import b5_twin
    from allornone.theorems import thm5

    model = ExactModel([[1, 0, 2], [0, 1, 1], [1, 1, 3], [2, 0, 4]], [[0, 0, 0], [1, 0, 0], [0, "1/2", 0], [1, 1, 0]])
    fm = model.to_float()
    fres = thm5.equivalence(fm, b5_twin(model, a=2, b=1).to_float())
    print(fres.tolerance)
    print(fm.tolerance)
    bounds, policy = capsys.readouterr().out.splitlines()
    assert bounds.startswith("holds if residual <= ") and ", fails if > " in bounds
    assert policy.startswith("rtol = 1e-12 (") and "gap = 1000 (" in policy


TEXTGENRNN = "tests/data/textgenrnn_head.npz"


def test_analyse_says_where_the_bias_went_and_what_the_cosines_are(runner):
    F = TEXTGENRNN
    r = runner.invoke(main, ["analyse", "--features", f"{F}:features", "--head", f"{F}:weight", "--bias", "bias",
                             "--rank-rtol", "1e-9"])
    assert r.exit_code == 0, r.output
    text = _words(r.stdout)
    assert "d = 357: 356 features + 1 for the bias" in text
    assert "292 principal angles (one per dimension of the smaller space, SF): every cosine 1" in text
    assert "SF lies in SG" in text and "cosines SF/SG" not in text
    r = runner.invoke(main, ["analyse", "--features", f"{F}:features", "--head", f"{F}:weight"])
    assert "d = 356 features (no bias)" in _words(r.stdout)


def test_a_square_head_is_read_with_a_warning_and_the_other_way_on_request(runner, tmp_path):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "sq.npz", features=rng.normal(size=(6, 4)), weight=rng.normal(size=(4, 4)))
    args = ["analyse", "--features", f"{tmp_path}/sq.npz:features", "--head", f"{tmp_path}/sq.npz:weight"]
    auto = runner.invoke(main, [*args, "--json", str(tmp_path / "a.json")])
    assert auto.exit_code == 0, auto.output
    (warning,) = auto.stderr.strip().splitlines()[:1]
    assert warning.startswith("warning: --head") and "square (4 x 4): read as n x d" in warning
    assert "--head-layout d-by-n" in warning
    other = runner.invoke(main, [*args, "--head-layout", "d-by-n", "--json", str(tmp_path / "b.json")])
    assert other.exit_code == 0, other.output
    assert "warning" not in other.stderr
    a, b = (json.loads((tmp_path / f"{n}.json").read_text())["spectra"]["sigma_L"] for n in "ab")
    assert not np.allclose(a, b)  # the transpose is another model
    rows = runner.invoke(main, [*args, "--head-layout", "n-by-d"])
    assert rows.exit_code == 0 and "warning" not in rows.stderr  # asked for: no ambiguity


def test_a_head_layout_that_does_not_fit_is_one_error(runner, tmp_path):
    np.savez(tmp_path / "r.npz", features=np.ones((6, 4)), weight=np.ones((5, 4)))
    r = runner.invoke(main, ["analyse", "--features", f"{tmp_path}/r.npz:features", "--head",
                             f"{tmp_path}/r.npz:weight", "--head-layout", "d-by-n"])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "as --head-layout d-by-n says" in r.stderr


@pytest.mark.parametrize("command,needles", [
    ("check", ["Table columns:", "float a/c/u", "max res", "sides"]),
    ("analyse", ["Rows of the spectra table:", "angles SF, SG", "cos_logodds", "k(tau)"]),
    ("compare", ["Rows of the graded comparison:", "Wedin bound", "EL1, EL2, EL3", "Rows of the spectra table:"]),
])
def test_help_explains_the_table(runner, command, needles):
    r = runner.invoke(main, [command, "--help"])
    assert r.exit_code == 0
    for needle in needles:
        assert needle in r.stdout, needle


def test_a_long_command_off_a_terminal_names_its_phase_once_it_has_run_a_while(monkeypatch, capfd):
    """Off a terminal a quick command stays silent; once it has run for
    QUIET_SECONDS the phase under way is printed (by the watcher process: the
    phase may have begun before), then each later phase as it begins."""
    import time

    from allornone.theorems.engine import cli

    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.2)
    with cli._PlainPhases("compare") as say:
        say("quick")
        say("long")
        time.sleep(0.8)
        say("next")
    lines = capfd.readouterr().err.strip().splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == ["long", "next"], lines
    with cli._PlainPhases("compare") as say:
        say("only")
    time.sleep(0.3)
    assert capfd.readouterr().err == ""


def _lock_holding_matrix(size: int):
    """An integer matrix of 10^5-digit entries: ``A * A`` is one FLINT call of
    about a second (size 12) or more, with the interpreter's lock held."""
    import flint

    return flint.fmpz_mat(size, size, [flint.fmpz(7) ** 120000 + i for i in range(size * size)])


def test_a_phase_begun_with_the_lock_held_is_named_after_the_quiet_seconds(monkeypatch, capfd):
    """A phase begun where no thread of the command can run (a file read, an
    exact computation in FLINT, from the start) is named once QUIET_SECONDS
    have passed, not only STILL_SECONDS later: reading a file of exact models
    had left a log silent for 23 s."""
    import time

    from allornone.theorems.engine import cli

    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.2)
    monkeypatch.setattr(cli, "STILL_SECONDS", 30.0)
    A = _lock_holding_matrix(16)   # A * A: one FLINT call of a second or more
    with cli._PlainPhases("verify") as say:
        say("reading the models")
        t0 = time.perf_counter()
        A * A
        took = time.perf_counter() - t0
        lines = capfd.readouterr().err.strip().splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == ["reading the models"], lines
    # named while the call ran, not when it let a thread of the command run again
    at = float(lines[0].split("[", 1)[1].split(" s]", 1)[0])
    assert at < max(0.6, took / 2), (at, took)


def test_a_long_phase_off_a_terminal_is_named_again_while_it_runs(monkeypatch, capfd):
    """One phase that goes on (an exact computation on large rationals, in
    FLINT with the interpreter's lock held) is named again each
    STILL_SECONDS, "still running", by a watcher process: a log is never
    silent for longer, even while no thread of the command can run."""
    import time

    from allornone.theorems.engine import cli

    monkeypatch.setattr(cli, "QUIET_SECONDS", 0.1)
    monkeypatch.setattr(cli, "STILL_SECONDS", 0.5)
    A = _lock_holding_matrix(12)
    with cli._PlainPhases("verify") as say:
        say("query 1 of 1: compare")
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 1.3:
            A * A
        say("done")
    lines = capfd.readouterr().err.strip().splitlines()
    said = [line.split(": ", 1)[1] for line in lines]
    # (the command's own line may come late, when FLINT lets its timer run)
    assert said[-1] == "done" and "query 1 of 1: compare (still running)" in said and \
        set(said[:-1]) <= {"query 1 of 1: compare", "query 1 of 1: compare (still running)"}, lines
    assert all(line.startswith("verify [") for line in lines), lines
    time.sleep(0.6)             # the watcher ended with the command: nothing more
    assert capfd.readouterr().err == ""


def test_a_square_head_refused_for_another_reason_is_one_line(runner, tmp_path):
    """A 1 x 1 head is square and has one token: the error alone, no warning
    about its orientation before it."""
    np.savez(tmp_path / "one.npz", features=np.ones((3, 1)), weight=np.ones((1, 1)))
    r = runner.invoke(main, ["analyse", "--features", f"{tmp_path}/one.npz:features", "--head",
                             f"{tmp_path}/one.npz:weight"])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "at least 2 tokens" in lines[0], r.stderr


def test_a_zero_difference_in_the_parallelism_table_has_no_cosine(runner, tmp_path):
    """A token against itself is a zero difference: parallel to any other
    (lambda = 0), with no angle. Its cosine is '-' in the table and null in
    the JSON report, not "nan" beside "holds"."""
    rng = np.random.default_rng(3)
    np.savez(tmp_path / "a.npz", features=rng.standard_normal((12, 4)), weight=rng.standard_normal((6, 4)))
    out = tmp_path / "r.json"
    r = runner.invoke(main, ["analyse", "--features", f"{tmp_path}/a.npz:features", "--head",
                             f"{tmp_path}/a.npz:weight", "--parallel", "[[1, 1], [3, 4]]", "--json", str(out)])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.stdout.splitlines() if "vs" in line)
    assert "nan" not in row and row.split()[3::3] == ["-", "-"] and row.split()[5] == "holds", row
    rows = json.loads(out.read_text())["parallel"]
    assert rows[0]["cos_logodds"] is None and rows[0]["parallel_N"] == "holds"
