"""Two-player Hanabi evaluation on HLE: games on common decks, cross-play, action matrices.

A policy is a callable ``(obs [obs_dim] float tensor, legal [num_moves] bool tensor) -> int`` move
uid (:mod:`eqc.domains.hanabi.rules`), e.g. ``RuleAgent().act`` or :func:`policy_from_module` around a Q-network, logit network or
``Symmetrizer``. If the policy object has a ``reset()`` method it is called at the start of each
game, and an ``observe(obs)`` method is called with its observation on every move it does not
make (recurrent policies that, like SAD's agents, step their state on every move; give each seat
its own object for self-play of stateful policies).

Every pairing plays the same list of decks (:func:`common_decks`): game ``k`` deals
``decks[k]``; with ``alternate_seats`` policy ``a`` sits in seat ``k % 2`` (seat 0 moves first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
from torch import nn

from eqc._checks import check_int
from eqc.domains.hanabi.dealing import as_deck, random_deck
from eqc.domains.hanabi.rules import HanabiRules
from eqc.evaluation.action_matrix import action_pair_counts
from eqc.evaluation.cross_play import CrossPlayResult, GameResults, cross_play

if TYPE_CHECKING:  # HLE is imported only when a game is played
    from eqc.domains.hanabi.hle import HanabiEnv

__all__ = [
    "HanabiGames",
    "Policy",
    "action_labels",
    "action_matrix_counts",
    "common_decks",
    "hanabi_cross_play",
    "play_games",
    "policy_from_module",
]

Policy = Callable[[torch.Tensor, torch.Tensor], int]


@dataclass(frozen=True)
class HanabiGames(GameResults):
    """:class:`GameResults` plus, per game, the move uids in order (``actions``), who made each move
    (``movers``: 0 = policy a, 1 = policy b) and policy a's seat (``a_seat``)."""

    actions: tuple[tuple[int, ...], ...] = field(default=())
    movers: tuple[tuple[int, ...], ...] = field(default=())
    a_seat: tuple[int, ...] = field(default=())


def common_decks(num_games: int, rules: HanabiRules, deck_seed: int = 1) -> list[tuple[int, ...]]:
    """``num_games`` uniformly shuffled decks of ``rules``' deck (its colours and ranks) from a generator seeded
    with ``deck_seed``."""
    check_int(num_games, "num_games", low=1)
    rules = _rules(rules)
    generator = torch.Generator().manual_seed(check_int(deck_seed, "deck_seed", low=0))
    return [random_deck(generator, rules.num_colours, rules.num_ranks) for _ in range(num_games)]


def _rules(rules: object) -> HanabiRules:
    if not isinstance(rules, HanabiRules):
        raise TypeError(f"rules must be a HanabiRules, got {type(rules).__name__}")
    return rules


def _default_env(rules: HanabiRules | None = None) -> HanabiEnv:
    from eqc.domains.hanabi.hle import HanabiEnv

    return HanabiEnv(HanabiRules() if rules is None else _rules(rules))


def _check_policy(policy: object, name: str) -> None:
    if not callable(policy):
        raise TypeError(f"{name} must be callable (obs, legal) -> move uid, got {type(policy).__name__}")


def _play_one(env: HanabiEnv, seats: tuple[Policy, Policy], deck: tuple[int, ...], names: tuple[str, str]) -> tuple[list[int], list[int]]:
    for policy in dict.fromkeys(seats):  # each distinct object once
        reset = getattr(policy, "reset", None)
        if callable(reset):
            reset()
    env.reset(deck)
    actions, players = [], []
    while not env.terminal:
        p = env.current_player
        everyone, legal = env.observations(), env.legal_move_mask()
        for q, waiting in enumerate(seats):
            observe = getattr(waiting, "observe", None)
            if q != p and callable(observe):
                observe(everyone[q])
        obs = everyone[p]
        move = seats[p](obs, legal)
        if isinstance(move, bool) or not isinstance(move, int):
            raise TypeError(f"{names[p]} must return a Python int move uid, got {type(move).__name__} {move!r}")
        if not (0 <= move < legal.numel() and bool(legal[move])):
            raise ValueError(f"{names[p]} returned move {move}, which is not legal; legal uids: {env.legal_move_uids()}")
        env.play(move)
        actions.append(move)
        players.append(p)
    return actions, players


def play_games(
    policy_a: Policy,
    policy_b: Policy,
    decks: Sequence[Sequence[int]],
    *,
    env: HanabiEnv | None = None,
    alternate_seats: bool = True,
    rules: HanabiRules | None = None,
) -> HanabiGames:
    """Play one two-player game per deck between ``policy_a`` and ``policy_b``.

    ``env``: a 2-player ``HanabiEnv`` (reuse one to save HLE's set-up); when None, one is built for
    ``rules``, or else for the observation variant the policies declare (a ``rules`` attribute, as
    trained agents from ``load_policy`` have), or else ``HanabiRules()`` (the canonical "full"
    observation). A policy that declares another variant than the env gives is refused (its inputs
    would have the right shape and the wrong meaning). Returns scores (float64), bomb-out and
    perfect-score flags, and the moves.
    """
    _check_policy(policy_a, "policy_a")
    _check_policy(policy_b, "policy_b")
    named = (("policy_a", policy_a), ("policy_b", policy_b))
    declared: dict[str, HanabiRules] = {}
    for name, p in named:
        declared_rules = getattr(p, "rules", None)  # a trained policy's game and observation variant
        if isinstance(declared_rules, HanabiRules):
            declared[name] = declared_rules
    if env is None and rules is None and declared:
        rules = next(iter(declared.values()))
    if not isinstance(alternate_seats, bool):
        raise TypeError(f"alternate_seats must be a bool, got {type(alternate_seats).__name__}")
    if env is None:
        env = _default_env(rules)
    elif rules is not None and getattr(env, "rules", None) != rules:
        raise ValueError(f"env plays {getattr(env, 'rules', None)}, but rules is {rules}; pass one or the other")
    if getattr(env, "num_players", None) != 2:
        raise ValueError(f"env must be a 2-player HanabiEnv, got num_players={getattr(env, 'num_players', None)!r}")
    for name, wanted in declared.items():
        given = getattr(env, "rules", None)
        variant = (wanted.knowledge, wanted.sad, wanted.observation_type)
        if given is not None and variant != (given.knowledge, given.sad, given.observation_type):
            raise ValueError(
                f"{name} was trained on {wanted.knowledge}/{wanted.observation_type} observations with SAD {wanted.sad!r}, but the "
                f"env gives {given.knowledge}/{given.observation_type} with SAD {given.sad!r}: leave env and rules unset to play in "
                "the policy's variant, or play mixed variants on HanabiBatch (eqc hanabi xp)")
    if isinstance(decks, (str, bytes)) or not isinstance(decks, Sequence) or len(decks) == 0:
        raise ValueError("decks must be a non-empty sequence of decks (see common_decks)")
    checked = [as_deck(d, env.num_colours, env.num_ranks) for d in decks]
    perfect_score = env.num_colours * env.num_ranks
    scores, bombed, perfect, actions, movers, a_seats = [], [], [], [], [], []
    for k, deck in enumerate(checked):
        a_seat = k % 2 if alternate_seats else 0
        seats = (policy_a, policy_b) if a_seat == 0 else (policy_b, policy_a)
        names = ("policy_a", "policy_b") if a_seat == 0 else ("policy_b", "policy_a")
        moves, players = _play_one(env, seats, deck, names)
        scores.append(float(env.score))
        bombed.append(env.bombed_out)
        perfect.append(env.score == perfect_score)
        actions.append(tuple(moves))
        movers.append(tuple(0 if p == a_seat else 1 for p in players))
        a_seats.append(a_seat)
    return HanabiGames(
        torch.tensor(scores, dtype=torch.float64), torch.tensor(bombed), torch.tensor(perfect),
        actions=tuple(actions), movers=tuple(movers), a_seat=tuple(a_seats),
    )


def hanabi_cross_play(
    policies: Sequence[Policy], decks: Sequence[Sequence[int]], *, env: HanabiEnv | None = None, rules: HanabiRules | None = None
) -> CrossPlayResult:
    """:func:`eqc.evaluation.cross_play` of ``policies``, every ordered pair on the same ``decks``
    (on ``env``, or a ``HanabiEnv`` of ``rules``)."""
    env = _default_env(rules) if env is None else env
    return cross_play(policies, lambda a, b: play_games(a, b, decks, env=env))


def action_labels(hand_size: int = 5, num_colours: int = 5, num_ranks: int = 5) -> list[str]:
    """Two-player move names in uid order: D1-5 (discard slot), P1-5 (play), C1-5 (hint colour), R1-5 (hint rank)."""
    check_int(hand_size, "hand_size", low=1)
    check_int(num_colours, "num_colours", low=1, high=5)
    check_int(num_ranks, "num_ranks", low=1, high=5)
    return (
        [f"D{i + 1}" for i in range(hand_size)] + [f"P{i + 1}" for i in range(hand_size)]
        + [f"C{c + 1}" for c in range(num_colours)] + [f"R{r + 1}" for r in range(num_ranks)]
    )


def action_matrix_counts(games: HanabiGames, num_moves: int = 20, responder: str = "both") -> torch.Tensor:
    """Counts ``[num_moves, num_moves]`` of (partner's previous move, response) over ``games``.

    ``responder``: "a" or "b" counts only that policy's responses; "both" counts every pair.
    Normalise with :func:`eqc.evaluation.conditional_action_matrix`.
    """
    if not isinstance(games, HanabiGames):
        raise TypeError(f"games must be HanabiGames (from play_games), got {type(games).__name__}")
    options = {"a": [0], "b": [1], "both": [0, 1]}
    if responder not in options:
        raise ValueError(f"responder must be one of {sorted(options)}, got {responder!r}")
    return action_pair_counts(games.actions, num_moves, actors=games.movers, responders=options[responder])


def policy_from_module(
    module: nn.Module | Callable[..., torch.Tensor], device: torch.device | str | None = None, *, pass_mask: bool = False
) -> Policy:
    """A greedy policy from a network mapping ``obs [1, obs_dim]`` to Q-values/logits ``[1, num_moves]``.

    Illegal moves are masked before the argmax (ties: lowest uid). ``pass_mask`` calls
    ``module(obs, legal)`` (e.g. a ``Symmetrizer``). Runs under ``torch.no_grad()`` on ``device``
    (default: the module's parameter device, else CPU); the module's train/eval mode is untouched.
    """
    if not callable(module):
        raise TypeError(f"module must be an nn.Module or a callable, got {type(module).__name__}")
    if device is None:
        first = next(module.parameters(), None) if isinstance(module, nn.Module) else None
        device = first.device if first is not None else torch.device("cpu")
    device = torch.device(device)

    def policy(obs: torch.Tensor, legal: torch.Tensor) -> int:
        if not isinstance(legal, torch.Tensor) or legal.dtype != torch.bool or legal.dim() != 1:
            raise TypeError("legal must be a 1-D bool tensor")
        if not bool(legal.any()):
            raise ValueError("legal has no legal move")
        x, mask = obs.to(device)[None], legal.to(device)[None]
        with torch.no_grad():
            out = module(x, mask) if pass_mask else module(x)
        if not isinstance(out, torch.Tensor) or out.shape[-1] != legal.numel() or out.numel() != legal.numel():
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"module must return one value per move ({legal.numel()}), got {shape}")
        values = out.reshape(-1).float().masked_fill(~mask[0], float("-inf"))
        return int(values.argmax())

    return policy
