"""What every Hanabi learner shares: its games, agent, optimizer, exploration and state; and the declaration of an
algorithm (:class:`Algorithm`), which its module makes beside its learner.

A learner owns its :class:`~eqc.domains.hanabi.training.games.TrainingGames` (the acting half:
``[run] num_envs`` games on its device, their relabellings and the bootstrap's shaping), the
``Agent`` it trains, its optimizer and two seeded ``torch.Generator`` s of its own (exploration,
learning; the games hold the deals' and the relabellings'); the global RNG is never used.
``iteration()`` plays and learns for one round and returns scalar tensors to log (read them outside
the hot loop), named in :attr:`Learner.scalars`. A learner that first collects experience before its first
update (R2D2's replay warm-up; SB3's ``learning_starts``) says so: :attr:`Learner.learning` is False and
:meth:`Learner.warmup` counts what it has collected until it learns; before that ``iteration()`` returns no
``loss``, and the run loop reads none as divergence (:mod:`eqc.domains.hanabi.training.run`).
``state_dict()``/``load_state_dict()`` hold everything a checkpoint restores: networks, optimizer, generators,
counters and the games in progress, so that a run resumed between two iterations continues move for move
(:mod:`eqc.domains.hanabi.training.resume`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch
from torch import nn

from eqc.domains.hanabi.agent.network import QNetwork, spec_agent
from eqc.domains.hanabi.config.agent import AgentSpec
from eqc.domains.hanabi.training.games import TrainingGames
from eqc.domains.hanabi.training.resume import games_state, restore_games, restore_generators

if TYPE_CHECKING:  # the training config is composed from the algorithms: it imports their modules
    from eqc.domains.hanabi.training.config import BootstrapConfig, OptimConfig, RuleConfig, TrainConfig

__all__ = ["Algorithm", "Learner", "LearnerSetup"]

#: An algorithm's own section (its settings dataclass).
S = TypeVar("S")


@dataclass(frozen=True)
class LearnerSetup:
    """What every learner reads, beside its algorithm's own section.

    Attributes:
        spec: the agent it trains: game, network, symmetrizer, precision (``TrainConfig.agent``, a resolved precision).
        rule: the objective: sp, op or G-OP over ``rule.group``.
        optim, bootstrap: the optimizer's and the induced convention's sections.
        num_envs: games in lockstep (``[run] num_envs``).
        seed: the run's seed (weights, deals, relabellings and the learner's generators derive from it).
        device: where games, networks and learning run.
        compile: compile the acting step (``[run] compile``: :mod:`eqc._compile`).
    """

    spec: AgentSpec
    rule: RuleConfig
    optim: OptimConfig
    bootstrap: BootstrapConfig
    num_envs: int
    seed: int
    device: torch.device
    compile: bool

    @classmethod
    def of(cls, config: TrainConfig, seed: int, device: torch.device) -> LearnerSetup:
        """The setup of ``config`` (its ``[network] precision`` resolved: "auto" is refused by ``config.agent``)."""
        return cls(config.agent, config.rule, config.optim, config.bootstrap, config.run.num_envs, seed, device, config.run.compile)


@dataclass(frozen=True)
class Algorithm(Generic[S]):
    """One learning algorithm: what ``[run] algorithm`` names, its own section and that section's rules, its learner and
    what its agents are. Its module declares it beside its learner and settings; the table of them is
    :data:`~eqc.domains.hanabi.training.algorithms.ALGORITHMS`, from which the training config takes its sections.

    Attributes:
        name: the value of ``[run] algorithm`` that chooses it.
        summary: what it is, in a few words (for ``[run] algorithm``'s help).
        section: the name of its own section of the training config (``[pqn]``, ``[r2d2]``, ``[ppo]``).
        settings: that section's dataclass (its keys: :func:`~eqc.domains.hanabi.config.schema.config_field` s).
        learner: the class that trains it, called with the :class:`LearnerSetup` and its section.
        forms: the network forms it trains: ``False`` feed-forward, ``True`` recurrent (``[network] lstm_layers >= 1``).
        aux: whether it trains the SAD-AUX own-hand head (``[network] aux_weight > 0``).
        policy: whether its agents' logits are a stochastic policy (they can play as sampled; a learner of Q-values
            acts greedily).
        check_keys: the rules of its section's keys, given the section and the config (every config holds every
            algorithm's section: checked whichever is chosen).
        check_use: the rules it sets on the other sections when ``[run] algorithm`` chooses it.
    """

    name: str
    summary: str
    section: str
    settings: type[S]
    learner: Callable[[LearnerSetup, S], Learner]
    forms: tuple[bool, ...]
    aux: bool
    policy: bool
    check_keys: Callable[[S, TrainConfig], None]
    check_use: Callable[[S, TrainConfig], None]


class Learner(ABC):
    """Base class; subclasses implement :meth:`iteration` and :meth:`modules`."""

    #: Whether a checkpoint saves the games in progress and a resume continues them (else new games are dealt).
    resumes_games = True
    #: The scalars :meth:`iteration` returns, by name: ``metrics.csv`` has a column for each (the run loop's own columns
    #: ``loss``, ``epsilon`` and ``entropy`` where it knows them, the others after its columns).
    scalars: tuple[str, ...] = ("loss",)

    def __init__(self, setup: LearnerSetup, *, aux_outputs: int = 0, keep_identity: bool = True) -> None:
        """``setup``: what the learner trains and on what (:class:`LearnerSetup`). ``aux_outputs``: size of the
        network's auxiliary head (R2D2's SAD-AUX); ``keep_identity``: see :class:`TrainingGames`."""
        spec, seed, device = setup.spec, setup.seed, setup.device
        self.spec, self.optim, self.bootstrap = spec, setup.optim, setup.bootstrap
        self.num_envs, self.device = setup.num_envs, device
        self.games = TrainingGames(spec.rules(), setup.rule, setup.bootstrap, num_envs=setup.num_envs, seed=seed, device=device,
                                   keep_identity=keep_identity, compile=setup.compile)
        self.explore_generator = torch.Generator(device=device).manual_seed(seed + 1_000_003)
        self.learn_generator = torch.Generator(device=device).manual_seed(seed + 2_000_003)
        with torch.random.fork_rng(devices=[]):  # seeded initial weights; the global RNG is left as it was
            torch.manual_seed(seed)
            network = QNetwork(self.obs_dim, self.num_actions, spec.network, aux_outputs=aux_outputs)
        self.network = network.to(device)
        self.agent = spec_agent(spec, self.network)
        optim = setup.optim
        optimizer = torch.optim.Adam if optim.optimizer == "adam" else torch.optim.RAdam
        self.optimizer = optimizer(list(self.network.parameters()), lr=optim.lr, eps=optim.adam_eps)
        self.moves_played = 0
        self.updates = 0
        #: Which block of ``games`` is this learner's (0; another where its games were joined with other seeds':
        #: :meth:`play_in`).
        self.block = 0

    # ---------------------------------------------------------------- to implement
    @abstractmethod
    def iteration(self) -> dict[str, torch.Tensor | float]:
        """Play and learn for one round; return scalars to log (tensors are read by the caller)."""

    @abstractmethod
    def modules(self) -> dict[str, nn.Module]:
        """The networks a checkpoint saves, by name."""

    @property
    def learning(self) -> bool:
        """Whether the learner has started learning (SB3's ``learning_starts`` passed): from then on its weights are
        trained and the ``loss`` :meth:`iteration` returns, where it returns one, is that of an update. A learner with a
        warm-up (:meth:`warmup`) is False until its warm-up ends, again after every resume where the warm-up's data is
        not saved; the others learn from their first iteration. A cheap attribute read (the run loop asks every iteration)."""
        return True

    def warmup(self) -> tuple[int, int] | None:
        """``(collected, needed)`` of the warm-up before learning starts, in the learner's units (R2D2: finished episodes
        in its replay, ``[r2d2] warmup_episodes``); None for a learner without one. The warm-up's data is not in a
        checkpoint: every run of the learner, resumed or not, warms up again. May read the device: call it outside the
        hot loop."""
        return None

    def weights_finite(self) -> bool:
        """Whether every weight of :meth:`modules` is finite (one read from the device)."""
        flags = [torch.isfinite(p).all() for m in self.modules().values() for p in m.parameters()]
        return bool(torch.stack(flags).all()) if flags else True

    def play_in(self, games: TrainingGames, block: int) -> None:
        """From now on this learner's games are block ``block`` of ``games``, joined from its own and other seeds'
        (:meth:`TrainingGames.joined`, which continues them and draws from their generators): its checkpoints save
        that block, its metrics count that block's episodes. The joined games are stepped by whoever joined them
        (:mod:`~eqc.domains.hanabi.training.seeds`), not by :meth:`iteration`."""
        games.block_rows(block)
        self.games, self.block = games, block

    # ---------------------------------------------------------------- the game's sizes
    @property
    def num_players(self) -> int:
        return self.games.num_players

    @property
    def num_moves(self) -> int:
        return self.games.env.num_moves

    @property
    def num_actions(self) -> int:
        """The network's outputs: the moves, then the no-op."""
        return self.num_moves + 1

    @property
    def obs_dim(self) -> int:
        return self.games.env.obs_dim

    # ---------------------------------------------------------------- acting
    @property
    def shaping(self) -> bool:
        """Whether the bootstrap convention still shapes rewards (its first ``[bootstrap] moves``)."""
        return self.moves_played < self.bootstrap.moves

    def explore(self, q: torch.Tensor, legal: torch.Tensor, epsilon: float | torch.Tensor) -> torch.Tensor:
        """Epsilon-greedy over legal moves; ``epsilon`` a float or a per-row tensor."""
        greedy = q.argmax(-1)
        noise = torch.rand(q.shape, generator=self.explore_generator, device=q.device)
        uniform = noise.masked_fill(~legal, -1.0).argmax(-1)
        coin = torch.rand(q.shape[:-1], generator=self.explore_generator, device=q.device)
        return torch.where(coin < epsilon, uniform, greedy)

    # ---------------------------------------------------------------- learning
    def optimize(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.apply_gradients()

    def apply_gradients(self) -> None:
        """One optimizer step on the gradients the network holds, their norm over the network clipped to ``[optim]
        grad_clip`` (where it is > 0). :mod:`~eqc.domains.hanabi.training.seeds` sets them from a batched backward."""
        if self.optim.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.network.parameters(), self.optim.grad_clip)
        self.optimizer.step()
        self.updates += 1

    # ---------------------------------------------------------------- state
    def generators(self) -> dict[str, torch.Generator]:
        return {"explore": self.explore_generator, "learn": self.learn_generator, **self.games.generators(self.block)}

    def state_dict(self) -> dict[str, Any]:
        state = {
            "modules": {name: m.state_dict() for name, m in self.modules().items()},
            "optimizer": self.optimizer.state_dict(),
            "generators": {name: g.get_state() for name, g in self.generators().items()},
            "counters": {"moves": self.moves_played, "updates": self.updates},
            "device": str(self.device),
        }
        if self.resumes_games:
            state["games"] = games_state(self.games, self.block)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> str | None:
        """Restore networks, optimizer, generators, counters and the games in progress (new games are dealt where the
        checkpoint holds none, or :attr:`resumes_games` is False). Returns sentences for the run log when the
        generators were re-seeded because the checkpoint comes from another device type
        (:func:`~eqc.domains.hanabi.training.resume.restore_generators`) or new games were dealt, else None."""
        for name, module in self.modules().items():
            module.load_state_dict(state["modules"][name])
        self.optimizer.load_state_dict(state["optimizer"])
        notes = [restore_generators(self.generators(), state["generators"], state.get("device", "cpu"))]
        self.moves_played = int(state["counters"]["moves"])
        self.updates = int(state["counters"]["updates"])
        if self.resumes_games and "games" in state:
            restore_games(self.games, state["games"])
        else:
            self.games.restart()  # new games from the restored stream
            if self.resumes_games:
                notes.append("the checkpoint holds no games in progress (written before eqc saved them): new games are dealt, "
                             "so the run does not continue the interrupted one move for move")
        return " ".join(n for n in notes if n) or None
