"""MkDocs hooks of the documentation site: every generated part of a page is
read from the code at build time, so the site cannot drift from the records.

* ``on_config``: drop nav entries whose page does not exist (yet), so that the
  nav can list every result page; lay out ``build/docs-api`` for the API
  reference (the package is installed from several folders);
* ``on_pre_build``: draw the figures and the dependency graph
  (``docs/figures/make_figures.py``) into ``docs/figures/generated``;
* ``on_page_markdown``: expand the markers below;
* ``on_page_content``: turn the Sphinx roles left in docstrings
  (``:func:`name```) into links to the API entry, or plain code;
* ``on_post_build``: copy MathJax (installed from npm by
  ``docs/scripts/fetch-mathjax.sh``) into the site, so no page needs a CDN.

Markers (``ID`` is a record id such as ``thm5`` or a construction ``b5``):

``<!-- allornone:record ID -->``
    hypotheses, conclusion and the SymPy statement, typeset;
``<!-- allornone:steps ID -->``
    the proof steps as the code declares them: claim, reason, each "uses" as a
    link to the definition, fact, result or step it names, and how often the
    step held on ``TRIALS`` exact instances checked during the build;
``<!-- allornone:edges ID -->``
    the record's edge cases, each built and decided exactly during the build;
``<!-- allornone:example ID -->``
    a worked example: an exact instance, the atoms of the statement decided on
    it (exactly and in floats), and every proof step's values;
``<!-- allornone:dependency-graph -->``, ``<!-- allornone:dependency-status -->``
    the dependency graph (inline SVG) and its status table.
"""
from __future__ import annotations

import functools
import html
import logging
import os
import posixpath
import random
import re
import shutil
import sys
from fractions import Fraction
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.allornone")

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"
GENERATED = FIGURES / "generated"
MARKER = re.compile(r"<!--\s*allornone:(record|steps|edges|example|api)\s*(\S*?)\s*-->")
STATUS_MARKER = "<!-- allornone:dependency-status -->"
GRAPH_MARKER = "<!-- allornone:dependency-graph -->"
TRIALS_MARKER = "<!-- allornone:trials -->"
#: Exact instances per result checked while the site is built (step counts and
#: the dependency graph); the tests lower it with ``ALLORNONE_DOCS_TRIALS``.
TRIALS = int(os.environ.get("ALLORNONE_DOCS_TRIALS", "100"))

THEORY_PAGE = "theory/index.md"
FACTS = "theory/facts.md"
#: Where each named notion is defined on the site: name -> (page, anchor).
#: Names are those of ``ProofStep.uses``, of the dependency graph's definition
#: nodes and of the predicates of the statements.
DEFINITIONS = {
    "L": (THEORY_PAGE, "log-odds"),
    "same distribution": (THEORY_PAGE, "same-distribution"),
    "SameDistribution": (THEORY_PAGE, "same-distribution"),
    "SF, SG": (THEORY_PAGE, "sf-sg"),
    "M, N, k": (THEORY_PAGE, "m-n-k"),
    "~EL": (THEORY_PAGE, "extended-linear-equivalence"),
    "ExtendedLinearEquivalent": (THEORY_PAGE, "extended-linear-equivalence"),
    "EL1": (THEORY_PAGE, "el1"),
    "EL2": (THEORY_PAGE, "el2"),
    "EL3": (THEORY_PAGE, "el3"),
    "certificate": (THEORY_PAGE, "certificate"),
    "diversity": (THEORY_PAGE, "diversity"),
    "Diverse": (THEORY_PAGE, "diversity"),
    "SameDimension": (THEORY_PAGE, "diversity"),
    "LinearlyIdentified": (THEORY_PAGE, "diversity"),
    "ParallelIn": (THEORY_PAGE, "parallelism"),
    "ProportionalLogOdds": (THEORY_PAGE, "parallelism"),
    "ProportionalLogOddsRows": (THEORY_PAGE, "parallelism"),
    "RelationallyLinear": (THEORY_PAGE, "relational-linearity"),
    "RelationallyLinearReadingM": (THEORY_PAGE, "relational-linearity"),
    "GammaInN": (THEORY_PAGE, "relational-linearity"),
    "EnoughPairs": (THEORY_PAGE, "enough-pairs"),
    "token readouts": (THEORY_PAGE, "token-readouts"),
    "steering": (THEORY_PAGE, "linear-steering"),
}
FACT_IDS = ("F1", "F2", "F3", "F4", "F5", "F6")
CONSTRUCTION_PAGE = "constructions.md"


def mathjax_dir() -> Path | None:
    """Where MathJax's ``es5`` bundle is: ``$ALLORNONE_MATHJAX``, or the npm
    install of ``docs/scripts/fetch-mathjax.sh``, or ``node_modules``."""
    candidates = [os.environ.get("ALLORNONE_MATHJAX"), ROOT / "build/docs-node/node_modules/mathjax/es5",
                  ROOT / "node_modules/mathjax/es5"]
    for c in candidates:
        if c and (Path(c) / "tex-mml-chtml.js").is_file():
            return Path(c)
    return None


def _prune(nav, docs_dir: Path):
    out = []
    for item in nav:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                value = _prune(value, docs_dir)
                if value:
                    out.append({title: value})
            elif (docs_dir / value).is_file():
                out.append(item)
            else:
                log.info("nav: %s is not written yet; left out", value)
        elif isinstance(item, str) and not (docs_dir / item).is_file():
            log.info("nav: %s is not written yet; left out", item)
        else:
            out.append(item)
    return out


API_TREE = ROOT / "build" / "docs-api"
#: Import packages and the repository folders they are installed from
#: (``[tool.setuptools] package-dir`` of pyproject.toml).
PACKAGE_DIRS = {"allornone": "core", "allornone/symbolic": "symbolic", "allornone/numeric": "numeric",
                "allornone/theorems": "theorems"}


def api_tree() -> Path:
    """A tree of symbolic links laid out like the installed package, for the
    API reference to read the sources by their import names."""
    for pkg, folder in PACKAGE_DIRS.items():
        target = API_TREE / pkg
        target.mkdir(parents=True, exist_ok=True)
        for src in (ROOT / folder).rglob("*.py"):
            link = target / src.relative_to(ROOT / folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(src)
    return API_TREE


# Laid out when MkDocs loads this hook, before the plugins read their paths.
api_tree()


def on_config(config):
    config["nav"] = _prune(config["nav"], Path(config["docs_dir"]))
    return config


def on_pre_build(config):
    sys.path.insert(0, str(FIGURES))
    try:
        import make_figures

        make_figures.main(GENERATED)
    finally:
        sys.path.remove(str(FIGURES))


# -- links ----------------------------------------------------------------------------------------------------------


def relative(target: str, page_src: str, anchor: str = "") -> str:
    """A Markdown link target from page ``page_src`` to ``target`` (both paths
    relative to ``docs/``), MkDocs resolves and checks it."""
    path = posixpath.relpath(target, posixpath.dirname(page_src) or ".") if target != page_src else ""
    return path + (f"#{anchor}" if anchor else "")


def step_anchor(sid: str, n: int) -> str:
    return f"{sid}-step-{n}"


def notion_target(name: str) -> tuple[str, str] | None:
    """``(page, anchor)`` of a fact, definition, result or construction named
    ``name``, or None when the site has no place for it."""
    from allornone.theorems import records
    from allornone.theorems.constructions import CONSTRUCTIONS

    if name in FACT_IDS:
        return FACTS, name.lower()
    if name in DEFINITIONS:
        return DEFINITIONS[name]
    if name in records() and (ROOT / "docs" / "results" / f"{name}.md").is_file():
        return f"results/{name}.md", ""
    if name in CONSTRUCTIONS:
        return CONSTRUCTION_PAGE, name
    return None


def uses_links(sid: str, uses, page_src: str) -> str:
    """The names a step uses, each a link: a fact, a step of the same proof, a
    definition, a result or a construction."""
    from allornone.theorems.engine.proofs import resolve

    labels = [s.label for s in resolve(sid).steps]
    out = []
    for use in uses:
        # a fact is the fact even where a step is named after it (thm5's step "F4" uses fact F4)
        if use in labels and use not in FACT_IDS:
            out.append(f"[step {labels.index(use) + 1}](#{step_anchor(sid, labels.index(use) + 1)})")
            continue
        target = notion_target(use)
        text = _notion_text(use)
        out.append(f"[{text}]({relative(target[0], page_src, target[1])})" if target else text)
    return ", ".join(out)


def _notion_text(name: str) -> str:
    """How a link to a notion reads: a result or construction by its number
    (``Theorem 5``), anything else by its name."""
    from allornone.theorems import records
    from allornone.theorems.constructions import CONSTRUCTIONS

    if name in records():
        return _md_text(records()[name].number)
    if name in CONSTRUCTIONS:
        return _md_text(CONSTRUCTIONS[name].number)
    return _md_text(name)


def _code(text: str) -> str:
    """A Markdown code span holding ``text`` as it is (a label, a name the CLI takes)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: The construction steps typeset (their records are not results with fields of
#: their own): ``(construction id, step label) -> (claim, reason)``, Markdown
#: with TeX formulas; a test checks that every construction step has its entry.
CONSTRUCTION_TEX = {
    ("b5", "bases"): (r"\(U\) and \(V\) are bases of \(M\) and \(N\) (\(k\) columns each)", ""),
    ("b5", "C"): (r"\((P_M f)^\top (P_N g_0) = (U^\top f)^\top C\, (V^\top g_0)\) with "
                  r"\(C = (U^\top U)^{-1} U^\top V (V^\top V)^{-1}\)",
                  r"\(P_M = U (U^\top U)^{-1} U^\top\) and \(P_N = V (V^\top V)^{-1} V^\top\)"),
    ("b5", "same log-odds"): (r"\(\tilde f(x)^\top \tilde g_0(y) = f(x)^\top g_0(y)\) for every \(x, y\): "
                              r"\(\tilde L = L\)",
                              r"\(R^\top R^{-\top} = I\); \(T^\top T^{-\top} = I\); \(\varphi\) meets \(0\) and "
                              r"\(\psi\) meets \(0\); then step `C` and F4"),
    ("b5", "equivalent"): ("", r"Theorem 5 (the canonical certificate \(A^*, B^*\))"),
    ("b5", "dimensions"): (r"\(\tilde k = k\) while \(\tilde d = k + a + b\)",
                           r"F1: \(k = \operatorname{rank} L\) is fixed by the distribution"),
    ("d1", "structure"): (r"\(k = 1\), \(M = N = \operatorname{span}(e_1)\), and \(e_2 \in SF \cap M^\perp\) is "
                          r"hidden: \(P_G (P_F - P_M) = 0\)", r"F3: what \(f\) has off \(M\) never reaches a logit"),
    ("d1", "linear"): (r"\(P_N f(s \oplus q) = P_N (W f(s) + b)\) on \(S\) for some \(W, b\)",
                       r"\(W\) copies the hidden coordinate of \(f(s)\) into \(e_1\)"),
    ("d1", "only off M"): (r"no \(W, b\) fit when \(W\) may read only \(M\) (\(\Gamma_q \subseteq M\) fails)",
                           r"\(P_M f(s)\) is the same for every \(s \in S\) while the readouts vary"),
    ("d1", "same distribution"): (r"the B.5 twin with \(\varphi(x) = (\text{hidden coordinate})^3\) has "
                                  r"\(\tilde L = L\)", ""),
    ("d1", "twin fails"): (r"in the twin no \(\tilde W, \tilde b\) fit, whatever they read",
                           r"the readouts \(i\) are not an affine function of \((c, i^3)\) on \(S\)"),
}


def step_tex(sid: str, step) -> tuple[str, str]:
    """A step's claim and reason as the site typesets them: the record's LaTeX
    forms, else the plain text."""
    claim, reason = step.latex, step.reason_latex
    if (sid, step.label) in CONSTRUCTION_TEX:
        claim, reason = CONSTRUCTION_TEX[sid, step.label]
    return claim or _md_text(step.claim), reason or _md_text(step.reason)


def typeset(latex: str, text: str) -> str:
    """``latex`` (Markdown with TeX formulas) where a record gives it, else the plain text."""
    return latex or _md_text(text)


def _md_text(text: str) -> str:
    """Plain text safe inside a Markdown table cell (no markup, no pipes)."""
    return html.escape(text, quote=False).replace("|", "&#124;").replace("*", "&#42;").replace("_", "&#95;") \
        .replace("[", "&#91;").replace("]", "&#93;").replace("`", "&#96;").replace("\\", "&#92;")


# -- checks run during the build -----------------------------------------------------------------------------------


def _subject(sid: str):
    from allornone.theorems.engine.proofs import resolve

    return resolve(sid)


def _is_construction(subject) -> bool:
    from allornone.theorems.constructions import Construction

    return isinstance(subject, Construction)


@functools.lru_cache(maxsize=None)
def step_counts(sid: str, trials: int = TRIALS) -> tuple[int, dict]:
    """Over ``trials`` exact instances of ``sid``: ``(instances, {label: (applicable, held)})``.
    Records use the instances of ``allornone check --seed 0``; constructions
    their builds for seeds ``0 .. trials - 1``."""
    from allornone.theorems.engine.runner import instance_rng

    subject = _subject(sid)
    counts = {s.label: [0, 0] for s in subject.steps}
    done = 0
    for i in range(trials):
        if _is_construction(subject):
            inst = subject.build(i)
        else:
            inst = subject.sample(instance_rng(0, sid, i), i)
            if inst.float_only:
                continue
        done += 1
        for step, out in subject.check_steps(inst):
            if out.applicable:
                counts[step.label][0] += 1
                counts[step.label][1] += bool(out.decision.holds)
    return done, {k: tuple(v) for k, v in counts.items()}


@functools.lru_cache(maxsize=None)
def worked_instance(sid: str):
    """The instance ``allornone proof ID`` shows (seed 0) and its checked steps."""
    from allornone.theorems.engine.proofs import find_instance

    subject = _subject(sid)
    inst = subject.build(0) if _is_construction(subject) else find_instance(subject, 0)
    return inst, subject.check_steps(inst)


def _mark(out) -> str:
    if not out.applicable:
        return "– not applicable"
    return "✓ holds" if out.decision.holds else "✗ FAILS"


def steps_markdown(sid: str, page_src: str = "results/x.md") -> str:
    """The proof steps of a record or construction, one block each: number and
    label, the check on the worked example and the count of exact instances on
    which it held, then the claim, the reason and the "uses" as links (a
    definition list: typeset formulas get the width of the page)."""
    trials, counts = step_counts(sid)
    _, checked = worked_instance(sid)
    out = ['<div class="allornone-steps" markdown>', ""]
    for n, (step, res) in enumerate(checked, 1):
        applicable, held = counts[step.label]
        tally = f"held on {held}/{applicable} exact instances" + ("" if held == applicable else " ✗")
        if applicable < trials:
            tally += f" (not applicable on {trials - applicable} of {trials})"
        claim, reason = step_tex(sid, step)
        out += [f'<div class="allornone-step" id="{step_anchor(sid, n)}" markdown>', "",
                f'<span class="allornone-step-number">{n}</span> {_code(step.label)} '
                f'<span class="allornone-step-check">{_mark(res)} on the worked example · {tally}</span>', "",
                "Claim", f":   {claim}", "", "Because", f":   {reason}", "",
                "Uses", f":   {uses_links(sid, step.uses, page_src) or '–'}", "", "</div>", ""]
    return "\n".join(out + ["</div>"]) + "\n"


# -- typesetting values ----------------------------------------------------------------------------------------------


def tex_number(text) -> str:
    q = Fraction(str(text))
    if q.denominator == 1:
        return str(q.numerator)
    sign = "-" if q < 0 else ""
    return rf"{sign}\tfrac{{{abs(q.numerator)}}}{{{q.denominator}}}"


def tex_matrix(value) -> str:
    """An exact matrix (anything with ``to_fractions``) as a LaTeX ``bmatrix``."""
    rows = value.to_fractions()
    if not rows or not rows[0]:
        return rf"0_{{{value.shape[0]} \times {value.shape[1]}}}"
    body = r" \\ ".join(" & ".join(tex_number(x) for x in r) for r in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def _value_text(value) -> str:
    from allornone.theorems.engine.proofs import format_value

    text = format_value(value)
    return text if len(text) <= 160 else text[:157] + "..."


#: Roughly how many characters of a statement's plain form fit on one line of
#: a page's content column (760 px at 1,280 px) when typeset.
STATEMENT_LINE = 68


def _bool_tex(e) -> str:
    """A Boolean of predicates in LaTeX: sans-serif names, compound operands in parentheses."""
    from sympy import latex
    from sympy.logic.boolalg import Not

    from allornone.theorems.engine.logic import Predicate

    if isinstance(e, Predicate):
        return rf"\mathsf{{{type(e).__name__}}}({', '.join(latex(a) for a in e.args)})"
    if isinstance(e, Not):
        return r"\neg " + _operand_tex(e.args[0])
    for kind, sep in _tex_connectives():
        if isinstance(e, kind):
            return sep.join(_operand_tex(a) for a in e.args)
    return latex(e)


def _tex_connectives():
    from sympy.logic.boolalg import And, Equivalent, Implies, Or

    return ((And, r" \wedge "), (Or, r" \vee "), (Implies, r" \Rightarrow "), (Equivalent, r" \Leftrightarrow "))


def _compound(e) -> bool:
    from sympy.logic.boolalg import And, Equivalent, Implies, Or

    return isinstance(e, (And, Or, Implies, Equivalent))


def _operand_tex(e) -> str:
    t = _bool_tex(e)
    return rf"\left({t}\right)" if _compound(e) else t


def _width(e) -> int:
    from allornone.theorems.engine.logic import readable

    return len(readable(e))


def _part_lines(e, lead: str) -> list[tuple[str, str]]:
    """One conjunct as aligned lines ``(lead, tex)``: on one line when it fits,
    else its implication or equivalence split before the connective."""
    from sympy.logic.boolalg import Equivalent, Implies

    if _width(e) <= STATEMENT_LINE - 3 or not isinstance(e, (Implies, Equivalent)):
        return [(lead, _operand_tex(e))]
    sep = r"\Rightarrow" if isinstance(e, Implies) else r"\Leftrightarrow"
    a, b = e.args
    return [(lead, r"\bigl(" + _operand_tex(a)), ("", rf"\quad {sep} " + _operand_tex(b) + r"\bigr)")]


def _conjunct_lines(e, first_lead: str) -> list[tuple[str, str]]:
    from sympy.logic.boolalg import And

    parts = list(e.args) if isinstance(e, And) else [e]
    lines = []
    for i, p in enumerate(parts):
        lines += _part_lines(p, first_lead if i == 0 else r"\wedge")
    return lines


def statement_tex(statement) -> str:
    """A statement in LaTeX, set so that no line is wider than the page: an
    implication one hypothesis per line (a conjunction of several split into
    its conjuncts) and its conclusion after it, likewise; a part too long for
    a line split before its own connective."""
    from sympy.logic.boolalg import Implies

    if _width(statement) <= STATEMENT_LINE:
        return _bool_tex(statement)
    if isinstance(statement, Implies):
        premise, conclusion = statement.args
        lines = _conjunct_lines(premise, "") + _conjunct_lines(conclusion, r"\Rightarrow")
    else:
        lines = _conjunct_lines(statement, "")
    body = r" \\ ".join((rf"{lead}\ & " if lead else "& ") + tex for lead, tex in lines)
    return r"\begin{aligned}" + body + r"\end{aligned}"


def record_markdown(rid: str, page_src: str) -> str:
    """Hypotheses (each linked to what it refers to), conclusion, and the SymPy
    statement typeset and as the terminal prints it."""
    from sympy import latex

    from allornone.theorems import get_record
    from allornone.theorems.engine.logic import Predicate, readable

    rec = get_record(rid)
    out = ["**Hypotheses.**" if rec.hypotheses else "**Hypotheses:** none beyond shared contexts, vocabulary and "
                                                     "pivot.", ""]
    for h in rec.hypotheses:
        out.append(f"- {_code(h.name)}: {typeset(h.latex, h.description)}")
    out += ["", f"**Conclusion.** {typeset(rec.conclusion_latex, rec.conclusion_text)}", ""]
    preds = sorted({type(a).__name__ for a in rec.statement.atoms(Predicate)})
    links = []
    for p in preds:
        target = notion_target(p)
        links.append(f"[`{p}`]({relative(target[0], page_src, target[1])})" if target else f"`{p}`")
    out += ["**The statement in the code** (a SymPy Boolean; its predicates: " + ", ".join(links) + "):", "",
            "$$", statement_tex(rec.statement), "$$", "",
            f"As `allornone proof {rid}` prints it: `{readable(rec.statement)}`", ""]
    return "\n".join(out) + "\n"


def edges_markdown(rid: str, page_src: str) -> str:
    """The record's edges, each built (seed 0) and decided exactly now: one
    block each, its name, kind and hypothesis, what it shows and the verdict."""
    from allornone.theorems import get_record

    rec = get_record(rid)
    out = [f"Each edge built from seed 0 and decided exactly while this page was built "
           f"(`allornone edges {rid}` also searches and shrinks a counterexample for every hypothesis):", "",
           '<div class="allornone-edges" markdown>', ""]
    for edge in rec.edges:
        inst = edge.build(random.Random(f"0/{rec.id}/edge/{edge.name}"))
        ev = rec.evaluate(inst, "exact")
        got = {k: ev.atoms[k].holds for k in edge.expect}
        ok = got == dict(edge.expect)
        facts = ", ".join(f"{_code(k)} {'holds' if v else 'fails'}" for k, v in got.items())
        verdict = ("✓ as declared: " if ok else "✗ NOT as declared: ") + facts
        if edge.kind == "boundary":
            verdict += f"; conclusion {ev.conclusion.value}"
        kind = ("drops" if edge.kind == "drop" else "a boundary case of") if edge.hypothesis else \
            ("a counterexample" if edge.kind == "drop" else "a boundary case")
        head = f"{_code(edge.name)} <span class=\"allornone-edge-kind\">{kind}"
        head += f" {_code(edge.hypothesis)}</span>" if edge.hypothesis else "</span>"
        out += ['<div class="allornone-edge" markdown>', "", head, "",
                "Shows", f":   {typeset(edge.latex, edge.description)}", "",
                "Decided", f":   {verdict}", "", "</div>", ""]
    return "\n".join(out + ["</div>"]) + "\n"


#: The width of the content column in em of the formulas (688 px at 1,280 px,
#: less a margin), and roughly what a matrix takes: each column its widest
#: entry (a fraction a little less than its longer part) and a space, plus the
#: brackets, the name and the separator.
MATRIX_LINE_EM = 38.0


def _entry_em(x) -> float:
    """Digits are half an em, a minus sign about four fifths; a ``\\tfrac`` is
    set smaller."""
    text = tex_number(x)
    minus = 0.78 * text.startswith("-")
    if "frac" in text:
        num, den = re.findall(r"\{(\d+)\}", text)
        return 0.36 * max(len(num), len(den)) + 0.2 + minus
    return 0.5 * len(text.lstrip("-")) + minus


def _matrix_em(value) -> float:
    rows = value.to_fractions()
    if not rows or not rows[0]:
        return 4.0
    return sum(max(_entry_em(x) for x in col) + 1.0 for col in zip(*rows)) + 4.5


def _matrices_tex(named) -> list[str]:
    """Display formulas ``F = [...]``, ``G = [...]``, ... side by side as long as
    they fit on a line, each on its own line otherwise."""
    out, line, used = [], [], 0
    for name, value in named:
        width = _matrix_em(value)
        if line and used + width > MATRIX_LINE_EM:
            out += ["$$", r", \quad ".join(line), "$$", ""]
            line, used = [], 0
        line.append(f"{name} = {tex_matrix(value)}")
        used += width
    if line:
        out += ["$$", r", \quad ".join(line), "$$", ""]
    return out


def example_markdown(sid: str, page_src: str) -> str:
    """A worked example: the instance of ``allornone proof ID`` (seed 0), its
    structure, the statement's atoms decided exactly and in floats, and every
    step's values."""
    subject = _subject(sid)
    inst, checked = worked_instance(sid)
    names = ["(f, g)", r"(\tilde f, \tilde g)", r"(\hat f, \hat g)"]
    out = [f"The instance `allornone proof {sid}` shows (seed 0), computed while this page was built.", ""]
    for j, m in enumerate(inst.models):
        s = m.structure
        name = names[j] if j < len(names) else f"model {j}"
        out += [f"\\({name}\\): \\(m = {m.m}\\) contexts, \\(n = {m.n}\\) tokens, \\(d = {m.d}\\), "
                f"pivot \\(y_0 = {m.pivot}\\), \\(k = {s.k}\\), \\(\\dim SF = {m.dim_SF()}\\), "
                f"\\(\\dim SG = {m.dim_SG()}\\).", ""]
        out += _matrices_tex([("F", m.F), ("G", m.G), ("L", m.log_odds())])
        out += [rf"Bases (columns): \(M\): \({tex_matrix(s.basis_M)}\), \(N\): \({tex_matrix(s.basis_N)}\).", ""]
    if inst.params:
        out += ["Parameters: " + "; ".join(f"`{k}` = `{_value_text(v)}`" for k, v in inst.params.items()), ""]
    if not _is_construction(subject):
        ex, fl = subject.evaluate(inst, "exact"), subject.evaluate(inst, "float")
        out += ["| atom | exact | float (residual; tolerance) |", "|---|---|---|"]
        for n, d in ex.atoms.items():
            f = fl.atoms[n]
            tol = f"{float(f.residual):.2g}; holds ≤ {f.tolerance[0]:.2g}" if f.tolerance else "exact"
            out.append(f"| {_code(n)} | {d.truth.value} | {f.truth.value} ({tol}) |")
        out += ["", f"Hypotheses {ex.hypotheses.value}, conclusion {ex.conclusion.value}: the statement "
                f"**{ex.statement.value}** on this instance.", ""]
    out += ["??? example \"Every step on this instance, with its values\"", ""]
    for n, (step, res) in enumerate(checked, 1):
        out.append(f"    **{n}.** {_code(step.label)} — {_mark(res)}"
                   + (f" ({_code(str(res.decision))})" if res.applicable else ""))
        out.append("")
        if res.values:
            out.append("    ```text")
            out += [f"    {k} = {_value_text(v)}" for k, v in res.values.items()]
            out.append("    ```")
            out.append("")
    return "\n".join(out) + "\n"


#: Order of the API reference: these first (by package), then every other module, sorted.
API_FIRST = ["allornone.errors", "allornone.decision", "allornone.model",
             "allornone.symbolic.model", "allornone.symbolic.linalg", "allornone.symbolic.generators",
             "allornone.numeric.model", "allornone.numeric.linalg", "allornone.numeric.strategies",
             "allornone.theorems.engine.record", "allornone.theorems.engine.logic", "allornone.theorems.thm5",
             "allornone.theorems.cor6", "allornone.theorems.lem8", "allornone.theorems.lem8ctx",
             "allornone.theorems.thm15", "allornone.theorems.thm14", "allornone.theorems.facts",
             "allornone.theorems.constructions", "allornone.theorems.engine.verify"]
#: Modules whose public surface is elsewhere: the command line is documented by ``allornone -h``.
API_SKIP = {"allornone.theorems.engine.cli"}
PACKAGE_TITLES = {"allornone": "Errors, decisions and the shared model base",
                  "allornone.symbolic": "Exact side: allornone.symbolic",
                  "allornone.numeric": "Float side: allornone.numeric",
                  "allornone.theorems": "Results: allornone.theorems",
                  "allornone.theorems.engine": "What runs the results: allornone.theorems.engine"}


def api_modules() -> list[str]:
    """Every module of the package (from the tree of ``api_tree``), in reading order."""
    mods = []
    for f in sorted(API_TREE.rglob("*.py")):
        parts = f.relative_to(API_TREE).with_suffix("").parts
        if parts[-1] == "__init__":
            # a result package's __init__ is its user API; other packages'
            # __init__ only re-export what their modules document
            if len(parts) != 4 or parts[:2] != ("allornone", "theorems") or parts[2] == "engine":
                continue
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts):
            continue
        name = ".".join(parts)
        if name not in API_SKIP:
            mods.append(name)
    first = [m for m in API_FIRST if m in mods]
    return first + sorted(m for m in mods if m not in first)


def api_markdown(_arg: str = "", page_src: str = "api.md") -> str:
    """``::: module`` for every module, grouped by package."""
    groups: dict[str, list[str]] = {}
    for mod in api_modules():
        pkg = mod.rsplit(".", 1)[0]
        groups.setdefault(pkg if pkg in PACKAGE_TITLES else "allornone.theorems", []).append(mod)
    out = []
    for pkg, title in PACKAGE_TITLES.items():
        if pkg in groups:
            out += [f"## {title}", ""] + [f"::: {m}\n" for m in groups[pkg]]
    return "\n".join(out) + "\n"


GENERATORS = {"record": record_markdown, "steps": steps_markdown, "edges": edges_markdown,
              "example": example_markdown, "api": api_markdown}


#: Sections every result page has; a page that lacks a marker gets the section appended.
RESULT_SECTIONS = {"record": "The statement in the code", "steps": "Proof steps as the code checks them",
                   "edges": "Edge cases", "example": "Worked example"}


def complete_result_page(markdown: str, src: str) -> str:
    """A page ``results/<id>.md`` of a record gets every generated section it
    does not place itself, so a new record's page is complete from the start."""
    from allornone.theorems import records

    m = re.fullmatch(r"results/(\w+)\.md", src)
    if not m or m.group(1) not in records():
        return markdown
    present = {k for k, _ in MARKER.findall(markdown)}
    extra = [f"## {title}\n\n<!-- allornone:{kind} {m.group(1)} -->\n" for kind, title in RESULT_SECTIONS.items()
             if kind not in present]
    return markdown.rstrip("\n") + "\n\n" + "\n".join(extra) if extra else markdown


def on_page_markdown(markdown, page, config, files):
    src = page.file.src_uri
    markdown = complete_result_page(markdown, src)
    markdown = MARKER.sub(lambda m: GENERATORS[m.group(1)](m.group(2), src), markdown)
    markdown = markdown.replace(TRIALS_MARKER, str(TRIALS))
    if STATUS_MARKER in markdown:
        markdown = markdown.replace(STATUS_MARKER, (GENERATED / "dependency-status.md").read_text())
    if GRAPH_MARKER in markdown:
        prefix = "../" * page.url.count("/")
        svg = (GENERATED / "dependency-graph.svg").read_text().replace('href="@/', f'href="{prefix}')
        markdown = markdown.replace(GRAPH_MARKER, f'<div class="allornone-graph">\n{svg.strip()}\n</div>')
    return markdown


# -- API reference: Sphinx roles left in docstrings -------------------------------------------------------------------

MATH_ROLE = re.compile(r":math:<code>(.*?)</code>")
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj)?:<code>~?([\w.]+)(\(\))?</code>")
#: A role with an explicit title: ``:meth:`title <target>```.
TITLED_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj)?:<code>([^<&]*?)\s*&lt;~?([\w.]+)&gt;</code>")


def resolve_roles(content: str) -> str:
    """``:func:<code>name</code>`` (a Sphinx role rendered as is) becomes a link
    to the API entry whose id ends with ``name`` on this page, or plain code."""
    ids = re.findall(r'id="(allornone[\w.]*)"', content)

    def link(m):
        name = m.group(1)
        hits = [i for i in ids if i == name or i.endswith("." + name)]
        code = f"<code>{name.rsplit('.', 1)[-1] if m.group(0).count('~') else name}{m.group(2) or ''}</code>"
        if not hits:
            return code
        return f'<a class="autorefs" href="#{min(hits, key=len)}">{code}</a>'

    def titled(m):
        title, name = m.group(1).strip(), m.group(2)
        hits = [i for i in ids if i == name or i.endswith("." + name)]
        code = f"<code>{title or name}</code>"
        return f'<a class="autorefs" href="#{min(hits, key=len)}">{code}</a>' if hits else code

    content = MATH_ROLE.sub(lambda m: f'<span class="arithmatex">\\({m.group(1)}\\)</span>', content)
    content = TITLED_ROLE.sub(titled, content)
    return ROLE.sub(link, content)


def on_page_content(html_text, page, config, files):
    return resolve_roles(html_text)


# -- the printable theory -------------------------------------------------------------------------------------------

PRINT_PAGE = "theory/print.md"
PRINT_SECTION = "Theory"
PRINT_SLOT = '<div id="allornone-print"></div>'
_PRINTED: list = []


def on_nav(nav, config, files):
    """Remember the pages of the Theory section, in nav order, for the printable version."""
    _PRINTED.clear()

    def walk(items):
        for item in items:
            if getattr(item, "is_section", False):
                yield from walk(item.children)
            elif getattr(item, "is_page", False):
                yield item

    for item in nav.items:
        if getattr(item, "is_section", False) and item.title == PRINT_SECTION:
            _PRINTED.extend(p for p in walk(item.children) if p.file.src_uri != PRINT_PAGE)
    return nav


ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)


def _print_section(page_url: str, body: str, urls: dict[str, str], print_url: str) -> str:
    """One page's article for the print page: ids prefixed with the page's key,
    links into printed pages turned into in-page anchors, other links made
    relative to the print page, collapsed details opened."""
    key = urls[page_url]
    body = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{key}--{m.group(1)}"', body)
    body = re.sub(r'url\(#([^)]+)\)', lambda m: f'url(#{key}--{m.group(1)})', body)  # SVG markers

    def href(m):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        absolute = posixpath.normpath(posixpath.join(page_url, path)) + "/" if path else page_url
        absolute = absolute.lstrip("./") if absolute != "./" else ""
        absolute = "" if absolute in (".", "./") else absolute
        if absolute in urls:
            return f'href="#{urls[absolute]}--{anchor}"' if anchor else f'href="#{urls[absolute]}"'
        rel = posixpath.relpath(absolute or ".", print_url or ".")
        return f'href="{rel}/{"#" + anchor if anchor else ""}"'

    def src(m):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target) or target.startswith("/"):
            return m.group(0)
        absolute = posixpath.normpath(posixpath.join(page_url, target))
        return f'src="{posixpath.relpath(absolute, print_url or ".")}"'

    body = re.sub(r'href="([^"]*)"', href, body)
    body = re.sub(r'src="([^"]*)"', src, body)
    body = body.replace("<details class=", "<details open class=")
    return f'<section class="allornone-print-page" id="{key}">{body}</section>'


def build_print_page(site_dir: Path) -> Path | None:
    """Fill the print page with the articles of every Theory page."""
    if not _PRINTED:
        return None
    out = site_dir / PRINT_PAGE[:-3] / "index.html"
    if not out.is_file():
        return None
    print_url = PRINT_PAGE[:-3] + "/"
    urls = {p.url: re.sub(r"[^a-z0-9]+", "-", p.url.lower()).strip("-") or "home" for p in _PRINTED}
    parts = []
    for p in _PRINTED:
        built = site_dir / p.url / "index.html"
        m = ARTICLE.search(built.read_text(encoding="utf-8"))
        if m:
            parts.append(_print_section(p.url, m.group(1), urls, print_url))
    text = out.read_text(encoding="utf-8")
    out.write_text(text.replace(PRINT_SLOT, "\n".join(parts)), encoding="utf-8")
    return out


def on_post_build(config):
    build_print_page(Path(config["site_dir"]))
    src = mathjax_dir()
    if src is None:
        log.warning("MathJax not found: run docs/scripts/fetch-mathjax.sh (or set ALLORNONE_MATHJAX)")
        return
    dst = Path(config["site_dir"]) / "assets" / "mathjax"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
