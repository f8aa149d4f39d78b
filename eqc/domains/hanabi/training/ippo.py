"""Independent PPO (IPPO) with parameter sharing: an actor-critic over many parallel games, feed-forward or with an
LSTM (``[network] lstm_layers >= 1``; Forkel et al.'s agents are recurrent).

The rival baseline of Forkel, Ruhdorfer, Bulling and Foerster ("High entropy leads to symmetry
equivariant policies in Dec-POMDPs", arXiv 2511.22581): independent PPO with a high entropy
coefficient (about 0.05 instead of the usual 0.01) and GAE lambda about 0.9, greedified after
training. Every seat plays the same network (parameter sharing, as the IPPO baselines of JaxMARL
and jax-aht).

The network is the agent's ``QNetwork`` with dueling heads (``[network] dueling = true``): the
advantage head's outputs are the policy's logits over moves (illegal moves masked), the value head
is the critic. Its greedy move, the argmax of the logits, is the argmax of ``Q = V + A - mean A``,
so an IPPO agent is exported, played, cross-played and symmetrized at test time like any other;
:class:`~eqc.domains.hanabi.agent.sampled.SampledAgent` plays it as sampled.

One iteration (the rollout and the minibatches of both forms: :mod:`.rollout`):

1. *Rollout*: every game makes ``rollout_steps`` moves. The player on turn samples a move from the
   softmax of its legal logits (the players off turn take the no-op with probability 1 and add
   nothing to the gradient), giving ``(o, legal, a, log pi(a|o), V(o), r, ended)`` from the acting
   player's view.
2. *Advantages*: GAE(``gamma``, ``gae_lambda``) along each game's sequence of decisions, bootstrapping
   from the value of the next acting player's observation (the partner, in two-player Hanabi) with the
   shared reward: the turn-based view the PQN learner's targets take; returns = advantages + values.
3. *Learning*: ``epochs`` passes of ``minibatches`` minibatches of the clipped surrogate (``clip``),
   ``value_coef`` times the squared error of the value to the returns, minus ``entropy_coef`` times the
   entropy of the legal-move distribution; advantages normalised per minibatch (recurrent: the minibatches'
   games replayed through the LSTM from the rollout's start).

Other-Play, G-OP and a ``[network] symmetrize`` group act as for every learner (:mod:`.games`).

The algorithm ``ippo`` (:data:`IPPO`): its section ``[ppo]`` (:class:`PPOConfig`), that section's rules and
:class:`IPPOLearner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from eqc.domains.hanabi.agent.network import State
from eqc.domains.hanabi.agent.sampled import policy_logits, sample_moves
from eqc.domains.hanabi.config.schema import config_default, config_field, require, require_at_least, require_in_unit
from eqc.domains.hanabi.training.learner import Algorithm, LearnerSetup
from eqc.domains.hanabi.training.rollout import RolloutLearner, RolloutSettings, View, check_rollout_keys, check_rollout_use

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["IPPO", "IPPOLearner", "PPOConfig", "gae", "ppo_loss"]


@dataclass(frozen=True)
class PPOConfig(RolloutSettings):
    """The section ``[ppo]``: the rollout's keys (:class:`~.rollout.RolloutSettings`, longer rollouts and more epochs
    by default) and PPO's."""

    rollout_steps: int = config_default(RolloutSettings, "rollout_steps", 16)
    epochs: int = config_default(RolloutSettings, "epochs", 4)
    gae_lambda: float = config_field("lambda of generalised advantage estimation (Forkel et al.: about 0.9)", 0.9)
    clip: float = config_field("PPO's ratio clip epsilon", 0.2)
    entropy_coef: float = config_field("weight of the policy's entropy bonus (the usual 0.01; Forkel et al.'s high "
                                       "entropy: about 0.05)", 0.01)
    value_coef: float = config_field("weight of the value loss", 0.5)


def _check_ppo(pp: PPOConfig, c: TrainConfig) -> None:
    """The rules of ``[ppo]``'s keys."""
    check_rollout_keys("ppo", pp, c)
    require_in_unit("ppo", pp, ("gae_lambda",))
    require(0 < pp.clip < 1, "[ppo] clip", f"must be in (0, 1), got {pp.clip}")
    require_at_least("ppo", pp, ("entropy_coef", "value_coef"), 0)


def _use_ippo(pp: PPOConfig, c: TrainConfig) -> None:
    """What ``ippo`` needs of the other sections: dueling heads (the policy's logits and the critic)."""
    require(c.network.dueling, "[network] dueling", "must be true for 'ippo': the advantage head holds the policy's logits "
            "and the value head is the critic")
    check_rollout_use("ppo", pp, c)


def gae(rewards: torch.Tensor, ended: torch.Tensor, values: torch.Tensor, last_value: torch.Tensor, gamma: float,
        gae_lambda: float) -> torch.Tensor:
    """Generalised advantage estimates ``A [T, B]``.

    ``rewards``/``ended [T, B]``: reward of decision t and whether it ended its game; ``values [T, B]``:
    ``V(o_t)``; ``last_value [B]``: the value of the observation after the last decision.
    ``delta_t = r_t + gamma (1 - ended_t) V_{t+1} - V_t`` and ``A_t = delta_t + gamma lambda (1 - ended_t) A_{t+1}``.
    """
    advantages = torch.empty_like(rewards)
    following, next_value = torch.zeros_like(last_value), last_value
    for t in range(rewards.shape[0] - 1, -1, -1):
        continuing = (~ended[t]).to(rewards.dtype)
        delta = rewards[t] + gamma * continuing * next_value - values[t]
        following = delta + gamma * gae_lambda * continuing * following
        advantages[t] = following
        next_value = values[t]
    return advantages


def ppo_loss(logits: torch.Tensor, value: torch.Tensor, legal: torch.Tensor, action: torch.Tensor, old_log_prob: torch.Tensor,
             advantages: torch.Tensor, returns: torch.Tensor, ppo: PPOConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss of step 3 of the module docstring over decisions of any shape ``[...]`` (``logits`` and ``legal``
    ``[..., A]``) and the mean entropy of the policy there (detached). Decisions without a legal move (a finished
    game's) weigh 0; advantages are normalised over the others."""
    live = legal.any(-1)
    log_probs = torch.log_softmax(logits, -1)  # rows without a legal move are uniform, and weighted 0 below
    log_prob = log_probs.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    advantages = (advantages - advantages[live].mean()) / (advantages[live].std() + 1e-8)
    ratio = (log_prob - old_log_prob).exp()
    surrogate = torch.min(ratio * advantages, ratio.clamp(1 - ppo.clip, 1 + ppo.clip) * advantages)
    weight = live.to(value.dtype) / live.sum().clamp(min=1)
    loss = (weight * (-surrogate + ppo.value_coef * 0.5 * (value - returns).pow(2) - ppo.entropy_coef * entropy)).sum()
    return loss, (weight * entropy).sum().detach()


class IPPOLearner(RolloutLearner):
    """Independent PPO with parameter sharing, feed-forward or recurrent (see the module docstring)."""

    scalars = ("loss", "entropy")

    def __init__(self, setup: LearnerSetup, ppo: PPOConfig) -> None:
        super().__init__(setup, ppo)
        self.ppo = ppo
        #: The acting players' log-probabilities of their moves in the last rollout ``[T, B]``.
        self.log_prob = torch.empty(ppo.rollout_steps, self.num_envs, device=self.device)

    def heads(self, obs: torch.Tensor, legal: torch.Tensor, state: State = None) -> tuple[torch.Tensor, torch.Tensor, State]:
        return policy_logits(self.agent, obs, legal, state)

    def _sample(self, t: int, view: View) -> torch.Tensor:
        """The acting players' moves drawn from their policy, recording their log-probabilities and values."""
        action = sample_moves(view.scores, self.explore_generator)
        self.log_prob[t] = torch.log_softmax(view.scores, -1).gather(1, action.unsqueeze(1)).squeeze(1)
        assert view.value is not None  # heads gives values
        self.rollout.value[t] = view.value
        return action

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.ppo
        last, r = self.collect(self._sample), self.rollout
        assert last.value is not None
        advantages = gae(r.reward, r.ended, r.value, last.value, p.gamma, p.gae_lambda)
        returns = advantages + r.value
        losses, entropies = [], []
        for batch in self.minibatches(self.log_prob, advantages, returns):
            assert batch.value is not None
            old_log_prob, advantages_b, returns_b = batch.decisions
            loss, entropy = ppo_loss(batch.scores, batch.value, batch.legal, batch.action, old_log_prob, advantages_b, returns_b, p)
            self.optimize(loss)
            losses.append(loss.detach())
            entropies.append(entropy)
        return {"loss": torch.stack(losses).mean(), "entropy": torch.stack(entropies).mean()}


IPPO = Algorithm("ippo", "independent PPO with parameter sharing; an LSTM if lstm_layers >= 1", "ppo", PPOConfig, IPPOLearner,
                 forms=(False, True), aux=False, policy=True, check_keys=_check_ppo, check_use=_use_ippo)
