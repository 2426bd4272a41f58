"""The command line: list, check (JSON report), proof, edges, and errors."""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from allornone.theorems.engine.cli import main

RESULT_FIELDS = {"id", "instances", "hypotheses_held", "conclusion_held", "exact_checked", "float_agreed",
                 "contradictions", "undecided", "max_float_residual", "verdict"}


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


def test_list(runner):
    r = runner.invoke(main, ["list"])
    assert r.exit_code == 0, r.output
    for text in ("thm5", "Theorem 5", "cor6", "Corollary 6", "same dimension", "diversity"):
        assert text in r.stdout


def _check(runner, tmp_path, jobs: int) -> dict:
    path = tmp_path / f"report{jobs}.json"
    r = runner.invoke(main, ["check", "thm5", "cor6", "--trials", "20", "--seed", "1", "--jobs", str(jobs),
                             "--json", str(path)])
    assert r.exit_code == 0, r.output
    assert "thm5" in r.stdout and "pass" in r.stdout
    return json.loads(path.read_text())


def test_check_writes_the_json_report(runner, tmp_path):
    report = _check(runner, tmp_path, 1)
    assert report["seed"] == 1 and report["trials"] == 20 and report["verdict"] == "pass"
    assert isinstance(report["elapsed_s"], (int, float)) and report["elapsed_s"] >= 0
    assert {"allornone", "python", "sympy", "numpy", "scipy"} <= set(report["versions"])
    assert [r["id"] for r in report["results"]] == ["thm5", "cor6"]
    for r in report["results"]:
        assert RESULT_FIELDS <= set(r)
        assert r["instances"] == r["exact_checked"] == 20
        assert r["contradictions"] == 0 and r["verdict"] == "pass"
        assert r["float_agreed"] + r["undecided"] == 20
        assert 0 <= r["conclusion_held"] <= r["hypotheses_held"] <= 20
        assert 0 <= r["max_float_residual"] < 1e-6
    thm5, cor6 = report["results"]
    assert thm5["hypotheses_held"] == thm5["conclusion_held"] == 20  # no hypotheses: all instances count
    assert cor6["hypotheses_held"] == 8  # two kinds in five have both models diverse, d = d~


def test_check_report_does_not_depend_on_jobs(runner, tmp_path):
    one, two = _check(runner, tmp_path, 1), _check(runner, tmp_path, 2)
    assert (one["jobs"], two["jobs"]) == (1, 2)
    for report in (one, two):
        del report["elapsed_s"], report["jobs"]
    assert one == two


def _unknown_id_subprocess():
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # rich's default width: 80
    return subprocess.run([sys.executable, "-m", "allornone.theorems.engine.cli", "check", "thm99", "--trials", "1"],
                          capture_output=True, text=True, timeout=120, env=env)


def test_unknown_id_is_one_line_on_stderr_without_traceback():
    proc = _unknown_id_subprocess()
    assert proc.returncode == 2
    assert proc.stdout == ""
    # longer than rich's default width of 80 columns: it must still not be wrapped
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert len(proc.stderr.strip()) > 80
    assert proc.stderr.startswith("error: unknown result 'thm99'; implemented: thm5, cor6")
    assert "Traceback" not in proc.stderr


def test_unknown_id_in_process(runner):
    for args in (["check", "nope"], ["proof", "nope"], ["edges", "nope"]):
        r = runner.invoke(main, args)
        assert r.exit_code == 2
        assert r.stderr.startswith("error: unknown result 'nope'; implemented: thm5, cor6")
        assert "Traceback" not in r.output
        assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit)


def test_proof_thm5(runner):
    r = runner.invoke(main, ["proof", "thm5"])
    assert r.exit_code == 0, r.output
    assert "Theorem 5" in r.stdout
    for label in ("F4", "<=", "kernels", "EL1", "EL2", "EL3"):
        assert f". {label}:" in r.stdout
    assert "✗" not in r.stdout


def test_edges_cor6(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything the command saves stays out of the repository
    path = tmp_path / "edges.json"
    r = runner.invoke(main, ["edges", "cor6", "--json", str(path)])
    assert r.exit_code == 0, r.output
    assert "Corollary 6" in r.stdout or "cor6" in r.stdout
    assert "diversity" in r.stdout
    assert "NOT as expected" not in r.stdout and "Traceback" not in r.output
    assert json.loads(path.read_text())["id"] == "cor6"


def test_bad_trials_is_a_usage_error(runner):
    r = runner.invoke(main, ["check", "thm5", "--trials", "0"])
    assert r.exit_code == 2
    assert "Traceback" not in r.output


def test_check_reports_a_nonvacuity_witness_that_verify_reproduces(tmp_path):
    from rich.console import Console

    from allornone.theorems.engine.runner import run
    from allornone.theorems.engine.verify import verify_file

    report = run(["thm5", "cor6", "lem8", "thm14"], trials=16, seed=2, generic_check=False)
    for r in report["results"]:
        w = r["witness"]
        assert w is not None and r["nonvacuous"]
        path = tmp_path / f"{r['id']}.json"
        path.write_text(json.dumps(w["instance"]))
        code, payload = verify_file(str(path), Console(file=open(tmp_path / "out.txt", "w")))
        assert code == 0
        (query,) = payload["queries"]
        (res,) = query["results"]
        assert res["result"] == r["id"] and res["as_expected"]
        assert res["hypotheses"] == "holds" and res["conclusion"] == "holds"
        assert payload["models"]["f"]["k"] >= 1


def test_list_prints_record_texts_literally():
    from click.testing import CliRunner

    from allornone.theorems.engine.cli import main

    out = CliRunner().invoke(main, ["list"], terminal_width=200).output
    assert "L[x1] - L[x2]" in out.replace("\n", " ") or "L[x1]" in out
