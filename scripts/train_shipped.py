"""Train the agents of a scale that ``reproduce`` reads as shipped, and export each into ``results/<scale>/agents``.

- ``--scale colour`` (the colour testbed): agent ``<pool>/slots_<pi>``, pool ``<pool>`` (``COLOUR_POOLS``: its
  rule, convention, stream seed and learner) taught the colour-to-slot map ``pi`` (one of Mini-Hanabi's six).
- ``--scale entropy``: agent ``<pool>/seed_<n>``, IPPO with the pool's entropy coefficient (``ENTROPY_POOLS``).
- ``--scale ers`` (the expected-return experiment, ``results/ers/PREREGISTRATION.md`` and ``ADDENDUM.md``): agent
  ``<pool>/stream_<s>/slots_<pi>`` (``ERS_POOLS``, ``ERS_NEW_STREAMS``): OP and G-OP C3 on streams 2 and 3 (streams 0
  and 1 are ``touched``'s shipped agents), then the exploratory ``erop_035`` on streams 0 and 1.
- ``--scale touched`` (the claim-1 experiment, ``results/touched/PREREGISTRATION.md``): agent
  ``<pool>/stream_<s>/slots_<pi>`` (``TOUCHED_POOLS``, ``TOUCHED_STREAMS``); stream 0 of ``sp`` is the colour
  testbed's shipped ``touched`` pool and is not trained again. ``--pools`` picks pools (one worker each).

Agents already exported are skipped; a partial run resumes from its checkpoint. Run one worker per core::

    python scripts/train_shipped.py --scale colour --worker 0 --workers 2 --runs runs/colour &
    python scripts/train_shipped.py --scale colour --worker 1 --workers 2 --runs runs/colour &
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.files import export_policy
from eqc.domains.hanabi.reproduce.specs import (
    COLOUR_POOLS,
    ENTROPY_POOLS,
    ERS_NEW_STREAMS,
    SCALES,
    TOUCHED_POOLS,
    TOUCHED_STREAMS,
    colour_agent_config,
    ers_agent_config,
    pool_config,
    slots_name,
    touched_agent_config,
)
from eqc.domains.hanabi.training.bootstrap import colour_slot_maps
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.run import train

#: The colour testbed's training order: the pools the tables need most first.
COLOUR_ORDER = ("sp", "touched", "op", "gop_c3", "gop_c2", "sp_stream1", "ippo_c005", "ippo_c001")

#: The claim-1 experiment's training order.
TOUCHED_ORDER = ("sp", "op", "eqc", "gop_c3")


def agents(scale: str, streams: tuple[int, ...] = TOUCHED_STREAMS) -> list[tuple[Path, TrainConfig, int]]:
    """Every agent of ``scale``: its directory under the scale's agents, its config and its training seed
    (``streams``: the stream seeds of scale ``touched``'s agents)."""
    if scale == "colour":
        assert set(COLOUR_ORDER) == set(COLOUR_POOLS)
        return [(Path(pool) / slots_name(slots), colour_agent_config(pool, slots), COLOUR_POOLS[pool].stream)
                for pool in COLOUR_ORDER for slots in colour_slot_maps(3, 3)]
    if scale == "touched":
        assert set(TOUCHED_ORDER) == set(TOUCHED_POOLS)
        return [(Path(pool) / f"stream_{stream}" / slots_name(slots), touched_agent_config(pool, slots), stream)
                for pool in TOUCHED_ORDER for stream in streams for slots in colour_slot_maps(3, 3)
                if (pool, stream) != ("sp", 0)]  # stream 0 of sp: results/colour/agents/touched
    if scale == "ers":  # the registered pools first, stream by stream
        registered = [(pool, stream) for stream in (2, 3) for pool in ("op", "gop_c3")]
        order = registered + [(pool, stream) for pool in ERS_NEW_STREAMS for stream in ERS_NEW_STREAMS[pool]
                              if (pool, stream) not in registered]
        return [(Path(pool) / f"stream_{stream}" / ("slots_" + "".join(map(str, slots))), ers_agent_config(pool, slots), stream)
                for pool, stream in order for slots in colour_slot_maps(3, 3)]
    sc = SCALES[scale]
    return [(Path(pool) / f"seed_{seed}", pool_config(pool, sc, seed), seed) for seed in sc.seeds for pool in ENTROPY_POOLS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=("colour", "entropy", "touched", "ers"), required=True)
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pools", nargs="+", default=None, help="train only these pools (default: every pool of the scale)")
    parser.add_argument("--streams", type=int, nargs="+", default=list(TOUCHED_STREAMS),
                        help="--scale touched: the stream seeds to train (default 0 1; scale ers adds 2 3 with --out results/ers/agents)")
    parser.add_argument("--runs", type=Path, required=True, help="directory of the training runs (checkpoints; not shipped)")
    parser.add_argument("--out", type=Path, default=None, help="where the agents are exported (default results/<scale>/agents)")
    args = parser.parse_args()
    if not 0 <= args.worker < args.workers:
        parser.error(f"--worker must be in 0..{args.workers - 1} (--workers {args.workers}), got {args.worker}")
    out = args.out or Path("results") / args.scale / "agents"
    if args.scale != "touched" and args.streams != list(TOUCHED_STREAMS):
        parser.error(f"--streams is read by --scale touched alone, got --scale {args.scale}")
    if any(s < 0 for s in args.streams) or len(set(args.streams)) != len(args.streams):
        parser.error(f"--streams must be distinct non-negative stream seeds, got {args.streams}")
    todo = agents(args.scale, tuple(args.streams))
    known = sorted({name.parts[0] for name, _, _ in todo})
    if args.pools is not None and (unknown := sorted(set(args.pools) - set(known))):
        parser.error(f"--pools: {unknown} are not pools of scale {args.scale!r} (pools: {known})")
    torch.set_num_threads(1)
    for k, (name, config, seed) in enumerate(todo):
        if args.pools is not None and name.parts[0] not in args.pools:
            continue
        if k % args.workers != args.worker or (out / name / "policy.json").exists():
            continue
        result = train(config, args.runs / name, seed=seed, device="cpu", progress=False)
        print(name, result.as_dict().get("final_eval", result), flush=True)
        export_policy(args.runs / name, out / name)


if __name__ == "__main__":
    main()
