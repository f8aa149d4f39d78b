"""``[run] compile``: a compiled training run is the eager run (the same games; the compiled acting forward rounds
floats its own way, so losses and weights agree to float rounding), and a device it cannot compile for is refused
before anything is built. The runs compile (about 20 s each on one CPU thread): marked slow."""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from eqc.domains.hanabi.agent.files import load_checkpoint
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learners import make_learner
from eqc.domains.hanabi.training.run import train

TIMINGS = ("wall_s", "moves_per_s", "updates_per_s")
RUN = {"total_moves": 4096, "eval_every_moves": 1024}
#: Feed-forward PQN (every part of the acting step compiled) and recurrent PQN under Other-Play (the games compiled,
#: the LSTM eager).
CASES: dict[str, dict[str, dict[str, Any]]] = {
    "pqn": {"network": {"hidden_size": 32, "mlp_layers": 1}, "run": {**RUN, "num_envs": 32, "eval_games": 32}},
    "pqn_rnn_op": {"network": {"hidden_size": 32, "mlp_layers": 1, "lstm_layers": 1}, "run": {**RUN, "num_envs": 16, "eval_games": 16},
                   "rule": {"objective": "op"}},
}


def _config(tiny_config: Callable[..., TrainConfig], name: str, compile: bool) -> TrainConfig:
    changes = CASES[name]
    return tiny_config(**{**changes, "run": {**changes["run"], "compile": compile}})


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv") as f:
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in csv.DictReader(f)]


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_a_compiled_run_equals_the_eager_one(tmp_path: Path, tiny_config: Callable[..., TrainConfig], name: str) -> None:
    """Four evaluations' rows: every count and score equal, the losses to 1e-5; the weights allclose (rtol 1e-5)."""
    for compile in (False, True):
        train(_config(tiny_config, name, compile), tmp_path / str(compile), seed=0, progress=False, log=lambda _: None)
    eager, compiled = _rows(tmp_path / "False"), _rows(tmp_path / "True")
    assert [row["moves"] for row in eager] == ["0", "1024", "2048", "3072", "4096"]
    assert len(compiled) == len(eager)
    for want, got in zip(eager, compiled, strict=True):
        assert {k: v for k, v in got.items() if k != "loss"} == {k: v for k, v in want.items() if k != "loss"}
        assert math.isclose(float(got["loss"]), float(want["loss"]), rel_tol=1e-5) or want["loss"] == got["loss"] == "nan"
    want_weights, got_weights = (load_checkpoint(tmp_path / str(c))["learner"]["modules"] for c in (False, True))
    for module, tensors in want_weights.items():
        for key, tensor in tensors.items():
            torch.testing.assert_close(got_weights[module][key], tensor, rtol=1e-5, atol=1e-7)


def test_compile_on_a_device_it_cannot_compile_for_is_refused_before_the_games(tiny_config: Callable[..., TrainConfig]) -> None:
    config = _config(tiny_config, "pqn", True)
    with pytest.raises(ValueError, match="compile needs a 'cpu' or 'cuda' device, got 'meta'"):
        make_learner(config, seed=0, device=torch.device("meta"))


def test_compile_is_a_bool_key(tiny_config: Callable[..., TrainConfig]) -> None:
    assert not tiny_config().run.compile
    with pytest.raises(ConfigError, match=r"\[run\]: key 'compile' must be bool, got int 1"):
        tiny_config(run={"compile": 1})


def test_a_run_that_cannot_compile_is_refused_before_its_directory(tmp_path: Path, tiny_config: Callable[..., TrainConfig],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A cpu without a C++ compiler: ``train`` names it before it makes the run directory or measures anything."""
    import torch._inductor.cpp_builder as builder

    def missing() -> str:
        raise RuntimeError("no compiler")

    monkeypatch.setattr(builder, "get_cpp_compiler", missing)
    with pytest.raises(RuntimeError, match="compile on the cpu needs a C\\+\\+ compiler"):
        train(_config(tiny_config, "pqn", True), tmp_path / "run", seed=0, progress=False, log=lambda _: None)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_run_may_switch_compile_on_resume(tmp_path: Path, tiny_config: Callable[..., TrainConfig]) -> None:
    """``compile`` changes how the acting step runs, not what is learned: a run started eagerly goes on compiled."""
    config = _config(tiny_config, "pqn", False)
    train(config.replace(run={"total_moves": 2048}), tmp_path, seed=0, progress=False, log=lambda _: None)
    summary = train(config.replace(run={"compile": True}), tmp_path, seed=0, progress=False, log=lambda _: None)
    assert summary.resumed and summary.moves == 4096 and load_checkpoint(tmp_path)["config"]["run"]["compile"] is True


@pytest.fixture
def broken_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``g++`` that answers ``--version`` as GCC does and fails to compile anything, found as inductor's compiler."""
    import torch._inductor.cpp_builder as builder

    from eqc._compile import _compiler_problem

    fake = tmp_path / "bin" / "g++"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "g++ (GCC) 12.2.0"; exit 0; fi\n'
                    'echo "fake: cannot compile" >&2\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setattr(builder, "get_cpp_compiler", lambda: str(fake))
    _compiler_problem.cache_clear()
    yield fake
    _compiler_problem.cache_clear()


def test_a_compiler_that_answers_but_cannot_compile_is_refused_naming_it(tmp_path: Path, tiny_config: Callable[..., TrainConfig],
                                                                        broken_compiler: Path) -> None:
    name = re.escape(str(broken_compiler))
    with pytest.raises(RuntimeError, match=f"'{name}' failed to compile a one-line program \\(exit 1: fake: cannot compile\\): set CXX"):
        train(_config(tiny_config, "pqn", True), tmp_path / "run", seed=0, progress=False, log=lambda _: None)
    assert not (tmp_path / "run").exists()


def test_pool_and_reproduce_refuse_a_broken_compiler_before_any_work(tmp_path: Path, tiny_config: Callable[..., TrainConfig],
                                                                     broken_compiler: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eqc.cli import main

    config = tmp_path / "compiled.toml"
    config.write_text(_config(tiny_config, "pqn", True).to_toml())
    for argv in (["hanabi", "pool", "--config", str(config), "--seeds", "0-1", "--no-ray", "--out", str(tmp_path / "pool")],
                 ["hanabi", "reproduce", "table1", "--scale", "smoke", "--set", "run.compile=true", "--no-ray",
                  "--out", str(tmp_path / "table")]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and "argument --device: [run] compile = true: compile on the cpu needs a working C++ compiler" in err
    assert not (tmp_path / "pool").exists() and not (tmp_path / "table").exists()
