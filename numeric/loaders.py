"""Arrays of trained models from the files frameworks write.

A tensor is named ``FILE[:KEY]``: ``FILE`` is a ``.npy`` file (no key), a
``.npz`` archive, a ``.safetensors`` file (read with the ``safetensors``
package's NumPy API: no PyTorch needed) or a PyTorch state dict (``.pt``,
``.pth``, ``.bin``; needs the optional ``torch`` extra and is read with
``weights_only=True``, so no code in the file is run). ``KEY`` is the tensor's
name in the file; it may be left out when the file holds one array.

Every mistake (a missing file or key, an unreadable file, a shape that does not
fit) raises an :class:`~allornone.errors.InputFormatError` or
:class:`~allornone.errors.ShapeError` with a one-line message.

>>> import tempfile, numpy as np, os
>>> path = os.path.join(tempfile.mkdtemp(), "head.npz")
>>> np.savez(path, W=np.eye(3), b=np.zeros(3), X=np.ones((2, 3)))
>>> load_array(f"{path}:W").shape
(3, 3)
>>> model = load_head(f"{path}:X", f"{path}:W", bias="b")
>>> model.m, model.n, model.d
(2, 3, 4)
>>> load_array(f"{path}:V")
Traceback (most recent call last):
...
allornone.errors.InputFormatError: ...head.npz: no array 'V'; it holds: W, X, b
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from allornone.errors import InputFormatError, ShapeError

__all__ = ["split_spec", "load_array", "load_names", "load_head", "array_names"]

_TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``FILE[:KEY]`` as ``(path, key)``; a path that exists as given wins over
    a split at its last colon.

    >>> split_spec("model.npz:out.weight")
    (PosixPath('model.npz'), 'out.weight')
    """
    if not isinstance(spec, str) or not spec:
        raise InputFormatError("expected FILE or FILE:KEY")
    if os.path.exists(spec) or ":" not in spec:
        return Path(spec), None
    path, key = spec.rsplit(":", 1)
    if not path:
        raise InputFormatError(f"{spec}: no file before ':'")
    return Path(path), key or None


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".npy"):
        return "npy"
    if name.endswith(".npz"):
        return "npz"
    if name.endswith(".safetensors"):
        return "safetensors"
    if name.endswith(_TORCH_SUFFIXES):
        return "torch"
    raise InputFormatError(f"{path}: unknown file type; expected .npy, .npz, .safetensors or a PyTorch state "
                           f"dict ({', '.join(_TORCH_SUFFIXES)})")


def _open(path: Path) -> dict:
    """A mapping ``name -> loader`` for the arrays in ``path`` (read lazily)."""
    if not path.is_file():
        raise InputFormatError(f"{path}: no such file")
    kind = _kind(path)
    if kind == "npy":
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise InputFormatError(f"{path}: not a readable .npy file ({exc})") from None
        return {None: lambda: arr}
    if kind == "npz":
        if not zipfile.is_zipfile(path):
            raise InputFormatError(f"{path}: not a .npz file (not a zip archive of .npy arrays)")
        try:
            archive = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise InputFormatError(f"{path}: not a readable .npz file ({exc})") from None

        def member(key):
            try:
                return archive[key]
            except ValueError as exc:
                raise InputFormatError(f"{path}:{key}: cannot be read without pickle ({exc})") from None
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise InputFormatError(f"{path}:{key}: damaged archive member ({exc})") from None
        return {key: (lambda key=key: member(key)) for key in archive.files}
    if kind == "safetensors":
        try:
            from safetensors import SafetensorError
            from safetensors.numpy import load_file
        except ImportError:  # pragma: no cover - the test extra installs it
            raise InputFormatError(f"{path}: reading .safetensors needs the 'safetensors' package "
                                   "(pip install 'allornone[safetensors]')") from None
        try:
            tensors = load_file(str(path))
        except (SafetensorError, OSError, ValueError, TypeError) as exc:
            raise InputFormatError(f"{path}: not a readable .safetensors file "
                                   f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
        return {key: (lambda key=key: tensors[key]) for key in tensors}
    return _open_torch(path)


def _open_torch(path: Path) -> dict:
    try:
        import torch
    except ImportError:
        raise InputFormatError(f"{path}: reading a PyTorch state dict needs PyTorch "
                               "(pip install 'allornone[torch]'), or save the tensors as .safetensors") from None
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types (UnpicklingError, RuntimeError, ...)
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputFormatError(f"{path}: not a PyTorch state dict that loads with weights_only=True ({text})") \
            from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if torch.is_tensor(state):
        state = {None: state}
    if not isinstance(state, dict):
        raise InputFormatError(f"{path}: holds a {type(state).__name__}, not a state dict of tensors")

    def tensor(key):
        value = state[key]
        if not torch.is_tensor(value):
            raise InputFormatError(f"{path}:{key}: is a {type(value).__name__}, not a tensor")
        return value.detach().to(torch.float64).numpy()
    return {key: (lambda key=key: tensor(key)) for key in state}


def array_names(path) -> list[str]:
    """The names of the arrays in a file (empty for a ``.npy`` file)."""
    return sorted(k for k in _open(Path(path)) if k is not None)


def load_array(spec: str, what: str = "array") -> np.ndarray:
    """The array named by ``FILE[:KEY]``.

    Parameters
    ----------
    spec : str
        ``FILE`` or ``FILE:KEY``.
    what : str
        How error messages name the array (``"--head"``, say).

    Returns
    -------
    numpy.ndarray
        The array as stored (numeric arrays are not yet converted to float).

    Raises
    ------
    InputFormatError
        When the file cannot be read, or has no such key, or a key is needed.
    """
    path, key = split_spec(spec)
    members = _open(path)
    if key is None:
        if None in members:
            return members[None]()
        if len(members) == 1:
            return next(iter(members.values()))()
        raise InputFormatError(f"{what} {path}: holds {len(members)} arrays; name one as {path}:KEY "
                               f"({_list(members)})")
    if None in members:
        raise InputFormatError(f"{what} {path}: a .npy file holds one array; drop ':{key}'")
    if key not in members:
        raise InputFormatError(f"{path}: no array {key!r}; it holds: {_list(members)}")
    return members[key]()


def _list(members, limit: int = 12) -> str:
    names = sorted(str(k) for k in members)
    return ", ".join(names[:limit]) + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def _numeric(arr, spec: str, ndim: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.dtype.kind not in "iuf":
        raise InputFormatError(f"{spec}: expected numbers, got dtype {arr.dtype}")
    if arr.ndim not in ndim:
        raise ShapeError(f"{spec}: expected a {' or '.join(f'{d}-D' for d in ndim)} array, got shape "
                         f"{tuple(arr.shape)}")
    arr = arr.astype(np.float64, copy=False)
    if arr.size and not np.isfinite(arr).all():
        place = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise InputFormatError(f"{spec}: entry {list(place)} is {arr[place]}; only finite numbers are allowed")
    return arr


def _metadata_names(path: Path, key: str | None, what: str) -> list | None:
    """A JSON list stored under ``key`` in a ``.safetensors`` file's metadata
    (which holds no strings as tensors), or None where there is no such entry."""
    if key is None or not path.name.lower().endswith(".safetensors") or not path.is_file():
        return None
    try:
        from safetensors import safe_open
        with safe_open(str(path), framework="np") as f:
            if key in f.keys():
                return None
            text = (f.metadata() or {}).get(key)
    except Exception:  # an unreadable file is reported by load_array, which reads it next
        return None
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"{what} {path}:{key}: metadata entry is not JSON ({exc})") from None


def load_names(spec: str, count: int, what: str) -> list[str]:
    """Names (contexts or tokens): a 1-D array of strings ``FILE[:KEY]``, a JSON
    list of strings in a ``.safetensors`` file's metadata under ``KEY``, a
    ``.txt`` file with one name per line, or a ``.json`` list of strings."""
    path, key = split_spec(spec)
    listed = _metadata_names(path, key, what)
    if listed is not None:
        names = listed
    elif path.suffix.lower() in (".txt", ".json") and key is None:
        if not path.is_file():
            raise InputFormatError(f"{what} {path}: no such file")
        try:
            text = path.read_text(encoding="utf-8")
            names = json.loads(text) if path.suffix.lower() == ".json" else text.splitlines()
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputFormatError(f"{what} {path}: not readable ({exc})") from None
    else:
        arr = load_array(spec, what)
        if arr.ndim != 1 or arr.dtype.kind not in "US":
            raise InputFormatError(f"{what} {spec}: expected a 1-D array of strings")
        names = [s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s) for s in arr.tolist()]
    if not isinstance(names, list) or not all(isinstance(s, str) for s in names):
        raise InputFormatError(f"{what} {spec}: expected a list of strings")
    if len(names) != count:
        raise ShapeError(f"{what} {spec}: {len(names)} names for {count} rows")
    if len(set(names)) != len(names):
        raise ShapeError(f"{what} {spec}: names are not unique")
    return names


def load_head(features: str, head: str, bias: str | None = None, pivot: int = 0, contexts: str | None = None,
              tokens: str | None = None, tolerance=None):
    """A :class:`~allornone.numeric.FloatModel` from an output layer and its inputs.

    Parameters
    ----------
    features : str
        ``FILE[:KEY]`` of the ``m x d`` inputs of the output layer, one row per context.
    head : str
        ``FILE[:KEY]`` of the output weight, ``n x d`` or ``d x n``.
    bias : str, optional
        ``FILE[:KEY]``, or a bare ``KEY`` in the head's file: the ``n`` biases
        (an empty array: no bias).
    pivot : int
        The pivot token.
    contexts, tokens : str, optional
        Names of the contexts and tokens (see :func:`load_names`).

    Returns
    -------
    FloatModel
        With the bias folded in (see :meth:`FloatModel.from_head`).
    """
    from allornone.numeric.linalg import DEFAULT_TOLERANCE
    from allornone.numeric.model import FloatModel

    X = _numeric(load_array(features, "--features"), features, (2,))
    W = _numeric(load_array(head, "--head"), head, (2,))
    b = None
    if bias is not None:
        head_path, _ = split_spec(head)
        spec = bias if (":" in bias or os.path.exists(bias)) else f"{head_path}:{bias}"
        b = _numeric(load_array(spec, "--bias"), spec, (1, 2))
        if b.ndim == 2 and 1 not in b.shape:
            raise ShapeError(f"{spec}: expected a vector of biases, got shape {tuple(b.shape)}")
        # an empty vector is a head without bias, so one command line reads every extracted file
        b = b.reshape(-1) if b.size else None
    d = X.shape[1]
    if d not in W.shape:
        raise ShapeError(f"--head {head} is {W.shape[0]}x{W.shape[1]} but --features {features} has "
                         f"d = {d} columns")
    n = W.shape[0] if W.shape[1] == d else W.shape[1]
    if b is not None and b.shape[0] != n:
        raise ShapeError(f"--bias has {b.shape[0]} entries but the head has n = {n} tokens")
    ctx = load_names(contexts, X.shape[0], "--contexts") if contexts else None
    tok = load_names(tokens, n, "--tokens") if tokens else None
    if not 0 <= pivot < n:
        raise InputFormatError(f"--pivot {pivot} is out of range for {n} tokens")
    return FloatModel.from_head(X, W, b, pivot, ctx, tok, tolerance=tolerance or DEFAULT_TOLERANCE)
