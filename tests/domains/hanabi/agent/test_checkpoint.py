"""Checkpoints: atomic writes, safe loading, clear errors for truncated or foreign files."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent import checkpoint as ckpt
from eqc.domains.hanabi.agent.checkpoint import CheckpointError, load_checkpoint, save_checkpoint


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
