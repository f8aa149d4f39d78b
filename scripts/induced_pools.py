"""The paper's claims on induced colour conventions (Mini-Hanabi): pools that differ only in the training rule.

Every agent starts from the same kind of bootstrap (``[bootstrap] convention = "colour_to_slot"``, bonus
2 for the first 4M of 8M moves; see ``scripts/colour_conventions.py``) and differs in the rule: self-play
(``sp``), Other-Play over S3 (``op``), G-OP over C3 (``gop_c3``). Per pool: greedy self-play, the
relabelled-partner loss (mean over agents), inter-seed cross-play (XP) plain and symmetrized at test
time; then one-sided permutation tests with the unordered pair as the unit
(:func:`eqc.evaluation.compare_pools`), on XP and on bomb-out rates.

    python scripts/induced_pools.py --agents results/cpu/colour_conventions_agents --out results/cpu/induced_pools
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.xp import cross_play_games, pool_runs, relabelled_self_play
from eqc.evaluation import compare_pools, mean_sem, pair_summary

POOLS = {"sp": "mini_induced_strong", "op": "mini_induced_strong_op", "gop_c3": "mini_induced_strong_gop_c3"}
#: (cell label, pool, test-time colour group or None)
CELLS = [("sp", "sp", None), ("op", "op", None), ("gop_c3 (C3 at test time)", "gop_c3", "C3"),
         ("sp + S3 at test time", "sp", "S3"), ("op + S3 at test time", "op", "S3")]
#: Monte Carlo draws of each test (when the arrangements are more)
RESAMPLES = 10_000
#: (better, worse): H1 better cross-plays higher (and bombs out less)
TESTS = [("op", "sp"), ("gop_c3 (C3 at test time)", "sp"), ("gop_c3 (C3 at test time)", "op"),
         ("sp + S3 at test time", "sp"), ("op + S3 at test time", "op")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=Path, required=True, help="directory holding the pools' directories")
    parser.add_argument("--out", type=Path, required=True, help="OUT.json and OUT.md are written")
    parser.add_argument("--games", type=int, default=1000, help="games per ordered pair")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = {pool: pool_runs(args.agents / name) for pool, name in POOLS.items() if (args.agents / name).is_dir()}
    losses = {}
    for pool, paths in runs.items():
        values = [relabelled_self_play(load_policy(p), elements=5, games=500).loss for p in paths]
        losses[pool] = mean_sem(values, "losses")
    cells, matrices = {}, {}
    for label, pool, group in CELLS:
        if len(runs.get(pool, [])) < 2:
            continue
        policies = [load_policy(p, symmetrize=group) for p in runs[pool]]
        summary = cross_play_games(policies, args.games, seed=1).summary()
        pairs = pair_summary(summary.mean)
        matrices[label] = (summary.mean, summary.bomb_out_rate)
        cells[label] = {"pool": pool, "group": group, "agents": len(policies), "xp": pairs.unordered.mean, "xp_sem": pairs.unordered.sem,
                        "pairs": pairs.unordered.n, "sp": summary.sp.mean, "bomb_out": summary.xp_bomb_out_rate,
                        "matrix": summary.mean.tolist(), "bomb_out_matrix": summary.bomb_out_rate.tolist()}
        print(f"{label}: XP {pairs.unordered.mean:.2f} ± {pairs.unordered.sem:.2f} ({pairs.unordered.n} pairs)", flush=True)
    tests = {}
    for better, worse in TESTS:
        if better in matrices and worse in matrices:
            paired = cells[better]["pool"] == cells[worse]["pool"]
            xp = compare_pools(matrices[better][0], matrices[worse][0], paired=paired, resamples=RESAMPLES,
                               generator=torch.Generator().manual_seed(0))
            bomb = compare_pools(matrices[better][1], matrices[worse][1], paired=paired, alternative="less", resamples=RESAMPLES,
                                 generator=torch.Generator().manual_seed(0))
            tests[f"{better} > {worse}"] = {"paired": paired, "xp": xp.as_dict(), "bomb_out": bomb.as_dict()}
    command = f"python scripts/induced_pools.py --agents {args.agents} --out {args.out} --games {args.games}"
    record = {"command": command, "games": args.games, "losses": {p: [s.mean, s.sem, s.n] for p, s in losses.items()},
              "cells": cells, "tests": tests}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(render(record))


def verdict(p: float, difference: float) -> str:
    if difference <= 0:
        return "does not hold"
    return "holds" if p < 0.05 else "cannot tell"


def render(record: dict) -> str:
    lines = ["# INDUCED colour conventions (Mini-Hanabi): the paper's claims on pools that differ only in the training rule", "",
             "Every agent was taught a colour convention drawn for its seed by a shaping reward for its first 4M moves, then "
             "trained 4M more moves on the game's reward alone (`scripts/colour_conventions.py`, settings "
             "`mini_induced_strong*`); the conventions are induced, not spontaneous. "
             f"Produced by `{record['command']}`; {record['games']} games per ordered pair on common decks.", "",
             "| cell | agents | self-play | relabelled-partner loss (pool mean ± SEM) | XP ± SEM (unordered pairs) | bomb-out |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, c in record["cells"].items():
        loss = record["losses"].get(c["pool"]) if c["group"] is None else None
        loss_text = f"{loss[0]:+.2f} ± {loss[1]:.2f}" if loss else "-"
        lines.append(f"| {label} | {c['agents']} | {c['sp']:.2f} | {loss_text} | {c['xp']:.2f} ± {c['xp_sem']:.2f} ({c['pairs']}) | "
                     f"{c['bomb_out']:.1%} |")
    lines += ["", "One-sided permutation tests over unordered pairs (paired sign flips when both cells hold the same agents); "
              "H1: the first cell cross-plays higher (XP) / bombs out less. 'holds' at p < 0.05.", "",
              "| test | paired | XP difference | p | smallest p these sizes and draws allow | verdict | bomb-out difference | p |",
              "|---|---|---:|---:|---:|---|---:|---:|"]
    for name, t in record["tests"].items():
        xp, bomb = t["xp"], t["bomb_out"]
        floor = xp["min_p"] if xp["exact"] else max(xp["min_p"], 1 / (RESAMPLES + 1))  # Monte Carlo: (0 + 1) / (draws + 1)
        lines.append(f"| {name} | {'yes' if t['paired'] else 'no'} | {xp['difference']:+.2f} | {xp['p_value']:.3g} | {floor:.2g} | "
                     f"{verdict(xp['p_value'], xp['difference'])} | {bomb['difference']:+.3f} | {bomb['p_value']:.3g} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
