"""MkDocs hooks: images of included result files (benchmarks/RESULTS.md) served from the site.

``benchmarks/RESULTS.md`` links its figures relative to ``benchmarks/``; the page that includes it
serves them under ``assets/benchmarks/`` so the site holds every figure it shows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
FIGURES = "benchmarks/results"
INCLUDES_BENCHMARKS = "results/benchmarks.md"


def on_files(files: Files, config: Any) -> Files:
    for path in sorted((ROOT / FIGURES).rglob("*.png")):
        src_uri = f"assets/{path.relative_to(ROOT).as_posix()}"
        files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == INCLUDES_BENCHMARKS:
        markdown = re.sub(r"\]\((results/[^)\s]+\.png)\)", r"](../assets/benchmarks/\1)", markdown)
    return markdown
