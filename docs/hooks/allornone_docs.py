"""MkDocs hooks of the documentation site.

* ``on_config``: drop nav entries whose page does not exist (yet), so that the
  nav can list every result page; lay out ``build/docs-api`` for the API
  reference (the package is installed from several folders);
* ``on_pre_build``: draw the figures and the dependency graph
  (``docs/figures/make_figures.py``) into ``docs/figures/generated``;
* ``on_page_markdown``: replace ``<!-- allornone:steps ID -->`` with the proof
  steps of record (or construction) ``ID`` read from the code, and
  ``<!-- allornone:dependency-status -->`` with the computed status table;
* ``on_post_build``: copy MathJax (installed from npm by
  ``docs/scripts/fetch-mathjax.sh``) into the site, so no page needs a CDN.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.allornone")

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"
GENERATED = FIGURES / "generated"
STEPS_MARKER = re.compile(r"<!--\s*allornone:steps\s+(\S+)\s*-->")
STATUS_MARKER = "<!-- allornone:dependency-status -->"


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
        for src in (ROOT / folder).glob("*.py"):
            link = target / src.name
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


def steps_markdown(sid: str) -> str:
    """The proof steps of a record or construction, as a Markdown table, with
    the generic identities and the rewriting normal forms that cover each."""
    from allornone.theorems import generic
    from allornone.theorems.proofs import resolve
    from allornone.theorems.rewrite import COVERED_STEPS

    subject = resolve(sid)
    rows = ["| # | step | claim | reason (uses) | generic identity | rewriting |", "|---|---|---|---|---|---|"]
    for n, step in enumerate(subject.steps, 1):
        own, inherited = generic.identities_for_step(sid, step)
        gen_cell = ", ".join(f"`{x}`" for x in own) or "-"
        if inherited:
            gen_cell += " (facts: " + ", ".join(f"`{x}`" for x in inherited) + ")"
        uses = f" ({', '.join(step.uses)})" if step.uses else ""
        rw = "normal form" if (sid, step.label) in COVERED_STEPS else "-"
        rows.append(f"| {n} | `{step.label}` | {_cell(step.claim)} | {_cell(step.reason)}{uses} | {gen_cell} | {rw} |")
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def on_page_markdown(markdown, page, config, files):
    markdown = STEPS_MARKER.sub(lambda m: steps_markdown(m.group(1)), markdown)
    if STATUS_MARKER in markdown:
        markdown = markdown.replace(STATUS_MARKER, (GENERATED / "dependency-status.md").read_text())
    return markdown


def on_post_build(config):
    src = mathjax_dir()
    if src is None:
        log.warning("MathJax not found: run docs/scripts/fetch-mathjax.sh (or set ALLORNONE_MATHJAX)")
        return
    dst = Path(config["site_dir"]) / "assets" / "mathjax"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
