"""Independent PPO (IPPO) with parameter sharing: an actor-critic over many parallel games (feed-forward here; with
an LSTM, :mod:`.ippo_rnn`).

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

One iteration:

1. *Rollout*: every game makes ``rollout_steps`` moves. The player on turn samples a move from the
   softmax of its legal logits (the players off turn take the no-op with probability 1 and add
   nothing to the gradient), giving ``(o, legal, a, log pi(a|o), V(o), r, ended)`` from the acting
   player's view.
2. *Advantages*: GAE(``gamma``, ``gae_lambda``) along each game's sequence of decisions, bootstrapping
   from the value of the next acting player's observation (the partner, in two-player Hanabi) with the
   shared reward: the turn-based view the PQN learner's targets take; returns = advantages + values.
3. *Learning*: ``epochs`` passes of ``minibatches`` minibatches of the clipped surrogate (``clip``),
   ``value_coef`` times the squared error of the value to the returns, minus ``entropy_coef`` times the
   entropy of the legal-move distribution; advantages normalised per minibatch.

Other-Play, G-OP and a ``[rule] symmetrize`` group act as for every learner (:mod:`.games`).
"""

from __future__ import annotations

import torch
from torch import nn

from eqc.domains.hanabi.agent.sampled import policy_logits, sample_moves
from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.config.train import BootstrapConfig, OptimConfig, PPOConfig, RuleConfig
from eqc.domains.hanabi.training.learner import Learner

__all__ = ["IPPOLearner", "gae", "ppo_loss"]


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


class IPPOLearner(Learner):
    """Independent PPO with parameter sharing (see the module docstring)."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, ppo: PPOConfig, *,
                 num_envs: int, seed: int, device: torch.device) -> None:
        super().__init__(spec, rule, optim, bootstrap, num_envs=num_envs, seed=seed, device=device)
        self.ppo = ppo
        T, B, D = ppo.rollout_steps, num_envs, self.obs_dim
        self._obs = self.games.env.observations()  # reused buffers: [B, P, D], [B, M]
        self._legal = self.games.env.legal_move_mask()
        self._buf_obs = torch.empty(T, B, D, device=device)
        self._buf_legal = torch.empty(T, B, self.num_actions, dtype=torch.bool, device=device)
        self._buf_action = torch.empty(T, B, dtype=torch.long, device=device)
        self._buf_log_prob = torch.empty(T, B, device=device)
        self._buf_value = torch.empty(T, B, device=device)
        self._buf_reward = torch.empty(T, B, device=device)
        self._buf_ended = torch.empty(T, B, dtype=torch.bool, device=device)

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.ppo
        T, B = p.rollout_steps, self.num_envs
        with torch.no_grad():
            obs, legal, acting = self.games.acting_view(self._obs, self._legal)
            logits, value, _ = policy_logits(self.agent, obs, legal)
            for t in range(T):
                action = sample_moves(logits, self.explore_generator)
                self._buf_obs[t], self._buf_legal[t], self._buf_action[t] = obs, legal, action
                self._buf_log_prob[t] = torch.log_softmax(logits, -1).gather(1, action.unsqueeze(1)).squeeze(1)
                self._buf_value[t] = value
                greedy = logits.argmax(-1) if self.spec.game.uses_sad else None  # SAD: partners see the greedy move
                step = self.games.step(action, acting, greedy, shaping=self.shaping)
                self._buf_reward[t], self._buf_ended[t] = step.reward, step.ended
                obs, legal, acting = self.games.acting_view(self._obs, self._legal)
                logits, value, _ = policy_logits(self.agent, obs, legal)
            advantages = gae(self._buf_reward, self._buf_ended, self._buf_value, value, p.gamma, p.gae_lambda)
            returns = advantages + self._buf_value
        self.moves_played += T * B
        data = (self._buf_obs.flatten(0, 1), self._buf_legal.flatten(0, 1), self._buf_action.flatten(),
                self._buf_log_prob.flatten(), advantages.flatten(), returns.flatten())
        losses, entropies = [], []
        for _ in range(p.epochs):
            order = torch.randperm(T * B, generator=self.learn_generator, device=self.device)
            for idx in order.chunk(p.minibatches):
                obs_b, legal_b, action_b, old_log_prob, adv_b, return_b = (x[idx] for x in data)
                logits_b, value_b, _ = policy_logits(self.agent, obs_b, legal_b)
                loss, entropy = ppo_loss(logits_b, value_b, legal_b, action_b, old_log_prob, adv_b, return_b, p)
                self.optimize(loss)
                losses.append(loss.detach())
                entropies.append(entropy)
        return {"loss": torch.stack(losses).mean(), "entropy": torch.stack(entropies).mean()}

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}
