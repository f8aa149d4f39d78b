"""eqc on one device, in one command: the batched game beside JaxMARL's, every learner, the symmetrizer's cost, and the
shipped agents' cross-play replayed against the committed matrices.

Run on a machine with a GPU (about 5 minutes at the defaults)::

    OMP_NUM_THREADS=1 python benchmarks/gpu.py --device cuda --record benchmarks/RESULTS.md

and on a CPU, quickly, as the test suite does (seconds)::

    python benchmarks/gpu.py --device cpu --quick

Sections (each prints its rows as it goes and goes on when one fails, naming the failure):

1. ``env``: HanabiBatch (``v0_belief``) with uniformly random legal moves, both players' observations, the legal mask,
   auto reset: steps/s and ms per batched step at each batch size, eager and compiled (``compile=True``: mode
   "reduce-overhead", CUDA graphs, on cuda; inductor on a cpu; not with ``--quick``); beside it JaxMARL's Hanabi
   (jit + vmap + scan) on the same device where ``jax`` and ``jaxmarl`` import.
2. ``learners``: moves/s and updates/s of each learner through ``make_learner`` (PQN self-play, and compiled with
   ``[run] compile`` but with ``--quick``, Other-Play, G-OP D10, symmetrized D10, IPPO, recurrent PQN), fp32, after a
   warm-up.
3. ``symmetrizer``: the forward and forward+backward cost of an MLP symmetrized over D10 and S5 (D10 alone with
   ``--quick``) against the bare MLP, and its equivariance error.
4. ``xp``: the shipped cpu self-play pool's cross-play replayed on the device in fp32, plain and D10-symmetrized, beside
   the committed matrices (``results/cpu/xp/table2``): the largest difference of a pair mean (0: the same games).

``--record FILE`` appends the table, with the device named, the command and the date, to ``FILE``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


def _sync(device: torch.device) -> Callable[[], None]:
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def env_rows(device: torch.device, sizes: list[int], seconds: float, compile: bool) -> list[str]:
    """Each batch size eager and, with ``compile``, compiled (``HanabiBatch(compile=True)``) beside it."""
    rows, mode = [], _compile_mode(device)
    for batch in sizes:
        for compiled in (False, True) if compile else (False,):
            rate, step_ms = _env_rate(device, batch, seconds, compiled)
            what = f"HanabiBatch v0_belief{f', compiled ({mode})' if compiled else ''}, {batch:,} games"
            rows.append(f"| env | {what} | {rate:,.0f} steps/s | {step_ms:.2f} ms per step |")
    if not compile:
        rows.append("| env | HanabiBatch v0_belief, compiled | not measured with --quick (each size compiles for seconds) | |")
    return rows + _jaxmarl_rows(sizes, seconds)


def _compile_mode(device: torch.device) -> str:
    """How ``[run] compile`` compiles on ``device`` (eqc._compile)."""
    return "reduce-overhead, CUDA graphs" if device.type == "cuda" else "inductor"


def _env_rate(device: torch.device, batch: int, seconds: float, compile: bool) -> tuple[float, float]:
    """Steps/s and ms per batched step of ``batch`` games with uniformly random legal moves (the first steps, which
    compile, are the warm-up)."""
    from _random_play import random_play

    from eqc.domains.hanabi.batched import HanabiBatch
    from eqc.domains.hanabi.rules import HanabiRules

    sync = _sync(device)
    env = HanabiBatch(batch, HanabiRules(knowledge="v0_belief"), device=device, check=False, auto_reset=True, seed=0,
                      compile=compile)
    env.reset()
    step = random_play(env, 0)
    for _ in range(5):
        step()
    sync()
    start, n = time.perf_counter(), 0
    while n < 5 or time.perf_counter() - start < seconds:
        step()
        n += 1
    sync()
    took = time.perf_counter() - start
    return batch * n / took, took / n * 1e3


def _jaxmarl_rows(sizes: list[int], seconds: float) -> list[str]:
    try:
        import jax
        import jax.numpy as jnp
        from jaxmarl.environments.hanabi import Hanabi
    except ImportError as exc:
        return [f"| env | JaxMARL Hanabi | not measured: {exc} | |"]
    env, horizon, rows = Hanabi(), 64, []
    for n in sizes:
        def one_step(carry, _, n=n):  # type: ignore[no-untyped-def]
            key, state = carry
            key, k_act, k_step = jax.random.split(key, 3)
            legal = jax.vmap(env.get_legal_moves)(state)
            keys = jax.random.split(k_act, len(env.agents))
            acts = {a: jax.random.categorical(keys[i], jnp.where(legal[a] > 0, 0.0, -1e9)) for i, a in enumerate(env.agents)}
            _, state, reward, _, _ = jax.vmap(env.step)(jax.random.split(k_step, n), state, acts)
            return (key, state), reward["__all__"].sum()

        rollout = jax.jit(lambda key, state, f=one_step: jax.lax.scan(f, (key, state), None, horizon))
        key = jax.random.PRNGKey(0)
        _, state = jax.jit(jax.vmap(env.reset))(jax.random.split(key, n))
        (key, state), total = rollout(key, state)
        total.block_until_ready()
        start, k = time.perf_counter(), 0
        while k < 2 or time.perf_counter() - start < seconds:
            (key, state), total = rollout(key, state)
            k += 1
        total.block_until_ready()
        took = time.perf_counter() - start
        rate = n * horizon * k / took
        rows.append(f"| env | JaxMARL Hanabi ({jax.devices()[0].platform}), {n:,} games | {rate:,.0f} steps/s | "
                    f"{took / (k * horizon) * 1e3:.2f} ms per step |")
    return rows


def learner_rows(device: torch.device, num_envs: int, seconds: float, compile: bool) -> list[str]:
    """Each learner, and with ``compile`` PQN self-play compiled (``[run] compile``) beside it."""
    from eqc.domains.hanabi.reproduce.specs import SCALES, pool_config
    from eqc.domains.hanabi.training.config import load_config

    base = load_config("vdn_cpu").replace(run={"num_envs": num_envs}, network={"precision": "fp32"})
    variants = {
        "PQN self-play": base,
        **({f"PQN self-play, compiled ({_compile_mode(device)})": base.replace(run={"compile": True})} if compile else {}),
        "PQN Other-Play (S5)": base.replace(rule={"objective": "op"}),
        "PQN G-OP D10": base.replace(rule={"objective": "gop", "group": "D10"}),
        "PQN symmetrized D10": base.replace(network={"symmetrize": "D10"}),
        "IPPO (ippo_cpu.toml)": load_config("ippo_cpu").replace(run={"num_envs": num_envs}, network={"precision": "fp32"}),
        "recurrent PQN (cpu Table 3 pool)": pool_config("recurrent", SCALES["cpu"]).replace(run={"num_envs": num_envs},
                                                                                             network={"precision": "fp32"}),
    }
    return [learner_row(device, name, config, seconds) for name, config in variants.items()]


def learner_row(device: torch.device, name: str, config: TrainConfig, seconds: float) -> str:
    """Moves/s and updates/s of ``config``'s learner on ``device``, after its first update."""
    from eqc.domains.hanabi.training.learners import make_learner

    sync, num_envs = _sync(device), config.run.num_envs
    try:
        learner = make_learner(config, seed=0, device=device)
        while learner.updates == 0:
            learner.iteration()
        sync()
        moves, updates, start = learner.moves_played, learner.updates, time.perf_counter()
        while learner.updates - updates < 2 or time.perf_counter() - start < seconds:
            learner.iteration()
        sync()
        took = time.perf_counter() - start
        return (f"| learner | {name}, {num_envs:,} games, fp32 | {(learner.moves_played - moves) / took:,.0f} moves/s | "
                f"{(learner.updates - updates) / took:,.1f} updates/s |")
    except Exception as exc:  # a benchmark reports a failure and goes on
        return f"| learner | {name} | FAILED: {type(exc).__name__}: {str(exc)[:200]} | |"


def symmetrizer_rows(device: torch.device, batch: int, groups: tuple[str, ...]) -> list[str]:
    return [_symmetrizer_row(device, batch, name) for name in groups]


def _symmetrizer_row(device: torch.device, batch: int, name: str) -> str:
    """An MLP symmetrized over the colour group ``name`` of the standard game against the bare MLP."""
    from eqc.domains.hanabi import HanabiRules, colour_symmetry
    from eqc.domains.hanabi.symmetry import colour_group
    from eqc.symmetrize import Symmetrizer

    sync = _sync(device)

    def ms(f: Callable[[], object]) -> float:
        for _ in range(2):
            f()
        sync()
        start = time.perf_counter()
        for _ in range(5):
            f()
        sync()
        return (time.perf_counter() - start) / 5 * 1e3

    sym = colour_symmetry(colour_group(name), HanabiRules())
    d_in, d_out = sym.observation_rep.dim, sym.action_rep.dim
    net = torch.nn.Sequential(torch.nn.Linear(d_in, 512), torch.nn.ReLU(), torch.nn.Linear(512, d_out)).to(device)
    symmetrized = Symmetrizer(net, sym.observation_rep, sym.action_rep).to(device)
    x = torch.randn(batch, d_in, device=device)
    g = torch.randint(0, sym.observation_rep.group.order, (batch,), device=device)
    with torch.no_grad():
        error = (symmetrized(sym.observation_rep.act(x, g)) - sym.action_rep.act(symmetrized(x), g)).abs().max().item()
        forward, bare = ms(lambda: symmetrized(x)), ms(lambda: net(x))
    both, bare_both = ms(lambda: symmetrized(x).sum().backward()), ms(lambda: net(x).sum().backward())
    return (f"| symmetrizer | {name} (order {sym.observation_rep.group.order}), batch {batch:,}, MLP 512 | forward "
            f"{forward / bare:.1f}x bare ({forward:.2f} ms), fwd+bwd {both / bare_both:.1f}x | equivariance error {error:.1e} |")


def xp_rows(device: torch.device, games: int) -> list[str]:
    from eqc.domains.hanabi.agent.policy import load_policy
    from eqc.domains.hanabi.xp import cross_play_games, pool_runs

    pool = ROOT / "results" / "cpu" / "agents" / "sp"
    if not pool.is_dir():
        return ["| xp | shipped cpu self-play pool | not measured: no results/cpu/agents/sp (a clone of the repository) | |"]
    rows = []
    for symmetrize, cell in ((None, "sad"), ("D10", "sad_d10-symmetrized")):
        runs = pool_runs(pool)
        policies = [load_policy(r, device=device, symmetrize=symmetrize, precision="fp32") for r in runs]
        mean = cross_play_games(policies, games, deck_seed=1).summary().mean.double().cpu()
        committed = torch.tensor(json.loads((ROOT / "results/cpu/xp/table2" / cell / "xp.json").read_text())["matrix"]["mean"],
                                 dtype=torch.float64)
        note = "the committed games" if games == 1000 else f"committed at 1000 games per pair, here {games}"
        rows.append(f"| xp | cpu self-play pool{' D10-symmetrized' if symmetrize else ''}, {len(runs)} agents, fp32 | XP "
                    f"{float(mean[~torch.eye(len(runs), dtype=torch.bool)].mean()):.2f} | max difference of a pair mean from "
                    f"{note}: {float((mean - committed).abs().max()):.3f} |")
    return rows


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="torch device (cuda, cuda:1, cpu)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and a fraction of a second per row (a smoke run)")
    parser.add_argument("--record", type=Path, default=None, help="append the table to this Markdown file")
    args = parser.parse_args(argv)
    try:
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("CUDA is not available here")
        torch.empty(1, device=device)
    except (RuntimeError, ValueError) as exc:
        parser.error(f"--device {args.device!r} cannot be used: {exc}")
    if args.record is not None:  # checked before the hour of benchmarks whose table it appends
        if args.record.is_dir():
            parser.error(f"--record {str(args.record)!r} is a directory: name a Markdown file to append the table to")
        if not args.record.parent.is_dir():
            parser.error(f"--record {str(args.record)!r}: its folder does not exist")
        if not os.access(args.record if args.record.exists() else args.record.parent, os.W_OK):
            parser.error(f"--record {str(args.record)!r} cannot be written here (permissions)")
    torch.set_num_threads(1)
    sizes, seconds, envs, batch, games = ([64, 256], 0.2, 64, 64, 8) if args.quick else ([1024, 8192, 65536], 4.0, 8192, 4096, 1000)
    groups = ("D10",) if args.quick else ("D10", "S5")
    compile = not args.quick
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU ({platform.processor() or platform.machine()})"
    rows = [f"eqc on {name}, torch {torch.__version__}, {datetime.date.today()}: `python {' '.join(sys.argv)}`", "",
            "| section | what | measured | beside it |", "|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    for section in (lambda: env_rows(device, sizes, seconds, compile), lambda: learner_rows(device, envs, seconds, compile),
                    lambda: symmetrizer_rows(device, batch, groups), lambda: xp_rows(device, games)):
        try:
            new = section()
        except Exception as exc:  # a benchmark reports a failure and goes on
            new = [f"| FAILED | {type(exc).__name__}: {str(exc)[:300]} | | |"]
        print("\n".join(new), flush=True)
        rows += new
    if args.record is not None:
        with open(args.record, "a") as f:
            f.write("\n" + "\n".join(rows) + "\n")
    return rows


if __name__ == "__main__":
    main()
