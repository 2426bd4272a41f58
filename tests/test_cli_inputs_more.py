"""More inputs the command line must refuse in one line (exit status 2, nothing
written) or read correctly: non-finite option values, negative seeds, damaged or
incomplete checkpoints, bfloat16 and float8 tensors, sparse and complex PyTorch
tensors, per-model names in compare, a twin too large for memory, progress off a
terminal, error text that is not markup, strict JSON, and targets binary64
cannot carry."""
from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.theorems.engine.cli import main

DATA = Path(__file__).parent / "data"
SEED0 = DATA / "tiny_lm_seed0"
CONTEXTS = DATA / "tiny_lm_contexts.txt"
HF_REASON = 'the hf extra is not installed (pip install -e ".[hf]")'


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _one_line_error(r, *words):
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def head(tmp_path):
    """A 20 x 5 feature matrix and a 30 x 5 head, as .npy files."""
    rng = np.random.default_rng(0)
    F, W = tmp_path / "F.npy", tmp_path / "W.npy"
    np.save(F, rng.standard_normal((20, 5)))
    np.save(W, rng.standard_normal((30, 5)))
    return F, W


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- 1. tolerances that are not finite numbers ------------------------------------------

@pytest.mark.parametrize("command, option, value", [
    ("analyse", "--rtol", "nan"),
    ("analyse", "--rank-rtol", "nan"),
    ("analyse", "--gap", "nan"),
    ("analyse", "--gap", "inf"),
    ("compare", "--rtol", "nan"),
    ("compare", "--gap", "inf"),
    ("twin", "--rank-rtol", "nan"),
    ("reparam", "--condition", "nan"),
    ("perturb", "--amount", "nan"),
])
def test_a_non_finite_option_value_is_refused_by_the_option_parser(tmp_path, head, command, option, value):
    F, W = head
    out = tmp_path / "out.npz"
    if command == "analyse":
        args = ["analyse", "--features", F, "--head", W]
    elif command == "compare":
        args = ["compare", "--features", F, "--head", W, "--features", F, "--head", W]
    else:
        args = ["make", command, "--features", F, "--head", W, "--out", out]
        if command == "perturb":
            args += ["--token", "1"]
    before = _files(tmp_path)
    r = _run(*args, option, value)
    _one_line_error(r, f"Invalid value for '{option}'", "not a finite number")
    assert _files(tmp_path) == before


# -- 2. make's seed ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["reparam", "twin"])
def test_make_refuses_a_negative_seed(tmp_path, head, kind):
    F, W = head
    out = tmp_path / "o.npz"
    r = _run("make", kind, "--features", F, "--head", W, "--seed", "-5", "--out", out)
    _one_line_error(r, "Invalid value for '--seed'", "-5")
    assert not out.exists()


# -- 3, 6. damaged and incomplete checkpoints ------------------------------------------

def _hf():
    pytest.importorskip("torch", reason=HF_REASON)
    pytest.importorskip("transformers", reason=HF_REASON)
    pytest.importorskip("safetensors", reason=HF_REASON)


@pytest.fixture
def texts(tmp_path):
    lines = [line for line in CONTEXTS.read_text(encoding="utf-8").splitlines() if line.strip()][:5]
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _checkpoint(tmp_path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(SEED0, target)
    return target


def _extract_refused(tmp_path, model, texts, *words):
    out = tmp_path / "o.npz"
    before = _files(tmp_path)
    r = _run("extract", "--model", model, "--texts", texts, "--out", out)
    line = _one_line_error(r, *words)
    assert not out.exists() and _files(tmp_path) == before
    return line


@pytest.mark.parametrize("damage", ["cut in half", "empty"])
def test_a_damaged_weights_file_in_a_checkpoint_is_one_line(tmp_path, texts, damage):
    _hf()
    model = _checkpoint(tmp_path, "ckpt")
    weights = model / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:len(data) // 2] if damage == "cut in half" else b"")
    _extract_refused(tmp_path, model, texts, "--model", "cannot load the model")


def test_a_checkpoint_with_missing_weights_is_refused(tmp_path, texts):
    _hf()
    from safetensors.numpy import load_file, save_file

    # the complete checkpoint extracts as before, without transformers' own loading report
    good = tmp_path / "good.npz"
    r = _run("extract", "--model", SEED0, "--texts", texts, "--out", good)
    assert r.exit_code == 0 and good.exists(), r.output
    assert "m = 5 contexts, n = 1000 tokens, d = 48" in r.stdout
    assert "LOAD REPORT" not in r.output and "warning" not in r.stderr
    good.unlink()
    model = _checkpoint(tmp_path, "partial")
    weights = model / "model.safetensors"
    tensors = load_file(str(weights))
    kept = {k: v for k, v in tensors.items() if not k.startswith("transformer.h.1.")}
    assert len(kept) < len(tensors)
    save_file(kept, str(weights), metadata={"format": "pt"})
    line = _extract_refused(tmp_path, model, texts, "--model", "not in the checkpoint", "at random")
    assert f"{len(tensors) - len(kept)} weights" in line


def test_a_config_of_another_model_type_than_the_weights_is_refused(tmp_path, texts):
    _hf()
    model = _checkpoint(tmp_path, "weird")
    config = json.loads((model / "config.json").read_text())
    config["model_type"] = "bert"
    (model / "config.json").write_text(json.dumps(config))
    _extract_refused(tmp_path, model, texts, "not in the checkpoint", "model_type")


# -- 4. bfloat16 and float8 tensors in .safetensors ----------------------------------------

def _safetensors(path: Path, key: str, dtype: str, shape, raw: bytes) -> None:
    """A .safetensors file written by hand: NumPy has no bfloat16 or float8."""
    header = json.dumps({key: {"dtype": dtype, "shape": list(shape), "data_offsets": [0, len(raw)]}}).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + raw)


#: Exactly representable values in every format below, and their bit patterns.
VALUES = np.array([1.0, -2.0, 0.5, 1.5, -0.25, 3.0, 0.75, -1.0, 2.0, 0.125] * 10).reshape(20, 5)
E4M3 = {1.0: 0x38, -2.0: 0xC0, 0.5: 0x30, 1.5: 0x3C, -0.25: 0xA8, 3.0: 0x44, 0.75: 0x34, -1.0: 0xB8, 2.0: 0x40,
        0.125: 0x20}
E5M2 = {1.0: 0x3C, -2.0: 0xC0, 0.5: 0x38, 1.5: 0x3E, -0.25: 0xB4, 3.0: 0x42, 0.75: 0x3A, -1.0: 0xBC, 2.0: 0x40,
        0.125: 0x30}


@pytest.mark.parametrize("dtype", ["BF16", "F8_E4M3", "F8_E5M2"])
def test_bfloat16_and_float8_safetensors_are_read_exactly(tmp_path, head, dtype):
    pytest.importorskip("safetensors")
    from allornone.numeric.loaders import load_array

    _, W = head
    path = tmp_path / "f.safetensors"
    if dtype == "BF16":
        raw = (VALUES.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    else:
        table = E4M3 if dtype == "F8_E4M3" else E5M2
        raw = bytes(table[v] for v in VALUES.ravel())
    _safetensors(path, "features", dtype, VALUES.shape, raw)
    assert np.array_equal(load_array(f"{path}:features"), VALUES)
    r = _run("analyse", "--features", f"{path}:features", "--head", W)
    assert r.exit_code == 0, r.output
    assert "m = 20 contexts, n = 30 tokens" in r.stdout


def test_bfloat16_features_larger_than_memory_are_read_a_block_at_a_time(tmp_path, head, monkeypatch):
    pytest.importorskip("safetensors")
    from allornone.numeric.loaders import feature_source

    _, W = head
    path = tmp_path / "f.safetensors"
    raw = (VALUES.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    _safetensors(path, "features", "BF16", VALUES.shape, raw)
    monkeypatch.setenv("ALLORNONE_MEMORY_LIMIT", "512")
    src = feature_source(f"{path}:features")
    assert src is not None and np.array_equal(src.block(3, 9), VALUES[3:9])


# -- 5. sparse, complex and boolean PyTorch tensors ---------------------------------------

@pytest.mark.parametrize("kind, words", [
    ("sparse", ["sparse", "to_dense"]),
    ("complex", ["expected real numbers", "complex64"]),
    ("bool", ["expected real numbers", "bool"]),
])
def test_a_pytorch_tensor_that_is_not_dense_real_numbers_is_refused(tmp_path, head, kind, words):
    torch = pytest.importorskip("torch")
    _, W = head
    x = torch.randn(20, 5, dtype=torch.float64)
    value = {"sparse": x.to_sparse(), "complex": x.to(torch.complex64), "bool": x > 0}[kind]
    path = tmp_path / "state.pt"
    torch.save({"features": value}, path)
    r = _run("analyse", "--features", f"{path}:features", "--head", W)
    _one_line_error(r, f"{path}:features", *words)


# -- 7. compare's names, one per model -----------------------------------------------------

def _names(path: Path, names: list[str]) -> Path:
    np.save(path, np.array(names))
    return path


def test_compare_reads_each_models_tokens_and_refuses_different_ones(tmp_path, head):
    F, W = head
    a = _names(tmp_path / "ta.npy", [f"t{i}" for i in range(30)])
    b = _names(tmp_path / "tb.npy", [f"t{i}" for i in range(29)] + ["other"])
    pair = ["compare", "--features", F, "--head", W, "--features", F, "--head", W]
    _one_line_error(_run(*pair, "--tokens", a, "--tokens", b), "vocabularies differ: token names do not match",
                    "'t29'", "'other'")
    _one_line_error(_run(*pair, "--tokens", a, "--tokens", a, "--tokens", a), "--tokens")
    for given in (["--tokens", a], ["--tokens", a, "--tokens", a]):
        r = _run(*pair, *given)
        assert r.exit_code == 0 and "equivalent (decided)" in r.stdout, r.output


def test_compare_reads_each_models_contexts_and_refuses_different_ones(tmp_path, head):
    F, W = head
    a = _names(tmp_path / "ca.npy", [f"c{i}" for i in range(20)])
    b = _names(tmp_path / "cb.npy", [f"c{i}" for i in range(19)] + ["other"])
    pair = ["compare", "--features", F, "--head", W, "--features", F, "--head", W]
    _one_line_error(_run(*pair, "--contexts", a, "--contexts", b), "context names do not match", "'c19'")


# -- 8. a twin whose working matrices do not fit -------------------------------------------

def test_a_twin_too_large_for_memory_is_refused_with_its_dimension(tmp_path, head, monkeypatch):
    F, W = head
    out = tmp_path / "twin.npz"
    monkeypatch.setenv("ALLORNONE_MEMORY_LIMIT", "50M")
    r = _run("make", "twin", "--features", F, "--head", W, "--extra-dim", "2000", "--out", out)
    _one_line_error(r, "--extra-dim 2000", "d~ = 2005", "2005 x 2005", "ALLORNONE_MEMORY_LIMIT")
    assert not out.exists()


def test_a_twin_beyond_any_memory_names_the_twin_not_the_input(tmp_path, head):
    F, W = head
    r = _run("make", "twin", "--features", F, "--head", W, "--extra-dim", "10000000", "--out", tmp_path / "t.npz")
    line = _one_line_error(r, "d~ = 10000005", "working matrices")
    assert "the input is larger" not in line


# -- 9. check's progress off a terminal ----------------------------------------------------

def test_check_off_a_terminal_prints_plain_progress_lines():
    r = CliRunner().invoke(main, ["check", "thm5", "--trials", "3"])
    assert r.exit_code == 0, r.output
    assert "check [" in r.stderr and "thm5: 3 of 3 instances" in r.stderr, r.stderr
    assert "self-test" in r.stderr


# -- 10. error text is text ----------------------------------------------------------------

def test_an_error_quoting_the_input_is_not_turned_into_an_emoji(head):
    _, W = head
    line = _one_line_error(_run("analyse", "--features", ":x", "--head", W))
    assert line == "error: :x: no file before ':'"


# -- 11. strict JSON ------------------------------------------------------------------------

def _strict(path: Path):
    def refuse(constant):
        raise AssertionError(f"{path} holds {constant}, which is not JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


def test_compare_json_of_overflowing_logits_is_strict_json(tmp_path, head):
    F, W = head
    big = tmp_path / "Fbig.npy"
    np.save(big, np.load(F) * 1e200)
    report = tmp_path / "out.json"
    r = _run("compare", "--features", big, "--head", W, "--features", F, "--head", W, "--json", report)
    assert r.exit_code == 0, r.output
    g = _strict(report)["graded"]
    # (the residuals themselves are numbers: their norms are taken scaled)
    assert all(isinstance(v, float) for v in g["el_residuals"].values())
    from allornone.theorems.engine import cli

    nan = tmp_path / "nan.json"
    cli.write_json(str(nan), {"measure": float("nan"), "rows": [1.0, float("inf")]})
    assert _strict(nan) == {"measure": None, "rows": [1.0, None]}


# -- 12. reparametrisations binary64 cannot carry --------------------------------------------

def test_make_reparam_refuses_a_condition_binary64_cannot_honour(tmp_path, head):
    F, W = head
    out = tmp_path / "r.npz"
    _one_line_error(_run("make", "reparam", "--features", F, "--head", W, "--condition", "1e300", "--out", out),
                    "Invalid value for '--condition'", "1e+15")
    assert not out.exists()
    # a condition binary64 carries still gives its target
    r = _run("make", "reparam", "--features", F, "--head", W, "--condition", "1e6", "--out", out)
    assert r.exit_code == 0 and out.exists(), r.output


def test_make_reparam_refuses_a_target_that_is_not_the_same_distribution(tmp_path, head, monkeypatch):
    from allornone.numeric import targets

    F, W = head
    real = targets.reparametrise

    def lossy(X, W, b, condition, seed):
        t = real(X, W, b, condition, seed)
        return targets.Target(t.features * 1.5, t.weight, t.bias, t.info)
    monkeypatch.setattr(targets, "reparametrise", lossy)
    out = tmp_path / "r.npz"
    _one_line_error(_run("make", "reparam", "--features", F, "--head", W, "--out", out),
                    "not the same distribution", "nothing was written")
    assert not out.exists()


def test_an_archive_holding_a_member_twice_is_refused(tmp_path):
    """A zip may hold one name twice (``np.load`` then reads the last copy):
    which array is meant is not known, so the file is refused in one line."""
    import io
    import warnings
    import zipfile

    def npy(a):
        buf = io.BytesIO()
        np.save(buf, a)
        return buf.getvalue()
    path = tmp_path / "twice.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (zipfile warns of the duplicate name it writes)
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a.F.npy", npy(np.eye(2)))
            z.writestr("a.G.npy", npy(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])))
            z.writestr("a.F.npy", npy(np.zeros((2, 2))))
    _one_line_error(_run("verify", str(path)), "more than once", "a.F.npy")


def test_a_model_with_an_empty_name_is_refused(tmp_path):
    """As in an ``.npz`` file: an empty name cannot be referred to."""
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"models": {"": {"F": [[1, 0]], "G": [[0, 0], [1, 0]]}}}))
    _one_line_error(_run("verify", str(path)), "name is empty")
