"""MkDocs hook: the reference pages of what a user types, generated at build time so they cannot go stale.

- ``reference/cli.md``: every ``eqc`` subcommand with its usage and every flag (its default and help),
  read from :func:`eqc.cli.build_parser`.
- ``reference/config.md``: every section and key of a training config (type, default, meaning), read
  from the dataclasses of ``eqc.domains.hanabi.config`` (``TrainConfig``), and the shipped configs.

A flag or a config key without help text, or a subcommand without a one-line summary, fails the build
(:class:`mkdocs.exceptions.PluginError`); ``tests/test_docs.py`` checks that the pages name every flag and key.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = "reference/cli.md"
CONFIG_PAGE = "reference/config.md"
WIDTH = 100  # usage lines wrap here, so that a code block fits the page


class UndocumentedError(Exception):
    """A flag, subcommand or config key without help text."""


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("eqc",), summary: str = "") -> Iterator[
        tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every (sub)command as (its words, its one-line summary, its parser), depth first in the parser's order."""
    yield path, summary, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not helps.get(name):
                    raise UndocumentedError(f"{' '.join((*path, name))}: the subcommand has no help= summary")
                yield from commands(sub, (*path, name), str(helps[name]))


def flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options and positional arguments, without subcommand choices and ``--help``."""
    return [a for a in parser._actions
            if not isinstance(a, argparse._SubParsersAction | argparse._HelpAction) and a.help != argparse.SUPPRESS]


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _usage(parser: argparse.ArgumentParser) -> str:
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse wraps at the terminal width it reads from COLUMNS
    try:
        return parser.format_usage().removeprefix("usage: ").rstrip()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def _flag_row(action: argparse.Action, where: str) -> str:
    if not action.help:
        raise UndocumentedError(f"{where}: {action.option_strings or action.dest} has no help text")
    name = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
    if action.option_strings and action.nargs != 0:
        metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices else
                                     action.dest.upper())
        name += f" `{metavar}`"
    if isinstance(action, argparse._StoreConstAction | argparse._StoreTrueAction | argparse._StoreFalseAction):
        default = ""
    elif action.required:
        default = "*required*"
    else:
        default = "" if action.default in (None, argparse.SUPPRESS, [], ()) else f"`{action.default}`"
    text = action.help % {"default": action.default, "prog": where} if "%" in action.help else action.help
    return f"| {name} | {default} | {_cell(text)} |"


def cli_page() -> str:
    """The Markdown of ``reference/cli.md``."""
    from eqc.cli import build_parser

    lines = ["# The `eqc` command", "",
             "Generated when the site is built, from the argument parsers of `eqc.cli` (`eqc SUBCOMMAND --help` "
             "prints the same). Every flag is checked before any work starts: a bad value exits with code 2 and "
             "a usage line naming the flag. The keys of a training config, which `--set` overrides, are on "
             "[config keys](config.md).", ""]
    for path, summary, parser in commands(build_parser()):
        words = " ".join(path)
        lines += [f"## `{words}`", ""]
        if summary:
            lines += [_cell(summary)[0].upper() + _cell(summary)[1:] + ".", ""]
        lines += ["```text", _usage(parser), "```", ""]
        rows = [_flag_row(a, words) for a in flags(parser)]
        if rows:
            lines += ["| flag | default | what it does |", "|---|---|---|", *rows, ""]
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subs:
            lines += ["Subcommands: " + ", ".join(f"[`{words} {n}`](#{_anchor(f'{words} {n}')})" for n in action.choices),
                      ""]
    return "\n".join(lines)


def _anchor(title: str) -> str:
    return title.replace(" ", "-")




def _type_name(hint: Any) -> str:
    """``int`` for ``int`` and for ``int | None`` (an optional key; its default column says so)."""
    args = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    if len(args) == 1 and getattr(hint, "__origin__", None) is not tuple:
        hint = args[0]
    if getattr(hint, "__origin__", None) is tuple:
        return "array of int"
    return str(getattr(hint, "__name__", hint))


def config_page() -> str:
    """The Markdown of ``reference/config.md``."""
    from eqc.domains.hanabi.config.files import shipped_configs
    from eqc.domains.hanabi.config.schema import toml_value
    from eqc.domains.hanabi.training.config import config_sections

    shipped = shipped_configs()
    lines = ["# Config keys", "",
             "Generated when the site is built, from the config dataclasses of `eqc.domains.hanabi.config` "
             "(`eqc hanabi config` prints the same as TOML comments). A training config is a TOML file of these "
             "sections; a key left out takes its default, an unknown key or a wrong type is refused with its name. "
             "`--set section.key=value` overrides any key on the command line ([the `eqc` command](cli.md)). "
             "A key without a default is optional: left out, it means what its text says.", "",
             "The shipped configs (`--config NAME`, or a path of your own): "
             + ", ".join(f"`{name}`" for name in shipped) + ".", ""]
    for section, cls in config_sections().items():
        hints = get_type_hints(cls)
        lines += [f"## `[{section}]`", "", "| key | type | default | meaning |", "|---|---|---|---|"]
        for f in dataclasses.fields(cls):
            help_text = f.metadata.get("help")
            if not help_text:
                raise UndocumentedError(f"config key [{section}] {f.name} has no help text (config_field)")
            default = "*optional*" if f.default is None else f"`{toml_value(f.default)}`"
            lines.append(f"| `{f.name}` | `{_type_name(hints[f.name])}` | {default} | {_cell(help_text)} |")
        lines.append("")
    return "\n".join(lines)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        pages = {CLI_PAGE: cli_page(), CONFIG_PAGE: config_page()}
    except UndocumentedError as err:
        raise PluginError(f"docs/hooks/reference.py: {err}") from None
    except ImportError as err:
        raise PluginError(f"docs/hooks/reference.py: the CLI and config reference pages are generated from eqc, which "
                          f"could not be imported ({err}); build where eqc and its dependencies are installed "
                          f"(`make docs`), or with PYTHONPATH pointing at the clone") from None
    for uri, text in pages.items():
        files.append(File.generated(config, uri, content=text))
    return files
