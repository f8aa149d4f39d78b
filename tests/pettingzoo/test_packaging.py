"""eqc imports without PettingZoo; the PettingZoo names say how to install it; the extra is declared and set up."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_the_core_never_imports_pettingzoo():
    result = _run(
        "import sys, eqc, eqc.pettingzoo, eqc.pettingzoo.examples; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pettingzoo', 'gymnasium', 'mpe2', 'shimmy')))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_without_pettingzoo_the_error_says_how_to_install_it():
    blocked = "import sys; sys.modules['pettingzoo'] = None; sys.modules['gymnasium'] = None\n"
    for line in ("from eqc.pettingzoo import other_play", "from eqc.pettingzoo import PettingZooDecPOMDP; PettingZooDecPOMDP(object())"):
        result = _run(blocked + line)
        assert result.returncode != 0 and "ImportError" in result.stderr
        assert 'needs PettingZoo: pip install -e ".[pettingzoo]"' in result.stderr


def test_the_extra_is_declared_and_installed_by_make_setup():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = " ".join(extras["pettingzoo"]).lower()
    assert "pettingzoo[classic]" in names and "mpe2" in names
    assert '".[dev,hanabi,ray,pettingzoo]"' in (ROOT / "Makefile").read_text()
