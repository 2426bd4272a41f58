"""``allornone verify`` on every query kind, on exact (JSON) and float (``.npz``)
files, with integer and with fractional certificates: each run exits 0 with
the verdict the models were built to have, prints its evidence, and writes a
strict-JSON report.

The fractional cases are the ordinary ones a user meets first -- a model and
the same model with ``F`` doubled and ``G`` halved, a ratio of 1/2, a fit that
halves -- so a report that reads a rational entry as a float (``float("1/2")``)
is caught here."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.theorems.engine.cli import main

ROOT = Path(__file__).resolve().parents[1]

F = [[1, 0], [0, 1], [1, 1], [2, 1], [1, 3]]
G = [[0, 0], [1, 2], [2, 4], [3, 1]]
TOKENS = ["y0", "y1", "y2", "y3"]
#: F T and G T^{-T} for the unimodular T = [[1, 1], [0, 1]]: an integer certificate.
F_INT = [[1, 1], [0, 1], [1, 2], [2, 3], [1, 4]]
G_INT = [[0, 0], [-1, 2], [-2, 4], [2, 1]]
#: 2 F and G / 2: the same distribution, certificate A* = I/2, B* = 2 I.
F_FRAC = [[2 * v for v in row] for row in F]
G_FRAC = [[str(Fraction(v, 2)) for v in row] for row in G]

#: Contexts s_i and their images: t_i = s_i + (1, 0) (integer fit), u_i = s_i / 2 (fractional fit).
S = [[1, 0], [0, 1], [1, 1], [2, 1]]
REL_F = S + [[a + 1, b] for a, b in S] + [[str(Fraction(a, 2)), str(Fraction(b, 2))] for a, b in S]
REL_CONTEXTS = [f"s{i}" for i in range(4)] + [f"t{i}" for i in range(4)] + [f"u{i}" for i in range(4)]
REL_G = [[0, 0], [1, 0], [0, 1]]


def _models(second_F, second_G):
    return {"a": {"F": F, "G": G, "tokens": TOKENS}, "b": {"F": second_F, "G": second_G, "tokens": TOKENS}}


def _pair(cert: str):
    return _models(F_INT, G_INT) if cert == "integer" else _models(F_FRAC, G_FRAC)


def _rel_pairs(cert: str):
    target = "t" if cert == "integer" else "u"
    return [[f"s{i}", f"{target}{i}"] for i in range(4)]


def _parallel_tokens(cert: str):
    # g(y2) - g(y0) = 2 (g(y1) - g(y0)): the ratio is 2 one way round and 1/2 the other
    return [["y2", "y0"], ["y1", "y0"]] if cert == "integer" else [["y1", "y0"], ["y2", "y0"]]


def _lam(cert: str):
    return 2 if cert == "integer" else "1/2"


def _case(kind: str, cert: str) -> dict:
    """A verify file (exact entries) holding one query of ``kind``."""
    if kind == "compare":
        return {"models": _pair(cert), "queries": [{"kind": "compare", "models": ["a", "b"]}]}
    if kind == "parallel":
        return {"models": {"a": _models(F, G)["a"]},
                "queries": [{"kind": "parallel", "model": "a", "tokens": _parallel_tokens(cert)}]}
    if kind == "relational-gamma":
        return {"models": {"r": {"F": REL_F, "G": REL_G, "contexts": REL_CONTEXTS}},
                "queries": [{"kind": "relational", "model": "r", "pairs": _rel_pairs(cert), "gamma": [[1], [0]]}]}
    if kind == "relational-tokens":
        return {"models": {"r": {"F": REL_F, "G": REL_G, "contexts": REL_CONTEXTS}},
                "queries": [{"kind": "relational", "model": "r", "pairs": _rel_pairs(cert),
                             "tokens": [[1, 0]]}]}
    if kind == "instance-thm5":
        return {"models": _pair(cert),
                "queries": [{"kind": "instance", "result": "thm5", "models": ["a", "b"],
                             "expect": {"hypotheses": "holds", "conclusion": "holds", "same_distribution": "holds",
                                        "el_equivalent": "holds"}}]}
    if kind == "instance-lem8":
        ab, ce = ([2, 0], [1, 0]) if cert == "integer" else ([1, 0], [2, 0])
        return {"models": {"a": _models(F, G)["a"]},
                "queries": [{"kind": "instance", "result": "lem8", "models": ["a"],
                             "params": {"ab": ab, "ce": ce, "lam": _lam(cert)}, "expect": {"conclusion": "holds"}}]}
    raise AssertionError(kind)


KINDS = ["compare", "parallel", "relational-gamma", "relational-tokens", "instance-thm5", "instance-lem8"]


def _as_float(value):
    return float(Fraction(value)) if isinstance(value, str) else float(value)


def _write(data: dict, realisation: str, folder: Path) -> Path:
    """The file in the realisation asked for: JSON as given, or ``.npz`` of the
    same numbers as floats (every entry here is a dyadic rational, so exact)."""
    if realisation == "exact":
        path = folder / "models.json"
        path.write_text(json.dumps(data))
        return path
    arrays = {}
    for name, spec in data["models"].items():
        arrays[f"{name}.F"] = np.array([[_as_float(v) for v in row] for row in spec["F"]])
        arrays[f"{name}.G"] = np.array([[_as_float(v) for v in row] for row in spec["G"]])
        arrays[f"{name}.pivot"] = np.array(0)
        for key in ("tokens", "contexts"):
            if key in spec:
                arrays[f"{name}.{key}"] = np.array(spec[key])
    arrays["queries"] = np.array(json.dumps(data["queries"]))
    path = folder / "models.npz"
    np.savez(path, **arrays)
    return path


def _strict(path: Path) -> dict:
    def refuse(constant):
        raise ValueError(f"{constant} is not strict JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


def _run(path: Path, out: Path, *extra):
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out), *extra])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def _text(result) -> str:
    return " ".join(result.stdout.split())


@pytest.mark.parametrize("cert", ["integer", "fractional"])
@pytest.mark.parametrize("realisation", ["exact", "float"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_query_kind_runs_on_exact_and_float_models(tmp_path, kind, realisation, cert):
    path = _write(_case(kind, cert), realisation, tmp_path)
    out = tmp_path / "report.json"
    result = _run(path, out)
    assert result.exit_code == 0, result.output
    report = _strict(out)
    assert report["realisation"] == realisation
    (query,) = report["queries"]
    results = {r["result"]: r for r in query["results"]}
    text = _text(result)
    if kind == "compare":
        thm5, cor6 = results["thm5"], results["cor6"]
        assert thm5["verdict"] == "equivalent" and cor6["verdict"] == "linearly identified"
        A = thm5["certificate"]["A"]
        if realisation == "exact":
            want = [["1", "0"], ["-1", "1"]] if cert == "integer" else [["1/2", "0"], ["0", "1/2"]]
            assert A == want
            assert ("A* = [1 0; -1 1]" if cert == "integer" else "A* = [1/2 0; 0 1/2]") in text
        else:
            want = [[1, 0], [-1, 1]] if cert == "integer" else [[0.5, 0], [0, 0.5]]
            assert np.allclose(A, want, atol=1e-12)
        summary = thm5["certificate_summary"]["A"]
        assert summary["shape"] == [2, 2] and summary["rank"] == 2
        golden = (1 + 5 ** 0.5) / 2  # the singular values of [[1, 0], [-1, 1]] are golden and 1/golden
        norm, cond = (golden, golden ** 2) if cert == "integer" else (0.5, 1.0)
        assert summary["norm"] == pytest.approx(norm) and summary["condition"] == pytest.approx(cond)
    elif kind == "parallel":
        r = results["lem8"]
        assert r["truth"] == "holds" and r["unique"] is True
        assert _as_float(r["lam"]) == pytest.approx(2.0 if cert == "integer" else 0.5)
        if realisation == "exact":
            assert r["lam"] == ("2" if cert == "integer" else "1/2")
    elif kind.startswith("relational"):
        r = results["thm14"]
        assert r["truth"] == "holds" and r["trivial"] is False, r
        if kind == "relational-tokens":
            assert r["from_log_odds"] == "relationally linear" and r["dim_gamma"] == 1
    else:
        (r,) = query["results"]
        assert r["as_expected"] is True, r
        assert r["statement"] == "holds"


@pytest.mark.parametrize("realisation", ["exact", "float"])
def test_a_large_fractional_certificate_is_summarised_with_its_exact_rank(tmp_path, realisation):
    """A certificate above 64 entries is summarised (shape, rank, norm,
    condition) unless --full; here A* = I/2 at d = 9, so every figure is known."""
    d = 9
    rows = [[int(i == j) + (i + 2 * j) % 3 for j in range(d)] for i in range(d + 3)]
    Gd = [[0] * d] + [[(3 * i + j) % 4 - (i == j) for j in range(d)] for i in range(d + 1)]
    data = {"models": {"a": {"F": rows, "G": Gd},
                       "b": {"F": [[2 * v for v in r] for r in rows], "G": [[str(Fraction(v, 2)) for v in r] for r in Gd]}},
            "queries": [{"kind": "compare", "models": ["a", "b"]}]}
    path = _write(data, realisation, tmp_path)
    out = tmp_path / "r.json"
    result = _run(path, out)
    assert result.exit_code == 0, result.output
    thm5 = _strict(out)["queries"][0]["results"][0]
    k = thm5["k"][0]
    assert thm5["verdict"] == "equivalent" and "certificate" not in thm5
    summary = thm5["certificate_summary"]["A"]
    assert summary["shape"] == [d, d] and summary["rank"] == k
    assert summary["norm"] == pytest.approx(0.5) and summary["condition"] == pytest.approx(1.0)
    assert "--full prints them" in _text(result)
    full = _run(path, out, "--full")
    assert full.exit_code == 0, full.output
    A = _strict(out)["queries"][0]["results"][0]["certificate"]["A"]
    assert len(A) == d and _as_float(A[0][0]) == pytest.approx(0.5)


def test_the_readme_witness_file_with_a_compare_query(tmp_path):
    """README: save a check witness as a file and verify it; with a compare
    query added, Theorem 5's certificate of that witness is fractional."""
    report = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["check", "thm5", "--trials", "20", "--json", str(report)])
    assert r.exit_code == 0, r.output
    witness = json.loads(report.read_text())["results"][0]["witness"]["instance"]
    witness["queries"].append({"kind": "compare", "models": list(witness["models"])})
    path = tmp_path / "w.json"
    path.write_text(json.dumps(witness))
    out = tmp_path / "v.json"
    result = _run(path, out)
    assert result.exit_code == 0, result.output
    inst, cmp = _strict(out)["queries"]
    assert inst["results"][0]["as_expected"] is True
    assert cmp["results"][0]["verdict"] == "equivalent"
    entries = [Fraction(v) for row in cmp["results"][0]["certificate"]["A"] for v in row]
    assert any(v.denominator != 1 for v in entries)  # the case that was read as a float
