"""Checkpoints: atomic writes, safe loading, clear errors for truncated or foreign files."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.training import checkpoint as ckpt
from eqc.domains.hanabi.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


def _payload(value: float = 1.0) -> dict:
    return {"config": {"run": {}}, "seed": 0, "learner": {"w": torch.full((3,), value)}}


def test_round_trip_describes_itself(tmp_path: Path) -> None:
    save_checkpoint(tmp_path / "checkpoint.pt", _payload())
    data = load_checkpoint(tmp_path)  # a run directory works too
    assert data["format"] == "eqc-hanabi-agent" and data["versions"]["torch"] == torch.__version__
    assert torch.equal(data["learner"]["w"], torch.ones(3))
    assert (tmp_path / "checkpoint.pt").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]  # no temporary file left behind


def test_failed_write_keeps_the_previous_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, _payload(1.0))

    def full_disk(obj: object, f: object) -> None:
        f.write(b"partial")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ckpt.torch, "save", full_disk)
    with pytest.raises(OSError, match="No space"):
        save_checkpoint(path, _payload(2.0))
    monkeypatch.undo()
    assert torch.equal(load_checkpoint(path)["learner"]["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


def test_truncated_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, _payload())
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="not a readable eqc checkpoint"):
        load_checkpoint(path)


def test_foreign_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.pt"
    torch.save({"state_dict": torch.ones(2)}, other)
    with pytest.raises(CheckpointError, match="not an eqc Hanabi checkpoint"):
        load_checkpoint(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(text)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "missing")


class _Payload:
    def __reduce__(self):
        return (exec, ("raise SystemExit('code ran')",))


def test_pickled_code_is_never_executed(tmp_path: Path) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"format": "eqc-hanabi-agent", "x": _Payload()}, path)
    with pytest.raises(CheckpointError, match="holds pickled objects that are not tensors; refused without running them") as info:
        load_checkpoint(path)
    assert "arbitrary code" in str(info.value)


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, {**_payload(), "format_version": 99})
    with pytest.raises(CheckpointError, match="format version 99"):
        load_checkpoint(path)


# ---------------------------------------------------------------- resuming on another kind of device
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
    assert ckpt.restore_generators({"explore": target}, {"explore": saved.get_state()}, "cpu") is None
    assert torch.equal(target.get_state(), saved.get_state())


def test_another_device_type_reseeds_from_the_saved_states() -> None:
    states = _cuda_states("explore", "env")
    gens = {"explore": torch.Generator(), "env": torch.Generator()}
    note = ckpt.restore_generators(gens, states, "cuda:0")
    assert "cuda:0" in note and "explore, env" in note and "re-seeded" in note
    for name, gen in gens.items():
        assert torch.equal(gen.get_state(), torch.Generator().manual_seed(ckpt.seed_from_state(states[name])).get_state())
    assert ckpt.seed_from_state(states["explore"]) != ckpt.seed_from_state(states["env"])
    assert ckpt.seed_from_state(states["env"]) == ckpt.seed_from_state(states["env"].clone())  # deterministic


def test_a_cpu_checkpoint_resumed_on_cuda_reseeds_instead_of_failing() -> None:
    cpu_state = torch.Generator().manual_seed(3).get_state()  # 5056 bytes
    fake = FakeCudaGenerator()
    note = ckpt.restore_generators({"learn": fake}, {"learn": cpu_state}, "cpu")
    assert fake.seed == ckpt.seed_from_state(cpu_state) and "cuda:0" in note
    same = FakeCudaGenerator()
    assert ckpt.restore_generators({"learn": same}, {"learn": _cuda_states("learn")["learn"]}, "cuda:1") is None  # type, not index
    assert same.seed is None and same.state.numel() == CUDA_STATE_BYTES


def test_a_learner_records_its_device_and_resumes_a_cuda_checkpoint_on_the_cpu(tiny_config) -> None:
    from eqc.domains.hanabi.training.pqn import PQNLearner

    config = tiny_config(rule={"objective": "op"})
    source = PQNLearner(config, seed=0, device=torch.device("cpu"))
    source.iteration()
    state = source.state_dict()
    assert state["device"] == "cpu"
    state["device"] = "cuda:0"  # as a run on a GPU would have written it
    state["generators"] = _cuda_states(*state["generators"])
    resumed = [PQNLearner(config, seed=0, device=torch.device("cpu")) for _ in range(2)]
    notes = [learner.load_state_dict(state) for learner in resumed]
    assert notes[0] == notes[1] and "explore, learn, relabel, env" in notes[0]
    a, b = (learner.generators() for learner in resumed)
    assert all(torch.equal(a[name].get_state(), b[name].get_state()) for name in a)  # deterministic
    assert resumed[0].moves_played == source.moves_played
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
