"""The ERS paper's neural maps against a frozen pool of Hanabi agents (``eqc hanabi symmetries neural``).

:func:`learn_hanabi_maps` runs :func:`eqc.dec_pomdp.train_candidate_map` once per move permutation with Hanabi's
return estimate, :func:`sampled_returns`: ``games`` games on ``HanabiBatch`` (fresh decks per call from a seeded
generator) in which every seat samples its move from its policy's softmax, a pool member's being its Q-values over
HLE's moves divided by ``temperature`` (the no-op dropped; an agent's dueling centring shifts every move alike, so
the softmax ignores it). Its value is the mean score; its gradient is REINFORCE with a leave-one-out baseline,
``mean_g (R_g - b_g) sum_t log p(m_t)``, ``b_g`` the mean score of the other games. The final measurement
(:func:`greedy_returns`) plays the transformed agents greedily on decks of another seed.

A move permutation is named as a transposition of two hand slots (:func:`slot_transposition`): the discard moves,
the play moves, or both, of the two slots swapped (slot order is card age, so this is no symmetry of the game: the
maps the exact search over ``slot`` permutations cannot pair with a colour relabelling). Feed-forward agents only.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from eqc._checks import check_float, check_int
from eqc.dec_pomdp import CandidateSet, NeuralMapOptions, train_candidate_map
from eqc.dec_pomdp.neural_maps import LearnedMap, ReturnEstimate, SeatPolicy
from eqc.domains.hanabi.agent.policy import TrainedPolicy
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["MOVE_KINDS", "AgentLogits", "greedy_returns", "learn_hanabi_maps", "sampled_returns", "slot_transposition"]

#: The kinds of move a slot transposition can swap (HLE: discard slot ``0..h-1``, play slot ``h..2h-1``).
MOVE_KINDS = ("discard", "play")


def slot_transposition(rules: HanabiRules, slots: Sequence[int], kinds: Sequence[str] = MOVE_KINDS) -> list[int]:
    """The move permutation (an image array on ``rules.num_moves``) swapping the ``kinds`` moves of two ``slots``."""
    if len(slots) != 2 or len(set(slots)) != 2:
        raise ValueError(f"slots must name two different hand slots, got {list(slots)}")
    for k, s in enumerate(slots):
        check_int(s, f"slots[{k}]", low=0, high=rules.hand_size - 1)
    if not kinds or len(set(kinds)) != len(kinds) or any(k not in MOVE_KINDS for k in kinds):
        raise ValueError(f"kinds must name distinct move kinds of {list(MOVE_KINDS)}, got {list(kinds)}")
    image = list(range(rules.num_moves))
    for kind in kinds:
        first = 0 if kind == "discard" else rules.hand_size
        a, b = first + slots[0], first + slots[1]
        image[a], image[b] = b, a
    return image


class AgentLogits(nn.Module):
    """A feed-forward pool member as a policy: ``obs [..., D] -> Q[..., :moves] / temperature`` (the no-op dropped)."""

    def __init__(self, policy: TrainedPolicy, temperature: float) -> None:
        super().__init__()
        if not isinstance(policy, TrainedPolicy):
            raise TypeError(f"policy must be a TrainedPolicy (load_policy), got {type(policy).__name__}")
        if policy.agent.recurrent:
            raise ValueError("the neural maps need feed-forward agents (lstm_layers 0); this agent is recurrent")
        self.agent = policy.agent
        self.moves = policy.num_moves
        self.temperature = check_float(temperature, "temperature", low=0.0, low_open=True)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        flat = obs.reshape(-1, obs.shape[-1]).float()
        q, _ = self.agent.step(flat, None)
        return (q[:, : self.moves] / self.temperature).reshape(*obs.shape[:-1], self.moves)


def _play(policies: Sequence[SeatPolicy], env: HanabiBatch, sample: torch.Generator | None,
          decks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores ``[B]`` and the summed log-probabilities of the moves made ``[B]`` (greedy when ``sample`` is None), on
    ``decks`` (None: new decks from the env's seeded generator)."""
    if len(policies) != env.num_players:
        raise ValueError(f"returns needs one policy per seat ({env.num_players}), got {len(policies)}")
    env.reset(decks)
    log_prob = torch.zeros(env.num_envs)
    while not bool(env.state.terminal.all()):
        obs, legal, current = env.observations(), env.legal_move_mask(), env.state.current
        alive = ~env.state.terminal
        moves = torch.zeros(env.num_envs, dtype=torch.long)
        for seat, policy in enumerate(policies):
            rows = (alive & (current == seat)).nonzero().squeeze(1)
            if not rows.numel():
                continue
            logits = policy(obs[rows, seat], legal[rows])
            if sample is None:
                chosen = logits.argmax(-1)
            else:
                logp = torch.log_softmax(logits, -1)
                chosen = torch.multinomial(logp.detach().exp(), 1, generator=sample).squeeze(1)
                log_prob = log_prob.index_add(0, rows, logp.gather(-1, chosen[:, None]).squeeze(1))
            moves = moves.index_put((rows,), chosen)
        env.step(moves)  # a finished game ignores its move
    return env.state.score.double(), log_prob


def sampled_returns(rules: HanabiRules, games: int, *, seed: int = 0) -> ReturnEstimate:
    """The REINFORCE return estimate of the module docstring: ``games`` sampled games a call (at least 2)."""
    check_int(games, "games", low=2)
    check_int(seed, "seed", low=0, high=2**62)
    env = HanabiBatch(games, rules, seed=seed, check=False)
    sample = torch.Generator().manual_seed(seed + 1)

    def returns(policies: Sequence[SeatPolicy]) -> torch.Tensor:
        score, log_prob = _play(policies, env, sample)
        baseline = (score.sum() - score) / (games - 1)
        surrogate = ((score - baseline).float() * log_prob).mean()
        return score.mean().float() + surrogate - surrogate.detach()

    return returns


def greedy_returns(rules: HanabiRules, games: int, *, seed: int = 1) -> ReturnEstimate:
    """The mean score of ``games`` greedy games, the same decks (``common_decks`` of ``seed``) every call: the final
    measurement (no gradient)."""
    check_int(games, "games", low=1)
    check_int(seed, "seed", low=0, high=2**62)
    env = HanabiBatch(games, rules, check=False)
    decks = torch.tensor(common_decks(games, rules, deck_seed=seed))
    return lambda policies: _play(policies, env, None, decks)[0].mean()


def learn_hanabi_maps(policies: Sequence[TrainedPolicy], move_permutations: Sequence[Sequence[int]], *,
                      options: NeuralMapOptions, games: int = 64, temperature: float = 1.0, measure_games: int = 200,
                      deck_seed: int = 0) -> CandidateSet:
    """A :class:`~eqc.dec_pomdp.CandidateSet` of one map per move permutation, learned in order against ``policies``
    (one game, feed-forward agents): ``games`` sampled games per estimate, measured on ``measure_games`` greedy games
    of decks seeded ``deck_seed + 1`` (training's decks come from ``deck_seed``)."""
    pool = list(policies)
    if not pool or not all(isinstance(p, TrainedPolicy) for p in pool):
        raise TypeError("policies must be a non-empty list of TrainedPolicy (load_policy)")
    rules = pool[0].rules
    if any(p.rules != rules for p in pool):
        raise ValueError("policies must all play one game (the same HanabiRules)")
    if not move_permutations:
        raise ValueError("move_permutations must list at least one permutation of the game's moves")
    members = [AgentLogits(p, temperature) for p in pool]
    measure = greedy_returns(rules, measure_games, seed=deck_seed + 1)
    learned: list[LearnedMap] = []
    for k, sigma in enumerate(move_permutations):
        estimate = sampled_returns(rules, games, seed=deck_seed + 2 * k + 2)
        learned.append(train_candidate_map(members, sigma, estimate, observation_size=rules.obs_dim, options=options,
                                           seats=rules.num_players, earlier=[m.map for m in learned], measure=measure))
    return CandidateSet(tuple(learned), options, {"game": rules.to_dict(), "games": games, "temperature": temperature,
                                                  "measure_games": measure_games, "deck_seed": deck_seed})
