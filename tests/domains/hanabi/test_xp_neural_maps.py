"""The neural maps against shipped Mini-Hanabi agents, at smoke scale: the trainer runs end to end through the CLI,
writes a candidate set that loads, and leaves the pool's weights as they were. Nothing is asserted about how well
a few steps on a few games learn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.dec_pomdp import load_candidate_set
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.xp.neural_maps import AgentLogits, slot_transposition

AGENTS = [Path("results/colour/agents/touched/slots_012"), Path("results/colour/agents/touched/slots_021")]


def test_a_slot_transposition_swaps_the_named_moves() -> None:
    rules = load_policy(AGENTS[0]).rules  # Mini-Hanabi: hand 3, moves 0-2 discard, 3-5 play
    assert slot_transposition(rules, (0, 2))[:6] == [2, 1, 0, 5, 4, 3]
    assert slot_transposition(rules, (0, 1), ["play"])[:6] == [0, 1, 2, 4, 3, 5]
    with pytest.raises(ValueError, match="slots must name two different"):
        slot_transposition(rules, (1, 1))
    with pytest.raises(ValueError, match=r"slots\[1\] must be in"):
        slot_transposition(rules, (0, 3))
    with pytest.raises(ValueError, match="kinds must name"):
        slot_transposition(rules, (0, 1), ["hint"])


def test_agent_logits_are_the_q_values_over_moves_at_a_temperature() -> None:
    policy = load_policy(AGENTS[0])
    obs = torch.zeros(2, policy.obs_dim)
    q, _ = policy.agent.step(obs, None)
    assert torch.allclose(AgentLogits(policy, 0.5)(obs), q[:, : policy.num_moves] / 0.5)


def test_neural_cli_writes_a_loadable_candidate_set_and_leaves_the_pool_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = [{k: v.clone() for k, v in load_policy(a).agent.state_dict().items()} for a in AGENTS]
    out = tmp_path / "maps.json"
    argv = ["hanabi", "symmetries", "neural", *[x for a in AGENTS for x in ("--pool", str(a))], "--swap-slots", "0", "2",
            "--swap-slots", "0", "1", "--moves", "play", "--steps", "2", "--games", "4", "--measure-games", "4",
            "--hidden-size", "8", "--temperature", "0.2", "--invertibility", "0.01", "--out", str(out)]
    assert main(argv) == 0
    assert "a candidate set of 2 map(s), not a group" in capsys.readouterr().out
    found = load_candidate_set(out)
    assert [m.map.move_permutation.tolist()[:6] for m in found.maps] == [[0, 1, 2, 5, 4, 3], [0, 1, 2, 4, 3, 5]]
    assert all(len(m.objective) == 2 for m in found.maps) and found.options.invertibility == 0.01
    assert json.loads(out.read_text())["context"]["swap_slots"] == [[0, 2], [0, 1]]
    for a, b in zip(AGENTS, before, strict=True):
        assert all(torch.equal(v, b[k]) for k, v in load_policy(a).agent.state_dict().items())


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], *fragments: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert all(f in err for f in fragments), err


def test_neural_cli_refuses_bad_options_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["hanabi", "symmetries", "neural", "--pool", str(AGENTS[0])]
    out = ["--out", str(tmp_path / "m.json")]
    _usage_error(capsys, [*base, "--swap-slots", "0", "3", *out], "--swap-slots", "0..2")
    _usage_error(capsys, [*base, "--swap-slots", "1", "1", *out], "--swap-slots", "twice")
    _usage_error(capsys, [*base, "--swap-slots", "0", "1", "--out", str(tmp_path / "m.txt")], "--out", ".json")
    _usage_error(capsys, [*base, "--swap-slots", "0", "1", "--cross-play", *out], "--cross-play", "at least 2")
    _usage_error(capsys, [*base, "--swap-slots", "0", "1", "--closure-probability", "0.9", *out], "at most 1")
    _usage_error(capsys, [*base, "--swap-slots", "0", "1", "--temperature", "0", *out], "--temperature")
    assert not any(tmp_path.iterdir())
