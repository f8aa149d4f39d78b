"""Train the cpu-scale pools as shipped in ``results/cpu/agents``: one resumable run per agent, in stages.

Each job ``<pool>:<seed>`` trains the pool's cpu-scale config (``eqc.domains.hanabi.reproduce.specs``)
in ``ROOT/<pool>/seed_<seed>/``, stopping at each stage of ``--stages`` (total moves) and exporting a
snapshot policy there (``snapshots/moves_<N>/``, for measuring symmetry breaking along training);
resuming between stages restarts the games in progress, nothing else. A finished run is exported
to ``--ship/<pool>/seed_<seed>/`` (policy, config, training record) when ``--ship`` is given.
Several processes may share one job list: each claims a job atomically (``ROOT/claims/``).

    python scripts/train_pools.py --root runs/pools --jobs sp:0 sp:1 --ship results/cpu/agents
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.reproduce.specs import SCALES, pool_config
from eqc.domains.hanabi.training.run import train

STAGES = (10_000_000, 25_000_000, 50_000_000)


def claim(root: Path, job: str) -> bool:
    (root / "claims").mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(root / "claims" / job.replace(":", "_"))
        return True
    except FileExistsError:
        return False


def run_job(root: Path, pool: str, seed: int, stages: list[int], ship: Path | None) -> None:
    config = pool_config(pool, SCALES["cpu"])
    out = root / pool / f"seed_{seed}"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "train.log", "a") as log_file:
        def log(message: str) -> None:
            log_file.write(message + "\n")
            log_file.flush()

        for total in [s for s in stages if s < config.run.total_moves] + [config.run.total_moves]:
            train(config.replace(run={"total_moves": total}), out, seed=seed, device="cpu", progress=False, log=log)
            export_policy(out, out / "snapshots" / f"moves_{total}")
            log(f"stage {total:,} done")
    if ship is not None:
        export_policy(out, ship / pool / f"seed_{seed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="directory of the runs")
    parser.add_argument("--jobs", nargs="+", required=True, help="<pool>:<seed> (pools: sp, op, gop_c5, gop_d10, recurrent)")
    parser.add_argument("--stages", default=",".join(map(str, STAGES)), help="snapshot points in moves, comma-separated")
    parser.add_argument("--ship", type=Path, default=None, help="export each finished agent to SHIP/<pool>/seed_<n>/")
    args = parser.parse_args()
    torch.set_num_threads(1)
    stages = sorted(int(float(s)) for s in args.stages.split(","))
    for job in args.jobs:
        pool, seed = job.split(":")
        if claim(args.root, job):
            run_job(args.root, pool, int(seed), stages, args.ship)


if __name__ == "__main__":
    main()
