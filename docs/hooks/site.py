"""MkDocs hooks: the pictures the reproduction commands wrote, served from the site.

- ``benchmarks/RESULTS.md`` links its figures relative to ``benchmarks/``; the page that includes it
  serves them under ``assets/benchmarks/`` so the site holds every figure it shows.
- A page links a picture committed under ``results/`` (a cross-play heatmap ``xp.png``, an action matrix
  ``actions.png``, a learning curve) by its path in the repository, relative to the page, so that the
  page shows it on GitHub too: ``![...](../../results/cpu/xp/table2/sad/xp.png)`` from a page one folder
  below ``docs/``. The site serves that picture as ``assets/results/<its path under results/>`` and the
  link is rewritten to it; only the pictures some page links are copied, and a link to a picture that
  does not exist fails the strict build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
FIGURES = "benchmarks/results"
RESULTS = ROOT / "results"
#: A Markdown link to a picture under the repository's results/, relative to a page under docs/.
RESULT_PICTURE = re.compile(r"\]\(((?:\.\./)+)results/([^)\s\"']+\.png)\)")
INCLUDES_BENCHMARKS = "results/benchmarks.md"


def _linked(page: Path) -> set[str]:
    """The pictures under results/ that ``page`` links by their path from the page (relative to results/)."""
    depth = len(page.relative_to(ROOT / "docs").parts)  # a page directly in docs/ climbs one folder to the root
    return {name for up, name in RESULT_PICTURE.findall(page.read_text()) if up == "../" * depth}


def on_files(files: Files, config: Any) -> Files:
    for path in sorted((ROOT / FIGURES).rglob("*.png")):
        src_uri = f"assets/{path.relative_to(ROOT).as_posix()}"
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    linked = {name for page in (ROOT / "docs").rglob("*.md") for name in _linked(page)}
    for name in sorted(linked):
        if (RESULTS / name).is_file():
            files.append(File.generated(config, f"assets/results/{name}", abs_src_path=str(RESULTS / name)))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == INCLUDES_BENCHMARKS:
        markdown = re.sub(r"\]\((results/[^)\s]+\.png)\)", r"](../assets/benchmarks/\1)", markdown)
    depth = page.file.src_uri.count("/")
    to_root, to_docs = "../" * (depth + 1), "../" * depth

    def to_asset(match: re.Match[str]) -> str:
        up, name = match.groups()
        return f"]({to_docs}assets/results/{name})" if up == to_root else match.group(0)

    return RESULT_PICTURE.sub(to_asset, markdown)
