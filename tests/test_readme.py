"""The README is a front door: short, its quick start runs as written, its links lead somewhere.

Its ``eqc`` command lines are parsed with the site's in ``tests/test_docs.py``; the set-up section is
checked against the Makefile in ``tests/test_setup.py``.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_quick_start_runs_and_is_short(capsys):
    text = README.read_text()
    section = text.split("## Quick start", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) < 20
    exec(compile(code, "README quick start", "exec"), {})
    out = capsys.readouterr().out
    error = float(out.strip().rsplit(" ", 1)[1])
    assert error < 1e-12


def test_the_readme_is_short_and_leads_into_the_site():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:3] == ["Set up, run the demo, run the tests", "Quick start: declare a symmetry, symmetrize a network, check it",
                            "The main demo: the lever game"]
    assert {"Hanabi", "Reproducing the paper", "PettingZoo and your own environment"} <= set(headings)
    for heading in ("## Hanabi", "## Reproducing the paper", "## PettingZoo"):  # each paragraph links into the site
        assert "](docs/" in text.split(heading, 1)[1].split("\n## ", 1)[0], heading


def test_every_relative_link_leads_to_a_file():
    """Links are relative paths to files in the repository, so they work on GitHub as in a clone."""
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    relative = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert relative and all((ROOT / t).is_file() for t in relative), [t for t in relative if not (ROOT / t).is_file()]


def test_the_lever_demo_is_what_make_demo_runs():
    section = README.read_text().split("## The main demo", 1)[1]
    command = re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip()
    assert command == "eqc lever --seeds 0-7 --out runs/lever"
    assert f"$(VENV)/bin/{command}" in (ROOT / "Makefile").read_text()


def test_the_lever_table_is_what_the_demo_prints(tmp_path, capsys):
    """The README's lever table (notes aside) is the demo's output, not numbers typed in."""
    torch = pytest.importorskip("torch")
    from eqc.cli import main

    section = README.read_text().split("## The main demo", 1)[1]
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    threads = torch.get_num_threads()
    try:
        assert main(["lever", "--seeds", "0-7", "--out", str(tmp_path / "lever"), "--no-progress"]) == 0
    finally:
        torch.set_num_threads(threads)
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    printed = [cells for cells in printed if cells and cells[0] in {"rule", "sp", "op", "gop", "eq", "sp+sym"}]
    table = [line.split() for line in shown.strip().splitlines()]
    assert [cells[:4] for cells in printed] == [cells[:4] for cells in table]
