"""Throughput of eqc's HLE adapter: environment steps per second with observation encoding.

Every step encodes the canonical observation of every player (``env.observations()``), builds
the legal-move mask and applies a uniformly random legal move; games restart from a fresh deck
(dealt through eqc's controlled dealing). For reference it also times HLE's own ``rl_env``
(which also encodes every player's observation each step) on the same number of steps.

Usage: python benchmarks/hle_throughput.py [--players 2] [--steps 20000] [--repeats 3] [--threads 1] [--no-rl-env]

Threads: ``torch.set_num_threads(--threads)``, default 1 (the adapter does small tensor work per
step; extra OpenMP threads only spin on a shared machine, see benchmarks/batched_hanabi.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

import torch

from eqc.domains.hanabi.hle import HanabiEnv
from eqc.domains.hanabi.rules import HanabiRules

DEFAULT_THREADS = 1


def eqc_steps_per_second(num_players: int, steps: int, seed: int) -> tuple[float, int]:
    env = HanabiEnv(HanabiRules(num_players), seed=seed)
    generator = torch.Generator().manual_seed(seed)
    env.reset()
    games = 1
    start = time.perf_counter()
    for _ in range(steps):
        if env.terminal:
            env.reset()
            games += 1
        env.observations()
        legal = env.legal_move_mask().nonzero().flatten()
        env.play(int(legal[torch.randint(len(legal), (1,), generator=generator)]))
    return steps / (time.perf_counter() - start), games


def rl_env_steps_per_second(num_players: int, steps: int, seed: int) -> float:
    from hanabi_learning_environment import rl_env

    env = rl_env.make("Hanabi-Full", num_players=num_players)
    rng = random.Random(seed)
    obs = env.reset()
    start = time.perf_counter()
    for _ in range(steps):
        current = obs["current_player"]
        legal = obs["player_observations"][current]["legal_moves_as_int"]
        obs, _, done, _ = env.step(int(rng.choice(legal)))
        if done:
            obs = env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="torch.set_num_threads (default 1)")
    parser.add_argument("--no-rl-env", action="store_true", help="skip the HLE rl_env reference timing")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
        f"python {platform.python_version()}, load average before {os.getloadavg()[0]:.2f}"
    )
    best, games = max(eqc_steps_per_second(args.players, args.steps, args.seed + r) for r in range(args.repeats))
    print(
        f"eqc HanabiEnv, {args.players} players: {best:,.0f} steps/s (best of {args.repeats} x {args.steps} steps, "
        f"{games} games, observations of all players every step)"
    )
    if not args.no_rl_env:
        ref = max(rl_env_steps_per_second(args.players, args.steps, args.seed + r) for r in range(args.repeats))
        print(f"HLE rl_env reference, {args.players} players: {ref:,.0f} steps/s")


if __name__ == "__main__":
    main()
