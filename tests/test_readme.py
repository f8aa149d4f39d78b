"""The README's quick start runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quick_start_runs_and_is_short(capsys):
    text = README.read_text()
    section = text.split("## Quick start", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) < 20
    exec(compile(code, "README quick start", "exec"), {})
    out = capsys.readouterr().out
    error = float(out.strip().rsplit(" ", 1)[1])
    assert error < 1e-12


def test_hanabi_declaration_check_finds_the_deliberate_mistake(capsys):
    import pytest

    pytest.importorskip("hanabi_learning_environment")
    section = README.read_text().split("## Hanabi", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README Hanabi check", "exec"), {})
    assert "block 'discards'" in capsys.readouterr().out


def _section_code(heading: str) -> str:
    section = README.read_text().split(heading, 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_batched_hanabi_example_runs(capsys):
    exec(compile(_section_code("### Batched Hanabi in torch"), "README batched Hanabi", "exec"), {})
    assert "mean score of random play" in capsys.readouterr().out


def test_evaluation_example_runs(capsys, tmp_path, monkeypatch):
    import pytest

    pytest.importorskip("hanabi_learning_environment")
    monkeypatch.chdir(tmp_path)
    exec(compile(_section_code("## Evaluation: cross-play"), "README evaluation", "exec"), {})
    out = capsys.readouterr().out
    assert "sem_unordered" in out and "(permutation, exact; 3 vs 3 unordered pairs, smallest attainable p 0.05)" in out
    assert (tmp_path / "rule_agent_actions.png").exists()


@pytest.mark.parametrize(("heading", "at_least"), [("## Training Hanabi agents", 4), ("## Reproducing the paper", 4),
                                                   ("#### The paper's claims where colour conventions exist", 2)])
def test_hanabi_commands_parse(monkeypatch, heading, at_least):
    """Every ``eqc`` line of the README's training and reproduction sections is a valid command line (parsed, not run)."""
    import shlex

    from eqc.cli import build_parser

    monkeypatch.chdir(README.parent)
    section = README.read_text().split(heading, 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("eqc ")]
    assert len(lines) >= at_least
    import torch

    for line in lines:
        if not torch.cuda.is_available():
            line = line.replace("--device cuda", "--device cpu")  # the flag is refused up front without CUDA
        build_parser().parse_args(shlex.split(line)[1:])
