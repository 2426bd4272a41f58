"""Render a proof page of the built site in headless Chromium and check that
the mathematics was typeset: MathJax output present, no raw TeX left.

Skipped (with the reason) when Chromium or the docs prerequisites are absent.
"""
from __future__ import annotations

import functools
import html
import http.server
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

try:
    import test_docs
except ImportError:  # collected with a rootdir-based import mode
    from tests import test_docs

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "build" / "docs-screenshots"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if _chromium() is None:
        pytest.skip("Chromium not installed (apt-get install -y chromium)")
    built_site = test_docs.site_or_skip(tmp_path_factory)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built_site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _chrome(*args, timeout=90):
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=20000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _visible_text(dom: str) -> str:
    body = dom.split("<body", 1)[1]
    body = re.sub(r"<(script|style|mjx-assistive-mml)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r"<[^>]+>", " ", body)
    return html.unescape(body)


def test_proof_page_math_is_typeset(server):
    url = f"{server}/results/thm5/"
    dom = _chrome("--dump-dom", url).stdout
    assert "<mjx-container" in dom, "MathJax produced no output"
    text = _visible_text(dom)
    for raw in ("\\(", "\\)", "$$", "\\[", "\\tilde", "\\top"):
        assert raw not in text, f"raw TeX {raw!r} left in the rendered page"
    SCREENSHOT.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOT / "thm5.png"
    _chrome("--window-size=1200,1600", f"--screenshot={shot}", url)
    assert shot.is_file() and shot.stat().st_size > 10_000
