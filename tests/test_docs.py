"""The documentation site says what the code does.

- Every ```python and ```bash block of a page under ``docs/`` runs, in page order, as one script, in a
  scratch directory where ``results/`` and ``configs/`` are the repository's: the Python blocks share one
  namespace; a bash block of ``eqc`` command lines runs each through :func:`eqc.cli.main` in this process
  (the code of the ``eqc`` executable, without starting an interpreter per line), any other bash block
  runs with ``bash -euo pipefail``. A ```shell block is shown, not run (a long run); its ``eqc`` lines
  are still parsed by ``eqc``'s own parser, as are those of the README.
- A ```text title="Output" block right after a block that runs is what that block prints (its stdout),
  checked line by line; ``...`` stands for any text (timings, paths, round-off digits). Every number is checked by
  its value (:func:`matches`): an integer exactly, a number with a decimal point or an exponent to within one unit of
  its last shown digit (0.01 for ``8.58``, 1e-10 for ``1e-10``), so an output printed by the same code on another CPU
  matches where only the last digit's rounding differs. The pages pin what they run to fp32, so the same games are
  played on every CPU (a bf16 run prints other numbers). Every block of a tutorial that runs is followed by its
  output. A page's torch thread count is restored after it, so no page sets another's.
- The API reference documents every name in the ``__all__`` of each subpackage it covers.

The site itself is built by ``make docs`` (``mkdocs build --strict``), not here.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
#: A block's info string, for the ```text title="Output" blocks.
FENCE_INFO = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
OUTPUT = ("text", 'title="Output"')
RUN = ("python", "bash")
#: What each page's code needs beyond eqc's core (skipped without it).
REQUIRES = {
    "tutorials/declare-a-symmetry.md": ["hanabi_learning_environment", "pettingzoo", "mpe2", "pyspiel"],
    "tutorials/train-hanabi.md": ["hanabi_learning_environment"],
    "tutorials/reproduce-a-table.md": ["hanabi_learning_environment"],
}


def code_blocks(path: Path) -> list[tuple[str, str]]:
    """The fenced blocks of a Markdown file as (language, code), in order."""
    return FENCE.findall(path.read_text())


def section_code(path: Path, heading: str, lang: str = "python") -> str:
    """The first ``lang`` block after ``heading`` in ``path``."""
    section = path.read_text().split(heading, 1)[1]
    return next(code for language, code in FENCE.findall(section) if language == lang)


PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if any(lang in RUN for lang, _ in code_blocks(p)))


def test_the_tutorials_have_code_that_runs() -> None:
    assert {f"tutorials/{name}.md" for name in ("declare-a-symmetry", "symmetrize-a-network", "train-hanabi",
                                                "reproduce-a-table", "learn-a-symmetry")} <= set(PAGES)


def runs_with_outputs(path: Path) -> list[tuple[int, str, str, str | None]]:
    """The blocks of ``path`` that run, as (index, language, code, the output shown after it or None)."""
    blocks = [(lang, info.strip(), code) for lang, info, code in FENCE_INFO.findall(path.read_text())]
    found = []
    for k, (lang, _, code) in enumerate(blocks):
        if lang in RUN:
            after = blocks[k + 1] if k + 1 < len(blocks) else None
            shown = after[2] if after is not None and (after[0], after[1]) == OUTPUT else None
            found.append((k, lang, code, shown))
    return found


#: A number in an output: an optional sign, digits (thousands separated by commas), a decimal part, an exponent; not
#: part of a word or a longer number (``seed_0``, ``C3`` and ``e-16`` are text).
NUMBER = r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])"


def _unit(shown: str) -> float:
    """The tolerance of a shown number: 0 for an integer, else one unit of its last digit (``8.58``: 0.01; ``2.5e-3``:
    1e-4)."""
    mantissa, _, exponent = shown.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def matches(printed: str, shown: str) -> bool:
    """Whether ``printed`` is ``shown``, line ends stripped, ``...`` in ``shown`` standing for any text, and each number
    of ``shown`` (:data:`NUMBER`) matching a number of ``printed`` at the same place by value: an integer exactly, any
    other number to within one unit of its last shown digit (:func:`_unit`); words and formats are exact."""
    def tidy(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip().splitlines())

    def value(number: str) -> float:
        return float(number.replace(",", ""))

    numbers: list[str] = []

    def literal(part: str) -> str:
        pieces = re.split(f"({NUMBER})", part)
        numbers.extend(pieces[1::2])
        return "".join(re.escape(piece) if k % 2 == 0 else f"({NUMBER})" for k, piece in enumerate(pieces))

    pattern = ".*?".join(literal(part) for part in tidy(shown).split("..."))
    found = re.fullmatch(pattern, tidy(printed), re.S)
    if found is None:
        return False
    return all(abs(value(got) - value(want)) <= _unit(want) * (1 + 1e-9) for got, want in zip(found.groups(), numbers, strict=True))


def test_every_tutorial_block_shows_its_output() -> None:
    for page in sorted((DOCS / "tutorials").glob("*.md")):
        missing = [k for k, _, _, shown in runs_with_outputs(page) if shown is None]
        assert not missing, f"{page.relative_to(ROOT)}: blocks {missing} show no output after them"


def test_matches() -> None:
    assert matches("a 1.5 s\nb  \n", "a ... s\nb")
    assert not matches("a 1.5 s\nc", "a ... s\nb") and not matches("x", "")
    assert matches("score 0.29 ± 0.20 (bomb-out 96.0%)", "score 0.28 ± 0.20 (bomb-out 96.0%)")  # one unit of the last digit
    assert not matches("score 0.31 ± 0.20 (bomb-out 96.5%)", "score 0.28 ± 0.20 (bomb-out 96.0%)")  # numbers by value
    assert not matches("XP 1.04 ± 0.07; SP 8.57", "XP 0.99 ± 0.07; SP 8.58")  # the same agents run in bf16 and fp32
    assert matches("4,096 moves, seed_0, [2, -1]", "4,096 moves, seed_0, [2, -1]")
    assert not matches("4,097 moves", "4,096 moves") and not matches("seed_1", "seed_0")  # integers and words exactly
    assert matches("error 4.4e-16", "error ...e-16") and not matches("error 4.4e-15", "error ...e-16")
    assert matches("tolerance 1e-10", "tolerance 1e-10") and not matches("tolerance 3e-10", "tolerance 1e-10")
    assert not matches("error 4.0e+00", "error 1.2e-16") and not matches("score 0.28 of 9", "score 0.28 ± 0.20 of 9")


@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in REQUIRES.get(page, []):
        pytest.importorskip(module)
    torch = pytest.importorskip("torch")
    for name in ("results", "configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    namespace: dict[str, object] = {"__name__": "__main__"}
    threads = torch.get_num_threads()
    try:
        for k, lang, code, shown in runs_with_outputs(DOCS / page):
            printed = io.StringIO()
            if lang == "python":
                with contextlib.redirect_stdout(printed):
                    exec(compile(code, f"docs/{page}, block {k}", "exec"), namespace)
            elif lang == "bash" and all(line.startswith("eqc ") for line in _lines(code)):
                for line in _lines(code):
                    with contextlib.redirect_stdout(printed):
                        code_returned = _run_eqc(line)
                    assert code_returned == 0, f"docs/{page}, block {k}: {line} failed"
            else:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=env, capture_output=True, text=True)
                assert done.returncode == 0, f"docs/{page}, block {k}:\n{code}\n{done.stdout}\n{done.stderr}"
                printed.write(done.stdout)
            if shown is not None:
                assert matches(printed.getvalue(), shown), (
                    f"docs/{page}, block {k} printed:\n{printed.getvalue()}\nwhere the page shows:\n{shown}")
    finally:
        torch.set_num_threads(threads)  # a page that sets its threads sets them for itself only


def _lines(code: str) -> list[str]:
    """The command lines of a shell block, continuations joined, comments and blank lines dropped."""
    return [line.split(" #")[0].strip() for line in code.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]


def _run_eqc(line: str) -> int:
    import torch

    from eqc.cli import main

    threads = torch.get_num_threads()
    try:
        return main(shlex.split(line)[1:])
    finally:
        torch.set_num_threads(threads)  # eqc sets its --threads in the process it runs in


def _command_lines(text: str) -> list[str]:
    lines = []
    for lang, code in FENCE.findall(text):
        if lang in ("bash", "shell"):
            lines += [line for line in _lines(code) if line.startswith("eqc ")]
    return lines


COMMANDS = [(p.relative_to(ROOT).as_posix(), line) for p in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
            for line in _command_lines(p.read_text())]


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize(("where", "line"), COMMANDS)
def test_every_eqc_command_shown_is_valid(where: str, line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``eqc`` line of the README and the site is a valid command line (parsed, not run)."""
    torch = pytest.importorskip("torch")
    from eqc.cli import build_parser

    monkeypatch.chdir(ROOT)
    if not torch.cuda.is_available():
        line = line.replace("--device cuda", "--device cpu")  # the flag is refused up front without CUDA
    build_parser().parse_args(shlex.split(line)[1:])


#: The subpackages whose ``__all__`` the API reference covers.
REFERENCE = ("eqc.groups", "eqc.dec_pomdp", "eqc.symmetrize", "eqc.verification", "eqc.evaluation", "eqc.pettingzoo",
             "eqc.domains.lever", "eqc.domains.hanabi", "eqc.domains.hanabi.hle", "eqc.domains.hanabi.batched",
             "eqc.domains.hanabi.xp", "eqc.domains.hanabi.reproduce")
DIRECTIVES = {d for page in sorted((DOCS / "reference").glob("*.md")) for d in re.findall(r"^::: ([\w.]+)", page.read_text(), re.M)}


def _renders(directive: str, name: str, home: str) -> bool:
    """Whether ``::: directive`` renders ``name`` defined in module ``home``: the object itself, its module, or a
    package above it whose ``__all__`` (a literal list, which mkdocstrings reads) names it."""
    if directive in (f"{home}.{name}", home):
        return True
    if not home.startswith(f"{directive}."):
        return False
    package = importlib.import_module(directive)
    return "__all__ = [" in Path(package.__file__).read_text() and name in package.__all__


@pytest.mark.parametrize("package", REFERENCE)
def test_the_reference_documents_every_public_name(package: str) -> None:
    """Each name of ``package.__all__`` is rendered by some page of ``docs/reference/``."""
    if package == "eqc.pettingzoo":
        pytest.importorskip("pettingzoo")
    module = importlib.import_module(package)
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        home = obj.__module__ if isinstance(obj, type) or callable(obj) else package
        if not any(_renders(d, name, home) for d in DIRECTIVES):
            missing.append(name)
    assert not missing, f"docs/reference/ renders no {missing} of {package}"


def test_the_agent_play_and_training_pages_render_every_module() -> None:
    """Subpackages without an ``__all__`` of their own: every module has a directive."""
    for package, page in (("agent", "hanabi_agent"), ("play", "hanabi_play"), ("training", "hanabi_training")):
        directives = set(re.findall(r"^::: ([\w.]+)", (DOCS / "reference" / f"{page}.md").read_text(), re.M))
        modules = {f"eqc.domains.hanabi.{package}.{p.stem}" for p in (ROOT / "eqc/domains/hanabi" / package).glob("*.py")
                   if p.stem != "__init__"}
        assert modules <= directives, f"docs/reference/{page}.md lacks {sorted(modules - directives)}"


def test_the_citation_names_this_version_and_the_paper() -> None:
    import eqc

    cff = (ROOT / "CITATION.cff").read_text()
    assert f'version: "{eqc.__version__}"' in cff
    assert 'name: "eqc developers"' in cff and 'title: "Equivariant Networks for Zero-Shot Coordination"' in cff


def _hook(name: str):
    """A module of ``docs/hooks/`` (MkDocs loads them by path, not as a package)."""
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", DOCS / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_names_every_subcommand_and_flag() -> None:
    """``reference/cli.md`` (generated by ``docs/hooks/reference.py``) has a section per subcommand and every flag."""
    pytest.importorskip("torch")
    import argparse

    from eqc.cli import build_parser

    reference = _hook("reference")
    page = reference.cli_page()
    for path, _, parser in reference.commands(build_parser()):
        section = page.split(f"## `{' '.join(path)}`\n", 1)[1].split("\n## ", 1)[0]
        for action in reference.flags(parser):
            for option in action.option_strings or [action.metavar or action.dest]:
                assert f"`{option}`" in section, f"{' '.join(path)}: {option} missing from reference/cli.md"
    parser = argparse.ArgumentParser(prog="x")
    parser.add_argument("--undocumented")
    with pytest.raises(reference.UndocumentedError, match="--undocumented"):
        [reference._flag_row(a, "x") for a in reference.flags(parser)]


def test_the_config_reference_names_every_key() -> None:
    pytest.importorskip("torch")
    import dataclasses

    from eqc.domains.hanabi.training.config import config_sections

    reference = _hook("reference")
    page = reference.config_page()
    for section, cls in config_sections().items():
        text = page.split(f"## `[{section}]`\n", 1)[1].split("\n## ", 1)[0]
        for field in dataclasses.fields(cls):
            assert f"| `{field.name}` |" in text, f"[{section}] {field.name} missing from reference/config.md"


def test_the_site_renders_math_offline() -> None:
    """mkdocs.yml loads KaTeX from files under docs/ (no network), and every font its CSS names is there."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert "pymdownx.arithmatex:\n      generic: true" in config and "font: false" in config
    assets = re.findall(r"^extra_(?:javascript|css):\n((?:  - .+\n)+)", config, re.M)
    files = [line.strip()[2:] for block in assets for line in block.splitlines()]
    assert "javascripts/katex/katex.min.js" in files and "javascripts/katex/katex.min.css" in files
    assert all(not re.match(r"[a-z]+://", f) and (DOCS / f).is_file() for f in files), files
    css = (DOCS / "javascripts/katex/katex.min.css").read_text()
    fonts = re.findall(r"url\(([^)]+)\)", css)
    assert fonts and all((DOCS / "javascripts/katex" / f).is_file() for f in fonts)


def test_code_blocks_fit_the_page() -> None:
    """No line of a code block is wider than 100 characters (what a block prints, its Output, may be)."""
    wide = []
    for page in sorted(DOCS.rglob("*.md")):
        for lang, info, code in FENCE_INFO.findall(page.read_text()):
            if (lang, info.strip()) != OUTPUT:
                wide += [f"{page.relative_to(ROOT)}: {line}" for line in code.splitlines() if len(line) > 100]
    assert not wide, "\n".join(wide)
