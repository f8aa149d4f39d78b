"""Seeds in one process (``train_seeds``, ``StackedSeeds``): K seeds trained as one batched learner equal K ordinary
``train`` runs, each into its own run directory that everything downstream reads; configs that cannot be batched are
refused before any work.

Tolerance. The pool's network work runs under ``torch.vmap``, which computes a linear layer as a batched matmul plus
the bias where a single run's ``addmm`` fuses them: Q-values and gradients differ in the last float32 bits (about
1e-7 relative). After the 8 updates of these runs the weights stay within ``rtol=1e-5, atol=1e-6`` of the single
runs' (measured: about 4e-9) and the losses within ``rel=1e-5``. Every other column of ``metrics.csv`` (greedy
evaluation scores, training scores and episode counts, epsilon, moves, updates) is compared exactly: a greedy or
exploration choice flipped by rounding would change the games played and show there. The runs are short (4 rollouts
of 8 moves in 32 games) so that such a near-tie is unlikely; should one appear on another processor, the row comparison says so.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from eqc.domains.hanabi.agent.files import export_policy, load_checkpoint
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.training import run_log
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.driver import RunDirectoryError
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.pqn import PQN, td_loss
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.training.seeds import StackedSeeds
from eqc.domains.hanabi.training.seeds_run import train_seeds

QUIET: dict[str, Any] = {"progress": False, "log": lambda _: None}
TIMINGS = ("wall_s", "moves_per_s", "updates_per_s")
SMALL = {"run": {"num_envs": 32, "eval_games": 16, "total_moves": 1024, "eval_every_moves": 512}, "network": {"hidden_size": 32}}
#: name -> section changes: self-play; G-OP over D10 with SAD, the network symmetrized over D10 and the bootstrap's
#: shaping, each seed taught its own colour-to-slot map (seeds of one pool may differ in [bootstrap] slots).
CASES: dict[str, dict[str, Any]] = {
    "sp": {},
    "gop_sad_symmetrized_bootstrap": {"rule": {"objective": "gop", "group": "D10"}, "network": {"symmetrize": "D10"},
                                      "game": {"knowledge": "v0_belief", "sad": "greedy_last_action"},
                                      "bootstrap": {"convention": "colour_to_slot", "bonus": 1.0, "moves": 100_000}},
}
SLOTS = {0: [4, 3, 2, 1, 0], 1: [1, 2, 3, 4, 0]}


@pytest.fixture(autouse=True)
def _no_learning_curves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PNG of every metrics row is most of these runs' time and none of what is compared."""
    monkeypatch.setattr(run_log, "plot_curve", lambda *args: None)


def _configs(tiny_config: Callable[..., TrainConfig], case: str) -> dict[int, TrainConfig]:
    changes = {name: {**SMALL.get(name, {}), **CASES[case].get(name, {})} for name in {*SMALL, *CASES[case]}}
    if "bootstrap" not in changes:
        return dict.fromkeys(SLOTS, tiny_config(**changes))
    return {s: tiny_config(**{**changes, "bootstrap": {**changes["bootstrap"], "slots": slots}}) for s, slots in SLOTS.items()}


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "metrics.csv") as f:
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in csv.DictReader(f)]


def _weights(run: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(run)["learner"]["modules"]["network"]


def _assert_equal_runs(pool_run: Path, single_run: Path) -> None:
    """``metrics.csv`` rows equal but for the timings and the loss (``rel=1e-5``); weights ``rtol=1e-5, atol=1e-6``."""
    rows, expected = _rows(pool_run), _rows(single_run)
    assert [r["moves"] for r in rows] == ["0", "512", "1024"]
    assert [{k: v for k, v in r.items() if k != "loss"} for r in rows] == [{k: v for k, v in r.items() if k != "loss"} for r in expected]
    for row, want in zip(rows[1:], expected[1:], strict=True):
        assert float(row["loss"]) == pytest.approx(float(want["loss"]), rel=1e-5)
    weights, want_weights = _weights(pool_run), _weights(single_run)
    assert weights.keys() == want_weights.keys()
    for key in weights:
        torch.testing.assert_close(weights[key], want_weights[key], rtol=1e-5, atol=1e-6, msg=key)


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeds_in_one_process_equal_their_own_runs(tmp_path: Path, tiny_config: Callable[..., TrainConfig], case: str) -> None:
    configs = _configs(tiny_config, case)
    for seed, config in configs.items():
        train(config, tmp_path / "single" / f"seed_{seed}", seed=seed, **QUIET)
    summaries = train_seeds(configs, tmp_path / "pool", **QUIET)
    assert sorted(summaries) == [0, 1] and all(s.moves == 1024 and s.stopped == "total_moves" for s in summaries.values())
    for seed in configs:
        _assert_equal_runs(tmp_path / "pool" / f"seed_{seed}", tmp_path / "single" / f"seed_{seed}")
    # negative control: the comparison tells the seeds apart
    with pytest.raises(AssertionError):
        torch.testing.assert_close(_weights(tmp_path / "pool" / "seed_1"), _weights(tmp_path / "single" / "seed_0"), rtol=1e-5, atol=1e-6)
    record = json.loads((tmp_path / "pool" / "pool.json").read_text())
    assert record["seeds"] == [0, 1] and {s["state"] for s in record["status"].values()} == {"finished"}


def test_a_pool_resumes_and_its_seeds_are_ordinary_runs(tmp_path: Path, tiny_config: Callable[..., TrainConfig]) -> None:
    """A pool stopped at 512 moves and resumed equals the uninterrupted pool exactly (the same batched computation); a
    seed's directory of the stopped pool, resumed by ``train`` alone, equals that seed's single run up to rounding; a
    seed's directory exports as any run's."""
    config = tiny_config(**SMALL)
    train_seeds(dict.fromkeys((0, 1), config), tmp_path / "whole", **QUIET)
    train_seeds(dict.fromkeys((0, 1), config.replace(run={"total_moves": 512})), tmp_path / "resumed", **QUIET)
    shutil.copytree(tmp_path / "resumed" / "seed_1", tmp_path / "alone")
    summaries = train_seeds(dict.fromkeys((0, 1), config), tmp_path / "resumed", **QUIET)
    assert all(s.resumed and s.moves == 1024 for s in summaries.values())
    for seed in (0, 1):
        whole, resumed = tmp_path / "whole" / f"seed_{seed}", tmp_path / "resumed" / f"seed_{seed}"
        assert _rows(whole) == _rows(resumed)
        assert all(torch.equal(w, r) for w, r in zip(_weights(whole).values(), _weights(resumed).values(), strict=True))
    train(config, tmp_path / "alone", seed=1, **QUIET)
    train(config, tmp_path / "single", seed=1, **QUIET)
    _assert_equal_runs(tmp_path / "alone", tmp_path / "single")
    policy = export_policy(tmp_path / "whole" / "seed_0", tmp_path / "policy")
    assert (policy / "policy.json").is_file()


def test_stacked_parameters_are_the_seeds_own(tiny_config: Callable[..., TrainConfig]) -> None:
    """Each seed's parameters become views of its row of the stack: the batched Q-values are each agent's own (up to
    rounding) and an update moves each seed's network."""
    config = tiny_config(**SMALL)
    learners = [make_learner(config, seed, torch.device("cpu")) for seed in (3, 5)]
    before = [{k: v.clone() for k, v in x.network.state_dict().items()} for x in learners]
    stacked = StackedSeeds(learners)  # type: ignore[arg-type]  # make_learner of a "pqn" config: PQNLearners
    obs = torch.rand(2, 16, learners[0].obs_dim)
    legal = torch.rand(2, 16, learners[0].num_actions) > 0.3
    q = stacked.q_values(obs, legal)
    for k, learner in enumerate(learners):
        assert all(torch.equal(v, before[k][name]) for name, v in learner.network.state_dict().items())
        torch.testing.assert_close(q[k], learner.agent.step(obs[k], legal[k])[0], rtol=1e-5, atol=1e-6)
    stacked.iteration()
    for k, learner in enumerate(learners):
        assert learner.updates == config.settings(PQN).epochs * config.settings(PQN).minibatches and learner.moves_played == 8 * 32
        weight = learner.network.state_dict()["head.weight"]
        assert not torch.equal(weight, before[k]["head.weight"])
        assert torch.equal(weight, stacked.params["agent.network.head.weight"][k])
    with pytest.raises(RuntimeError, match="games were joined with other seeds'"):  # only the stack steps the joined games
        learners[0].iteration()


def test_in_bf16_the_batched_network_agrees_up_to_bf16_rounding(tiny_config: Callable[..., TrainConfig]) -> None:
    """bf16 autocast under ``vmap`` (its backward once failed there): on one minibatch the seeds' Q-values, losses and
    updated weights match each learner's own to bf16's rounding (``rtol=atol=2e-2``, ``rel=1e-2``, ``atol=1e-3``).
    Whole rollouts are not compared: bf16 rounding flips greedy choices within one (the module docstring)."""
    config = tiny_config(**{**SMALL, "network": {**SMALL["network"], "precision": "bf16"}})
    alone = [make_learner(config, seed, torch.device("cpu")) for seed in (0, 1)]
    stacked = StackedSeeds([make_learner(config, seed, torch.device("cpu")) for seed in (0, 1)])  # type: ignore[arg-type]
    generator = torch.Generator().manual_seed(0)
    obs = torch.rand(2, 64, alone[0].obs_dim, generator=generator)
    legal = torch.rand(2, 64, alone[0].num_actions, generator=generator) > 0.3
    legal[..., 0] = True
    action, target = torch.zeros(2, 64, dtype=torch.long), torch.rand(2, 64, generator=generator)
    q = stacked.q_values(obs, legal)
    losses = stacked.learn(obs, legal, action, target)
    for k, learner in enumerate(alone):
        own_q = learner.agent.step(obs[k], legal[k])[0]
        torch.testing.assert_close(q[k].nan_to_num(neginf=0.0), own_q.detach().nan_to_num(neginf=0.0), rtol=2e-2, atol=2e-2)
        loss = td_loss(learner.agent.step(obs[k], legal[k])[0], legal[k], action[k], target[k])
        learner.optimize(loss)
        assert float(losses[k]) == pytest.approx(float(loss.detach()), rel=1e-2)
        for name, weight in learner.network.state_dict().items():
            torch.testing.assert_close(stacked.learners[k].network.state_dict()[name], weight, rtol=0, atol=1e-3)
    stacked.iteration()  # and a whole iteration runs


@pytest.mark.parametrize(
    ("changes", "key"),
    [({"run": {"algorithm": "ippo"}}, "[run] algorithm"),
     ({"run": {"algorithm": "r2d2"}, "network": {"lstm_layers": 1}}, "[run] algorithm"),
     ({"network": {"lstm_layers": 1}}, "[network] lstm_layers")],
)
def test_refuses_what_it_cannot_batch_before_any_work(tmp_path: Path, tiny_config: Callable[..., TrainConfig],
                                                      changes: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=f"^{re.escape(key)} must be"):
        train_seeds(dict.fromkeys((0, 1), tiny_config(**changes)), tmp_path / "pool", **QUIET)
    assert not (tmp_path / "pool").exists()


def test_refuses_pools_it_cannot_continue(tmp_path: Path, tiny_config: Callable[..., TrainConfig]) -> None:
    config = tiny_config(**SMALL)
    with pytest.raises(ValueError, match=r"differ outside \[bootstrap\] slots"):
        train_seeds({0: config, 1: config.replace(optim={"lr": 1e-3})}, tmp_path / "pool", **QUIET)
    taught = config.replace(bootstrap={"convention": "colour_to_slot", "slots": (0, 1, 2, 3, 4), "bonus": 1.0})
    with pytest.raises(ValueError, match=r"differ outside \[bootstrap\] slots: .*their games are one batch"):  # one bonus per batch
        train_seeds({0: taught, 1: taught.replace(bootstrap={"bonus": 2.0})}, tmp_path / "pool", **QUIET)
    with pytest.raises(TypeError, match="seed must be a Python int"):
        train_seeds({"0": config}, tmp_path / "pool", **QUIET)  # type: ignore[dict-item]
    assert not (tmp_path / "pool").exists()
    train(config.replace(run={"total_moves": 1024}), tmp_path / "run", seed=0, **QUIET)
    with pytest.raises(RunDirectoryError, match="is a run directory"):
        train_seeds({0: config}, tmp_path / "run", **QUIET)
    train(config.replace(run={"total_moves": 1024}), tmp_path / "pool" / "seed_0", seed=0, **QUIET)
    with pytest.raises(RunDirectoryError, match=r"seeds \[0\] .* hold checkpoints and \[1\] do not"):
        train_seeds(dict.fromkeys((0, 1), config), tmp_path / "pool", **QUIET)
    with pytest.raises(RunDirectoryError, match=r"is a pool of seeds \[0\] \(their checkpoints\): .*name them all \(\[0\]\)"):
        train_seeds({1: config}, tmp_path / "pool", **QUIET)  # seed 0 would be left behind, and dropped from pool.json
    assert not (tmp_path / "pool" / "seed_1").exists()  # left as it was found
    with pytest.raises(ValueError, match=r"seeds in one process must number 1 to 64, got 65"):
        train_seeds(dict.fromkeys(range(65), config), tmp_path / "many", **QUIET)
    assert not (tmp_path / "many").exists()


@pytest.mark.parametrize("stage", ["after the mark", "before the mark"])
def test_a_kill_while_the_seeds_are_saved_leaves_them_at_one_move_count(tmp_path: Path, tiny_config: Callable[..., TrainConfig],
                                                                        monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    """The seeds' checkpoints are one unit: a stop between two seeds' writes is finished (the set was marked complete) or
    undone (it was not) when the pool next starts, and every seed resumes from one move count."""
    from eqc.domains.hanabi.training import driver, seeds_run

    config = tiny_config(**SMALL)
    pool = tmp_path / "pool"
    train_seeds(dict.fromkeys((0, 1), config), pool, **QUIET)
    calls: list[object] = []
    if stage == "after the mark":  # killed between the two seeds' replacements
        real_replace = seeds_run.os.replace

        def replace(source: Path, target: Path) -> None:  # os.replace: atomic writes use it too
            if Path(source).name == seeds_run.NEXT_CHECKPOINT:
                calls.append(source)
            if len(calls) == 2:
                raise KeyboardInterrupt
            real_replace(source, target)

        monkeypatch.setattr(seeds_run.os, "replace", replace)
    else:  # killed after the first seed's new checkpoint, before the second's
        real_save = driver.save_run

        def save_run(*args: Any, **kwargs: Any) -> None:
            calls.append(args)
            if len(calls) == 2:
                raise KeyboardInterrupt
            real_save(*args, **kwargs)

        monkeypatch.setattr(driver, "save_run", save_run)
    longer = dict.fromkeys((0, 1), config.replace(run={"total_moves": 2048}))
    with pytest.raises(KeyboardInterrupt):
        train_seeds(longer, pool, **QUIET)
    monkeypatch.undo()
    moves = [int(load_checkpoint(pool / f"seed_{s}")["learner"]["counters"]["moves"]) for s in (0, 1)]
    assert moves == ([2048, 1024] if stage == "after the mark" else [1024, 1024])
    lines: list[str] = []
    train_seeds(longer, pool, progress=False, log=lines.append)
    expected = "finished (seeds [1] replaced)" if stage == "after the mark" else "new checkpoints of seeds [0] were discarded"
    assert any(expected in line for line in lines), lines
    assert [int(load_checkpoint(pool / f"seed_{s}")["learner"]["counters"]["moves"]) for s in (0, 1)] == [2048, 2048]
    assert not list(pool.glob("seed_*/checkpoint.next.pt")) and not (pool / "checkpoints.commit.json").exists()
