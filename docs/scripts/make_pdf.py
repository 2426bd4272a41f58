"""Print the Theory section of the built site to a PDF with headless Chromium.

    python docs/scripts/make_pdf.py [--site SITE_DIR] [--out PDF]

The page printed is ``theory/print/`` of the built site: every Theory page
(setting and definitions, facts, each result with its proof, steps, edge cases
and worked example), assembled from the same Markdown sources when the site is
built, with its mathematics typeset by MathJax before printing. Without
Chromium the script says so and exits 0 (the PDF is an optional artefact).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str | None:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def make_pdf(site: Path, out: Path, browser: str, timeout: int = 180) -> Path:
    page = site / "theory" / "print" / "index.html"
    if not page.is_file():
        raise SystemExit(f"error: {page} not found; build the site first (mkdocs build)")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
           "--run-all-compositor-stages-before-draw", "--virtual-time-budget=60000",
           f"--print-to-pdf={out}", page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not out.is_file() or out.read_bytes()[:5] != b"%PDF-":
        raise SystemExit(f"error: Chromium wrote no PDF ({proc.stderr.strip()[-300:]})")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=ROOT / "site")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "allornone-theory.pdf")
    args = ap.parse_args(argv)
    browser = chromium()
    if browser is None:
        print("skipped: Chromium not found (apt-get install chromium); no PDF written")
        return 0
    out = make_pdf(args.site, args.out, browser)
    print(f"{out} ({out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
