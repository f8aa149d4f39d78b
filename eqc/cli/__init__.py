"""The ``eqc`` command. ``eqc --help`` lists the subcommands; ``eqc SUBCOMMAND --help`` describes each."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from eqc import __version__
from eqc.cli.common import FlagError, add_threads_flag, apply_threads
from eqc.cli.lever import add_lever_parser

__all__ = ["build_parser", "main"]

DESCRIPTION = """\
eqc: equivariant policies for zero-shot coordination (symmetrizer, Other-Play, G-OP).

subcommands:
  eqc lever   the main demo: lever-game pools under five training rules, cross-play table and heatmap
  eqc hanabi  train and evaluate Hanabi agents (eqc hanabi --help)
  eqc check   exhaustive self-test of the catalogue groups (cyclic, dihedral, alternating and
              symmetric on 5 points) and of a Hanabi-like colour symmetry: the group axioms and
              rho(g*h) = rho(g) rho(h) for every pair of elements; exits 1 if any check fails

Commands that compute take --threads (torch CPU threads; default 1, and for commands that train the
config's [run] threads: eqc's networks and batched games are small, and on a busy machine one thread
ran batched Hanabi up to 10x faster than two; see benchmarks/RESULTS.md); `eqc hanabi export` and
`eqc hanabi config` compute nothing and take none. Every flag is checked before any work: a bad value
exits with code 2 and a usage line naming the flag.
"""


def _check(args: argparse.Namespace) -> int:
    """Exhaustive algebra checks of the catalogue groups and a colour-symmetry declaration; 0 when all hold."""
    from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
    from eqc.groups import alternating, cyclic, dihedral, symmetric
    from eqc.verification import check_group, check_representation

    colour, rank = Labels("colour", 5), Labels("rank", 5)
    obs = Layout([Block("hand", 5, colour, rank), Block("fireworks", colour, rank), Block("tokens", 8)])
    act = Layout([Block("play", 5), Block("hint_colour", colour), Block("hint_rank", rank)])
    for group in (cyclic(5), dihedral(5), alternating(5), symmetric(5)):
        try:
            check_group(group)
            sym = Symmetry(group, acts_on=colour, observation_layout=obs, action_layout=act)
            check_representation(sym.observation_rep)
            check_representation(sym.action_rep)
        except AssertionError as err:
            print(f"{group.name:>15}: FAILED: {err}", file=sys.stderr)
            return 1
        print(f"{group.name:>15}: order {group.order:>3}, group axioms and rho(g*h) = rho(g) rho(h) hold for all pairs")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``eqc`` argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="eqc", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"eqc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser(
        "check",
        help="exhaustive self-test: group axioms and rho(g*h) = rho(g) rho(h) for the catalogue groups on 5 points",
        description="Check the catalogue groups cyclic(5), dihedral(5), alternating(5), symmetric(5) and a "
        "colour symmetry built on each: the group axioms and rho(g*h) = rho(g) rho(h) for every pair "
        "of elements. Prints one line per group; exits 1 if a check fails.",
    )
    add_threads_flag(check)
    check.set_defaults(run=_check)
    add_lever_parser(sub)
    try:
        from eqc.cli.hanabi import add_hanabi_parser
    except ImportError:  # the Hanabi subcommand is optional (module or its extra missing)
        pass
    else:
        add_hanabi_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), apply ``--threads``, run the subcommand; returns its exit code.

    Bad flags exit with code 2 and a usage line, from argparse while parsing or from a
    :class:`~eqc.cli.common.FlagError` the subcommand raises before its work; an interrupt (Ctrl-C,
    SIGINT) exits with code 130 and one line.
    """
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.command_line = ["eqc", *argv]  # as typed: what output files record as the command that made them
    apply_threads(args)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            return int(args.run(args) or 0)
    except FlagError as err:
        _command_parser(parser, args).error(str(err))
    except KeyboardInterrupt:  # Ctrl-C: a line, not a traceback; files are written atomically, so none is half-written
        print(f"{' '.join(args.command_line[:3])}: interrupted (a training run resumes from its last checkpoint)", file=sys.stderr)
        return 130


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None,
                      line: str | None = None) -> None:
    """A warning as one line on stderr (``eqc <command>: warning: ...``), not Python's file, line and source."""
    print(f"eqc: warning: {message}", file=sys.stderr)


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)parser of the command that ran, for its usage line: follows nested subcommands by their ``dest``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _command_parser(action.choices[name], args)
    return parser

