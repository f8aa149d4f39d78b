"""The README's set-up section, the site's set-up page, the Makefile and .ci/run say and do the same thing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SETUP = README.split("## Set up, run the demo, run the tests", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```bash\n(.*?)```", SETUP, re.S)
BY_HAND = re.findall(r"```shell\n(.*?)```", (ROOT / "docs" / "install.md").read_text().split("## By hand", 1)[1], re.S)[0]


def dry_run(target: str) -> str:
    """The commands ``make TARGET`` would run from scratch (``-B``: as if nothing were set up), without running them."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # --no-print-directory: under `make test` (CI) the outer make's flags would add "Entering directory" lines
    done = subprocess.run(["make", "-n", "-B", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout


def test_readme_leads_with_the_two_commands() -> None:
    commands = [line.split("#")[0].strip() for line in BLOCKS[0].splitlines()]
    assert commands == ["make demo", "make test"]


def test_make_demo_sets_up_then_runs_the_readme_demo() -> None:
    commands = dry_run("demo")
    assert "-m venv .venv" in commands
    assert "pip install -q torch==2.13.0" in commands
    assert 'pip install -q -e ".[dev,hanabi,ray,pettingzoo]"' in commands
    demo = next(line for line in commands.splitlines() if "eqc lever" in line)
    assert demo.endswith("eqc lever --seeds 0-7 --out runs/lever")
    assert "eqc lever --seeds 0-7 --out runs/lever" in BY_HAND  # the manual steps run the same demo


def test_make_test_runs_ruff_mypy_the_tests_and_the_slow_suites() -> None:
    commands = dry_run("test")
    assert "ruff check eqc tests benchmarks" in commands
    assert ".venv/bin/mypy\n" in commands
    assert "-m pytest -q -n 2\n" in commands
    assert "-m pytest -q -n 2 --runslow -m slow" in commands


def test_the_manual_steps_match_the_makefile() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "export CMAKE_POLICY_VERSION_MINIMUM := 3.5" in makefile
    extras = re.search(r'pip install -q -e "\.\[([a-z,]+)\]"', makefile).group(1)
    assert f'CMAKE_POLICY_VERSION_MINIMUM=3.5 pip install -e ".[{extras}]"' in BY_HAND
    assert "pip install torch==2.13.0" in BY_HAND


def test_ci_runs_what_make_test_runs_then_the_docs_then_escnn() -> None:
    script = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert script[-3:] == ["make test", "EQC_REQUIRE_BROWSER=1 make docs", "make test-escnn"]
    commands = dry_run("test-escnn")
    assert "-m venv .venv-escnn" in commands
    assert "EQC_REQUIRE_ESCNN=1 .venv-escnn/bin/python -m pytest" in commands and "-m escnn" in commands


def test_make_docs_sets_up_the_docs_extra_then_builds_strictly() -> None:
    commands = dry_run("docs")
    assert 'pip install -q -e ".[docs]"' in commands
    assert ".venv/bin/mkdocs build --strict" in commands
    assert commands.rstrip().endswith("EQC_SITE_DIR=site .venv/bin/python -m pytest -q -p no:xdist tests/test_site.py")
