"""The README's section "Your own environment" runs as written, and its wrong declaration fails as it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _snippets() -> list[str]:
    section = README.read_text().split("## Your own environment", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_simple_spread_walkthrough_runs(capsys):
    pytest.importorskip("mpe2")
    code = _snippets()[0]
    namespace: dict = {}
    exec(compile(code, "README: your own environment", "exec"), namespace)
    out = capsys.readouterr().out
    assert "landmark permutations are a symmetry of simple_spread_v3" in out
    assert namespace["env"].relabelling.permutations.shape == (3, 3)


def test_the_wrong_declaration_fails_as_the_readme_says(capsys):
    pytest.importorskip("mpe2")
    code = _snippets()[0].replace('Block("landmarks", landmark, 2)', 'Block("landmarks", 2, landmark)')
    exec(compile(code, "README: your own environment, wrong", "exec"), {})
    out = capsys.readouterr().out.splitlines()[0]
    said = re.search(r"prints\s+`(observation differs .*?) \.\.\.\)`", README.read_text().replace("\n", " ")).group(1)
    assert out.startswith(said)


def test_hanabi_v5_snippet_runs(capsys):
    pytest.importorskip("pettingzoo")
    pytest.importorskip("pyspiel")
    exec(compile(_snippets()[1], "README: hanabi_v5", "exec"), {})
    assert "colour permutations are a symmetry of hanabi_v5" in capsys.readouterr().out
