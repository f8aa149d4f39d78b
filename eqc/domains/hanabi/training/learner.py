"""What every Hanabi learner shares: games, agent, optimizer, exploration, relabelling, state.

A learner owns a ``HanabiBatch`` of ``[run] num_envs`` games on its device (same-step
``auto_reset``: a game that ends is re-dealt within the step), the ``Agent`` it trains, its
optimizer and three seeded ``torch.Generator`` s (games, exploration, learning); the global RNG
is never used. ``iteration()`` plays and learns for one round and returns scalar tensors to log
(read them outside the hot loop). ``state_dict()``/``load_state_dict()`` hold everything a
checkpoint restores: networks, optimizer, generators and counters (the games in progress are
not saved: a resumed run deals new games).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import nn

from eqc.domains.hanabi.agent.network import QNetwork, spec_agent
from eqc.domains.hanabi.agent.spec import AgentSpec
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.bootstrap import NO_HINT, colour_to_slot, convention_bonus
from eqc.domains.hanabi.training.config import BootstrapConfig, OptimConfig, RuleConfig
from eqc.domains.hanabi.training.resume import restore_generators
from eqc.domains.hanabi.training.setup import make_batch
from eqc.groups import symmetric
from eqc.symmetrize import OtherPlay
from eqc.symmetrize.other_play import Relabelling

__all__ = ["Learner", "draw_relabellings"]


class Learner(ABC):
    """Base class; subclasses implement :meth:`iteration` and :meth:`modules`."""

    def __init__(self, spec: AgentSpec, rule: RuleConfig, optim: OptimConfig, bootstrap: BootstrapConfig, *, num_envs: int, seed: int,
                 device: torch.device, aux_outputs: int = 0, keep_identity: bool = True) -> None:
        """The sections a learner reads: ``spec`` (the agent it trains: game, network, symmetrizer, precision;
        ``TrainConfig.agent``), ``rule`` (the objective: sp, op or G-OP over ``rule.group``), ``optim`` and
        ``bootstrap``; ``num_envs`` games in lockstep (``[run] num_envs``). ``aux_outputs``: size of the
        network's auxiliary head (R2D2's SAD-AUX); ``keep_identity``: under Other-Play / G-OP one random player
        per game keeps the identity (VDN's team), else every player draws."""
        self.spec, self.rule, self.optim, self.bootstrap = spec, rule, optim, bootstrap
        self.num_envs, self.seed, self.device = num_envs, seed, device
        B = num_envs
        self.env = make_batch(spec.rules(), B, device, seed)
        self.env.reset()
        self.num_players = spec.game.num_players
        self.num_moves = self.env.num_moves
        self.num_actions = self.num_moves + 1  # + the no-op
        self.obs_dim = self.env.obs_dim
        self._games = torch.arange(B, device=device)
        self.explore_generator = torch.Generator(device=device).manual_seed(seed + 1_000_003)
        self.learn_generator = torch.Generator(device=device).manual_seed(seed + 2_000_003)
        self.relabel_generator = torch.Generator(device=device).manual_seed(seed + 3_000_017)
        with torch.random.fork_rng(devices=[]):  # seeded initial weights; the global RNG is left as it was
            torch.manual_seed(seed)
            network = QNetwork(self.obs_dim, self.num_actions, spec.network, aux_outputs=aux_outputs)
        self.network = network.to(device)
        self.agent = spec_agent(spec, self.network)
        params = list(self.network.parameters())
        optimizer = torch.optim.Adam if optim.optimizer == "adam" else torch.optim.RAdam
        self.optimizer = optimizer(params, lr=optim.lr, eps=optim.adam_eps)
        self.moves_played = 0
        self.updates = 0
        self.episodes = torch.zeros((), dtype=torch.long, device=device)
        self.score_sum = torch.zeros((), dtype=torch.long, device=device)
        self.slot_of_colour: torch.Tensor | None = None  # [bootstrap] colour_to_slot: pi of this seed
        self.hinted = torch.full((B,), NO_HINT, dtype=torch.long, device=device)
        if bootstrap.convention == "colour_to_slot":
            self.slot_of_colour = colour_to_slot(self.env.rules, seed).to(device)
        self.other_play: OtherPlay | None = None
        self.element_indices: torch.Tensor | None = None
        self.keep_identity = keep_identity
        if rule.objective != "sp":
            colours = self.env.rules.num_colours
            group = symmetric(colours) if rule.objective == "op" else colour_group(rule.group, colours)
            sym = colour_symmetry(group, self.env.rules)
            self.other_play = OtherPlay(group, sym.observation_rep, sym.action_rep, self.relabel_generator, device)
            self.element_indices = self._draw_elements()

    # ---------------------------------------------------------------- to implement
    @abstractmethod
    def iteration(self) -> dict[str, torch.Tensor | float]:
        """Play and learn for one round; return scalars to log (tensors are read by the caller)."""

    @abstractmethod
    def modules(self) -> dict[str, nn.Module]:
        """The networks a checkpoint saves, by name."""

    # ---------------------------------------------------------------- relabelling
    def _draw_elements(self) -> torch.Tensor:
        order = self.other_play.group.order
        return draw_relabellings(order, self.num_envs, self.num_players, self.relabel_generator, self.keep_identity)

    def acting_relabelling(self, current: torch.Tensor, everyone: Relabelling | None = None) -> Relabelling:
        """The relabelling of each game's acting player (for mapping its move back); taken from ``everyone``
        (all players' relabellings ``[B, P]``) when that was already built. Built on the device from
        :attr:`element_indices` (``OtherPlay.relabelling_indices``: no host round trip per move)."""
        if everyone is None:
            return self.other_play.relabelling_indices(self.element_indices[self._games, current], check=False)
        return Relabelling(*(getattr(everyone, f.name)[self._games, current] for f in dataclasses.fields(everyone)))

    def redraw(self, ended: torch.Tensor) -> None:
        """New elements for the players of games that just ended (one element per player per episode)."""
        if self.element_indices is not None:
            self.element_indices = torch.where(ended.view(-1, 1), self._draw_elements(), self.element_indices)

    # ---------------------------------------------------------------- acting
    def current_player(self) -> torch.Tensor:
        return self.env.state.current

    def player_views(
        self, obs_buffer: torch.Tensor, legal_buffer: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Relabelling | None]:
        """Every player's (relabelled) observation ``[B, P, D]``, legal moves with the no-op ``[B, P, A]`` (the
        waiting players' only move is the no-op), the player on turn ``[B]`` and the acting players'
        relabelling (None under self-play), for :meth:`env_step`. The buffers receive the raw observations and moves."""
        B, P = self.num_envs, self.num_players
        obs = self.env.observations(obs_buffer)
        legal = self.env.legal_move_mask(legal_buffer).unsqueeze(1).expand(B, P, self.num_moves)
        current = self.current_player()
        acting = None
        if self.other_play is not None:
            everyone = self.other_play.relabelling_indices(self.element_indices, check=False)
            obs, legal = everyone.relabel_observations(obs), everyone.relabel_legal_actions(legal)
            acting = self.acting_relabelling(current, everyone)
        on_turn = (torch.arange(P, device=self.device).view(1, P) == current.view(B, 1)).unsqueeze(-1)
        return obs, torch.cat([legal & on_turn, ~on_turn], dim=-1), current, acting

    def with_no_op(self, legal: torch.Tensor, *, acting: bool) -> torch.Tensor:
        """Append the no-op column: illegal for the acting player, the only legal move otherwise."""
        no_op = torch.full((*legal.shape[:-1], 1), not acting, dtype=torch.bool, device=legal.device)
        return torch.cat([legal if acting else torch.zeros_like(legal), no_op], dim=-1)

    def explore(self, q: torch.Tensor, legal: torch.Tensor, epsilon: float | torch.Tensor) -> torch.Tensor:
        """Epsilon-greedy over legal moves; ``epsilon`` a float or a per-row tensor."""
        greedy = q.argmax(-1)
        noise = torch.rand(q.shape, generator=self.explore_generator, device=q.device)
        uniform = noise.masked_fill(~legal, -1.0).argmax(-1)
        coin = torch.rand(q.shape[:-1], generator=self.explore_generator, device=q.device)
        return torch.where(coin < epsilon, uniform, greedy)

    def env_step(
        self, action: torch.Tensor, acting: Relabelling | None, greedy: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Play the acting players' moves, chosen in their games relabelled by ``acting`` (None: not
        relabelled); return (reward, ended) ``[B]``. ``greedy`` (SAD): the acting players' greedy moves
        in their relabelled games, shown to the others.
        """
        move = action if acting is None else acting.to_env_actions(action, check=False)
        if greedy is None:
            reward = self.env.step(move)
        else:
            greedy = greedy if acting is None else acting.to_env_actions(greedy, check=False)
            reward = self.env.step(move, greedy=greedy)
        ended = self.env.state.ended
        if self.slot_of_colour is not None and self.moves_played < self.bootstrap.moves:  # the bootstrap's shaping
            bonus, self.hinted = convention_bonus(self.env.rules, self.slot_of_colour, self.hinted, move, reward, ended,
                                                  self.bootstrap.bonus)
            reward = reward + bonus
        final = self.env.state.final_score
        self.episodes += ended.sum()
        self.score_sum += torch.where(ended, final, 0).sum()
        self.redraw(ended)
        return reward, ended

    # ---------------------------------------------------------------- learning
    def optimize(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.optim.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.network.parameters(), self.optim.grad_clip)
        self.optimizer.step()
        self.updates += 1

    # ---------------------------------------------------------------- state
    def generators(self) -> dict[str, torch.Generator]:
        gens = {"explore": self.explore_generator, "learn": self.learn_generator, "relabel": self.relabel_generator}
        if self.env.generator is not None:
            gens["env"] = self.env.generator
        return gens

    def state_dict(self) -> dict[str, Any]:
        return {
            "modules": {name: m.state_dict() for name, m in self.modules().items()},
            "optimizer": self.optimizer.state_dict(),
            "generators": {name: g.get_state() for name, g in self.generators().items()},
            "counters": {"moves": self.moves_played, "updates": self.updates},
            "device": str(self.device),
        }

    def load_state_dict(self, state: dict[str, Any]) -> str | None:
        """Restore networks, optimizer, generators and counters; new games are dealt. Returns a sentence for the
        run log when the generators were re-seeded because the checkpoint comes from another device type
        (:func:`~eqc.domains.hanabi.training.resume.restore_generators`), else None."""
        for name, module in self.modules().items():
            module.load_state_dict(state["modules"][name])
        self.optimizer.load_state_dict(state["optimizer"])
        note = restore_generators(self.generators(), state["generators"], state.get("device", "cpu"))
        self.moves_played = int(state["counters"]["moves"])
        self.updates = int(state["counters"]["updates"])
        self.env.reset()  # new games from the restored stream
        if self.element_indices is not None:
            self.element_indices = self._draw_elements()
        return note

    def take_episode_stats(self) -> tuple[int, float]:
        """(episodes finished, their mean score) since the last call (reads the device once)."""
        n, total = int(self.episodes), int(self.score_sum)
        self.episodes.zero_()
        self.score_sum.zero_()
        return n, (total / n if n else float("nan"))


def draw_relabellings(order: int, games: int, players: int, generator: torch.Generator, keep_identity: bool) -> torch.Tensor:
    """Element indices ``[games, players]`` (rows of ``group.elements``) drawn uniformly from a group of
    ``order`` elements on ``generator``'s device; with ``keep_identity`` one random player per game gets
    the identity (row 0) instead (hanabi_SAD's Other-Play under VDN), else every player draws (IQL)."""
    device = generator.device
    draw = torch.randint(order, (games * players,), generator=generator, device=device).view(games, players)
    if not keep_identity:
        return draw
    keeper = torch.randint(players, (games,), generator=generator, device=device)
    keep = torch.arange(players, device=device).view(1, players) == keeper.view(games, 1)
    return draw.masked_fill(keep, 0)
