"""Train the colour testbed's agents (scale ``colour``) and export each into ``results/colour/agents``.

Each agent is ``<pool>/slots_<pi>``: pool ``<pool>`` (``COLOUR_POOLS``: its rule, convention and stream
seed), colour-to-slot map ``pi`` (one of Mini-Hanabi's six). Agents already exported are
skipped; a partial run resumes from its checkpoint. Run one worker per core::

    python scripts/colour_testbed.py --worker 0 --workers 2 --runs runs/colour &
    python scripts/colour_testbed.py --worker 1 --workers 2 --runs runs/colour &
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.reproduce.specs import COLOUR_POOLS, colour_agent_config
from eqc.domains.hanabi.training.bootstrap import colour_slot_maps
from eqc.domains.hanabi.training.run import train

#: Training order: the pools the tables need most first.
ORDER = ("sp", "touched", "op", "sp_stream1", "gop_c3", "gop_c2")


def agents() -> list[tuple[str, tuple[int, ...]]]:
    assert set(ORDER) == set(COLOUR_POOLS)
    return [(pool, slots) for pool in ORDER for slots in colour_slot_maps(3, 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--runs", type=Path, default=Path("runs/colour"))
    parser.add_argument("--out", type=Path, default=Path("results/colour/agents"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    for k, (pool, slots) in enumerate(agents()):
        if k % args.workers != args.worker:
            continue
        name = Path(pool) / ("slots_" + "".join(map(str, slots)))
        if (args.out / name / "policy.json").exists():
            continue
        stream = COLOUR_POOLS[pool][2]
        result = train(colour_agent_config(pool, slots), args.runs / name, seed=stream, device="cpu", progress=False)
        print(name, result.as_dict().get("final_eval", result), flush=True)
        export_policy(args.runs / name, args.out / name)


if __name__ == "__main__":
    main()
