"""The acting half of a learner: its games in lockstep, their relabellings, the bootstrap's shaping.

:class:`TrainingGames` owns a ``HanabiBatch`` of ``num_envs`` games on one device (same-step
``auto_reset``: a game that ends is re-dealt within the step), the Other-Play / G-OP relabelling of
every player (one group element per player per episode, drawn on its own seeded generator and
redrawn when the game ends; or, under Other-Play over a candidate set of learned neural maps, one draw of
the set: :class:`~eqc.symmetrize.CandidatePlay`), the ``[bootstrap]`` convention's shaping and the count of finished
episodes. :meth:`TrainingGames.step` plays the acting players' moves and returns what happened
(:class:`Step`); nothing outside this object advances its state. Moves are indexed as network
actions: the game's ``num_moves`` move uids, then the waiting players' no-op.

Blocks. The games of several learners (K seeds trained in one process) can be stepped as one ``K * B`` batch:
:meth:`TrainingGames.joined` joins their games into blocks, block ``k`` drawing its deals and relabellings from seed
``k``'s own generators and counting its own episodes, so that given the same moves it plays what seed ``k``'s games
alone would, bit for bit. Per-seed reads take the block (:meth:`~TrainingGames.generators`,
:meth:`~TrainingGames.take_episode_stats`, :func:`~eqc.domains.hanabi.training.resume.games_state`); games built by
the constructor are one block, ``0``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from eqc._checks import check_int
from eqc.dec_pomdp import CandidateSet, Symmetry
from eqc.dec_pomdp.candidate_set import NOT_A_GROUP, is_candidate_set_file
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry, learned_candidates, learned_symmetry
from eqc.domains.hanabi.training.bootstrap import NO_HINT, convention_bonus, touched_hint
from eqc.domains.hanabi.training.setup import make_batch
from eqc.groups import symmetric
from eqc.symmetrize import CandidatePlay, CandidateRelabelling, OtherPlay
from eqc.symmetrize.other_play import Relabelling

if TYPE_CHECKING:  # the training config imports the learners (:mod:`.algorithms`)
    from eqc.domains.hanabi.training.config import BootstrapConfig, RuleConfig

__all__ = ["AnyRelabelling", "Step", "TrainingGames", "candidates_of", "draw_relabellings", "relabelling_of"]

#: What a relabelled player plays through: a group element's :class:`Relabelling`, or a candidate-set draw's
#: :class:`CandidateRelabelling` (the same verbs).
AnyRelabelling = Relabelling | CandidateRelabelling


@dataclass(frozen=True)
class Step:
    """What one batched move did: ``reward [B]`` (float, the bootstrap's bonus included) and ``ended [B]``
    (bool: the move ended its game, which was re-dealt within the step)."""

    reward: torch.Tensor
    ended: torch.Tensor


class TrainingGames:
    """``num_envs`` games of ``rules`` on ``device`` as a learner plays them (see the module docstring).

    ``rule``: the objective (sp, or Other-Play / G-OP over ``rule.group``, which relabels every player's
    game; Other-Play over ``rule.symmetries``, a group file or a candidate set: :func:`candidates_of`);
    ``keep_identity``: under Other-Play / G-OP one random player per game keeps the identity
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
        self.rule, self.bootstrap = rule, bootstrap
        #: Each game's colour-to-slot map ``[B, colours]`` (``[bootstrap] slots``), or None without a convention.
        self.slot_of_colour = (torch.tensor(bootstrap.slots, dtype=torch.long, device=device).expand(num_envs, -1)
                               if bootstrap.convention != "none" else None)
        self.hinted = torch.full((num_envs,), NO_HINT, dtype=torch.long, device=device)
        #: The relabellings' generators, one per block of ``block_envs`` games (one block unless :meth:`joined`).
        self.relabel_generators: tuple[torch.Generator, ...] = (torch.Generator(device=device).manual_seed(seed + 3_000_017),)
        self.block_envs = num_envs
        self.keep_identity = keep_identity
        self.other_play: OtherPlay | None = None
        #: Other-Play over a candidate set of learned maps (``[rule] symmetries`` naming one); then other_play is None.
        self.candidate_play: CandidatePlay | None = None
        #: [B, P]: rows of other_play.group.elements, or candidate_play's draw indices (0 the identity, k map k)
        self.element_indices: torch.Tensor | None = None
        if rule.objective != "sp":
            candidates = candidates_of(rule, self.env.rules)
            if candidates is not None:
                self.candidate_play = CandidatePlay(candidates, device)
            else:
                sym = relabelling_of(rule, self.env.rules)
                self.other_play = OtherPlay(sym.group, sym.observation_rep, sym.action_rep, self.relabel_generators[0], device)
            self.element_indices = self._draw_elements()
        #: Episodes finished and their total score since the last :meth:`take_episode_stats`, per block ``[K]``.
        self.episodes = torch.zeros(1, dtype=torch.long, device=device)
        self.score_sum = torch.zeros(1, dtype=torch.long, device=device)

    @classmethod
    def joined(cls, games: Sequence[TrainingGames]) -> TrainingGames:
        """The games of ``games`` (one per seed: one rules, ``[rule]``, ``num_envs``, device and ``keep_identity``, one
        ``[bootstrap]`` but for its ``slots``) as one batch of blocks, in their order (see the module docstring): block
        ``k`` continues ``games[k]``'s games and draws from its generators (the same objects). ``games[k]`` itself is not
        stepped any more: its learner reads block ``k`` of the joined games."""
        if not games or any(g.blocks != 1 for g in games):
            raise ValueError("games must hold at least one TrainingGames, none of them joined already")
        first = games[0]
        bootstrap = dataclasses.replace(first.bootstrap, slots=())
        for g in games:
            if (g.num_envs, g.device, g.keep_identity, g.rule, dataclasses.replace(g.bootstrap, slots=())) != \
                    (first.num_envs, first.device, first.keep_identity, first.rule, bootstrap):
                raise ValueError("the games must share num_envs, device, keep_identity, [rule] and [bootstrap] (but for its "
                                 "slots) to be joined")
        joined = object.__new__(cls)
        joined.env = HanabiBatch.joined([g.env for g in games])
        joined.num_envs, joined.num_players, joined.device = first.num_envs * len(games), first.num_players, first.device
        joined.rows = torch.arange(joined.num_envs, device=first.device)
        joined.rule, joined.bootstrap, joined.keep_identity = first.rule, first.bootstrap, first.keep_identity
        joined.slot_of_colour = None if first.slot_of_colour is None else torch.cat([g.slot_of_colour for g in games])  # type: ignore[misc]
        joined.hinted = torch.cat([g.hinted for g in games])
        joined.relabel_generators = tuple(g.relabel_generators[0] for g in games)
        joined.block_envs = first.num_envs
        joined.other_play, joined.candidate_play = first.other_play, first.candidate_play
        joined.element_indices = None if first.element_indices is None else torch.cat([g.element_indices for g in games])  # type: ignore[misc]
        joined.episodes, joined.score_sum = torch.cat([g.episodes for g in games]), torch.cat([g.score_sum for g in games])
        return joined

    @property
    def blocks(self) -> int:
        """How many blocks of ``block_envs`` games the batch holds (1 unless :meth:`joined`)."""
        return len(self.relabel_generators)

    def block_rows(self, block: int) -> slice:
        """The rows of block ``block``'s games."""
        check_int(block, "block", low=0, high=self.blocks - 1)
        return slice(block * self.block_envs, (block + 1) * self.block_envs)

    # ---------------------------------------------------------------- relabelling
    @property
    def relabelling_order(self) -> int | None:
        """How many relabellings a player draws from (the group's order, or identity + the candidate set's maps); None
        under self-play."""
        if self.candidate_play is not None:
            return self.candidate_play.size
        return self.other_play.group.order if self.other_play is not None else None

    def _draw_elements(self) -> torch.Tensor:
        order = self.relabelling_order
        assert order is not None, "drawn only under Other-Play / G-OP"
        draws = [draw_relabellings(order, self.block_envs, self.num_players, g, self.keep_identity) for g in self.relabel_generators]
        return draws[0] if len(draws) == 1 else torch.cat(draws)

    def _relabelling(self, indices: torch.Tensor) -> AnyRelabelling:
        if self.candidate_play is not None:
            return self.candidate_play.relabelling_indices(indices, check=False)
        if self.other_play is None:
            raise ValueError("the games are not relabelled (objective 'sp'): there is no relabelling")
        return self.other_play.relabelling_indices(indices, check=False)

    def acting_relabelling(self, current: torch.Tensor, everyone: AnyRelabelling | None = None) -> AnyRelabelling:
        """The relabelling of each game's acting player (for mapping its move back); taken from ``everyone``
        (all players' relabellings ``[B, P]``) when that was already built. Built on the device from
        :attr:`element_indices` (``OtherPlay.relabelling_indices``, ``CandidatePlay.relabelling_indices``: no host round
        trip per move)."""
        if everyone is None:
            if self.element_indices is None:
                raise ValueError("the games are not relabelled (objective 'sp'): there is no acting relabelling")
            return self._relabelling(self.element_indices[self.rows, current])
        if isinstance(everyone, CandidateRelabelling):
            return everyone.take(self.rows, current)
        return Relabelling(*(getattr(everyone, f.name)[self.rows, current] for f in dataclasses.fields(everyone)))

    # ---------------------------------------------------------------- views
    def acting_view(self, obs_buffer: torch.Tensor, legal_buffer: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, AnyRelabelling | None]:
        """The acting player's (relabelled) observation ``[B, D]``, its legal actions ``[B, A]`` (the no-op
        illegal) and its relabelling (None under self-play), for :meth:`step`. The buffers receive the
        raw observations ``[B, P, D]`` and legal moves ``[B, M]``. Under a candidate set the observation is the drawn
        map's ``f(o)`` and the legal actions the real ones gathered through its ``sigma``: the player's own frame, which
        is what a learner records."""
        self.env.observations(obs_buffer)
        self.env.legal_move_mask(legal_buffer)
        current = self.env.state.current
        obs, legal, acting = obs_buffer[self.rows, current], legal_buffer, None
        if self.element_indices is not None:  # relabelled: Other-Play / G-OP
            acting = self.acting_relabelling(current)
            obs, legal = acting.relabel_observations(obs), acting.relabel_legal_actions(legal)
        return obs, torch.cat([legal, legal.new_zeros(legal.shape[0], 1)], dim=-1), acting

    def player_views(
        self, obs_buffer: torch.Tensor, legal_buffer: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, AnyRelabelling | None]:
        """Every player's (relabelled) observation ``[B, P, D]``, legal actions ``[B, P, A]`` (the waiting
        players' only one is the no-op), the player on turn ``[B]`` and the acting players' relabelling
        (None under self-play), for :meth:`step`. The buffers receive the raw observations and moves."""
        B, P = self.num_envs, self.num_players
        obs = self.env.observations(obs_buffer)
        legal = self.env.legal_move_mask(legal_buffer).unsqueeze(1).expand(B, P, self.env.num_moves)
        current = self.env.state.current
        acting = None
        if self.element_indices is not None:  # relabelled: Other-Play / G-OP
            everyone = self._relabelling(self.element_indices)
            obs, legal = everyone.relabel_observations(obs), everyone.relabel_legal_actions(legal)
            acting = self.acting_relabelling(current, everyone)
        on_turn = (torch.arange(P, device=self.device).view(1, P) == current.view(B, 1)).unsqueeze(-1)
        return obs, torch.cat([legal & on_turn, ~on_turn], dim=-1), current, acting

    # ---------------------------------------------------------------- playing
    def step(self, action: torch.Tensor, acting: AnyRelabelling | None, greedy: torch.Tensor | None = None, *,
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
        self.episodes += ended.view(self.blocks, -1).sum(1)
        self.score_sum += torch.where(ended, self.env.state.final_score, 0).view(self.blocks, -1).sum(1)
        if self.element_indices is not None:
            self.element_indices = torch.where(ended.view(-1, 1), self._draw_elements(), self.element_indices)
        return Step(reward, ended)

    def restart(self) -> None:
        """Deal new games and draw new relabellings (after a checkpoint restored the generators)."""
        self.env.reset()
        if self.element_indices is not None:
            self.element_indices = self._draw_elements()

    def generators(self, block: int) -> dict[str, torch.Generator]:
        """The seeded generators of block ``block`` that its seed's checkpoint saves: ``relabel`` and the deals' ``env``."""
        self.block_rows(block)
        env = self.env.generators[block]
        return {"relabel": self.relabel_generators[block], **({"env": env} if env is not None else {})}

    def take_episode_stats(self, block: int) -> tuple[int, float]:
        """(episodes finished, their mean score) of block ``block`` since its last call (reads the device once)."""
        self.block_rows(block)
        n, total = int(self.episodes[block]), int(self.score_sum[block])
        self.episodes[block] = 0
        self.score_sum[block] = 0
        return n, (total / n if n else float("nan"))


def candidates_of(rule: RuleConfig, rules: HanabiRules) -> CandidateSet | None:
    """The candidate set of learned neural maps that ``[rule] symmetries`` names (checked against ``rules``' encoding:
    :func:`~eqc.domains.hanabi.symmetry.learned_candidates`), or None when it names none (no file, or a group file)."""
    if rule.symmetries is None or not is_candidate_set_file(rule.symmetries):
        return None
    return learned_candidates(rule.symmetries, rules)


def relabelling_of(rule: RuleConfig, rules: HanabiRules) -> Symmetry:
    """What Other-Play / G-OP under ``rule`` draws from: every colour permutation ('op'), the expected-return group of
    ``[rule] symmetries`` ('op' with a group file), or the colour group ``[rule] group`` ('gop'). A candidate set is no
    group: :func:`candidates_of` reads it."""
    if rule.symmetries is not None:
        if is_candidate_set_file(rule.symmetries):
            raise TypeError(f"[rule] symmetries names a candidate set ({rule.symmetries}), not a group: {NOT_A_GROUP}")
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
