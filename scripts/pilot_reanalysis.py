"""Re-read the pilot cpu-scale tables (3 agents per pool, 4M moves each) with the agent as the unit.

The pilot tables (``results/cpu/pilot/table*.md``) ran their permutation tests on per-game scores,
treating 6 x 1000 games as independent; the games of one pair share that pair's conventions, and the
pairs of one agent share its conventions, so the unit of evidence is the agent. An agent-level test
(``eqc.evaluation.compare_pools``) relabels agents over the cross-play matrix of both cells, pairs
between the cells included; the pilot kept each cell's own matrix only
(``results/cpu/pilot/xp/<table>/<cell>/xp.json``) and its agents are not shipped, so no such test can
be run on it. This script writes ``results/cpu/pilot/REANALYSIS.md``: each cell's XP with its jackknife
SE over agents, each claimed difference, and the smallest p an agent-level test of 3 + 3 agents could
give (C(6, 3) = 20 splits unpaired, 2^3 = 8 swaps paired), beside the p claimed per game.

    python scripts/pilot_reanalysis.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from eqc.evaluation import pool_summary

ROOT = Path(__file__).resolve().parents[1] / "results" / "cpu" / "pilot"


def _matrix(table: str, cell: str) -> tuple[torch.Tensor, list[str]]:
    record = json.loads((ROOT / "xp" / table / cell / "xp.json").read_text())
    return torch.tensor(record["matrix"]["mean"], dtype=torch.float64), [a["path"] for a in record["agents"]]


def _slug(cell: str) -> str:
    return cell.lower().replace(" ", "_").replace("/", "")


def main() -> None:
    lines = ["# The pilot cpu-scale tables, re-read with the agent as the unit", "",
             "Produced by `python scripts/pilot_reanalysis.py` from the committed per-pair matrices in `xp/`. Pools of 3 "
             "agents (4M moves each, self-play 9-11), 1000 games per ordered pair. The original tables (`table*.md` here) "
             "tested per-game scores as if the 6,000 games of a cell were independent. The unit of evidence is the agent; "
             "an agent-level test needs the pairs between the two cells compared, which the pilot did not keep (its agents "
             "are not shipped), so no p-value is given here: only the smallest one such a test could give, C(6, 3) = 20 "
             "splits of 3 + 3 agents (p >= 0.05) or 2^3 = 8 swaps of each agent's two forms (p >= 0.125).", "",
             "| table | test | kind | difference | smallest attainable p (agent level) | p claimed (per game) |",
             "|---|---|---|---:|---:|---:|"]
    for table in ("table1", "table2", "table3"):
        old = json.loads((ROOT / f"{table}.json").read_text())
        for name, claimed in old["permutation_tests"].items():
            better, worse = name.split(" > ")
            a, agents_a = _matrix(table, _slug(better))
            b, agents_b = _matrix(table, _slug(worse))
            paired = agents_a == agents_b
            difference = pool_summary(a).mean - pool_summary(b).mean
            arrangements = 2 ** len(agents_a) if paired else math.comb(len(agents_a) + len(agents_b), len(agents_a))
            lines.append(f"| {table} | {name} | {'paired' if paired else 'unpaired'} | {difference:+.2f} | {1 / arrangements:.3f} | "
                         f"{claimed['p_value']:.4f} |")
    lines += ["", "XP per cell (mean over the 6 ordered pairs) with its jackknife SE over the 3 agents:", "",
              "| table | cell | XP | SE (jackknife over agents) |", "|---|---|---:|---:|"]
    for table in ("table1", "table2", "table3"):
        old = json.loads((ROOT / f"{table}.json").read_text())
        for cell in old["cells"]:
            s = pool_summary(_matrix(table, _slug(cell))[0])
            lines.append(f"| {table} | {cell} | {s.mean:.2f} | {s.sem:.2f} |")
    lines.append("")
    (ROOT / "REANALYSIS.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
