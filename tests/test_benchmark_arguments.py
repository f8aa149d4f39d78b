"""The benchmark scripts refuse bad arguments with a usage error naming the flag, before any benchmark runs (and
before the hour a GPU benchmark takes, for a ``--record`` file it could not write at the end)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEEDS_CASES = [
    (["--seeds", "0"], "argument --seeds: must be an integer in [1, 64], got 0"),
    (["--seeds", "10000"], "argument --seeds: must be an integer in [1, 64], got 10000"),
    (["--rounds", "0"], "argument --rounds:"),
    (["--iterations", "-1"], "argument --iterations:"),
    (["--threads", "0"], "argument --threads:"),
    (["--device", "gpu"], "argument --device:"),
    (["--precision", "auto"], "argument --precision: invalid choice: 'auto'"),
    (["--config", "no_such_config"], "--config 'no_such_config':"),
    (["--config", "iql"], "--config 'iql': [run] algorithm must be 'pqn'"),
]


@pytest.mark.parametrize(("argv", "message"), SEEDS_CASES)
def test_seeds_benchmark_refuses_bad_arguments(argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    seeds = _script("seeds", monkeypatch)
    with pytest.raises(SystemExit) as info:
        seeds.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and message in err, err


def test_gpu_benchmark_refuses_a_record_it_could_not_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    gpu = _script("gpu", monkeypatch)
    for record, message in ((tmp_path, "is a directory"), (tmp_path / "missing" / "R.md", "its folder does not exist")):
        with pytest.raises(SystemExit) as info:
            gpu.main(["--device", "cpu", "--record", str(record)])
        assert info.value.code == 2 and message in capsys.readouterr().err
