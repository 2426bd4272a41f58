r"""``allornone verify FILE``: the user's own models, every applicable result.

The file format is described in ``docs/file-format.md``. In short, a JSON file
(entries exact: integers or strings like ``"3/4"``) or a ``.npz`` file (floats)
holds named models ``F``, ``G``, ``pivot`` (optional context and token names) and
optional queries:

* ``{"kind": "compare", "models": [a, b]}`` -- Theorem 5, and Corollary 6 when
  ``d = d~`` (the default when a file has no queries: every comparable pair);
* ``{"kind": "parallel", "model": a, "tokens": [[a, b], [c, e]]}`` -- Lemma 8;
* ``{"kind": "relational", "model": a, "pairs": [[s, t], ...], "gamma": [...]}``
  -- relational linearity (Theorem 14); with ``"tokens": [[a, b], ...]`` in
  place of ``gamma`` the readout is the model's own ``Γ_T``;
* ``{"kind": "instance", "result": ID, "models": [...], "params": {...},
  "expect": {...}}`` -- any result's statement on the given models, as
  ``allornone edges`` saves its counterexamples.

Every mistake in a file raises an :class:`~allornone.errors.AllOrNoneError`
whose message starts with the place in the file, e.g. ``models.a.F[2][1]``.

>>> data = {"models": {"a": {"F": [[1, 0], [0, 1]], "G": [[0, 0], [1, 2], [3, 1]]},
...                    "b": {"F": [[1, 0], [0, 1]], "G": [[0, 0], [1, 2], [3, "1/2"]]}}}
>>> report = verify_data(data)
>>> report["models"]["a"]["k"], report["queries"][0]["results"][0]["verdict"]
(2, 'not equivalent')
>>> verify_data({"models": {"a": {"F": [[1, 0.5]], "G": [[0, 0], [1, 1]]}}})
Traceback (most recent call last):
...
allornone.errors.NonRationalValueError: models.a.F[0][1]: 0.5 is a float; write an integer or a string like "3/4" (floats belong in a .npz file)
"""
from __future__ import annotations

import functools
import json
import math
import random
from fractions import Fraction
from typing import Any

from allornone.errors import (
    AllOrNoneError,
    InputFormatError,
    ShapeError,
)

from allornone.theorems.engine.modelfile import (FLOAT_LIMIT, FORMAT, _err, _matrix, _object, _show, dumps,  # noqa: F401
                                              load_data, load_file, unlimited_digits)

__all__ = ["FORMAT", "QUERY_KINDS", "load_file", "load_data", "verify_data", "verify_file", "dumps",
           "failed_hypotheses", "failed_hypotheses_text"]

QUERY_KINDS = ("compare", "parallel", "relational", "instance")
_QUERY_KEYS = {
    "compare": {"kind", "models"},
    "parallel": {"kind", "model", "tokens", "space"},
    "relational": {"kind", "model", "pairs", "gamma", "tokens", "reading"},
    "instance": {"kind", "result", "models", "params", "expect"},
}








# -- queries ---------------------------------------------------------------------------

def _matrix_json(X):
    if X is None:
        return None
    if hasattr(X, "to_fractions"):
        return X.to_fractions()
    return [[float(v) for v in row] for row in X]


def _decision_json(d) -> dict:
    out = {"truth": d.truth.value}
    if not d.is_exact:
        out.update(residual=float(d.residual), tolerance=list(d.tolerance))
    return out


def _resolve_model(models: dict, name, where: str):
    if not isinstance(name, str) or name not in models:
        raise _err(InputFormatError, where, f"unknown model {json.dumps(name)}; the file has: {', '.join(models)}")
    return models[name]


def _model_list(models: dict, q: dict, where: str, count: int | None = None) -> list:
    names = q.get("models")
    if not isinstance(names, list) or not names or (count is not None and len(names) != count):
        raise _err(InputFormatError, f"{where}.models", f"expected a list of {count or 'one or more'} model names")
    out = [_resolve_model(models, n, f"{where}.models[{i}]") for i, n in enumerate(names)]
    for i, m in enumerate(out[1:], 1):
        try:
            out[0].check_comparable(m)
        except AllOrNoneError as exc:
            raise type(exc)(f"{where}.models[{i}]: {names[i]!r} vs {names[0]!r}: {exc}") from None
    return out


def _token(model, value, where: str) -> int:
    if isinstance(value, str) and value in model.tokens:
        return model.tokens.index(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < model.n:
        return value
    raise _err(InputFormatError, where, f"{json.dumps(value)} is not a token of the model (names: "
               f"{', '.join(model.tokens)}; or an index 0..{model.n - 1})")


def _context(model, value, where: str) -> int:
    if isinstance(value, str) and value in model.contexts:
        return model.contexts.index(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < model.m:
        return value
    raise _err(InputFormatError, where, f"{json.dumps(value)} is not a context of the model (names: "
               f"{', '.join(model.contexts)}; or an index 0..{model.m - 1})")


#: Certificates with at most this many entries are written out in reports; larger
#: ones only as a summary (shape, norm, condition) unless ``full`` is asked for.
CERTIFICATE_ENTRIES = 64


def _summary(X) -> dict:
    """Shape, rank, spectral norm and condition of a certificate.

    A float certificate is summarised as it is. An exact one has rational
    entries (``"1/2"``, ``10**400``): its rank is the exact rank, and its norm
    and condition are computed on the floats of the matrix scaled by a power of
    two, so entries beyond the float range neither overflow nor vanish (the
    condition does not change under scaling; the norm is scaled back, and
    given as a string where no float holds it).

    >>> from allornone.symbolic.linalg import as_qmatrix
    >>> _summary(as_qmatrix([["1/2", 0], [0, "1/2"]]))
    {'shape': [2, 2], 'norm': 0.5, 'rank': 2, 'condition': 1.0}
    >>> _summary(as_qmatrix([[10 ** 400, 0], [0, 10 ** 399]]))["norm"]
    '1e+400'
    """
    import numpy as np
    import scipy.linalg

    from allornone.numeric.graded import summarise_matrix

    if not hasattr(X, "to_fraction_rows"):
        rows = _matrix_json(X)
        return summarise_matrix(rows if rows else [[]])
    from allornone.symbolic.linalg import rank

    top = X.max_abs()
    if 0 in X.shape or top == 0:
        return {"shape": list(X.shape), "norm": 0.0, "rank": 0, "condition": None}
    # 2**e with top / 2**e in [1/2, 2): every scaled entry's float is at most 2 in size
    e = top.numerator.bit_length() - top.denominator.bit_length()
    scale = Fraction(2) ** -e
    s = scipy.linalg.svdvals(np.array([[float(v * scale) for v in row] for row in X.to_fraction_rows()]))
    r = rank(X)
    out = {"shape": list(X.shape), "norm": None, "rank": r,
           "condition": float(s[0] / s[r - 1]) if s[r - 1] > 0 else None}
    try:
        out["norm"] = math.ldexp(float(s[0]), e)
    except OverflowError:
        # beyond the float range: the norm as a decimal string, as exact numbers are written
        log10 = math.log10(s[0]) + e * math.log10(2)
        exponent = math.floor(log10)
        mantissa = 10 ** (log10 - exponent)
        out["norm"] = f"{mantissa:.3g}e+{exponent}"
    return out


def _small(X) -> bool:
    return X.shape[0] * X.shape[1] <= CERTIFICATE_ENTRIES


def _graded(a, b) -> dict:
    """The graded comparison (section 12 quantities) of a pair, in floats."""
    from allornone.numeric.graded import compare

    import numpy as np

    try:
        fa, fb = (m.to_float() if m.exact else m for m in (a, b))
        with np.errstate(all="ignore"):
            return compare(fa, fb, fa.tolerance).to_json()
    except (AllOrNoneError, ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
        # e.g. exact entries beyond the float range: the exact verdicts still stand
        return {"not_computed": f"{type(exc).__name__}: {exc}"}


def _compare(a, b, names, full: bool = False) -> list[dict]:
    from allornone.theorems import cor6, thm5

    out = []
    r = thm5.equivalence(a, b)
    item = {"result": "thm5", "verdict": r.verdict, "k": list(r.k), "residuals": {k: str(v) if a.exact else float(v)
                                                                                   for k, v in r.residuals.items()}}
    if r.A is not None:
        item["certificate_summary"] = {"A": _summary(r.A), "B": _summary(r.B)}
        if full or (_small(r.A) and _small(r.B)):
            item["certificate"] = {"A": _matrix_json(r.A), "B": _matrix_json(r.B)}
    if r.witness is not None:
        x, y = r.witness
        # QMatrix.entry is avoided: it calls DomainMatrix.getitem, absent from current SymPy
        La, Lb = (_matrix_json(m.log_odds())[x][y] for m in (a, b))
        item["witness"] = {"x": x, "y": y, "context": r.witness_names[0], "token": r.witness_names[1],
                           "L": La, "L~": Lb}
    out.append(item)
    if a.d == b.d:
        li = cor6.linear_identification(a, b)
        hyp = [a.is_diverse(), b.is_diverse()]
        out.append({"result": "cor6", "diverse": [hyp[0].truth.value, hyp[1].truth.value],
                    "hypotheses": "holds" if all(h.holds for h in hyp) else
                    "undecided" if any(h.undecided for h in hyp) else "fails",
                    "same_distribution": r.distribution.truth.value,
                    "verdict": "linearly identified" if li.decision.holds else
                    "undecided" if li.decision.undecided else "not linearly identified",
                    "linearly_identified": li.decision.truth.value, "reason": li.reason,
                    **({"A_summary": _summary(li.A)} if li.A is not None else {}),
                    **({"A": _matrix_json(li.A)} if li.A is not None and (full or _small(li.A)) else {})})
    return out


def _generic(result) -> dict:
    """A JSON rendering of a result object whose type this module does not know."""
    if hasattr(result, "truth"):
        return _decision_json(result)
    out: dict = {}
    decision = getattr(result, "decision", None)
    if decision is not None and hasattr(decision, "truth"):
        out.update(_decision_json(decision))
    for key in ("verdict", "lam", "ratio", "unique", "witness", "reason"):
        if hasattr(result, key):
            value = getattr(result, key)
            out[key] = value if isinstance(value, (str, int, float, type(None))) else str(value)
    if not out:
        out["value"] = str(result)
    return out


def _parallel(models, q, where):
    model = _resolve_model(models, q.get("model"), f"{where}.model")
    toks = q.get("tokens")
    if not (isinstance(toks, list) and len(toks) == 2 and all(isinstance(p, list) and len(p) == 2 for p in toks)):
        raise _err(InputFormatError, f"{where}.tokens", "expected two pairs of tokens [[a, b], [c, e]]")
    pairs = tuple(tuple(_token(model, t, f"{where}.tokens[{i}][{j}]") for j, t in enumerate(p))
                  for i, p in enumerate(toks))
    space = q.get("space", "N")
    if space not in ("N", "raw"):
        raise _err(InputFormatError, f"{where}.space", f"{json.dumps(space)} is not \"N\" or \"raw\"")
    from allornone.theorems.lem8 import parallel

    try:
        result = parallel(model, pairs[0], pairs[1], space=space)
    except AllOrNoneError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return [{"result": "lem8", "tokens": [[model.tokens[t] for t in p] for p in pairs], "space": space,
             **_generic(result)}]


def _relational(models, q, where):
    model = _resolve_model(models, q.get("model"), f"{where}.model")
    pairs = q.get("pairs")
    if not isinstance(pairs, list) or not pairs or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise _err(InputFormatError, f"{where}.pairs", "expected a non-empty list of context pairs [s, s+q]")
    pairs = [tuple(_context(model, c, f"{where}.pairs[{i}][{j}]") for j, c in enumerate(p))
             for i, p in enumerate(pairs)]
    if ("gamma" in q) == ("tokens" in q):
        raise _err(InputFormatError, where, "give the readout either as gamma (a d x r matrix whose columns span it) "
                   "or as tokens (token pairs [[a, b], ...], the model's own span of P_N(g(a) - g(b))), not "
                   + ("both" if "gamma" in q else "neither"))
    from allornone.theorems.thm14 import log_odds_criterion, relational_linearity, tokens

    named = None
    if "tokens" in q:
        toks = q["tokens"]
        if not (isinstance(toks, list) and toks and all(isinstance(p, list) and len(p) == 2 for p in toks)):
            raise _err(InputFormatError, f"{where}.tokens", "expected a non-empty list of token pairs [[a, b], ...]")
        named = tokens([tuple(_token(model, t, f"{where}.tokens[{i}][{j}]") for j, t in enumerate(p))
                        for i, p in enumerate(toks)])
        gamma = named
    else:
        gamma = _matrix(q["gamma"], f"{where}.gamma", model.exact)
        if len(gamma) != model.d:
            raise _err(ShapeError, f"{where}.gamma", f"has {len(gamma)} rows; the model has d = {model.d}")
        gamma = model.backend.as_matrix(gamma, "gamma")
    reading = q.get("reading", "M")
    if reading not in ("M", "any"):
        raise _err(InputFormatError, f"{where}.reading", f"{json.dumps(reading)} is not \"M\" or \"any\"")
    try:
        result = relational_linearity(model, pairs, gamma, reading=reading)
        criterion = log_odds_criterion(model, pairs, named) if named is not None else None
    except AllOrNoneError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    # A fit through regressors of full row rank exists for any readouts: say so, as the Python API does.
    item = {"result": "thm14", "pairs": [[model.contexts[c] for c in p] for p in pairs], "reading": reading,
            **_generic(result), "trivial": bool(result.trivial)}
    if named is not None:
        # the same question decided from the log-odds alone (it answers reading M)
        item["tokens"] = [[model.tokens[t] for t in p] for p in named.pairs]
        item["dim_gamma"] = result.dim_gamma
        item["from_log_odds"] = criterion.verdict
    return [item]


def _decode_params(value, where: str):
    """JSON params back to what records take: matrices of strings to QMatrix,
    lists to tuples."""
    if isinstance(value, dict):
        return {k: _decode_params(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(r, list) and r and all(isinstance(x, str) for x in r) for r in value):
            from allornone.symbolic.linalg import as_qmatrix

            return as_qmatrix(value, where)
        return tuple(_decode_params(v, f"{where}[{i}]") for i, v in enumerate(value))
    return value


def failed_hypotheses(rec, atoms: dict) -> list[dict]:
    """The hypotheses of ``rec`` that fail (or are undecided) on an instance
    whose atoms have the truth values ``atoms`` (names to ``Truth`` or to
    ``"holds"``/``"fails"``/``"undecided"``), each with what makes it fail:
    the atoms of a conjunction that fail, and for an implication ``p ⟹ q``
    that ``p`` holds and ``q`` does not.

    >>> from allornone.theorems import get_record
    >>> rec = get_record("cor6")
    >>> failed_hypotheses(rec, {"same_dimension": "fails", "diverse": "holds", "diverse~": "fails",
    ...                         "same_distribution": "fails", "linearly_identified": "fails"})
    [{'hypothesis': 'same dimension', 'truth': 'fails', 'because': ['same_dimension: fails']}, {'hypothesis': 'diversity', 'truth': 'fails', 'because': ['diverse~: fails']}]
    """
    from sympy.logic.boolalg import And, Implies

    from allornone.decision import Truth
    from allornone.theorems.engine.logic import Predicate, evaluate3

    names = {atom: name for name, atom in rec.atoms.items()}
    order = {atom: i for i, atom in enumerate(rec.atoms.values())}
    truth = {rec.atoms[n]: (v if isinstance(v, Truth) else Truth(v)) for n, v in atoms.items() if n in rec.atoms}
    out = []
    for h in rec.hypotheses:
        value = evaluate3(h.atom, truth)
        if value is Truth.HOLDS:
            continue
        because = []
        parts = h.atom.args if isinstance(h.atom, And) else (h.atom,)
        # SymPy orders a conjunction's arguments its own way; the record's order reads better
        for part in sorted(parts, key=lambda p: min((order.get(a, len(order)) for a in p.atoms(Predicate)),
                                                    default=len(order))):
            if evaluate3(part, truth) is Truth.HOLDS:
                continue
            if isinstance(part, Predicate):
                because.append(f"{names[part]}: {truth[part].value}")
            elif isinstance(part, Implies) and all(isinstance(a, Predicate) for a in part.args):
                p, q = part.args
                because.append(f"{names[p]}: {truth[p].value} but {names[q]}: {truth[q].value}")
            else:
                because.append(", ".join(f"{names[a]}: {truth[a].value}" for a in sorted(part.atoms(Predicate),
                                                                                         key=str)))
        out.append({"hypothesis": h.name, "truth": value.value, "because": because})
    return out


def failed_hypotheses_text(failed: list[dict]) -> str:
    """:func:`failed_hypotheses` in one phrase: ``diversity (diverse~: fails)``."""
    return "; ".join(f"{f['hypothesis']}" + (f" ({', '.join(f['because'])})" if f["because"] else "")
                     + ("" if f["truth"] == "fails" else f" {f['truth']}") for f in failed)


@functools.lru_cache(maxsize=None)
def _instance_shape(rid: str) -> tuple[int, tuple[str, ...]]:
    """How many models an instance of ``rid`` has, and the names of its
    parameters (read off the record's own sampler)."""
    from allornone.theorems import get_record

    inst = get_record(rid).sample(random.Random(0), 0)
    return len(inst.models), tuple(inst.params)


def _instance(models, q, where, realisation):
    from allornone.theorems import get_record
    from allornone.theorems.engine.record import Instance

    rid = q.get("result")
    try:
        rec = get_record(rid) if isinstance(rid, str) else None
    except AllOrNoneError:
        rec = None
    if rec is None:
        from allornone.theorems import records

        raise _err(InputFormatError, f"{where}.result", f"unknown result {json.dumps(rid)}; implemented: "
                   f"{', '.join(records())}")
    count, names = _instance_shape(rec.id)
    if isinstance(q.get("models"), list) and len(q["models"]) != count:
        raise _err(InputFormatError, f"{where}.models", f"{rid} takes {count} model(s), got {len(q['models'])}")
    ms = _model_list(models, q, where, count)
    params = q.get("params", {})
    if not isinstance(params, dict):
        raise _err(InputFormatError, f"{where}.params", "expected an object")
    takes = f"{rid} takes: {', '.join(names)}" if names else f"{rid} takes no parameters"
    for key in params:
        if key not in names:
            raise _err(InputFormatError, f"{where}.params.{key}", f"unknown parameter; {takes}")
    missing = [key for key in names if key not in params]
    if missing:
        raise _err(InputFormatError, f"{where}.params", f"missing {missing[0]!r}; {takes}")
    inst = Instance("file", tuple(ms), _decode_params(params, f"{where}.params"))
    try:
        ev = rec.evaluate(inst, realisation)
    except AllOrNoneError as exc:
        raise type(exc)(f"{where}: {exc}") from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise _err(InputFormatError, where, f"these models and params are not an instance of {rid} "
                   f"({type(exc).__name__}: {exc})") from None
    got = {"hypotheses": ev.hypotheses.value, "conclusion": ev.conclusion.value, "statement": ev.statement.value}
    got.update({n: d.truth.value for n, d in ev.atoms.items()})
    item = {"result": rid, "verdict": f"statement {ev.statement.value}", **got,
            "failed_hypotheses": failed_hypotheses(rec, {n: d.truth for n, d in ev.atoms.items()})}
    expect = q.get("expect")
    if expect is not None:
        if not isinstance(expect, dict):
            raise _err(InputFormatError, f"{where}.expect", "expected an object mapping atoms to holds/fails")
        for k, v in expect.items():
            if k not in got:
                raise _err(InputFormatError, f"{where}.expect.{k}", f"unknown atom; {rid} has: {', '.join(got)}")
            if v not in ("holds", "fails", "undecided"):
                raise _err(InputFormatError, f"{where}.expect.{k}", f"{json.dumps(v)} is not holds/fails/undecided")
        item["expected"] = dict(expect)
        item["as_expected"] = all(got[k] == v for k, v in expect.items())
    return [item]


def _queries(models: dict, raw: list | None, realisation: str) -> list[dict]:
    if raw is None:
        names = list(models)
        out = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                try:
                    models[a].check_comparable(models[b])
                except AllOrNoneError:
                    continue
                out.append({"kind": "compare", "models": [a, b], "default": True})
        return out
    for i, q in enumerate(raw):
        where = f"queries[{i}]"
        if not isinstance(q, dict):
            raise _err(InputFormatError, where, "expected an object with a \"kind\"")
        kind = q.get("kind")
        if kind not in QUERY_KINDS:
            raise _err(InputFormatError, f"{where}.kind", f"unknown query kind {json.dumps(kind)}; known: "
                       f"{', '.join(QUERY_KINDS)}")
        _object(q, where, _QUERY_KEYS[kind])
    return raw


def verify_models(models: dict, raw_queries: list | None, realisation: str, full: bool = False,
                  progress=None) -> dict:
    """The report (a JSON-friendly dict) for loaded models and raw queries.

    Each compared pair also gets a ``graded`` object (distances between the
    distributions, subspace angles with Wedin's bound, the best certificate at
    rank ``k``: :func:`allornone.numeric.graded.compare`). Certificates larger
    than :data:`CERTIFICATE_ENTRIES` entries are summarised unless ``full``;
    ``progress(message)`` is told which query runs."""
    report: dict = {"format": FORMAT, "realisation": realisation, "models": {}, "queries": []}
    for j, (name, m) in enumerate(models.items()):
        if progress is not None:
            progress(f"structure of model {j + 1} of {len(models)} ({name!r}: k, M, N)")
        s = m.structure
        report["models"][name] = {"m": m.m, "n": m.n, "d": m.d, "pivot": m.pivot, "k": m.effective_complexity(),
                                  "dim_M": int(s.basis_M.shape[1]), "dim_N": int(s.basis_N.shape[1]),
                                  "dim_SF": m.dim_SF(), "dim_SG": m.dim_SG(), "diverse": m.is_diverse().truth.value,
                                  "decided": bool(s.decided)}
    queries = _queries(models, raw_queries, realisation)
    # validate every query before running any, so a bad file fails before work is done
    for i, q in enumerate(queries):
        where = f"queries[{i}]"
        if q["kind"] == "compare":
            _model_list(models, q, where, 2)
    for i, q in enumerate(queries):
        where = f"queries[{i}]"
        kind = q["kind"]
        if progress is not None:
            progress(f"query {i + 1} of {len(queries)}: {kind}")
        graded = None
        if kind == "compare":
            a, b = _model_list(models, q, where, 2)
            results = _compare(a, b, q["models"], full)
            graded = _graded(a, b)
        elif kind == "parallel":
            results = _parallel(models, q, where)
        elif kind == "relational":
            results = _relational(models, q, where)
        else:
            results = _instance(models, q, where, realisation)
        report["queries"].append({"index": i, "kind": kind, "models": q.get("models") or [q.get("model")],
                                  "results": results, **({"graded": graded} if graded is not None else {})})
    return report


def verify_data(data: Any, exact: bool = True) -> dict:
    """:func:`verify_models` on a parsed JSON structure."""
    models, queries = load_data(data, exact=exact)
    return verify_models(models, queries, "exact" if exact else "float")


def _exit_code(report: dict) -> int:
    for q in report["queries"]:
        for r in q["results"]:
            if r.get("as_expected") is False:
                return 1
            if r.get("hypotheses") == "holds" and r.get("conclusion") == "fails" and report["realisation"] == "exact":
                return 1
    return 0


def verify_file(path, console, full: bool = False, progress=None) -> tuple[int, dict]:
    """Load ``path``, decide every applicable result, print a table; returns
    (exit code, JSON payload). Exit code 1 when an ``expect`` of the file is not
    met or a result's statement fails exactly; bad files raise. Large
    certificates are summarised unless ``full``."""
    if progress is not None:
        progress("reading the models")
    models, queries, realisation = load_file(path)
    # (the file's integers are refused beyond Python's limit on reading them; the
    # residuals and certificates derived from them may be longer, and are written whole)
    with unlimited_digits():
        return _report(path, models, queries, realisation, console, full, progress)


def _report(path, models, queries, realisation, console, full, progress) -> tuple[int, dict]:
    from rich.markup import escape
    from rich.table import Table

    report = verify_models(models, queries, realisation, full, progress)
    report["file"] = str(path)
    # the file name on a line of its own: a table title would wrap a long path
    console.print(escape(f"models in {path} ({realisation})"), soft_wrap=True)
    table = Table()
    for col in ("model", "m", "n", "d", "k", "dim M", "dim N", "dim SF", "dim SG", "diverse"):
        table.add_column(col, justify="left" if col in ("model", "diverse") else "right")
    for name, info in report["models"].items():
        table.add_row(escape(name), *(str(info[k]) for k in ("m", "n", "d", "k", "dim_M", "dim_N", "dim_SF",
                                                            "dim_SG")), info["diverse"])
    console.print(table)
    if report["queries"]:
        qt = Table(title="results")
        for col in ("query", "result", "verdict", "certificate / witness"):
            qt.add_column(col, overflow="fold")
        for q in report["queries"]:
            label = f"{q['index']}: {q['kind']} " + ", ".join(str(m) for m in q["models"])
            for r in q["results"]:
                qt.add_row(*(escape(t) for t in (label, r["result"], _verdict_text(r), _evidence_text(r))))
        console.print(qt)
    else:
        console.print("no queries (and no pair of models on the same contexts, vocabulary and pivot to compare)")
    code = _exit_code(report)
    return code, report


def _verdict_text(r: dict) -> str:
    text = r.get("verdict") or r.get("truth", "")
    if r.get("result") == "cor6" and "statement" not in r and "hypotheses" in r:
        diverse = dict(zip(("diverse", "diverse~"), r.get("diverse", ())))
        failing = [f"{n}: {v}" for n, v in diverse.items() if v != "holds"]
        text += f" (diversity {r['hypotheses']}" + (f": {', '.join(failing)})" if failing else ")")
    if r.get("trivial") and r.get("truth") == "holds":
        text += " (trivial fit: the regressors have full row rank, so any readouts fit; add context pairs)"
    if "as_expected" in r:
        text += ", as expected" if r["as_expected"] else ", NOT as expected"
    return text


def _pair_text(pair) -> str:
    return f"{pair[0]!r} - {pair[1]!r}"


def _yes_no(value) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


def _generic_text(r: dict) -> str:
    """The fields of a result in words: ``λ: 1/2``, ``unique: yes``, not the
    Python reprs of the report's values."""
    parts = []
    for key, value in r.items():
        if key in ("result", "verdict", "truth", "trivial", "tolerance", "failed_hypotheses"):
            continue
        if key == "tokens" and r.get("result") == "lem8":
            parts.append(f"{_pair_text(value[0])} vs {_pair_text(value[1])}")
        elif key == "tokens":
            parts.append("readout of the tokens " + ", ".join(_pair_text(p) for p in value))
        elif key == "space":
            parts.append("in N" if value == "N" else "raw (in R^d)")
        elif key == "lam":
            parts.append(f"λ: {'none' if value is None else value}")
        elif key == "unique":
            parts.append(f"unique: {_yes_no(value)}")
        elif key == "pairs":
            parts.append("pairs " + ", ".join(f"{s} -> {t}" for s, t in value))
        elif key == "reading":
            parts.append("reading M" if value == "M" else "reading any subspace")
        elif key == "dim_gamma":
            parts.append(f"dim Γ_T = {value}")
        elif key == "from_log_odds":
            parts.append(f"from the log-odds alone: {value}")
        elif key == "residual":
            bound = r.get("tolerance")
            parts.append(f"residual {value:.3g}" + (f" (holds if <= {bound[0]:.3g}, fails if > {bound[1]:.3g})"
                                                     if bound else ""))
        else:
            parts.append(f"{key.replace('_', ' ')}: {'none' if value is None else _yes_no(value)}")
    return ", ".join(parts)


def _fmt(rows) -> str:
    return "[" + "; ".join(" ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row)
                           for row in rows) + "]"


def _summary_text(name: str, c: dict) -> str:
    cond = "-" if c["condition"] is None else f"{c['condition']:.3g}"
    norm = c["norm"] if isinstance(c["norm"], str) else f"{c['norm']:.3g}"  # a string: beyond the float range
    return f"{name}: {c['shape'][0]}x{c['shape'][1]}, rank {c['rank']}, norm {norm}, condition {cond}"


def _evidence_text(r: dict) -> str:
    if "certificate" in r:
        return f"A* = {_fmt(r['certificate']['A'])}, B* = {_fmt(r['certificate']['B'])}"
    if "certificate_summary" in r:
        c = r["certificate_summary"]
        return f"{_summary_text('A*', c['A'])}; {_summary_text('B*', c['B'])} (--full prints them)"
    if "witness" in r and isinstance(r["witness"], dict):
        w = r["witness"]
        return f"L[{w['context']}, {w['token']}] = {w['L']} but L~ = {w['L~']}"
    if "statement" in r:
        if r["hypotheses"] == "holds":
            return f"every hypothesis holds, conclusion {r['conclusion']}"
        failed = failed_hypotheses_text(r.get("failed_hypotheses", []))
        return f"hypotheses failing: {failed}; conclusion {r['conclusion']}"
    if r.get("result") == "cor6":
        if "A" in r:
            return f"A = {_fmt(r['A'])}"
        return _summary_text("A", r["A_summary"]) if "A_summary" in r else r.get("reason", "")
    return _generic_text(r)
