"""Render pages of the built documentation with headless Chromium and check them.

Usage: ``python docs/tools/render_check.py docs/_build/html --out docs/_build/render``

Serves the build directory on a 127.0.0.1 port, and for each page of :data:`PAGES` (the
landing page, a user-guide page, a gallery example and an API page) takes a PNG screenshot
and the DOM after scripts ran. A page fails when the screenshot is nearly uniform (blank,
or an unstyled error page), when one of its expected headings is missing from the DOM, or
when one of its expected images did not load. Chromium is Debian's ``chromium`` package;
when it is missing and this runs as root (as CI does), it is installed with apt.
Exit status 1 lists the failures; the PNGs stay in ``--out`` for a person to look at.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

#: page -> (headings that must appear as h1/h2/h3 text, images that must be served,
#: strings the DOM must contain once the page's scripts ran)
PAGES = {
    "index.html": (["semisup: learning from few labels with structure"], [], []),
    "user_guide/lapsvm.html": (
        ["LapSVM and LapRLS trained in the primal", "The model", "Known limits (as measured)"],
        [], ["<mjx-container"]),   # MathJax (served locally) typeset the formulas
    "auto_examples/plot_lapsvm_pcg_iterations.html": (
        ["LapSVM decision boundaries after k PCG iterations"],
        ["sphx_glr_plot_lapsvm_pcg_iterations_001.png"], []),
    "generated/semisup.LapSVM.html": (["LapSVM", "Examples using LapSVM"], [],
                                      ["gamma_A"]),
}

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1280,1400",
]

# let the page's scripts (the theme's navigation, MathJax) finish before the DOM dump
_SETTLE = "--virtual-time-budget=10000"


def find_chromium(install: bool = True) -> str:
    """The Chromium executable, installed with apt when missing and running as root."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if install and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        print("chromium missing: apt-get install -y chromium", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
        return find_chromium(install=False)
    raise SystemExit("chromium not found: install Debian's 'chromium' package "
                     "(apt-get install -y chromium, as root)")


class _Dom(HTMLParser):
    """Heading texts and the <img> elements of a DOM dump."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self.images: list[dict] = []
        self._in = None
        self._buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2", "h3"):
            self._in, self._buf = tag, []
        elif tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        if tag == self._in:
            text = " ".join("".join(self._buf).split())
            self.headings.append(text.rstrip("#¶ ").strip())
            self._in = None

    def handle_data(self, data):
        if self._in:
            self._buf.append(data)


def _serve(root: Path):
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _chromium(exe, args, user_dir, timeout=120):
    cmd = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={user_dir}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def png_spread(path: Path) -> tuple[float, float]:
    """(fraction of pixels away from the most common colour, luminance std) of a PNG."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(path)[..., :3]
    q = np.round(img * 255).astype(np.int32)
    codes = (q[..., 0] << 16) | (q[..., 1] << 8) | q[..., 2]
    _, counts = np.unique(codes, return_counts=True)
    lum = img @ np.array([0.299, 0.587, 0.114])
    return 1.0 - counts.max() / codes.size, float(lum.std())


def check_page(exe, base_url, page, headings, images, contains, out: Path) -> list[str]:
    problems = []
    url = f"{base_url}/{page}"
    png = out / (page.replace("/", "__").removesuffix(".html") + ".png")
    with tempfile.TemporaryDirectory(prefix="semisup-chromium-") as user_dir:
        shot = _chromium(exe, [f"--screenshot={png}", url], user_dir)
    if not png.exists():
        return [f"{page}: no screenshot (chromium exit {shot.returncode}: "
                f"{shot.stderr.strip()[-300:]})"]
    spread, std = png_spread(png)
    if spread < 0.02 or std < 0.02:
        problems.append(f"{page}: blank-looking screenshot {png} (non-background pixels "
                        f"{spread:.1%}, luminance std {std:.3f})")
    with tempfile.TemporaryDirectory(prefix="semisup-chromium-") as user_dir:
        dump = _chromium(exe, ["--dump-dom", _SETTLE, url], user_dir)
    dom = _Dom()
    dom.feed(dump.stdout)
    for h in headings:
        if h not in dom.headings:
            problems.append(f"{page}: heading {h!r} missing (found {dom.headings[:8]})")
    for text in contains:
        if text not in dump.stdout:
            problems.append(f"{page}: {text!r} not in the rendered DOM")
    srcs = [img.get("src", "") for img in dom.images]
    for name in images:
        hits = [s for s in srcs if s.endswith(name)]
        if not hits:
            problems.append(f"{page}: image {name} not on the page")
        for s in hits:  # the file must be served
            rel = (Path(page).parent / s).as_posix()
            try:
                with urllib.request.urlopen(f"{base_url}/{rel}", timeout=10) as r:
                    if r.status != 200 or not r.read().startswith(b"\x89PNG"):
                        problems.append(f"{page}: image {s} is not a PNG")
            except OSError as exc:
                problems.append(f"{page}: image {s} not served ({exc})")
    print(f"{page}: screenshot {png} ({spread:.0%} non-background pixels), "
          f"{len(dom.headings)} headings, {len(dom.images)} images")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path, help="the HTML build directory")
    ap.add_argument("--out", type=Path, default=Path("docs/_build/render"),
                    help="where the screenshots go")
    args = ap.parse_args(argv)
    root = args.build_dir.resolve()
    missing = [p for p in PAGES if not (root / p).exists()]
    if missing:
        print(f"pages not built: {missing} (run `make docs` first)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    exe = find_chromium()
    server = _serve(root)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    problems = []
    try:
        for page, (headings, images, contains) in PAGES.items():
            problems += check_page(exe, base, page, headings, images, contains,
                                   args.out.resolve())
    finally:
        server.shutdown()
        server.server_close()
    if problems:
        print(f"{len(problems)} rendering problems:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"rendered {len(PAGES)} pages: none blank, every expected heading and image present")
    return 0


if __name__ == "__main__":
    sys.exit(main())
