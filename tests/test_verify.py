"""``allornone verify``: the example files, the report, and one clear error
naming the place in the file for every kind of bad file (exit 2, nothing written)."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from allornone import errors
from allornone.theorems.engine.cli import main
from allornone.theorems.engine.verify import load_file, verify_data, verify_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "two_models.json"


def _console(tmp_path):
    return Console(file=open(tmp_path / "out.txt", "w"), width=120)


def test_example_json(tmp_path):
    code, report = verify_file(EXAMPLE, _console(tmp_path))
    assert code == 0 and report["realisation"] == "exact"
    assert report["models"]["a"] == {"m": 3, "n": 3, "d": 2, "pivot": 0, "k": 2, "dim_M": 2, "dim_N": 2,
                                      "dim_SF": 2, "dim_SG": 2, "diverse": "holds", "decided": True}
    thm5, cor6 = report["queries"][0]["results"]
    assert thm5["verdict"] == "equivalent" and thm5["certificate"]["A"] == [["1", "0"], ["-1", "1"]]
    assert cor6["verdict"] == "linearly identified"
    assert report["queries"][-1]["results"][0]["as_expected"] is True
    json.dumps(report)


def test_example_npz(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_npz", ROOT / "examples" / "make_npz.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = mod.main(tmp_path / "two.npz")
    code, report = verify_file(path, _console(tmp_path))
    assert code == 0 and report["realisation"] == "float"
    assert report["queries"][0]["results"][0]["verdict"] == "equivalent"


def test_default_queries_compare_every_comparable_pair():
    data = {"models": {"a": {"F": [[1, 0], [0, 1]], "G": [[0, 0], [1, 2], [3, 1]]},
                       "b": {"F": [[1, 0], [0, 1]], "G": [[0, 0], [1, 2], [3, "1/2"]]},
                       "c": {"F": [[1]], "G": [[0], [1]]}}}
    report = verify_data(data)
    assert [q["models"] for q in report["queries"]] == [["a", "b"]]
    w = report["queries"][0]["results"][0]["witness"]
    assert (w["context"], w["token"], w["L"], w["L~"]) == ("x1", "y2", "1", "1/2")


def test_cli_writes_json_and_an_unmet_expectation_exits_1(tmp_path):
    data = json.loads(EXAMPLE.read_text())
    data["queries"][-1]["expect"]["linearly_identified"] = "fails"
    path = tmp_path / "f.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exit_code == 1 and json.loads(out.read_text())["queries"][-1]["results"][0]["as_expected"] is False


GOOD = {"models": {"a": {"F": [[1, 0], [0, 1], [1, 1]], "G": [[0, 0], [1, 1]]},
                   "b": {"F": [[1, 0], [0, 1], [1, 1]], "G": [[0, 0], [2, 1]]}}}


def _with(path, value):
    data = json.loads(json.dumps(GOOD))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


BAD = [
    (_with(["models", "a", "F", 2, 1], "0.5"), errors.NonRationalValueError, "models.a.F[2][1]"),
    (_with(["models", "a", "F", 2, 1], 0.5), errors.NonRationalValueError, "models.a.F[2][1]"),
    # digits of another script, which Fraction reads: not a rational's text here
    (_with(["models", "a", "F", 2, 1], "\u0661/2"), errors.NonRationalValueError, "models.a.F[2][1]"),
    (_with(["models", "a", "F", 2, 1], True), errors.InputFormatError, "models.a.F[2][1]"),
    (_with(["models", "a", "F", 2], [1]), errors.ShapeError, "models.a.F[2]"),
    (_with(["models", "a", "F"], [[1, 0, 0]]), errors.ShapeError, "models.a"),
    (_with(["models", "a", "G"], [[0, 0]]), errors.VocabularyError, "models.a"),
    (_with(["models", "a", "pivot"], 5), errors.InputFormatError, "models.a.pivot"),
    (_with(["models", "a", "tokens"], ["p", "p"]), errors.ShapeError, "models.a.tokens"),
    (_with(["models", "a", "colour"], 1), errors.InputFormatError, "models.a.colour"),
    (_with(["models", "b", "G"], [[0, 0], [1, 1], [2, 2]]) | {"queries": [{"kind": "compare", "models": ["a", "b"]}]},
     errors.VocabularyMismatchError, "queries[0].models[1]"),
    (_with(["models", "b", "tokens"], ["u", "v"]) | {"queries": [{"kind": "compare", "models": ["a", "b"]}]},
     errors.VocabularyMismatchError, "queries[0].models[1]"),
    (GOOD | {"queries": [{"kind": "frobnicate"}]}, errors.InputFormatError, "queries[0].kind"),
    (GOOD | {"queries": [{"kind": "compare", "models": ["a", "zz"]}]}, errors.InputFormatError,
     "queries[0].models[1]"),
    (GOOD | {"queries": [{"kind": "instance", "result": "thm99", "models": ["a"]}]}, errors.InputFormatError,
     "queries[0].result"),
    (GOOD | {"queries": [{"kind": "parallel", "model": "a", "tokens": [["y0", "y9"], ["y1", "y0"]]}]},
     errors.InputFormatError, "queries[0].tokens[0][1]"),
    (GOOD | {"queries": [{"kind": "relational", "model": "a", "pairs": [[0, 1]], "tokens": [["y1", "y9"]]}]},
     errors.InputFormatError, "queries[0].tokens[0][1]"),
    (GOOD | {"queries": [{"kind": "relational", "model": "a", "pairs": [[0, 1]], "tokens": []}]},
     errors.InputFormatError, "queries[0].tokens"),
    (GOOD | {"queries": [{"kind": "relational", "model": "a", "pairs": [[0, 1]], "tokens": [["y1", "y0"]],
                          "gamma": [[1], [0]]}]}, errors.InputFormatError, "queries[0]: give the readout"),
    ({"models": {}}, errors.InputFormatError, "models"),
    ([1, 2], errors.InputFormatError, "top level"),
]


@pytest.mark.parametrize("data,exc,place", BAD, ids=[b[2] for b in BAD])
def test_bad_data_names_the_place(data, exc, place):
    with pytest.raises(exc) as info:
        verify_data(data)
    assert str(info.value).startswith(place)


@pytest.mark.parametrize("text,place", [
    ('{"models": {"a": {"F": [[1, NaN]], "G": [[0, 0], [1, 1]]}}}', "models.a.F[0][1]"),
    ('{"models": {"a": {"F": [[1, Infinity]], "G": [[0, 0], [1, 1]]}}}', "models.a.F[0][1]"),
    ('{"models": {"a": {"F": [[1, 0]], "G": [[0, 0], [1, 1]]', "line 1"),
    ("", "line 1"),
])
def test_bad_files_exit_2_and_write_nothing(tmp_path, text, place):
    path = tmp_path / "bad.json"
    path.write_text(text)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exit_code == 2 and not out.exists()
    with pytest.raises(errors.AllOrNoneError, match=place.replace("[", r"\[").replace("]", r"\]")):
        load_file(path)


def test_bad_npz(tmp_path):
    import numpy as np

    path = tmp_path / "bad.npz"
    np.savez(path, **{"a.F": np.array([[1.0, np.nan]]), "a.G": np.zeros((2, 2))})
    with pytest.raises(errors.NonFiniteValueError, match=r"^a\.F\[0\]\[1\]"):
        load_file(path)
    np.savez(path, **{"a.F": np.ones((1, 2)), "a.G": np.zeros((2, 2)), "a.weights": np.ones(2)})
    with pytest.raises(errors.InputFormatError, match=r"^a\.weights"):
        load_file(path)
    path.write_bytes(b"not a zip")
    with pytest.raises(errors.InputFormatError):
        load_file(path)


def test_the_instance_parameters_table_matches_the_records():
    """docs/file-format.md lists, per result, the models and params an
    ``instance`` query takes; the loader checks the same against each record."""
    import re

    from allornone.theorems import records
    from allornone.theorems.engine.verify import _instance_shape

    text = (ROOT / "docs" / "file-format.md").read_text()
    documented = {}
    for ids, count, params in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \| (\d) \| (.*) \|$", text, re.M):
        for rid in re.findall(r"`(\w+)`", ids):
            documented[rid] = (int(count), set(re.findall(r"`(\w+)`", params)) - {"null"})
    for rid in records():
        count, names = _instance_shape(rid)
        assert documented[rid] == (count, set(names)), rid


# -- readouts named by tokens ---------------------------------------------------------

_RELATIONAL = {
    "contexts": ["s0", "s1", "s2", "t0", "t1", "t2"], "tokens": ["y0", "y1", "y2"],
    # f(t_i)_0 = 2 f(s_i)_0 + 1; the second coordinate is hidden from g
    "models": {"a": {"F": [[1, 0], [2, 5], [3, 1], [3, 0], [5, 7], [7, -2]], "G": [[0, 0], [1, 0], [2, 0]]}},
}


@pytest.mark.parametrize("reading,pairs,verdict", [
    ("M", [["s0", "t0"], ["s1", "t1"], ["s2", "t2"]], "relationally linear"),
    ("M", [["s0", "t1"], ["s1", "t0"], ["s2", "t2"]], "not relationally linear"),
])
def test_relational_query_with_tokens(tmp_path, reading, pairs, verdict):
    q = {"kind": "relational", "model": "a", "pairs": pairs, "tokens": [["y1", "y0"], [2, 0]], "reading": reading}
    report = verify_data(_RELATIONAL | {"queries": [q]})
    (item,) = report["queries"][0]["results"]
    assert item["verdict"] == verdict and item["from_log_odds"] == verdict
    assert item["tokens"] == [["y1", "y0"], ["y2", "y0"]] and item["dim_gamma"] == 1
    # the same file in floats gives the same verdicts
    import numpy as np

    path = tmp_path / "r.npz"
    F = np.array(_RELATIONAL["models"]["a"]["F"], dtype=float)
    G = np.array(_RELATIONAL["models"]["a"]["G"], dtype=float)
    np.savez(path, **{"a.F": F, "a.G": G, "a.pivot": np.array(0), "a.contexts": np.array(_RELATIONAL["contexts"]),
                      "a.tokens": np.array(_RELATIONAL["tokens"]), "queries": np.array(json.dumps([q]))})
    code, rep = verify_file(path, _console(tmp_path))
    (fitem,) = rep["queries"][0]["results"]
    assert fitem["verdict"] == verdict and fitem["from_log_odds"] == verdict


def test_rationals_within_the_digit_limit_are_verified_and_reported_whole(tmp_path):
    """Entries of 3,000 digits are read (Python reads 4,300); the residuals and
    log-odds derived from them have more, and writing them as text had raised
    "Exceeds the limit" (a traceback, no report). They are written whole, and
    the limit stands again after."""
    import sys

    big = "7" * 3000
    data = {"format": "allornone/1",
            "models": {"a": {"F": [[f"1/{big}", 0], [0, 1], [1, 1]], "G": [[0, 0], [1, 0], [0, 1]]},
                       "b": {"F": [[f"2/{'3' * 3000}", 0], [0, 1], [1, 1]], "G": [[0, 0], [1, 0], [0, 1]]}}}
    path, out = tmp_path / "m.json", tmp_path / "r.json"
    path.write_text(json.dumps(data))
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    thm5 = next(r for q in report["queries"] for r in q["results"] if r["result"] == "thm5")
    assert thm5["verdict"] == "not equivalent"
    assert max(len(v) for v in thm5["residuals"].values()) > 4300
    assert getattr(sys, "get_int_max_str_digits", lambda: 0)() == limit


def test_float_entries_of_any_finite_size_are_verified(tmp_path):
    """verify takes entries of any finite binary64 size, as analyse and compare
    do (a limit of 1e100 once refused them): a model with contexts of 1e200 and
    its reparametrisation by powers of two are equivalent, and a perturbed
    copy is not."""
    import numpy as np

    rng = np.random.default_rng(4)
    F = rng.integers(-3, 4, (6, 3)) * 1e200
    G = rng.integers(-3, 4, (5, 3)).astype(float)
    D = np.array([1.0, 2.0 ** 40, 2.0 ** -60])
    G3 = G.copy()
    G3[2, 0] += 1.0
    path = tmp_path / "big.npz"
    np.savez(path, **{"a.F": F, "a.G": G, "b.F": F * D, "b.G": G / D, "c.F": F, "c.G": G3})
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    verdicts = {tuple(q["models"]): r["verdict"] for q in json.loads(out.read_text())["queries"]
                for r in q["results"] if r["result"] == "thm5"}
    assert verdicts[("a", "b")] == "equivalent" and verdicts[("a", "c")] == "not equivalent", verdicts
