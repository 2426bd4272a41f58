"""Annotated proofs: each step of a record stated, justified and checked live.

:func:`print_proof` takes a theorem record (``allornone.theorems.records()``) or
a construction (:mod:`allornone.theorems.constructions`: ``b5``, ``d1``), finds
an exact instance on which the hypotheses hold, and prints every step -- its
claim, its reason (the facts or earlier steps it uses), the check run on the
instance with the values that matter and its residual, ✓ or ✗. With
``generic=True`` the steps that are identities are also verified as identities
of rational functions for small generic shapes (:mod:`allornone.theorems.engine.generic`).

>>> from rich.console import Console
>>> from allornone.theorems import get_record
>>> console = Console(file=__import__("io").StringIO(), width=120)
>>> print_proof(get_record("thm5"), 0, console)
0
>>> "✓" in console.file.getvalue()
True
"""
from __future__ import annotations

import random
import time

from allornone.errors import AllOrNoneError
from allornone.theorems.engine.logic import readable

__all__ = ["format_value", "find_instance", "print_proof", "resolve", "proof_subjects"]


def format_value(value) -> str:
    """Small, readable rendering of a step's values (matrices as fraction rows)."""
    if hasattr(value, "to_fractions"):
        rows = value.to_fractions()
        if not rows or not rows[0]:
            return f"[] ({value.shape[0]}x{value.shape[1]})"
        return "[" + "; ".join(" ".join(r) for r in rows) + "]"
    if hasattr(value, "shape") and hasattr(value, "round"):
        import numpy as np

        return np.array2string(np.asarray(value), precision=4, suppress_small=True).replace("\n", "")
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return str(value)


def find_instance(rec, seed: int, want_side: str = "holds", tries: int = 200, illustrative: int = 40):
    """A sampled instance (from ``seed``) on which the hypotheses hold and, for
    an equivalence, the side atom is ``want_side``. Among the first
    ``illustrative`` samples, one where every step applies and every model has
    ``k >= 1`` and ``d <= 3`` is preferred (a ``k = 0`` instance shows little,
    a large one too much)."""
    fallback = None
    for i in range(tries):
        inst = rec.sample(random.Random(f"{seed}/{rec.id}/proof/{i}"), i)
        if inst.float_only:
            continue
        ev = rec.evaluate(inst, "exact")
        if ev.hypotheses.value != "holds":
            continue
        if rec.sides and ev.atoms[rec.sides].truth.value != want_side:
            continue
        fallback = fallback or inst
        if i >= illustrative:
            break
        models = inst.realise("exact")
        if all(m.effective_complexity() >= 1 and m.d <= 3 for m in models) and \
                all(out.applicable for _, out in rec.check_steps(inst)):
            return inst
    if fallback is None:
        raise AllOrNoneError(f"no instance with the hypotheses holding in {tries} samples")
    return fallback


def resolve(rid: str):
    """A record (``thm5``, ...) or a construction (``b5``, ``d1``) by id."""
    from allornone.theorems import UnknownResultError, get_record, records
    from allornone.theorems.constructions import CONSTRUCTIONS

    if rid in CONSTRUCTIONS:
        return CONSTRUCTIONS[rid]
    if rid in records():
        return get_record(rid)
    raise UnknownResultError(f"unknown result {rid!r}; implemented: {', '.join(records())}; "
                         f"constructions: {', '.join(CONSTRUCTIONS)}")


def proof_subjects() -> dict:
    """Every record and construction with proof steps, by id."""
    from allornone.theorems import records
    from allornone.theorems.constructions import CONSTRUCTIONS

    return {**records(), **CONSTRUCTIONS}


def _is_construction(rec) -> bool:
    from allornone.theorems.constructions import Construction

    return isinstance(rec, Construction)


def _describe_model(console, j, m):
    s = m.structure
    console.print(f"  model {j}: m={m.m} n={m.n} d={m.d} pivot={m.pivot} k={s.k}  "
                  f"dim SF={m.dim_SF()} dim SG={m.dim_SG()}", markup=False)
    console.print(f"    basis of M (columns) = {format_value(s.basis_M)}", markup=False)
    console.print(f"    basis of N (columns) = {format_value(s.basis_N)}", markup=False)


class _GenericRunner:
    """Runs generic identities once per (identity, shape) and remembers the results."""

    def __init__(self):
        from allornone.theorems.engine import generic

        self.g = generic
        self.done: dict = {}

    def run(self, names):
        out = []
        for name in names:
            if name not in self.done:
                t0 = time.perf_counter()
                res = self.g.verify([name], self.g.FAST_SHAPES)
                self.done[name] = (res, time.perf_counter() - t0)
            out.append((name, *self.done[name]))
        return out


def print_proof(rec, seed: int, console, generic: bool = False) -> int:
    """Print the proof of ``rec`` (a record or a construction) checked on an
    exact instance from ``seed``; returns the exit code (0 iff every applicable
    step held, and with ``generic`` every generic identity too)."""
    if isinstance(rec, str):
        rec = resolve(rec)
    construction = _is_construction(rec)
    inst = rec.build(seed) if construction else find_instance(rec, seed)
    console.print(f"[bold]{rec.number}[/]: {rec.title}")
    console.print(rec.summary, markup=False)
    if not construction:
        console.print(f"statement: {readable(rec.statement)}", markup=False)
        for h in rec.hypotheses:
            console.print(f"hypothesis {h.name}: {h.description}", markup=False)
    console.print(f"\ninstance ({inst.kind}, seed {seed}, exact):", markup=False)
    for j, m in enumerate(inst.models):
        _describe_model(console, j, m)
    runner = _GenericRunner() if generic else None
    ok = True
    for n, (step, out) in enumerate(rec.check_steps(inst), 1):
        held = (not out.applicable) or out.decision.holds
        ok &= held
        mark = "–" if not out.applicable else "[green]✓[/]" if out.decision.holds else "[red]✗[/]"
        console.print(f"\n{mark} [bold]{n}. {step.label}[/]: ", end="")
        console.print(step.claim, markup=False)
        uses = f" (uses {', '.join(step.uses)})" if step.uses else ""
        console.print(f"   reason: {step.reason}{uses}", markup=False)
        if out.applicable:
            console.print(f"   check: {out.decision}", markup=False)
        for key, val in out.values.items():
            console.print(f"   {key} = {format_value(val)}", markup=False)
        if runner is not None:
            ok &= _print_generic(console, runner, rec.id, step)
    if runner is not None:
        shapes = "; ".join(str(s) for s in runner.g.FAST_SHAPES)
        console.print(f"\ngeneric shapes (any numbers of contexts and tokens): {shapes}", markup=False)
        console.print("all 29 shapes with d <= 3: pytest -m slow tests/test_generic.py", markup=False)
    console.print("\n" + ("[green]every step checked[/]" if ok else "[red]a step failed[/]"))
    return 0 if ok else 1


def _print_generic(console, runner, rid, step) -> bool:
    own, inherited = runner.g.identities_for_step(rid, step)
    if not own and not inherited:
        console.print("   generic: not an identity of matrix entries (a rank, dimension or existence claim); "
                      "checked on the exact instance only", markup=False)
        return True
    ok = True
    for label, names in (("generic", own), ("generic (facts used)", inherited)):
        for name, results, secs in runner.run(names):
            held = all(r.holds for r in results)
            ok &= held
            mark = "[green]✓[/]" if held else "[red]✗[/]"
            console.print(f"   {label}: {mark} {name}: ", end="")
            console.print(f"{runner.g.IDENTITIES[name].text} -- {len(results)} shapes, {secs:.2f} s", markup=False)
    return ok
