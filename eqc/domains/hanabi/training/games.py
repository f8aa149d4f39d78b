"""The acting half of a learner: its games in lockstep, their relabellings, the bootstrap's shaping.

:class:`TrainingGames` owns a ``HanabiBatch`` of ``num_envs`` games on one device (same-step
``auto_reset``: a game that ends is re-dealt within the step), the Other-Play / G-OP relabelling of
every player (one group element per player per episode, drawn on its own seeded generator and
redrawn when the game ends), the ``[bootstrap]`` convention's shaping and the count of finished
episodes. :meth:`TrainingGames.step` plays the acting players' moves and returns what happened
(:class:`Step`); nothing outside this object advances its state. Moves are indexed as network
actions: the game's ``num_moves`` move uids, then the waiting players' no-op.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from eqc.dec_pomdp import Symmetry
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry, learned_symmetry
from eqc.domains.hanabi.training.bootstrap import NO_HINT, convention_bonus, touched_hint
from eqc.domains.hanabi.training.setup import make_batch
from eqc.groups import symmetric
from eqc.symmetrize import OtherPlay
from eqc.symmetrize.other_play import Relabelling

if TYPE_CHECKING:  # the training config imports the learners (:mod:`.algorithms`)
    from eqc.domains.hanabi.training.config import BootstrapConfig, RuleConfig

__all__ = ["Step", "TrainingGames", "draw_relabellings", "relabelling_of"]


@dataclass(frozen=True)
class Step:
    """What one batched move did: ``reward [B]`` (float, the bootstrap's bonus included) and ``ended [B]``
    (bool: the move ended its game, which was re-dealt within the step)."""

    reward: torch.Tensor
    ended: torch.Tensor


class TrainingGames:
    """``num_envs`` games of ``rules`` on ``device`` as a learner plays them (see the module docstring).

    ``rule``: the objective (sp, or Other-Play / G-OP over ``rule.group``, which relabels every player's
    game); ``keep_identity``: under Other-Play / G-OP one random player per game keeps the identity
    (VDN's team), else every player draws. ``seed`` seeds the deals, the relabellings (``seed +
    3_000_017``); the bootstrap's colour-to-slot map is ``[bootstrap] slots``. ``compile``: the games' tensor work
    compiled (``HanabiBatch``'s ``compile``, ``[run] compile``).
    """

    def __init__(self, rules: HanabiRules, rule: RuleConfig, bootstrap: BootstrapConfig, *, num_envs: int, seed: int,
                 device: torch.device, keep_identity: bool = True, compile: bool = False) -> None:
        self.env: HanabiBatch = make_batch(rules, num_envs, device, seed, compile=compile)
        self.env.reset()
        self.num_envs, self.num_players, self.device = num_envs, rules.num_players, device
        self.rows = torch.arange(num_envs, device=device)  # [B]: one index per game
        self.bootstrap = bootstrap
        self.slot_of_colour = (torch.tensor(bootstrap.slots, dtype=torch.long, device=device)
                               if bootstrap.convention != "none" else None)
        self.hinted = torch.full((num_envs,), NO_HINT, dtype=torch.long, device=device)
        self.relabel_generator = torch.Generator(device=device).manual_seed(seed + 3_000_017)
        self.keep_identity = keep_identity
        self.other_play: OtherPlay | None = None
        self.element_indices: torch.Tensor | None = None  # [B, P] rows of other_play.group.elements
        if rule.objective != "sp":
            sym = relabelling_of(rule, self.env.rules)
            self.other_play = OtherPlay(sym.group, sym.observation_rep, sym.action_rep, self.relabel_generator, device)
            self.element_indices = self._draw_elements(self.other_play)
        self.episodes = torch.zeros((), dtype=torch.long, device=device)
        self.score_sum = torch.zeros((), dtype=torch.long, device=device)

    # ---------------------------------------------------------------- relabelling
    def _draw_elements(self, other_play: OtherPlay) -> torch.Tensor:
        order = other_play.group.order
        return draw_relabellings(order, self.num_envs, self.num_players, self.relabel_generator, self.keep_identity)

    def acting_relabelling(self, current: torch.Tensor, everyone: Relabelling | None = None) -> Relabelling:
        """The relabelling of each game's acting player (for mapping its move back); taken from ``everyone``
        (all players' relabellings ``[B, P]``) when that was already built. Built on the device from
        :attr:`element_indices` (``OtherPlay.relabelling_indices``: no host round trip per move)."""
        if everyone is None:
            if self.other_play is None or self.element_indices is None:
                raise ValueError("the games are not relabelled (objective 'sp'): there is no acting relabelling")
            return self.other_play.relabelling_indices(self.element_indices[self.rows, current], check=False)
        return Relabelling(*(getattr(everyone, f.name)[self.rows, current] for f in dataclasses.fields(everyone)))

    # ---------------------------------------------------------------- views
    def acting_view(self, obs_buffer: torch.Tensor, legal_buffer: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Relabelling | None]:
        """The acting player's (relabelled) observation ``[B, D]``, its legal actions ``[B, A]`` (the no-op
        illegal) and its relabelling (None under self-play), for :meth:`step`. The buffers receive the
        raw observations ``[B, P, D]`` and legal moves ``[B, M]``."""
        self.env.observations(obs_buffer)
        self.env.legal_move_mask(legal_buffer)
        current = self.env.state.current
        obs, legal, acting = obs_buffer[self.rows, current], legal_buffer, None
        if self.other_play is not None:
            acting = self.acting_relabelling(current)
            obs, legal = acting.relabel_observations(obs), acting.relabel_legal_actions(legal)
        return obs, torch.cat([legal, legal.new_zeros(legal.shape[0], 1)], dim=-1), acting

    def player_views(
        self, obs_buffer: torch.Tensor, legal_buffer: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Relabelling | None]:
        """Every player's (relabelled) observation ``[B, P, D]``, legal actions ``[B, P, A]`` (the waiting
        players' only one is the no-op), the player on turn ``[B]`` and the acting players' relabelling
        (None under self-play), for :meth:`step`. The buffers receive the raw observations and moves."""
        B, P = self.num_envs, self.num_players
        obs = self.env.observations(obs_buffer)
        legal = self.env.legal_move_mask(legal_buffer).unsqueeze(1).expand(B, P, self.env.num_moves)
        current = self.env.state.current
        acting = None
        if self.other_play is not None and self.element_indices is not None:  # set together, under Other-Play / G-OP
            everyone = self.other_play.relabelling_indices(self.element_indices, check=False)
            obs, legal = everyone.relabel_observations(obs), everyone.relabel_legal_actions(legal)
            acting = self.acting_relabelling(current, everyone)
        on_turn = (torch.arange(P, device=self.device).view(1, P) == current.view(B, 1)).unsqueeze(-1)
        return obs, torch.cat([legal & on_turn, ~on_turn], dim=-1), current, acting

    # ---------------------------------------------------------------- playing
    def step(self, action: torch.Tensor, acting: Relabelling | None, greedy: torch.Tensor | None = None, *,
             shaping: bool = False) -> Step:
        """Play the acting players' ``action [B]``, chosen in their games relabelled by ``acting`` (None: not
        relabelled). ``greedy`` (SAD): the acting players' greedy moves in their relabelled games, shown to
        the others. ``shaping``: add the bootstrap convention's bonus (its first ``[bootstrap] moves``).
        Players of games that ended draw new relabellings; finished games are counted."""
        move = action if acting is None else acting.to_env_actions(action, check=False)
        slots = self.slot_of_colour if shaping else None
        pays = None
        if slots is not None and self.bootstrap.convention == "colour_to_touched_slot":
            pays = touched_hint(self.env.rules, slots, self.env.state.hands, self.env.state.current, move)
        if greedy is None:
            reward = self.env.step(move)
        else:
            greedy = greedy if acting is None else acting.to_env_actions(greedy, check=False)
            reward = self.env.step(move, greedy=greedy)
        ended = self.env.state.ended
        if slots is not None:
            bonus, self.hinted = convention_bonus(self.env.rules, slots, self.hinted, move, reward, ended,
                                                  self.bootstrap.bonus, pays)
            reward = reward + bonus
        self.episodes += ended.sum()
        self.score_sum += torch.where(ended, self.env.state.final_score, 0).sum()
        if self.other_play is not None and self.element_indices is not None:
            self.element_indices = torch.where(ended.view(-1, 1), self._draw_elements(self.other_play), self.element_indices)
        return Step(reward, ended)

    def restart(self) -> None:
        """Deal new games and draw new relabellings (after a checkpoint restored the generators)."""
        self.env.reset()
        if self.other_play is not None:
            self.element_indices = self._draw_elements(self.other_play)

    def generators(self) -> dict[str, torch.Generator]:
        """The seeded generators a checkpoint saves: ``relabel`` and the games' ``env``."""
        return {"relabel": self.relabel_generator, **({"env": self.env.generator} if self.env.generator is not None else {})}

    def take_episode_stats(self) -> tuple[int, float]:
        """(episodes finished, their mean score) since the last call (reads the device once)."""
        n, total = int(self.episodes), int(self.score_sum)
        self.episodes.zero_()
        self.score_sum.zero_()
        return n, (total / n if n else float("nan"))


def relabelling_of(rule: RuleConfig, rules: HanabiRules) -> Symmetry:
    """What Other-Play / G-OP under ``rule`` draws from: every colour permutation ('op'), the expected-return group of
    ``[rule] symmetries`` ('op' with a file), or the colour group ``[rule] group`` ('gop')."""
    if rule.symmetries is not None:
        return learned_symmetry(rule.symmetries, rules)
    if rule.objective == "op":
        return colour_symmetry(symmetric(rules.num_colours), rules)
    if rule.group is None:
        raise ValueError(f"rule.group must name a colour group for objective {rule.objective!r}, got None")
    return colour_symmetry(colour_group(rule.group, rules.num_colours), rules)


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
