"""What the recurrent learners share (:mod:`.pqn_rnn`, :mod:`.ippo_rnn`): every player's LSTM state, carried from
rollout to rollout and zeroed where games end, the rollout buffers of every player's view, and the replay of a
rollout from the states it started with."""

from __future__ import annotations

import torch

from eqc.domains.hanabi.agent.network import LSTMState, as_lstm_state
from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.config.train import BootstrapConfig, OptimConfig, RuleConfig
from eqc.domains.hanabi.training.learner import Learner
from eqc.domains.hanabi.training.resume import lstm_state_dict, restore_lstm_state

__all__ = ["RecurrentLearner", "zero_ended"]


def zero_ended(state: LSTMState, ended: torch.Tensor, players: int) -> LSTMState:
    """``state`` (rows game-major: game b's players at ``b * players + p``) with the rows of every player of the games
    that ``ended`` (bool ``[B]``) set to zero: a recurrent learner's next game starts from a fresh state."""
    keep = (~ended).repeat_interleave(players).view(1, -1, 1).to(state[0].dtype)
    return state[0] * keep, state[1] * keep


class RecurrentLearner(Learner):
    """A learner with an LSTM agent (``[network] lstm_layers >= 1``) and rollouts of ``rollout_steps`` moves: it holds
    ``lstm_state`` (one row per player of every game) and buffers ``[T, B, ...]`` of every player's observations and
    legal moves, the player on turn, the acting players' moves, rewards, ended flags and values."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, *, rollout_steps: int,
                 num_envs: int, seed: int, device: torch.device) -> None:
        if spec.network.lstm_layers < 1:
            raise ValueError(f"{type(self).__name__} needs [network] lstm_layers >= 1 (its feed-forward form is the other learner "
                             "of the same algorithm)")
        super().__init__(spec, rule, optim, bootstrap, num_envs=num_envs, seed=seed, device=device)
        T, B, P = rollout_steps, num_envs, self.num_players
        D, A = self.obs_dim, self.num_actions
        self._obs, self._legal = self.games.env.observations(), self.games.env.legal_move_mask()
        self.lstm_state = as_lstm_state(self.agent.initial_state(B * P, device))
        self._buf_obs = torch.empty(T, B, P, D, device=device)
        self._buf_legal = torch.empty(T, B, P, A, dtype=torch.bool, device=device)
        self._buf_current = torch.empty(T, B, dtype=torch.long, device=device)
        self._buf_action = torch.empty(T, B, dtype=torch.long, device=device)
        self._buf_reward = torch.empty(T, B, device=device)
        self._buf_ended = torch.empty(T, B, dtype=torch.bool, device=device)
        self._buf_value = torch.empty(T, B, device=device)

    def start_rows(self, games: torch.Tensor, start_state: LSTMState) -> LSTMState:
        """The rows of ``start_state`` (every game's players at the rollout's start) of the players of ``games`` ``[b]``."""
        P, b = self.num_players, games.numel()
        rows = (games.view(b, 1) * P + torch.arange(P, device=self.device)).reshape(-1)
        return start_state[0][:, rows], start_state[1][:, rows]

    def state_dict(self) -> dict:
        """As :class:`Learner`'s, with every player's LSTM state (``lstm``)."""
        return {**super().state_dict(), "lstm": lstm_state_dict(self.lstm_state)}

    def load_state_dict(self, state: dict) -> str | None:
        """Restore as :class:`Learner` does (and return its note) and every player's LSTM state; where the games restart
        (a checkpoint without them), every LSTM state starts from zero."""
        note = super().load_state_dict(state)
        zero = as_lstm_state(self.agent.initial_state(self.num_envs * self.num_players, self.device))
        self.lstm_state = restore_lstm_state(state["lstm"], zero) if "games" in state and "lstm" in state else zero
        return note
