r"""Model files: the JSON of rationals and the ``.npz`` of floats that
``allornone verify`` reads (the format is described in ``docs/file-format.md``),
read into exact or float models with every mistake reported at its place in
the file (``models.a.F[2][1]``).

>>> models, queries = load_data({"models": {"a": {"F": [[1, "1/2"]], "G": [[0, 0], [1, 1]]}}})
>>> models["a"].F.to_fractions(), queries
([['1', '1/2']], None)
"""
from __future__ import annotations

import json
import math
import contextlib
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

from allornone.errors import (
    AllOrNoneError,
    InputFormatError,
    NonFiniteValueError,
    NonRationalValueError,
    ShapeError,
    file_problem,
    parse_text,
)
from allornone.model import is_text


FORMAT = "allornone/1"


#: The largest magnitude a float entry may have: binary64's largest number. The
#: float layer scales rows and coordinates by powers of two before it forms a
#: product, so entries of any finite size are decided as in analyse and compare.
FLOAT_LIMIT = sys.float_info.max


_TOP_KEYS = {"format", "description", "contexts", "tokens", "models", "queries"}


_MODEL_KEYS = {"F", "G", "pivot", "contexts", "tokens", "description"}


def _err(cls, where: str, message: str):
    return cls(f"{where}: {message}")


def _show(value, limit: int = 40) -> str:
    """``repr`` of a value from a file, cut short: an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 5] + "...'" * isinstance(value, str) + "..." * (
        not isinstance(value, str))


def dumps(data) -> str:
    """JSON with every list of plain values on one line (model files stay readable).

    >>> print(dumps({"F": [[1, "1/2"]], "pivot": 0}), end="")
    {
      "F": [
        [1, "1/2"]
      ],
      "pivot": 0
    }
    """
    def render(value, indent: str) -> str:
        inner = indent + "  "
        if isinstance(value, dict) and value:
            items = [f"{inner}{json.dumps(str(k))}: {render(v, inner)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + indent + "}"
        if isinstance(value, (list, tuple)) and any(isinstance(v, (list, tuple, dict)) for v in value):
            return "[\n" + ",\n".join(inner + render(v, inner) for v in value) + "\n" + indent + "]"
        return json.dumps(value)

    return render(data, "") + "\n"



# -- reading -----------------------------------------------------------------------

def _entry(value, where: str, exact: bool):
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise _err(ShapeError if isinstance(value, (list, dict)) else InputFormatError, where,
                   f"{json.dumps(value) if not isinstance(value, (list, dict)) else type(value).__name__} "
                   "is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise _err(NonFiniteValueError, where, f"{value} is not finite; only finite numbers are allowed")
    if exact:
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            raise _err(NonRationalValueError, where, f"{value!r} is a float; write an integer or a string like "
                       "\"3/4\" (floats belong in a .npz file)")
        if isinstance(value, str):
            text = value.strip()
            if text.lower().lstrip("+-") in {"nan", "inf", "infinity"}:
                raise _err(NonFiniteValueError, where, f"{_show(value)} is not finite; only finite numbers are "
                           "allowed")
            _check_digits(text, where)
            try:
                # (ASCII digits only: Fraction also reads those of other scripts)
                if any(c in text for c in ".eE_ ") or not text or not text.isascii():
                    raise ValueError
                return Fraction(text)
            except ZeroDivisionError:
                raise _err(NonRationalValueError, where, f"{_show(value)} has denominator 0") from None
            except ValueError:
                raise _err(NonRationalValueError, where, f"{_show(value)} is not an exact rational (write an "
                           "integer or a fraction like \"3/4\")") from None
        raise _err(InputFormatError, where, f"{_show(value)} is not a number")
    if isinstance(value, (int, float)):
        if not abs(value) <= FLOAT_LIMIT:
            raise _err(NonFiniteValueError, where, f"{value:.3g} is beyond the largest binary64 number "
                       f"({FLOAT_LIMIT:.3g})")
        return float(value)
    raise _err(InputFormatError, where, f"{_show(value)} is not a real number")


def _digit_limit() -> int:
    """Python's limit on the digits of an integer read from text (0: none)."""
    return getattr(sys, "get_int_max_str_digits", lambda: 0)()


@contextlib.contextmanager
def unlimited_digits():
    """Python's limit on writing an integer as text lifted while the block runs
    (numbers derived from a file's rationals may have more digits than any of
    them), and restored after."""
    limit = _digit_limit()
    if limit:
        sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        if limit:
            sys.set_int_max_str_digits(limit)


def _check_digits(text: str, where: str) -> None:
    limit = _digit_limit()
    longest = max((len(run) for run in re.findall(r"\d+", text)), default=0)
    if limit and longest > limit:
        raise _err(InputFormatError, where, f"a number with {longest} digits; at most {limit} digits are read "
                   "(PYTHONINTMAXSTRDIGITS=0 lifts the limit)")


def _matrix(value, where: str, exact: bool):
    import numpy as np

    if isinstance(value, np.ndarray) and not exact:
        # a float array read from an .npz file (checked by _float_rows): kept as
        # it is, never as rows of Python floats (about 20 times its size)
        if value.shape[0] == 0:
            raise _err(ShapeError, where, "expected a non-empty list of rows (a 2-D matrix)")
        if value.shape[1] == 0:
            raise _err(ShapeError, f"{where}[0]", "rows must not be empty (the dimension d must be >= 1)")
        return value
    if not isinstance(value, list) or not value:
        raise _err(ShapeError, where, "expected a non-empty list of rows (a 2-D matrix)")
    width = None
    out = []
    for i, row in enumerate(value):
        if not isinstance(row, list):
            raise _err(ShapeError, f"{where}[{i}]", "expected a row (a list of numbers)")
        if width is None:
            width = len(row)
            if width == 0:
                raise _err(ShapeError, f"{where}[0]", "rows must not be empty (the dimension d must be >= 1)")
        elif len(row) != width:
            raise _err(ShapeError, f"{where}[{i}]", f"has {len(row)} entries but row 0 has {width}")
        out.append([_entry(v, f"{where}[{i}][{j}]", exact) for j, v in enumerate(row)])
    return out


def _names(value, where: str, count: int | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise _err(InputFormatError, where, "expected a list of strings")
    if len(set(value)) != len(value):
        raise _err(ShapeError, where, "names are not unique")
    if count is not None and len(value) != count:
        raise _err(ShapeError, where, f"{len(value)} names given for {count} rows")
    return list(value)


def _object(value, where: str, allowed: set) -> dict:
    if not isinstance(value, dict):
        raise _err(InputFormatError, where, f"expected an object, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed, key=str)
    if unknown:
        raise _err(InputFormatError, f"{where}.{unknown[0]}" if where else str(unknown[0]),
                   f"unknown key; allowed here: {', '.join(sorted(allowed))}")
    return value


def _description(spec: dict, where: str) -> None:
    if "description" in spec and not isinstance(spec["description"], str):
        raise _err(InputFormatError, where, f"expected free text (a string), got {type(spec['description']).__name__}")


def _model(name: str, spec, shared: dict, exact: bool, where: str):
    from allornone.numeric.model import FloatModel
    from allornone.symbolic.model import ExactModel

    spec = _object(spec, where, _MODEL_KEYS)
    _description(spec, f"{where}.description")
    for key in ("F", "G"):
        if key not in spec:
            raise _err(InputFormatError, where, f"missing {key}")
    F = _matrix(spec["F"], f"{where}.F", exact)
    G = _matrix(spec["G"], f"{where}.G", exact)
    if len(F[0]) != len(G[0]):
        raise _err(ShapeError, where, f"F is {len(F)}x{len(F[0])} but G is {len(G)}x{len(G[0])}: f and g must "
                   "share the dimension d")
    pivot = spec.get("pivot", 0)
    if isinstance(pivot, bool) or not isinstance(pivot, int):
        raise _err(InputFormatError, f"{where}.pivot", f"{json.dumps(pivot)} is not a token index")
    if not 0 <= pivot < len(G):
        raise _err(InputFormatError, f"{where}.pivot", f"{pivot} is out of range for {len(G)} tokens")
    names = {}
    for key, rows in (("contexts", len(F)), ("tokens", len(G))):
        if key in spec:
            names[key] = _names(spec[key], f"{where}.{key}", rows)
        elif key in shared:
            if len(shared[key]) != rows:
                raise _err(ShapeError, f"{where}.{'F' if key == 'contexts' else 'G'}",
                           f"has {rows} rows but the file's {key} list has {len(shared[key])} names")
            names[key] = shared[key]
    cls = ExactModel if exact else FloatModel
    try:
        return cls(F, G, pivot, names.get("contexts"), names.get("tokens"))
    except AllOrNoneError as exc:
        raise type(exc)(f"{where}: {exc}") from None


def load_data(data: Any, exact: bool = True, prefix: str = "models.") -> tuple[dict, list | None]:
    """Models (by name) and raw queries from a parsed file; every mistake is an
    :class:`~allornone.errors.AllOrNoneError` naming its place."""
    data = _object(data, "", _TOP_KEYS) if isinstance(data, dict) else None
    if data is None:
        raise InputFormatError("top level: expected a JSON object with \"models\"")
    _description(data, "description")
    if "format" in data and data["format"] != FORMAT:
        raise _err(InputFormatError, "format", f"{json.dumps(data['format'])} is not {FORMAT!r}")
    shared = {k: _names(data[k], k) for k in ("contexts", "tokens") if k in data}
    if "models" not in data:
        raise InputFormatError("models: missing (a file holds at least one model)")
    specs = data["models"]
    if not isinstance(specs, dict) or not specs:
        raise InputFormatError("models: expected a non-empty object mapping names to models")
    if "" in specs:
        raise InputFormatError("models: a model's name is empty (queries name their models)")
    for name in specs:
        if not is_text(name):
            raise InputFormatError(f"models: the name {name!r} holds a lone surrogate: not text")
    models = {name: _model(name, spec, shared, exact, f"{prefix}{name}") for name, spec in specs.items()}
    queries = data.get("queries")
    if queries is not None and not isinstance(queries, list):
        raise InputFormatError("queries: expected a list")
    return models, queries


def _read_npz(path: Path) -> dict:
    """An ``.npz`` file as the same structure as a JSON file (floats)."""
    import zipfile

    import numpy as np

    from allornone.numeric.loaders import check_npz_member, open_npz

    archive = open_npz(path)
    data: dict = {"models": {}}
    with archive:
        # every member's declared shape is checked against its size (and memory)
        # before any is read, and the models' checks against memory as a whole
        shapes = {key: check_npz_member(path, archive.zip, key) for key in archive.files}
        _check_working_memory(path, [shape for key, (shape, _) in shapes.items()
                                     if key.rpartition(".")[2] in ("F", "G") and len(shape) == 2])
        for key in archive.files:
            try:
                arr = archive[key]
            except ValueError as exc:  # object arrays need pickle, which is refused
                raise InputFormatError(f"{key}: cannot be read ({exc}"
                                       f"{'; object arrays need pickle, which is refused' if 'pickle' in str(exc) else ''})") from None
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise InputFormatError(f"{path}: {key}: damaged archive member ({exc})") from None
            if not isinstance(arr, np.ndarray):  # a member that is not a .npy file comes back as bytes
                raise InputFormatError(f"{key}: not a .npy array")
            if key == "queries":
                if arr.ndim != 0 or arr.dtype.kind != "U":
                    raise InputFormatError("queries: expected one string holding a JSON list")
                data["queries"] = parse_text(json.loads, str(arr), "queries", parse_constant=float)
                continue
            name, dot, field = key.rpartition(".")
            if not dot or field not in _MODEL_KEYS - {"description"}:
                raise InputFormatError(f"{key}: unknown array; expected NAME.F, NAME.G, NAME.pivot, "
                                       "NAME.contexts, NAME.tokens or queries")
            if not name:
                raise InputFormatError(f"{key}: the model name before {'.' + field!r} is empty")
            if field in ("F", "G"):
                if arr.dtype.kind not in "iuf":
                    raise InputFormatError(f"{key}: expected a numeric array, got dtype {arr.dtype}")
                if arr.ndim != 2:
                    raise ShapeError(f"{key}: expected a 2-D array, got {arr.ndim} dimension(s)")
                value = _float_rows(arr, key)
            elif field == "pivot":
                if arr.ndim != 0 or arr.dtype.kind not in "iu":
                    raise InputFormatError(f"{key}: expected one integer")
                value = int(arr)
            else:
                if arr.ndim != 1 or arr.dtype.kind != "U":
                    raise InputFormatError(f"{key}: expected a 1-D array of strings")
                value = [str(s) for s in arr]
            data["models"].setdefault(name, {})[field] = value
    return data


#: Copies of a float model's numbers that its checks hold at once at most
#: (the model's own, scaled and balanced presentations, row spaces, and the
#: temporaries of the elementwise tests), as measured on tall models.
WORKING_COPIES = 6


def _check_working_memory(path, shapes: list) -> None:
    """Refuse, before anything is read, float models whose checks would need
    more memory than :func:`~allornone.numeric.loaders.available_memory`
    allows (``$ALLORNONE_MEMORY_LIMIT``, else what the system has free): the
    file's arrays may fit, but the checks hold several copies of them.
    analyse and compare read a head block by block."""
    from allornone.numeric.loaders import _bytes, available_memory

    avail = available_memory()
    if avail is None:
        return
    need = WORKING_COPIES * 8 * sum(int(r) * int(c) for r, c in shapes)
    if need > avail:
        raise InputFormatError(f"{path}: checking these models needs about {_bytes(need)} of memory "
                               f"({WORKING_COPIES} copies of their numbers), more than the {_bytes(avail)} "
                               "available; nothing was read (allornone analyse and compare read a head block by "
                               "block)")


def _float_rows(arr, key: str):
    """A numeric array as the float model takes it (float16 and float32 as
    float64, exactly; integers as they are, for the model to convert or declare
    rounded); an entry that is not finite or beyond :data:`FLOAT_LIMIT` is
    refused with its place, before a cast to float64 could turn a wider float
    into ``inf``. Empty shapes are refused before anything is built."""
    import numpy as np

    if arr.dtype.kind == "f":
        wide = arr if arr.dtype.itemsize > 8 else arr.astype(np.float64)  # float16 cannot hold the limit
        bad = np.argwhere(~(np.abs(wide) <= FLOAT_LIMIT))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            value = wide[i, j]
            if not np.isfinite(value):
                raise _err(NonFiniteValueError, f"{key}[{i}][{j}]", f"{value} is not finite; only finite numbers "
                           "are allowed")
            raise _err(NonFiniteValueError, f"{key}[{i}][{j}]", f"{np.format_float_scientific(value, precision=2, unique=False)} "
                       f"is beyond the largest binary64 number ({FLOAT_LIMIT:.3g})")
    # float16 and float32 convert exactly, float64 is kept without a copy;
    # integers and long doubles go to the model as they are, which converts
    # them or declares their rounding
    return arr.astype(np.float64, copy=False) if arr.dtype.kind == "f" and arr.dtype.itemsize <= 8 else arr


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def _unique_keys(pairs: list) -> dict:
    """A JSON object whose keys are unique: a key given twice (the second would
    silently replace the first) is refused."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise InputFormatError(f"the key {key!r} is given twice in one object")
        out[key] = value
    return out


def load_file(path) -> tuple[dict, list | None, str]:
    """``(models, queries, realisation)`` from a JSON or ``.npz`` file."""
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"{path}: {file_problem(path)}")
    if path.suffix.lower() == ".npy" or _starts_with(path, b"\x93NUMPY"):
        raise InputFormatError(f"{path}: a single .npy array, not a model file; use .npz: "
                               "numpy.savez(\"mine.npz\", **{\"a.F\": F, \"a.G\": G, \"a.pivot\": 0})")
    if path.suffix.lower() == ".npz":
        models, queries = load_data(_read_npz(path), exact=False, prefix="")
        return models, queries, "float"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    data = parse_text(json.loads, text, str(path), parse_constant=lambda c: float(c), object_pairs_hook=_unique_keys)
    models, queries = load_data(data, exact=True)
    return models, queries, "exact"
