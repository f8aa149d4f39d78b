"""Recurrent IPPO: the independent PPO of :mod:`.ippo` with an LSTM actor-critic (``[network] lstm_layers >= 1``).

Forkel et al.'s agents are recurrent; so is this one, as the recurrent PQN learner (:mod:`.pqn_rnn`)
is the recurrent form of PQN. One iteration:

1. *Rollout*: every game makes ``rollout_steps`` moves. Every player steps its own LSTM state on every
   move (the waiting players' only legal move is the no-op), the state is carried from rollout to
   rollout and zeroed when its game ends (the game is re-dealt in the same step). The player on turn
   samples a move from the softmax of its legal logits, giving ``log pi(a|o)`` and ``V(o)``. Under
   Other-Play / G-OP each player sees its relabelled game (``TrainingGames.player_views``).
2. *Advantages*: GAE along each game's decisions, as :func:`.ippo.gae`.
3. *Learning*: ``epochs`` passes; each splits the games into ``minibatches`` and replays each game's
   rollout through the LSTM from the state it started with (both players, states zeroed where games
   ended), minimising :func:`.ippo.ppo_loss` of the acting players' decisions.

The stored start states were computed by the network before the last updates, as in :mod:`.pqn_rnn`.
"""

from __future__ import annotations

import torch
from torch import nn

from eqc.domains.hanabi.agent.network import LSTMState, as_lstm_state
from eqc.domains.hanabi.agent.sampled import policy_logits, sample_moves
from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.config.train import BootstrapConfig, OptimConfig, PPOConfig, RuleConfig
from eqc.domains.hanabi.training.ippo import gae, ppo_loss
from eqc.domains.hanabi.training.recurrent import RecurrentLearner, zero_ended
from eqc.symmetrize.other_play import Relabelling

__all__ = ["RecurrentIPPOLearner"]


class RecurrentIPPOLearner(RecurrentLearner):
    """Independent PPO with parameter sharing and an LSTM (see the module docstring)."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, ppo: PPOConfig, *,
                 num_envs: int, seed: int, device: torch.device) -> None:
        super().__init__(spec, rule, optim, bootstrap, rollout_steps=ppo.rollout_steps, num_envs=num_envs, seed=seed, device=device)
        self.ppo = ppo
        T, B = ppo.rollout_steps, num_envs
        self._buf_acting_legal = torch.empty(T, B, self.num_actions, dtype=torch.bool, device=device)
        self._buf_log_prob = torch.empty(T, B, device=device)

    def _step(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Relabelling | None, torch.Tensor, torch.Tensor, LSTMState]:
        """Views of every player (``TrainingGames.player_views``), the acting players' logits ``[B, A]`` and values
        ``[B]``, and every player's state after this step (not yet zeroed where games end)."""
        B, P = self.num_envs, self.num_players
        obs, legal, current, acting = self.games.player_views(self._obs, self._legal)
        logits, value, state = policy_logits(self.agent, obs.reshape(B * P, -1), legal.reshape(B * P, -1), self.lstm_state)
        rows = self.games.rows
        return obs, legal, current, acting, logits.view(B, P, -1)[rows, current], value.view(B, P)[rows, current], as_lstm_state(state)

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.ppo
        T, B, P = p.rollout_steps, self.num_envs, self.num_players
        start_state = (self.lstm_state[0].clone(), self.lstm_state[1].clone())
        with torch.no_grad():
            obs, legal, current, acting, logits, value, state = self._step()
            for t in range(T):
                self._buf_obs[t], self._buf_legal[t], self._buf_current[t] = obs, legal, current
                self._buf_acting_legal[t] = legal[self.games.rows, current]
                action = sample_moves(logits, self.explore_generator)
                self._buf_action[t], self._buf_value[t] = action, value
                self._buf_log_prob[t] = torch.log_softmax(logits, -1).gather(1, action.unsqueeze(1)).squeeze(1)
                greedy = logits.argmax(-1) if self.spec.game.uses_sad else None  # SAD: partners see the greedy move
                step = self.games.step(action, acting, greedy, shaping=self.shaping)
                self._buf_reward[t], self._buf_ended[t] = step.reward, step.ended
                self.lstm_state = zero_ended(state, step.ended, P)
                obs, legal, current, acting, logits, value, state = self._step()
            advantages = gae(self._buf_reward, self._buf_ended, self._buf_value, value, p.gamma, p.gae_lambda)
            returns = advantages + self._buf_value
        self.moves_played += T * B
        losses, entropies = [], []
        for _ in range(p.epochs):
            order = torch.randperm(B, generator=self.learn_generator, device=self.device)
            for games in order.chunk(p.minibatches):
                logits_b, value_b = self.replay(games, start_state)
                loss, entropy = ppo_loss(logits_b, value_b, self._buf_acting_legal[:, games], self._buf_action[:, games],
                                         self._buf_log_prob[:, games], advantages[:, games], returns[:, games], p)
                self.optimize(loss)
                losses.append(loss.detach())
                entropies.append(entropy)
        return {"loss": torch.stack(losses).mean(), "entropy": torch.stack(entropies).mean()}

    def replay(self, games: torch.Tensor, start_state: LSTMState) -> tuple[torch.Tensor, torch.Tensor]:
        """The acting players' logits ``[T, b, A]`` and values ``[T, b]`` of ``games`` ``[b]`` over the last rollout,
        replayed through the LSTM from ``start_state`` (all games' states at the rollout's start), zeroing where
        games ended."""
        T, P, b = self.ppo.rollout_steps, self.num_players, games.numel()
        state = self.start_rows(games, start_state)
        seat = torch.arange(b, device=self.device)
        logits, values = [], []
        for t in range(T):
            step_logits, step_value, stepped = policy_logits(self.agent, self._buf_obs[t, games].flatten(0, 1),
                                                             self._buf_legal[t, games].flatten(0, 1), state)
            current = self._buf_current[t, games]
            logits.append(step_logits.view(b, P, -1)[seat, current])
            values.append(step_value.view(b, P)[seat, current])
            state = zero_ended(as_lstm_state(stepped), self._buf_ended[t, games], P)
        return torch.stack(logits), torch.stack(values)

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}
