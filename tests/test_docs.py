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

from allornone.theorems.engine.proofs import proof_subjects

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: Instances the docs hook checks per result: a few are enough for the tests.
DOCS_TRIALS = "5"
os.environ.setdefault("ALLORNONE_DOCS_TRIALS", DOCS_TRIALS)
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
        for n, step in enumerate(subject.steps, 1):
            assert f'id="{hook.step_anchor(rid, n)}"' in table, (rid, n)
            assert f"</span> {hook._code(step.label)} <span" in table, (rid, step.label)
        claims = [hook.step_tex(rid, s)[0] for s in subject.steps]
        assert all(f":   {c}" in table for c in claims), rid


# -- formulas typeset: the records' LaTeX forms -------------------------------------------------------------------------

#: Formulas written in ASCII (the browser test looks for the same on the built
#: pages): a TeX subscript or superscript, x_y or x^y, a transpose, a density
#: p_, an arrow or comparison spelt in ASCII, a tilde standing for an accent.
RAW_ASCII = re.compile(r"_\{|\^\{|\^T\b|\bp_|<=>|=>|<=|!=|->|~|[^\W_)\]]_[^\W_(]|[^\W_)\]]\^[\w(-]|\)_|\)\^")
#: What is not prose in a LaTeX form: its formulas and its code spans.
NOT_PROSE = re.compile(r"\\\(.*?\\\)|`[^`]*`", re.S)


def ascii_formulas(text: str) -> list[str]:
    """The ASCII formulas in ``text``, outside formulas and code."""
    return [m.group(0) for m in RAW_ASCII.finditer(NOT_PROSE.sub(" ", text))]


def shown_texts():
    """Every record text the result pages show: ``(where, plain text, LaTeX form)``."""
    from allornone.theorems import records

    hook = _hook()
    for rid, rec in records().items():
        for h in rec.hypotheses:
            yield f"{rid} hypothesis {h.name!r}", h.description, h.latex
        yield f"{rid} conclusion", rec.conclusion_text, rec.conclusion_latex
        for e in rec.edges:
            yield f"{rid} edge {e.name!r}", e.description, e.latex
    for sid, subject in proof_subjects().items():
        for step in subject.steps:
            claim, reason = hook.step_tex(sid, step)
            yield f"{sid} step {step.label!r} claim", step.claim, "" if claim == hook._md_text(step.claim) else claim
            yield f"{sid} step {step.label!r} reason", step.reason, "" if reason == hook._md_text(step.reason) \
                else reason


def test_the_ascii_formula_check_sees_what_it_must():
    assert ascii_formulas("p_{f,g} = p_{f~,g~}") and ascii_formulas("A^T B") and ascii_formulas("if a => b")
    assert ascii_formulas("in Γ_q ⊆ M") and ascii_formulas("L != L~") and ascii_formulas("R^d")
    assert ascii_formulas(r"the rows \(L[x, :]\) and P_M") == ["P_M"]
    assert ascii_formulas(r"\(p_{f,g} = p_{\tilde f, \tilde g}\) and the step `raw => N`") == []
    assert ascii_formulas("the log-odds of a against b, as the paper states it") == []


def test_every_record_text_with_a_formula_has_a_typeset_form():
    """Where a hypothesis, conclusion, edge or step has a formula in its plain
    text, the record gives a LaTeX form, and that form has no ASCII formula
    left outside its TeX (nor a pipe, which would break a Markdown table)."""
    missing, raw = [], []
    for where, plain, latex in shown_texts():
        if latex:
            if ascii_formulas(latex) or "|" in latex or latex.count("\\(") != latex.count("\\)"):
                raw.append((where, ascii_formulas(latex), latex))
        elif ascii_formulas(plain):
            missing.append((where, ascii_formulas(plain), plain))
    assert not missing, missing
    assert not raw, raw


def test_every_construction_step_typeset_by_the_hook_exists():
    from allornone.theorems.constructions import CONSTRUCTIONS

    hook = _hook()
    labels = {(cid, s.label) for cid, c in CONSTRUCTIONS.items() for s in c.steps}
    assert set(hook.CONSTRUCTION_TEX) <= labels, set(hook.CONSTRUCTION_TEX) - labels


def test_record_sections_are_typeset():
    hook = _hook()
    text = hook.record_markdown("thm14", "results/thm14.md")
    assert "- `Γ_q ⊆ M`: in both models" in text and r"\(\Gamma_q \subseteq M\)" in text
    assert r"**Conclusion.** \(P_\Gamma f(s \oplus q)" in text
    edges = hook.edges_markdown("thm14", "results/thm14.md")
    assert "`Appendix D.1` <span" in edges and r"\(\Gamma_q = \operatorname{span} e_1" in edges
    assert "`rel_lin_M` fails" in edges


def test_statements_are_set_on_lines_that_fit_the_page():
    """Each line of a typeset statement is at most ``STATEMENT_LINE``
    characters of its plain form; Theorem 14's is set on several lines, one
    hypothesis each, its conclusion split into its two equivalences."""
    from sympy.logic.boolalg import And, Implies

    from allornone.theorems import records

    hook = _hook()
    for rid, rec in records().items():
        tex = hook.statement_tex(rec.statement)
        lines = tex.removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}").split(r" \\ ")
        widths = [len(re.sub(r"\\(mathsf|left|right|bigl|bigr|tilde|quad|wedge|Rightarrow|Leftrightarrow|Gamma|lambda)"
                             r"|[{}&\\ ]", "", line)) for line in lines]
        assert max(widths) <= hook.STATEMENT_LINE, (rid, widths, tex)
    thm14 = hook.statement_tex(records()["thm14"].statement)
    assert thm14.startswith(r"\begin{aligned}") and thm14.count(r" \\ ") >= 8
    assert r"\Rightarrow\ & \left(\mathsf{RelationallyLinear}" in thm14
    assert isinstance(records()["thm14"].statement, Implies) and isinstance(records()["thm14"].conclusion, And)


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
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "ALLORNONE_DOCS_TRIALS": DOCS_TRIALS})


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
    for name in ("equivalent-models.svg", "real-models-spectra.png"):
        assert (built_site / "figures" / "generated" / name).is_file(), name
    svg = (built_site / "figures" / "generated" / "dependency-graph.svg").read_text()
    for rid in proof_subjects():
        assert rid in svg
    page = (built_site / "dependency-graph" / "index.html").read_text()
    assert "failing" not in page.split("<table")[1] if "<table" in page else True


# -- the generated parts of the pages, without building the site ------------------------------------------------------

LINK = re.compile(r"\[[^\]]+\]\(([^)]+)\)")


def test_every_step_use_is_a_link_to_an_existing_place():
    hook = _hook()
    for sid, subject in proof_subjects().items():
        src = "constructions.md" if sid in ("b5", "d1") else f"results/{sid}.md"
        for step in subject.steps:
            for use in step.uses:
                cell = hook.uses_links(sid, [use], src)
                target = (LINK.findall(cell) or [None])[0]
                assert target, f"{sid} step {step.label!r}: uses {use!r} is not linked"
                path, _, anchor = target.partition("#")
                if path:
                    page = DOCS / Path(src).parent / path
                    assert page.is_file(), f"{sid}: {use!r} links to a missing page {target}"
                    if anchor:
                        assert f"{{#{anchor}}}" in page.read_text() or f'id="{anchor}"' in page.read_text(), \
                            f"{sid}: {use!r} links to a missing anchor {target}"


def test_an_unknown_use_is_reported_as_unlinked():
    # what the test above would catch: a name the site has no place for stays plain text
    cell = _hook().uses_links("thm5", ["no such notion"], "results/thm5.md")
    assert not LINK.findall(cell)


def test_step_tables_carry_links_and_check_counts():
    hook = _hook()
    table = hook.steps_markdown("thm5", "results/thm5.md")
    assert "(../theory/facts.md#f4)" in table and "](#thm5-step-3)" in table
    trials, counts = hook.step_counts("thm5")
    assert trials == hook.TRIALS and all(held == applicable for applicable, held in counts.values())
    assert f"{trials}/{trials}" in table


def test_a_new_result_page_gets_every_generated_section():
    hook = _hook()
    bare = hook.complete_result_page("# Theorem 5\n\nText.\n", "results/thm5.md")
    for kind in hook.RESULT_SECTIONS:
        assert f"<!-- allornone:{kind} thm5 -->" in bare
    full = (DOCS / "results" / "thm5.md").read_text()
    assert hook.complete_result_page(full, "results/thm5.md") == full
    assert hook.complete_result_page("# Guide\n", "edges.md") == "# Guide\n"


def test_sphinx_roles_become_links_or_code():
    hook = _hook()
    html = ('<h2 id="allornone.theorems.thm5.equivalence">equivalence</h2>'
            '<p>see :func:<code>equivalence</code>, :class:<code>~allornone.decision.Decision</code> '
            'and :math:<code>P_M</code></p>')
    out = hook.resolve_roles(html)
    assert ":func:" not in out and ":class:" not in out and ":math:" not in out
    assert '<a class="autorefs" href="#allornone.theorems.thm5.equivalence"><code>equivalence</code></a>' in out
    assert "<code>Decision</code>" in out and '<span class="arithmatex">\\(P_M\\)</span>' in out
    titled = hook.resolve_roles(html + '<p>by :meth:<code>the rule\n&lt;allornone.theorems.thm5.equivalence&gt;</code>'
                                       ' and :func:<code>gone &lt;allornone.nowhere&gt;</code></p>')
    assert ":meth:" not in titled and ":func:" not in titled
    assert '<a class="autorefs" href="#allornone.theorems.thm5.equivalence"><code>the rule</code></a>' in titled
    assert "<code>gone</code>" in titled


def test_doctests_in_running_text_become_code_blocks():
    pytest.importorskip("griffe", reason="the docs extra (pip install -e '.[docs]') is not installed")
    spec = importlib.util.spec_from_file_location("griffe_docstrings", DOCS / "hooks" / "griffe_docstrings.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = "Intro.\n\n>>> 1 + 1\n2\n\nExamples\n--------\n>>> 2 + 2\n4\n"
    assert mod.fence_doctests(text).split("\n") == ["Intro.", "", "```pycon", ">>> 1 + 1", "2", "```", "",
                                                    "Examples", "--------", ">>> 2 + 2", "4", ""]


def test_api_reference_lists_every_module():
    hook = _hook()
    mods = hook.api_modules()
    for name in ("allornone.errors", "allornone.symbolic.model", "allornone.numeric.model",
                 "allornone.numeric.strategies", "allornone.theorems.engine.verify", "allornone.theorems.thm14"):
        assert name in mods, name
    for folder, pkg in (("symbolic", "allornone.symbolic"), ("numeric", "allornone.numeric"),
                        ("theorems", "allornone.theorems")):
        for f in (ROOT / folder).glob("*.py"):
            if not f.name.startswith("_") and f.stem != "cli":
                assert f"{pkg}.{f.stem}" in mods, f


def test_dependency_graph_svg_links_every_result_and_has_a_legend():
    sys.path.insert(0, str(DOCS / "figures"))
    try:
        import dependency_graph as dg
    finally:
        sys.path.remove(str(DOCS / "figures"))
    nodes = dg.build_graph(trials=2)
    svg = dg.to_svg(nodes)
    for rid in proof_subjects():
        assert f'data-id="{rid}"' in svg
    for rid in (p.stem for p in (DOCS / "results").glob("*.md")):
        assert f'href="@/results/{rid}/"' in svg, rid
    for text in dg.STATUS_TEXT.values():
        assert text in svg
    assert all(n.status != "failing" for n in nodes.values()), {n.id: n.evidence for n in nodes.values()}


#: A citation of a document that is neither in the repository nor on the site
#: (spelt in two pieces so that this file does not cite it).
_UNPUBLISHED = re.compile(r"\b" + "THE" + r"ORY\b(\.md|\s+(sections?|§)|'s|\s*§)")


def unpublished_citations(text: str) -> list[str]:
    return [m.group(0) for m in _UNPUBLISHED.finditer(text)]


def test_no_page_or_docstring_cites_an_unpublished_document():
    assert unpublished_citations("see " + "THE" + "ORY section 10 and " + "THE" + "ORY.md") != []
    found = {}
    for folder in ("core", "symbolic", "numeric", "theorems", "tests", "benchmarks", "docs", "examples", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".yml", ".js", ".css", "") and "generated" not in path.parts:
                hits = unpublished_citations(path.read_text(errors="replace"))
                if hits:
                    found[str(path.relative_to(ROOT))] = hits
    for name in ("README.md", "mkdocs.yml", "pyproject.toml"):
        hits = unpublished_citations((ROOT / name).read_text())
        if hits:
            found[name] = hits
    assert not found, found


def test_getting_started_uses_the_readmes_two_commands():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Set-up"):]
    commands = re.findall(r"```bash\n(.+?)\n```", section, re.S)[:2]
    assert len(commands) == 2
    page = (DOCS / "getting-started.md").read_text()
    for command in commands:
        assert command in page, command
