"""Training throughput of eqc's Hanabi learners: environment steps/s and updates/s while learning.

For each config, builds the learner, runs ``--warmup`` iterations, then times iterations for
``--seconds`` and reports wall-clock moves/s, updates/s and process-CPU steps/s (robust to
other jobs on a shared machine), with the machine's load average before and after.

R2D2 first fills its replay (untimed) until it learns, so its timed iterations include updates.

Usage: ``python benchmarks/training_throughput.py [--configs configs/hanabi/vdn_cpu.toml ...]
[--variants "pqn, Other-Play (S5)" ...] [--device cpu] [--threads 1] [--seconds 30] [--warmup 3]``.
Prints a markdown table.

Threads: ``torch.set_num_threads(--threads)``, default 1 (on the shared 2-core machine of
``RESULTS.md`` one thread is fastest; docs/install.md, "Threads").
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import torch

from eqc._checks import check_device
from eqc.domains.hanabi.reproduce.specs import SCALES, pool_config
from eqc.domains.hanabi.training.config import TrainConfig, load_config
from eqc.domains.hanabi.training.learners import make_learner

ROOT = Path(__file__).resolve().parents[1]


def variants() -> dict[str, TrainConfig]:
    """The learners measured by default: the CPU config, its OP/G-OP/symmetrized variants, the recurrent PQN
    (Table 3's cpu pool) and a small R2D2."""
    base = load_config(ROOT / "configs/hanabi/vdn_cpu.toml")
    return {
        "vdn_cpu.toml (pqn, sp)": base,
        "pqn, Other-Play (S5)": base.replace(rule={"objective": "op"}),
        "pqn, G-OP D10": base.replace(rule={"objective": "gop", "group": "D10"}),
        "pqn, network symmetrized over D10": base.replace(network={"symmetrize": "D10"}),
        "recurrent pqn (reproduce cpu table3 pool)": pool_config("recurrent", SCALES["cpu"]),
        "r2d2, small": pool_config("recurrent", SCALES["smoke"]).replace(
            run={"num_envs": 128}, network={"hidden_size": 128}, r2d2={"batch_size": 32, "buffer_episodes": 4096, "warmup_episodes": 512}),
    }


def measure(config: TrainConfig, device: torch.device, seconds: float, warmup: int) -> dict[str, float]:
    learner = make_learner(config, seed=0, device=device)
    for _ in range(warmup):
        learner.iteration()
    while learner.updates == 0:  # R2D2: fill the replay until learning starts, untimed
        learner.iteration()
    steps0, updates0 = learner.moves_played, learner.updates
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall0 < seconds:
        stats = learner.iteration()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    steps, updates = learner.moves_played - steps0, learner.updates - updates0
    float(stats.get("loss", 0.0))  # the loss is read once, outside the timed loop
    return {"steps_per_s": steps / wall, "updates_per_s": updates / wall, "cpu_steps_per_s": steps / max(cpu, 1e-9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", type=Path, default=None, help="config files (default: the variants above)")
    parser.add_argument("--variants", nargs="+", choices=list(variants()), default=None,
                        help="measure only these of the default learners (by name)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    if args.configs and args.variants:
        parser.error("--variants picks among the default learners; it cannot be combined with --configs")
    torch.set_num_threads(args.threads)
    device = check_device(args.device)
    load_before = os.getloadavg()
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, {args.threads} thread(s), device {device}")
    print("| config | moves/s | updates/s | CPU-time steps/s |")
    print("|---|---:|---:|---:|")
    configs = {p.name: load_config(p) for p in args.configs} if args.configs else variants()
    if args.variants:
        configs = {name: configs[name] for name in args.variants}
    for name, config in configs.items():
        r = measure(config, device, args.seconds, args.warmup)
        print(f"| {name} | {r['steps_per_s']:,.0f} | {r['updates_per_s']:,.1f} | {r['cpu_steps_per_s']:,.0f} |")
    print(f"load average (1 min) before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
