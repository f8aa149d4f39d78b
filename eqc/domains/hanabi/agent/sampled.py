"""Playing an agent as sampled: moves drawn from the softmax of its legal logits instead of its argmax.

For an IPPO agent (:mod:`eqc.domains.hanabi.training.ippo`) the advantage head of its dueling
``QNetwork`` holds the policy's logits (:func:`policy_logits`); :class:`SampledAgent` makes the greedy
loops of :mod:`eqc.domains.hanabi.play` draw from that policy by adding Gumbel noise to the logits (the
argmax of logits plus Gumbel noise is a draw from their softmax).
"""

from __future__ import annotations

import torch

from eqc.domains.hanabi.agent.network import ActingAgent, Agent, AgentWrapper, State

__all__ = ["ILLEGAL_LOGIT", "SampledAgent", "policy_logits", "sample_moves"]


#: The logit of an illegal move: finite, so that probabilities, entropies and their gradients stay finite (0 * log 0
#: terms are 0, not NaN), and low enough that softmax gives it exactly 0.
ILLEGAL_LOGIT = -1e9


def policy_logits(agent: Agent, obs: torch.Tensor, legal: torch.Tensor, state: State = None) -> tuple[torch.Tensor, torch.Tensor, State]:
    """The legal-masked logits ``[N, A]`` (illegal moves :data:`ILLEGAL_LOGIT`), the values ``[N]`` and the next
    recurrent state (None for a feed-forward agent) of a dueling agent at one step ``obs [N, d]`` from ``state``."""
    raw, state = agent.raw(obs, state)
    out = agent.network.out_dim
    return raw[..., : out - 1].masked_fill(~legal, ILLEGAL_LOGIT), raw[..., out - 1], state


def _gumbel_perturbed(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``logits`` plus Gumbel noise drawn on ``generator``: its argmax is a draw from ``softmax(logits)``."""
    uniform = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(1e-20, 1.0)
    return logits - torch.log(-torch.log(uniform))


def sample_moves(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One move per row drawn from ``softmax(logits)`` (Gumbel-max on ``generator``)."""
    return _gumbel_perturbed(logits, generator).argmax(-1)


class SampledAgent(AgentWrapper):
    """``agent`` playing as sampled instead of greedily: its ``step`` returns the legal logits plus Gumbel noise drawn on
    ``generator``, so the greedy loops of :mod:`eqc.domains.hanabi.play` pick a move from the softmax of the logits.
    Dueling agents, feed-forward or recurrent (an IPPO agent's logits are its advantage head)."""

    def __init__(self, agent: ActingAgent, generator: torch.Generator) -> None:
        if not isinstance(agent, Agent):  # a wrapper (a relabelled or sampled agent) has no logits of its own
            raise TypeError(f"SampledAgent plays an Agent, got {type(agent).__name__}")
        if not agent.network.config.dueling:
            raise ValueError("SampledAgent plays dueling agents (whose advantage head holds the logits)")
        super().__init__(agent)
        self.plain, self.generator = agent, generator

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        mask = torch.ones(obs.shape[0], self.network.num_actions, dtype=torch.bool, device=obs.device) if legal is None else legal
        logits, _, state = policy_logits(self.plain, obs, mask, state)
        return _gumbel_perturbed(logits, self.generator), state
