"""``docs/tutorials/your_own_game.py`` is the code of the tutorial ``docs/tutorials/your-own-game.md``: its Python
blocks, in page order, joined by blank lines, under a docstring. ``tests/test_docs.py`` runs the page's blocks and
checks what they print; this test keeps the script the reader downloads the same code."""

from __future__ import annotations

import re
from pathlib import Path

TUTORIALS = Path(__file__).resolve().parents[1] / "docs" / "tutorials"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def test_the_script_is_the_pages_code() -> None:
    blocks = [code.rstrip("\n") for lang, code in FENCE.findall((TUTORIALS / "your-own-game.md").read_text()) if lang == "python"]
    script = (TUTORIALS / "your_own_game.py").read_text()
    assert script.startswith('"""'), "the script starts with its docstring"
    body = script.split('"""', 2)[2].lstrip("\n")
    assert len(blocks) >= 8 and body == "\n\n\n".join(blocks) + "\n", (
        "docs/tutorials/your_own_game.py differs from the Python blocks of your-own-game.md: regenerate it from the page")
