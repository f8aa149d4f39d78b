"""PQN-style learner: a feed-forward Q-network over many parallel games, no replay, no target net.

Gallici et al. (2024), "Simplifying deep temporal difference learning"; JaxMARL's strongest
Hanabi baseline. One iteration:

1. *Rollout*: every game makes ``rollout_steps`` moves. Only the player on turn decides (the
   others' only move is the no-op), so each move is one sample ``(o, legal, a, r, ended)`` from
   the acting player's view, epsilon-greedy on the network's Q-values.
2. *Targets*: Q(lambda) returns over the rollout, bootstrapping from the greedy value
   ``max_a Q(o', a)`` of the *next acting player* (the partner in two-player Hanabi). The reward
   is shared, so this is the team value that VDN's sum of per-player Q-values estimates when
   the players off turn take the no-op; with one decision maker per step the sum has one term.
3. *Learning*: ``epochs`` passes of ``minibatches`` minibatches of squared TD error to the returns.

Other-Play and G-OP: every (game, player) draws a colour relabelling at the start of each episode
(``eqc.symmetrize.OtherPlay``; under "op" one random player per game keeps the identity, as in
hanabi_SAD). The acting player sees and chooses in its relabelled game; its move is mapped back.
A ``[rule] symmetrize`` group makes the network itself the symmetrizer ``S(psi)``, used alike for
acting, targets and evaluation.
"""

from __future__ import annotations

import torch
from torch import nn

from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.config.train import BootstrapConfig, OptimConfig, PQNConfig, RuleConfig
from eqc.domains.hanabi.training.learner import Learner

__all__ = ["PQNLearner", "epsilon_ladder", "epsilon_schedule", "exploration_epsilon", "lambda_returns"]


def lambda_returns(rewards: torch.Tensor, ended: torch.Tensor, values: torch.Tensor, gamma: float, td_lambda: float) -> torch.Tensor:
    """Q(lambda) returns ``G [T, B]``.

    ``rewards``/``ended [T, B]``: reward of move t and whether it ended its game; ``values [T, B]``:
    greedy value of the state after move t (``values[T-1]`` bootstraps the last return).
    ``G_t = r_t + gamma (1 - ended_t) ((1 - lambda) V_{t+1} + lambda G_{t+1})`` with ``G_T = V_T``.
    """
    returns = torch.empty_like(rewards)
    following = values[-1]
    for t in range(rewards.shape[0] - 1, -1, -1):
        continuing = (~ended[t]).to(rewards.dtype)
        following = rewards[t] + gamma * continuing * ((1 - td_lambda) * values[t] + td_lambda * following)
        returns[t] = following
    return returns


def epsilon_schedule(p: PQNConfig, moves: int) -> float:
    """Epsilon after ``moves`` moves: linear from ``eps_start`` to ``eps_end`` over ``eps_decay_moves``."""
    frac = min(1.0, moves / p.eps_decay_moves)
    return p.eps_start + frac * (p.eps_end - p.eps_start)


def epsilon_ladder(p: PQNConfig, games: int, device: torch.device) -> torch.Tensor:
    """Per-game epsilons ``[games]`` of ``exploration = "ladder"``: game b explores with
    ``eps_start * (eps_end / eps_start) ** (k / (ladder_rungs - 1))``, ``k = b mod ladder_rungs``."""
    k = torch.arange(games, device=device) % p.ladder_rungs
    return p.eps_start * (p.eps_end / p.eps_start) ** (k.double() / (p.ladder_rungs - 1))


def exploration_epsilon(p: PQNConfig, moves: int, games: int, device: torch.device) -> float | torch.Tensor:
    """The epsilon(s) of the next rollout: one float under "decay", the per-game ladder under "ladder"."""
    return epsilon_schedule(p, moves) if p.exploration == "decay" else epsilon_ladder(p, games, device).float()


class PQNLearner(Learner):
    """The fast feed-forward learner (see the module docstring)."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, pqn: PQNConfig, *,
                 num_envs: int, seed: int, device: torch.device) -> None:
        super().__init__(spec, rule, optim, bootstrap, num_envs=num_envs, seed=seed, device=device)
        self.pqn = pqn
        p, B = pqn, num_envs
        self._obs = self.games.env.observations()  # reused buffers: [B, P, D], [B, M]
        self._legal = self.games.env.legal_move_mask()
        T, D = p.rollout_steps, self.obs_dim
        self._buf_obs = torch.empty(T, B, D, device=device)
        self._buf_legal = torch.empty(T, B, self.num_actions, dtype=torch.bool, device=device)
        self._buf_action = torch.empty(T, B, dtype=torch.long, device=device)
        self._buf_reward = torch.empty(T, B, device=device)
        self._buf_ended = torch.empty(T, B, dtype=torch.bool, device=device)
        self._buf_value = torch.empty(T, B, device=device)

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.pqn
        T, B = p.rollout_steps, self.num_envs
        epsilon = exploration_epsilon(p, self.moves_played, B, self.device)
        with torch.no_grad():
            obs, legal, acting = self.games.acting_view(self._obs, self._legal)
            q, _ = self.agent.step(obs, legal)
            for t in range(T):
                self._buf_obs[t], self._buf_legal[t] = obs, legal
                action = self.explore(q, legal, epsilon)
                self._buf_action[t] = action
                greedy = q.argmax(-1) if self.spec.game.uses_sad else None  # SAD: partners see the greedy move
                step = self.games.step(action, acting, greedy, shaping=self.shaping)
                reward, ended = step.reward, step.ended
                self._buf_reward[t], self._buf_ended[t] = reward, ended
                obs, legal, acting = self.games.acting_view(self._obs, self._legal)
                q, _ = self.agent.step(obs, legal)
                value = q.max(-1).values
                self._buf_value[t] = torch.where(torch.isfinite(value), value, 0.0)  # no legal move: game over
            returns = lambda_returns(self._buf_reward, self._buf_ended, self._buf_value, p.gamma, p.td_lambda)
        self.moves_played += T * B
        data = (self._buf_obs.flatten(0, 1), self._buf_legal.flatten(0, 1), self._buf_action.flatten(), returns.flatten())
        losses = []
        for _ in range(p.epochs):
            order = torch.randperm(T * B, generator=self.learn_generator, device=self.device)
            for idx in order.chunk(p.minibatches):
                obs_b, legal_b, action_b, target_b = (x[idx] for x in data)
                q_b, _ = self.agent.step(obs_b, legal_b)
                chosen = q_b.gather(1, action_b.unsqueeze(1)).squeeze(1)
                chosen = torch.where(legal_b.any(-1), chosen, target_b)  # a finished game's step teaches nothing
                loss = 0.5 * (chosen - target_b).pow(2).mean()
                self.optimize(loss)
                losses.append(loss.detach())
        return {"loss": torch.stack(losses).mean(), "epsilon": epsilon if isinstance(epsilon, float) else epsilon.mean()}

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}
