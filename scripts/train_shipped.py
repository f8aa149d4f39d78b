"""Train the agents of a scale that ``reproduce`` reads as shipped, and export each into ``results/<scale>/agents``.

- ``--scale colour`` (the colour testbed): agent ``<pool>/slots_<pi>``, pool ``<pool>`` (``COLOUR_POOLS``: its
  rule, convention, stream seed and learner) taught the colour-to-slot map ``pi`` (one of Mini-Hanabi's six).
- ``--scale entropy``: agent ``<pool>/seed_<n>``, IPPO with the pool's entropy coefficient (``ENTROPY_POOLS``).

Agents already exported are skipped; a partial run resumes from its checkpoint. Run one worker per core::

    python scripts/train_shipped.py --scale colour --worker 0 --workers 2 --runs runs/colour &
    python scripts/train_shipped.py --scale colour --worker 1 --workers 2 --runs runs/colour &
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.config.train import TrainConfig
from eqc.domains.hanabi.reproduce.specs import COLOUR_POOLS, ENTROPY_POOLS, SCALES, colour_agent_config, pool_config
from eqc.domains.hanabi.training.bootstrap import colour_slot_maps
from eqc.domains.hanabi.training.run import train

#: The colour testbed's training order: the pools the tables need most first.
COLOUR_ORDER = ("sp", "touched", "op", "gop_c3", "gop_c2", "sp_stream1", "ippo_c005", "ippo_c001")


def agents(scale: str) -> list[tuple[Path, TrainConfig, int]]:
    """Every agent of ``scale``: its directory under the scale's agents, its config and its training seed."""
    if scale == "colour":
        assert set(COLOUR_ORDER) == set(COLOUR_POOLS)
        return [(Path(pool) / ("slots_" + "".join(map(str, slots))), colour_agent_config(pool, slots), COLOUR_POOLS[pool].stream)
                for pool in COLOUR_ORDER for slots in colour_slot_maps(3, 3)]
    sc = SCALES[scale]
    return [(Path(pool) / f"seed_{seed}", pool_config(pool, sc, seed), seed) for seed in sc.seeds for pool in ENTROPY_POOLS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("colour", "entropy"), required=True)
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--runs", type=Path, required=True, help="directory of the training runs (checkpoints; not shipped)")
    parser.add_argument("--out", type=Path, default=None, help="where the agents are exported (default results/<scale>/agents)")
    args = parser.parse_args()
    if not 0 <= args.worker < args.workers:
        parser.error(f"--worker must be in 0..{args.workers - 1} (--workers {args.workers}), got {args.worker}")
    out = args.out or Path("results") / args.scale / "agents"
    torch.set_num_threads(1)
    for k, (name, config, seed) in enumerate(agents(args.scale)):
        if k % args.workers != args.worker or (out / name / "policy.json").exists():
            continue
        result = train(config, args.runs / name, seed=seed, device="cpu", progress=False)
        print(name, result.as_dict().get("final_eval", result), flush=True)
        export_policy(args.runs / name, out / name)


if __name__ == "__main__":
    main()
