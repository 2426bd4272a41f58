"""Extract the softmax head of textgenrnn's pretrained character-level language model.

textgenrnn (PyPI ``textgenrnn``, MIT licence) ships ``textgenrnn_weights.hdf5``:
a trained character-level next-token predictor -- an embedding (100), two LSTM
layers (128 each), their concatenation (356) averaged over time by a learned
attention, and a dense softmax over 465 tokens (464 characters and the padding
index 0). The representation ``f(x)`` of a context ``x`` is the 356-vector that
enters the dense layer; ``g(y)`` is column ``y`` of its kernel with the bias as
an extra coordinate (``f``'s coordinate is 1), which is what
``FloatModel.from_head`` does.

The forward pass is written here in NumPy (no TensorFlow): only ``h5py`` is
needed to read the weights. Install the package's files without its
dependencies::

    pip install --no-deps textgenrnn h5py
    python examples/real_models/textgenrnn_extract.py tests/data/textgenrnn_head.npz

The contexts are the prefixes of a real text (by default the Zen of Python),
each cut to the model's 40-character window, left-padded as textgenrnn does.
The output ``.npz`` holds ``features`` (m x 356), ``weight`` (356 x 465) and
``bias`` (465,) as the package stores them, plus ``contexts`` and ``tokens``.
"""
from __future__ import annotations

import argparse
import codecs
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

MAX_LENGTH = 40


def package_dir() -> Path:
    """The installed textgenrnn folder, found without importing it (importing
    it needs TensorFlow)."""
    spec = importlib.util.find_spec("textgenrnn")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("textgenrnn is not installed: pip install --no-deps textgenrnn")
    return Path(list(spec.submodule_search_locations)[0])


def load_weights(path: Path) -> dict:
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                parts = name.split("/")
                out[f"{parts[0]}_{parts[-1].split(':')[0]}"] = np.array(obj, dtype=np.float64)
        f.visititems(visit)
    return out


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def from_cudnn(kernel, recurrent, bias):
    """CuDNN-layout LSTM weights (as the file stores them: two biases, per-gate
    kernels in CuDNN's memory order) in the plain layout, as Keras converts
    them when it loads such a file into a CPU ``LSTM``."""
    units = recurrent.shape[0]
    if bias.shape[0] != 8 * units:
        return kernel, recurrent, bias
    gates = range(4)
    kernel = np.hstack([kernel[:, j * units:(j + 1) * units].T.reshape(kernel.shape[0], units, order="F")
                        for j in gates])
    recurrent = np.hstack([recurrent[:, j * units:(j + 1) * units].T for j in gates])
    return kernel, recurrent, bias[:4 * units] + bias[4 * units:]


def lstm(x, kernel, recurrent, bias):
    """A Keras LSTM over a batch ``x`` (b x t x in), gates ordered i, f, c, o,
    sigmoid recurrent activation (textgenrnn's choice, CuDNN's too)."""
    kernel, recurrent, bias = from_cudnn(kernel, recurrent, bias)
    units = recurrent.shape[0]
    b, t, _ = x.shape
    h = np.zeros((b, units))
    c = np.zeros((b, units))
    out = np.empty((b, t, units))
    for s in range(t):
        z = x[:, s] @ kernel + h @ recurrent + bias
        i, fg, cc, o = (z[:, j * units:(j + 1) * units] for j in range(4))
        c = _sigmoid(fg) * c + _sigmoid(i) * np.tanh(cc)
        h = _sigmoid(o) * np.tanh(c)
        out[:, s] = h
    return out


def features(weights: dict, encoded: np.ndarray) -> np.ndarray:
    """The input of the output layer for each row of ``encoded`` (b x 40 token ids)."""
    emb = weights["embedding_embeddings"][encoded]
    r1 = lstm(emb, weights["rnn_1_kernel"], weights["rnn_1_recurrent_kernel"], weights["rnn_1_bias"])
    r2 = lstm(r1, weights["rnn_2_kernel"], weights["rnn_2_recurrent_kernel"], weights["rnn_2_bias"])
    seq = np.concatenate([emb, r1, r2], axis=2)
    logits = (seq @ weights["attention_attention_W"])[..., 0]
    a = np.exp(logits - logits.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True) + 1e-7  # Keras' epsilon, as the layer adds it
    return np.einsum("bt,btd->bd", a, seq)


def encode(text: str, vocab: dict) -> np.ndarray:
    ids = [vocab.get(ch, 0) for ch in text][-MAX_LENGTH:]
    return np.array([0] * (MAX_LENGTH - len(ids)) + ids)


def zen() -> str:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):  # importing it prints it
        import this
    return codecs.decode(this.s, "rot13")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--text", type=Path, help="a UTF-8 text whose prefixes are the contexts (default: the Zen of Python)")
    ap.add_argument("--contexts", type=int, default=300, help="how many prefixes (default 300)")
    args = ap.parse_args(argv)
    folder = package_dir()
    weights = load_weights(folder / "textgenrnn_weights.hdf5")
    vocab = json.loads((folder / "textgenrnn_vocab.json").read_text(encoding="utf-8"))
    text = args.text.read_text(encoding="utf-8") if args.text else zen()
    # the prefixes ending at positions 1..m: consecutive ones are (s, s + next character)
    prefixes = [text[:i] for i in range(1, min(args.contexts, len(text)) + 1)]
    X = features(weights, np.stack([encode(p, vocab) for p in prefixes]))
    inverse = {i: ch for ch, i in vocab.items()}
    tokens = ["<pad>"] + [inverse[i] for i in range(1, len(vocab) + 1)]
    contexts = [p[-MAX_LENGTH:] for p in prefixes]
    # context names must be unique; a repeated 40-character window gets its position
    seen = {}
    for i, c in enumerate(contexts):
        if c in seen:
            contexts[i] = f"{c}@{i}"
        seen[c] = i
    weight, bias = weights["output_kernel"], weights["output_bias"]
    logits = X @ weight + bias
    # sanity: the model should usually predict the next character of the text
    hits = sum(tokens[int(np.argmax(logits[i]))] == text[i + 1] for i in range(len(prefixes)))
    print(f"{len(prefixes)} contexts; next character predicted for {hits} of them ({hits / len(prefixes):.0%})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, features=X, weight=weight, bias=bias, contexts=np.array(contexts),
                        tokens=np.array(tokens))
    print(f"wrote {args.out}: features {X.shape}, weight {weight.shape}, bias {bias.shape}")


if __name__ == "__main__":
    main()
