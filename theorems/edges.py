"""Edge cases of hypotheses: each dropped (a counterexample) and each boundary case."""
from __future__ import annotations

import random

from allornone.theorems.proofs import format_value

__all__ = ["print_edges"]


def print_edges(rec, seed: int, console, hypothesis: str | None = None) -> tuple[int, dict]:
    """Evaluate and print every edge of ``rec`` (or those of one hypothesis);
    returns (exit code, JSON payload)."""
    payload = []
    ok = True
    for edge in rec.edges:
        if hypothesis is not None and edge.hypothesis != hypothesis:
            continue
        inst = edge.build(random.Random(f"{seed}/{rec.id}/edge/{edge.name}"))
        ev = rec.evaluate(inst, "exact")
        fl = rec.evaluate(inst, "float")
        got = {k: ev.atoms[k].holds for k in edge.expect}
        match = got == dict(edge.expect)
        ok &= match
        label = "dropped" if edge.kind == "drop" else "boundary"
        console.print(f"\n[bold]{edge.name}[/] ({label}{': ' + edge.hypothesis if edge.hypothesis else ''}) "
                      f"{'[green]as expected[/]' if match else '[red]NOT as expected[/]'}\n  {edge.description}")
        for k, v in got.items():
            console.print(f"  {k}: {'holds' if v else 'fails'} (float: {fl.atoms[k].truth.value})")
        for j, m in enumerate(inst.models):
            console.print(f"  model {j}: F = {format_value(m.F)}  G = {format_value(m.G)}  pivot {m.pivot}",
                          markup=False)
        payload.append({"name": edge.name, "kind": edge.kind, "hypothesis": edge.hypothesis, "expected": edge.expect,
                        "exact": {k: d.truth.value for k, d in ev.atoms.items()},
                        "float": {k: d.truth.value for k, d in fl.atoms.items()},
                        "as_expected": match, "instance": inst.to_json()})
    return (0 if ok else 1), {"id": rec.id, "edges": payload}
