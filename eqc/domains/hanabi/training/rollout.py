"""The skeleton of the rollout learners (PQN, IPPO), written once for both network forms: act, step, record; then
learn on minibatches of the rollout, the network's outputs recomputed.

A :class:`RolloutLearner` plays ``rollout_steps`` moves in every game, recording what each acting player saw, chose
and got (``[T, B, ...]`` buffers), then makes ``epochs`` passes of ``minibatches`` minibatches over the rollout. Its
algorithm fills in three things (as Stable-Baselines3's ``OnPolicyAlgorithm`` leaves the loss to PPO or A2C):
:meth:`~RolloutLearner.heads` (what the network gives at a step: Q-values, or logits and a value), how the acting
players choose (the ``choose`` it gives :meth:`~RolloutLearner.rollout`, recording what its targets need) and its loss.
Its section extends :class:`RolloutSettings` (the keys and rules every rollout learner shares).

The two forms:

- *Feed-forward* (``[network] lstm_layers = 0``): only the acting player's view is computed and recorded
  (``TrainingGames.acting_view``); a minibatch is a random set of the ``T * B`` decisions.
- *Recurrent*: every player steps its own LSTM state on every move (as R2D2 and evaluation do; the waiting players'
  only legal move is the no-op), the state is carried from rollout to rollout and zeroed when its game ends (the game
  is re-dealt in the same step); every player's view is recorded (``TrainingGames.player_views``). A minibatch is a
  random set of games, replayed through the LSTM from the states the rollout started with (:meth:`~RolloutLearner.replay`,
  both players, states zeroed where games ended). Those start states were computed by the network before the last
  updates (purejaxql does the same); nothing else is stale. A checkpoint holds every player's LSTM state with the
  games in progress (``lstm``: :func:`~eqc.domains.hanabi.training.resume.lstm_state_dict`), so a resumed run
  continues them move for move.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from eqc._compile import compiled
from eqc.domains.hanabi.agent.network import LSTMState, State, as_lstm_state
from eqc.domains.hanabi.config.schema import config_field, require, require_at_least, require_in_unit
from eqc.domains.hanabi.training.games import AnyRelabelling, TrainingGames
from eqc.domains.hanabi.training.learner import Learner, LearnerSetup
from eqc.domains.hanabi.training.resume import lstm_state_dict, restore_lstm_state

if TYPE_CHECKING:
    from eqc.domains.hanabi.training.config import TrainConfig

__all__ = ["Choose", "Heads", "Minibatch", "Rollout", "RolloutLearner", "RolloutSettings", "View",
           "check_rollout_keys", "check_rollout_use", "zero_ended"]


@dataclass(frozen=True)
class RolloutSettings:
    """The keys every rollout learner's section has (a section extends this class; it may give a key its own default:
    :func:`~eqc.domains.hanabi.config.schema.config_default`)."""

    rollout_steps: int = config_field("batched steps (a move in every game) collected between learning phases", 8)
    epochs: int = config_field("passes over each rollout", 2)
    minibatches: int = config_field("minibatches per pass", 4)
    gamma: float = config_field("discount", 0.99)


def check_rollout_keys(section: str, s: RolloutSettings, c: TrainConfig) -> None:
    """The rules of :class:`RolloutSettings`' keys in the section ``[section]``: minibatches at most the decisions."""
    require_at_least(section, s, ("rollout_steps", "epochs", "minibatches"), 1)
    require(c.run.num_envs * s.rollout_steps >= s.minibatches, f"[{section}] minibatches", "must not exceed num_envs * rollout_steps")
    require_in_unit(section, s, ("gamma",))


def check_rollout_use(section: str, s: RolloutSettings, c: TrainConfig) -> None:
    """What a chosen rollout learner needs: with an LSTM (minibatches split the games) at most ``num_envs`` minibatches."""
    split = f"must not exceed num_envs ({c.run.num_envs}) with an LSTM (minibatches split the games), got {s.minibatches}"
    require(c.network.lstm_layers == 0 or s.minibatches <= c.run.num_envs, f"[{section}] minibatches", split)


def zero_ended(state: LSTMState, ended: torch.Tensor, players: int) -> LSTMState:
    """``state`` (rows game-major: game b's players at ``b * players + p``) with the rows of every player of the games
    that ``ended`` (bool ``[B]``) set to zero: a recurrent learner's next game starts from a fresh state."""
    keep = (~ended).repeat_interleave(players).view(1, -1, 1).to(state[0].dtype)
    return state[0] * keep, state[1] * keep


@dataclass(frozen=True)
class View:
    """What the games look like before a move, and what the network makes of it.

    Attributes:
        obs, legal: what is recorded: the acting player's view ``[B, D]``, ``[B, A]`` (feed-forward) or every
            player's ``[B, P, D]``, ``[B, P, A]`` (recurrent), relabelled under Other-Play / G-OP.
        acting_legal: the acting players' legal actions ``[B, A]``.
        current: the player on turn ``[B]`` (recurrent; None feed-forward).
        acting: the acting players' relabelling (None under self-play), for ``TrainingGames.step``.
        scores: the acting players' outputs ``[B, A]`` (Q-values or logits: :meth:`RolloutLearner.heads`).
        value: the acting players' values ``[B]`` (None for a learner without a critic).
        state: every player's LSTM state after this step, not yet zeroed where games end (None feed-forward).
    """

    obs: torch.Tensor
    legal: torch.Tensor
    acting_legal: torch.Tensor
    current: torch.Tensor | None
    acting: AnyRelabelling | None
    scores: torch.Tensor
    value: torch.Tensor | None
    state: LSTMState | None


@dataclass(frozen=True)
class Minibatch:
    """The recorded decisions of one minibatch (any leading shape: ``[n]`` feed-forward, ``[T, b]`` recurrent) and the
    network's outputs on them now: ``scores [..., A]``, ``value [...]`` (or None), ``legal [..., A]`` the acting
    players' legal actions, ``action [...]``, and ``decisions``: the learner's own per-decision tensors, selected alike."""

    scores: torch.Tensor
    value: torch.Tensor | None
    legal: torch.Tensor
    action: torch.Tensor
    decisions: tuple[torch.Tensor, ...]


#: How the acting players choose at rollout step ``t`` from the :class:`View` before it: their moves ``[B]``.
Choose = Callable[[int, View], torch.Tensor]


#: The network at one step, acting: ``obs [N, D]``, ``legal [N, A]`` and the LSTM state (None feed-forward) to scores
#: ``[N, A]``, values ``[N]`` (or None) and the next state (:meth:`RolloutLearner.heads`).
Heads = Callable[[torch.Tensor, torch.Tensor, State], tuple[torch.Tensor, torch.Tensor | None, State]]


class Rollout:
    """The acting half of a rollout learner: ``steps`` moves in every game of ``games``, each acting player's view, move
    and outcome recorded in ``[T, B, ...]`` buffers (see the module docstring for the two forms).

    Args:
        games: the games played (one seed's, or K seeds' joined: :meth:`TrainingGames.joined`).
        steps: moves per game in a rollout (``T``).
        heads: the acting forward (no gradient is taken; :mod:`~eqc.domains.hanabi.training.seeds` gives one that runs
            K seeds' networks in one call).
        num_actions: the network's outputs (the moves, then the no-op).
        sad: whether partners see the acting player's greedy move (SAD).
        initial_state: every player's fresh LSTM state of ``N`` rows (recurrent), or None (feed-forward).
    """

    def __init__(self, games: TrainingGames, steps: int, heads: Heads, *, num_actions: int, sad: bool,
                 initial_state: Callable[[int], LSTMState] | None) -> None:
        self.games, self.steps, self.heads, self.sad, self.initial_state = games, steps, heads, sad, initial_state
        self.recurrent = initial_state is not None
        T, B, P, D, A, device = steps, games.num_envs, games.num_players, games.env.obs_dim, num_actions, games.device
        seen = (T, B, P) if self.recurrent else (T, B)
        self._obs, self._legal = games.env.observations(), games.env.legal_move_mask()  # reused: [B, P, D], [B, M]
        #: What was recorded at each step: the views (:attr:`View.obs`, :attr:`View.legal`), the acting players' legal
        #: actions, seats, moves, rewards, whether their games ended, and the learner's values (it fills them in).
        self.obs = torch.empty(*seen, D, device=device)
        self.legal = torch.empty(*seen, A, dtype=torch.bool, device=device)
        self.acting_legal = self.legal if not self.recurrent else torch.empty(T, B, A, dtype=torch.bool, device=device)
        self.current = torch.empty(T, B, dtype=torch.long, device=device)
        self.action = torch.empty(T, B, dtype=torch.long, device=device)
        self.reward = torch.empty(T, B, device=device)
        self.ended = torch.empty(T, B, dtype=torch.bool, device=device)
        self.value = torch.empty(T, B, device=device)
        #: Every player's LSTM state before the next move (recurrent), and at the start of the last rollout.
        self.lstm_state: LSTMState | None = self.fresh_state()
        self.start_state: LSTMState | None = None

    def fresh_state(self) -> LSTMState | None:
        """Every player's zero LSTM state (recurrent), or None."""
        return None if self.initial_state is None else self.initial_state(self.games.num_envs * self.games.num_players)

    def view(self) -> View:
        """The games before the next move (:class:`View`), the acting forward run on it."""
        games = self.games
        if not self.recurrent:
            obs, legal, acting = games.acting_view(self._obs, self._legal)
            scores, value, _ = self.heads(obs, legal, None)
            return View(obs, legal, legal, None, acting, scores, value, None)
        B, P, rows = games.num_envs, games.num_players, games.rows
        obs, legal, current, acting = games.player_views(self._obs, self._legal)
        scores, value, state = self.heads(obs.reshape(B * P, -1), legal.reshape(B * P, -1), self.lstm_state)
        return View(obs, legal, legal[rows, current], current, acting, scores.view(B, P, -1)[rows, current],
                    None if value is None else value.view(B, P)[rows, current], as_lstm_state(state))

    def collect(self, choose: Choose, stepped: Callable[[int, View], None] | None, *, shaping: bool) -> View:
        """Play ``steps`` moves in every game, the acting players' moves from ``choose``, recording them;
        ``stepped(t, view)`` sees the view after move ``t`` (PQN records the greedy value there); ``shaping``: the
        bootstrap's bonus is paid. Returns the view after the last move (to bootstrap from)."""
        if self.lstm_state is not None:
            self.start_state = (self.lstm_state[0].clone(), self.lstm_state[1].clone())
        with torch.no_grad():
            view = self.view()
            for t in range(self.steps):
                self.play(t, view, choose(t, view), shaping)
                view = self.view()
                if stepped is not None:
                    stepped(t, view)
        return view

    def play(self, t: int, view: View, action: torch.Tensor, shaping: bool) -> None:
        """Record step ``t`` (``view`` and the acting players' ``action [B]``) and play it."""
        self.obs[t], self.legal[t] = view.obs, view.legal
        if view.current is not None:
            self.current[t], self.acting_legal[t] = view.current, view.acting_legal
        self.action[t] = action
        greedy = view.scores.argmax(-1) if self.sad else None  # SAD: partners see the greedy move
        step = self.games.step(action, view.acting, greedy, shaping=shaping)
        self.reward[t], self.ended[t] = step.reward, step.ended
        if view.state is not None:
            self.lstm_state = zero_ended(view.state, step.ended, self.games.num_players)


class RolloutLearner(Learner):
    """A learner of rollouts (see the module docstring); subclasses implement :meth:`heads` and
    :meth:`~.learner.Learner.iteration` (:meth:`collect`, its targets, then a loss per :meth:`minibatches`)."""

    def __init__(self, setup: LearnerSetup, settings: RolloutSettings) -> None:
        super().__init__(setup)
        self.rollout_steps, self.epochs, self.num_minibatches = settings.rollout_steps, settings.epochs, settings.minibatches
        self.recurrent = setup.spec.network.lstm_layers >= 1
        device = self.device
        #: :meth:`heads` as the rollout runs it (the acting forward, no gradient): compiled under ``[run] compile`` when
        #: feed-forward (``torch.compile`` does not trace ``nn.LSTM``; a recurrent forward stays eager).
        acting = compiled(self.heads, device) if setup.compile and not self.recurrent else self.heads
        initial = (lambda rows: as_lstm_state(self.agent.initial_state(rows, device))) if self.recurrent else None
        #: The last rollout: its buffers, and every player's LSTM state (recurrent).
        self.rollout = Rollout(self.games, self.rollout_steps, acting, num_actions=self.num_actions,
                               sad=self.spec.game.uses_sad, initial_state=initial)

    # ---------------------------------------------------------------- to implement
    @abstractmethod
    def heads(self, obs: torch.Tensor, legal: torch.Tensor, state: State = None) -> tuple[torch.Tensor, torch.Tensor | None, State]:
        """The network's outputs at one step ``obs [N, D]``, ``legal [N, A]`` from ``state``: scores ``[N, A]``, values
        ``[N]`` (or None) and the next state (None feed-forward)."""

    def modules(self) -> dict[str, nn.Module]:
        return {"network": self.network}

    # ---------------------------------------------------------------- acting
    def collect(self, choose: Choose, stepped: Callable[[int, View], None] | None = None) -> View:
        """:meth:`Rollout.collect` in this learner's games (shaped while its bootstrap lasts), counting the moves."""
        if self.rollout.games is not self.games:
            raise RuntimeError("this learner's games were joined with other seeds' (Learner.play_in): whoever joined them "
                               "steps them (StackedSeeds.iteration), not the learner's own iteration")
        view = self.rollout.collect(choose, stepped, shaping=self.shaping)
        self.moves_played += self.rollout_steps * self.num_envs
        return view

    # ---------------------------------------------------------------- learning
    def minibatches(self, *decisions: torch.Tensor) -> Iterator[Minibatch]:
        """``epochs`` passes of ``minibatches`` minibatches over the last rollout (``decisions``: the learner's own
        ``[T, B]`` tensors, selected with the recorded ones): random decisions (feed-forward) or random games
        replayed from the rollout's start (recurrent)."""
        r = self.rollout
        flat = tuple(x.flatten(0, 1) for x in (r.obs, r.legal, r.action, *decisions))
        for _ in range(self.epochs):
            if not self.recurrent:
                for idx in self.minibatch_rows():
                    obs, legal, action, *own = (x[idx] for x in flat)
                    scores, value, _ = self.heads(obs, legal)
                    yield Minibatch(scores, value, legal, action, tuple(own))
            else:
                order = torch.randperm(self.num_envs, generator=self.learn_generator, device=self.device)
                for games in order.chunk(self.num_minibatches):
                    scores, value = self.replay(games)
                    yield Minibatch(scores, value, r.acting_legal[:, games], r.action[:, games],
                                    tuple(x[:, games] for x in decisions))

    def minibatch_rows(self) -> tuple[torch.Tensor, ...]:
        """One pass's minibatches of a feed-forward rollout: its ``T * B`` decisions (flattened step-major) in a random
        order on the learning generator, split into ``minibatches`` sets of rows."""
        order = torch.randperm(self.rollout_steps * self.num_envs, generator=self.learn_generator, device=self.device)
        return order.chunk(self.num_minibatches)

    def replay(self, games: torch.Tensor, start_state: LSTMState | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The acting players' scores ``[T, b, A]`` and values ``[T, b]`` (or None) of ``games`` ``[b]`` over the last
        rollout, replayed through the LSTM from ``start_state`` (all games' states at the rollout's start; default the
        recorded one), zeroing where games ended."""
        r = self.rollout
        start = r.start_state if start_state is None else start_state
        assert start is not None, "replay follows a recurrent rollout"
        T, P, b = self.rollout_steps, self.num_players, games.numel()
        rows = (games.view(b, 1) * P + torch.arange(P, device=self.device)).reshape(-1)
        state: LSTMState = (start[0][:, rows], start[1][:, rows])
        seat = torch.arange(b, device=self.device)
        scores, values = [], []
        for t in range(T):
            step_scores, step_value, stepped = self.heads(r.obs[t, games].flatten(0, 1), r.legal[t, games].flatten(0, 1), state)
            current = r.current[t, games]
            scores.append(step_scores.view(b, P, -1)[seat, current])
            if step_value is not None:
                values.append(step_value.view(b, P)[seat, current])
            state = zero_ended(as_lstm_state(stepped), r.ended[t, games], P)
        return torch.stack(scores), (torch.stack(values) if values else None)

    # ---------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """As :class:`~.learner.Learner`'s, with every player's LSTM state (``lstm``) in the recurrent form."""
        state = super().state_dict()
        if self.rollout.lstm_state is not None:
            state["lstm"] = lstm_state_dict(self.rollout.lstm_state)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> str | None:
        """Restore as :class:`~.learner.Learner` does (and return its note) and, recurrent, every player's LSTM state;
        where the games restart (a checkpoint without them), every LSTM state starts from zero."""
        note = super().load_state_dict(state)
        fresh = self.rollout.fresh_state()
        if fresh is not None and "games" in state and "lstm" in state:
            fresh = restore_lstm_state(state["lstm"], fresh)
        self.rollout.lstm_state = fresh
        return note
