"""Colour symmetry breaking along training: relabelled self-play of shipped agents and their snapshots.

For every agent ``AGENTS/<pool>/seed_<n>/`` (and its ``snapshots/moves_<N>/`` taken during
training), plays :func:`eqc.domains.hanabi.xp.relabelled_self_play` (the agent with copies of
itself in colour-relabelled worlds, S5 elements, same decks) and writes the table to
``OUT.json`` and ``OUT.md``: self-play, relabelled-partner loss and colour-hint share against
training moves. A loss near 0 means the agent's conventions do not depend on colour names.

    python scripts/symmetry_breaking.py --agents results/cpu/agents --pools sp recurrent --out results/cpu/symmetry_breaking
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.xp import pool_runs, relabelled_self_play


def measure(path: Path, elements: int, games: int) -> dict:
    policy = load_policy(path)
    result = relabelled_self_play(policy, elements=elements, games=games)
    print(f"{path}: {policy.trained_moves:,} moves: {result}", flush=True)
    return {"path": str(path), "moves": policy.trained_moves, **result.as_dict()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=Path, required=True)
    parser.add_argument("--pools", nargs="+", required=True)
    parser.add_argument("--out", type=Path, required=True, help="OUT.json and OUT.md are written")
    parser.add_argument("--elements", type=int, default=12)
    parser.add_argument("--games", type=int, default=500)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for pool in args.pools:
        for agent in pool_runs(args.agents / pool):
            snapshots = sorted((agent / "snapshots").glob("moves_*"), key=lambda p: int(p.name.split("_")[1]))
            for path in [*snapshots, agent]:
                rows.append({"pool": pool, "agent": agent.name, **measure(path, args.elements, args.games)})
    record = {"elements": args.elements, "games": args.games, "group": "S5", "rows": rows,
              "command": f"python scripts/symmetry_breaking.py --agents {args.agents} --pools {' '.join(args.pools)} --out {args.out}"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    lines = ["# Colour symmetry breaking along training", "",
             f"Produced by `{record['command']}`. Each row: an agent after the given training moves, its greedy self-play "
             f"score, and its relabelled-partner loss (self-play minus self-play with a copy of itself in a colour-relabelled "
             f"world, mean over {args.elements} S5 elements x {args.games} games on the same decks, ± SEM over decks), and its "
             "share of colour hints among hints in self-play.", "",
             "| pool | agent | moves | self-play | relabelled partner | loss ± SEM | colour hints |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        partner = sum(r["relabelled"]) / len(r["relabelled"])
        lines.append(f"| {r['pool']} | {r['agent']} | {r['moves'] / 1e6:.1f}M | {r['self_play']:.2f} | {partner:.2f} | "
                     f"{r['loss']:+.2f} ± {r['loss_sem']:.2f} | {r['colour_hint_share']:.1%} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
