"""Annotated proofs: each step of a record stated, justified and checked live."""
from __future__ import annotations

import random

from allornone.errors import AllOrNoneError

__all__ = ["format_value", "find_instance", "print_proof"]


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
    return str(value)


def find_instance(rec, seed: int, want_side: str = "holds", tries: int = 200):
    """The first sampled instance (from ``seed``) on which the hypotheses hold
    and, for an equivalence, the side atom is ``want_side``."""
    for i in range(tries):
        inst = rec.sample(random.Random(f"{seed}/{rec.id}/proof/{i}"), i)
        ev = rec.evaluate(inst, "exact")
        if ev.hypotheses.value != "holds":
            continue
        if rec.sides and ev.atoms[rec.sides].truth.value != want_side:
            continue
        return inst
    raise AllOrNoneError(f"no instance with the hypotheses holding in {tries} samples")


def print_proof(rec, seed: int, console, generic: bool = False) -> int:
    """Print the proof of ``rec`` checked on an instance from ``seed``; returns the exit code."""
    if generic:
        raise AllOrNoneError("generic (symbolic) verification of proof steps is not available in this version")
    inst = find_instance(rec, seed)
    console.print(f"[bold]{rec.number}[/]: {rec.title}\n{rec.summary}\n")
    console.print(f"instance ({inst.kind}): " + ", ".join(
        f"model {j}: m={m.m} n={m.n} d={m.d} k={m.effective_complexity()}" for j, m in enumerate(inst.models)))
    ok = True
    for n, (step, out) in enumerate(rec.check_steps(inst), 1):
        mark = "-" if not out.applicable else "[green]✓[/]" if out.decision.holds else "[red]✗[/]"
        ok &= (not out.applicable) or out.decision.holds
        console.print(f"\n{mark} [bold]{n}. {step.label}[/]: {step.claim}\n   because {step.reason}")
        for key, val in out.values.items():
            console.print(f"   {key} = {format_value(val)}", markup=False)
    return 0 if ok else 1
