"""The results of the paper, one package each: its user API (the functions a
researcher calls) in ``__init__``, its record (statement, hypotheses, sampler,
proof steps, edges) in ``record``. What runs the records -- runner, CLI,
self-test, proofs, edges, verify -- is :mod:`allornone.theorems.engine`.

>>> from allornone.theorems import records
>>> list(records())[:2]
['thm5', 'cor6']
"""
from __future__ import annotations

import importlib

from allornone.errors import AllOrNoneError

#: Result ids in the order the paper states them; each is a module of this package
#: exposing ``RECORD``. Additions of this project (not numbered results of the
#: paper) have ``RECORD.paper == False``.
RESULT_IDS = ("thm5", "cor6", "lem8", "thm15", "thm14")
EXTRA_IDS: tuple[str, ...] = ("lem8ctx", "steering")


class UnknownResultError(AllOrNoneError, KeyError):
    """An id that names no implemented result."""

    def __str__(self):
        return self.args[0]


def records() -> dict:
    """Every implemented record, by id."""
    out = {}
    for rid in RESULT_IDS + EXTRA_IDS:
        try:
            module = importlib.import_module(f"allornone.theorems.{rid}")
        except ModuleNotFoundError as exc:
            if exc.name == f"allornone.theorems.{rid}":
                continue
            raise
        out[rid] = module.RECORD
    return out


def get_record(rid: str):
    recs = records()
    if rid not in recs:
        raise UnknownResultError(f"unknown result {rid!r}; implemented: {', '.join(recs)}")
    return recs[rid]


#: Modules of :mod:`allornone.theorems.engine` that earlier versions kept in this
#: package; ``from allornone.theorems import runner`` still finds them.
_ENGINE_MODULES = frozenset({"cli", "edges", "generic", "invariance", "logic", "proofs", "record", "rewrite",
                             "runner", "selftest", "verify"})


def __getattr__(name: str):
    if name in _ENGINE_MODULES:
        return importlib.import_module(f"allornone.theorems.engine.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
