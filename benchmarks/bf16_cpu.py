"""bf16 autocast against fp32 on this CPU, for "auto" precision (issue 40): what the run-start probe measures, and
what it stands for (the learner's moves per second).

1. The probe: ``eqc.domains.hanabi.training.probe.training_step_ms`` of the config (one training step of its
   network at batch 1,024, fp32 and bf16 alternated, medians).
2. The learner: ``--rounds`` rounds of ``--iterations`` PQN iterations of the config in fp32, then in bf16
   (alternated per round; each learner warmed up by one iteration), moves per second per round, medians.

Prints the CPU's model name and bf16-relevant flags, torch's CPU capability, the load average before and after,
and what "auto" decides from the flags alone and with the probe.

Usage: ``python benchmarks/bf16_cpu.py [--config vdn_cpu] [--rounds 6] [--iterations 4] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from _machine import cpu_model

from eqc.domains.hanabi.agent.precision import cpu_features, resolve_precision
from eqc.domains.hanabi.training.config import load_config
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.probe import training_step_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="vdn_cpu")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cpu = torch.device("cpu")
    config = load_config(args.config)
    flags = sorted(f for f in cpu_features() if "bf16" in f or f.startswith("amx") or f in ("avx2", "avx512f"))
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; flags: {' '.join(flags)}; torch {torch.__version__}, "
          f"capability {torch.backends.cpu.get_cpu_capability()}; threads {args.threads}; load {os.getloadavg()[0]:.2f}")
    print(f"auto by the flags alone: {resolve_precision('auto', cpu).reason}")
    print(f"auto with the probe: {resolve_precision('auto', cpu, measure=lambda: training_step_ms(config, cpu)).reason}")
    learners = {p: make_learner(config.replace(network={"precision": p}), 0, cpu) for p in ("fp32", "bf16")}
    rates: dict[str, list[float]] = {p: [] for p in learners}
    for learner in learners.values():
        learner.iteration()
    for _ in range(args.rounds):
        for precision, learner in learners.items():
            moves, start = learner.moves_played, time.perf_counter()
            for _ in range(args.iterations):
                learner.iteration()
            rates[precision].append((learner.moves_played - moves) / (time.perf_counter() - start))
    for precision, r in rates.items():
        print(f"{args.config} PQN {precision}: median {statistics.median(r):,.0f} moves/s (min {min(r):,.0f}, max {max(r):,.0f})")
    print(f"bf16 / fp32: {statistics.median(rates['bf16']) / statistics.median(rates['fp32']):.2f}x; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
