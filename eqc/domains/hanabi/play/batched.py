"""The one batched game loop: greedy agents in seats, on given decks, on ``HanabiBatch``.

Self-play evaluation (``play.self_play``) is its one-agent case and cross-play
(``xp.play``) its many-agent case. An agent is an :class:`~eqc.domains.hanabi.agent.network.ActingAgent`
(an ``Agent``, or a wrapper acting through one). A recurrent agent steps every
seat it holds on every move, with only the no-op legal off turn (as it was trained); a
feed-forward agent evaluates only the seats on turn.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from eqc.domains.hanabi.agent.network import ActingAgent
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules

__all__ = ["GAME_LENGTH_BOUND", "SYNC_EVERY", "play_seats", "seat_moves"]

#: A loop bound, not a rule: a standard two-player game lasts at most 89 moves (50 cards, 8 + discards hints).
GAME_LENGTH_BOUND = 400
#: Read "are all games over?" back from the device every this many moves.
SYNC_EVERY = 8


def seat_moves(agent: ActingAgent, obs: torch.Tensor, legal: torch.Tensor, on_turn: torch.Tensor | None,
               state: object) -> tuple[torch.Tensor, object]:
    """Greedy moves ``[R]`` of ``agent`` in ``R`` seats (-1 for seats not on turn).

    ``obs [R, D]`` each seat's observation, ``legal [R, M]`` the legal moves of the seat's game,
    ``on_turn`` bool ``[R]`` (None: every seat is on turn); ``state`` holds one row per seat for a
    recurrent agent (see the module docstring).
    """
    no_op = torch.zeros(obs.shape[0], 1, dtype=torch.bool, device=obs.device)
    acting_legal = torch.cat([legal, no_op], dim=-1)
    if on_turn is None:
        q, state = agent.step(obs, acting_legal, state)
        return q.argmax(-1), state
    if not agent.recurrent:  # every seat is evaluated: picking the seats on turn would read on_turn back from the device
        q, _ = agent.step(obs, acting_legal)
        return q.argmax(-1).masked_fill(~on_turn, -1), None
    waiting = torch.cat([torch.zeros_like(legal), ~no_op], dim=-1)  # only the no-op
    q, state = agent.step(obs, torch.where(on_turn.unsqueeze(-1), acting_legal, waiting), state)
    return q.argmax(-1).masked_fill(~on_turn, -1), state


@torch.no_grad()
def play_seats(
    agents: Sequence[ActingAgent], rules: Sequence[HanabiRules], seats: torch.Tensor, decks: torch.Tensor, device: torch.device,
    keep: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Greedy games: ``seats`` long ``[B, P]`` the agent (index into ``agents``) in each seat of each game,
    ``decks`` long ``[B, rules.deck_size]``; ``rules[a]`` is agent ``a``'s observation variant of one
    game (``rules[a].game`` equal for all; each variant reads its own ``HanabiBatch``, stepped in lockstep
    with the same decks and moves). Returns the scores ``[B]``,
    bomb-outs ``[B]`` and the move uids ``[T, keep]`` of the first ``keep`` games (-1 once a game is over)."""
    B, P = seats.shape
    variants = dict.fromkeys(rules[a] for a in seats.unique().tolist())
    if len({r.game for r in variants}) > 1:
        raise ValueError(f"the agents play different games and cannot share one: {sorted({str(r.game) for r in variants})}")
    envs = {r: HanabiBatch(B, r, device=device, auto_reset=False, check=False) for r in variants}
    for env in envs.values():
        env.reset(decks)
    main = next(iter(envs.values()))
    flat = seats.reshape(-1)  # row P * game + seat
    row_game, row_seat = torch.arange(P * B, device=device) // P, torch.arange(P * B, device=device) % P
    rows = {a: (flat == a).nonzero().squeeze(1) for a in flat.unique().tolist()}
    # A feed-forward agent is evaluated in the seat on turn only. Every game starts with seat 0 and the turn goes
    # round, so at move m it is seat m % P in every game still running (finished games' moves are ignored): the
    # rows are listed here once, and no move reads the device to find them.
    turn_rows = {a: [P * (seats[:, seat] == a).nonzero().squeeze(1) + seat for seat in range(P)] for a in rows if not agents[a].recurrent}
    states = {a: agents[a].initial_state(r.numel(), device) for a, r in rows.items()}
    games = torch.arange(B, device=device)
    played = []
    for move in range(GAME_LENGTH_BOUND):
        if move % SYNC_EVERY == 0 and bool(main.state.terminal.all()):
            break
        legal, current = main.legal_move_mask(), main.state.current
        obs = {r: env.observations().view(P * B, -1) for r, env in envs.items()}
        on_turn = row_seat == current[row_game]
        flat_moves = torch.full((P * B,), -1, dtype=torch.long, device=device)
        for a, r in rows.items():
            if agents[a].recurrent:
                flat_moves[r], states[a] = seat_moves(agents[a], obs[rules[a]][r], legal[row_game[r]], on_turn[r], states[a])
            elif turn_rows[a][move % P].numel():  # a shape, known on the host
                turn = turn_rows[a][move % P]
                flat_moves[turn] = seat_moves(agents[a], obs[rules[a]][turn], legal[row_game[turn]], None, None)[0]
        moves = flat_moves.view(B, P)[games, current]
        played.append(torch.where(main.state.terminal, -1, moves)[:keep])
        moves = moves.clamp(0, main.num_moves - 1)  # finished games ignore their (meaningless) move
        for env in envs.values():
            env.step(moves)
    moves = torch.stack(played) if played else torch.empty(0, keep, dtype=torch.long, device=device)
    return main.state.score.clone(), main.state.lives == 0, moves
