"""MkDocs hooks: the pictures the reproduction commands wrote, served from the site.

- ``benchmarks/RESULTS.md`` links its figures relative to ``benchmarks/``; the page that includes it
  serves them under ``assets/benchmarks/`` so the site holds every figure it shows.
- A page links a picture committed under ``results/`` (a cross-play heatmap ``xp.png``, an action matrix
  ``actions.png``, a learning curve) as ``assets/results/<its path under results/>``, relative to the
  page: ``![...](../assets/results/cpu/xp/table2/sad/xp.png)``. Only the pictures some page links are
  copied into the site; a link to a picture that does not exist fails the strict build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
FIGURES = "benchmarks/results"
RESULTS = ROOT / "results"
RESULT_PICTURE = re.compile(r"assets/results/([^)\s\"']+\.png)")
INCLUDES_BENCHMARKS = "results/benchmarks.md"


def on_files(files: Files, config: Any) -> Files:
    for path in sorted((ROOT / FIGURES).rglob("*.png")):
        src_uri = f"assets/{path.relative_to(ROOT).as_posix()}"
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    linked = {m for page in (ROOT / "docs").rglob("*.md") for m in RESULT_PICTURE.findall(page.read_text())}
    for name in sorted(linked):
        if (RESULTS / name).is_file():
            files.append(File.generated(config, f"assets/results/{name}", abs_src_path=str(RESULTS / name)))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == INCLUDES_BENCHMARKS:
        markdown = re.sub(r"\]\((results/[^)\s]+\.png)\)", r"](../assets/benchmarks/\1)", markdown)
    return markdown
