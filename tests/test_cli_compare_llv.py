"""``allornone compare --llv``: the d_LLV distance in the report, under the
name graded.compare gives it."""
from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from allornone.theorems.engine.cli import main


def _files(tmp_path, scale_b=2.0, other=False):
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(400, 5)), rng.normal(size=(30, 5))
    Xb, Wb = (rng.normal(size=(400, 5)), rng.normal(size=(30, 5))) if other else (scale_b * X, W / scale_b)
    np.savez(tmp_path / "a.npz", features=X, weight=W)
    np.savez(tmp_path / "b.npz", features=Xb, weight=Wb)
    return [str(tmp_path / f) for f in ("a.npz", "b.npz")]


def _compare(tmp_path, files, *extra):
    out = tmp_path / "out.json"
    args = ["compare", "--json", str(out), *extra]
    for f in files:
        args += ["--features", f + ":features", "--head", f + ":weight"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())["graded"]


def test_llv_is_zero_on_a_reparametrisation_and_not_on_another_model(tmp_path):
    same = _compare(tmp_path, _files(tmp_path), "--llv")["llv_distance"]
    assert same is not None and 0 <= same < 1e-10
    other = _compare(tmp_path, _files(tmp_path, other=True), "--llv")["llv_distance"]
    assert other > 1e-3


def test_without_the_flag_the_field_is_there_and_empty(tmp_path):
    assert _compare(tmp_path, _files(tmp_path))["llv_distance"] is None


def test_where_d_llv_is_not_defined_the_rest_of_the_comparison_stands(tmp_path):
    """Features that are all zero give every context the uniform distribution:
    the ratios of d_LLV's T1 are not defined. The comparison is still made
    (equivalent), and the report says why d_LLV is missing, in the table too."""
    W = np.random.default_rng(1).normal(size=(30, 5))
    for name in ("a", "b"):
        np.savez(tmp_path / f"{name}.npz", features=np.zeros((400, 5)), weight=W)
    files = [str(tmp_path / f) for f in ("a.npz", "b.npz")]
    g = _compare(tmp_path, files, "--llv")
    assert g["llv_distance"] is None and "not defined" in g["llv_undefined"]
    assert g["same_distribution"]["verdict"] == "holds"
    args = ["compare", "--llv"]
    for f in files:
        args += ["--features", f + ":features", "--head", f + ":weight"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0 and "d_LLV" in res.stdout and "not defined" in res.stdout


def test_a_defined_d_llv_has_no_reason_beside_it(tmp_path):
    g = _compare(tmp_path, _files(tmp_path, other=True), "--llv")
    assert g["llv_distance"] > 0 and g["llv_undefined"] is None
