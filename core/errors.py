"""The project's exceptions: one root class, one subclass per kind of user mistake.

Every error a user can cause by passing bad input is an :class:`AllOrNoneError`;
the CLI prints its message on one line and exits with status 2.
"""


class AllOrNoneError(Exception):
    """Root of every error raised for bad input."""


class ShapeError(AllOrNoneError, ValueError):
    """A matrix has the wrong number of dimensions, rows or columns."""


class VocabularyError(AllOrNoneError, ValueError):
    """The vocabulary is too small (the paper needs ``n >= 2`` tokens)."""


class VocabularyMismatchError(AllOrNoneError, ValueError):
    """Two models are compared on different vocabularies (or pivots)."""


class ContextMismatchError(AllOrNoneError, ValueError):
    """Two models are compared on different context sets."""


class EmptyContextSetError(AllOrNoneError, ValueError):
    """The context set ``X`` is empty (the paper needs ``m >= 1``)."""


class PivotError(AllOrNoneError, IndexError):
    """The pivot token index is outside ``0 .. n-1``."""


class NonFiniteValueError(AllOrNoneError, ValueError):
    """A NaN or an infinity was passed where a real number is required."""


class UnrepresentableValueError(NonFiniteValueError):
    """A non-zero value below the smallest binary64 number, which a float model
    would hold as zero: no relative error can be declared for it."""


class NonRationalValueError(AllOrNoneError, TypeError):
    """A float (or anything that is not an exact rational) entered the exact side."""


class RealisationMismatchError(AllOrNoneError, TypeError):
    """An exact model was compared with a float model (convert one of them first)."""


class InputFormatError(AllOrNoneError, ValueError):
    """A file or query could not be understood."""


class UnknownHypothesisError(AllOrNoneError, KeyError):
    """A hypothesis name that the result does not have."""

    def __str__(self):
        return self.args[0]


def parse_text(loads, text, what: str, kind: str = "JSON", **options):
    """``loads(text, **options)`` (``json.loads``, ``tomllib.loads``) with every
    way the text can be malformed as one :class:`InputFormatError` whose
    message starts with ``what``: a syntax error, nesting deeper than Python's
    recursion limit (the parsers recurse per level), an integer longer than
    Python reads (``sys.get_int_max_str_digits``; its line and column named),
    bytes that are not UTF-8. An :class:`InputFormatError` raised by a hook
    (``object_pairs_hook``) gets ``what`` before its message.

    >>> import json
    >>> try:
    ...     parse_text(json.loads, "[" * 100000 + "]" * 100000, "names.json")
    ... except InputFormatError as exc:
    ...     print(exc)
    names.json: nested too deeply to be read as JSON
    """
    try:
        return loads(text, **options)
    except InputFormatError as exc:
        raise InputFormatError(f"{what}: {exc}") from None
    except RecursionError:
        raise InputFormatError(f"{what}: nested too deeply to be read as {kind}") from None
    except UnicodeDecodeError as exc:
        raise InputFormatError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:   # the parsers' own errors are ValueErrors, as is the digit limit
        if "integer string conversion" in str(exc):
            raise InputFormatError(f"{what}: {_long_integer_place(text)}") from None
        where = f" at line {exc.lineno} column {exc.colno}" if getattr(exc, "lineno", None) else ""
        raise InputFormatError(f"{what}: not valid {kind} ({getattr(exc, 'msg', None) or exc}{where})") from None


def _long_integer_place(text) -> str:
    """Where in ``text`` the first integer longer than Python reads lies, and its length."""
    import re
    import sys

    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    match = re.search(r"\d{%d,}" % (limit + 1), text) if limit else None
    if match is None:  # pragma: no cover - the parsers raise this ValueError only for such literals
        return f"a number is too long to be read; at most {limit} digits are read"
    line = text.count("\n", 0, match.start()) + 1
    column = match.start() - text.rfind("\n", 0, match.start())
    return (f"line {line} column {column}: an integer with {len(match.group())} digits; at most {limit} digits "
            "are read (PYTHONINTMAXSTRDIGITS=0 lifts the limit)")


def file_problem(path) -> str:
    """Why ``path``, not a regular file, cannot be read as one: missing, a
    folder, or a device, pipe or socket (``/dev/zero`` has no end).

    >>> file_problem("/"), file_problem("/no/such/thing"), file_problem("/dev/null")
    ('a folder, not a file', 'no such file', 'not a regular file (a device, a pipe or a socket)')
    """
    import os

    if os.path.isdir(path):
        return "a folder, not a file"
    if os.path.lexists(path) and not os.path.exists(path):
        return "a broken link"
    if os.path.exists(path):
        return "not a regular file (a device, a pipe or a socket)"
    return "no such file"
