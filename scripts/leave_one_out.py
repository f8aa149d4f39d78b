"""Leave each matched set out of a rendered table's primary tests in turn (post hoc; not registered).

Reads a table's JSON (default: the pre-registered ``results/touched/table1.json``), runs its primary tests again
with every matched set and then with each set left out
(:func:`eqc.domains.hanabi.reproduce.leave_one_out.leave_one_out`: the same matched permutation tests, Holm over
the family, simultaneous intervals, the registered verdict rule), and writes ``<out>.md`` and ``<out>.json``.
Nothing is played: the tests read the matrices the table's JSON keeps.

    python scripts/leave_one_out.py
    python scripts/leave_one_out.py --table results/touched/table1.json --out results/touched/leave_one_out
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from eqc.domains.hanabi.reproduce.leave_one_out import leave_one_out, leave_one_out_markdown
from eqc.io import json_safe, write_json_atomic

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=Path("results/touched/table1.json"), help="a table's JSON (reproduce's output)")
    parser.add_argument("--out", type=Path, default=Path("results/touched/leave_one_out"), help="writes OUT.md and OUT.json")
    args = parser.parse_args(argv)
    table = json.loads((ROOT / args.table).read_text())
    primary = [name for name, test in table["tests"].items() if test["role"] == "primary"]
    result = leave_one_out(table, primary)
    labels = {name: f"P{k + 1}: {name}" for k, name in enumerate(primary)}
    command = shlex.join(["python", "scripts/leave_one_out.py", "--table", args.table.as_posix(), "--out", args.out.as_posix()])
    markdown = "\n".join([
        f"# Leave one matched set out: the primary tests of `{args.table.as_posix()}` (post hoc)", "",
        "Each row runs the table's primary tests again without one matched set (its agents in both cells; named "
        "`<stream>/slots_<pi>`), exactly as the table ran them: matched or paired permutation tests, exact over the "
        "swaps of the remaining sets, the family's p-values Holm-adjusted together, simultaneous (Bonferroni) t intervals "
        "on the jackknife SE over the remaining sets, and the registered verdict rule. The first row leaves nothing out "
        "and equals the table. Each cell: difference [simultaneous interval], Holm-adjusted p, verdict. This analysis "
        "was not registered: it describes how much one matched set moves each verdict and decides nothing.", "",
        leave_one_out_markdown(result, labels),
        f"Produced by `{command}` from the cross-play matrices the table's JSON keeps (nothing played).", ""])
    out = ROOT / args.out
    out.with_suffix(".md").write_text(markdown)
    write_json_atomic(out.with_suffix(".json"), json_safe({"table": args.table.as_posix(), **result, "command": command}))
    print(f"wrote {out.with_suffix('.md')}, {out.with_suffix('.json')}")


if __name__ == "__main__":
    main()
