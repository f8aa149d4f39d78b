"""The built documentation site works opened from disk, as the docs say to open it (``site/index.html``).

``mkdocs.yml`` builds links to ``.html`` files (``use_directory_urls: false``: a link to a folder opens a
directory listing from disk) and runs Material's offline plugin, which inlines the search index into
``search/search_index.js``; the iframe-worker shim that lets search start its worker from a ``file://``
page is vendored under ``docs/javascripts/iframe-worker/`` (named in ``extra.polyfills``). These tests
read a built site:

- the one named by ``EQC_SITE_DIR``: ``make docs`` builds ``site/`` and then runs this file on it (CI);
- else one they build themselves into a temporary folder (marked slow; skipped without ``mkdocs``, which
  the ``docs`` extra installs).

On it they check, from the HTML alone, that every link of every page resolves to a file (never to a
folder), every ``#anchor`` to an element of that page, that the search index and the shim are there and
loaded by every page, and that no page loads a script, a style sheet or a picture from the network.
With a real browser installed (Debian's ``chromium``; ``make docs`` installs it where ``apt-get`` can),
they open pages from disk in it, headless: a search finds pages, and the formulas render. Without one
those tests are skipped, unless ``EQC_REQUIRE_BROWSER=1`` (CI sets it), where a missing browser fails.
"""

from __future__ import annotations

import html.parser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Links to these are not files of the site (a repository on GitHub, a mail address, inline data).
EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")
SHIM = "javascripts/iframe-worker/shim.js"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The built site: ``EQC_SITE_DIR``, or a fresh build (slow) when mkdocs is installed."""
    given = os.environ.get("EQC_SITE_DIR")
    if given:
        path = Path(given).resolve()
        assert (path / "index.html").is_file(), f"EQC_SITE_DIR={given} holds no built site (no index.html)"
        return path
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (the docs extra); `make docs` builds the site and runs these tests")
    if not (request.config.getoption("--runslow", default=False) or os.environ.get("EQC_SLOW") == "1"):
        pytest.skip("building the site takes a minute: run with --runslow, or `make docs`")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


class _Page(html.parser.HTMLParser):
    """The links, loaded resources and element ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []  # <a href>: what a reader follows
        self.loads: list[tuple[str, str]] = []  # (tag, URL) of what the page loads itself
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v for k, v in attrs if v is not None}
        for key in ("id", "name"):
            if key in a:
                self.ids.add(a[key])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag in ("script", "img", "source", "iframe") and "src" in a:
            self.loads.append((tag, a["src"]))
        elif tag == "link" and "href" in a and ({"stylesheet", "icon", "preload", "modulepreload"}
                                                & set(a.get("rel", "").split())):
            self.loads.append((tag, a["href"]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def pages(site: Path) -> dict[Path, _Page]:
    """Every page a reader can open from disk: all but ``404.html``, the error page a web server sends for any
    missing path, whose links are therefore absolute (``/index.html``) and which no page links to."""
    return {path: _parse(path) for path in sorted(site.rglob("*.html")) if path != site / "404.html"}


def _target(site: Path, page: Path, url: str) -> tuple[Path, str] | None:
    """The file and fragment a relative ``url`` of ``page`` opens from disk (None for an external URL)."""
    if EXTERNAL.match(url):
        return None
    parts = urlsplit(url)
    path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    return path, unquote(parts.fragment)


def test_the_site_has_its_pages(pages: dict[Path, _Page], site: Path) -> None:
    names = {p.relative_to(site).as_posix() for p in pages}
    assert {"index.html", "install.html", "tutorials/your-own-game.html", "guides/troubleshooting.html",
            "reference/index.html"} <= names
    assert not any(name.endswith("/index.html") and name != "reference/index.html" for name in names), (
        "a page was built as a folder (directory URLs)")


def test_every_link_opens_a_file_from_disk(pages: dict[Path, _Page], site: Path) -> None:
    """Every link and loaded resource of every page names an existing file inside the site (no folder, which a
    browser opens as a directory listing from disk) and every ``#anchor`` an element of the page it names."""
    bad = []
    for page, parsed in pages.items():
        where = page.relative_to(site).as_posix()
        for url in [*parsed.links, *(u for _, u in parsed.loads)]:
            found = _target(site, page, url)
            if found is None:
                continue
            path, fragment = found
            if not path.is_relative_to(site):
                bad.append(f"{where}: {url} leaves the site")
            elif path.is_dir():
                bad.append(f"{where}: {url} is a folder (a directory listing from disk)")
            elif not path.is_file():
                bad.append(f"{where}: {url} does not exist")
            elif fragment and path.suffix == ".html" and fragment not in pages[path].ids:
                bad.append(f"{where}: {url}: no element with id {fragment!r} in {path.relative_to(site)}")
    assert not bad, f"{len(bad)} broken links, e.g.\n" + "\n".join(bad[:30])


def test_search_works_without_a_server(pages: dict[Path, _Page], site: Path) -> None:
    """The offline plugin's inlined index is there and every page loads the vendored worker shim from disk."""
    index = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert index.startswith("var __index = {") and '"docs":' in index
    assert (site / SHIM).is_file()
    missing = [p.relative_to(site).as_posix() for p, parsed in pages.items()
               if not any(tag == "script" and url.endswith(SHIM) for tag, url in parsed.loads)]
    assert not missing, f"pages that do not load the iframe-worker shim: {missing[:10]}"


def test_nothing_is_loaded_from_the_network(pages: dict[Path, _Page], site: Path) -> None:
    remote = [f"{p.relative_to(site)}: <{tag}> {url}" for p, parsed in pages.items() for tag, url in parsed.loads
              if EXTERNAL.match(url) and not url.startswith("data:")]
    assert not remote, "\n".join(remote[:20])


# ---------------------------------------------------------------------------------------------------- a real browser
def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    if os.environ.get("EQC_REQUIRE_BROWSER") == "1":
        pytest.fail("EQC_REQUIRE_BROWSER=1 but no chromium is installed (apt-get install chromium)")
    pytest.skip("no chromium installed: the site is checked in a browser where one is (make docs installs it)")


def _dom(url: str) -> str:
    """The DOM of ``url`` after its scripts ran, in headless chromium (10 s of virtual time)."""
    done = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--virtual-time-budget=10000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_search_from_disk_in_a_browser(site: Path) -> None:
    """``index.html?q=...`` opened from disk: Material runs the query on load and lists the pages found."""
    dom = _dom(f"{(site / 'index.html').as_uri()}?q=symmetrizer")
    meta = re.search(r'class="md-search-result__meta">(\d+) matching document', dom)
    assert meta and int(meta.group(1)) > 0, "search found nothing from disk"
    found = re.findall(r'<a href="([^"]+)" class="md-search-result__link"', dom)
    assert found and all(u.startswith("file://") and ".html" in u for u in found), found[:5]


def test_formulas_render_from_disk_in_a_browser(site: Path) -> None:
    dom = _dom((site / "index.html").as_uri())
    assert 'class="katex' in dom, "KaTeX rendered no formula on the home page"
