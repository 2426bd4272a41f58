"""Open every page of the built site in headless Chromium and check what a
reader sees at 1,280 px:

* a page that contains mathematics shows typeset formulas, and no raw TeX or
  raw Sphinx role (``:func:``) is visible outside code;
* the result pages show no formula in raw ASCII (``p_{f,g}``, ``f~``, ``A^T``,
  ``=>``, ``Γ_q``) outside typeset mathematics and code;
* nothing is cut off on the right: no element ends past the viewport, and no
  box is narrower than its content, unless it sits in a box that scrolls
  sideways;
* in every SVG figure (inline, or an image loaded on its own), no two texts
  overlap and every text lies inside the drawing (and a graph node's text
  inside its node);
* every internal link leads to an existing page and anchor.

The matplotlib figures are also checked where they are drawn: every image the
site shows is written by ``docs/figures/make_figures.py``, which refuses a
figure whose texts overlap, leave their axes or leave the figure
(``docs/figures/figure_layout.py``); those tests need matplotlib, not Chromium.

A screenshot of the home page, of every result page and of the figures is
kept under ``build/docs-screenshots`` as an artefact.

All pages are opened by one Chromium run: a small harness page, served with
the site, loads each page in turn in a frame, waits for MathJax, and writes
what it found into its own DOM, which Chromium dumps.

Skipped (with the reason) when Chromium or the docs prerequisites are absent.
"""
from __future__ import annotations

import functools
import html
import http.server
import importlib.util
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
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
FIGURES = ROOT / "docs" / "figures"
SCREENSHOT = ROOT / "build" / "docs-screenshots"
HARNESS = "allornone-harness.html"
#: The width at which nothing may be cut off.
VIEWPORT = 1280
#: Text that must not be visible outside code on a rendered page.
RAW_TEX = ("\\(", "\\)", "\\[", "\\]", "$$", "\\tilde", "\\frac", "\\begin", "\\mathsf", "\\operatorname",
           "\\top", "\\mathbb", "\\lambda", "\\Gamma")
RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj):")
NO_CHROMIUM = "Chromium not installed (apt-get install -y chromium)"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _chrome_cmd(profile: str, *args) -> list[str]:
    return [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
            f"--user-data-dir={profile}", *args]


def _chrome(*args, timeout=600):
    with tempfile.TemporaryDirectory(prefix="allornone-chromium-") as profile:
        return subprocess.run(_chrome_cmd(profile, *args), capture_output=True, text=True, timeout=timeout)


HARNESS_JS = r"""
<!doctype html><meta charset="utf-8"><body><pre id="out">running</pre>
<iframe id="f" width="%(width)d" height="900"></iframe><iframe id="g" width="%(width)d" height="900"></iframe>
<script>
const pages = %(pages)s;
const SKIP = "pre, code, kbd, samp, script, style, svg, mjx-container, mjx-assistive-mml, .arithmatex";
// Formulas written in ASCII instead of typeset: a TeX subscript or superscript,
// x_y or x^y, a transpose ^T, a density p_, an arrow or comparison spelt in
// ASCII, a tilde standing for an accent.
const RAW_ASCII = [["_{", /_\{/], ["^{", /\^\{/], ["^T", /\^T\b/], ["p_", /\bp_/],
                   ["=> <= <=> != -> spelt in ASCII", /<=>|=>|<=|!=|->/],
                   ["~", /~/], ["x_y", /[\p{L}\p{N})\]]_[\p{L}\p{N}(]/u], ["x^y", /[\p{L}\p{N})\]]\^[\p{L}\p{N}(\-]/u]];

function textNodes(doc, root) {
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const out = [];
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (el && !el.closest(SKIP)) out.push(walker.currentNode.nodeValue);
  }
  return out;
}
function article(doc) { return doc.querySelector("article") || doc.body; }
function untypeset(doc) {
  // arithmatex spans whose TeX MathJax did not replace
  return Array.from(doc.querySelectorAll(".arithmatex")).filter(e => !e.querySelector("mjx-container"))
              .map(e => e.textContent.slice(0, 80));
}
function rawAscii(doc) {
  const out = [];
  for (const text of textNodes(doc, article(doc))) {
    for (const [name, re] of RAW_ASCII) {
      const m = re.exec(text);
      if (m) out.push({pattern: name, text: text.slice(Math.max(0, m.index - 40), m.index + 40)});
    }
  }
  return out;
}
function describe(el) {
  const cls = typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "";
  return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + ": " +
         (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60);
}
function scrollsSideways(el, w) {
  const x = w.getComputedStyle(el).overflowX;
  return x === "auto" || x === "scroll";
}
function insideScroller(el, w, root) {
  for (let p = el.parentElement; p && p !== root.parentElement; p = p.parentElement) {
    if (scrollsSideways(p, w)) return true;
  }
  return false;
}
function visible(el, w) {
  if (el.closest("mjx-assistive-mml")) return false;  // MathML for screen readers, clipped to nothing by design
  const cs = w.getComputedStyle(el);
  if (cs.visibility === "hidden") return false;
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}
function cutOff(doc, w) {
  // What is cut off on the right: an element that ends past the viewport, or
  // whose content is wider than its box (scrollWidth > clientWidth) and sticks
  // out of it, unless a box that scrolls sideways holds it. Content sticking
  // out of a box that hides overflow is cut off; out of one that lets it show,
  // it is cut off where it runs past the content column (into the sidebar).
  const vw = doc.documentElement.clientWidth;
  const root = doc.querySelector(".md-content") || doc.body;
  const column = root.getBoundingClientRect().right;
  const out = [], scrolls = [];
  for (const el of root.querySelectorAll("*")) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;  // figures: see svgTextProblems
    if (!visible(el, w) || w.getComputedStyle(el).position === "fixed") continue;
    const r = el.getBoundingClientRect();
    const held = insideScroller(el, w, root);
    if (held) continue;
    if (r.right > vw + 1) out.push(`${describe(el)} ends at ${Math.round(r.right)} px > ${vw} px`);
    if (!(el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)) continue;
    const cs = w.getComputedStyle(el);
    if (scrollsSideways(el, w)) {
      scrolls.push(`${describe(el)} (${el.scrollWidth} px in ${el.clientWidth} px)`);
      // a display formula must fit: one that only shows all of itself when
      // scrolled reads as cut off (overlay scroll bars show nothing)
      if (el.matches("div.arithmatex, mjx-container[display='true']"))
        out.push(`${describe(el)}: a formula ${el.scrollWidth} px wide in a ${el.clientWidth} px box (it scrolls)`);
      continue;
    }
    const hides = cs.overflowX !== "visible";
    const edge = hides ? r.left + el.clientLeft + el.clientWidth + 1 : column + 1;
    // what sticks out: an element, or a run of text (measured with a Range)
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const d = walker.currentNode, host = d.nodeType === Node.TEXT_NODE ? d.parentElement : d;
      if (!visible(host, w) || (host.closest("svg") && host.tagName.toLowerCase() !== "svg")) continue;
      let scrolled = false;
      for (let p = d.parentElement; p && p !== el; p = p.parentElement) if (scrollsSideways(p, w)) { scrolled = true; break; }
      if (scrolled) continue;
      let dr;
      if (d.nodeType === Node.TEXT_NODE) {
        if (!d.nodeValue.trim()) continue;
        const range = doc.createRange();
        range.selectNodeContents(d);
        dr = range.getBoundingClientRect();
      } else dr = d.getBoundingClientRect();
      if (dr.width > 0 && dr.right > edge) {
        const what = d.nodeType === Node.TEXT_NODE ? `the text '${d.nodeValue.trim().slice(0, 60)}'` : describe(d);
        out.push(`${describe(el)}: content ${el.scrollWidth} px wide in a ${el.clientWidth} px box ` +
                 `(overflow-x ${cs.overflowX}) ` + (hides ? "cuts off " : "lets past the content column ") + what);
        break;
      }
    }
  }
  return {cut: out, scrolls: scrolls};
}
function label(el) {
  // a matplotlib SVG keeps each text's string in a comment inside its group
  for (const n of el.childNodes) if (n.nodeType === Node.COMMENT_NODE) return n.nodeValue.trim();
  return (el.textContent || el.id || el.tagName).replace(/\s+/g, " ").trim().slice(0, 40);
}
function svgTextProblems(svg) {
  const out = [];
  const texts = Array.from(svg.querySelectorAll("text, g[id^='text_']"))
    .filter(e => !e.parentElement.closest("text, g[id^='text_']"))
    .map(e => ({el: e, r: e.getBoundingClientRect()})).filter(t => t.r.width > 0 && t.r.height > 0);
  const box = svg.getBoundingClientRect();
  const eps = 0.5;
  for (const t of texts) {
    if (t.r.left < box.left - eps || t.r.right > box.right + eps || t.r.top < box.top - eps ||
        t.r.bottom > box.bottom + eps) out.push(`text '${label(t.el)}' leaves the drawing`);
    const node = t.el.closest(".node");
    const shape = node && node.querySelector("rect, polygon, ellipse");
    if (shape) {
      const s = shape.getBoundingClientRect();
      if (t.r.left < s.left - eps || t.r.right > s.right + eps || t.r.top < s.top - eps || t.r.bottom > s.bottom + eps)
        out.push(`text '${label(t.el)}' leaves its node`);
    }
  }
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i].r, b = texts[j].r;
      const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (dx > eps && dy > eps) out.push(`texts '${label(texts[i].el)}' and '${label(texts[j].el)}' overlap`);
    }
  }
  return {problems: out, texts: texts.length};
}
async function load(frame, url) {
  await new Promise(ok => { frame.onload = ok; frame.src = url; });
  const w = frame.contentWindow;
  if (w.MathJax && w.MathJax.startup && w.MathJax.startup.promise) { await w.MathJax.startup.promise; }
  if (w.document.fonts && w.document.fonts.ready) { await w.document.fonts.ready; }
  return w;
}
async function check(url) {
  const w = await load(document.getElementById("f"), url), doc = w.document;
  const figures = {};
  article(doc).querySelectorAll("svg").forEach((svg, i) => {
    if (svg.querySelector("text, g[id^='text_']")) figures[`inline svg ${i + 1}`] = svgTextProblems(svg);
  });
  const images = Array.from(article(doc).querySelectorAll("img")).map(img => img.src);
  for (const src of images.filter(s => /\.svg(\?|#|$)/.test(s))) {
    const g = await load(document.getElementById("g"), src);
    figures[src.replace(location.origin, "")] = svgTextProblems(g.document.documentElement);
  }
  const cut = cutOff(doc, w);
  return {url: url, math: doc.querySelectorAll(".arithmatex").length,
          typeset: doc.querySelectorAll("mjx-container").length,
          untypeset: untypeset(doc), text: textNodes(doc, article(doc)).join(" "), ascii: rawAscii(doc),
          cut: cut.cut, scrolls: cut.scrolls, figures: figures,
          images: images.map(s => s.replace(location.origin, ""))};
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
    (site / HARNESS).write_text(HARNESS_JS % {"pages": json.dumps(["/" + u for u in urls]), "width": VIEWPORT},
                                encoding="utf-8")
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        dom = _chrome(f"--virtual-time-budget={30000 + 8000 * len(urls)}", f"--window-size={VIEWPORT + 40},1000",
                      "--dump-dom", f"{base}/{HARNESS}").stdout
    finally:
        httpd.shutdown()
        (site / HARNESS).unlink()
    m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert m and m.group(1) != "running", "the harness did not finish: " + dom[-500:]
    return json.loads(html.unescape(m.group(1)))


def rendering_problems(result: dict) -> list[str]:
    """What is wrong with the mathematics and markup of one rendered page (empty when nothing)."""
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


def ascii_problems(result: dict) -> list[str]:
    """Formulas in raw ASCII visible outside typeset mathematics and code."""
    return [f"raw ASCII {a['pattern']!r}: ...{a['text']}..." for a in result.get("ascii", [])]


def cutoff_problems(result: dict) -> list[str]:
    """Content cut off on the right (or spilling out of its box) at :data:`VIEWPORT` px."""
    return list(result.get("cut", []))


def figure_problems(result: dict) -> list[str]:
    """Overlapping texts, or texts outside their drawing, in the page's SVG figures."""
    return [f"{fig}: {p}" for fig, found in result.get("figures", {}).items() for p in found["problems"]]


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


def _result_pages(results: dict) -> list[str]:
    return [u for u in results if u.startswith("results/")]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if _chromium() is None:
        pytest.skip(NO_CHROMIUM)
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


def test_result_pages_show_no_formula_in_raw_ascii(rendered):
    site, results = rendered
    pages = _result_pages(results)
    assert len(pages) == len(list((test_docs.DOCS / "results").glob("*.md")))
    problems = {u: p for u in pages if (p := ascii_problems(results[u]))}
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


def test_nothing_is_cut_off_at_1280_px(rendered):
    site, results = rendered
    problems = {u: p for u, r in results.items() if (p := cutoff_problems(r))}
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


def test_no_text_overlaps_or_leaves_an_svg_figure(rendered):
    site, results = rendered
    # the texts of each figure were found and measured
    home = results[""]["figures"]["/figures/generated/equivalent-models.svg"]
    graph = results["dependency-graph/"]["figures"]["inline svg 1"]
    assert home["texts"] >= 20 and graph["texts"] >= 30, (home["texts"], graph["texts"])
    problems = {u: p for u, r in results.items() if (p := figure_problems(r))}
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


def test_every_image_is_drawn_and_checked_by_the_figure_scripts(rendered):
    """An image the site shows is one ``make_figures.main`` writes (and so
    checks); a picture copied in by hand would escape the layout checks."""
    site, results = rendered
    shown = {urlsplit(src).path for r in results.values() for src in r.get("images", [])}
    generated = {f"/figures/generated/{name}" for name in _figure_module().OUTPUTS}
    assert shown, "no page shows an image"
    assert shown <= generated, sorted(shown - generated)


def test_every_internal_link_resolves(rendered):
    site, results = rendered
    broken = {u: b for u in results if (b := broken_links(site, u))}
    assert not broken, json.dumps(broken, indent=1)


@pytest.mark.slow   # a record to look at, not a check: the checks above read the same pages
def test_screenshots_of_the_home_page_result_pages_and_figures(rendered):
    site, results = rendered
    SCREENSHOT.mkdir(parents=True, exist_ok=True)
    pages = ["", *_result_pages(results), "constructions/", "dependency-graph/", "real-models/"]
    shots = {u: SCREENSHOT / ((u.strip("/").replace("/", "-") or "home") + ".png") for u in pages}
    targets = {u: (site / u / "index.html").resolve().as_uri() for u in pages}
    for svg in sorted((site / "figures" / "generated").glob("*.svg")):
        shots[svg.name] = SCREENSHOT / f"figure-{svg.stem}.png"
        targets[svg.name] = svg.resolve().as_uri()
    names = list(shots)
    # a few browsers at a time: each mostly waits for MathJax
    with tempfile.TemporaryDirectory(prefix="allornone-chromium-") as profiles:
        for batch in range(0, len(names), 3):
            procs = [subprocess.Popen(_chrome_cmd(f"{profiles}/{i}", f"--window-size={VIEWPORT},2400",
                                                  "--virtual-time-budget=15000", f"--screenshot={shots[u]}",
                                                  targets[u]),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for i, u in enumerate(names[batch:batch + 3], batch)]
            for proc in procs:
                proc.wait(timeout=180)
    for u, shot in shots.items():
        assert shot.is_file() and shot.stat().st_size > 10_000, u


# -- the checks fail where they must ---------------------------------------------------------------------------------

#: A page with every problem the checks look for, and the same content done right.
BAD_PAGE = """<html><body><div class="md-content"><article>
<p>See :func:<code>check</code> and <span class="arithmatex">\\(L = F G_0^\\top\\)</span>, with \\tilde{f} in prose.</p>
<p>Then p_{f,g} = p_{f~,g~} holds, and A^T B => P_M.</p>
<a href="../missing/">gone</a> <a href="#nowhere">here</a>
<div style="width: 2000px">a block wider than the page</div>
<div style="width: 200px; overflow: hidden; white-space: nowrap">a line of text cut off by a box that hides it</div>
<svg width="300" height="100" viewBox="0 0 300 100" font-size="14">
  <text x="10" y="40">first label</text><text x="30" y="45">second label</text>
  <text x="280" y="90">outside</text>
  <a class="node"><rect x="150" y="5" width="30" height="20"/><text x="152" y="20">a long node name</text></a>
</svg>
<img src="bad.svg">
</article></div></body></html>"""
BAD_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100">
<g id="text_1"><!-- M --><text x="100" y="50" font-size="14">M</text></g>
<g id="text_2"><!-- N --><text x="102" y="52" font-size="14">N</text></g></svg>"""
GOOD_PAGE = """<html><body><div class="md-content"><article><p id="here">plain text, and <code>p_{f,g} =&gt; f~</code>
in code</p><pre>A^T B =&gt; P_M</pre><mjx-container>f~</mjx-container>
<a href="#here">ok</a> <a href="../bad/">ok</a>
<div style="overflow-x: auto"><div style="width: 2000px">a wide block that scrolls in its own box</div></div>
<svg width="300" height="100" viewBox="0 0 300 100" font-size="14">
  <text x="10" y="40">first label</text><text x="10" y="80">second label</text>
  <a class="node"><rect x="150" y="5" width="130" height="20"/><text x="152" y="20">a node name</text></a>
</svg><img src="good.svg"></article></div></body></html>"""
GOOD_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" viewBox="0 0 300 100">
<g id="text_1"><!-- M --><text x="100" y="30" font-size="14">M</text></g>
<g id="text_2"><!-- N --><text x="100" y="80" font-size="14">N</text></g></svg>"""


def test_the_checks_fail_on_a_planted_bad_page(tmp_path):
    """A page with a formula and no MathJax, a raw role, raw TeX and raw ASCII
    in prose, a broken link, content cut off on the right, and SVG figures
    with overlapping texts: each check must see its problem, and none on the
    same content done right."""
    if _chromium() is None:
        pytest.skip(NO_CHROMIUM)
    for name, page, svg in (("bad", BAD_PAGE, BAD_SVG), ("good", GOOD_PAGE, GOOD_SVG)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.html").write_text(page, encoding="utf-8")
        (tmp_path / name / f"{name}.svg").write_text(svg, encoding="utf-8")
    results = {r["url"]: r for r in render_all(tmp_path, ["bad/", "good/"])}
    bad, good = results["/bad/"], results["/good/"]
    problems = " | ".join(rendering_problems(bad))
    assert "none typeset" in problems and "formulas left untypeset" in problems
    assert "raw Sphinx role ':func:'" in problems and "raw TeX '\\\\tilde'" in problems
    ascii_found = " | ".join(ascii_problems(bad))
    for pattern in ("'_{'", "'~'", "'^T'", "'p_'", "'=> <= <=> != -> spelt in ASCII'", "'x_y'"):
        assert f"raw ASCII {pattern}" in ascii_found, (pattern, ascii_found)
    cut = " | ".join(cutoff_problems(bad))
    assert "a block wider than the page" in cut and "ends at 2" in cut, cut
    assert "a line of text cut off" in cut and "(overflow-x hidden)" in cut, cut
    figures = figure_problems(bad)
    assert "inline svg 1: texts 'first label' and 'second label' overlap" in figures, figures
    assert "inline svg 1: text 'outside' leaves the drawing" in figures, figures
    assert "inline svg 1: text 'a long node name' leaves its node" in figures, figures
    assert "/bad/bad.svg: texts 'M' and 'N' overlap" in figures, figures
    for check in (rendering_problems, ascii_problems, cutoff_problems, figure_problems):
        assert check(good) == [], (check.__name__, check(good))
    assert set(good["figures"]) == {"inline svg 1", "/good/good.svg"}
    assert good["scrolls"], "the box that scrolls sideways was not seen"
    assert broken_links(tmp_path, "bad/") == ["../missing/ (no such page)", "#nowhere (no anchor #nowhere)"]
    assert broken_links(tmp_path, "good/") == []


# -- matplotlib figures, checked where they are drawn (no Chromium) ----------------------------------------------------

def _figure_module(name: str = "make_figures"):
    pytest.importorskip("matplotlib", reason="matplotlib not installed (pip install -r requirements-docs.txt)")
    spec = importlib.util.spec_from_file_location(f"allornone_docs_{name}", FIGURES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(FIGURES))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(FIGURES))
    return mod


def test_the_layout_check_flags_overlapping_and_escaping_labels():
    layout = _figure_module("figure_layout")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(6, 3))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.annotate("M", (0.5, 0.5))
    ax.annotate("N", (0.505, 0.505))          # printed over "M"
    ax.text(1.3, 0.5, "far label")             # outside its axes
    ax2.text(2.5, 0.5, "off the figure")       # outside the figure
    ax2.set_title("a title long enough to run into the title of its neighbour")
    ax.set_title("left title")
    problems = " | ".join(layout.text_problems(fig))
    plt.close(fig)
    assert "'M' and 'N' overlap" in problems, problems
    assert "'far label' leaves its axes" in problems, problems
    assert "'off the figure' leaves the figure" in problems, problems
    assert "'left title' and 'a title long enough" in problems, problems

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.annotate("M", (0.2, 0.2))
    ax.annotate("N", (0.7, 0.7))
    ax.set_title("fine")
    fig.tight_layout()
    assert layout.text_problems(fig) == []
    with pytest.raises(layout.LayoutError, match="'M' and 'N' overlap"):
        ax.annotate("N", (0.2, 0.2))
        layout.check(fig, "planted")
    plt.close(fig)


def test_the_site_figures_pass_the_layout_check(tmp_path):
    """Every figure of the site drawn as the build draws it: ``main`` checks
    each matplotlib figure before saving it, so it returns only when all pass."""
    figs = _figure_module()
    written = figs.main(tmp_path, graph=False)
    assert {p.name for p in written} == set(figs.MATPLOTLIB_FIGURES)
    assert all(p.stat().st_size > 10_000 for p in written)


def test_a_figure_with_colliding_labels_is_not_saved(tmp_path):
    figs = _figure_module()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.annotate("M", (0.5, 0.5))
    ax.annotate("N", (0.5, 0.5))
    with pytest.raises(ValueError, match="figure bad.svg: 'M' and 'N' overlap"):
        figs.save(fig, tmp_path / "bad.svg")
    assert not (tmp_path / "bad.svg").exists()


@pytest.mark.slow
def test_pdf_of_the_theory_has_typeset_mathematics(rendered):
    """The printable page, printed by headless Chromium: a PDF whose fonts
    include MathJax's (the formulas were typeset before printing)."""
    site, results = rendered
    assert results["theory/print/"]["typeset"] > 100
    spec = importlib.util.spec_from_file_location("make_pdf", ROOT / "docs" / "scripts" / "make_pdf.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.make_pdf(site, ROOT / "build" / "allornone-theory.pdf", _chromium())
    data = out.read_bytes()
    assert data[:5] == b"%PDF-" and len(re.findall(rb"/Type\s*/Page[^s]", data)) > 20
    assert b"MathJax_Main" in data and b"MathJax_Math" in data
