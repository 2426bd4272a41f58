"""Open every page of the built site in headless Chromium and check what a
reader sees: a page that contains mathematics shows typeset formulas, no raw
TeX or raw Sphinx role (``:func:``) is visible outside code, and every internal
link leads to an existing page and anchor. A screenshot of every result page
is kept under ``build/docs-screenshots`` as an artefact.

All pages are opened by one Chromium run: a small harness page, served with
the site, loads each page in turn in a frame, waits for MathJax, and writes
what it found into its own DOM, which Chromium dumps.

Skipped (with the reason) when Chromium or the docs prerequisites are absent.
"""
from __future__ import annotations

import functools
import html
import http.server
import json
import posixpath
import re
import shutil
import subprocess
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

try:
    import test_docs
except ImportError:  # collected with a rootdir-based import mode
    from tests import test_docs

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "build" / "docs-screenshots"
HARNESS = "allornone-harness.html"
#: Text that must not be visible outside code on a rendered page.
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$", "\\tilde", "\\frac", "\\begin", "\\mathsf", "\\operatorname",
           "\\top", "\\mathbb", "\\lambda", "\\Gamma")
RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj):")


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _chrome(*args, timeout=300):
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


HARNESS_JS = r"""
<!doctype html><meta charset="utf-8"><body><pre id="out">running</pre><iframe id="f" width="1200" height="900"></iframe>
<script>
const pages = %s;
const SKIP = "pre, code, script, style, mjx-container, mjx-assistive-mml, .arithmatex";
function visibleText(doc) {
  const root = doc.querySelector("article") || doc.body;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (el && !el.closest(SKIP)) out.push(walker.currentNode.nodeValue);
  }
  return out.join(" ");
}
function untypeset(doc) {
  // arithmatex spans whose TeX MathJax did not replace
  return Array.from(doc.querySelectorAll(".arithmatex")).filter(e => !e.querySelector("mjx-container"))
              .map(e => e.textContent.slice(0, 80));
}
async function check(url) {
  const f = document.getElementById("f");
  await new Promise(ok => { f.onload = ok; f.src = url; });
  const w = f.contentWindow, doc = f.contentDocument;
  if (w.MathJax && w.MathJax.startup && w.MathJax.startup.promise) { await w.MathJax.startup.promise; }
  return {url: url, math: doc.querySelectorAll(".arithmatex").length,
          typeset: doc.querySelectorAll("mjx-container").length,
          untypeset: untypeset(doc), text: visibleText(doc)};
}
(async () => {
  const results = [];
  for (const p of pages) { try { results.push(await check(p)); } catch (e) { results.push({url: p, error: String(e)}); } }
  document.getElementById("out").textContent = JSON.stringify(results);
})();
</script>
"""


def page_urls(site: Path) -> list[str]:
    """Every HTML page of a built site, as URL paths (``results/thm5/``)."""
    out = []
    for f in sorted(site.rglob("index.html")):
        rel = f.parent.relative_to(site).as_posix()
        if rel.startswith("assets"):
            continue
        out.append("" if rel == "." else rel + "/")
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def render_all(site: Path, urls: list[str]) -> list[dict]:
    """Open every page in one Chromium run; what the harness found on each."""
    (site / HARNESS).write_text(HARNESS_JS % json.dumps(["/" + u for u in urls]), encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        dom = _chrome(f"--virtual-time-budget={30000 + 8000 * len(urls)}", "--dump-dom", f"{base}/{HARNESS}").stdout
    finally:
        httpd.shutdown()
        (site / HARNESS).unlink()
    m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert m and m.group(1) != "running", "the harness did not finish: " + dom[-500:]
    return json.loads(html.unescape(m.group(1)))


def rendering_problems(result: dict) -> list[str]:
    """What is wrong with one rendered page (empty when nothing)."""
    if "error" in result:
        return [f"could not be opened: {result['error']}"]
    out = []
    if result["math"] and not result["typeset"]:
        out.append(f"{result['math']} formulas and none typeset")
    if result["untypeset"]:
        out.append(f"formulas left untypeset: {result['untypeset'][:3]}")
    text = result["text"]
    for raw in RAW_TEX:
        if raw in text:
            i = text.index(raw)
            out.append(f"raw TeX {raw!r} visible: ...{text[max(0, i - 40):i + 40]}...")
    for m in RAW_ROLE.finditer(text):
        out.append(f"raw Sphinx role {m.group(0)!r} visible: ...{text[max(0, m.start() - 30):m.end() + 40]}...")
    return out


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def broken_links(site: Path, url: str) -> list[str]:
    """Internal links of page ``url`` whose page or anchor does not exist."""
    page = _parse(site / url / "index.html")
    out = []
    for href in page.hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
            continue
        if parts.path:
            target = posixpath.normpath(posixpath.join("/" + url, parts.path)).lstrip("/")
            file = site / target
            if file.is_dir():
                file = file / "index.html"
            if not file.is_file():
                out.append(f"{href} (no such page)")
                continue
        else:
            file = site / url / "index.html"
        if parts.fragment and file.suffix == ".html" and parts.fragment not in _parse(file).ids:
            out.append(f"{href} (no anchor #{parts.fragment})")
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if _chromium() is None:
        pytest.skip("Chromium not installed (apt-get install -y chromium)")
    site = test_docs.site_or_skip(tmp_path_factory)
    urls = page_urls(site)
    return site, {r["url"].strip("/") + "/" if r["url"] != "/" else "": r for r in render_all(site, urls)}


def test_every_page_is_typeset_with_no_raw_markup(rendered):
    site, results = rendered
    assert len(results) >= 15, sorted(results)
    problems = {u: p for u, r in results.items() if (p := rendering_problems(r))}
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)
    # the pages that carry the theory all have typeset mathematics
    for u in ("theory/", "theory/facts/", "theory/print/", "edges/", "constructions/",
              *(f"results/{p.stem}/" for p in (test_docs.DOCS / "results").glob("*.md"))):
        assert results[u]["typeset"] > 0, f"{u}: no typeset formula"


def test_every_internal_link_resolves(rendered):
    site, results = rendered
    broken = {u: b for u in results if (b := broken_links(site, u))}
    assert not broken, json.dumps(broken, indent=1)


def test_screenshot_of_every_result_page(rendered):
    site, results = rendered
    SCREENSHOT.mkdir(parents=True, exist_ok=True)
    pages = [u for u in results if u.startswith("results/")] + ["constructions/", "dependency-graph/"]
    shots = {u: SCREENSHOT / (u.strip("/").replace("/", "-") + ".png") for u in pages}
    # a few browsers at a time: each mostly waits for MathJax
    for batch in range(0, len(pages), 3):
        procs = [subprocess.Popen([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                   "--window-size=1280,2400", "--virtual-time-budget=15000",
                                   f"--screenshot={shots[u]}", (site / u / "index.html").resolve().as_uri()],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for u in pages[batch:batch + 3]]
        for proc in procs:
            proc.wait(timeout=120)
    for u, shot in shots.items():
        assert shot.is_file() and shot.stat().st_size > 10_000, u


def test_the_checks_fail_on_a_planted_bad_page(tmp_path):
    """A page with a formula and no MathJax, a raw role, raw TeX in prose and a
    broken link: each check must see its problem."""
    if _chromium() is None:
        pytest.skip("Chromium not installed (apt-get install -y chromium)")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "index.html").write_text(
        '<html><body><article><p>See :func:<code>check</code> and <span class="arithmatex">\\(L = F G_0^\\top\\)'
        '</span>, with \\tilde{f} in prose.</p><a href="../missing/">gone</a> <a href="#nowhere">here</a>'
        '</article></body></html>', encoding="utf-8")
    good = tmp_path / "good"
    good.mkdir()
    (good / "index.html").write_text('<html><body><article><p id="here">plain text</p>'
                                     '<a href="#here">ok</a> <a href="../bad/">ok</a></article></body></html>',
                                     encoding="utf-8")
    results = {r["url"]: r for r in render_all(tmp_path, ["bad/", "good/"])}
    problems = " | ".join(rendering_problems(results["/bad/"]))
    assert "none typeset" in problems and "formulas left untypeset" in problems
    assert "raw Sphinx role ':func:'" in problems and "raw TeX '\\\\tilde'" in problems
    assert rendering_problems(results["/good/"]) == []
    assert broken_links(tmp_path, "bad/") == ["../missing/ (no such page)", "#nowhere (no anchor #nowhere)"]
    assert broken_links(tmp_path, "good/") == []


@pytest.mark.slow
def test_pdf_of_the_theory_has_typeset_mathematics(rendered):
    """The printable page, printed by headless Chromium: a PDF whose fonts
    include MathJax's (the formulas were typeset before printing)."""
    import importlib.util

    site, results = rendered
    assert results["theory/print/"]["typeset"] > 100
    spec = importlib.util.spec_from_file_location("make_pdf", ROOT / "docs" / "scripts" / "make_pdf.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.make_pdf(site, ROOT / "build" / "allornone-theory.pdf", _chromium())
    data = out.read_bytes()
    assert data[:5] == b"%PDF-" and len(re.findall(rb"/Type\s*/Page[^s]", data)) > 20
    assert b"MathJax_Main" in data and b"MathJax_Math" in data
