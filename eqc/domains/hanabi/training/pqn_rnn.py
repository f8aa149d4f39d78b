"""Recurrent PQN: the fast learner of :mod:`.pqn` with an LSTM agent (``[network] lstm_layers >= 1``).

As purejaxql's recurrent PQN, adapted to turn-based Hanabi. One iteration:

1. *Rollout*: every game makes ``rollout_steps`` moves. Every player steps its own LSTM state
   on every move (as R2D2 and evaluation do; the waiting players' only legal move is the no-op),
   the state is carried from rollout to rollout and zeroed when its game ends (the game is
   re-dealt in the same step). The player on turn moves epsilon-greedily on its Q-values. Under
   Other-Play / G-OP each player sees its relabelled game (``TrainingGames.player_views``).
2. *Targets*: Q(lambda) returns (:func:`.pqn.lambda_returns`) of the acting player's move,
   bootstrapping from the greedy value of the next acting player, computed while acting.
3. *Learning*: ``epochs`` passes; each splits the games into ``minibatches`` and replays each
   game's rollout through the LSTM from the state it started with (both players, states zeroed
   where games ended), regressing the acting player's Q of its move on the returns (squared error).

The stored start states were computed by the network before the last updates (purejaxql does the
same); nothing else is stale. No replay, no target network.
"""

from __future__ import annotations

import torch
from torch import nn

from eqc.domains.hanabi.agent.network import LSTMState, as_lstm_state
from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.config.train import BootstrapConfig, OptimConfig, PQNConfig, RuleConfig
from eqc.domains.hanabi.training.pqn import exploration_epsilon, lambda_returns
from eqc.domains.hanabi.training.recurrent import RecurrentLearner, zero_ended
from eqc.symmetrize.other_play import Relabelling

__all__ = ["RecurrentPQNLearner"]


class RecurrentPQNLearner(RecurrentLearner):
    """The fast recurrent learner (see the module docstring)."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, pqn: PQNConfig, *,
                 num_envs: int, seed: int, device: torch.device) -> None:
        super().__init__(spec, rule, optim, bootstrap, rollout_steps=pqn.rollout_steps, num_envs=num_envs, seed=seed, device=device)
        self.pqn = pqn

    def _step(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Relabelling | None, torch.Tensor, LSTMState]:
        """Views of every player (``TrainingGames.player_views``), the acting players' Q ``[B, A]`` and the state after
        this step (not yet kept)."""
        B, P = self.num_envs, self.num_players
        obs, legal, current, acting = self.games.player_views(self._obs, self._legal)
        q, state = self.agent.step(obs.reshape(B * P, -1), legal.reshape(B * P, -1), self.lstm_state)
        return obs, legal, current, acting, q.view(B, P, -1)[self.games.rows, current], as_lstm_state(state)

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.pqn
        T, B, P = p.rollout_steps, self.num_envs, self.num_players
        epsilon = exploration_epsilon(p, self.moves_played, B, self.device)
        start_state = (self.lstm_state[0].clone(), self.lstm_state[1].clone())
        with torch.no_grad():
            obs, legal, current, acting, q, state = self._step()
            for t in range(T):
                self._buf_obs[t], self._buf_legal[t], self._buf_current[t] = obs, legal, current
                action = self.explore(q, legal[self.games.rows, current], epsilon)
                self._buf_action[t] = action
                greedy = q.argmax(-1) if self.spec.game.uses_sad else None
                step = self.games.step(action, acting, greedy, shaping=self.shaping)
                reward, ended = step.reward, step.ended
                self._buf_reward[t], self._buf_ended[t] = reward, ended
                self.lstm_state = zero_ended(state, ended, P)
                obs, legal, current, acting, q, state = self._step()
                value = q.max(-1).values
                self._buf_value[t] = torch.where(torch.isfinite(value), value, 0.0)
            returns = lambda_returns(self._buf_reward, self._buf_ended, self._buf_value, p.gamma, p.td_lambda)
        self.moves_played += T * B
        losses = []
        for _ in range(p.epochs):
            order = torch.randperm(B, generator=self.learn_generator, device=self.device)
            for games in order.chunk(p.minibatches):
                losses.append(self._learn(games, start_state, returns))
        return {"loss": torch.stack(losses).mean(), "epsilon": epsilon if isinstance(epsilon, float) else epsilon.mean()}

    def replay_q(self, games: torch.Tensor, start_state: LSTMState) -> torch.Tensor:
        """Q ``[T, b, A]`` of the acting players of ``games`` ``[b]`` over the last rollout, replayed through
        the LSTM from ``start_state`` (all games' states at the rollout's start), zeroing where games ended."""
        T, P, b = self.pqn.rollout_steps, self.num_players, games.numel()
        state = self.start_rows(games, start_state)
        seat = torch.arange(b, device=self.device)
        acting = []
        for t in range(T):
            q, stepped = self.agent.step(self._buf_obs[t, games].flatten(0, 1), self._buf_legal[t, games].flatten(0, 1), state)
            acting.append(q.view(b, P, -1)[seat, self._buf_current[t, games]])
            state = zero_ended(as_lstm_state(stepped), self._buf_ended[t, games], P)
        return torch.stack(acting)

    def _learn(self, games: torch.Tensor, start_state: LSTMState, returns: torch.Tensor) -> torch.Tensor:
        """One update on the rollouts of ``games`` ``[b]``: squared error of Q(o, a) to the returns."""
        chosen = self.replay_q(games, start_state).gather(2, self._buf_action[:, games].unsqueeze(2)).squeeze(2)
        loss = 0.5 * (chosen - returns[:, games]).pow(2).mean()
        self.optimize(loss)
        return loss.detach()

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}
