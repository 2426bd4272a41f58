"""``allornone extract``: a local checkpoint's head and its inputs, written in the
file format the other commands read; bad input is one line, exit status 2, and
nothing is written."""
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from allornone.numeric import extract as ext
from allornone.theorems.engine.cli import main
from test_extract import _tiny_gpt2

DATA = Path(__file__).parent / "data"
SEED0 = DATA / "tiny_lm_seed0"
CONTEXTS = DATA / "tiny_lm_contexts.txt"
HF_REASON = 'the hf extra is not installed (pip install -e ".[hf]")'


def _hf():
    pytest.importorskip("torch", reason=HF_REASON)
    pytest.importorskip("transformers", reason=HF_REASON)


@pytest.fixture
def texts(tmp_path):
    lines = [line for line in CONTEXTS.read_text(encoding="utf-8").splitlines() if line.strip()][:24]
    path = tmp_path / "texts.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(*args):
    return CliRunner().invoke(main, ["extract", *map(str, args)])


def _one_line_error(r, *words):
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_extract_writes_what_analyse_reads(tmp_path, texts):
    _hf()
    out = tmp_path / "seed0.npz"
    r = _run("--model", SEED0, "--texts", texts, "--batch-size", 5, "--out", out)
    assert r.exit_code == 0, r.output
    assert "m = 24 contexts, n = 1000 tokens, d = 48, no bias; logits reproduced to" in r.stdout
    assert f"wrote {out}" in r.stdout and "warning" not in r.stderr
    # off a terminal the progress is plain lines on stderr: loaded, then the contexts done
    assert "model loaded" in r.stderr and "24 of 24 contexts" in r.stderr
    with np.load(out) as z:
        assert z["features"].shape == (24, 48) and z["weight"].shape == (1000, 48) and z["bias"].size == 0
        assert len(z["tokens"]) == 1000 and len(z["contexts"]) == 24
    a = CliRunner().invoke(main, ["analyse", "--features", f"{out}:features", "--head", f"{out}:weight",
                                  "--bias", "bias", "--tokens", f"{out}:tokens"])
    assert a.exit_code == 0 and "m = 24 contexts, n = 1000 tokens" in a.output, a.output


def test_extract_an_intermediate_layer_to_safetensors(tmp_path, texts):
    _hf()
    pytest.importorskip("safetensors.numpy")
    out = tmp_path / "layer1.safetensors"
    r = _run("--model", SEED0, "--texts", texts, "--layer", 1, "--padding-side", "left", "--max-length", 16,
             "--out", out)
    assert r.exit_code == 0, r.output
    assert "layer 1: no logit check" in r.stdout and out.is_file()


def test_a_head_that_does_not_reproduce_the_logits_is_warned_about(tmp_path, texts, monkeypatch):
    bad = ext.Extraction(np.zeros((2, 3)), np.zeros((4, 3)), max_abs_deviation=0.5, logit_scale=10.0,
                         tokens=list("abcd"), contexts=["x", "y"])
    monkeypatch.setattr(ext, "extract_checkpoint", lambda *a, **k: bad)
    out = tmp_path / "x.npz"
    r = _run("--model", SEED0, "--texts", texts, "--out", out)
    assert r.exit_code == 0, r.output
    assert "warning: the head reproduces the model's logits only to 0.05 of their scale" in r.stderr
    assert out.is_file()


def test_without_torch_the_error_names_the_install(tmp_path, texts, monkeypatch):
    for name in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)  # 'import torch' now raises ImportError
    out = tmp_path / "x.npz"
    r = _run("--model", SEED0, "--texts", texts, "--out", out)
    _one_line_error(r, 'pip install -e ".[hf]"')
    assert not out.exists()


@pytest.mark.parametrize("case, words", [
    ("no model", ["--model", "is not a directory"]),
    ("not a checkpoint", ["config.json"]),
    ("no texts", ["--texts", "no such file"]),
    ("blank texts", ["blank"]),
    ("bad suffix", ["--out", ".npz or .safetensors"]),
    ("no folder", ["--out", "does not exist"]),
    ("bad layer", ["--layer", "'final' or an integer"]),
    ("into the checkpoint", ["--out", "would overwrite an input"]),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, texts, case, words):
    if case in ("not a checkpoint", "blank texts"):
        _hf()
    model, txt, out, extra = SEED0, texts, tmp_path / "out.npz", []
    if case == "no model":
        model = tmp_path / "absent"
    elif case == "not a checkpoint":
        model = tmp_path / "empty"
        model.mkdir()
    elif case == "no texts":
        txt = tmp_path / "absent.txt"
    elif case == "blank texts":
        txt = tmp_path / "blank.txt"
        txt.write_text("\n  \n")
    elif case == "bad suffix":
        out = tmp_path / "out.txt"
    elif case == "no folder":
        out = tmp_path / "absent" / "out.npz"
    elif case == "bad layer":
        extra = ["--layer", "last"]
    elif case == "into the checkpoint":
        out = SEED0 / "extracted.npz"
    before = sorted(p.name for p in tmp_path.iterdir())
    r = _run("--model", model, "--texts", txt, "--out", out, *extra)
    _one_line_error(r, *words)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("case, words", [
    ("small vocabulary", ["gives token id", "the model's input embedding has 900 rows"]),
    ("beyond the window", ["--max-length 100000", "the model has 16 positions", "at most 16"]),
    ("no tokenizer", ["no tokenizer in the folder"]),
    ("edited width", ["weights of the checkpoint have another shape than config.json gives",
                      "in the checkpoint", "from config.json"]),
])
def test_a_checkpoint_that_does_not_fit_is_one_line(tmp_path, texts, case, words):
    _hf()
    folder, extra = tmp_path / "model", []
    if case == "small vocabulary":
        _tiny_gpt2(folder, vocab_size=900)  # the fixture contexts give ids up to 999
    elif case == "beyond the window":
        _tiny_gpt2(folder)
        extra = ["--max-length", 100000]
    elif case == "no tokenizer":
        _tiny_gpt2(folder, tokenizer=False)
    else:
        import json

        _tiny_gpt2(folder)
        config = json.loads((folder / "config.json").read_text())
        config["n_embd"] = 64
        (folder / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out.npz"
    r = _run("--model", folder, "--texts", texts, "--out", out, *extra)
    _one_line_error(r, *words)
    assert "model loaded" not in r.stderr  # refused before the model runs (or loads)
    assert not out.exists()


def test_extract_is_listed_in_the_help():
    r = CliRunner().invoke(main, ["--help"])
    assert "extract" in r.output and "study" in r.output
