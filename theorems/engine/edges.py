r"""Edge cases of hypotheses: each one dropped (a counterexample, found and
shrunk) and each boundary case (the conclusion still holds).

For a hypothesis ``H`` of a result, a *counterexample to dropping H* is an
instance on which every other hypothesis holds, ``H`` fails, and the conclusion
fails. :func:`find_counterexample` looks for one

1. on the instances of the record's own ``Edge`` builders of kind ``"drop"``
   for ``H``, then
2. on up to ``budget`` instances of ``rec.sample`` and, for each, variants in
   which a model is replaced by a B.5 twin (docs/constructions.md#b5) or a change of
   basis of the first model,

deciding every candidate in floats *and* exactly. Only an exact verdict makes a
counterexample **genuine**; a candidate that meets the criterion in floats but
not exactly is counted as a **float artefact** and never reported as a
counterexample. A float-only candidate is re-decided exactly on the dyadic
rationals its floats represent before it can count as genuine.

A genuine counterexample is then *shrunk* (:func:`shrink`): contexts, tokens and
coordinates are deleted, offsets removed, the pivot moved to 0 and entries
replaced by 0, +-1 or smaller numbers, one change at a time, keeping a change
only when the criterion still holds exactly; the result is re-verified exactly.

>>> from allornone.theorems import get_record
>>> rec = get_record("cor6")
>>> r = find_counterexample(rec, "diversity", seed=0)
>>> r.label, within_bound(r.size)
('genuine', True)
>>> find_counterexample(rec, "same dimension", seed=0, budget=20).instance is None
True
"""
from __future__ import annotations

import os
import random
import re
import time
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable

from rich.markup import escape

from allornone.decision import Truth
from allornone.errors import AllOrNoneError, InputFormatError
from allornone.files import replacing
from allornone.symbolic import generators as gen
from allornone.symbolic.model import ExactModel
from allornone.theorems.engine.logic import evaluate3
from allornone.theorems.engine.proofs import format_value
from allornone.theorems.engine.record import Instance
from allornone.theorems.engine.verify import dumps, failed_hypotheses, failed_hypotheses_text

__all__ = [
    "DEFAULT_BUDGET",
    "SIZE_BOUND",
    "SearchResult",
    "drop_criterion",
    "find_counterexample",
    "find_witness",
    "shrink",
    "instance_size",
    "within_bound",
    "instance_file",
    "print_edges",
]

#: Sampled instances tried per hypothesis (each with a few twin variants).
DEFAULT_BUDGET = 150
#: Steps (candidate changes tried) allowed to one shrink.
SHRINK_STEPS = 3000
#: Every shrunk counterexample (and witness) is at most this large: contexts
#: ``m``, tokens ``n``, dimension ``d`` (largest over the models) and the
#: largest numerator or denominator of an entry.
SIZE_BOUND = {"m": 8, "n": 5, "d": 4, "entry": 5}

MODEL_NAMES = ("f", "f~", "f^")


# -- the criterion -------------------------------------------------------------

def _atom_truths(rec, ev) -> dict:
    return {rec.atoms[n]: d.truth for n, d in ev.atoms.items() if n in rec.atoms}


def _kleene_and(truths) -> Truth:
    truths = list(truths)
    if Truth.FAILS in truths:
        return Truth.FAILS
    if Truth.UNDECIDED in truths:
        return Truth.UNDECIDED
    return Truth.HOLDS


def drop_criterion(rec, hypothesis: str, ev) -> Truth:
    """Whether an evaluation is a counterexample to dropping ``hypothesis``:
    every other hypothesis holds, this one fails, and the conclusion fails
    (Kleene conjunction, so a float evaluation may answer ``UNDECIDED``)."""
    truth = _atom_truths(rec, ev)
    parts = [evaluate3(h.atom, truth).negate() if h.name == hypothesis else evaluate3(h.atom, truth)
             for h in rec.hypotheses]
    return _kleene_and(parts + [ev.conclusion.negate()])


def witness_criterion(rec, ev) -> Truth:
    """Non-vacuity: every hypothesis holds and the conclusion holds
    non-trivially -- for an equivalence, with both of its sides true (and,
    checked by :func:`find_witness`, with ``k >= 1``)."""
    parts = [ev.hypotheses, ev.conclusion]
    if rec.sides:
        parts.append(ev.atoms[rec.sides].truth)
    return _kleene_and(parts)


def _nondegenerate(inst: Instance) -> bool:
    """The first model has ``k >= 1`` (not all logits equal) and the models are
    not all one and the same."""
    first = inst.models[0]
    same = all(m.d == first.d and m.F == first.F and m.G == first.G and m.pivot == first.pivot
               for m in inst.models[1:])
    return first.effective_complexity() >= 1 and not (same and len(inst.models) > 1)


# -- sizes -----------------------------------------------------------------------

def _exact_models(inst: Instance) -> list:
    return [m for m in inst.models if isinstance(m, ExactModel)]


def instance_size(inst: Instance) -> dict:
    """``m``, ``n``, the largest ``d`` and the largest numerator or denominator."""
    models = list(inst.models)
    entry = 0
    for m in _exact_models(inst):
        for X in (m.F, m.G):
            for row in X.to_fraction_rows():
                for v in row:
                    entry = max(entry, abs(v.numerator), v.denominator if v else 0)
    return {"m": max(m.m for m in models), "n": max(m.n for m in models), "d": max(m.d for m in models),
            "entry": entry}


def within_bound(size: dict, bound: dict = SIZE_BOUND) -> bool:
    return all(size[k] <= bound[k] for k in bound)


def _measure(inst: Instance) -> tuple:
    """What shrinking decreases: number of matrix entries, then their total size."""
    cells = 0
    weight = 0
    for m in _exact_models(inst):
        cells += (m.m + m.n) * m.d
        G0_is_G = m.G == m.G0
        weight += 0 if G0_is_G else 1
        weight += m.pivot
        for X in (m.F, m.G):
            for row in X.to_fraction_rows():
                for v in row:
                    weight += abs(v.numerator) + v.denominator - 1 if v else 0
    return (cells, weight)


# -- evaluation helpers ------------------------------------------------------------

def _exact_verdict(rec, inst: Instance, predicate: Callable) -> Truth | None:
    """The predicate's exact truth on ``inst``, or None when the instance is not
    a valid instance of the result (a candidate built by shrinking or by a
    variant may not be)."""
    try:
        ev = rec.evaluate(inst, "exact")
    except (AllOrNoneError, ArithmeticError, IndexError, KeyError, ValueError, TypeError):
        return None
    return predicate(ev)


def _dyadic(inst: Instance) -> Instance | None:
    """The exact instance that a float-only instance's floats represent, when
    it is small enough to decide exactly."""
    models = []
    for fm in inst.models:
        if fm.m * fm.d + fm.n * fm.d > 400:
            return None
        F = [[Fraction(float(v)) for v in row] for row in fm.F]
        G = [[Fraction(float(v)) for v in row] for row in fm.G]
        models.append(ExactModel(F, G, fm.pivot, fm.contexts, fm.tokens))
    return Instance(inst.kind + " (dyadic)", tuple(models), inst.params)


def _variants(inst: Instance, rng: random.Random):
    """The instance, and the same with a model replaced by a B.5 twin or a change
    of basis of the first model (same distribution, other shape)."""
    yield "sample", inst
    if inst.float_only or not inst.models or not isinstance(inst.models[0], ExactModel):
        return
    base = inst.models[0]
    k = base.effective_complexity()
    for j in range(len(inst.models)):
        a = rng.randint(0, 2)
        b = rng.randint(0 if (k + a) else 1, 2)
        psi = (lambda y, g, bb: [y * y] * bb) if rng.random() < 0.5 else None
        try:
            twin = gen.b5_twin(base, rng, a=a, b=b, psi=psi)
            cob = gen.change_of_basis(base, rng=rng)
        except AllOrNoneError:
            continue
        for label, model in ((f"B.5 twin (a={a}, b={b}) at {j}", twin), (f"change of basis at {j}", cob)):
            models = list(inst.models)
            models[j] = model
            yield label, Instance(f"{inst.kind}; {label}", tuple(models), inst.params)


# -- search --------------------------------------------------------------------------

@dataclass
class SearchResult:
    """Outcome of :func:`find_counterexample` (or :func:`find_witness`).

    ``instance`` is the shrunk, exactly re-verified instance (None when nothing
    was found within the budget); ``label`` is ``"genuine"`` when found;
    ``tried`` counts candidates decided; ``float_artefacts`` those that met the
    criterion in floats but not exactly."""

    rid: str
    hypothesis: str | None
    instance: Instance | None = None
    found: Instance | None = None
    label: str | None = None
    source: str | None = None
    budget: int = 0
    tried: int = 0
    samples: int = 0
    float_artefacts: int = 0
    artefact_example: Instance | None = None
    shrink_steps: int = 0
    elapsed_s: float = 0.0
    notes: list = field(default_factory=list)

    @property
    def size(self) -> dict | None:
        return instance_size(self.instance) if self.instance is not None else None


def _why_not(rec, hypothesis: str, inst: Instance) -> str:
    ev = rec.evaluate(inst, "exact")
    truth = _atom_truths(rec, ev)
    why = [f"hypothesis {h.name!r} {evaluate3(h.atom, truth).value}" for h in rec.hypotheses
           if (evaluate3(h.atom, truth) is Truth.HOLDS) == (h.name == hypothesis)]
    if ev.conclusion is Truth.HOLDS:
        why.append("the conclusion holds")
    return "; ".join(why) + " on it (exactly)"


def _search(rec, predicate: Callable, seed: int, budget: int, tag: str, edges=(),
            accept: Callable = lambda inst: True, progress: Callable | None = None) -> SearchResult:
    """``progress(phase, done, total)``, when given, hears of every sample and
    of the shrink."""
    res = SearchResult(rec.id, None, budget=budget)
    start = time.perf_counter()

    def consider(source: str, inst: Instance) -> bool:
        res.tried += 1
        try:
            flt = predicate(rec.evaluate(inst, "float"))
        except (AllOrNoneError, ArithmeticError, IndexError, KeyError, ValueError, TypeError):
            flt = None
        exact_inst = inst if not inst.float_only else _dyadic(inst)
        exact = _exact_verdict(rec, exact_inst, predicate) if exact_inst is not None else None
        if exact_inst is not None and not accept(exact_inst):
            return False
        if exact is Truth.HOLDS:
            res.found, res.source, res.label = exact_inst, source, "genuine"
            return True
        if flt is Truth.HOLDS:
            res.float_artefacts += 1
            res.artefact_example = res.artefact_example or inst
        return False

    if progress is not None and edges:
        progress("trying the record's edges", None, None)
    for edge in edges:
        inst = edge.build(random.Random(f"{seed}/{rec.id}/edge/{edge.name}"))
        if consider(f"record edge {edge.name!r}", inst):
            break
        if edge.kind == "drop":
            res.notes.append(f"the record's edge {edge.name!r} is not a counterexample in this strict sense: "
                             + _why_not(rec, edge.hypothesis, inst))
    i = 0
    if progress is not None and res.found is None and budget:
        progress("searching", 0, budget)
    while res.found is None and i < budget:
        rng = random.Random(f"{seed}/{rec.id}/edges/{tag}/{i}")
        inst = rec.sample(rng, i)
        res.samples += 1
        for label, variant in _variants(inst, rng):
            if consider(f"sample {i} ({inst.kind}); {label}", variant):
                break
        i += 1
        if progress is not None:
            progress("searching", i, budget)
    if res.found is not None:
        if progress is not None:
            progress("shrinking", None, None)
        res.instance, res.shrink_steps = shrink(rec, res.found, predicate, accept=accept)
        if _exact_verdict(rec, res.instance, predicate) is not Truth.HOLDS:  # pragma: no cover - shrink keeps it
            raise AssertionError("a shrunk instance lost its property")
    res.elapsed_s = round(time.perf_counter() - start, 3)
    return res


def find_counterexample(rec, hypothesis: str, seed: int = 0, budget: int = DEFAULT_BUDGET,
                        progress: Callable | None = None) -> SearchResult:
    """Search, shrink and exactly re-verify a counterexample to dropping ``hypothesis``."""
    rec.hypothesis(hypothesis)
    edges = [e for e in rec.edges if e.kind == "drop" and e.hypothesis == hypothesis]
    res = _search(rec, lambda ev: drop_criterion(rec, hypothesis, ev), seed, budget, f"drop/{hypothesis}", edges,
                  progress=progress)
    res.hypothesis = hypothesis
    return res


def find_witness(rec, seed: int = 0, budget: int = DEFAULT_BUDGET, progress: Callable | None = None) -> SearchResult:
    """An instance (shrunk) on which every hypothesis holds and the conclusion holds non-trivially."""
    edges = [e for e in rec.edges if e.kind == "boundary"]
    return _search(rec, lambda ev: witness_criterion(rec, ev), seed, budget, "witness", edges,
                   accept=_nondegenerate, progress=progress)


# -- shrinking ---------------------------------------------------------------------

def _rebuild(model: ExactModel, F, G, pivot=None, contexts=None, tokens=None) -> ExactModel:
    return ExactModel(F, G, model.pivot if pivot is None else pivot,
                      model.contexts if contexts is None else contexts, model.tokens if tokens is None else tokens)


def _smaller_values(v: Fraction) -> list[Fraction]:
    out = [Fraction(0)]
    sign = 1 if v > 0 else -1
    out += [Fraction(sign), Fraction(-sign)]
    if v.denominator != 1:
        out.append(Fraction(int(v)))
        out.append(Fraction(v.numerator))
    elif abs(v) > 2:
        out.append(Fraction(int(v / 2)))
        out.append(v - sign)
    return [c for c in out if c != v]


def _candidates(inst: Instance):
    """Single changes of an exact instance, the most reducing first."""
    models = list(inst.models)
    idx = [j for j, m in enumerate(models) if isinstance(m, ExactModel)]
    if not idx:
        return
    first = models[idx[0]]

    def with_models(new):
        return Instance(inst.kind, tuple(new), inst.params)

    # delete a context (from every model: they share X)
    if all(models[j].m == first.m for j in idx) and first.m > 1:
        for x in reversed(range(first.m)):
            new = list(models)
            for j in idx:
                m = models[j]
                keep = [i for i in range(m.m) if i != x]
                new[j] = _rebuild(m, m.F[keep, :], m.G, contexts=[m.contexts[i] for i in keep])
            yield with_models(new)
    # delete a token (from every model: they share A and the pivot)
    if all(models[j].n == first.n for j in idx) and first.n > 2:
        for y in reversed(range(first.n)):
            if y == first.pivot:
                continue
            new = list(models)
            for j in idx:
                m = models[j]
                keep = [i for i in range(m.n) if i != y]
                new[j] = _rebuild(m, m.F, m.G[keep, :], pivot=m.pivot - (y < m.pivot),
                                  tokens=[m.tokens[i] for i in keep])
            yield with_models(new)
    # delete a coordinate of every model of the same dimension (keeps d = d~), then of one model
    same_d = [j for j in idx if models[j].d == first.d]
    if len(same_d) > 1 and first.d > 1:
        for c in reversed(range(first.d)):
            keep = [i for i in range(first.d) if i != c]
            new = list(models)
            for j in same_d:
                new[j] = _rebuild(models[j], models[j].F[:, keep], models[j].G[:, keep])
            yield with_models(new)
    # delete a coordinate of one model
    for j in idx:
        m = models[j]
        if m.d > 1:
            for c in reversed(range(m.d)):
                keep = [i for i in range(m.d) if i != c]
                new = list(models)
                new[j] = _rebuild(m, m.F[:, keep], m.G[:, keep])
                yield with_models(new)
    # a later model replaced by a small model of the first one's distribution:
    # its negation (R = -I) or its reduced B.5 realisation (dimension k)
    for j in idx[1:]:
        base = models[idx[0]]
        twins = [gen.change_of_basis(base, [[-int(r == c) for c in range(base.d)] for r in range(base.d)])]
        k = base.effective_complexity()
        if k:
            eye = [[int(r == c) for c in range(k)] for r in range(k)]
            twins.append(gen.b5_twin(base, a=0, b=0, T=eye, R=eye, c=[0] * k))
        for twin in twins:
            new = list(models)
            new[j] = twin
            yield with_models(new)
    # pivot to 0, offsets to 0
    if any(models[j].pivot for j in idx):
        new = list(models)
        for j in idx:
            new[j] = models[j].with_pivot(0)
        yield with_models(new)
    for j in idx:
        m = models[j]
        if m.G != m.G0:
            new = list(models)
            new[j] = _rebuild(m, m.F, m.G0)
            yield with_models(new)
    # smaller entries
    for j in idx:
        m = models[j]
        for which in ("F", "G"):
            rows = getattr(m, which).to_fraction_rows()
            for r, row in enumerate(rows):
                for c, v in enumerate(row):
                    for w in _smaller_values(v):
                        changed = [list(rr) for rr in rows]
                        changed[r][c] = w
                        new = list(models)
                        new[j] = _rebuild(m, changed if which == "F" else m.F, changed if which == "G" else m.G)
                        yield with_models(new)


def shrink(rec, inst: Instance, predicate: Callable, max_steps: int = SHRINK_STEPS,
           accept: Callable = lambda inst: True) -> tuple[Instance, int]:
    """Greedily apply single changes (:func:`_candidates`) that keep
    ``predicate`` exactly true and make the instance smaller (fewer entries,
    then smaller ones), until none applies or ``max_steps`` candidates were tried.
    Returns the shrunk instance and the number of candidates tried."""
    steps = 0
    current, size = inst, _measure(inst)
    progress = True
    while progress and steps < max_steps:
        progress = False
        for cand in _candidates(current):
            steps += 1
            if steps > max_steps:
                break
            try:
                m = _measure(cand)
            except AllOrNoneError:
                continue
            if m >= size:
                continue
            if _exact_verdict(rec, cand, predicate) is Truth.HOLDS and accept(cand):
                current, size, progress = cand, m, True
                break
    if current is not inst:
        current = Instance(inst.kind + " (shrunk)", current.models, current.params)
    return current, steps


# -- files -------------------------------------------------------------------------

def instance_file(rec, inst: Instance, expect: dict | None = None, description: str = "") -> dict:
    """A file for ``allornone verify`` (docs/file-format.md) that reproduces
    ``inst`` as an instance of ``rec``; ``expect`` maps atom names (and
    ``"hypotheses"``, ``"conclusion"``) to ``"holds"``/``"fails"``."""
    data = inst.to_json()
    names = [MODEL_NAMES[j] if j < len(MODEL_NAMES) else f"f{j}" for j in range(len(data["models"]))]
    query = {"kind": "instance", "result": rec.id, "models": names}
    if data["params"]:
        query["params"] = data["params"]
    if expect:
        query["expect"] = expect
    out = {"format": "allornone/1"}
    if description:
        out["description"] = description
    out["models"] = dict(zip(names, data["models"]))
    out["queries"] = [query]
    return out


def _expectation(ev) -> dict:
    out = {"hypotheses": ev.hypotheses.value, "conclusion": ev.conclusion.value}
    out.update({n: d.truth.value for n, d in ev.atoms.items()})
    return out


def _slug(text: str) -> str:
    """A file-name part for a hypothesis name: ASCII letters and digits, Greek
    letters spelt out, ``⊆`` as ``in``, every other run of characters one ``-``.

    >>> _slug("Γ_q ⊆ M"), _slug("same distribution")
    ('gamma-q-in-m', 'same-distribution')
    """
    words = []
    for c in text:
        if c.isascii() and c.isalnum():
            words.append(c.lower())
        elif c in "⊆⊂∈":
            words.append("-in-")
        elif unicodedata.name(c, "").startswith("GREEK"):
            words.append(f"-{unicodedata.name(c).split()[-1].lower()}-")
        else:
            words.append("-")
    return re.sub("-+", "-", "".join(words)).strip("-")


def resolve_hypothesis(rec, name: str) -> str:
    """The hypothesis of ``rec`` that ``name`` designates.

    Parameters
    ----------
    rec : TheoremRecord
        The result whose hypotheses are searched.
    name : str
        A hypothesis's own name (``"Γ ⊆ N"``) or the ASCII slug used in the
        names of saved counterexample files, with or without ``drop-``, the
        record id and ``.json`` around it (``"gamma-in-n"``,
        ``"drop-gamma-in-n"``, ``"thm14-drop-gamma-in-n.json"``).

    Returns
    -------
    str
        The hypothesis's own name.

    Raises
    ------
    UnknownHypothesisError
        When no hypothesis has that name or slug (the message lists both).

    Examples
    --------
    >>> from allornone.theorems import get_record
    >>> rec = get_record("thm14")
    >>> resolve_hypothesis(rec, "drop-gamma-in-n"), resolve_hypothesis(rec, "Γ ⊆ N")
    ('Γ ⊆ N', 'Γ ⊆ N')
    """
    key = name.strip().lower()
    if key.endswith(".json"):
        key = key[:-5]
    for prefix in (f"{rec.id}-", "drop-"):
        if key.startswith(prefix):
            key = key[len(prefix):]
    for h in rec.hypotheses:
        if name == h.name or key == _slug(h.name):
            return h.name
    from allornone.errors import UnknownHypothesisError

    known = ", ".join(f"{h.name!r} ({_slug(h.name)})" for h in rec.hypotheses) or "none"
    raise UnknownHypothesisError(f"{rec.id} has no hypothesis {name!r}; it has: {known}")


def _output_dir(out_dir) -> Path | None:
    """``out_dir`` as a folder that counterexample files can be written to,
    checked before any search: a user mistake (a file in its place, a folder
    that cannot be created or written) is an error, not a traceback mid-run."""
    if out_dir is None:
        return None
    path = Path(out_dir)
    if path.exists() and not path.is_dir():
        raise InputFormatError(f"{path}: exists and is not a folder; counterexample files are saved there "
                               "(move it away, or run from another folder)")
    parent = path if path.exists() else next((a for a in path.absolute().parents if a.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise InputFormatError(f"{path}: cannot be written; counterexample files are saved there "
                               "(run from a folder you can write to)")
    return path


# -- printing ------------------------------------------------------------------------

def _print_instance(console, inst: Instance, indent: str = "    ") -> None:
    for j, m in enumerate(inst.models):
        name = MODEL_NAMES[j] if j < len(MODEL_NAMES) else f"f{j}"
        console.print(f"{indent}{name}: F = {format_value(m.F)}  G = {format_value(m.G)}  pivot {m.pivot}",
                      markup=False)
    for k, v in inst.params.items():
        console.print(f"{indent}{k} = {format_value(v)}", markup=False)


def _atoms_line(ev, fl) -> str:
    return ", ".join(f"{n} {d.truth.value}" + ("" if fl is None or fl.atoms[n].truth is d.truth
                                               else f" (float {fl.atoms[n].truth.value})")
                     for n, d in ev.atoms.items())


def _size_text(size: dict) -> str:
    return f"m={size['m']} n={size['n']} d={size['d']} max|entry|={size['entry']}"


def _shrink_text(before: dict, after: dict) -> str:
    """What shrinking did, in words; a shrink that left the size as it was says so.

    >>> size = {"m": 2, "n": 3, "d": 2, "entry": 1}
    >>> _shrink_text(size, size)
    'size not reduced by shrinking (m=2 n=3 d=2 max|entry|=1)'
    >>> _shrink_text({**size, "m": 5}, size)
    'shrunk from m=5 n=3 d=2 max|entry|=1 to m=2 n=3 d=2 max|entry|=1'
    """
    if before == after:
        return f"size not reduced by shrinking ({_size_text(after)})"
    return f"shrunk from {_size_text(before)} to {_size_text(after)}"


def _safe_float(rec, inst):
    try:
        return rec.evaluate(inst, "float")
    except AllOrNoneError:
        return None


def _other_hypotheses_hold(rec, hypothesis: str, ev) -> bool:
    truth = _atom_truths(rec, ev)
    return all(evaluate3(h.atom, truth) is Truth.HOLDS for h in rec.hypotheses if h.name != hypothesis)


def _evidence_filter(rec, h, built: Callable) -> dict:
    """An evidence filter (:attr:`Hypothesis.evidence_only`) is not searched: the
    conclusion holds without it, so dropping it cannot give a counterexample.
    What is checked is the record's own edges: none may meet the drop criterion
    for it (``broken``, a failure), and those on which it fails while every other
    hypothesis and the conclusion hold are named (``shown_by``)."""
    shown, broken = [], []
    for edge in rec.edges:
        ev = built(edge)
        if drop_criterion(rec, h.name, ev) is Truth.HOLDS:
            broken.append(edge.name)
        elif (evaluate3(h.atom, _atom_truths(rec, ev)) is Truth.FAILS and _other_hypotheses_hold(rec, h.name, ev)
              and ev.conclusion is Truth.HOLDS):
            shown.append(edge.name)
    return {"shown_by": shown, "broken_by": broken, "edges_checked": len(rec.edges)}


def print_edges(rec, seed: int, console, hypothesis: str | None = None, budget: int = DEFAULT_BUDGET,
                out_dir: str | Path | None = "allornone-edges", progress: Callable | None = None) -> tuple[int, dict]:
    """For every hypothesis of ``rec`` (or only ``hypothesis``): a counterexample
    to dropping it, found, shrunk, re-verified exactly and saved as a file for
    ``allornone verify`` under ``out_dir`` (None: not saved) -- or the plain
    finding that none turned up within ``budget``; an evidence filter is not
    searched (it cannot have one) but checked on the record's edges. Then every
    boundary case and a non-vacuity witness. ``progress(phase, done, total)``
    hears what runs (``done``/``total`` counted in samples, or None). Returns
    (exit code, JSON payload); the exit code is 1 only if an edge or witness
    misbehaves (never because a hypothesis survived)."""
    out_dir = _output_dir(out_dir)
    failures: list[str] = []  # one phrase per reason for a non-zero exit
    start = time.perf_counter()
    say = progress or (lambda phase, done=None, total=None: None)
    payload: dict = {"id": rec.id, "seed": seed, "budget": budget, "size_bound": SIZE_BOUND,
                     "hypotheses": [], "boundary": [], "record_edges": []}
    console.print(f"[bold]{rec.number}[/]: {escape(rec.title)}\n{escape(rec.summary)}")
    hyps = [h for h in rec.hypotheses if hypothesis is None or h.name == hypothesis]
    if not rec.hypotheses:
        console.print("\nThis result has no hypotheses beyond a shared X, A and pivot: nothing to drop.")
    # each record edge built and decided once: the evidence filters and the listing below read them
    cache: dict = {}

    def built(edge):
        if edge.name not in cache:
            inst = edge.build(random.Random(f"{seed}/{rec.id}/edge/{edge.name}"))
            cache[edge.name] = (inst, rec.evaluate(inst, "exact"))
        return cache[edge.name][1]

    for number, h in enumerate(hyps, 1):
        label = f"drop {h.name!r} ({number} of {len(hyps)})"
        console.print(f"\n[bold]drop {escape(repr(h.name))}[/] ({escape(h.description)})")
        if h.evidence_only:
            t0 = time.perf_counter()
            say(f"{label}: the record's edges", None, None)
            found = _evidence_filter(rec, h, built)
            entry = {"hypothesis": h.name, "description": h.description, "budget": 0, "tried": found["edges_checked"],
                     "samples": 0, "elapsed_s": round(time.perf_counter() - t0, 3), "float_artefacts": 0,
                     "notes": [], "status": "evidence_only", "evidence_only": h.evidence_only,
                     "shown_by": found["shown_by"]}
            console.print(f"  [cyan]not droppable[/]: an evidence filter, not needed for the conclusion's truth -- "
                          f"{escape(h.evidence_only)}. Dropping it cannot produce a counterexample, so none is "
                          "searched for.")
            if found["shown_by"]:
                console.print("  shown by the record's edge(s) " + escape(", ".join(repr(n) for n in found["shown_by"]))
                              + ": it fails there, every other hypothesis holds, and so does the conclusion")
            else:
                console.print(f"  (none of the record's {found['edges_checked']} edges has it failing with every "
                              "other hypothesis holding)")
            for name in found["broken_by"]:
                failures.append(f"hypothesis {h.name!r} is declared an evidence filter, yet the record's edge "
                                f"{name!r} is a counterexample to dropping it")
                console.print(f"  [red]but the record's edge {escape(repr(name))} is a counterexample to dropping "
                              "it[/]")
            payload["hypotheses"].append(entry)
            continue
        res = find_counterexample(rec, h.name, seed, budget,
                                  progress=lambda phase, done, total, label=label: say(f"{label}: {phase}", done,
                                                                                       total))
        entry = {"hypothesis": h.name, "description": h.description, "budget": budget, "tried": res.tried,
                 "samples": res.samples, "elapsed_s": res.elapsed_s, "float_artefacts": res.float_artefacts,
                 "notes": res.notes}
        if res.instance is None and h.implied:
            entry["status"] = "implied"
            entry["implied"] = h.implied
            console.print(f"  [cyan]implied by the other hypotheses[/]: {escape(h.implied)} (no counterexample in "
                          f"{res.tried} candidates from {res.samples} samples, {res.elapsed_s} s)")
        elif res.instance is None:
            entry["status"] = "survived"
            console.print(f"  [yellow]no counterexample[/]: the conclusion held on every instance tried where the "
                          f"other hypotheses held and this one failed ({res.tried} candidates from {res.samples} "
                          f"samples, budget {budget}, {res.elapsed_s} s)")
        else:
            ev = rec.evaluate(res.instance, "exact")
            fl = _safe_float(rec, res.instance)
            size, before = instance_size(res.instance), instance_size(res.found)
            expect = _expectation(ev)
            failed = failed_hypotheses(rec, {n: d.truth for n, d in ev.atoms.items()})
            file = instance_file(rec, res.instance, expect, f"{rec.number}: counterexample to dropping "
                                 f"{h.name!r} ({res.label}, exact)")
            entry.update(status="counterexample", label=res.label, source=res.source, size=size,
                         size_found=before, within_bound=within_bound(size), shrink_steps=res.shrink_steps,
                         exact=expect, float={n: d.truth.value for n, d in fl.atoms.items()} if fl else None,
                         failed_hypotheses=failed, file=file)
            if h.implied:
                failures.append(f"hypothesis {h.name!r} is declared implied, yet dropping it has a counterexample")
            if not within_bound(size):
                failures.append(f"the counterexample to dropping {h.name!r} stayed above the size bound")
            console.print(f"  [green]counterexample[/] ([bold]{res.label}[/], re-verified exactly), found in "
                          f"{res.source}; {_shrink_text(before, size)} "
                          f"({res.shrink_steps} shrink steps; {res.tried} candidates, {res.elapsed_s} s)")
            _print_instance(console, res.instance)
            console.print(f"    exact: {_atoms_line(ev, fl)}", markup=False)
            console.print(f"    hypotheses failing: {failed_hypotheses_text(failed)}; the conclusion "
                          f"{ev.conclusion.value}", markup=False)
            if out_dir is not None:
                path = out_dir / f"{rec.id}-drop-{_slug(h.name)}.json"
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    with replacing(path) as tmp:
                        tmp.write_text(dumps(file), encoding="utf-8")
                except OSError as exc:
                    raise InputFormatError(f"{path}: cannot be written ({exc.strerror or exc})") from None
                entry["path"] = str(path)
                console.print(f"    saved: {path}  (reproduce: allornone verify {path})", markup=False)
        if res.float_artefacts:
            console.print(f"  float artefacts: {res.float_artefacts} candidate(s) met the criterion in floats but "
                          "not exactly; they are not counterexamples")
        for note in res.notes:
            console.print(f"  note: {note}", markup=False)
        payload["hypotheses"].append(entry)
    # the record's own edges: drops as declared, boundary cases with the conclusion holding
    listed = [e for e in rec.edges if hypothesis is None or e.hypothesis == hypothesis]
    for number, edge in enumerate(listed, 1):
        say("the record's edges", number - 1, len(listed))
        ev = built(edge)
        inst = cache[edge.name][0]
        fl = _safe_float(rec, inst)
        got = {k: ev.atoms[k].holds for k in edge.expect}
        match = got == dict(edge.expect)
        failed = failed_hypotheses(rec, {n: d.truth for n, d in ev.atoms.items()})
        item = {"name": edge.name, "kind": edge.kind, "hypothesis": edge.hypothesis, "description": edge.description,
                "expected": dict(edge.expect), "as_expected": match, "exact": _expectation(ev),
                "float": {n: d.truth.value for n, d in fl.atoms.items()} if fl else None,
                "failed_hypotheses": failed, "size": instance_size(inst), "instance": inst.to_json()}
        if edge.kind == "boundary":
            item["conclusion"] = ev.conclusion.value
            if ev.conclusion is not Truth.HOLDS:
                failures.append(f"boundary case {edge.name!r}: the conclusion {ev.conclusion.value}")
            elif not match:
                failures.append(f"boundary case {edge.name!r} is not as declared")
            if len(payload["boundary"]) == 0:
                console.print("\n[bold]boundary cases[/] (the conclusion still holds)")
            mark = "[green]holds[/]" if ev.conclusion is Truth.HOLDS else "[red]FAILS[/]"
            failing = f" (hypotheses failing: {escape(failed_hypotheses_text(failed))})" if failed else ""
            console.print(f"  {escape(edge.name)}{' (' + escape(edge.hypothesis) + ')' if edge.hypothesis else ''}: "
                          f"conclusion {mark}{failing}{'' if match else ' [red]NOT as declared[/]'} -- "
                          f"{escape(edge.description)}")
            _print_instance(console, inst)
            payload["boundary"].append(item)
        else:
            item["meets_criterion"] = drop_criterion(rec, edge.hypothesis, ev).value if edge.hypothesis else None
            if not match:
                failures.append(f"edge {edge.name!r} is not as declared")
            payload["record_edges"].append(item)
    if hypothesis is None:
        wit = find_witness(rec, seed, budget,
                           progress=lambda phase, done, total: say(f"non-vacuity witness: {phase}", done, total))
        console.print("\n[bold]non-vacuity[/]: ", end="")
        if wit.instance is None:
            failures.append("no non-vacuity witness")
            console.print(f"[red]no instance[/] with every hypothesis holding and the conclusion non-trivial "
                          f"in {wit.tried} candidates")
            payload["witness"] = None
        else:
            ev = rec.evaluate(wit.instance, "exact")
            console.print(f"every hypothesis holds and the conclusion holds"
                          f"{' with both sides of the equivalence true' if rec.sides else ''} "
                          f"({_size_text(wit.size)}):")
            _print_instance(console, wit.instance)
            payload["witness"] = {"size": wit.size, "source": wit.source, "exact": _expectation(ev),
                                  "file": instance_file(rec, wit.instance, _expectation(ev),
                                                        f"{rec.number}: non-vacuity witness")}
    payload["elapsed_s"] = round(time.perf_counter() - start, 3)
    payload["failures"] = failures
    if failures:
        mismatched = [e for e in payload["record_edges"] + payload["boundary"] if not e["as_expected"]]
        for e in mismatched:
            got = {k: e["exact"][k] for k in e["expected"]}
            console.print(f"  {e['name']}: declared {e['expected']}, got {got}", markup=False)
        console.print(f"\n[red]exit 1[/]: {escape('; '.join(failures))}")
    return (1 if failures else 0), payload
