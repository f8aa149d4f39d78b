"""The batched game loop on an accelerator's terms: no read from the device per move but the periodic end check."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from eqc.domains.hanabi.agent.network import Agent, QNetwork
from eqc.domains.hanabi.play.batched import SYNC_EVERY, play_seats
from eqc.domains.hanabi.play.hle import common_decks
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.xp import RelabelledAgent

CPU = torch.device("cpu")
GAMES = 32


def _agent(lstm_layers: int, seed: int) -> Agent:
    config = TrainConfig().replace(network={"hidden_size": 32, "mlp_layers": 1, "lstm_layers": lstm_layers})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Agent(QNetwork(658, 21, config.network))


@pytest.mark.parametrize("agents", ["feed-forward", "recurrent", "cross-play", "relabelled"])
def test_moves_read_nothing_back_but_the_end_check(host_traffic, agents: str) -> None:
    """Per move only ``terminal.all()`` every ``SYNC_EVERY`` moves is read back; the seats on turn are known up front
    (a boolean-mask index per move was a read), and a relabelled agent acts with one int element (its index
    checks read the indices back twice per representation, six times per move)."""
    rules = TrainConfig().game.rules()
    pool = {
        "feed-forward": [_agent(0, 0)],
        "recurrent": [_agent(1, 0)],
        "cross-play": [_agent(0, 0), _agent(1, 1)],
        "relabelled": [_agent(0, 0), RelabelledAgent(_agent(0, 0), colour_symmetry(colour_group("S5"), rules), 7)],
    }[agents]
    seats = torch.tensor([[0, len(pool) - 1], [len(pool) - 1, 0]]).repeat(GAMES // 2, 1)
    decks = torch.tensor(common_decks(GAMES, HanabiRules(), deck_seed=3))
    play_seats(pool, [rules] * len(pool), seats, decks, CPU)  # tables built once
    with host_traffic() as traffic:
        _, _, moves = play_seats(pool, [rules] * len(pool), seats, decks, CPU, keep=GAMES)
    counts = Counter(traffic.events)
    end_checks = counts.pop("batched.py:play_seats read __bool__")
    assert end_checks <= moves.shape[0] // SYNC_EVERY + 1
    assert max(counts.values(), default=0) <= 2 * len(pool), counts  # once per call (seats, rows), not per move
