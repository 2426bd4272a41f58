"""The dependency graph of definitions, facts F1--F6, results and constructions,
with each node's status computed by running its checks, drawn as an SVG by
hand (no Graphviz): a layered layout, nodes that link to their pages, a legend.

Nodes and edges come from the code: results are ``allornone.theorems.records()``
(plus the constructions), statement dependencies are read off the predicates in
each statement, proof dependencies off ``ProofStep.uses``. A node's status is
never written by hand:

* ``generic`` -- its identities hold as rational-function identities for the
  generic shapes (``allornone.theorems.engine.generic``) *and* its checks held on
  every exact instance;
* ``exact`` -- its checks held on every one of ``TRIALS`` exact instances;
* ``float`` -- only float instances were available, and they held;
* ``failing`` -- some check failed.

``python docs/figures/dependency_graph.py [OUTDIR]`` writes
``dependency-graph.svg`` and ``dependency-status.md``. Links in the SVG start
with ``@/`` (the site root); the docs hook makes them relative to the page.
"""
from __future__ import annotations

import html
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: Exact instances per result (those of ``allornone check --seed 0``), builds per
#: construction, and random exact models for the definitions and facts.
TRIALS = int(os.environ.get("ALLORNONE_DOCS_TRIALS", "100"))

#: Definitions: label, their own dependencies, the generic identities that check
#: them, and where the site defines them (page under docs/ and anchor).
DEFINITIONS = {
    "L": ("log-odds L = F G₀ᵀ", (), (), "theory/index.md#log-odds"),
    "SF, SG": ("SF, SG and P_F, P_G", (), ("projectors",), "theory/index.md#sf-sg"),
    "M, N, k": ("M = Im(P_F P_G), N = Im(P_G P_F), k = dim M", ("SF, SG",), ("projectors", "F1"), "theory/index.md#m-n-k"),
    "~EL": ("extended linear equivalence EL1–EL3", ("M, N, k",), ("EL3",), "theory/index.md#extended-linear-equivalence"),
    "diversity": ("diversity: SF = SG = R^d", ("SF, SG",), ("diverse",), "theory/index.md#diversity"),
    "parallelism": ("parallelism in N (or M) and raw", ("M, N, k",), (), "theory/index.md#parallelism"),
    "relational linearity": ("relational linearity on Γ, reading M", ("M, N, k",), (),
                             "theory/index.md#relational-linearity"),
}
#: Definitions with no check of their own: they are decided by the statements that use them.
DECIDED_BY_USERS = ("parallelism", "relational linearity")
#: Which definition a statement's predicate refers to; unknown predicates
#: become definition nodes of their own.
PREDICATE_DEFS = {
    "SameDistribution": ("L",),
    "ExtendedLinearEquivalent": ("~EL",),
    "Diverse": ("diversity",),
    "SameDimension": (),
    "LinearlyIdentified": ("L",),
    "ParallelIn": ("parallelism",),
    "ProportionalLogOdds": ("parallelism", "L"),
    "ProportionalLogOddsRows": ("parallelism", "L"),
    "RelationallyLinear": ("relational linearity",),
    "RelationallyLinearReadingM": ("relational linearity",),
    "GammaInN": ("relational linearity",),
    "EnoughPairs": ("relational linearity",),
}
FACT_DEFS = {"F1": ("M, N, k", "L"), "F2": ("M, N, k",), "F3": ("M, N, k",), "F4": ("M, N, k", "L"),
             "F5": ("M, N, k",), "F6": ("M, N, k",)}
STATUS_COLORS = {"generic": "#1b5e20", "exact": "#81c784", "float": "#ffb300", "failing": "#e53935"}
STATUS_TEXT = {"generic": "verified generically and exact", "exact": "exact on every instance",
               "float": "float only", "failing": "failing"}
KIND_TEXT = {"definition": "definition", "fact": "fact", "result": "result", "construction": "construction"}


@dataclass
class Node:
    id: str
    kind: str
    label: str
    statement_deps: list = field(default_factory=list)
    proof_deps: list = field(default_factory=list)
    status: str = "exact"
    evidence: str = ""
    page: str = ""
    """Where the site states it: a path under docs/, with an anchor."""

    @property
    def url(self) -> str:
        """The page's address relative to the site root (directory URLs)."""
        if not self.page:
            return ""
        path, _, anchor = self.page.partition("#")
        path = path[:-len("index.md")] if path.endswith("index.md") else path[:-3] + "/"
        return path + (f"#{anchor}" if anchor else "")


def _exact_models(n):
    from allornone.symbolic import generators as gen

    rng = random.Random("docs/graph")
    out = []
    for _ in range(n):
        d, m, nn = rng.randint(1, 4), rng.randint(1, 5), rng.randint(2, 6)
        out.append(gen.random_model(rng, m, nn, d, rng.randint(0, min(m, d)), rng.randint(0, min(nn - 1, d))))
    return out


def _generic_ok(names) -> tuple[bool, str]:
    from allornone.theorems.engine import generic

    if not names:
        return True, ""
    results = generic.verify(names, generic.FAST_SHAPES)
    shapes = len({r.shape for r in results})
    return all(r.holds for r in results), f"{', '.join(names)} on {shapes} generic shape{'s' * (shapes != 1)}"


def _status(exact_ok, n_exact, generic_names, float_only=False, what="instances"):
    g_ok, g_text = _generic_ok(generic_names)
    if not exact_ok or not g_ok:
        return "failing", g_text or f"a check failed on one of {n_exact} exact {what}"
    if float_only:
        return "float", g_text
    if generic_names:
        return "generic", f"{g_text}; exact on {n_exact} {what}"
    return "exact", f"exact on {n_exact} {what}"


def _page(rid: str) -> str:
    root = Path(__file__).resolve().parents[1]
    return f"results/{rid}.md" if (root / "results" / f"{rid}.md").is_file() else ""


def build_graph(trials: int = TRIALS) -> dict[str, Node]:
    from allornone.theorems import records
    from allornone.theorems.engine import generic
    from allornone.theorems.constructions import CONSTRUCTIONS
    from allornone.theorems.facts import FACTS
    from allornone.theorems.engine.logic import Predicate
    from allornone.theorems.engine.runner import check_instance

    nodes: dict[str, Node] = {}
    models = _exact_models(trials)
    for did, (label, deps, idents, page) in DEFINITIONS.items():
        node = Node(did, "definition", label, list(deps), page=page)
        nodes[did] = node
        if did in DECIDED_BY_USERS:
            continue  # its evidence is the records whose statements decide it (below)
        ok = all(m.structure.P_F @ m.structure.P_F == m.structure.P_F for m in models) if did != "L" else \
            all(m.log_odds()[:, [m.pivot]].is_zero for m in models)
        node.status, node.evidence = _status(ok, len(models), idents, what="random models")
        nodes[did] = node
    for fid, fact in FACTS.items():
        summary = (fact.__doc__ or "").split(":", 1)[-1].split(".")[0].replace("``", "").strip()
        node = Node(fid, "fact", f"{fid}: {summary}", list(FACT_DEFS.get(fid, ())),
                    page=f"theory/facts.md#{fid.lower()}")
        ok = all(fact(m).holds for m in models)
        node.status, node.evidence = _status(ok, len(models), generic.FACT_IDENTITIES.get(fid, ()),
                                             what="random models")
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
                    nodes[dep] = Node(dep, "definition", dep, page="theory/index.md")
                    known.add(dep)
                users.setdefault(dep, []).append(rid)
                deps.append(dep)
        proof = sorted({u for s in rec.steps for u in s.uses if u in known and u != rid})
        node = Node(rid, "result", f"{rec.number}: {rec.title}", sorted(set(deps)), proof, page=_page(rid))
        outs = [check_instance(rid, 0, i) for i in range(trials)]
        exact = [o for o in outs if not o["float_only"]]
        ok = all((o["statement"] == "holds" and not o["contradictions"] and not o["steps_failed"]
                  and not o["facts_failed"]) for o in exact)
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
        nodes[dep].evidence = f"decided on every instance of {', '.join(sorted(set(rids)))}"
    for cid, c in CONSTRUCTIONS.items():
        proof = sorted({u for s in c.steps for u in s.uses if u in known and u != cid})
        node = Node(cid, "construction", f"{c.number}: {c.title}", [], proof, page=f"constructions.md#{cid}")
        ok = all(o.decision.holds for seed in range(trials) for _, o in c.check_steps(c.build(seed)))
        idents = sorted({n for s in c.steps for n in generic.STEP_IDENTITIES.get((cid, s.label), ())})
        node.status, node.evidence = _status(ok, trials, idents, what="builds")
        nodes[cid] = node
    return nodes


# -- drawing ----------------------------------------------------------------------------------------------------------

NODE_H = 44
ROW_GAP = 70
COL_GAP = 22
MARGIN = 20
CHAR_W = 7.4


def _short(n: Node) -> tuple[str, str]:
    """Two lines of text for a node: its name and a short description."""
    if n.kind == "fact":
        return n.id, ""
    if n.kind == "definition":
        return n.id, ""
    number = n.label.split(":")[0]
    return number, f"({n.id})"


def layers(nodes: dict[str, Node]) -> list[list[str]]:
    """Rows of the drawing: a node sits one row below the lowest row of what it
    uses; within a row, nodes are ordered by the mean position of their uses
    (fewer crossings)."""
    depth: dict[str, int] = {}

    def d(nid, seen=()):
        if nid not in depth:
            deps = [x for x in nodes[nid].statement_deps + nodes[nid].proof_deps if x in nodes and x not in seen]
            depth[nid] = 1 + max((d(x, seen + (nid,)) for x in deps), default=-1)
        return depth[nid]

    for nid in nodes:
        d(nid)
    rows: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for nid in nodes:
        rows[depth[nid]].append(nid)
    pos: dict[str, float] = {}
    for r, row in enumerate(rows):
        if r:
            def key(nid):
                deps = [pos[x] for x in nodes[nid].statement_deps + nodes[nid].proof_deps if x in pos]
                return sum(deps) / len(deps) if deps else 0.5
            row.sort(key=key)
        for i, nid in enumerate(row):
            pos[nid] = (i + 0.5) / len(row)
    return rows


def _width(n: Node) -> float:
    a, b = _short(n)
    return max(64.0, CHAR_W * max(len(a), len(b)) + 24)


def to_svg(nodes: dict[str, Node]) -> str:
    """The graph as a standalone SVG: ``<a href="@/...">`` around each node,
    ``<title>`` tooltips with label and evidence, and a legend."""
    rows = layers(nodes)
    widths = {nid: _width(n) for nid, n in nodes.items()}
    row_w = [sum(widths[x] for x in row) + COL_GAP * (len(row) - 1) for row in rows]
    legend_h = 64
    W = max(max(row_w), 900) + 2 * MARGIN
    H = legend_h + len(rows) * NODE_H + (len(rows) - 1) * ROW_GAP + 2 * MARGIN
    box: dict[str, tuple[float, float, float]] = {}
    for r, row in enumerate(rows):
        x = MARGIN + (W - 2 * MARGIN - row_w[r]) / 2
        y = MARGIN + legend_h + r * (NODE_H + ROW_GAP)
        for nid in row:
            box[nid] = (x, y, widths[nid])
            x += widths[nid] + COL_GAP
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W:.0f} {H:.0f}" width="100%" '
           f'role="img" aria-label="Dependency graph of definitions, facts, results and constructions" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="13">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    out += _legend(W)
    for n in nodes.values():
        for style, deps in (("statement", n.statement_deps), ("proof", n.proof_deps)):
            for dep in deps:
                if dep not in box:
                    continue
                x1, y1, w1 = box[dep]
                x2, y2, w2 = box[n.id]
                sx, sy, ex, ey = x1 + w1 / 2, y1 + NODE_H, x2 + w2 / 2, y2
                if y2 <= y1:  # same row: should not happen in a layered layout, draw straight
                    sy, ey = y1 + NODE_H / 2, y2 + NODE_H / 2
                my = (sy + ey) / 2
                dash = ' stroke-dasharray="5,4"' if style == "proof" else ""
                out.append(f'<path class="edge edge-{style}" d="M{sx:.1f},{sy:.1f} C{sx:.1f},{my:.1f} {ex:.1f},'
                           f'{my:.1f} {ex:.1f},{ey:.1f}" fill="none" stroke="#666" stroke-width="1.2"{dash} '
                           f'marker-end="url(#arrow)"><title>{html.escape(n.id)} {style} uses '
                           f'{html.escape(dep)}</title></path>')
    for nid, n in nodes.items():
        x, y, w = box[nid]
        a, b = _short(n)
        fill = STATUS_COLORS[n.status]
        ink = "#ffffff" if n.status in ("generic", "failing") else "#111111"
        shape = _shape(n.kind, x, y, w, fill)
        text = [f'<text x="{x + w / 2:.1f}" y="{y + (18 if b else 27):.1f}" text-anchor="middle" fill="{ink}" '
                f'font-weight="bold">{html.escape(a)}</text>']
        if b:
            text.append(f'<text x="{x + w / 2:.1f}" y="{y + 35:.1f}" text-anchor="middle" fill="{ink}" '
                        f'font-size="11">{html.escape(b)}</text>')
        tip = html.escape(f"{n.label} [{STATUS_TEXT[n.status]}] {n.evidence}")
        inner = f'<title>{tip}</title>{shape}{"".join(text)}'
        if n.url:
            out.append(f'<a class="node node-{n.kind}" href="@/{n.url}" data-id="{html.escape(nid)}">{inner}</a>')
        else:
            out.append(f'<g class="node node-{n.kind}" data-id="{html.escape(nid)}">{inner}</g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _shape(kind: str, x: float, y: float, w: float, fill: str) -> str:
    stroke = 'stroke="#333" stroke-width="1.2"'
    if kind == "result":
        return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{NODE_H}" rx="20" fill="{fill}" {stroke}/>'
    if kind == "construction":
        c = 12
        pts = (f"{x + c:.1f},{y:.1f} {x + w - c:.1f},{y:.1f} {x + w:.1f},{y + NODE_H / 2:.1f} "
               f"{x + w - c:.1f},{y + NODE_H:.1f} {x + c:.1f},{y + NODE_H:.1f} {x:.1f},{y + NODE_H / 2:.1f}")
        return f'<polygon points="{pts}" fill="{fill}" {stroke}/>'
    if kind == "fact":
        return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{NODE_H}" rx="6" fill="{fill}" {stroke}/>'
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{NODE_H}" rx="0" fill="{fill}" {stroke} '
            f'stroke-dasharray="2,2"/>')


def _legend(W: float) -> list[str]:
    out = ['<g class="legend" font-size="12">']
    x, y = MARGIN, MARGIN
    for status, color in STATUS_COLORS.items():
        out.append(f'<rect x="{x}" y="{y}" width="16" height="16" fill="{color}" stroke="#333"/>'
                   f'<text x="{x + 22}" y="{y + 13}">{html.escape(STATUS_TEXT[status])}</text>')
        x += 32 + CHAR_W * len(STATUS_TEXT[status])
    x, y = MARGIN, MARGIN + 28
    for kind in ("definition", "fact", "result", "construction"):
        out.append(_shape(kind, x, y + 4 - (NODE_H - 16) / 2 * 0, 40, "#ffffff").replace(f'height="{NODE_H}"',
                                                                                          'height="18"')
                   .replace(f"{y + 4 + NODE_H:.1f}", f"{y + 22:.1f}").replace(f"{y + 4 + NODE_H / 2:.1f}",
                                                                              f"{y + 13:.1f}"))
        out.append(f'<text x="{x + 48}" y="{y + 18}">{KIND_TEXT[kind]}</text>')
        x += 70 + CHAR_W * len(kind)
    out.append(f'<line x1="{x}" y1="{y + 13}" x2="{x + 40}" y2="{y + 13}" stroke="#666" marker-end="url(#arrow)"/>'
               f'<text x="{x + 48}" y="{y + 18}">statement uses</text>')
    x += 48 + CHAR_W * 16
    out.append(f'<line x1="{x}" y1="{y + 13}" x2="{x + 40}" y2="{y + 13}" stroke="#666" stroke-dasharray="5,4" '
               f'marker-end="url(#arrow)"/><text x="{x + 48}" y="{y + 18}">only the proof uses</text>')
    out.append("</g>")
    return out


def _code(name: str) -> str:
    """A Markdown code span, safe in a table cell."""
    return "<code>" + html.escape(name).replace("|", "&#124;") + "</code>"


def status_table(nodes: dict[str, Node]) -> str:
    rows = ["| node | kind | status | evidence | statement uses | proof uses |", "|---|---|---|---|---|---|"]
    for n in nodes.values():
        # the table goes on a page at the top of docs/: page paths are relative links
        # node ids are names of the code (~EL, M, N, k): set as code
        name = f"[{_code(n.id)}]({n.page})" if n.page else _code(n.id)
        rows.append(f"| {name} | {n.kind} | **{STATUS_TEXT[n.status]}** | {html.escape(n.evidence)} | "
                    f"{', '.join(_code(d) for d in n.statement_deps) or '–'} | "
                    f"{', '.join(_code(d) for d in n.proof_deps) or '–'} |")
    return "\n".join(rows) + "\n"


def write_graph(outdir: Path, trials: int = TRIALS) -> list[Path]:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    nodes = build_graph(trials)
    svg = outdir / "dependency-graph.svg"
    svg.write_text(to_svg(nodes))
    table = outdir / "dependency-status.md"
    table.write_text(status_table(nodes))
    return [svg, table]


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "generated"
    for p in write_graph(out):
        print(p)
