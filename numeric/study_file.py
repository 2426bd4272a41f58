r"""A study file: the TOML that names the models (``FILE[:KEY]`` of their
features, head and bias), the token and context names, and the categories of
token pairs of :mod:`allornone.numeric.study`; every mistake in it is one
:class:`~allornone.errors.AllOrNoneError` line, found before any work.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from allornone.errors import AllOrNoneError, InputFormatError, file_problem, parse_text
from allornone.numeric.llv import SEED_MAX
from allornone.numeric.study import NULL_DRAWS_MAX, StudyResult, _validate, run_study


# -- a study file --------------------------------------------------------------------

@dataclass
class Study:
    """A study read from a TOML file (:func:`load_study`); :meth:`run` runs it."""

    models: dict
    pairs: dict
    bias: dict
    null_tokens: list | None = None
    null_draws: int | None = None
    seed: int | None = None
    path: Path | None = None

    def run(self, null_draws: int | None = None, seed: int | None = None, **kwargs) -> StudyResult:
        """:func:`run_study` on this study; ``null_draws`` and ``seed`` override the file's."""
        draws = null_draws if null_draws is not None else (self.null_draws if self.null_draws is not None else 1000)
        s = seed if seed is not None else (self.seed if self.seed is not None else 0)
        return run_study(self.models, self.pairs, self.null_tokens, draws, s, bias=self.bias, **kwargs)


_TOP_KEYS = {"models", "pairs", "tokens", "contexts", "null"}
_MODEL_KEYS = {"name", "features", "head", "bias", "tokens", "contexts"}
_NULL_KEYS = {"draws", "seed", "tokens"}


def _toml():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise InputFormatError("reading a study file on Python 3.10 needs tomli (pip install tomli)") from None
    return tomllib


def _resolve(spec, base: Path, what: str) -> str:
    """``FILE[:KEY]`` with ``FILE`` taken relative to the study file's folder."""
    if not isinstance(spec, str) or not spec:
        raise InputFormatError(f"{what}: expected a string FILE[:KEY], got {spec!r}")
    if Path(spec).is_absolute() and Path(spec).exists():
        return spec
    whole = base / spec
    if whole.exists() or ":" not in spec:
        return str(whole)
    path, key = spec.rsplit(":", 1)
    return f"{path if Path(path).is_absolute() else base / path}:{key}"


def load_study(path) -> Study:
    """A study from a TOML file::

        tokens = "vocab.npz:tokens"          # optional: names of the tokens, FILE[:KEY]
        contexts = "vocab.npz:contexts"      # optional: names of the contexts

        [[models]]
        name = "small"
        features = "small.npz:features"      # m x d, FILE[:KEY]
        head = "small.npz:weight"            # n x d or d x n
        bias = "bias"                        # optional: FILE[:KEY], or a KEY in the head's file

        [[models]]
        name = "large"
        features = "large.npz:features"
        head = "large.npz:weight"

        [pairs]                              # category = list of token pairs, by name
        casing = [["a", "A"], ["e", "E"], ["t", "T"]]

        [null]                               # optional
        draws = 1000
        seed = 0
        tokens = ["a", "b", "c"]             # the tokens the null's pairs are drawn from

    Paths are relative to the file's folder; a model may also name its own
    ``tokens`` and ``contexts``. Every mistake -- a malformed file, an unknown
    key, a missing file or array, models on different contexts or
    vocabularies, an unknown token, a category with fewer than two pairs --
    raises an :class:`~allornone.errors.AllOrNoneError` with a one-line message,
    and nothing is computed.
    """
    from allornone.numeric.loaders import load_head

    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"{path}: {file_problem(path)}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputFormatError(f"{path}: not UTF-8 text ({exc})") from None
    data = parse_text(_toml().loads, text, str(path), "TOML")
    base = path.parent
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise InputFormatError(f"{path}: unknown key {unknown[0]!r} (expected: {', '.join(sorted(_TOP_KEYS))})")
    entries = data.get("models")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise InputFormatError(f"{path}: expected one or more [[models]] tables")
    names_spec = {k: _resolve(data[k], base, f"{path}: {k}") for k in ("tokens", "contexts") if k in data}
    models, bias = {}, {}
    for i, e in enumerate(entries):
        where = f"{path}: model {i + 1}"
        bad = sorted(set(e) - _MODEL_KEYS)
        if bad:
            raise InputFormatError(f"{where}: unknown key {bad[0]!r} (expected: {', '.join(sorted(_MODEL_KEYS))})")
        for key in ("name", "features", "head"):
            if key not in e:
                raise InputFormatError(f"{where}: missing {key!r}")
        name = e["name"]
        if not isinstance(name, str) or not name:
            raise InputFormatError(f"{where}: name must be a non-empty string")
        if name in models:
            raise InputFormatError(f"{where}: the name {name!r} is used twice")
        where = f"{path}: model {name!r}"
        b = e.get("bias")
        if b is not None:
            if not isinstance(b, str) or not b:
                raise InputFormatError(f"{where}: bias must be a string FILE[:KEY] or KEY")
            if ":" in b or (base / b).exists():
                b = _resolve(b, base, f"{where}: bias")
        tok = _resolve(e["tokens"], base, f"{where}: tokens") if "tokens" in e else names_spec.get("tokens")
        ctx = _resolve(e["contexts"], base, f"{where}: contexts") if "contexts" in e else names_spec.get("contexts")
        # (resolved outside the try: their errors already name the model)
        features = _resolve(e["features"], base, f"{where}: features")
        head = _resolve(e["head"], base, f"{where}: head")
        try:
            model = load_head(features, head, b, 0, ctx, tok)
        except AllOrNoneError as exc:
            raise type(exc)(f"{where}: {exc}") from None
        models[name] = model
        # load_head folds a non-empty bias as a last coordinate that is 1 in every context
        feats = model.features
        bias[name] = b is not None and (getattr(feats, "column", None) == 1.0 if model.lazy else
                                        bool(np.all(np.asarray(feats)[:, -1] == 1.0)))
    pairs = data.get("pairs")
    if not isinstance(pairs, dict) or not pairs:
        raise InputFormatError(f"{path}: expected a [pairs] table with at least one category")
    clean = {}
    for cat, plist in pairs.items():
        if not isinstance(plist, list) or not all(isinstance(p, list) and len(p) == 2 and
                                                  all(isinstance(t, str) for t in p) for p in plist):
            raise InputFormatError(f"{path}: category {cat!r} must be a list of [token, token] pairs of names")
        clean[cat] = [tuple(p) for p in plist]
    null = data.get("null", {})
    if not isinstance(null, dict):
        raise InputFormatError(f"{path}: null must be a table")
    bad = sorted(set(null) - _NULL_KEYS)
    if bad:
        raise InputFormatError(f"{path}: unknown key {bad[0]!r} in [null] (expected: {', '.join(sorted(_NULL_KEYS))})")
    for key, least, most in (("draws", 1, NULL_DRAWS_MAX), ("seed", 0, SEED_MAX)):
        if key in null and (not isinstance(null[key], int) or isinstance(null[key], bool)
                            or not least <= null[key] <= most):
            raise InputFormatError(f"{path}: null.{key} must be an integer from {least} to {most:,}")
    null_tokens = null.get("tokens")
    if null_tokens is not None and not (isinstance(null_tokens, list) and all(isinstance(t, str)
                                                                              for t in null_tokens)):
        raise InputFormatError(f"{path}: null.tokens must be a list of token names")
    study = Study(models, clean, bias, null_tokens, null.get("draws"), null.get("seed"), path)
    # every remaining mistake (contexts, vocabularies, tokens, short categories) before anything runs
    _validate(models, clean, null_tokens, 1 if study.null_draws is None else study.null_draws,
              0 if study.seed is None else study.seed, bias)
    return study
