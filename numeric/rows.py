r"""Feature matrices read a block of rows at a time, never whole.

A :class:`RowSource` stands for an ``m x d`` matrix stored in a file -- a
C-ordered ``.npy`` array or a tensor of a ``.safetensors`` file -- that may be
larger than memory. :meth:`RowSource.block` reads rows ``lo:hi`` as a float64
array (a ``.npy`` file by ``seek`` and ``readinto`` into the block's own
buffer, so that no mapping of the whole file takes address space; a
``.safetensors`` tensor through ``safe_open(...).get_slice``), and checks that
every entry read is finite: a NaN or an infinity raises
:class:`~allornone.errors.NonFiniteValueError` naming the entry.

:func:`blocks` iterates the row blocks of either a ``RowSource`` or an
in-memory array (a float32 array is converted a block at a time), which is
how :mod:`~allornone.numeric.spectra`, :mod:`~allornone.numeric.graded` and
:mod:`~allornone.numeric.study` read features. :func:`block_entries` sizes
the blocks: at most :data:`BLOCK_ENTRIES` entries, and a 256th of
``$ALLORNONE_MEMORY_LIMIT`` when that is set, so that a declared limit also
bounds the working arrays.

>>> import os, tempfile, numpy as np
>>> path = os.path.join(tempfile.mkdtemp(), "f.npy")
>>> np.save(path, np.arange(12, dtype=np.float32).reshape(4, 3))
>>> src = RowSource.npy(path)
>>> src.shape, src.block(1, 3).tolist()
((4, 3), [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
>>> [b.shape for _, b in blocks(src.with_column(1.0), 3)]
[(3, 4), (1, 4)]
"""
from __future__ import annotations

import math
import os
import tokenize

import numpy as np
from allornone.errors import InputFormatError, NonFiniteValueError

__all__ = ["BLOCK_ENTRIES", "RowSource", "block_entries", "blocks", "read_rows", "row_block"]

#: Entries of the largest block of rows (or of logits) formed at once.
BLOCK_ENTRIES = 1 << 22


def block_entries() -> int:
    """Entries per working block: :data:`BLOCK_ENTRIES`, or a 256th of
    ``$ALLORNONE_MEMORY_LIMIT`` (bytes) when that is smaller; at least 4096.

    >>> os.environ["ALLORNONE_MEMORY_LIMIT"] = "64M"
    >>> block_entries()
    262144
    >>> del os.environ["ALLORNONE_MEMORY_LIMIT"]
    """
    from allornone.numeric.loaders import MEMORY_LIMIT_ENV, available_memory

    if not os.environ.get(MEMORY_LIMIT_ENV, "").strip():
        return BLOCK_ENTRIES
    # a block of float64 entries is 8 bytes each, and a few are alive at once
    return max(4096, min(BLOCK_ENTRIES, (available_memory() or 0) // (8 * 32)))


def row_block(width: int, rows: int) -> int:
    """Rows per block for a matrix ``width`` entries wide (at least one, at most ``rows``)."""
    return max(1, min(max(rows, 1), block_entries() // max(int(width), 1)))


def npy_header(fh, where: str) -> tuple:
    """``(shape, fortran_order, dtype, header_end)`` of the ``.npy`` stream ``fh``
    (at its start), read without reading the data; a header that cannot be read
    is an :class:`~allornone.errors.InputFormatError` naming ``where``."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            from numpy.lib import _format_impl  # the 3.0 header (UTF-8) has no public reader

            shape, fortran, dtype = _format_impl._read_array_header(fh, version)
    except (ValueError, OSError, EOFError, SyntaxError, ImportError, AttributeError, RecursionError,
            tokenize.TokenError) as exc:
        # (NumPy tokenizes a header it reads as Python: an unclosed "{" is a TokenError)
        why = exc.args[0] if isinstance(exc, tokenize.TokenError) else str(exc).splitlines()[0] if str(exc) else exc
        raise InputFormatError(f"{where}: not a readable .npy array ({why})") from None
    return shape, fortran, dtype, fh.tell()


class RowSource:
    """An ``m x d`` matrix read a block of rows at a time from a file.

    ``shape`` is the stored shape plus one column when :meth:`with_column`
    appended a constant one (a folded bias); ``where`` names the matrix in
    messages. Instances hold only the file's name and layout, so they can be
    sent to another process."""

    ndim = 2

    def __init__(self, kind: str, path: str, shape: tuple[int, int], dtype, where: str, offset: int = 0,
                 key: str | None = None, column: float | None = None):
        self.kind, self.path, self.key, self.where = kind, str(path), key, where
        self.stored = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.offset = int(offset)
        self.column = column
        self.shape = (self.stored[0], self.stored[1] + (column is not None))

    # -- construction ------------------------------------------------------------
    @classmethod
    def npy(cls, path, where: str | None = None) -> RowSource:
        """The array of a ``.npy`` file, from its header (which must declare a
        2-D C-ordered array of numbers that the file holds in full)."""
        where = where or str(path)
        try:
            with open(path, "rb") as fh:
                shape, fortran, dtype, offset = npy_header(fh, where)
        except OSError as exc:
            raise InputFormatError(f"{where}: not a readable .npy array ({exc})") from None
        if len(shape) != 2:
            raise InputFormatError(f"{where}: expected a 2-D array, got shape {tuple(shape)}")
        if dtype.kind not in "iuf" or dtype.hasobject:
            raise InputFormatError(f"{where}: expected numbers, got dtype {dtype}")
        if fortran and shape[0] > 1 and shape[1] > 1:
            raise InputFormatError(f"{where}: a column-major (Fortran-ordered) array cannot be read a block of "
                                   "rows at a time; save it C-ordered (np.save(path, np.ascontiguousarray(X)))")
        need = offset + shape[0] * shape[1] * dtype.itemsize
        if os.path.getsize(path) < need:
            raise InputFormatError(f"{where}: its header declares shape {tuple(shape)}, more than the file holds: "
                                   "a truncated or damaged file")
        return cls("npy", path, shape, dtype, where, offset)

    @classmethod
    def safetensors(cls, path, key: str, shape, dtype: str, where: str | None = None) -> RowSource:
        """Tensor ``key`` of a ``.safetensors`` file (``shape``, ``dtype`` as its header declares them)."""
        where = where or f"{path}:{key}"
        if len(shape) != 2:
            raise InputFormatError(f"{where}: expected a 2-D array, got shape {tuple(shape)}")
        kinds = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
                 "I32": np.int32, "I64": np.int64, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32,
                 "U64": np.uint64}
        small = {"BF16": "<u2", "F8_E4M3": "u1", "F8_E5M2": "u1"}
        if dtype in small:
            # NumPy has no such dtype: the bits are read at the tensor's offset like a .npy file's, then decoded
            import json
            import struct

            try:
                with open(path, "rb") as fh:
                    (length,) = struct.unpack("<Q", fh.read(8))
                    start = int(json.loads(fh.read(length))[key]["data_offsets"][0])
            except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
                raise InputFormatError(f"{where}: not a readable .safetensors entry ({exc})") from None
            return cls(dtype, path, shape, small[dtype], where, 8 + length + start, key)
        if dtype not in kinds:
            raise InputFormatError(f"{where}: dtype {dtype} cannot be read as numbers")
        return cls("safetensors", path, shape, kinds[dtype], where, key=key)

    def with_column(self, value: float) -> RowSource:
        """The same rows with one more column, ``value`` in every row."""
        if self.column is not None:
            raise ValueError("a row source takes one appended column")
        return RowSource(self.kind, self.path, self.stored, self.dtype, self.where, self.offset, self.key,
                         float(value))

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"RowSource({self.where!r}, shape={self.shape}, dtype={self.dtype})"

    @property
    def nbytes(self) -> int:
        """Bytes of the matrix once read as float64."""
        return self.shape[0] * self.shape[1] * 8

    # -- reading -----------------------------------------------------------------
    def _raw(self, lo: int, hi: int) -> np.ndarray:
        d = self.stored[1]
        if self.kind != "safetensors":  # a .npy array, or the raw bits of a bfloat16 or float8 tensor
            out = np.empty((hi - lo, d), dtype=self.dtype)
            with open(self.path, "rb", buffering=0) as fh:
                fh.seek(self.offset + lo * d * self.dtype.itemsize)
                view, want = memoryview(out).cast("B"), out.nbytes
                got = 0
                while got < want:
                    k = fh.readinto(view[got:])
                    if not k:
                        raise InputFormatError(f"{self.where}: the file ends inside rows {lo}..{hi}: "
                                               "a truncated file")
                    got += k
            return _decode(self.kind, out)
        from safetensors import SafetensorError, safe_open
        try:
            with safe_open(self.path, framework="np") as f:
                return np.asarray(f.get_slice(self.key)[lo:hi])
        except (SafetensorError, OSError, ValueError, TypeError) as exc:
            raise InputFormatError(f"{self.where}: not a readable .safetensors tensor "
                                   f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None

    def block(self, lo: int, hi: int, out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``lo:hi`` as a C-ordered float64 array (into ``out`` when given),
        every entry checked to be finite."""
        raw = self._raw(lo, hi)
        d = self.stored[1]
        if out is None:
            out = np.empty((hi - lo, self.shape[1]))
        out[:, :d] = raw
        if self.column is not None:
            out[:, d] = self.column
        check_finite(out[:, :d], self.where, lo)
        return out

    def rows(self, idx) -> np.ndarray:
        """The rows ``idx`` (a sequence of indices) as float64."""
        return np.vstack([self.block(int(i), int(i) + 1) for i in idx]) if len(idx) else np.zeros((0, self.shape[1]))

    def short_of_memory(self) -> int | None:
        """The bytes the loaders may allocate when the whole matrix (as float64)
        does not fit in them; None when it fits or no limit is known."""
        from allornone.numeric.loaders import available_memory

        avail = available_memory()
        return avail if avail is not None and self.nbytes > avail else None

    def to_array(self, why: str = "this computation") -> np.ndarray:
        """The whole matrix in memory, when it fits in what the loaders may allocate."""
        from allornone.numeric.loaders import _bytes

        avail = self.short_of_memory()
        if avail is not None:
            raise InputFormatError(f"{self.where}: {self.shape[0]} x {self.shape[1]} features need "
                                   f"{_bytes(self.nbytes)} as 64-bit floats, more than the {_bytes(avail)} "
                                   f"available, and {why} reads them whole (analyse, compare and study read "
                                   "them a block at a time)")
        out = np.empty(self.shape)
        step = row_block(self.shape[1], self.shape[0])
        for lo in range(0, self.shape[0], step):
            self.block(lo, min(lo + step, self.shape[0]), out[lo:lo + step])
        return out


def _decode(kind: str, raw: np.ndarray) -> np.ndarray:
    """The values of a block read as raw bits: bfloat16 or float8 (exact), else ``raw`` itself."""
    if kind == "BF16":
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if kind in ("F8_E4M3", "F8_E5M2"):
        from allornone.numeric.loaders import _float8_table

        return _float8_table(4, 3, False)[raw] if kind == "F8_E4M3" else _float8_table(5, 2, True)[raw]
    return raw


def check_finite(X: np.ndarray, where: str, first_row: int = 0) -> None:
    """Raise :class:`~allornone.errors.NonFiniteValueError` at the first entry
    of ``X`` (rows numbered from ``first_row``) that is not finite."""
    # min and max see every NaN and infinity without an array-sized temporary
    if X.size and not (math.isfinite(float(X.min())) and math.isfinite(float(X.max()))):
        i, j = map(int, np.argwhere(~np.isfinite(X))[0])
        raise NonFiniteValueError(f"{where}: entry [{first_row + i}, {j}] is {X[i, j]}; only finite numbers are "
                                  "allowed")


def read_rows(F, lo: int, hi: int) -> np.ndarray:
    """Rows ``lo:hi`` of ``F`` (a :class:`RowSource` or an array) as float64: a
    view of a float64 array, a converted copy otherwise. Safe to call from
    several threads at once (a file is opened per call)."""
    if isinstance(F, RowSource):
        return F.block(lo, hi)
    return np.asarray(F[lo:hi], dtype=np.float64)


def blocks(F, step: int):
    """``(lo, block)`` over row blocks of ``step`` rows of ``F``
    (:func:`read_rows`)."""
    m = F.shape[0]
    for lo in range(0, m, step):
        yield lo, read_rows(F, lo, min(m, lo + step))
