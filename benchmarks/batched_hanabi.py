"""Throughput of the batched torch Hanabi (``HanabiBatch``) against HLE's pyhanabi, in one run.

One env step of a batch of B games counts B steps. What is timed per step, for both:
both players' canonical observations (658 floats each in the full game), the legal-move mask, one uniformly random
legal move per game, applying it and dealing the drawn card; finished games are restarted.

- batched: ``HanabiBatch(B, rules, check=False, auto_reset=True)``, observations and legal masks
  written into preallocated buffers (``observations(out)``, ``legal_move_mask(out)``), moves drawn as
  ``argmax(rand * legal)`` with a seeded generator;
- HLE: pyhanabi's C++ state and ``ObservationEncoder`` for both players, ``legal_moves``, a
  random legal move (Python ``random``), HLE's own random dealing.

Usage: ``python benchmarks/batched_hanabi.py [--preset full] [--batch-sizes 1 64 1024 8192] [--seconds 2]
[--repeats 3] [--threads 1] [--hle-steps 20000] [--knowledge canonical] [--sad off]``; ``--preset``
names the game (``eqc.domains.hanabi.rules.PRESETS``: full, small, mini), for both envs. Prints a
markdown table (best of ``repeats``): wall-clock steps/s and process-CPU steps/s (the latter is
robust to other jobs on a shared machine).

Threads: the count is set with ``torch.set_num_threads(--threads)``, default 1, measured on the
2-core machine of ``RESULTS.md``: under load, batch 1024 ran 48k steps/s with 1 thread and 5.6k
with 2 (OpenMP threads spin-waiting for each other); idle, 242k and 276k.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

import torch
from _random_play import random_play

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import KNOWLEDGE, PRESETS, SAD_VARIANTS, HanabiRules

DEFAULT_THREADS = 1
"""Measured (see the module docstring): one torch thread is fastest on a shared 2-core machine."""


def time_batched(batch: int, seconds: float, repeats: int, rules: HanabiRules, seed: int = 0) -> tuple[float, float]:
    """Best (wall, cpu) steps/s of ``HanabiBatch`` at ``batch`` games."""
    env = HanabiBatch(batch, rules, check=False, auto_reset=True, seed=seed)
    env.reset()
    one = random_play(env, seed)
    for _ in range(20):
        one()
    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        steps, start_wall, start_cpu = 0, time.perf_counter(), time.process_time()
        while steps < 10 or time.perf_counter() - start_wall < seconds:
            one()
            steps += 1
        wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
        best_wall, best_cpu = max(best_wall, batch * steps / wall), max(best_cpu, batch * steps / cpu)
    return best_wall, best_cpu


def time_hle(steps: int, repeats: int, rules: HanabiRules, seed: int = 0) -> tuple[float, float]:
    """Best (wall, cpu) steps/s of pyhanabi, in the game of ``rules``, with both players' canonical encodings."""
    from hanabi_learning_environment import pyhanabi

    game = pyhanabi.HanabiGame({
        "players": 2, "colors": rules.num_colours, "ranks": rules.num_ranks, "hand_size": rules.hand_size,
        "max_information_tokens": rules.max_info_tokens, "max_life_tokens": rules.max_lives, "random_start_player": False, "seed": seed,
    })
    encoder = pyhanabi.ObservationEncoder(game, pyhanabi.ObservationEncoderType.CANONICAL)
    rng = random.Random(seed)

    def new_state() -> object:
        state = game.new_initial_state()
        while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            state.deal_random_card()
        return state

    best_wall = best_cpu = 0.0
    for _ in range(repeats):
        state = new_state()
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            for player in range(2):
                encoder.encode(state.observation(player))
            move = rng.choice(state.legal_moves())
            state.apply_move(move)
            while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
                state.deal_random_card()
            if state.is_terminal():
                state = new_state()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best_wall, best_cpu = max(best_wall, steps / wall), max(best_cpu, steps / cpu)
    return best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=list(PRESETS), default="full", help="the game (HanabiRules.preset), for both envs")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64, 1024, 8192])
    parser.add_argument("--seconds", type=float, default=2.0, help="rough duration of one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=DEFAULT_THREADS, help="torch.set_num_threads (default 1: measured fastest on a shared 2-core CPU)"
    )
    parser.add_argument("--hle-steps", type=int, default=20_000, help="0 skips the HLE baseline")
    parser.add_argument("--knowledge", choices=KNOWLEDGE, default="canonical", help="HanabiRules.knowledge of the batched env")
    parser.add_argument("--sad", choices=SAD_VARIANTS, default="off", help="HanabiRules.sad of the batched env")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)
    rules = HanabiRules.preset(args.preset, knowledge=args.knowledge, sad=args.sad)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"torch {torch.__version__}, {args.threads} torch thread(s), load average {load:.1f} at start; batched rules: {rules}")
    print("| env | batch | steps/s (wall) | steps/s (process CPU) |")
    print("|---|---|---|---|")
    if args.hle_steps:
        wall, cpu = time_hle(args.hle_steps, args.repeats, rules)
        print(f"| HLE pyhanabi + encoder | 1 | {wall:,.0f} | {cpu:,.0f} |", flush=True)
    for batch in args.batch_sizes:
        wall, cpu = time_batched(batch, args.seconds, args.repeats, rules)
        print(f"| HanabiBatch | {batch} | {wall:,.0f} | {cpu:,.0f} |", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} at end")


if __name__ == "__main__":
    main()
