"""The ``eqc`` command: ``eqc lever`` (the main demo) and ``eqc check`` (verify the built-in symmetries)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _check(args: argparse.Namespace) -> int:
    """Exhaustive algebra checks of the catalogue groups and the quick-start declaration."""
    from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
    from eqc.groups import alternating, cyclic, dihedral, symmetric
    from eqc.verification import check_group, check_representation

    colour, rank = Labels("colour", 5), Labels("rank", 5)
    obs = Layout([Block("hand", 5, colour, rank), Block("fireworks", colour, rank), Block("tokens", 8)])
    act = Layout([Block("play", 5), Block("hint_colour", colour), Block("hint_rank", rank)])
    for group in (cyclic(5), dihedral(5), alternating(5), symmetric(5)):
        check_group(group)
        sym = Symmetry(group, acts_on=colour, observation=obs, action=act)
        check_representation(sym.observation)
        check_representation(sym.action)
        print(f"{group.name:>15}: order {group.order:>3}, group axioms and rho(g*h) = rho(g) rho(h) hold for all pairs")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="eqc", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="verify the catalogue groups and a colour symmetry exhaustively")
    check.set_defaults(run=_check)
    try:
        from eqc.cli_lever import add_lever_parser
    except ImportError:  # pragma: no cover - only while the lever domain is missing
        pass
    else:
        add_lever_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
