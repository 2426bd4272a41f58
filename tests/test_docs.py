"""The documentation: one source of truth with the records, and a strict build.

The build test needs the docs extras (``requirements-docs.txt``) and MathJax
(``docs/scripts/fetch-mathjax.sh``); it is skipped, with the reason, when one is
missing. The hook's generators are tested without building the site.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allornone.theorems.proofs import proof_subjects

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STEP = re.compile(r"^### Step (\d+) \(`(.+?)`\)", re.M)
MARKER = re.compile(r"<!--\s*allornone:steps\s+(\S+)\s*-->")
#: Pages whose prose proofs this test requires.
PROSE = {"thm5": "results/thm5.md", "cor6": "results/cor6.md", "b5": "constructions.md", "d1": "constructions.md"}


def documented_steps() -> dict[str, list[str]]:
    """Step labels written as headings in the docs, by record id: the headings
    before a ``steps`` marker belong to that marker's id; on
    ``results/<id>.md`` headings after the last marker belong to ``<id>``."""
    out: dict[str, list[str]] = {}
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        pos = 0
        for m in MARKER.finditer(text):
            labels = [(int(n), lab) for n, lab in STEP.findall(text[pos:m.start()])]
            if labels:
                out.setdefault(m.group(1), []).extend(labels)
            pos = m.end()
        rest = STEP.findall(text[pos:])
        if rest and page.parent.name == "results":
            out.setdefault(page.stem, []).extend((int(n), lab) for n, lab in rest)
    for rid, labels in out.items():
        assert [n for n, _ in labels] == list(range(1, len(labels) + 1)), f"{rid}: steps misnumbered"
    return {rid: [lab for _, lab in labels] for rid, labels in out.items()}


def test_every_documented_step_has_a_check_and_vice_versa():
    subjects = proof_subjects()
    documented = documented_steps()
    for rid, labels in documented.items():
        assert rid in subjects, f"the docs document steps of {rid!r}, which has no record"
        assert labels == [s.label for s in subjects[rid].steps], rid
    for rid in PROSE:
        assert rid in documented, f"{PROSE[rid]} has no step headings for {rid}"


def test_markers_name_existing_subjects():
    subjects = proof_subjects()
    for page in DOCS.rglob("*.md"):
        for rid in MARKER.findall(page.read_text()):
            assert rid in subjects, (page, rid)


def _hook():
    spec = importlib.util.spec_from_file_location("allornone_docs_hook", DOCS / "hooks" / "allornone_docs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_step_tables_list_every_step():
    hook = _hook()
    for rid, subject in proof_subjects().items():
        table = hook.steps_markdown(rid)
        for step in subject.steps:
            assert f"`{step.label}`" in table, (rid, step.label)


def test_nav_lists_every_result_page():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (DOCS / "results").glob("*.md"):
        assert f"results/{page.name}" in nav, page


def _docs_prerequisites_missing() -> str | None:
    for mod in ("mkdocs", "material", "mkdocstrings_handlers.python", "matplotlib"):
        if importlib.util.find_spec(mod.split(".")[0]) is None:
            return f"docs extra {mod!r} not installed (pip install -r requirements-docs.txt)"
    if _hook().mathjax_dir() is None:
        return "MathJax not installed (bash docs/scripts/fetch-mathjax.sh)"
    return None


def build_site(dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(dest)], cwd=ROOT,
                          capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "ALLORNONE_DOCS_TRIALS": "5"})


_BUILT: dict[str, Path] = {}


def site_or_skip(tmp_path_factory) -> Path:
    """The site, built once per test run (shared with the browser test)."""
    why = _docs_prerequisites_missing()
    if why:
        pytest.skip(why)
    if "site" not in _BUILT:
        dest = tmp_path_factory.mktemp("site")
        proc = build_site(dest)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "WARNING" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        _BUILT["site"] = dest
    return _BUILT["site"]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    return site_or_skip(tmp_path_factory)


def test_site_builds_strict_with_local_mathjax(built_site):
    assert (built_site / "assets" / "mathjax" / "tex-mml-chtml.js").is_file()
    html = (built_site / "results" / "thm5" / "index.html").read_text()
    assert "cdn.jsdelivr" not in html and "fonts.googleapis" not in html
    assert 'class="arithmatex"' in html
    for step in proof_subjects()["thm5"].steps:
        assert step.label.replace("<", "&lt;") in html


def test_figures_and_dependency_graph_built(built_site):
    assert (built_site / "figures" / "generated" / "equivalent-models.svg").is_file()
    svg = (built_site / "figures" / "generated" / "dependency-graph.svg").read_text()
    for rid in proof_subjects():
        assert rid in svg
    page = (built_site / "dependency-graph" / "index.html").read_text()
    assert "failing" not in page.split("<table")[1] if "<table" in page else True
