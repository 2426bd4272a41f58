"""What may import what (docs/architecture.md, "Layers").

The package is read from the repository folders that pyproject.toml maps to
import names, so the rule holds for the tree as written, whatever is installed.

- ``allornone`` (``core/``): imports no other part of the package;
- ``allornone.symbolic``: ``core``; ``numeric`` only inside a function (the
  explicit float realisation of an exact model);
- ``allornone.numeric``: ``core``; ``symbolic`` only in ``strategies.py`` (the
  Hypothesis strategies build exact instances); never ``theorems``;
- the results (``allornone.theorems`` less its engine): ``core``, ``symbolic``,
  ``numeric``, other results, and of the engine only the statement vocabulary
  (``engine.logic``, ``engine.record``);
- ``allornone.theorems.engine``: anything.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"core": "allornone", "symbolic": "allornone.symbolic", "numeric": "allornone.numeric",
           "theorems": "allornone.theorems"}
VOCABULARY = {"allornone.theorems.engine.logic", "allornone.theorems.engine.record"}


def layer_of(module: str) -> str | None:
    """The layer of an import name of the package (None outside it)."""
    parts = module.split(".")
    if parts[0] != "allornone":
        return None
    if len(parts) == 1 or parts[1] not in ("symbolic", "numeric", "theorems"):
        return "core"
    if parts[1] == "theorems":
        return "engine" if len(parts) > 2 and parts[2] == "engine" else "results"
    return parts[1]


def imports(source: str):
    """``(imported module, line, inside a function)`` for every import of a source."""
    tree = ast.parse(source)
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nested |= {id(n) for n in ast.walk(node) if n is not node}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            yield name, node.lineno, id(node) in nested


def violations(path: str, own_layer: str, source: str) -> list[str]:
    """Every import of ``source`` (a file of layer ``own_layer``) that the rules forbid."""
    out = []
    for name, line, lazy in imports(source):
        other = layer_of(name)
        if other is None or other == own_layer:
            continue
        if own_layer == "core":
            ok = False
        elif own_layer == "symbolic":
            ok = other == "core" or (other == "numeric" and lazy)
        elif own_layer == "numeric":
            ok = other == "core" or (other == "symbolic" and path.endswith("strategies.py"))
        elif own_layer == "results":
            ok = other in ("core", "symbolic", "numeric") or (other == "engine" and (
                name in VOCABULARY or any(name.startswith(v + ".") for v in VOCABULARY)))
        else:
            ok = True
        if not ok:
            out.append(f"{path}:{line}: {own_layer} imports {name} ({other})")
    return out


def _layer_of_file(folder: str, rel: Path) -> str:
    if folder == "theorems":
        return "engine" if rel.parts[0] == "engine" else "results"
    return layer_of(FOLDERS[folder])


def test_the_tree_keeps_its_layers():
    found = []
    count = 0
    for folder in FOLDERS:
        for f in sorted((ROOT / folder).rglob("*.py")):
            rel = f.relative_to(ROOT / folder)
            found += violations(str(f.relative_to(ROOT)), _layer_of_file(folder, rel), f.read_text())
            count += 1
    assert count > 40, "the package's folders were not found"
    assert not found, "\n".join(found)


def test_the_layer_rule_catches_planted_imports():
    """Each forbidden direction is flagged; each allowed one is not."""
    bad = {
        ("numeric/x.py", "numeric"): "from allornone.theorems import thm5\n",
        ("numeric/y.py", "numeric"): "def f():\n    from allornone.theorems.engine import runner\n",
        ("numeric/z.py", "numeric"): "import allornone.symbolic.linalg\n",
        ("core/x.py", "core"): "from allornone.numeric import FloatModel\n",
        ("symbolic/x.py", "symbolic"): "from allornone.numeric.linalg import UNIT_ROUNDOFF\n",
        ("theorems/thm5/x.py", "results"): "from allornone.theorems.engine.runner import run\n",
        ("theorems/thm5/y.py", "results"): "from allornone.theorems.engine import selftest\n",
    }
    for (path, lay), src in bad.items():
        assert violations(path, lay, src), (path, src)
    good = {
        ("numeric/strategies.py", "numeric"): "from allornone.symbolic import ExactModel\n",
        ("symbolic/x.py", "symbolic"): "def f():\n    from allornone.numeric.model import FloatModel\n",
        ("theorems/thm5/x.py", "results"): "from allornone.theorems.engine.record import Edge\n"
                                            "from allornone.theorems.engine.logic import Predicate\n"
                                            "from allornone.numeric import linalg\n",
        ("theorems/engine/x.py", "engine"): "from allornone.theorems import thm5\nimport allornone.numeric\n",
    }
    for (path, lay), src in good.items():
        assert not violations(path, lay, src), (path, src)


def test_every_mutant_applies_to_the_tree():
    """Each planted bug of tools/mutants.py names text that occurs exactly once in
    its file: a mutant whose target was rewritten would silently plant nothing."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import mutants

    missing = [m.name for m in mutants.MUTANTS if (ROOT / m.path).read_text().count(m.old) != 1]
    assert not missing, missing
