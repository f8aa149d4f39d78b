"""Post hoc analyses of the pre-registered touched Table 1 (not registered: they describe and decide nothing).

Reads the table's JSON and the conventions report's JSON (defaults: ``results/touched/table1.json`` and
``results/touched/conventions.json``) and writes ``<out>.md`` and ``<out>.json`` (default
``results/touched/post_hoc``) with two sections (:mod:`eqc.domains.hanabi.reproduce.post_hoc`):

- the primary tests with each matched set left out in turn (the same matched permutation tests, Holm over the
  family, simultaneous intervals, the registered verdict rule);
- each plain cell's cross-play over pairs whose two agents answer colour hints with the same slots (the hint maps'
  "colour hint -> slot") and over pairs whose maps differ.

Nothing is played: both read the matrices the JSON files keep.

    python scripts/post_hoc.py
"""

from __future__ import annotations

import argparse
import shlex
from collections import Counter
from pathlib import Path

from eqc.domains.hanabi.reproduce.post_hoc import leave_one_out, leave_one_out_markdown, xp_by_code
from eqc.domains.hanabi.reproduce.record import TableRecord, read_table
from eqc.domains.hanabi.reproduce.reports import ConventionReport, read_conventions
from eqc.io import json_safe, write_json_atomic

ROOT = Path(__file__).resolve().parents[1]

LEAVE_ONE_OUT = (
    "Each row runs the table's primary tests again without one matched set (its agents in both cells; named "
    "`<stream>/slots_<pi>`), exactly as the table ran them: matched or paired permutation tests, exact over the swaps of "
    "the remaining sets, the family's p-values Holm-adjusted together, simultaneous (Bonferroni) t intervals on the "
    "jackknife SE over the remaining sets, and the registered verdict rule. The first row leaves nothing out and equals "
    "the table. Each cell: difference [simultaneous interval], Holm-adjusted p, verdict.")
CODES = (
    "Each agent's code is its row of the conventions report's hint maps, \"colour hint -> slot\" (the slot played most "
    "often right after a hint of each colour in greedy self-play, the agent as trained). XP over the cell's ordered pairs "
    "of distinct agents whose codes are equal, and over those whose codes differ (the cell's matrix, as in the table). "
    "Only the cells that play the agents as the hint maps measured them: G-OP C3 (symmetrized over C3 at test time) and "
    "the test-time symmetrized and rank-averaged cells are left out.")


def _codes_section(table: TableRecord, conventions: ConventionReport) -> tuple[list[str], dict]:
    lines = ["| cell | codes (agents) | XP, same code (ordered pairs) | XP, different codes (ordered pairs) | cell XP |",
             "|---|---|---:|---:|---:|"]
    record = {}
    for label, cell in table.cells.items():
        maps = conventions.agents.get(cell.pool)
        if cell.symmetrize is not None or not maps:  # the plain cells of pools with hint maps
            continue
        codes = [maps[key].colour_hint_slot for key in cell.matching or ()]
        split = xp_by_code(cell.matrix, codes)
        counts = ", ".join(f"{list(code)} x{n}" for code, n in Counter(codes).most_common())
        lines.append(f"| {label} | {counts} | {split['same']['xp']:.2f} ({split['same']['pairs']}) | "
                     f"{split['different']['xp']:.2f} ({split['different']['pairs']}) | {cell.xp_mean:.2f} |")
        record[label] = {"codes": [list(c) for c in codes], **split}
    return lines, record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=Path("results/touched/table1.json"), help="a table's JSON (reproduce's output)")
    parser.add_argument("--conventions", type=Path, default=Path("results/touched/conventions.json"),
                        help="the conventions report's JSON of the same agents")
    parser.add_argument("--out", type=Path, default=Path("results/touched/post_hoc"), help="writes OUT.md and OUT.json")
    args = parser.parse_args(argv)
    table = read_table(ROOT / args.table)
    conventions = read_conventions(ROOT / args.conventions)
    primary = [name for name, test in table.tests.items() if test.role == "primary"]
    dropped = leave_one_out(table, primary)
    labels = {name: f"P{k + 1}: {name}" for k, name in enumerate(primary)}
    code_lines, codes = _codes_section(table, conventions)
    command = shlex.join(["python", "scripts/post_hoc.py", "--table", args.table.as_posix(), "--conventions",
                          args.conventions.as_posix(), "--out", args.out.as_posix()])
    markdown = "\n".join([
        f"# Post hoc analyses of `{args.table.as_posix()}`", "",
        "Not registered: these describe the registered table and decide nothing.", "",
        "## The primary tests with one matched set left out", "", LEAVE_ONE_OUT, "", leave_one_out_markdown(dropped, labels),
        "## Cross-play by colour-hint code", "", CODES, "", *code_lines, "",
        f"Produced by `{command}` from the matrices the two JSON files keep (nothing played).", ""])
    out = ROOT / args.out
    out.with_suffix(".md").write_text(markdown)
    write_json_atomic(out.with_suffix(".json"), json_safe({"table": args.table.as_posix(), "conventions": args.conventions.as_posix(),
                                                           "leave_one_out": dropped.to_json(), "xp_by_code": codes, "command": command}))
    print(f"wrote {out.with_suffix('.md')}, {out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
