"""Arrays of trained models from the files frameworks write.

A tensor is named ``FILE[:KEY]``: ``FILE`` is a ``.npy`` file (no key), a
``.npz`` archive, a ``.safetensors`` file (read with the ``safetensors``
package's NumPy API: no PyTorch needed; bfloat16 and float8 tensors, which
NumPy cannot hold, are decoded from their bits) or a PyTorch state dict (``.pt``,
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
import math
import os
import zipfile
from pathlib import Path

import numpy as np

from allornone.errors import AllOrNoneError, InputFormatError, ShapeError, file_problem, parse_text
from allornone.numeric.rows import RowSource, npy_header

__all__ = ["split_spec", "load_array", "load_names", "load_head", "array_names", "array_shape", "available_memory",
           "check_declared_size", "feature_source", "check_npz_member", "check_safetensors_header", "MEMORY_LIMIT_ENV",
           "LAYOUTS"]

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


# -- declared sizes, checked before anything is allocated ------------------------------

#: An upper bound on the memory the loaders may allocate for one array, in bytes
#: (suffixes K, M, G, T); by default what the system reports as available.
MEMORY_LIMIT_ENV = "ALLORNONE_MEMORY_LIMIT"
#: Deflate encodes at most about 1032 output bytes per input byte: a member that
#: declares more than this ratio of its compressed size lies about its size.
_DEFLATE_RATIO = 1032


def available_memory() -> int | None:
    """Bytes the loaders may allocate: ``$ALLORNONE_MEMORY_LIMIT`` when set,
    else ``MemAvailable`` of ``/proc/meminfo``, else the free physical pages
    (``os.sysconf``); None where none of these can be read (no check then).

    >>> import os
    >>> os.environ[MEMORY_LIMIT_ENV] = "2M"
    >>> available_memory()
    2097152
    >>> del os.environ[MEMORY_LIMIT_ENV]
    """
    limit = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if limit:
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(limit[-1].upper(), 1)
        try:
            value = float(limit[:-1] if scale > 1 else limit) * scale
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise InputFormatError(f"{MEMORY_LIMIT_ENV}={limit!r}: expected a number of bytes, e.g. 8G")
        return int(value)
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _bytes(n: float) -> str:
    """``1536`` as ``'1.5 KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def check_declared_size(where: str, shape, itemsize: int, stored: int | None, numeric: bool = True,
                        room: str = "the file holds {} of data after the header", memory: bool = True) -> None:
    """Refuse an array, before it is read, whose header declares more data than
    the file holds (``stored`` bytes after the header; None: not known), or
    that would not fit in memory once read as 64-bit floats.

    Raises
    ------
    InputFormatError
        A one-line message: the declared shape, the bytes it needs and the
        bytes there are.

    >>> check_declared_size("x.npy", (10 ** 8, 10 ** 5), 8, 80)
    Traceback (most recent call last):
    ...
    allornone.errors.InputFormatError: x.npy: its header declares shape (100000000, 100000) of 8-byte entries (72.8 TiB), but the file holds 80 B of data after the header: a truncated or damaged file
    """
    count = 1
    for n in shape:
        count *= int(n)
    declared = count * int(itemsize)
    text = f"shape {tuple(int(n) for n in shape)} of {itemsize}-byte entries ({_bytes(declared)})"
    if stored is not None and declared > stored:
        raise InputFormatError(f"{where}: its header declares {text}, but {room.format(_bytes(stored))}: a "
                               "truncated or damaged file")
    # read as float64 (and, for other dtypes, held once more while converted)
    need = count * 8 + (declared if numeric and itemsize != 8 else 0) if numeric else declared
    avail = available_memory() if memory else None
    if avail is not None and need > avail:
        source = f"{MEMORY_LIMIT_ENV} allows" if os.environ.get(MEMORY_LIMIT_ENV, "").strip() else "available"
        raise InputFormatError(f"{where}: {text} needs {_bytes(need)} of memory once read"
                               f"{' as 64-bit floats' if numeric else ''}, more than the {_bytes(avail)} {source}; "
                               "nothing was read (free memory, or use a smaller slice of contexts or tokens)")


def _npy_header(fh, where: str) -> tuple:
    """``(shape, dtype, header_end)`` of the ``.npy`` stream ``fh`` (at its start),
    read without reading the data (:func:`allornone.numeric.rows.npy_header`)."""
    shape, _, dtype, end = npy_header(fh, where)
    return shape, dtype, end


def _check_npy_file(path: Path) -> None:
    with open(path, "rb") as fh:
        shape, dtype, end = _npy_header(fh, str(path))
    if not dtype.hasobject:  # object arrays are refused by np.load (no pickle) before any allocation
        check_declared_size(str(path), shape, dtype.itemsize, path.stat().st_size - end, dtype.kind in "biuf")


def check_npz_member(path: Path, archive: zipfile.ZipFile, key: str) -> tuple:
    """Check member ``key`` of an ``.npz`` archive before it is read: the size
    the zip directory declares must fit in the file (and, for a compressed
    member, in what its compressed bytes can hold), and the shape its ``.npy``
    header declares must fit in that size and in memory. Returns the declared
    ``(shape, dtype)``."""
    where = f"{path}:{key}"
    name = key if key in archive.namelist() else f"{key}.npy"
    info = archive.getinfo(name)
    size = path.stat().st_size
    if info.header_offset + info.compress_size > size:
        raise InputFormatError(f"{where}: the archive declares {_bytes(info.compress_size)} for this member, beyond "
                               f"the end of the file ({_bytes(size)}): a truncated or damaged file")
    if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size:
        raise InputFormatError(f"{where}: a stored member declares {_bytes(info.file_size)} but holds "
                               f"{_bytes(info.compress_size)}: a damaged archive")
    if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > _DEFLATE_RATIO * info.compress_size + 1024:
        raise InputFormatError(f"{where}: the member declares {_bytes(info.file_size)} from "
                               f"{_bytes(info.compress_size)} of compressed data, more than deflate can hold: a "
                               "damaged archive")
    try:
        with archive.open(name) as fh:
            shape, dtype, end = _npy_header(fh, where)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputFormatError(f"{where}: damaged archive member ({exc})") from None
    if not dtype.hasobject:
        check_declared_size(where, shape, dtype.itemsize, info.file_size - end, dtype.kind in "biuf")
    return shape, dtype


def _check_zip_directory(path: Path) -> None:
    """Every member of a zip archive (a PyTorch state dict) lies within the file,
    and a stored member holds the bytes it declares."""
    size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputFormatError(f"{path}: not a readable zip archive ({exc})") from None
    for info in infos:
        if info.header_offset + info.compress_size > size or (
                info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size):
            raise InputFormatError(f"{path}: member {info.filename!r} declares {_bytes(info.file_size)}, beyond "
                                   f"what the file ({_bytes(size)}) holds: a truncated or damaged file")


#: Bytes per entry of the safetensors dtypes.
_SAFETENSORS_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "I16": 2, "F16": 2,
                         "BF16": 2, "U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8}


def check_safetensors_header(path: Path, memory: bool = True) -> dict:
    """The tensors a ``.safetensors`` file declares, ``name -> (shape, dtype)``,
    each checked against the file before anything is read: the header's length
    must fit in the file, each tensor's byte range must lie in the data and
    match its shape and dtype."""
    import struct

    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise InputFormatError(f"{path}: not a readable .safetensors file (shorter than its 8-byte header "
                                   "length)")
        (length,) = struct.unpack("<Q", head)
        if length > size - 8:
            raise InputFormatError(f"{path}: its header declares {_bytes(length)} of metadata, but the file holds "
                                   f"{_bytes(size - 8)} after the length: a truncated or damaged file")
        header = parse_text(json.loads, fh.read(length), f"{path}: not a readable .safetensors file, its header")
    if not isinstance(header, dict):
        raise InputFormatError(f"{path}: not a readable .safetensors file (its header is not a JSON object)")
    data = size - 8 - length
    out = {}
    for key, spec in header.items():
        if key == "__metadata__":
            continue
        where = f"{path}:{key}"
        try:
            dtype, shape, (start, stop) = spec["dtype"], [int(n) for n in spec["shape"]], spec["data_offsets"]
            start, stop = int(start), int(stop)
        except (TypeError, KeyError, ValueError) as exc:
            raise InputFormatError(f"{where}: not a readable .safetensors entry ({type(exc).__name__}: {exc})") \
                from None
        itemsize = _SAFETENSORS_ITEMSIZE.get(dtype)
        if itemsize is None or any(n < 0 for n in shape) or not 0 <= start <= stop:
            raise InputFormatError(f"{where}: not a readable .safetensors entry (dtype {dtype!r}, shape {shape}, "
                                   f"bytes {start}..{stop})")
        if stop > data:
            raise InputFormatError(f"{where}: its header places it at bytes {start}..{stop} of the data, but the "
                                   f"file holds {_bytes(data)} of data: a truncated or damaged file")
        check_declared_size(where, shape, itemsize, stop - start, room="its byte range in the file holds {}",
                            memory=memory)
        out[key] = (tuple(shape), dtype)
    return out


def _float8_table(exponent: int, mantissa: int, ieee: bool) -> np.ndarray:
    """The 256 values of an 8-bit float (1 sign, ``exponent``, ``mantissa`` bits;
    bias ``2**(exponent - 1) - 1``) as float64, every one exact. ``ieee``: the top
    exponent holds infinities and NaNs (E5M2); otherwise only the all-ones code
    is NaN and there is no infinity (E4M3FN).

    >>> _float8_table(4, 3, False)[[0x00, 0x01, 0x38, 0x7E, 0x7F, 0xB8]].tolist()
    [0.0, 0.001953125, 1.0, 448.0, nan, -1.0]
    >>> _float8_table(5, 2, True)[[0x3C, 0x7B, 0x7C, 0x01]].tolist()
    [1.0, 57344.0, inf, 1.52587890625e-05]
    """
    codes = np.arange(256)
    bias = (1 << (exponent - 1)) - 1
    e = (codes >> mantissa) & ((1 << exponent) - 1)
    m = (codes & ((1 << mantissa) - 1)) / float(1 << mantissa)
    value = np.where(e == 0, m * 2.0 ** (1 - bias), (1 + m) * np.exp2(e - bias))
    top = (1 << exponent) - 1
    if ieee:
        value = np.where(e == top, np.where(m == 0, np.inf, np.nan), value)
    else:
        value = np.where((e == top) & (m == (1 - 1 / (1 << mantissa))), np.nan, value)
    return np.where(codes & 0x80, -value, value)


#: The safetensors dtypes NumPy cannot hold, and the itemsize they are read with.
_SAFETENSORS_SMALL_FLOATS = {"BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}


def _small_floats(path: Path, key: str, declared: tuple) -> np.ndarray:
    """Tensor ``key`` of a ``.safetensors`` file stored as bfloat16 or float8,
    as float64 (every such value is exact there), read from its bytes (whose
    range :func:`check_safetensors_header` checked against the file)."""
    import struct

    shape, dtype = declared
    try:
        with open(path, "rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            start, stop = (int(v) for v in json.loads(fh.read(length))[key]["data_offsets"])
            fh.seek(8 + length + start)
            raw = fh.read(stop - start)
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise InputFormatError(f"{path}:{key}: not a readable .safetensors entry ({exc})") from None
    count = 1
    for n in shape:
        count *= int(n)
    if len(raw) != count * _SAFETENSORS_SMALL_FLOATS[dtype]:
        raise InputFormatError(f"{path}:{key}: its {dtype} data is {_bytes(len(raw))} for shape {tuple(shape)}: "
                               "a truncated or damaged file")
    if dtype == "BF16":
        # a bfloat16 is the upper half of the float32 with the same value
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64).reshape(shape)
    table = _float8_table(4, 3, False) if dtype == "F8_E4M3" else _float8_table(5, 2, True)
    return table[np.frombuffer(raw, dtype=np.uint8)].reshape(shape)


def open_npz(path: Path):
    """The ``.npz`` archive at ``path`` (``numpy.load``, no pickles), or a one-line
    :class:`~allornone.errors.InputFormatError`. ``np.load`` reads anything that
    is not a zip archive as a (possibly pickled) ``.npy`` array, and reports a
    damaged archive only when a member is read, so the zip is checked first."""
    if not zipfile.is_zipfile(path):
        raise InputFormatError(f"{path}: not a .npz file (not a zip archive of .npy arrays)")
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputFormatError(f"{path}: not a readable .npz file ({exc})") from None
    names = archive.zip.namelist()
    if len(set(names)) != len(names):
        # a zip may hold one name twice, and only the last copy would be read
        twice = sorted({n for n in names if names.count(n) > 1})
        archive.close()
        raise InputFormatError(f"{path}: the archive holds {twice[0]!r} more than once; which copy is meant "
                               "is not known")
    return archive


def _open(path: Path) -> dict:
    """A mapping ``name -> loader`` for the arrays in ``path`` (read lazily)."""
    if not path.is_file():
        raise InputFormatError(f"{path}: {file_problem(path)}")
    kind = _kind(path)
    if kind == "npy":
        _check_npy_file(path)
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise InputFormatError(f"{path}: not a readable .npy file ({exc})") from None
        return {None: lambda: arr}
    if kind == "npz":
        archive = open_npz(path)

        def member(key):
            check_npz_member(path, archive.zip, key)
            try:
                return archive[key]
            except ValueError as exc:
                raise InputFormatError(f"{path}:{key}: cannot be read ({exc}"
                                       f"{'; object arrays need pickle, which is refused' if 'pickle' in str(exc) else ''})") from None
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise InputFormatError(f"{path}:{key}: damaged archive member ({exc})") from None
        return {key: (lambda key=key: member(key)) for key in archive.files}
    if kind == "safetensors":
        try:
            from safetensors import SafetensorError, safe_open
        except ImportError:  # pragma: no cover - the test extra installs it
            raise InputFormatError(f"{path}: reading .safetensors needs the 'safetensors' package "
                                   "(pip install 'allornone[safetensors]')") from None
        declared = check_safetensors_header(path)

        def tensor(key):
            if declared[key][1] in _SAFETENSORS_SMALL_FLOATS:
                # NumPy has no bfloat16 or float8 dtype: their bits are decoded here, exactly
                return _small_floats(path, key, declared[key])
            # only the tensor asked for is read (safe_open maps the file), after its declared size was checked
            try:
                with safe_open(str(path), framework="np") as f:
                    return f.get_tensor(key)
            except (SafetensorError, OSError, ValueError, TypeError) as exc:
                raise InputFormatError(f"{path}: not a readable .safetensors file "
                                       f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
        return {key: (lambda key=key: tensor(key)) for key in declared}
    return _open_torch(path)


def _open_torch(path: Path) -> dict:
    try:
        import torch
    except ImportError:
        raise InputFormatError(f"{path}: reading a PyTorch state dict needs PyTorch "
                               "(pip install 'allornone[torch]'), or save the tensors as .safetensors") from None
    # A zip-format state dict is memory-mapped, so no storage is allocated when it is
    # loaded (after its directory was checked against the file); each tensor's size
    # is checked when it is read. An older file is read whole: its size must fit.
    mapped = zipfile.is_zipfile(path)
    if mapped:
        _check_zip_directory(path)
    else:
        check_declared_size(str(path), (path.stat().st_size,), 1, None, numeric=False)
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True, mmap=mapped)
    except Exception as exc:  # torch raises many types (UnpicklingError, RuntimeError, MemoryError, ...)
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, (KeyError, IndexError, EOFError, ValueError)) and not mapped:
            # (the legacy reader's errors on bytes that are no pickle -- KeyError: '174812789'
            # -- name nothing a reader of the message could use)
            text = f"damaged, or not a PyTorch file: {type(exc).__name__} {text}"
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
        if value.layout != torch.strided:
            # densifying could need far more memory than the file's size says: the user converts it
            raise InputFormatError(f"{path}:{key}: a {str(value.layout).replace('torch.', '')} tensor; save it "
                                   "dense (tensor.to_dense())")
        if value.is_complex() or value.dtype == torch.bool or value.is_quantized:
            # as for .npy files: a cast to float64 would drop the imaginary part or read booleans as numbers
            raise InputFormatError(f"{path}:{key}: expected real numbers, got dtype "
                                   f"{str(value.dtype).replace('torch.', '')}")
        check_declared_size(f"{path}:{key}", tuple(value.shape), value.element_size(), None)
        try:
            return value.detach().to(torch.float64).numpy()
        except (RuntimeError, TypeError) as exc:
            raise InputFormatError(f"{path}:{key}: cannot be read as numbers ({_first(exc)})") from None
    return {key: (lambda key=key: tensor(key)) for key in state}


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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
        raise InputFormatError(f"{what} {path}: the file holds one unnamed array; drop ':{key}'")
    if key not in members:
        raise InputFormatError(f"{path}: no array {key!r}; it holds: {_list(members)}")
    return members[key]()


def _head_fits(d: int, shape: tuple, head: str, features: str, layout: str) -> None:
    """A :class:`ShapeError` unless a head of ``shape`` reads ``d`` features in ``layout``."""
    if d not in shape or (layout == "n-by-d" and shape[1] != d) or (layout == "d-by-n" and shape[0] != d):
        want = {"n-by-d": f" (n x d, as --head-layout {layout} says)", "d-by-n": f" (d x n, as --head-layout "
                f"{layout} says)"}.get(layout, "")
        raise ShapeError(f"--head {head} is {shape[0]}x{shape[1]} but --features {features} has "
                         f"d = {d} columns{want}")


def array_shape(spec: str) -> tuple | None:
    """The shape of the array ``FILE[:KEY]`` as its file declares it, read from
    the header alone (None for a PyTorch file, whose shapes are in its pickle).

    >>> import tempfile, numpy as np, os
    >>> path = os.path.join(tempfile.mkdtemp(), "h.npz")
    >>> np.savez(path, W=np.zeros((5, 3)))
    >>> array_shape(f"{path}:W"), array_shape(path)
    ((5, 3), (5, 3))
    """
    path, key = split_spec(spec)
    if not path.is_file():
        raise InputFormatError(f"{path}: {file_problem(path)}")
    kind = _kind(path)
    if kind == "npy":
        with open(path, "rb") as fh:
            return tuple(_npy_header(fh, str(path))[0])
    if kind == "npz":
        if not zipfile.is_zipfile(path):
            raise InputFormatError(f"{path}: not a .npz file (not a zip archive of .npy arrays)")
        with zipfile.ZipFile(path) as archive:
            names = [n[:-4] if n.endswith(".npy") else n for n in archive.namelist()]
            key = key if key is not None else (names[0] if len(names) == 1 else None)
            if key not in names:
                return None
            name = key if key in archive.namelist() else f"{key}.npy"
            with archive.open(name) as fh:
                return tuple(_npy_header(fh, f"{path}:{key}")[0])
    if kind == "safetensors":
        declared = check_safetensors_header(path)
        key = key if key is not None else (next(iter(declared)) if len(declared) == 1 else None)
        return declared[key][0] if key in declared else None
    return None


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
    return parse_text(json.loads, text, f"{what} {path}:{key}: metadata entry")


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
            raise InputFormatError(f"{what} {path}: {file_problem(path)}")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"{what} {path}: not readable ({exc})") from None
        names = parse_text(json.loads, text, f"{what} {path}") if path.suffix.lower() == ".json" else \
            text.splitlines()
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


def feature_source(spec: str, what: str = "--features"):
    """A :class:`~allornone.numeric.rows.RowSource` for the feature matrix
    ``FILE[:KEY]`` when, read whole as 64-bit floats, it would not fit in the
    memory the loaders may allocate (:func:`available_memory`) and its file
    can be read a block of rows at a time (a C-ordered ``.npy`` array or a
    ``.safetensors`` tensor); None when it fits, or for other files, which are
    read (or refused) as before.

    Its header is checked against the file as for every array; the entries are
    checked to be finite as they are read."""

    path, key = split_spec(spec)
    if not path.is_file():
        return None
    kind = _kind(path)
    avail = available_memory()
    if avail is None or kind not in ("npy", "safetensors"):
        return None
    if kind == "npy":
        if key is not None:
            return None   # load_array says what is wrong with the key
        with open(path, "rb") as fh:
            shape, dtype, end = _npy_header(fh, str(path))
        if dtype.hasobject or dtype.kind not in "biuf":
            return None
        count = int(np.prod(shape, dtype=object)) if len(shape) else 1
        check_declared_size(str(path), shape, dtype.itemsize, path.stat().st_size - end, memory=False)
        if count * 8 <= avail:
            return None
        return RowSource.npy(path, f"{what} {path}")
    declared = check_safetensors_header(path, memory=False)
    key = key if key is not None else (next(iter(declared)) if len(declared) == 1 else None)
    if key not in declared:
        return None
    shape, dtype = declared[key]
    count = int(np.prod(shape, dtype=object)) if len(shape) else 1
    if count * 8 <= avail:
        return None
    return RowSource.safetensors(path, key, shape, dtype, f"{what} {path}:{key}")


#: How ``load_head`` reads the head: ``auto`` (``n x d``, or ``d x n`` when only that fits the
#: features; a square head as ``n x d``), ``n-by-d`` (a row per token, PyTorch's ``Linear.weight``)
#: or ``d-by-n`` (a column per token, a Keras ``Dense`` kernel).
LAYOUTS = ("auto", "n-by-d", "d-by-n")


def load_head(features: str, head: str, bias: str | None = None, pivot: int = 0, contexts: str | None = None,
              tokens: str | None = None, tolerance=None, layout: str = "auto", warn=None):
    """A :class:`~allornone.numeric.FloatModel` from an output layer and its inputs.

    Parameters
    ----------
    features : str
        ``FILE[:KEY]`` of the ``m x d`` inputs of the output layer, one row per
        context. When they would not fit in memory as 64-bit floats, a
        ``.npy`` or ``.safetensors`` file is read a block of rows at a time
        (:func:`feature_source`); any other is refused before it is read.
    head : str
        ``FILE[:KEY]`` of the output weight, ``n x d`` or ``d x n``.
    bias : str, optional
        ``FILE[:KEY]``, or a bare ``KEY`` in the head's file: the ``n`` biases
        (an empty array: no bias).
    pivot : int
        The pivot token.
    contexts, tokens : str, optional
        Names of the contexts and tokens (see :func:`load_names`).
    layout : {"auto", "n-by-d", "d-by-n"}
        How the head is oriented (:data:`LAYOUTS`). A square head (``n = d``)
        cannot be told apart: ``auto`` reads it as ``n x d``.
    warn : callable, optional
        Called with a one-line message when the orientation was ambiguous and
        ``auto`` chose it.

    Returns
    -------
    FloatModel
        With the bias folded in (see :meth:`FloatModel.from_head`).
    """
    from allornone.numeric.linalg import DEFAULT_TOLERANCE
    from allornone.numeric.model import FloatModel

    if layout not in LAYOUTS:
        raise InputFormatError(f"layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    try:
        shape = array_shape(features)
    except AllOrNoneError:
        shape = None   # (said again, in its place, where the features are read)
    W = None
    if shape is not None and len(shape) == 2:
        # the head against the features' header, before the features are read:
        # they may be gigabytes
        W = _numeric(load_array(head, "--head"), head, (2,))
        _head_fits(shape[1], W.shape, head, features, layout)
    # features larger than memory are read a block of rows at a time; the head is held whole
    X = feature_source(features)
    if X is None:
        X = _numeric(load_array(features, "--features"), features, (2,))
    if W is None:
        W = _numeric(load_array(head, "--head"), head, (2,))
    b = None
    if bias is not None:
        head_path, _ = split_spec(head)
        bare = not (":" in bias or os.path.exists(bias))
        spec = f"{head_path}:{bias}" if bare else bias
        if bare and Path(head_path).suffix.lower() == ".npy":
            # (a bare KEY is looked up in the head's file, which holds one unnamed array)
            raise InputFormatError(f"--bias {bias}: no file of that name, and a bare key is read from the "
                                   f"head's file, which is a single .npy array ({head_path}); give --bias "
                                   "FILE[:KEY]")
        b = _numeric(load_array(spec, "--bias"), spec, (1, 2))
        if b.ndim == 2 and 1 not in b.shape:
            raise ShapeError(f"{spec}: expected a vector of biases, got shape {tuple(b.shape)}")
        # an empty vector is a head without bias, so one command line reads every extracted file
        b = b.reshape(-1) if b.size else None
    d = X.shape[1]
    _head_fits(d, W.shape, head, features, layout)
    square = None
    if layout == "d-by-n":
        W = W.T
    elif layout == "auto" and W.shape[0] == W.shape[1]:
        square = (f"--head {head} is square ({d} x {d}): read as n x d, a row per token (PyTorch's Linear.weight); "
                  "if it has a column per token (a Keras Dense kernel), pass --head-layout d-by-n")
    n = W.shape[0] if W.shape[1] == d else W.shape[1]
    if n == 0:
        raise ShapeError(f"--head {head} has no tokens ({W.shape[0]} x {W.shape[1]}): a distribution needs at "
                         "least one")
    if b is not None and b.shape[0] != n:
        raise ShapeError(f"--bias has {b.shape[0]} entries but the head has n = {n} tokens")
    ctx = load_names(contexts, X.shape[0], "--contexts") if contexts else None
    tok = load_names(tokens, n, "--tokens") if tokens else None
    if not 0 <= pivot < n:
        raise InputFormatError(f"--pivot {pivot} is out of range for {n} tokens")
    model = FloatModel.from_head(X, W, b, pivot, ctx, tok, tolerance=tolerance or DEFAULT_TOLERANCE)
    if square is not None and warn is not None:
        # (after the model is made: a head refused for another reason is one line)
        warn(square)
    return model
