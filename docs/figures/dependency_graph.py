"""The dependency graph of definitions, facts F1--F6, results and constructions,
with each node's status computed by running its checks.

Nodes and edges come from the code: results are ``allornone.theorems.records()``
(plus the constructions), statement dependencies are read off the predicates in
each statement, proof dependencies off ``ProofStep.uses``. A node's status is
never written by hand:

* ``generic`` -- its identities hold as rational-function identities for the
  generic shapes (:mod:`allornone.theorems.generic`) *and* its checks held on
  every exact instance;
* ``exact`` -- its checks held on every one of ``N`` exact instances;
* ``float`` -- only float instances were available, and they held;
* ``failing`` -- some check failed.

``python docs/figures/dependency_graph.py [OUTDIR]`` writes
``dependency-graph.svg`` (Graphviz), ``dependency-graph.dot`` and
``dependency-status.md``.
"""
from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

TRIALS = int(os.environ.get("ALLORNONE_DOCS_TRIALS", "6"))

#: Definitions, their own dependencies and the generic identities that check them.
DEFINITIONS = {
    "L": ("log-odds L = F G_0^T", (), ()),
    "SF, SG": ("SF, SG and P_F, P_G", (), ("projectors",)),
    "M, N, k": ("M = Im(P_F P_G), N = Im(P_G P_F), k", ("SF, SG",), ("projectors", "F1")),
    "~EL": ("extended linear equivalence EL1-EL3", ("M, N, k",), ("EL3",)),
    "diversity": ("SF = SG = R^d", ("SF, SG",), ("diverse",)),
}
#: Which definitions a statement's predicate refers to; unknown predicates
#: become definition nodes of their own.
PREDICATE_DEFS = {
    "SameDistribution": ("L",),
    "ExtendedLinearEquivalent": ("~EL",),
    "Diverse": ("diversity",),
    "SameDimension": (),
    "LinearlyIdentified": ("L",),
}
FACT_DEFS = {"F1": ("M, N, k", "L"), "F2": ("M, N, k",), "F3": ("M, N, k",), "F4": ("M, N, k", "L"),
             "F5": ("M, N, k",), "F6": ("M, N, k",)}
STATUS_COLORS = {"generic": "#2e7d32", "exact": "#66bb6a", "float": "#ffb300", "failing": "#e53935"}
STATUS_TEXT = {"generic": "verified generically and exact", "exact": "exact on every instance",
               "float": "float only", "failing": "failing"}


@dataclass
class Node:
    id: str
    kind: str
    label: str
    statement_deps: list = field(default_factory=list)
    proof_deps: list = field(default_factory=list)
    status: str = "exact"
    evidence: str = ""


def _exact_models(n):
    from allornone.symbolic import generators as gen

    rng = random.Random("docs/graph")
    out = []
    for _ in range(n):
        d, m, nn = rng.randint(1, 4), rng.randint(1, 5), rng.randint(2, 6)
        out.append(gen.random_model(rng, m, nn, d, rng.randint(0, min(m, d)), rng.randint(0, min(nn - 1, d))))
    return out


def _generic_ok(names) -> tuple[bool, str]:
    from allornone.theorems import generic

    if not names:
        return True, ""
    results = generic.verify(names, generic.FAST_SHAPES)
    shapes = len({r.shape for r in results})
    return all(r.holds for r in results), f"{', '.join(names)} on {shapes} generic shape{'s' * (shapes != 1)}"


def _status(exact_ok, n_exact, generic_names, float_only=False):
    g_ok, g_text = _generic_ok(generic_names)
    if not exact_ok or not g_ok:
        return "failing", g_text
    if float_only:
        return "float", g_text
    if generic_names:
        return "generic", f"{g_text}; exact on {n_exact} instances"
    return "exact", f"exact on {n_exact} instances"


def build_graph(trials: int = TRIALS) -> dict[str, Node]:
    from allornone.theorems import generic, records
    from allornone.theorems.constructions import CONSTRUCTIONS
    from allornone.theorems.facts import FACTS
    from allornone.theorems.logic import Predicate
    from allornone.theorems.runner import check_instance

    nodes: dict[str, Node] = {}
    models = _exact_models(max(trials, 4))
    for did, (label, deps, idents) in DEFINITIONS.items():
        node = Node(did, "definition", label, list(deps))
        ok = all(m.structure.P_F @ m.structure.P_F == m.structure.P_F for m in models) if did != "L" else \
            all(m.log_odds()[:, [m.pivot]].is_zero for m in models)
        node.status, node.evidence = _status(ok, len(models), idents)
        nodes[did] = node
    for fid, fact in FACTS.items():
        node = Node(fid, "fact", fid + ": " + (fact.__doc__ or "").split(":")[1].split(".")[0].strip()[:60],
                    list(FACT_DEFS.get(fid, ())))
        ok = all(fact(m).holds for m in models)
        node.status, node.evidence = _status(ok, len(models), generic.FACT_IDENTITIES.get(fid, ()))
        nodes[fid] = node
    recs = records()
    known = set(nodes) | set(recs) | set(CONSTRUCTIONS)
    users: dict[str, list] = {}
    for rid, rec in recs.items():
        deps = []
        for atom in rec.statement.atoms(Predicate):
            name = type(atom).__name__
            for dep in PREDICATE_DEFS.get(name, (name,)):
                if dep not in nodes:
                    nodes[dep] = Node(dep, "definition", dep)
                    known.add(dep)
                users.setdefault(dep, []).append(rid)
                deps.append(dep)
        proof = sorted({u for s in rec.steps for u in s.uses if u in known and u != rid})
        node = Node(rid, "result", f"{rec.number}: {rec.title}", sorted(set(deps)), proof)
        outs = [check_instance(rid, 0, i) for i in range(trials)]
        exact = [o for o in outs if not o["float_only"]]
        ok = all((o["statement"] == "holds" and not o["contradictions"] and not o["steps_failed"]
                  and not o["facts_failed"]) for o in outs)
        idents = sorted({n for s in rec.steps for n in generic.STEP_IDENTITIES.get((rid, s.label), ())})
        node.status, node.evidence = _status(ok, len(exact), idents, float_only=not exact)
        nodes[rid] = node
    for dep, rids in users.items():
        if nodes[dep].evidence:
            continue
        # A predicate of a statement is checked wherever that statement is decided.
        failing = [r for r in rids if nodes[r].status == "failing"]
        kinds = {nodes[r].status for r in rids}
        nodes[dep].status = "failing" if failing else "float" if kinds == {"float"} else "exact"
        nodes[dep].evidence = f"decided on every instance of {', '.join(rids)}"
    for cid, c in CONSTRUCTIONS.items():
        proof = sorted({u for s in c.steps for u in s.uses if u in known and u != cid})
        node = Node(cid, "construction", f"{c.number}: {c.title}", [], proof)
        ok = all(o.decision.holds for seed in range(trials) for _, o in c.check_steps(c.build(seed)))
        idents = sorted({n for s in c.steps for n in generic.STEP_IDENTITIES.get((cid, s.label), ())})
        node.status, node.evidence = _status(ok, trials, idents)
        nodes[cid] = node
    return nodes


def to_dot(nodes: dict[str, Node]):
    import graphviz

    dot = graphviz.Digraph("dependencies", graph_attr={"rankdir": "BT", "fontname": "Helvetica", "fontsize": "10"},
                           node_attr={"fontname": "Helvetica", "fontsize": "10", "style": "filled"})
    shapes = {"definition": "note", "fact": "box", "result": "doubleoctagon", "construction": "component"}
    for n in nodes.values():
        short = n.id if n.kind in ("definition", "fact") else f"{n.label.split(':')[0]}\n({n.id})"
        dot.node(n.id, f"{short}\n[{n.status}]", shape=shapes[n.kind], fillcolor=STATUS_COLORS[n.status],
                 fontcolor="white" if n.status in ("generic", "failing") else "black",
                 tooltip=f"{n.label} -- {n.evidence}")
    for n in nodes.values():
        for dep in n.statement_deps:
            dot.edge(n.id, dep, style="solid")
        for dep in n.proof_deps:
            dot.edge(n.id, dep, style="dashed", color="0.4 0 0.45")
    return dot


def status_table(nodes: dict[str, Node]) -> str:
    rows = ["| node | kind | status | evidence | statement uses | proof uses |", "|---|---|---|---|---|---|"]
    for n in nodes.values():
        rows.append(f"| `{n.id}` | {n.kind} | **{STATUS_TEXT[n.status]}** | {n.evidence} | "
                    f"{', '.join(n.statement_deps) or '-'} | {', '.join(n.proof_deps) or '-'} |")
    return "\n".join(rows) + "\n"


def write_graph(outdir: Path) -> list[Path]:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    nodes = build_graph()
    dot = to_dot(nodes)
    (outdir / "dependency-graph.dot").write_text(dot.source)
    svg = outdir / "dependency-graph.svg"
    svg.write_bytes(dot.pipe(format="svg"))
    table = outdir / "dependency-status.md"
    table.write_text(status_table(nodes))
    return [svg, outdir / "dependency-graph.dot", table]


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "generated"
    for p in write_graph(out):
        print(p)
