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
