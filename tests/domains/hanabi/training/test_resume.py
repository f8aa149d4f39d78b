"""Resuming a run's generators on another device type (training.resume), and a learner that does so, its games in
progress moved as they are (exact resume on the same device: test_exact_resume)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent.files import load_checkpoint, save_checkpoint
from eqc.domains.hanabi.training.resume import restore_generators, seed_from_state

CUDA_STATE_BYTES = 16  # a CUDA generator's state (Philox seed and offset); a CPU one's is 5056 bytes


class FakeCudaGenerator:
    """Stands in for ``torch.Generator(device="cuda")``: refuses a state of another size, as CUDA does."""

    device = torch.device("cuda", 0)

    def __init__(self) -> None:
        self.state, self.seed = torch.zeros(CUDA_STATE_BYTES, dtype=torch.uint8), None

    def set_state(self, state: torch.Tensor) -> None:
        if state.numel() != CUDA_STATE_BYTES:
            raise RuntimeError(f"RNG state is wrong size: {state.numel()}")
        self.state = state

    def manual_seed(self, seed: int) -> FakeCudaGenerator:
        self.seed = seed
        return self


def _cuda_states(*names: str) -> dict[str, torch.Tensor]:
    return {name: torch.arange(k, k + CUDA_STATE_BYTES, dtype=torch.uint8) for k, name in enumerate(names)}


def test_a_cuda_state_does_not_fit_a_cpu_generator() -> None:
    """The failure the rule avoids (negative control)."""
    with pytest.raises(RuntimeError):
        torch.Generator().set_state(torch.zeros(CUDA_STATE_BYTES, dtype=torch.uint8))


def test_same_device_type_restores_exactly() -> None:
    saved = torch.Generator().manual_seed(5)
    torch.rand(3, generator=saved)  # not a fresh stream
    target = torch.Generator().manual_seed(9)
    assert restore_generators({"explore": target}, {"explore": saved.get_state()}, "cpu") is None
    assert torch.equal(target.get_state(), saved.get_state())


def test_another_device_type_reseeds_from_the_saved_states() -> None:
    states = _cuda_states("explore", "env")
    gens = {"explore": torch.Generator(), "env": torch.Generator()}
    note = restore_generators(gens, states, "cuda:0")
    assert "cuda:0" in note and "explore, env" in note and "re-seeded" in note
    for name, gen in gens.items():
        assert torch.equal(gen.get_state(), torch.Generator().manual_seed(seed_from_state(states[name])).get_state())
    assert seed_from_state(states["explore"]) != seed_from_state(states["env"])
    assert seed_from_state(states["env"]) == seed_from_state(states["env"].clone())  # deterministic


def test_a_cpu_checkpoint_resumed_on_cuda_reseeds_instead_of_failing() -> None:
    cpu_state = torch.Generator().manual_seed(3).get_state()  # 5056 bytes
    fake = FakeCudaGenerator()
    note = restore_generators({"learn": fake}, {"learn": cpu_state}, "cpu")
    assert fake.seed == seed_from_state(cpu_state) and "cuda:0" in note
    same = FakeCudaGenerator()
    assert restore_generators({"learn": same}, {"learn": _cuda_states("learn")["learn"]}, "cuda:1") is None  # type, not index
    assert same.seed is None and same.state.numel() == CUDA_STATE_BYTES


def test_a_learner_records_its_device_and_resumes_a_cuda_checkpoint_on_the_cpu(tiny_config) -> None:
    from eqc.domains.hanabi.training.learner import LearnerSetup
    from eqc.domains.hanabi.training.pqn import PQN, PQNLearner

    config = tiny_config(rule={"objective": "op"})
    source = PQNLearner(LearnerSetup.of(config, 0, torch.device("cpu")), config.settings(PQN))
    source.iteration()
    state = source.state_dict()
    assert state["device"] == "cpu"
    state["device"] = "cuda:0"  # as a run on a GPU would have written it
    state["generators"] = _cuda_states(*state["generators"])
    resumed = [PQNLearner(LearnerSetup.of(config, 0, torch.device("cpu")), config.settings(PQN)) for _ in range(2)]
    notes = [learner.load_state_dict(state) for learner in resumed]
    assert notes[0] == notes[1] and "explore, learn, relabel, env" in notes[0]
    a, b = (learner.generators() for learner in resumed)
    assert all(torch.equal(a[name].get_state(), b[name].get_state()) for name in a)  # deterministic
    assert resumed[0].moves_played == source.moves_played
    assert "the games in progress continue" in notes[0]
    saved, moved = state["games"], resumed[0].games  # the game state moves across devices as it is; only generators re-seed
    assert all(torch.equal(saved["env"][k], v) for k, v in moved.env.state_dict().items())
    assert moved.element_indices is not None and torch.equal(saved["element_indices"], moved.element_indices)
    resumed[0].iteration()


def test_train_says_so_in_the_log_when_it_reseeds(tmp_path: Path, tiny_config) -> None:
    from eqc.domains.hanabi.training.run import train

    config = tiny_config(run={"total_moves": 1024, "eval_every_moves": 1024, "eval_games": 16})
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    data = load_checkpoint(tmp_path)
    data["learner"]["device"] = "cuda:0"
    data["learner"]["generators"] = _cuda_states(*data["learner"]["generators"])
    save_checkpoint(tmp_path / "checkpoint.pt", {k: data[k] for k in ("config", "seed", "learner", "metrics")})
    lines: list[str] = []
    train(config.replace(run={"total_moves": 2048}), tmp_path, seed=0, progress=False, log=lines.append)
    assert any("written on cuda:0" in line and "re-seeded" in line for line in lines), lines


def _damage(data: dict, how: str) -> None:
    learner = data["learner"]
    if how == "negative moves":
        learner["counters"]["moves"] = -5
    elif how == "moves far beyond the log":
        learner["counters"]["moves"] = 10**12
    elif how == "moves not a whole step":
        learner["counters"]["moves"] += 1
    elif how == "NaN weights":
        module = next(iter(learner["modules"].values()))
        weight = next(k for k, v in module.items() if v.is_floating_point())
        module[weight] = torch.full_like(module[weight], float("nan"))
    elif how == "weights of another shape":
        module = next(iter(learner["modules"].values()))
        weight = next(k for k, v in module.items() if v.is_floating_point())
        module[weight] = module[weight][..., :1].clone()
    elif how == "no optimizer state":
        del learner["optimizer"]
    elif how == "games of another size":
        learner["games"]["hinted"] = learner["games"]["hinted"][:1].clone()


DAMAGES = {
    "negative moves": "its counter 'moves' must be an integer in \\[0, 2\\*\\*62\\), got -5",
    "moves far beyond the log": "its move counter 1,000,000,000,000 is not where its run stood",
    "moves not a whole step": "is not where its run stood: a multiple of 16",
    "NaN weights": "hold NaN or infinite values; a run never saves a diverged state",
    "weights of another shape": "its learner state cannot be resumed by this run's learner",
    "no optimizer state": "its learner state cannot be resumed by this run's learner \\(missing entry 'optimizer'\\)",
    "games of another size": "its learner state cannot be resumed by this run's learner \\(the checkpoint's games\\['hinted'\\]",
}


@pytest.mark.parametrize("how", list(DAMAGES))
def test_a_learner_state_that_cannot_be_resumed_is_refused_naming_the_file_before_anything_is_written(
        tmp_path: Path, tiny_config, how: str) -> None:
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.training.run import train

    config = tiny_config(run={"total_moves": 1024, "eval_every_moves": 1024, "eval_games": 16, "num_envs": 16})
    train(config, tmp_path, seed=0, progress=False, log=lambda _: None)
    data = load_checkpoint(tmp_path)
    _damage(data, how)
    save_checkpoint(tmp_path / "checkpoint.pt", {k: data[k] for k in ("config", "seed", "learner", "metrics")})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    with pytest.raises(CheckpointError, match=f"^{tmp_path / 'checkpoint.pt'}: .*{DAMAGES[how]}"):
        train(config.replace(run={"total_moves": 2048}), tmp_path, seed=0, progress=False, log=lambda _: None)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before  # config.json untouched
