"""The command line under user mistakes: every bad option value, argument or file
gives exactly one line on stderr naming the problem, exit status 2, no traceback,
and nothing written (no report, no counterexample files); correct runs give valid
JSON with the documented fields, and the files of ``allornone edges`` reproduce
with ``allornone verify``."""
from __future__ import annotations

import json
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.theorems import records
from allornone.theorems.engine.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "two_models.json"

#: Mistakes that ``theorems/engine/cli.py`` does not yet turn into one line (click's
#: usage errors print four; a --json path in a missing folder is a traceback
#: after the work is done).

GOOD = {"models": {"a": {"F": [[1, 0], [0, 1], [1, 1]], "G": [[0, 0], [1, 1]]},
                   "b": {"F": [[1, 0], [0, 1], [1, 1]], "G": [[0, 0], [2, 1]]}}}


def _with(path, value, data=GOOD):
    data = json.loads(json.dumps(data))
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data)


def _queries(*queries):
    return json.dumps(GOOD | {"queries": list(queries)})


def _npz(**arrays):
    def write(path):
        np.savez(path, **arrays)
    return write


def _zip(**members):
    def write(path):
        with zipfile.ZipFile(path, "w") as z:
            for name, text in members.items():
                z.writestr(name, text)
    return write


def _damaged(path):
    np.savez(path, **{"a.F": np.ones((3, 2)), "a.G": np.arange(6.0).reshape(3, 2)})
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))


F2 = np.ones((3, 2))
G2 = np.arange(6.0).reshape(3, 2)


# -- files whose headers lie about their size (declared shapes checked before any allocation)

#: A header claiming 10^8 x 10^5 float64 entries (72.8 TiB) over a few bytes of data.
HUGE = (10 ** 8, 10 ** 5)


def _npy_bytes(shape, data: bytes, descr: str = "<f8") -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def _npy_of(arr) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _lying_npy(path):
    path.write_bytes(_npy_bytes(HUGE, b"\0" * 80))


def _lying_npz_member(path, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as z:
        z.writestr("features.npy", _npy_of(np.ones((3, 4))))
        z.writestr("weight.npy", _npy_bytes(HUGE, b"\0" * 80))


def _lying_safetensors(path, offsets=(0, 80)):
    import struct

    header = json.dumps({"weight": {"dtype": "F32", "shape": list(HUGE), "data_offsets": list(offsets)}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 80)


def _safetensors_beyond_the_file(path):
    _lying_safetensors(path, offsets=(0, 4 * 10 ** 13))


def _safetensors_header_beyond_the_file(path):
    import struct

    path.write_bytes(struct.pack("<Q", 10 ** 12) + b"{}")


def _truncated_npy(path):
    data = _npy_of(np.arange(4000.0).reshape(1000, 4))
    path.write_bytes(data[: len(data) // 2])


def _truncated_npz(path):
    np.savez(path, features=np.ones((3, 4)), weight=np.arange(4000.0).reshape(1000, 4))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _features(path):
    np.save(path, np.ones((3, 4)))


def _lying_npz_for_verify(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.F.npy", _npy_bytes(HUGE, b"\0" * 80))
        z.writestr("a.G.npy", _npy_of(np.ones((3, 2))))


def _lying_zip_directory(path):
    """A stored member whose size in the central directory is 4 GiB."""
    import struct

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("features.npy", _npy_of(np.ones((3, 4))))
        z.writestr("weight.npy", _npy_of(np.ones((5, 4))))
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02", data.find(b"PK\x01\x02") + 4)  # the second member's directory entry
    data[at + 24:at + 28] = struct.pack("<I", 0xFFFFFFF0)
    path.write_bytes(bytes(data))


def _analyse(head):
    return ["analyse", "--features", "x.npy", "--head", head]

# (id, argv, files to create, text the error line must contain)
CASES = [
    # options and arguments
    pytest.param(["check", "--trials", "0"], {}, "--trials", id="check-trials-0"),
    pytest.param(["check", "--trials", "abc"], {}, "--trials", id="check-trials-abc"),
    pytest.param(["check", "--trials", "-3"], {}, "--trials", id="check-trials-negative"),
    pytest.param(["check", "--jobs", "0"], {}, "--jobs", id="check-jobs-0"),
    pytest.param(["check", "--jobs", "x"], {}, "--jobs", id="check-jobs-x"),
    pytest.param(["check", "--seed", "x"], {}, "--seed", id="check-seed-x"),
    pytest.param(["check", "--frobnicate"], {}, "--frobnicate", id="check-unknown-option"),
    pytest.param(["check", "thm99"], {}, "thm99", id="check-unknown-id"),
    pytest.param(["check", "thm5", "--trials", "1", "--json", "/nonexistent/dir/r.json"], {}, "/nonexistent",
                 id="check-json-missing-folder"),
    pytest.param(["check", "thm5", "--trials", "1", "--json", "sub"], {"sub/keep": ""}, "sub",
                 id="check-json-is-a-folder"),
    pytest.param(["list", "extra"], {}, "extra", id="list-extra-argument"),
    pytest.param(["frobnicate"], {}, "frobnicate", id="unknown-command"),
    pytest.param(["--frobnicate"], {}, "--frobnicate", id="unknown-group-option"),
    pytest.param(["proof", "thm5", "--seed", "x"], {}, "--seed", id="proof-seed-x"),
    pytest.param(["proof"], {}, "ID", id="proof-missing-id"),
    pytest.param(["proof", "thm5", "cor6"], {}, "cor6", id="proof-two-ids"),
    pytest.param(["proof", "nope"], {}, "nope", id="proof-unknown-id"),
    pytest.param(["edges", "cor6", "--hypothesis", "nope"], {}, "nope", id="edges-unknown-hypothesis"),
    pytest.param(["edges", "thm5", "--hypothesis", "x"], {}, "'x'", id="edges-hypothesis-of-none"),
    pytest.param(["edges", "zz"], {}, "zz", id="edges-unknown-id"),
    pytest.param(["edges", "cor6", "--seed", "x"], {}, "--seed", id="edges-seed-x"),
    pytest.param(["edges"], {}, "ID", id="edges-missing-id"),
    pytest.param(["edges", "cor6", "--hypothesis", "diversity", "--json", "/nonexistent/d/r.json"], {},
                 "/nonexistent", id="edges-json-missing-folder"),
    pytest.param(["edges", "cor6", "--hypothesis", "diversity", "--json", "sub"], {"sub/keep": ""}, "sub",
                 id="edges-json-is-a-folder"),
    pytest.param(["edges", "cor6", "--hypothesis", "diversity"], {"allornone-edges": "a file"}, "allornone-edges",
                 id="edges-output-folder-is-a-file"),
    pytest.param(["verify"], {}, "FILE", id="verify-missing-argument"),
    pytest.param(["verify", "nofile.json"], {}, "nofile.json", id="verify-no-such-file"),
    pytest.param(["verify", "sub"], {"sub/keep": ""}, "sub", id="verify-a-folder"),
    pytest.param(["verify", "f.json", "--json", "/nonexistent/x/r.json"], {"f.json": json.dumps(GOOD)},
                 "/nonexistent", id="verify-json-missing-folder"),
    pytest.param(["verify", "f.json", "--json", "sub"], {"f.json": json.dumps(GOOD), "sub/keep": ""}, "sub",
                 id="verify-json-is-a-folder"),
    # JSON files
    pytest.param(["verify", "f.json"], {"f.json": ""}, "f.json: not valid JSON", id="empty-file"),
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": {"F": [[1]], "G": [[0], [1]]}, '
                                                  '"a": {"F": [[2]], "G": [[0], [1]]}}}'},
                 "f.json: the key 'a' is given twice in one object", id="json-duplicate-key"),
    pytest.param(["verify", "f.json"], {"f.json": "{}"}, "models: missing", id="empty-object"),
    pytest.param(["verify", "f.json"], {"f.json": "[1, 2]"}, "top level", id="list-at-top-level"),
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": [1]}}'}, "models.a", id="model-not-an-object"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F"], "abc")}, "models.a.F", id="F-string"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F"], [1, 2])}, "models.a.F[0]",
                 id="F-one-dimensional"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F"], [[]])}, "models.a.F[0]",
                 id="F-empty-row"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "G"], [[0, 0]])}, "models.a",
                 id="G-one-row"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F", 2], [1])}, "models.a.F[2]",
                 id="ragged-rows"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F"], [[1, 0, 0]])}, "models.a",
                 id="F-G-dimensions-differ"),
    *[pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "pivot"], v)}, "models.a.pivot",
                   id=f"pivot-{v!r}") for v in (-1, 5, "a", True, 1.0, None)],
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": {"F": [[NaN]], "G": [[0], [1]]}}}'},
                 "models.a.F[0][0]: nan", id="NaN"),
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": {"F": [[-Infinity]], "G": [[0], [1]]}}}'},
                 "models.a.F[0][0]", id="minus-Infinity"),
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": {"F": [[1e400]], "G": [[0], [1]]}}}'},
                 "models.a.F[0][0]", id="1e400-literal"),
    pytest.param(["verify", "f.json"], {"f.json": '{"models": {"a": {"F": [[1e3]], "G": [[0], [1]]}}}'},
                 "is a float", id="1e3-literal"),
    *[pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F", 0, 0], v)}, "models.a.F[0][0]",
                   id=f"entry-{v!r}") for v in ("1e3", "0.5", "3/0", "nan", "-inf", "", "x", "1/-2", None, [1])],
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "F", 0, 0], "1" + "0" * 5000)},
                 "5001 digits", id="string-beyond-the-digit-limit"),
    pytest.param(["verify", "f.json"],
                 {"f.json": '{"models": {"a": {"F": [[1%s]], "G": [[0], [1]]}}}' % ("0" * 5000)},
                 "line 1 column 26", id="literal-beyond-the-digit-limit"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "tokens"], ["p", "p"])}, "models.a.tokens",
                 id="duplicated-token-names"),
    pytest.param(["verify", "f.json"], {"f.json": _with(["models", "a", "contexts"], ["p", "q"])},
                 "models.a.contexts", id="context-names-wrong-length"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"contexts": ["p"]})}, "models.a.F",
                 id="shared-context-names-wrong-length"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"tokens": "ab"})}, "tokens",
                 id="token-names-a-string"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"description": 5})}, "description",
                 id="description-not-text"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"format": "allornone/2"})}, "format",
                 id="unknown-format"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"modles": {}})}, "modles", id="typo-key"),
    pytest.param(["verify", "f.json"], {"f.json": "[" * 100000 + "]" * 100000}, "nested", id="deep-nesting"),
    pytest.param(["verify", "f.json"], {"f.json": bytes(range(256))}, "UTF-8", id="binary-garbage"),
    pytest.param(["verify", "f.txt"], {"f.txt": "hello"}, "f.txt: not valid JSON", id="txt-extension"),
    # queries
    pytest.param(["verify", "f.json"], {"f.json": _queries({"kind": "compare", "models": ["a", "zz"]})},
                 "queries[0].models[1]", id="query-missing-model"),
    pytest.param(["verify", "f.json"], {"f.json": _queries({"kind": "compare", "models": ["a", "b", "a"]})},
                 "queries[0].models", id="compare-three-models"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _with(["models", "b", "G"], [[0, 0], [1, 1], [2, 2]],
                                  GOOD | {"queries": [{"kind": "compare", "models": ["a", "b"]}]})},
                 "vocabularies differ", id="mixed-vocabularies"),
    pytest.param(["verify", "f.json"], {"f.json": _queries({"kind": "frobnicate"})}, "queries[0].kind",
                 id="unknown-query-kind"),
    pytest.param(["verify", "f.json"], {"f.json": _queries({})}, "queries[0].kind", id="query-without-kind"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps(GOOD | {"queries": {"a": 1}})}, "queries",
                 id="queries-not-a-list"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "parallel", "model": "a", "tokens": [[0, 5], [1, 0]]})},
                 "queries[0].tokens[0][1]", id="token-index-out-of-range"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "parallel", "model": "a", "tokens": [[0, 1], [1, 0]], "space": "M"})},
                 "queries[0].space", id="parallel-space"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "relational", "model": "a", "pairs": [[0, 1]],
                                      "gamma": [[1], [0], [0]]})},
                 "queries[0].gamma", id="gamma-wrong-dimension"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "relational", "model": "a", "pairs": [[0, 9]], "gamma": [[1], [0]]})},
                 "queries[0].pairs[0][1]", id="context-index-out-of-range"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "instance", "result": "thm99", "models": ["a", "b"]})},
                 "queries[0].result", id="instance-unknown-result"),
    pytest.param(["verify", "f.json"], {"f.json": _queries({"kind": "instance", "result": "cor6", "models": ["a"]})},
                 "cor6 takes 2 model(s)", id="instance-model-count"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "instance", "result": "thm5", "models": ["a", "b"],
                                      "params": {"ab": [0, 1]}})},
                 "queries[0].params.ab", id="instance-unknown-param"),
    pytest.param(["verify", "f.json"],
                 {"f.json": _queries({"kind": "instance", "result": "cor6", "models": ["a", "b"],
                                      "expect": {"zz": "holds"}})},
                 "queries[0].expect.zz", id="instance-unknown-atom"),
    # .npz files
    pytest.param(["verify", "f.npz"], {"f.npz": bytes(range(256))}, "not a .npz file", id="npz-garbage"),
    pytest.param(["verify", "f.npz"], {"f.npz": b""}, "not a .npz file", id="npz-empty"),
    pytest.param(["verify", "f.npz"], {"f.npz": _damaged}, "damaged", id="npz-damaged"),
    pytest.param(["verify", "f.npz"], {"f.npz": _zip(**{"a.F.npy": "hello"})}, "a.F", id="npz-member-not-npy"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2})}, "missing G", id="npz-missing-G"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": np.array([[np.nan, 1.0]]), "a.G": G2[:, :2]})},
                 "a.F[0][0]: nan", id="npz-NaN"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": np.array([[1.0, np.inf]]), "a.G": G2})},
                 "a.F[0][1]", id="npz-inf"),
    # (a long double beyond binary64's largest number where the platform has one, else inf)
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": np.array([[np.longdouble(1e300) * 1e100, 1.0]]),
                                                       "a.G": G2})},
                 "a.F[0][0]", id="npz-beyond-binary64"),
    pytest.param(["verify", "f.npz"],
                 {"f.npz": _npz(**{"a.F": np.full((3, 2), np.longdouble(1e300)) * 1e300, "a.G": G2})},
                 "a.F[0][0]", id="npz-longdouble-beyond-float64"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": np.ones(2), "a.G": G2})}, "2-D", id="npz-1-D"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2 * 1j, "a.G": G2})}, "numeric", id="npz-complex"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2, "a.pivot": np.array(9)})},
                 "a.pivot", id="npz-pivot-out-of-range"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2, "a.pivot": np.array(0.0)})},
                 "a.pivot", id="npz-pivot-float"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2, "queries": np.array("[")})},
                 "queries", id="npz-queries-not-json"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{".F": F2, ".G": G2})}, ".F", id="npz-empty-model-name"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2, "a.weights": F2})}, "a.weights",
                 id="npz-unknown-array"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz()}, "models", id="npz-no-arrays"),
    # headers that declare more than the file holds: refused before anything is allocated
    pytest.param(_analyse("w.npy"), {"x.npy": _features, "w.npy": _lying_npy},
                 "w.npy: its header declares shape (100000000, 100000) of 8-byte entries (72.8 TiB), but the file "
                 "holds 80 B", id="analyse-lying-npy"),
    pytest.param(_analyse("w.npz:weight"), {"x.npy": _features, "w.npz": _lying_npz_member},
                 "w.npz:weight: its header declares shape (100000000, 100000)", id="analyse-lying-npz-member"),
    pytest.param(_analyse("w.npz:weight"), {"x.npy": _features,
                                            "w.npz": lambda p: _lying_npz_member(p, zipfile.ZIP_DEFLATED)},
                 "w.npz:weight: its header declares shape (100000000, 100000)",
                 id="analyse-lying-compressed-npz-member"),
    pytest.param(_analyse("w.npz:weight"), {"x.npy": _features, "w.npz": _lying_zip_directory},
                 "w.npz:weight: a stored member declares 4 GiB", id="analyse-lying-npz-directory"),
    pytest.param(_analyse("w.safetensors:weight"), {"x.npy": _features, "w.safetensors": _lying_safetensors},
                 "w.safetensors:weight: its header declares shape (100000000, 100000) of 4-byte entries",
                 id="analyse-lying-safetensors-shape"),
    pytest.param(_analyse("w.safetensors:weight"), {"x.npy": _features,
                                                    "w.safetensors": _safetensors_beyond_the_file},
                 "w.safetensors:weight: its header places it at bytes 0..40000000000000",
                 id="analyse-safetensors-beyond-the-file"),
    pytest.param(_analyse("w.safetensors:weight"), {"x.npy": _features,
                                                    "w.safetensors": _safetensors_header_beyond_the_file},
                 "w.safetensors: its header declares 931 GiB of metadata", id="analyse-safetensors-header-length"),
    pytest.param(_analyse("w.npy"), {"x.npy": _features, "w.npy": _truncated_npy},
                 "w.npy: its header declares shape (1000, 4) of 8-byte entries (31.2 KiB), but the file holds "
                 "15.6 KiB", id="analyse-truncated-npy"),
    pytest.param(_analyse("w.npz:weight"), {"x.npy": _features, "w.npz": _truncated_npz}, "w.npz",
                 id="analyse-truncated-npz"),
    pytest.param(["compare", "--features", "x.npy", "--head", "x.npy", "--features", "x.npy", "--head", "w.npy"],
                 {"x.npy": _features, "w.npy": _lying_npy}, "second model: w.npy: its header declares",
                 id="compare-lying-npy"),
    pytest.param(["verify", "f.npz"], {"f.npz": _lying_npz_for_verify},
                 "f.npz:a.F: its header declares shape (100000000, 100000)", id="verify-lying-npz-member"),
    # accepted sizes that would exhaust memory: refused before anything is built
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": np.zeros((10 ** 6, 0)), "a.G": G2})},
                 "rows must not be empty", id="npz-a-million-empty-rows"),
    pytest.param(["check", "thm5", "--trials", "100000000"], {}, "--trials", id="check-trials-beyond-the-limit"),
    pytest.param(["make"], {}, "Choose from: reparam, twin, perturb", id="make-without-a-kind"),
    # a single-valued option given twice: click would keep the last silently
    pytest.param(["analyse", "--features", "x.npy", "--features", "y.npy", "--head", "w.npy"],
                 {"x.npy": _features, "y.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "--features is given 2 times; it takes one value", id="analyse-two-features"),
    pytest.param(["check", "thm5", "--trials=3", "--trials", "4"], {}, "--trials is given 2 times",
                 id="check-trials-twice"),
    pytest.param(_analyse("w.npy"), {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((0, 4)))},
                 "--head w.npy has no tokens (0 x 4)", id="analyse-head-without-tokens"),
    pytest.param(["check", "thm5", "--jobs", "100000"], {}, "--jobs", id="check-jobs-beyond-the-limit"),
    # a tolerance whose "holds" bound sqrt(gap) rtol reaches 1 tests nothing: two
    # unrelated models were called equivalent at --rtol 0.1 or --gap 1e30
    pytest.param(_analyse("w.npy") + ["--rtol", "0.1"], {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "sqrt(gap) * rtol < 1 (here 3.16)", id="analyse-rtol-vacuous"),
    pytest.param(["compare", "--features", "x.npy", "--head", "w.npy", "--features", "x.npy", "--head", "w.npy",
                  "--gap", "1e30"],
                 {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "sqrt(gap) * rtol < 1 (here 1e+03)", id="compare-gap-vacuous"),
    pytest.param(["check", "thm5", "--json", "/proc/allornone-report.json"], {}, "cannot be written",
                 id="check-json-the-system-refuses",
                 marks=pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc file system")),
    # text nested deeper than the parsers recurse, or an integer longer than Python
    # reads: each parse of JSON or TOML text turns both into the one line
    pytest.param(["study", "s.toml", "--scheduler", "none"], {"s.toml": "x = " + "[" * 5000 + "]" * 5000},
                 "s.toml: nested too deeply to be read as TOML", id="study-toml-nested-deeply"),
    pytest.param(["study", "s.toml", "--scheduler", "none"], {"s.toml": "draws = 1" + "0" * 5000},
                 "s.toml: line 1 column 9: an integer with 5001 digits", id="study-toml-long-integer"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2,
                                                        "queries": np.array("[" * 100000 + "]" * 100000)})},
                 "queries: nested too deeply to be read as JSON", id="npz-queries-nested-deeply"),
    pytest.param(["verify", "f.npz"], {"f.npz": _npz(**{"a.F": F2, "a.G": G2,
                                                        "queries": np.array("[1" + "0" * 5000 + "]")})},
                 "queries: line 1 column 2: an integer with 5001 digits", id="npz-queries-long-integer"),
    pytest.param(_analyse("w.npy") + ["--parallel", "[" * 100000 + "]" * 100000],
                 {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "nested too deeply to be read as JSON", id="analyse-parallel-nested-deeply"),
    pytest.param(_analyse("w.npy") + ["--parallel", "[[1" + "0" * 5000 + ", 2], [3, 4]]"],
                 {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "line 1 column 3: an integer with 5001 digits", id="analyse-parallel-long-integer"),
    pytest.param(_analyse("w.npy") + ["--tokens", "t.json"],
                 {"x.npy": _features, "w.npy": lambda p: np.save(p, np.ones((5, 4))),
                  "t.json": "[" * 100000 + "]" * 100000},
                 "--tokens t.json: nested too deeply to be read as JSON", id="analyse-tokens-nested-deeply"),
    # NumPy reads a .npy header as Python tokens: an unclosed brace is a TokenError
    pytest.param(_analyse("w.npy"), {"x.npy": _features,
                                     "w.npy": lambda p: p.write_bytes(_npy_of(np.ones((5, 4))).replace(b"}", b" ", 1))},
                 "w.npy: not a readable .npy array", id="analyse-npy-header-unclosed"),
    # JSON's escape of a lone surrogate makes a name no report can print
    pytest.param(["verify", "f.json"], {"f.json": _with(["contexts"], ["the \ud800cat", "x1", "x2"])},
                 "contexts name 0 ('the \\ud800cat') holds a lone surrogate", id="json-name-lone-surrogate"),
    pytest.param(["verify", "f.json"], {"f.json": json.dumps({"models": {"\ud800": GOOD["models"]["a"]}})},
                 "models: the name '\\ud800' holds a lone surrogate", id="json-model-name-lone-surrogate"),
    # a path that is not a regular file is named as what it is
    pytest.param(_analyse("w.npy"), {"x.npy": _features, "w.npy/keep": ""}, "--head w.npy: a folder, not a file",
                 id="analyse-head-a-folder"),
    pytest.param(["analyse", "--features", "/dev/null", "--head", "w.npy"],
                 {"w.npy": lambda p: np.save(p, np.ones((5, 4)))},
                 "/dev/null: not a regular file", id="analyse-features-a-device",
                 marks=pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")),
    # a target whose moved bias leaves binary64 is not written
    pytest.param(["make", "perturb", "--features", "x.npz:features", "--head", "x.npz:weight", "--bias", "bias",
                  "--token", "1", "--amount", "1.7e308", "--out", "t.npz"],
                 {"x.npz": _npz(features=np.ones((3, 4)), weight=np.ones((5, 4)),
                                bias=np.array([0.0, 1.7e308, 0, 0, 0]))},
                 "--amount 1.7e+308: the bias of token 1 moved by it", id="make-perturb-bias-beyond-binary64"),
    pytest.param(["make", "perturb", "--features", "x.npz:features", "--head", "x.npz:weight",
                  "--token", "1", "--amount", "1", "--context", "0", "--out", "t.npz"],
                 {"x.npz": _npz(features=np.full((3, 4), 1e300), weight=np.vstack([np.zeros((1, 4)),
                                                                                   np.full((4, 4), 1e10)]))},
                 "make perturb: the target's log-odds or their difference from the head's are not finite",
                 id="make-perturb-log-odds-beyond-binary64"),
]


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


@pytest.mark.parametrize("argv,files,needle", CASES)
def test_a_user_mistake_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, argv, files, needle):
    monkeypatch.chdir(tmp_path)
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    before = _tree(tmp_path)
    result = CliRunner().invoke(main, argv)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    assert result.stdout == ""
    assert _tree(tmp_path) == before


def _strict_json(path: Path):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


def test_verify_json_report_has_the_documented_fields(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["verify", str(EXAMPLE), "--json", str(out)])
    assert result.exit_code == 0, result.output
    report = _strict_json(out)
    assert {"format", "realisation", "file", "models", "queries"} <= set(report)
    for info in report["models"].values():
        assert set(info) == {"m", "n", "d", "pivot", "k", "dim_M", "dim_N", "dim_SF", "dim_SG", "diverse", "decided"}
    for q in report["queries"]:
        assert {"index", "kind", "models", "results"} <= set(q)
        assert all("result" in r and "verdict" in r for r in q["results"])


def test_huge_integers_are_exact(tmp_path):
    big = 10 ** 400
    data = {"models": {"a": {"F": [[big, 1], [0, 1]], "G": [[0, 0], [1, f"1/{big}"], [2, 3]]},
                       "b": {"F": [[big, 1], [0, 1]], "G": [[0, 0], [1, 1], [2, 3]]}}}
    path, out = tmp_path / "big.json", tmp_path / "r.json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    thm5 = _strict_json(out)["queries"][0]["results"][0]
    assert thm5["verdict"] == "not equivalent"
    w = thm5["witness"]
    assert w["token"] == "y1" and Fraction(w["L"]) - Fraction(w["L~"]) == Fraction(1, big) - 1


def test_names_are_shown_as_text_not_markup(tmp_path):
    data = {"tokens": ["[/]", "[bold]"], "contexts": ["[/x]", "b", "c"],
            "models": {"[red]a": GOOD["models"]["a"], "b": GOOD["models"]["b"]}}
    path = tmp_path / "[x].json"
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 0, result.output
    assert "[red]a" in result.stdout and "[/x]" in result.stdout and "[x].json" in result.stdout


def test_edges_files_reproduce_with_verify_and_the_json_is_valid(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["edges", "thm15", "--json", "e.json"])
    assert result.exit_code == 0, result.output
    payload = _strict_json(tmp_path / "e.json")
    saved = [h for h in payload["hypotheses"] if h["status"] == "counterexample"]
    assert saved and sorted(p.name for p in (tmp_path / "allornone-edges").iterdir()) == \
        sorted(Path(h["path"]).name for h in saved)
    for h in saved:
        assert {"status", "label", "source", "budget", "tried", "samples", "elapsed_s", "size", "size_found",
                "within_bound", "exact", "float", "float_artefacts", "notes", "file", "path"} <= set(h)
        assert json.loads(Path(h["path"]).read_text()) == h["file"]
        out = tmp_path / "v.json"
        check = runner.invoke(main, ["verify", h["path"], "--json", str(out)])
        assert check.exit_code == 0, check.output
        (query,) = _strict_json(out)["queries"]
        assert query["results"][0]["as_expected"] is True


def test_edges_file_names_are_ascii():
    from allornone.theorems.engine.edges import _slug

    names = [f"{rid}-drop-{_slug(h.name)}.json" for rid, rec in records().items() for h in rec.hypotheses]
    assert all(n.isascii() and "--" not in n for n in names), names
    assert len(set(names)) == len(names)


def test_edges_without_a_counterexample_file_saves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["edges", "thm5"])
    assert result.exit_code == 0, result.output
    assert list(tmp_path.iterdir()) == []


def test_check_runs_each_id_once(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["check", "thm5", "thm5", "--trials", "4", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in _strict_json(out)["results"]] == ["thm5"]


def test_verify_does_not_overwrite_its_own_file_with_the_report(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(GOOD))
    result = CliRunner().invoke(main, ["verify", str(path), "--json", str(path)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert json.loads(path.read_text()) == GOOD


def test_no_arguments_shows_the_help():
    result = CliRunner().invoke(main, [])
    assert "Usage:" in result.output and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 2)


@pytest.mark.parametrize("suffix", [".npy", ".npz", ".safetensors", ".pt"])
def test_an_honest_file_larger_than_memory_is_refused_in_one_line(tmp_path, monkeypatch, suffix):
    """The declared size is also checked against the memory there is, here a
    ceiling of 64 KiB (ALLORNONE_MEMORY_LIMIT) under a 300 x 300 head."""
    monkeypatch.chdir(tmp_path)
    W = np.ones((300, 300), dtype=np.float32)
    np.save("x.npy", np.ones((3, 300)))
    if suffix == ".npy":
        np.save("w.npy", W)
        head = "w.npy"
    elif suffix == ".npz":
        np.savez_compressed("w.npz", weight=W)
        head = "w.npz:weight"
    elif suffix == ".safetensors":
        from safetensors.numpy import save_file

        save_file({"weight": W}, "w.safetensors")
        head = "w.safetensors:weight"
    else:
        torch = pytest.importorskip("torch")
        torch.save({"weight": torch.ones(300, 300)}, "w.pt")
        head = "w.pt:weight"
    result = CliRunner().invoke(main, _analyse(head), env={"ALLORNONE_MEMORY_LIMIT": "64K"})
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    assert "of memory once read as 64-bit floats, more than the 64 KiB ALLORNONE_MEMORY_LIMIT allows" in lines[0]
    ok = CliRunner().invoke(main, _analyse(head), env={"ALLORNONE_MEMORY_LIMIT": "64M"})
    assert ok.exit_code == 0, ok.output


def test_a_lying_torch_archive_is_refused_before_it_is_loaded(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import struct

    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.ones((3, 4)))
    torch.save({"weight": torch.ones(5, 4)}, "w.pt")
    data = bytearray(Path("w.pt").read_bytes())
    with zipfile.ZipFile("w.pt") as z:
        storage = next(i.filename for i in z.infolist() if i.filename.endswith("data/0")).encode()
    at = data.find(b"PK\x01\x02")  # the central directory's entries, until the storage's
    while data[at + 46:at + 46 + len(storage)] != storage:
        at = data.find(b"PK\x01\x02", at + 4)
    data[at + 24:at + 28] = struct.pack("<I", 0xFFFFFFF0)  # the storage's size in the central directory
    Path("w.pt").write_bytes(bytes(data))
    result = CliRunner().invoke(main, _analyse("w.pt:weight"))
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "w.pt: member" in lines[0] and "declares 4 GiB" in lines[0]


def test_a_torch_tensor_whose_shape_exceeds_its_storage_is_one_line(tmp_path, monkeypatch):
    """The pickled shape (5, 4) rewritten as (255, 255), the archive's CRCs mended:
    the memory-mapped storage cannot grow, so nothing is allocated and the
    file is refused in one line."""
    torch = pytest.importorskip("torch")
    import struct
    import zlib

    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.ones((3, 255)))
    torch.save({"weight": torch.ones(5, 4)}, "w.pt")
    data = bytearray(Path("w.pt").read_bytes())
    at = data.find(b"K\x05K\x04")  # the shape, two one-byte ints in the pickle
    assert at > 0
    data[at:at + 4] = b"K\xffK\xff"
    with zipfile.ZipFile("w.pt") as z:
        info = next(i for i in z.infolist() if i.filename.endswith("data.pkl"))
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    crc = struct.pack("<I", zlib.crc32(bytes(data[start:start + info.compress_size])) & 0xFFFFFFFF)
    data[info.header_offset + 14:info.header_offset + 18] = crc
    entry = data.find(b"PK\x01\x02")
    while entry >= 0:
        n = struct.unpack("<H", data[entry + 28:entry + 30])[0]
        if bytes(data[entry + 46:entry + 46 + n]) == info.filename.encode():
            data[entry + 16:entry + 20] = crc
        entry = data.find(b"PK\x01\x02", entry + 4)
    Path("w.pt").write_bytes(bytes(data))
    result = CliRunner().invoke(main, _analyse("w.pt:weight"))
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith("error: w.pt: ")


def test_verify_refuses_float_models_whose_checks_would_not_fit_in_memory(tmp_path, monkeypatch):
    """An array that fits the memory allowed, but whose checks hold several
    copies of it: refused before anything is read, in one line."""
    path = tmp_path / "tall.npz"
    np.savez_compressed(path, **{"a.F": np.zeros((2_000_000, 2)), "a.G": np.eye(3, 2)})
    monkeypatch.setenv("ALLORNONE_MEMORY_LIMIT", "64M")
    result = CliRunner().invoke(main, ["verify", str(path)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "needs about 183 MiB of memory" in lines[0] and "nothing was read" in lines[0], lines[0]


@pytest.mark.parametrize("limit", ["-5", "lots", "inf", "nanG"])
def test_a_memory_limit_that_is_no_number_of_bytes_is_one_line(tmp_path, monkeypatch, limit):
    monkeypatch.chdir(tmp_path)
    _features(tmp_path / "x.npy")
    np.save(tmp_path / "w.npy", np.ones((5, 4)))
    result = CliRunner().invoke(main, _analyse("w.npy"), env={"ALLORNONE_MEMORY_LIMIT": limit})
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith("error: ALLORNONE_MEMORY_LIMIT=") and "expected a number of bytes" in lines[0]


def test_a_defect_of_the_package_is_one_line_with_its_own_exit_status(monkeypatch):
    """An exception that is no input error (a defect of the package) is still
    one line, exit status 3, naming the exception; ALLORNONE_TRACEBACK=1 lets
    it through with its traceback."""
    from allornone.theorems.engine import verify as verify_module

    def broken(*args, **kwargs):
        raise ValueError("a planted defect\nover two lines")
    monkeypatch.setattr(verify_module, "verify_file", broken)
    result = CliRunner().invoke(main, ["verify", "whatever.json"])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 3 and len(lines) == 1, result.output
    assert lines[0].startswith("error: internal error (ValueError: a planted defect over two lines)")
    assert "Traceback" not in result.output and "ALLORNONE_TRACEBACK=1" in lines[0]
    result = CliRunner().invoke(main, ["verify", "whatever.json"], env={"ALLORNONE_TRACEBACK": "1"})
    assert isinstance(result.exception, ValueError)


def test_a_bare_bias_key_beside_a_single_npy_head_says_what_was_looked_for(tmp_path, monkeypatch):
    """``--bias KEY`` names a key of the head's file; beside a head that is a
    bare ``.npy`` array (one unnamed array) the message says so, not "drop
    ':KEY'" of a spec the user never wrote."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.save("F.npy", rng.standard_normal((6, 3)))
    np.save("G.npy", rng.standard_normal((5, 3)))
    result = CliRunner().invoke(main, ["analyse", "--features", "F.npy", "--head", "G.npy", "--bias", "bias"])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "--bias bias: no file of that name" in lines[0] and "give --bias FILE[:KEY]" in lines[0]
    assert "drop" not in lines[0]


def test_a_head_that_does_not_fit_the_features_is_refused_before_they_are_read(tmp_path, monkeypatch):
    """The features' header gives their columns: a head of another width is
    refused before the features are read (they may be gigabytes)."""
    from allornone.numeric import loaders

    np.save(tmp_path / "F.npy", np.zeros((50, 7)))
    np.save(tmp_path / "G.npy", np.zeros((9, 3)))

    def unread(*args, **kwargs):
        raise AssertionError("the features were read")
    monkeypatch.setattr(loaders, "feature_source", unread)
    result = CliRunner().invoke(main, ["analyse", "--features", str(tmp_path / "F.npy"), "--head",
                                       str(tmp_path / "G.npy")])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "is 9x3 but --features" in lines[0] and "has d = 7 columns" in lines[0]


def test_a_write_that_fails_midway_leaves_the_file_that_was_there(tmp_path):
    """Under a file size limit of 1 KiB (as a full disk would) the report
    cannot be written whole: the command says so in one line, and the file
    that was at the path before is kept, with no partial file beside it."""
    import resource
    import signal
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    np.save(tmp_path / "F.npy", rng.standard_normal((40, 5)))
    np.save(tmp_path / "G.npy", rng.standard_normal((30, 5)))
    out = tmp_path / "r.json"
    out.write_text("kept")

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # a write beyond the limit fails, not the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
    r = subprocess.run([sys.executable, "-m", "allornone.theorems.engine.cli", "analyse", "--features",
                        str(tmp_path / "F.npy"), "--head", str(tmp_path / "G.npy"), "--json", str(out)],
                       capture_output=True, text=True, preexec_fn=limited, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and lines[-1].startswith(f"error: --json {out}: cannot be written"), r.stderr
    assert out.read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["F.npy", "G.npy", "r.json"]


def test_an_interrupt_is_one_line_and_exit_status_130(monkeypatch):
    """Ctrl-C ends a command with one line and the shell's status for it, 130
    (click's "Aborted!" exited 1, which says a check failed)."""
    from allornone.theorems.engine import verify as verify_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(verify_module, "verify_file", interrupted)
    result = CliRunner().invoke(main, ["verify", "whatever.json"])
    assert result.exit_code == 130 and result.stderr.strip() == "interrupted", result.output


def test_numpy_warnings_do_not_reach_the_commands_output(monkeypatch):
    """An overflow inside the float layer is decided on (undecided, or in
    scaled units); NumPy's RuntimeWarning about it is not printed between the
    command's lines, nor before a one-line error."""
    import warnings

    from allornone.errors import InputFormatError
    from allornone.theorems.engine import verify as verify_module

    def noisy(*args, **kwargs):
        np.ldexp(np.array([1.0]), 2000)   # overflow: NumPy warns
        warnings.warn("overflow encountered in matmul", RuntimeWarning)
        raise InputFormatError("a bad file")
    monkeypatch.setattr(verify_module, "verify_file", noisy)
    result = CliRunner().invoke(main, ["verify", "whatever.json"])
    assert result.exit_code == 2 and result.stderr.strip().splitlines() == ["error: a bad file"], result.output
