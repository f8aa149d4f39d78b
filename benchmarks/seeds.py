"""K seeds in one process (``eqc.domains.hanabi.training.seeds.StackedSeeds``) against the same K seeds trained one
after another, for issue 40 item 4 ("on a GPU the pool's moves/s at least 0.7 x K x one seed's at K = 8").

Two sets of K learners of the config (seeds 0..K-1, each built as ``make_learner`` builds it): one trained seed after
seed (``learner.iteration()``, as K separate runs would), one as a ``StackedSeeds`` (``iteration()`` of all K at
once). Each set is warmed up by one iteration; then ``--rounds`` rounds alternate the two, ``--iterations``
iterations of every seed per round; moves per second (all K seeds' moves over the round's wall clock), medians.
One after another, K seeds make one seed's moves/s, so ``pool / (K x one seed)`` is the issue's ratio. CUDA is
synchronised before every clock read.

Then the games alone (issue 48 item 3), the same way: K batches of the config's games stepped in turn against the K
seeds' games joined into one ``K x B`` batch (``HanabiBatch.joined``), ``--game-steps`` moves per round, each move a
uniformly random legal one (the legal-move mask included in both).

Prints the CPU's model name and flags that matter, torch's CPU capability, the device, threads and the load average
before and after (a loaded machine shifts both sets alike, since they alternate).

Usage: ``python benchmarks/seeds.py [--config vdn_cpu] [--seeds 4] [--rounds 3] [--iterations 2] [--game-steps 64]
[--threads 1] [--device cpu] [--precision fp32]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import torch
from _machine import cpu_model

from eqc.cli import common as flags
from eqc.domains.hanabi.agent.precision import cpu_features
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.training.config import load_config
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.pqn import PQNLearner
from eqc.domains.hanabi.training.seeds import StackedSeeds, check_stackable
from eqc.domains.hanabi.training.seeds_run import MAX_SEEDS
from eqc.domains.hanabi.training.setup import make_batch


def _learners(config, seeds: int, device: torch.device) -> list[PQNLearner]:
    learners = [make_learner(config, seed, device) for seed in range(seeds)]
    assert all(isinstance(x, PQNLearner) for x in learners)
    return learners  # type: ignore[return-value]


def _timed(step: Callable[[], None], moves: Callable[[], int], device: torch.device) -> float:
    """Moves per second of ``step()`` (``moves()``: the moves made so far)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    before, start = moves(), time.perf_counter()
    step()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (moves() - before) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="vdn_cpu", help="a shipped config's name or a TOML file (feed-forward PQN)")
    parser.add_argument("--seeds", type=flags.int_in(1, MAX_SEEDS), default=4, help=f"K, 1 to {MAX_SEEDS}")
    parser.add_argument("--rounds", type=flags.positive_int, default=3)
    parser.add_argument("--iterations", type=flags.positive_int, default=2, help="iterations of every seed per round")
    parser.add_argument("--game-steps", type=flags.positive_int, default=64, help="moves per round of the games-alone comparison")
    parser.add_argument("--threads", type=flags.positive_int, default=1)
    parser.add_argument("--device", type=flags.device, default="cpu", help="cpu or cuda[:i]")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32", help="'auto' would time a probe first")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    try:
        config = load_config(args.config).replace(network={"precision": args.precision})
        check_stackable(config)
    except (OSError, ValueError) as exc:  # ConfigError is a ValueError: a missing file, a bad key, a learner K seeds cannot batch
        parser.error(f"--config {args.config!r}: {exc}")
    cpu_flags = sorted(f for f in cpu_features() if "bf16" in f or f.startswith("amx") or f in ("avx2", "avx512f"))
    gpu = f"; GPU {torch.cuda.get_device_name(device)}" if device.type == "cuda" else ""
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; flags: {' '.join(cpu_flags)}; torch {torch.__version__}, "
          f"capability {torch.backends.cpu.get_cpu_capability()}; device {device}{gpu}; threads {args.threads}; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{args.config}: {config.run.num_envs} games per seed, network {config.network.mlp_layers} x {config.network.hidden_size}, "
          f"{args.precision}; K = {args.seeds} seeds, {args.rounds} rounds of {args.iterations} iterations")
    alone = _learners(config, args.seeds, device)
    stacked = StackedSeeds(_learners(config, args.seeds, device))

    def one_after_another() -> None:
        for learner in alone:
            for _ in range(args.iterations):
                learner.iteration()

    def in_one_process() -> None:
        for _ in range(args.iterations):
            stacked.iteration()

    for learner in alone:  # warm-up
        learner.iteration()
    stacked.iteration()
    rates: dict[str, list[float]] = {"one after another": [], "in one process": []}
    for _ in range(args.rounds):
        rates["one after another"].append(_timed(one_after_another, lambda: sum(x.moves_played for x in alone), device))
        rates["in one process"].append(_timed(in_one_process, lambda: sum(x.moves_played for x in stacked.learners), device))
    for name, r in rates.items():
        print(f"K = {args.seeds} seeds {name}: median {statistics.median(r):,.0f} moves/s (min {min(r):,.0f}, max {max(r):,.0f})")
    ratio = statistics.median(rates["in one process"]) / statistics.median(rates["one after another"])
    print(f"pool / one seed: {ratio:.2f}x; pool / (K x one seed): {ratio / args.seeds:.2f} (issue 40's GPU target: >= 0.7 at K = 8); "
          f"load {os.getloadavg()[0]:.2f}")
    _games_alone(config, args.seeds, args.rounds, args.game_steps, device)


def _random_moves(env: HanabiBatch, generator: torch.Generator) -> None:
    """One uniformly random legal move in every game of ``env``."""
    legal = env.legal_move_mask()
    noise = torch.rand(legal.shape, generator=generator, device=legal.device)
    env.step(noise.masked_fill(~legal, -1.0).argmax(-1))


def _games_alone(config, seeds: int, rounds: int, steps: int, device: torch.device) -> None:
    """The K seeds' games stepped in turn against joined into one K x B batch (see the module docstring)."""
    rules, games = config.game.rules(), config.run.num_envs
    batches = [make_batch(rules, games, device, seed) for seed in range(seeds)]
    parts = [make_batch(rules, games, device, seed) for seed in range(seeds)]
    for env in (*batches, *parts):
        env.reset()
    joined = HanabiBatch.joined(parts)
    generator = torch.Generator(device=device).manual_seed(0)
    made = {"in turn": 0, "joined": 0}

    def in_turn() -> None:
        for _ in range(steps):
            for env in batches:
                _random_moves(env, generator)
        made["in turn"] += steps * games * seeds

    def one_batch() -> None:
        for _ in range(steps):
            _random_moves(joined, generator)
        made["joined"] += steps * games * seeds

    in_turn()  # warm-up
    one_batch()
    rates: dict[str, list[float]] = {"in turn": [], "joined": []}
    for _ in range(rounds):
        rates["in turn"].append(_timed(in_turn, lambda: made["in turn"], device))
        rates["joined"].append(_timed(one_batch, lambda: made["joined"], device))
    for name, r in rates.items():
        print(f"games alone, K = {seeds} x {games} {name}: median {statistics.median(r):,.0f} moves/s "
              f"(min {min(r):,.0f}, max {max(r):,.0f})")
    print(f"joined / in turn: {statistics.median(rates['joined']) / statistics.median(rates['in turn']):.2f}x; "
          f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
