"""The softmax head of a PyTorch model and its inputs, as arrays for ``allornone``.

A next-token predictor ``p(y|x) ∝ exp(f(x)ᵀ g(y))`` is read off a trained
network at its output layer: ``f(x)`` is the vector that enters the layer (for a
Hugging Face causal language model, the final-position hidden state after the
final norm), ``g(y)`` is row ``y`` of the layer's weight, with the layer's bias
``b_y`` folded in as an extra coordinate by
:meth:`~allornone.numeric.FloatModel.from_head`.

* :func:`extract_checkpoint` reads a local Hugging Face checkpoint directory
  (never a hub name: nothing is downloaded) and runs it on a list of contexts;
* :func:`extract_module` does the same for any PyTorch module whose output
  layer is a linear head, on batches you give it;
* :func:`save_extraction` writes the result as ``.npz`` or ``.safetensors``
  with the keys ``features``, ``weight``, ``bias``, ``tokens`` and
  ``contexts``, which ``allornone analyse`` and ``compare`` read directly.

The features are captured by a forward hook on the head module: its input is,
by construction, what the head multiplies, whatever the architecture does
before it (final norms, projections). Each extraction then checks that
``features @ weight.T + bias`` reproduces the model's own logits at the same
positions and reports the largest deviation: a model that changes its logits
after the head (a soft cap, a scale) shows a large one.

PyTorch and ``transformers`` are imported only when a function needs them; without
them these functions raise :class:`~allornone.errors.InputFormatError` saying
``pip install -e ".[hf]"``.

>>> import os, tempfile, numpy as np
>>> from allornone.numeric.loaders import load_head
>>> ex = Extraction(features=np.eye(2, dtype=np.float32), weight=np.ones((3, 2), dtype=np.float32),
...                 bias=None, tokens=["a", "b", "c"], contexts=["x", "y"])
>>> path = save_extraction(ex, os.path.join(tempfile.mkdtemp(), "head.npz"))
>>> load_head(f"{path}:features", f"{path}:weight", bias=f"{path}:bias", tokens=f"{path}:tokens").d
2
"""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from allornone.errors import EmptyContextSetError, InputFormatError, NonFiniteValueError, ShapeError, file_problem
from allornone.files import replacing

__all__ = ["Extraction", "extract_checkpoint", "extract_module", "save_extraction", "read_texts",
           "INSTALL_HINT"]

#: How to install what extraction needs.
INSTALL_HINT = 'pip install -e ".[hf]"'
#: Contexts per forward pass unless told otherwise.
DEFAULT_BATCH_SIZE = 16

Progress = Callable[[int, int], None]


@dataclass
class Extraction:
    """An output layer and its inputs, read off a trained model.

    Attributes
    ----------
    features : numpy.ndarray
        ``m x d``: row ``i`` is the input of the head at context ``i``.
    weight : numpy.ndarray
        ``n x d``: row ``y`` is the head's weight for token ``y`` (PyTorch's
        ``Linear.weight`` layout).
    bias : numpy.ndarray or None
        The head's ``n`` biases, or None for a head without bias.
    tokens : list of str or None
        The name of each token, in id order.
    contexts : list of str or None
        The contexts, in row order.
    max_abs_deviation : float or None
        ``max |features @ weight.T + bias - logits|`` over every context and
        token, with ``logits`` the model's own at the same positions, computed
        in float64 from the arrays above; None where it does not apply (an
        intermediate layer).
    logit_scale : float or None
        ``max |logits|`` over the same entries.
    source : str
        What was extracted (a checkpoint directory, a module's class name).
    layer : str or int
        ``"final"`` (the head's input) or the index into the model's hidden states.
    truncated : int
        Contexts cut on the left to the model's window.
    """

    features: np.ndarray
    weight: np.ndarray
    bias: np.ndarray | None = None
    tokens: list[str] | None = None
    contexts: list[str] | None = None
    max_abs_deviation: float | None = None
    logit_scale: float | None = None
    source: str = ""
    layer: str | int = "final"
    truncated: int = 0
    info: dict = field(default_factory=dict)

    @property
    def m(self) -> int:
        """Number of contexts."""
        return int(self.features.shape[0])

    @property
    def n(self) -> int:
        """Number of tokens."""
        return int(self.weight.shape[0])

    @property
    def d(self) -> int:
        """Width of the head's input."""
        return int(self.weight.shape[1])

    @property
    def rel_deviation(self) -> float | None:
        """``max_abs_deviation / logit_scale`` (None where either is None; 0 for
        all-zero logits reproduced exactly)."""
        if self.max_abs_deviation is None or self.logit_scale is None:
            return None
        if self.logit_scale == 0:
            return 0.0 if self.max_abs_deviation == 0 else float("inf")
        return self.max_abs_deviation / self.logit_scale

    def summary(self) -> str:
        """One line: the shapes and the logit check.

        Examples
        --------
        >>> Extraction(np.zeros((2, 3)), np.zeros((5, 3)), max_abs_deviation=0.0, logit_scale=0.0).summary()
        'm = 2 contexts, n = 5 tokens, d = 3, no bias; logits reproduced to 0 (0 of their scale 0)'
        """
        head = f"m = {self.m} contexts, n = {self.n} tokens, d = {self.d}, " + \
               ("bias" if self.bias is not None else "no bias")
        if self.max_abs_deviation is None:
            return head + f"; layer {self.layer}: no logit check (the head does not read this layer)"
        return head + (f"; logits reproduced to {self.max_abs_deviation:.3g} "
                       f"({self.rel_deviation:.3g} of their scale {self.logit_scale:.3g})")

    def model(self, pivot: int = 0):
        """The :class:`~allornone.numeric.FloatModel` of these arrays (names as
        :func:`save_extraction` writes them).

        Examples
        --------
        >>> Extraction(np.eye(2), np.eye(3, 2), bias=np.zeros(3)).model().d
        3
        """
        from allornone.numeric.model import FloatModel

        return FloatModel.from_head(
            np.asarray(self.features, dtype=np.float64), np.asarray(self.weight, dtype=np.float64),
            None if self.bias is None else np.asarray(self.bias, dtype=np.float64), pivot,
            _file_names(self.contexts) if self.contexts is not None else None,
            _file_names(self.tokens) if self.tokens is not None else None)


# -- inputs ----------------------------------------------------------------------

def _require():
    """``(torch, transformers)``, or the project's error naming the install."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise InputFormatError(f"extracting from a PyTorch model needs PyTorch and transformers "
                               f"({exc.name} is missing): {INSTALL_HINT}") from None
    return torch, transformers


def _require_torch():
    try:
        import torch
    except ImportError:
        raise InputFormatError(f"extracting from a PyTorch module needs PyTorch: {INSTALL_HINT}") from None
    return torch


def read_texts(texts) -> list[str]:
    """The contexts: the non-blank lines of a UTF-8 file, or the strings given.

    Parameters
    ----------
    texts : str, os.PathLike or sequence of str
        A path to a text file with one context per line (blank lines are
        skipped; each other line is kept as it is, without its line break), or
        the contexts themselves.

    Returns
    -------
    list of str

    Raises
    ------
    InputFormatError
        For a missing or unreadable file, or a given context that is not a
        non-blank string.
    EmptyContextSetError
        When the file is empty or has only blank lines, or no context is given.

    Examples
    --------
    >>> read_texts(["The cat", "sat on"])
    ['The cat', 'sat on']
    >>> read_texts([])
    Traceback (most recent call last):
    ...
    allornone.errors.EmptyContextSetError: no contexts given
    """
    if isinstance(texts, (str, os.PathLike)):
        path = Path(texts)
        if not path.is_file():
            raise InputFormatError(f"--texts {path}: {file_problem(path)}")
        try:
            with path.open(encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"--texts {path}: not a readable UTF-8 text ({exc})") from None
        if not text:
            raise EmptyContextSetError(f"--texts {path}: the file is empty; expected one context per line")
        # a line ends at "\n" (or "\r\n") alone: str.splitlines would also cut a
        # context at U+2028, U+0085, a form feed or a lone "\r" inside it
        lines = [line.removesuffix("\r") for line in text.split("\n")]
        lines = [line for line in lines if line.strip()]
        if not lines:
            raise EmptyContextSetError(f"--texts {path}: every line is blank; expected one context per line")
        return lines
    if isinstance(texts, (bytes, bytearray)) or not isinstance(texts, Iterable):
        raise InputFormatError(f"texts: expected a file path or a list of strings, got {type(texts).__name__}")
    lines = list(texts)
    for i, line in enumerate(lines):
        if not isinstance(line, str) or not line.strip():
            raise InputFormatError(f"texts[{i}]: expected a non-blank string, got {line!r}")
    if not lines:
        raise EmptyContextSetError("no contexts given")
    return lines


def _file_names(names: Sequence[str]) -> list[str]:
    """Names that survive a NumPy string array (which drops trailing NULs) and
    are unique, as the loaders require: a repeat gets ``@`` and its row."""
    out, seen = [], set()
    for i, name in enumerate(names):
        name = str(name).rstrip("\x00")
        if name in seen:
            name = f"{name}@{i}"
        seen.add(name)
        out.append(name)
    return out


@contextlib.contextmanager
def _offline():
    """The hub libraries' offline switches on while loading, so that not even a
    metadata request leaves the machine (``local_files_only`` is passed too)."""
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    old = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: "1" for k in keys})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _quiet(transformers):
    """transformers' own progress bars and loading reports off while loading: a
    caller shows its own progress, and a checkpoint that does not fill the model
    is refused in one line by :func:`_check_loading_info` (or, for weights of
    another shape, :func:`_shape_mismatch`) instead."""
    logging = transformers.utils.logging
    shown = logging.is_progress_bar_enabled()
    verbosity = logging.get_verbosity()
    logging.disable_progress_bar()
    logging.set_verbosity_error()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if shown:
            logging.enable_progress_bar()


def _check_loading_info(path: Path, info) -> None:
    """Refuse a checkpoint that does not hold every weight of the model its
    config.json describes: transformers fills a missing weight (or one of
    another shape) with random numbers and goes on, and the head read off that
    model would be a random network's, not the checkpoint's."""
    info = info if isinstance(info, dict) else getattr(info, "__dict__", {})
    missing = sorted(str(k) for k in info.get("missing_keys") or ())
    mismatched = sorted(str(k[0] if isinstance(k, (tuple, list)) else k) for k in info.get("mismatched_keys") or ())
    if not missing and not mismatched:
        return
    unexpected = len(info.get("unexpected_keys") or ())
    parts = []
    if missing:
        parts.append(f"{len(missing)} weight{'s' if len(missing) != 1 else ''} of the model "
                     f"{'are' if len(missing) != 1 else 'is'} not in the checkpoint (e.g. {missing[0]})")
    if mismatched:
        parts.append(f"{len(mismatched)} {'have' if len(mismatched) != 1 else 'has'} another shape there "
                     f"(e.g. {mismatched[0]})")
    hint = (f"; it holds {unexpected} tensor{'s' if unexpected != 1 else ''} the model does not use: does "
            "config.json's model_type match the weights?") if unexpected else ""
    raise InputFormatError(f"--model {path}: {' and '.join(parts)}, so transformers would initialise them at "
                           f"random; a damaged or incomplete checkpoint{hint}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_common(layer, batch_size, progress):
    if not (layer == "final" or (isinstance(layer, int) and not isinstance(layer, bool))):
        raise InputFormatError(f"--layer {layer!r}: expected 'final' or the index of a hidden state (an integer)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputFormatError(f"--batch-size {batch_size!r}: expected a positive integer")
    if progress is not None and not callable(progress):
        raise InputFormatError("progress: expected a callable progress(done, total)")


def _device(torch, device):
    try:
        dev = torch.device(device)
        torch.empty(0, device=dev)
    except (RuntimeError, AssertionError, TypeError, ValueError) as exc:
        raise InputFormatError(f"--device {device}: not usable here ({_first_line(exc)})") from None
    return dev


# -- the head ----------------------------------------------------------------------

class _Capture:
    """A forward hook on the head: its input and output at each call."""

    def __init__(self, head):
        self.calls: list[tuple[Any, Any]] = []
        self.handle = head.register_forward_hook(self._hook)

    def _hook(self, module, args, output):
        x = args[0] if args else None
        self.calls.append((x, output))

    def take(self, what: str):
        calls, self.calls = self.calls, []
        if len(calls) != 1:
            raise InputFormatError(f"{what}: the head was called {len(calls)} times in one forward pass; "
                                   "expected exactly once")
        x, y = calls[0]
        if isinstance(y, (tuple, list)) and y:
            y = y[0]
        if not (hasattr(x, "shape") and hasattr(y, "shape")):
            raise InputFormatError(f"{what}: the head's input and output are not tensors")
        return x, y

    def close(self):
        self.handle.remove()


def _head_weight(torch, head, d: int, n: int):
    """The head's weight as ``n x d`` and its bias (or None). A ``Linear`` is
    ``n x d`` by definition; another module's ``d x n`` weight (GPT-2's
    ``Conv1D`` layout) is transposed, and a square one is oriented later by
    which reading reproduces the head's output."""
    W = getattr(head, "weight", None)
    if not torch.is_tensor(W) or W.ndim != 2:
        raise InputFormatError(f"the head ({type(head).__name__}) has no 2-D weight")
    W = W.detach()
    if isinstance(head, torch.nn.Linear) or (W.shape == (n, d) and n != d):
        options = [W]
    elif W.shape == (d, n) and n != d:
        options = [W.T]
    elif W.shape == (n, d):
        options = [W, W.T]
    else:
        raise ShapeError(f"the head's weight is {tuple(W.shape)}, but it maps width {d} to {n} outputs")
    b = getattr(head, "bias", None)
    if torch.is_tensor(b):
        b = b.detach().reshape(-1)
        if b.shape[0] != n:
            raise ShapeError(f"the head's bias has {b.shape[0]} entries for {n} outputs")
    else:
        b = None
    return options, b


def _deviation(torch, feats, W, b, logits) -> tuple[float, float]:
    """``(max |feats Wᵀ + b - logits|, max |logits|)``, in float64."""
    recomputed = feats.double() @ W.double().T
    if b is not None:
        recomputed = recomputed + b.double()
    ref = logits.double()
    return float((recomputed - ref).abs().max()), float(ref.abs().max())


def _last_positions(torch, mask):
    """The last position whose mask is 1, per row: right for right padding and
    for left padding alike."""
    positions = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    return torch.where(mask.bool(), positions, torch.full_like(positions, -1)).max(dim=1).values


def _to_numpy(t) -> np.ndarray:
    t = t.detach().cpu()
    # NumPy has no bfloat16, and half precision would only lose digits further
    return t.double().numpy() if t.dtype.is_floating_point and t.element_size() == 8 else t.float().numpy()


# -- checkpoints ---------------------------------------------------------------------

def extract_checkpoint(model_dir, texts, layer: str | int = "final", batch_size: int = DEFAULT_BATCH_SIZE,
                       device: str = "cpu", progress: Progress | None = None, *, padding_side: str | None = None,
                       dtype: str = "float32", max_length: int | None = None) -> Extraction:
    """Run a local Hugging Face causal language model on contexts and read off its head.

    The checkpoint is loaded with ``local_files_only=True`` and the hub's
    offline switches on, so nothing is downloaded, and with
    ``trust_remote_code`` off, so no code from the directory runs. Each context
    is tokenised as the tokenizer does by default (special tokens included),
    cut on the left to the model's window, and run in batches of padded
    sequences. The feature of a context is the head's input at its last real
    token, found from the attention mask, so left and right padding give the
    same rows; position ids are passed from the mask where the model takes
    them. The weight and bias are the output embedding module's
    (``model.get_output_embeddings()``), so a head tied to the input embedding
    is read the same way as an untied one.

    Parameters
    ----------
    model_dir : str or os.PathLike
        A directory written by ``save_pretrained`` (``config.json``, the
        weights, the tokenizer's files).
    texts : str, os.PathLike or sequence of str
        A UTF-8 file with one context per line (blank lines skipped), or the
        contexts (see :func:`read_texts`).
    layer : "final" or int
        ``"final"``: the head's input (after the final norm). An integer: that
        entry of the model's ``hidden_states`` (0 is the embedding output),
        with the same head; the logit check is then not made.
    batch_size : int
        Contexts per forward pass.
    device : str
        A PyTorch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``).
    progress : callable, optional
        ``progress(done, total)``: called with ``done = 0`` once the model is
        loaded, then after each batch with the number of contexts done so far;
        ``total`` is the number of contexts.
    padding_side : {"left", "right"}, optional
        Overrides the tokenizer's padding side (the rows do not depend on it).
    dtype : str
        The dtype the weights are loaded in (``"float32"``; ``"auto"`` keeps the
        checkpoint's). Arrays come back in float32 (float64 for a float64 model).
    max_length : int, optional
        Longest context in tokens; default the model's window (its
        ``max_position_embeddings``) or the tokenizer's ``model_max_length``.
        Longer contexts are cut on the left; a ``max_length`` above the
        model's positions is refused.

    Returns
    -------
    Extraction
        ``features`` (one row per context), the head's ``weight`` and ``bias``,
        the ``tokens`` (``tokenizer.convert_ids_to_tokens`` over the head's
        rows), the ``contexts``, and the logit check.

    Raises
    ------
    InputFormatError
        For a missing directory, one that holds no loadable causal language
        model or no tokenizer (refused before the model is loaded), weights of
        another shape than its config.json gives (named, with both shapes), an
        unreadable text file, a context that gives no tokens or a token id
        beyond the model's input embedding (checked before the model runs), a
        ``max_length`` above the model's positions, a bad option, or when
        PyTorch or transformers is not installed.
    EmptyContextSetError
        When the text file is empty or all blank.
    NonFiniteValueError
        When the model's features or logits are not finite.

    Examples
    --------
    >>> ex = extract_checkpoint("tests/data/tiny_lm_seed0", ["Return a new list", "Open the file"])  # doctest: +SKIP
    >>> ex.features.shape, ex.weight.shape, ex.max_abs_deviation < 1e-5  # doctest: +SKIP
    ((2, 48), (1000, 48), True)
    """
    _check_common(layer, batch_size, progress)
    if padding_side not in (None, "left", "right"):
        raise InputFormatError(f"padding_side {padding_side!r}: expected 'left' or 'right'")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length < 1):
        raise InputFormatError(f"max_length {max_length!r}: expected a positive integer")
    path = Path(model_dir)
    if not path.is_dir():
        raise InputFormatError(f"--model {path}: no such directory")
    if not (path / "config.json").is_file():
        raise InputFormatError(f"--model {path}: not a Hugging Face checkpoint (no config.json)")
    contexts = read_texts(texts)
    torch, transformers = _require()
    dev = _device(torch, device)
    model, tokenizer = _load_checkpoint(torch, transformers, path, dtype, max_length)
    model.to(dev)
    head = model.get_output_embeddings()
    if head is None or not torch.is_tensor(getattr(head, "weight", None)):
        raise InputFormatError(f"--model {path}: the model has no output embedding (LM head) to read")
    n = int(head.weight.shape[0])
    options, bias = _head_weight(torch, head, int(head.weight.shape[-1]), n)
    weight = options[0]

    embedding_rows = _input_rows(model)
    _choose_pad_token(tokenizer, embedding_rows)
    if padding_side is not None:
        tokenizer.padding_side = padding_side
    tokenizer.truncation_side = "left"  # the end of a context is what the next token follows
    positions = _positions(model.config)
    window = [v for v in (max_length, positions, getattr(tokenizer, "model_max_length", None))
              if isinstance(v, int) and 0 < v < 10 ** 9]
    limit = max_length or (min(window) if window else None)
    with _quiet(transformers):  # no warning about the contexts longer than the window: they are counted
        truncated = _check_tokens(tokenizer, contexts, limit, embedding_rows, path)
    import inspect

    takes_positions = "position_ids" in inspect.signature(model.forward).parameters
    final = layer == "final"
    capture = _Capture(head)
    rows, devs, scales = [], [], []
    if progress is not None:
        progress(0, len(contexts))  # loaded: what follows is the contexts
    try:
        with torch.inference_mode():
            for start in range(0, len(contexts), batch_size):
                batch = contexts[start:start + batch_size]
                enc = tokenizer(batch, return_tensors="pt", padding=True, truncation=limit is not None,
                                max_length=limit)
                ids, mask = enc["input_ids"].to(dev), enc["attention_mask"].to(dev)
                kwargs = {"input_ids": ids, "attention_mask": mask, "use_cache": False, "return_dict": True}
                if takes_positions:
                    # what generate() passes: with left padding the first real token must sit at position 0
                    kwargs["position_ids"] = (mask.long().cumsum(-1) - 1).clamp(min=0)
                if not final:
                    kwargs["output_hidden_states"] = True
                out = model(**kwargs)
                x, _ = capture.take(f"--model {path}")
                if tuple(x.shape[:2]) != tuple(ids.shape):
                    raise InputFormatError(f"--model {path}: the head saw shape {tuple(x.shape)} for a batch of "
                                           f"{tuple(ids.shape)} tokens; expected every position")
                last = _last_positions(torch, mask)
                at = torch.arange(ids.shape[0], device=dev)
                logits = out.logits[at, last]
                if final:
                    feats = x[at, last]
                    dv, sc = _deviation(torch, feats, weight, bias, logits)
                    devs.append(dv)
                    scales.append(sc)
                else:
                    states = out.hidden_states
                    if not -len(states) <= layer < len(states):
                        raise InputFormatError(f"--layer {layer}: the model has {len(states)} hidden states "
                                               f"(0 .. {len(states) - 1}, or negative from the end)")
                    feats = states[layer][at, last]
                if not (torch.isfinite(feats).all() and torch.isfinite(logits).all()):
                    raise NonFiniteValueError(f"--model {path}: non-finite features or logits in contexts "
                                              f"{start} .. {start + len(batch) - 1}")
                rows.append(_to_numpy(feats))
                if progress is not None:
                    progress(start + len(batch), len(contexts))
    finally:
        capture.close()
    names = tokenizer.convert_ids_to_tokens(list(range(n)))
    tokens = [t if isinstance(t, str) else f"<id {i}>" for i, t in enumerate(names)]
    return Extraction(
        features=np.concatenate(rows, axis=0), weight=_to_numpy(weight),
        bias=None if bias is None else _to_numpy(bias), tokens=_file_names(tokens), contexts=contexts,
        max_abs_deviation=max(devs) if final else None, logit_scale=max(scales) if final else None,
        source=str(path), layer=layer, truncated=truncated,
        info={"model_type": getattr(model.config, "model_type", None), "dtype": str(weight.dtype),
              "torch": torch.__version__, "transformers": transformers.__version__})


def _safetensors_errors() -> tuple:
    """The exception type of the ``safetensors`` reader (a damaged weights file), where it is installed."""
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers installs it
        return ()
    return (SafetensorError,)


def _load_checkpoint(torch, transformers, path: Path, dtype: str, max_length: int | None = None):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    if dtype != "auto" and not isinstance(getattr(torch, str(dtype), None), torch.dtype):
        raise InputFormatError(f"dtype {dtype!r}: expected 'auto' or a torch dtype such as 'float32'")
    where = str(path.resolve())  # a resolved path is never mistaken for a hub name
    with _offline(), _quiet(transformers):
        try:
            config = AutoConfig.from_pretrained(where, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputFormatError(f"--model {path}: unreadable config.json ({_first_line(exc)})") from None
        if type(config) not in MODEL_FOR_CAUSAL_LM_MAPPING:
            raise InputFormatError(f"--model {path}: not a causal language model (model type "
                                   f"{getattr(config, 'model_type', '?')!r} has no causal-LM head in transformers)")
        positions = _positions(config)
        if max_length is not None and positions is not None and max_length > positions:
            # a position beyond the window has no embedding: refused, where a context is only cut to fit
            raise InputFormatError(f"--max-length {max_length}: the model has {positions} positions (config.json); "
                                   f"give at most {positions}, or leave it out to cut each context to the window")
        # the tokenizer first: it is cheap to load, and a folder without one fails before the model loads
        _check_tokenizer_files(path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True, trust_remote_code=False)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputFormatError(f"--model {path}: cannot load its tokenizer ({_first_line(exc)})") from None
        if isinstance(tokenizer, bool) or not callable(tokenizer):
            raise InputFormatError(f"--model {path}: no tokenizer in the folder")
        try:
            model, info = AutoModelForCausalLM.from_pretrained(
                where, local_files_only=True, trust_remote_code=False, output_loading_info=True,
                dtype="auto" if dtype == "auto" else getattr(torch, dtype))
        except (OSError, ValueError, KeyError, RuntimeError, *_safetensors_errors()) as exc:
            # a weights file cut short or empty is the safetensors reader's own error type
            if "ignore_mismatched_sizes" in str(exc):
                # transformers' own message points to a report it logs, which is not shown here
                raise InputFormatError(_shape_mismatch(torch, path, config)) from None
            raise InputFormatError(f"--model {path}: cannot load the model ({_first_line(exc)})") from None
        _check_loading_info(path, info)
    model.eval()
    return model, tokenizer


#: Files transformers builds a tokenizer from. From a folder with none of them it builds an empty
#: tokenizer of the config's model type without a word, and every context would give no tokens.
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt", "merges.txt",
                    "special_tokens_map.json", "added_tokens.json")


def _check_tokenizer_files(path: Path) -> None:
    """Refuse a checkpoint folder that holds no tokenizer, before its model is loaded."""
    try:
        names = [p.name for p in path.iterdir() if p.is_file()]
    except OSError as exc:
        raise InputFormatError(f"--model {path}: cannot list the folder ({_first_line(exc)})") from None
    if not any(name in _TOKENIZER_FILES or name.endswith((".model", ".tiktoken")) for name in names):
        raise InputFormatError(f"--model {path}: no tokenizer in the folder (no tokenizer.json, "
                               "tokenizer_config.json or vocabulary file); save the model's tokenizer there "
                               "with save_pretrained")


def _positions(config) -> int | None:
    """The number of positions the model embeds (its window), where its config gives one."""
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10 ** 9:
            return value
    return None


def _input_rows(model) -> int | None:
    """The rows of the model's input embedding: the ids it can read."""
    try:
        embedding = model.get_input_embeddings()
    except (NotImplementedError, AttributeError):
        return None
    rows = getattr(embedding, "num_embeddings", None)
    if not isinstance(rows, int):
        weight = getattr(embedding, "weight", None)
        rows = int(weight.shape[0]) if getattr(weight, "ndim", 0) == 2 else None
    return rows


def _choose_pad_token(tokenizer, rows: int | None) -> None:
    """A padding token the model can embed. Any such id will do: padded positions
    are masked out and never read, but they are still looked up in the embedding."""
    def fits(token) -> bool:
        if token is None:
            return False
        i = tokenizer.convert_tokens_to_ids(token)
        return isinstance(i, int) and 0 <= i and (rows is None or i < rows)

    if fits(tokenizer.pad_token):
        return
    for token in (tokenizer.eos_token, tokenizer.unk_token, tokenizer.bos_token):
        if fits(token):
            tokenizer.pad_token = token
            return
    tokenizer.pad_token = tokenizer.convert_ids_to_tokens(0)


def _check_tokens(tokenizer, contexts: list[str], limit: int | None, rows: int | None, path: Path,
                  chunk: int = 1024) -> int:
    """Tokenise every context as the run will, before the model runs: refuse one
    that gives no tokens or an id beyond the model's input embedding (a
    tokenizer that is not the model's), and count those cut to ``limit``."""
    truncated = 0
    for start in range(0, len(contexts), chunk):
        batch = contexts[start:start + chunk]
        kept = tokenizer(batch, truncation=limit is not None, max_length=limit)["input_ids"]
        if limit is not None:
            truncated += sum(len(ids) > limit for ids in tokenizer(batch)["input_ids"])
        for j, ids in enumerate(kept):
            i = start + j
            if len(ids) == 0:
                raise InputFormatError(f"context {i} ({contexts[i]!r}) gives no tokens")
            top = max(int(t) for t in ids)
            if rows is not None and top >= rows:
                raise InputFormatError(f"--model {path}: context {i} ({contexts[i]!r}) gives token id {top}, but "
                                       f"the model's input embedding has {rows} rows (ids 0 .. {rows - 1}); is the "
                                       "tokenizer in the folder the model's?")
    return truncated


def _checkpoint_shapes(torch, path: Path) -> dict[str, tuple[int, ...]]:
    """The shape of every tensor in the checkpoint's weight files, read from the
    safetensors headers (or a PyTorch state dict) without reading the weights."""
    shapes: dict[str, tuple[int, ...]] = {}
    for file in sorted(path.glob("*.safetensors")):
        try:
            with open(file, "rb") as fh:
                size = int.from_bytes(fh.read(8), "little")
                if not 0 < size <= 100 * 2 ** 20:
                    continue
                header = json.loads(fh.read(size))
            shapes.update({k: tuple(int(x) for x in v["shape"]) for k, v in header.items()
                           if k != "__metadata__" and isinstance(v, dict)})
        except (OSError, ValueError, KeyError, TypeError):
            continue
    if not shapes:
        for file in sorted(path.glob("pytorch_model*.bin")):
            try:
                state = torch.load(file, map_location="meta", weights_only=True)
            except Exception:  # noqa: BLE001 - any unreadable file just gives no shapes
                continue
            if isinstance(state, dict):
                shapes.update({str(k): tuple(v.shape) for k, v in state.items() if torch.is_tensor(v)})
    return shapes


def _shape_mismatch(torch, path: Path, config) -> str:
    """One line naming the checkpoint's weights whose shape differs from the
    model its config.json describes: how many, and one with both shapes."""
    from transformers import AutoModelForCausalLM

    found = []
    try:
        with torch.device("meta"):  # shapes only: a config of any size allocates nothing
            model = AutoModelForCausalLM.from_config(config, trust_remote_code=False)
        expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
        prefix = getattr(model, "base_model_prefix", "") or ""
        for key, shape in sorted(_checkpoint_shapes(torch, path).items()):
            # a checkpoint saved from the bare base model lacks the prefix the causal-LM model adds
            for name in (key, f"{prefix}.{key}", key.removeprefix(f"{prefix}.")):
                if name in expected:
                    if expected[name] != shape:
                        found.append((key, shape, expected[name]))
                    break
    except Exception:  # noqa: BLE001 - the message below still says what is wrong
        found = []
    if not found:
        return (f"--model {path}: the checkpoint's weights have other shapes than the model its config.json "
                "describes; was config.json edited, or written for another model?")

    def show(shape):
        return " x ".join(map(str, shape)) if shape else "a scalar"

    key, ours, theirs = found[0]
    many = len(found) != 1
    return (f"--model {path}: {len(found)} weight{'s' if many else ''} of the checkpoint {'have' if many else 'has'} "
            f"another shape than config.json gives (e.g. {key}: {show(ours)} in the checkpoint, {show(theirs)} "
            "from config.json); was config.json edited, or written for another model?")


# -- any module ----------------------------------------------------------------------

def extract_module(module, head, inputs: Iterable, *, position: int = -1, tokens: Sequence[str] | None = None,
                   contexts: Sequence[str] | None = None, device=None,
                   progress: Progress | None = None, total: int | None = None) -> Extraction:
    """The input of ``head`` and its weight, for any PyTorch module that ends in a linear head.

    Each batch is passed to ``module`` (a tensor as its one argument, a tuple
    or list as its arguments, a dict as its keyword arguments) under
    ``torch.inference_mode()``; a forward hook on ``head`` records what it
    receives and returns. The head's input is ``b x d`` (one row per input) or
    ``b x t x d`` (a sequence): there the row is taken at the last position
    whose ``attention_mask`` is 1 when the batch is a dict with one, and at
    ``position`` otherwise.

    Parameters
    ----------
    module : torch.nn.Module
        The model; it must call ``head`` exactly once per forward pass.
    head : torch.nn.Module
        A ``torch.nn.Linear``, or a module with a 2-D ``.weight`` (and
        optionally ``.bias``) whose output is ``weight @ input + bias``.
    inputs : iterable
        The batches.
    position : int
        The sequence position read when there is no attention mask.
    tokens, contexts : sequence of str, optional
        Names to attach (``n`` tokens; one context per row overall).
    device : str or torch.device, optional
        Moves ``module`` and every tensor of each batch there first.
    progress : callable, optional
        ``progress(done, total)`` after each batch, ``done`` counting rows;
        ``total`` is the one given, or ``len(inputs)`` batches' worth of rows
        when it has a length, else 0.
    total : int, optional
        The number of rows expected, for ``progress``.

    Returns
    -------
    Extraction
        The logit check compares ``features @ weight.T + bias`` with the head's
        own output at the rows taken.

    Raises
    ------
    InputFormatError
        When ``head`` has no weight, is not called exactly once per batch, a
        batch is not a tensor, tuple, list or dict, or PyTorch is missing.
    EmptyContextSetError
        When ``inputs`` gives no batch.
    ShapeError
        When the head's weight, bias or names do not fit its input and output.

    Examples
    --------
    >>> import pytest; torch = pytest.importorskip("torch")
    >>> _ = torch.manual_seed(0)
    >>> net = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10))
    >>> ex = extract_module(net, net[1], [torch.tensor([1, 2, 3]), torch.tensor([4])])
    >>> ex.features.shape, ex.weight.shape, ex.bias.shape, ex.max_abs_deviation < 1e-6
    ((4, 4), (10, 4), (10,), True)
    """
    torch = _require_torch()
    if not isinstance(module, torch.nn.Module) or not isinstance(head, torch.nn.Module):
        raise InputFormatError("extract_module: module and head must be torch.nn.Module instances")
    if not torch.is_tensor(getattr(head, "weight", None)):
        raise InputFormatError(f"the head ({type(head).__name__}) has no weight tensor")
    if progress is not None and not callable(progress):
        raise InputFormatError("progress: expected a callable progress(done, total)")
    dev = _device(torch, device) if device is not None else None
    if dev is not None:
        module.to(dev)
    if total is None:
        total = 0
    capture = _Capture(head)
    rows, devs, scales = [], [], []
    weight = bias = None
    done = 0
    was_training = module.training
    module.eval()
    try:
        with torch.inference_mode():
            for k, batch in enumerate(inputs):
                batch = _move(torch, batch, dev)
                if isinstance(batch, dict):
                    module(**batch)
                elif isinstance(batch, (tuple, list)):
                    module(*batch)
                elif torch.is_tensor(batch):
                    module(batch)
                else:
                    raise InputFormatError(f"batch {k}: expected a tensor, tuple, list or dict, got "
                                           f"{type(batch).__name__}")
                x, y = capture.take(f"batch {k}")
                if x.ndim == 3:
                    mask = batch.get("attention_mask") if isinstance(batch, dict) else None
                    at = torch.arange(x.shape[0], device=x.device)
                    if mask is not None:
                        last = _last_positions(torch, mask.to(x.device))
                    else:
                        if not -x.shape[1] <= position < x.shape[1]:
                            raise InputFormatError(f"position {position}: batch {k} has {x.shape[1]} positions")
                        last = torch.full_like(at, position % x.shape[1])
                    x, y = x[at, last], y[at, last]
                elif x.ndim == 1:
                    x, y = x[None], y[None]
                elif x.ndim != 2:
                    raise ShapeError(f"batch {k}: the head's input has shape {tuple(x.shape)}; expected "
                                     "rows (b x d) or sequences (b x t x d)")
                if y.shape != (x.shape[0], y.shape[-1]):
                    raise ShapeError(f"batch {k}: the head maps {tuple(x.shape)} to {tuple(y.shape)}")
                if weight is None:
                    options, bias = _head_weight(torch, head, int(x.shape[1]), int(y.shape[1]))
                    # the reading of a square weight that reproduces the output is the head's own
                    weight = min(options, key=lambda W: _deviation(torch, x, W, bias, y)[0])
                elif x.shape[1] != weight.shape[1] or y.shape[1] != weight.shape[0]:
                    raise ShapeError(f"batch {k}: the head maps width {x.shape[1]} to {y.shape[1]}, "
                                     f"earlier batches {weight.shape[1]} to {weight.shape[0]}")
                if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
                    raise NonFiniteValueError(f"batch {k}: non-finite features or head outputs")
                dv, sc = _deviation(torch, x, weight, bias, y)
                devs.append(dv)
                scales.append(sc)
                rows.append(_to_numpy(x))
                done += x.shape[0]
                if progress is not None:
                    progress(done, max(total, done))
    finally:
        capture.close()
        module.train(was_training)
    if not rows:
        raise EmptyContextSetError("extract_module: the inputs gave no batch")
    features = np.concatenate(rows, axis=0)
    names_t = list(tokens) if tokens is not None else None
    names_c = list(contexts) if contexts is not None else None
    if names_t is not None and len(names_t) != weight.shape[0]:
        raise ShapeError(f"tokens: {len(names_t)} names for {weight.shape[0]} outputs")
    if names_c is not None and len(names_c) != features.shape[0]:
        raise ShapeError(f"contexts: {len(names_c)} names for {features.shape[0]} rows")
    return Extraction(features=features, weight=_to_numpy(weight), bias=None if bias is None else _to_numpy(bias),
                      tokens=names_t, contexts=names_c, max_abs_deviation=max(devs), logit_scale=max(scales),
                      source=type(module).__name__, layer="final", info={"torch": torch.__version__})


def _move(torch, batch, dev):
    if dev is None:
        return batch
    if torch.is_tensor(batch):
        return batch.to(dev)
    if isinstance(batch, dict):
        return {k: _move(torch, v, dev) for k, v in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(_move(torch, v, dev) for v in batch)
    return batch


# -- files ------------------------------------------------------------------------------

def save_extraction(extraction: Extraction, path) -> Path:
    """Write an extraction as ``.npz`` or ``.safetensors``.

    The keys are ``features`` (``m x d``), ``weight`` (``n x d``) and ``bias``
    (``n``; an empty array for a head without bias, which the loaders read as
    no bias), so one command line reads every extracted file::

        allornone analyse --features OUT:features --head OUT:weight --bias OUT:bias --tokens OUT:tokens

    ``tokens`` and ``contexts`` are string arrays in a ``.npz``; a
    ``.safetensors`` file cannot hold strings, so there they are JSON lists in
    the file's metadata under the same keys, where
    :func:`~allornone.numeric.loaders.load_names` finds them. Names are made
    unique (a repeat gets ``@`` and its row), as the loaders require; names
    that were not given are left out.

    Parameters
    ----------
    extraction : Extraction
    path : str or os.PathLike
        Ends in ``.npz`` or ``.safetensors``; its folder must exist.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputFormatError
        For another suffix, an unwritable path, or a missing ``safetensors``
        package.

    Examples
    --------
    >>> import tempfile
    >>> ex = Extraction(np.zeros((1, 2)), np.zeros((3, 2)), bias=np.arange(3.0), contexts=["a"])
    >>> p = save_extraction(ex, os.path.join(tempfile.mkdtemp(), "x.npz"))
    >>> sorted(np.load(p).files)
    ['bias', 'contexts', 'features', 'weight']
    """
    path = Path(path)
    kind = path.suffix.lower()
    if kind not in (".npz", ".safetensors"):
        raise InputFormatError(f"--out {path}: expected a .npz or .safetensors file")
    if not path.parent.is_dir():
        raise InputFormatError(f"--out {path}: no such folder {path.parent}")
    arrays = {"features": np.ascontiguousarray(extraction.features),
              "weight": np.ascontiguousarray(extraction.weight),
              "bias": np.ascontiguousarray(extraction.bias if extraction.bias is not None
                                           else np.zeros(0, dtype=np.asarray(extraction.weight).dtype))}
    names = {key: _file_names(value) for key, value in (("tokens", extraction.tokens),
                                                          ("contexts", extraction.contexts))
             if value is not None}
    if kind != ".npz":
        try:
            from safetensors.numpy import save_file
        except ImportError:
            raise InputFormatError(f"--out {path}: writing .safetensors needs the 'safetensors' package "
                                   "(pip install 'allornone[safetensors]')") from None
    try:
        with replacing(path) as tmp:
            if kind == ".npz":
                np.savez_compressed(tmp, **arrays, **{k: np.array(v, dtype=str) for k, v in names.items()})
            else:
                save_file(arrays, str(tmp), metadata={k: json.dumps(v, ensure_ascii=False)
                                                      for k, v in names.items()})
    except (OSError, *_safetensors_errors()) as exc:
        # (the safetensors writer reports a failed write, a full disk, as its own error type)
        raise InputFormatError(f"--out {path}: cannot write ({_first_line(exc)})") from None
    return path
