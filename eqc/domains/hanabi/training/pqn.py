"""PQN-style learner: a Q-network over many parallel games, no replay, no target net; feed-forward, or with an LSTM
(``[network] lstm_layers >= 1``) as purejaxql's recurrent PQN adapted to turn-based Hanabi.

Gallici et al. (2024), "Simplifying deep temporal difference learning"; JaxMARL's strongest
Hanabi baseline. One iteration (the rollout and the minibatches of both forms: :mod:`.rollout`):

1. *Rollout*: every game makes ``rollout_steps`` moves. Only the player on turn decides (the
   others' only move is the no-op), so each move is one sample ``(o, legal, a, r, ended)`` from
   the acting player's view, epsilon-greedy on the network's Q-values.
2. *Targets*: Q(lambda) returns over the rollout, bootstrapping from the greedy value
   ``max_a Q(o', a)`` of the *next acting player* (the partner in two-player Hanabi). The reward
   is shared, so this is the team value that VDN's sum of per-player Q-values estimates when
   the players off turn take the no-op; with one decision maker per step the sum has one term.
3. *Learning*: ``epochs`` passes of ``minibatches`` minibatches of squared TD error to the returns
   (recurrent: the minibatches' games replayed through the LSTM from the rollout's start).

Other-Play and G-OP: every (game, player) draws a colour relabelling at the start of each episode
(``eqc.symmetrize.OtherPlay``; under "op" one random player per game keeps the identity, as in
hanabi_SAD). The acting player sees and chooses in its relabelled game; its move is mapped back.
A ``[network] symmetrize`` group makes the network itself the symmetrizer ``S(psi)``, used alike for
acting, targets and evaluation.

The algorithm ``pqn`` (:data:`PQN`): its section ``[pqn]`` (:class:`PQNConfig`), that section's rules and
:class:`PQNLearner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from eqc.domains.hanabi.agent.network import State
from eqc.domains.hanabi.config.schema import config_field, require, require_at_least, require_in_unit
from eqc.domains.hanabi.training.learner import Algorithm, LearnerSetup
from eqc.domains.hanabi.training.rollout import Rollout, RolloutLearner, RolloutSettings, View, check_rollout_keys, check_rollout_use

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["PQN", "PQNConfig", "PQNLearner", "epsilon_ladder", "epsilon_schedule", "exploration_epsilon",
           "lambda_returns", "record_greedy_value", "td_loss"]

EXPLORATIONS = ("decay", "ladder")


@dataclass(frozen=True)
class PQNConfig(RolloutSettings):
    """The section ``[pqn]``: the rollout's keys (:class:`~.rollout.RolloutSettings`), the returns' and exploration's."""

    td_lambda: float = config_field("lambda of the Q(lambda) returns (0 = one-step)", 0.7)
    eps_start: float = config_field("epsilon-greedy exploration at the start", 0.1)
    eps_end: float = config_field("epsilon after decay", 0.01)
    eps_decay_moves: int = config_field("moves (summed over games) of the linear epsilon decay", 20_000_000)
    exploration: str = config_field("'decay': every game explores with one epsilon, eps_start -> eps_end over eps_decay_moves; "
                                    "'ladder': hanabi_SAD's per-actor epsilons, fixed: game b explores with eps_start * "
                                    "(eps_end / eps_start) ** (k / (ladder_rungs - 1)), k = b mod ladder_rungs "
                                    "(eps_start 0.1, eps_end 1e-8 is hanabi_SAD's 0.1 ** (1 + 7 k / (N - 1)))", "decay")
    ladder_rungs: int = config_field("number of distinct epsilons of exploration = 'ladder' (hanabi_SAD: 80)", 80)


def _check_pqn(p: PQNConfig, c: TrainConfig) -> None:
    """The rules of ``[pqn]``'s keys."""
    check_rollout_keys("pqn", p, c)
    require(p.exploration in EXPLORATIONS, "[pqn] exploration", f"must be one of {EXPLORATIONS}, got {p.exploration!r}")
    require_at_least("pqn", p, ("ladder_rungs",), 2)
    ladder_ends = f"must be > 0 with exploration 'ladder' (a geometric ladder), got {min(p.eps_start, p.eps_end)}"
    require(p.exploration != "ladder" or min(p.eps_start, p.eps_end) > 0, "[pqn] eps_end", ladder_ends)
    require_at_least("pqn", p, ("eps_decay_moves",), 1)
    require_in_unit("pqn", p, ("td_lambda", "eps_start", "eps_end"))


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


def record_greedy_value(rollout: Rollout, t: int, view: View) -> None:
    """The Q(lambda) target's bootstrap after move ``t``: the greedy value of ``view`` (0 where no move is legal: the
    game is over), recorded in ``rollout.value[t]``."""
    value = view.scores.max(-1).values
    rollout.value[t] = torch.where(torch.isfinite(value), value, 0.0)


def td_loss(q: torch.Tensor, legal: torch.Tensor, action: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The minibatch's loss ``mean 0.5 (Q(o, a) - G)^2`` over its decisions (``q [n, A]``, ``legal [n, A]``, ``action [n]``,
    returns ``target [n]``); a decision without a legal move (a finished game's step) teaches nothing."""
    chosen = q.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    chosen = torch.where(legal.any(-1), chosen, target)
    return 0.5 * (chosen - target).pow(2).mean()


class PQNLearner(RolloutLearner):
    """The fast learner, feed-forward or recurrent (see the module docstring)."""

    scalars = ("loss", "epsilon")

    def __init__(self, setup: LearnerSetup, pqn: PQNConfig) -> None:
        super().__init__(setup, pqn)
        self.pqn = pqn

    def heads(self, obs: torch.Tensor, legal: torch.Tensor, state: State = None) -> tuple[torch.Tensor, None, State]:
        q, state = self.agent.step(obs, legal, state)
        return q, None, state

    def record_value(self, t: int, view: View) -> None:
        """The target's bootstrap: the greedy value of the view after move ``t`` (:func:`record_greedy_value`)."""
        record_greedy_value(self.rollout, t, view)

    def returns(self) -> torch.Tensor:
        """The Q(lambda) returns ``[T, B]`` of the last rollout."""
        r = self.rollout
        return lambda_returns(r.reward, r.ended, r.value, self.pqn.gamma, self.pqn.td_lambda)

    def decisions(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The last (feed-forward) rollout's ``T * B`` decisions: observations, legal moves, actions and returns."""
        r = self.rollout
        return r.obs.flatten(0, 1), r.legal.flatten(0, 1), r.action.flatten(0, 1), self.returns().flatten(0, 1)

    def iteration(self) -> dict[str, torch.Tensor | float]:
        p = self.pqn
        epsilon = exploration_epsilon(p, self.moves_played, self.num_envs, self.device)
        self.collect(lambda t, view: self.explore(view.scores, view.acting_legal, epsilon), self.record_value)
        returns = self.returns()
        losses = []
        for batch in self.minibatches(returns):
            (target,) = batch.decisions
            loss = td_loss(batch.scores, batch.legal, batch.action, target)
            self.optimize(loss)
            losses.append(loss.detach())
        return {"loss": torch.stack(losses).mean(), "epsilon": epsilon if isinstance(epsilon, float) else epsilon.mean()}


PQN = Algorithm("pqn", "parallel games, no replay; an LSTM if lstm_layers >= 1", "pqn", PQNConfig, PQNLearner, forms=(False, True),
                aux=False, policy=False, check_keys=_check_pqn, check_use=lambda p, c: check_rollout_use("pqn", p, c))
