"""Train the tiny causal language models that the extraction tests load.

What it trains
--------------
Three next-token predictors, each saved with ``save_pretrained(...,
safe_serialization=True)`` beside the tokenizer it was trained with:

* ``tests/data/tiny_lm_seed0/`` and ``tests/data/tiny_lm_seed1/``: GPT-2
  (``GPT2LMHeadModel``), 2 layers, width 48, 4 heads, 128 positions, the head
  **tied** to the input embedding (no bias); the two differ only in the seed
  (initialisation and the order of the training batches);
* ``tests/data/tiny_gptj/``: GPT-J (``GPTJForCausalLM``), the same sizes with
  rotary position embeddings (``rotary_dim`` 8), and an **untied** head with a
  **bias**, GPT-J's own ``lm_head``.

All three share one byte-level BPE tokenizer of 1000 tokens (256 bytes, the
end-of-text token ``<|endoftext|>`` and 743 merges), trained here with the
``tokenizers`` package and saved as a ``PreTrainedTokenizerFast`` (which
transformers 5 writes as ``TokenizersBackend``). It has no padding token, as
GPT-2's own has none.

What text
---------
The docstrings of Python's standard library, read with ``inspect.getdoc``:
every public top-level module of ``sys.stdlib_module_names`` (less the few that
act when imported or need a display) and the public submodules of its packages,
each with the docstrings of the classes, functions and methods it defines. The
modules are split by name: every tenth (in sorted order) is held out. The models
and the tokenizer see only the other nine tenths (5009 docstrings, 1.16 million
characters, 450,371 tokens); ``tests/data/tiny_lm_contexts.txt`` gets 300 lines
of the held-out docstrings, spread evenly over them, each 24 to 120 characters,
unique and occurring nowhere in the training text, one context per line. The
text depends on the Python version: the shipped fixtures were made with CPython
3.11.7, torch 2.13.0 (CPU), transformers 5.24.0 and tokenizers 0.23.3.

How long, how large
-------------------
Training runs on one CPU thread (the tests' machines have two shared cores).
With the defaults, 1000 steps of 32 sequences of 64 tokens per model (about two
passes over the training tokens) take about 40 CPU-seconds per model, 2
CPU-minutes in all (2 min 20 s of wall time, imports included). Each checkpoint
directory is 0.5 MB (GPT-J's, with its own head, 0.67 MB). The run is
deterministic: the seeds are fixed, torch is held to deterministic algorithms
on one thread, and the text and the tokenizer do not depend on the seed.

It prints each model's loss on the held-out lines next to the loss of their own
unigram distribution, the best a predictor blind to the context can do: for the
shipped fixtures 4.32 (seed 0), 4.33 (seed 1) and 4.15 (GPT-J) nats per token,
against 5.85 for the unigram distribution and 6.91 for the uniform one.

To rerun it (needs ``pip install torch transformers tokenizers``; with the
versions above it rewrites the shipped files byte for byte)::

    python examples/train_tiny_lm.py tests/data
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import json
import math
import pkgutil
import sys
import time
import warnings
from pathlib import Path

VOCAB_SIZE = 1000
EOT = "<|endoftext|>"
WIDTH, LAYERS, HEADS, POSITIONS = 48, 2, 4, 128
SEQ_LEN, BATCH = 64, 32
CONTEXTS = 300
#: Modules that do something when imported (open a browser, print, start a
#: program) or need a display; skipped so that reading docstrings stays inert.
SKIP = {"antigravity", "this", "idlelib", "__hello__", "__phello__", "turtledemo", "tkinter", "turtle",
        "test", "lib2to3", "pydoc_data", "ensurepip", "venv", "encodings"}


# -- text ---------------------------------------------------------------------

def _quiet_import(name: str):
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except BaseException:  # a module may raise anything, SystemExit included, on a platform it does not support
        return None


def module_names() -> list[str]:
    """Public standard-library modules, packages with their public submodules."""
    names = []
    for top in sorted(n for n in sys.stdlib_module_names if not n.startswith("_") and n not in SKIP):
        mod = _quiet_import(top)
        if mod is None:
            continue
        names.append(top)
        if hasattr(mod, "__path__"):
            for info in pkgutil.walk_packages(mod.__path__, top + ".", onerror=lambda _: None):
                parts = info.name.split(".")
                if any(p.startswith("_") or "test" in p for p in parts):
                    continue
                names.append(info.name)
    return sorted(set(names))


def docstrings(name: str) -> list[str]:
    """The module's docstring and those of what it defines, in name order."""
    mod = _quiet_import(name)
    if mod is None:
        return []
    out = [inspect.getdoc(mod)]
    for key, value in sorted(vars(mod).items()):
        if key.startswith("_") or getattr(value, "__module__", None) != name:
            continue
        if inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
            out.append(inspect.getdoc(value))
            if inspect.isclass(value):
                for k, v in sorted(vars(value).items()):
                    if not k.startswith("_") and (inspect.isfunction(v) or inspect.ismethoddescriptor(v)):
                        out.append(inspect.getdoc(v))
    # a docstring inherited from object or shared by many classes says nothing new
    seen, docs = set(), []
    for d in out:
        if d and d.strip() and d not in seen:
            seen.add(d)
            docs.append(d.strip())
    return docs


def corpus() -> tuple[list[str], list[str]]:
    """``(training docstrings, held-out lines)``."""
    names = module_names()
    train, held = [], []
    for i, name in enumerate(names):
        (held if i % 10 == 0 else train).extend(docstrings(name))
    train_text = "\n".join(train)
    lines, seen = [], set()
    for doc in held:
        for line in doc.splitlines():
            line = " ".join(line.split())
            if 24 <= len(line) <= 120 and line not in seen and line not in train_text:
                seen.add(line)
                lines.append(line)
    return train, lines


# -- tokenizer ------------------------------------------------------------------

def train_tokenizer(docs: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=EOT, eos_token=EOT, unk_token=None,
                                   model_max_length=POSITIONS)


def encode(tokenizer, docs: list[str]):
    import torch

    eot = tokenizer.convert_tokens_to_ids(EOT)
    ids = []
    for doc in docs:
        ids.extend(tokenizer.backend_tokenizer.encode(doc).ids)  # no length warning: the text is cut into windows later
        ids.append(eot)
    return torch.tensor(ids, dtype=torch.long)


# -- models -----------------------------------------------------------------------

def build(arch: str, vocab: int, eot: int):
    from transformers import GPT2Config, GPT2LMHeadModel, GPTJConfig, GPTJForCausalLM

    common = dict(vocab_size=vocab, n_positions=POSITIONS, n_embd=WIDTH, n_layer=LAYERS, n_head=HEADS,
                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=eot, eos_token_id=eot)
    if arch == "gpt2":
        return GPT2LMHeadModel(GPT2Config(**common))
    return GPTJForCausalLM(GPTJConfig(**common, rotary_dim=8, tie_word_embeddings=False))


def train(arch: str, seed: int, data, steps: int, vocab: int, eot: int):
    import torch

    torch.manual_seed(seed)
    model = build(arch, vocab, eot)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 50) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    gen = torch.Generator().manual_seed(1000 + seed)
    starts = len(data) - SEQ_LEN - 1
    for step in range(steps):
        idx = torch.randint(0, starts, (BATCH,), generator=gen)
        batch = torch.stack([data[i:i + SEQ_LEN] for i in idx.tolist()])
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"  {arch} seed {seed} step {step:4d} loss {loss.item():.3f}", flush=True)
    model.eval()
    return model


def held_out_loss(model, data) -> float:
    import torch

    usable = (len(data) - 1) // SEQ_LEN * SEQ_LEN
    x = data[:usable].view(-1, SEQ_LEN)
    with torch.no_grad():
        return float(model(input_ids=x, labels=x).loss)


def unigram_loss(data, vocab: int) -> float:
    """Cross-entropy of the text under its own token frequencies (predicting
    tokens 2..T, as the models' loss does): the best a model blind to the
    context can do."""
    import torch

    counts = torch.bincount(data, minlength=vocab).double()
    p = counts / counts.sum()
    return float(-(p[data[1:]].log()).mean())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path,
                    help="folder for tiny_lm_seed0/, tiny_lm_seed1/, tiny_gptj/ and tiny_lm_contexts.txt")
    ap.add_argument("--steps", type=int, default=1000, help="optimiser steps per model (default 1000)")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    t0 = time.process_time()
    train_docs, held_lines = corpus()
    if len(held_lines) < CONTEXTS:
        sys.exit(f"only {len(held_lines)} held-out lines; expected at least {CONTEXTS}")
    # spread over the held-out modules rather than the first few of them
    contexts = held_lines[::len(held_lines) // CONTEXTS][:CONTEXTS]
    print(f"{len(train_docs)} training docstrings ({sum(map(len, train_docs))} characters), "
          f"{len(held_lines)} held-out lines")
    tokenizer = train_tokenizer(train_docs)
    eot = tokenizer.convert_tokens_to_ids(EOT)
    vocab = len(tokenizer)
    data = encode(tokenizer, train_docs)
    held = encode(tokenizer, held_lines)
    print(f"tokenizer: {vocab} tokens; {len(data)} training tokens, {len(held)} held-out tokens "
          f"({time.process_time() - t0:.1f} CPU-s)")
    base = unigram_loss(held, vocab)
    args.out.mkdir(parents=True, exist_ok=True)
    report = {}
    for name, arch, seed in (("tiny_lm_seed0", "gpt2", 0), ("tiny_lm_seed1", "gpt2", 1), ("tiny_gptj", "gptj", 0)):
        t = time.process_time()
        model = train(arch, seed, data, args.steps, vocab, eot)
        loss = held_out_loss(model, held)
        folder = args.out / name
        model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
        report[name] = {"arch": arch, "seed": seed, "held_out_loss": round(loss, 4),
                        "cpu_s": round(time.process_time() - t, 1)}
        print(f"{name}: held-out loss {loss:.3f} nats/token (unigram {base:.3f}, uniform {math.log(vocab):.3f}), "
              f"{report[name]['cpu_s']} CPU-s")
    (args.out / "tiny_lm_contexts.txt").write_text("\n".join(contexts) + "\n", encoding="utf-8")
    print(json.dumps(report))
    print(f"total {time.process_time() - t0:.0f} CPU-s")


if __name__ == "__main__":
    main()
