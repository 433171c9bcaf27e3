"""Check that every relative link of the built HTML documentation resolves.

Usage: ``python docs/tools/check_links.py docs/_build/html``

For each ``href`` and ``src`` of every page that is not an absolute URL (``http:``,
``mailto:``, ...), the target file must exist under the build directory, and a ``#anchor``
must be an ``id`` (or ``name``) in the target page. External links are not followed (the
build machine has no internet). Exit status 1 lists every broken link.
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: pages written by Sphinx itself whose links are not the project's (search needs JS)
SKIP_PAGES = {"search.html", "genindex.html", "py-modindex.html"}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if value is None:
                continue
            if key in ("href", "src") and not (tag == "link" and key == "href"
                                                and dict(attrs).get("rel") == "canonical"):
                self.links.append(value)
            elif key == "id" or (key == "name" and tag == "a"):
                self.ids.add(value)


def parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def broken_links(root: Path) -> list[str]:
    """Every unresolved relative link under ``root``, as ``page: link (reason)``."""
    root = root.resolve()
    cache: dict[Path, _Links] = {}

    def get(path):
        if path not in cache:
            cache[path] = parse(path)
        return cache[path]

    problems = []
    pages = sorted(root.rglob("*.html"))
    if not pages:
        return [f"{root}: no HTML pages (was the documentation built?)"]
    for page in pages:
        if page.name in SKIP_PAGES or "_static" in page.parts or "_sources" in page.parts:
            continue
        for link in get(page).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue  # absolute: not followed offline
            if not parts.path:
                target = page
            else:
                target = (page.parent / unquote(parts.path)).resolve()
                if target.is_dir():
                    target = target / "index.html"
            rel = page.relative_to(root)
            if not target.exists():
                problems.append(f"{rel}: {link} (no such file)")
                continue
            if root not in target.parents and target != root:
                problems.append(f"{rel}: {link} (outside the build directory)")
                continue
            if parts.fragment and target.suffix == ".html":
                frag = unquote(parts.fragment)
                if frag not in get(target).ids:
                    problems.append(f"{rel}: {link} (no anchor #{frag})")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path, help="the HTML build directory")
    args = ap.parse_args(argv)
    problems = broken_links(args.build_dir)
    n_pages = sum(1 for _ in args.build_dir.rglob("*.html"))
    if problems:
        print(f"{len(problems)} broken internal links in {args.build_dir}:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"internal links: {n_pages} pages checked, every relative link and anchor resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
