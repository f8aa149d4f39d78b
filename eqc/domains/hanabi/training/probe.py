"""The measured half of "auto" precision: one training step of a run's own network timed in fp32 and in bf16.

Where a CPU's flags do not tell whether bf16 autocast is faster than fp32 (``avx512_bf16`` without AMX; the rule
is :mod:`eqc.domains.hanabi.agent.precision`'s), a run that starts calls :func:`training_step_ms` and trains in
the faster, recording both timings in its precision's reason (so a resumed run keeps the decision without
measuring again). A step is what the learners repeat: the config's agent (its network, symmetrizer and LSTM) on
:data:`PROBE_BATCH` random observations, a squared error, backward and the config's optimizer step. The two
precisions alternate over :data:`PROBE_ROUNDS` rounds after a warm-up, and each gives its median, so a machine
busy with other work slows both alike. Twelve steps of each: under a second for the ``vdn_cpu`` network on an idle core.
"""

from __future__ import annotations

import statistics
import time

import torch

from eqc.domains.hanabi.agent.network import QNetwork, spec_agent
from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["PROBE_BATCH", "PROBE_ROUNDS", "training_step_ms"]

#: Rows (observations) of the timed training step.
PROBE_BATCH = 1024
#: Interleaved rounds of :data:`PROBE_STEPS` steps per precision, after one warm-up round.
PROBE_ROUNDS = 5
PROBE_STEPS = 2


def training_step_ms(config: TrainConfig, device: torch.device) -> tuple[float, float]:
    """Milliseconds of one training step of ``config``'s network on ``device``, in fp32 and in bf16 (medians over
    rounds; see the module docstring). Seeded; the global RNG is left as it was."""
    rules = config.game.rules()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        network = QNetwork(rules.obs_dim, rules.num_moves + 1, config.network).to(device)
    data = torch.Generator(device=device).manual_seed(0)
    obs = torch.rand(PROBE_BATCH, rules.obs_dim, generator=data, device=device)
    legal = torch.ones(PROBE_BATCH, rules.num_moves + 1, dtype=torch.bool, device=device)
    optimizer_class = torch.optim.Adam if config.optim.optimizer == "adam" else torch.optim.RAdam
    optimizer = optimizer_class(network.parameters(), lr=1e-9)
    agents = {p: spec_agent(config.replace(network={"precision": p}).agent, network) for p in ("fp32", "bf16")}
    state = network.initial_state(PROBE_BATCH, device)

    def steps(precision: str) -> float:
        start = time.perf_counter()
        for _ in range(PROBE_STEPS):
            q, _ = agents[precision].step(obs, legal, state)
            optimizer.zero_grad(set_to_none=True)
            q.pow(2).mean().backward()
            optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return 1e3 * (time.perf_counter() - start) / PROBE_STEPS

    times: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for round_ in range(PROBE_ROUNDS + 1):
        for precision in times:
            elapsed = steps(precision)
            if round_:  # the first round warms up
                times[precision].append(elapsed)
    return statistics.median(times["fp32"]), statistics.median(times["bf16"])
