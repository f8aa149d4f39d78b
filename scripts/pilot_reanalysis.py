"""Re-test the pilot cpu-scale tables (3 agents per pool, 4M moves each) at the level of pairs of agents.

The pilot tables (``results/cpu/pilot/table*.md``) ran their permutation tests on per-game scores,
treating 6 x 1000 games as independent; the games of one pair share that pair's conventions, so
the unit of evidence is the pair. This script reads the committed per-pair XP matrices
(``results/cpu/pilot/xp/<table>/<cell>/xp.json``) and redoes every test with
``eqc.evaluation.compare_pools``; it writes ``results/cpu/pilot/REANALYSIS.md``.

    python scripts/pilot_reanalysis.py
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from eqc.evaluation import compare_pools, pair_summary

ROOT = Path(__file__).resolve().parents[1] / "results" / "cpu" / "pilot"


def _matrix(table: str, cell: str) -> tuple[torch.Tensor, list[str]]:
    record = json.loads((ROOT / "xp" / table / cell / "xp.json").read_text())
    return torch.tensor(record["matrix"]["mean"], dtype=torch.float64), [a["path"] for a in record["agents"]]


def main() -> None:
    lines = ["# The pilot cpu-scale tables, re-tested at the level of pairs of agents", "",
             "Produced by `python scripts/pilot_reanalysis.py` from the committed per-pair matrices in `xp/`. Pools of 3 "
             "agents (4M moves each, self-play 9-11), 1000 games per ordered pair. The original tables (`table*.md` here) "
             "tested per-game scores as if the 6,000 games of a cell were independent; here the unit is the unordered "
             "pair (3 per pool): an unpaired test of two pools has C(6, 3) = 20 arrangements (smallest p 0.05), a paired "
             "test of the same agents 2^3 = 8 (smallest p 0.125).", "",
             "| table | test | kind | difference | p (pair level) | smallest attainable p | p claimed (per game) |",
             "|---|---|---|---:|---:|---:|---:|"]
    for table in ("table1", "table2", "table3"):
        old = json.loads((ROOT / f"{table}.json").read_text())
        cells = {c: c.lower().replace(" ", "_").replace("/", "") for c in old["cells"]}
        for name, claimed in old["permutation_tests"].items():
            better, worse = name.split(" > ")
            a, agents_a = _matrix(table, cells[better])
            b, agents_b = _matrix(table, cells[worse])
            test = compare_pools(a, b, paired=agents_a == agents_b)
            kind = "paired" if test.paired else "unpaired"
            lines.append(f"| {table} | {name} | {kind} | {test.difference:+.2f} | {test.p_value:.3f} | {test.min_p:.3f} | "
                         f"{claimed['p_value']:.4f} |")
    lines += ["", "XP per cell with both standard errors (over the 6 ordered pairs, the paper's convention; over the 3 "
              "unordered pairs):", "", "| table | cell | XP | SEM ordered | SEM unordered |", "|---|---|---:|---:|---:|"]
    for table in ("table1", "table2", "table3"):
        old = json.loads((ROOT / f"{table}.json").read_text())
        for cell, slug in ((c, c.lower().replace(" ", "_").replace("/", "")) for c in old["cells"]):
            s = pair_summary(_matrix(table, slug)[0])
            lines.append(f"| {table} | {cell} | {s.ordered.mean:.2f} | {s.ordered.sem:.2f} | {s.unordered.sem:.2f} |")
    lines.append("")
    (ROOT / "REANALYSIS.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
