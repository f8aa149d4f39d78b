"""Learning that can be seen in a unit test: a tiny PQN config beats the untrained agent."""

from __future__ import annotations

import csv
from pathlib import Path

from eqc.domains.hanabi.training.run import train


def test_tiny_pqn_beats_the_untrained_agent(tmp_path: Path, tiny_config) -> None:
    """~250k moves (about 30 s on one CPU thread): the untrained greedy agent scores about 0 (it bombs
    out); after training it must beat that by at least 0.3 points and 3 standard errors."""
    config = tiny_config(
        run={"num_envs": 256, "total_moves": 250_000, "eval_every_moves": 250_000, "eval_games": 400},
        network={"hidden_size": 128, "mlp_layers": 2},
        optim={"lr": 5e-4},
        pqn={"epochs": 2, "minibatches": 4, "eps_start": 0.02, "eps_end": 0.005, "eps_decay_moves": 100_000, "td_lambda": 0.8},
    )
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    with open(tmp_path / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    untrained, trained = float(rows[0]["eval_score"]), float(rows[-1]["eval_score"])
    sem = float(rows[-1]["eval_sem"]) + float(rows[0]["eval_sem"])
    assert trained > untrained + max(0.3, 3 * sem), (untrained, trained)
