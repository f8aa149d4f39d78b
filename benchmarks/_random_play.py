"""The load the env benchmarks time (``batched_hanabi.py``, ``gpu.py``): ``HanabiBatch`` played with uniformly random legal moves."""

from __future__ import annotations

from collections.abc import Callable

import torch

from eqc.domains.hanabi.batched import HanabiBatch


def random_play(env: HanabiBatch, seed: int) -> Callable[[], None]:
    """A function making one batched step of ``env``: both players' observations and the legal mask written into
    buffers on ``env``'s device, one uniformly random legal move per game (``argmax(rand * legal)``, drawn from a
    generator seeded with ``seed``), applied."""
    obs = torch.empty(env.num_envs, env.num_players, env.obs_dim, device=env.device)
    legal = torch.empty(env.num_envs, env.num_moves, dtype=torch.bool, device=env.device)
    noise = torch.empty(env.num_envs, env.num_moves, device=env.device)
    generator = torch.Generator(device=env.device).manual_seed(seed)

    def step() -> None:
        env.observations(obs)
        env.legal_move_mask(legal)
        noise.uniform_(generator=generator)
        env.step(noise.mul_(legal).argmax(dim=1))

    return step
