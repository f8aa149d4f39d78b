"""Other-Play over an expected-return group file (``[rule] symmetries``): checked before any work, drawn from by the
training games (slot relabellings included), kept with the run and the exported agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eqc.dec_pomdp import search_label_permutations
from eqc.domains.hanabi.agent.files import SYMMETRIES_FILE, export_policy
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import label_relabelling, learned_symmetry
from eqc.domains.hanabi.training.games import TrainingGames
from eqc.domains.hanabi.training.run import train
from eqc.groups import symmetric

CPU = torch.device("cpu")
MINI = {"preset": "mini", "knowledge": "v0_belief"}


def group_file(tmp_path: Path, rules: HanabiRules, slot_swap_free: bool = True) -> Path:
    """A learned group of colour S3 x slot S3 on ``rules``: colours free, and the swap of slots 0 and 1 when asked."""
    candidate = label_relabelling({"colour": symmetric(3), "slot": symmetric(3)}, rules)
    free = ([3, 4, 5], [4, 3, 5]) if slot_swap_free else ([3, 4, 5],)

    def returns(permutation: torch.Tensor, measurement: int) -> torch.Tensor:
        return torch.full((2,), 8.0 if permutation.tolist()[3:] in free else 6.0)

    found = search_label_permutations(candidate, returns, tolerance=0.25)
    return found.save(tmp_path / "group.json")


def test_games_draw_from_the_learned_group(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    path = group_file(tmp_path, config.game.rules())
    config = config.replace(rule={"objective": "op", "symmetries": str(path)})
    games = TrainingGames(config.game.rules(), config.rule, config.bootstrap, num_envs=256, seed=1, device=CPU)
    sym = learned_symmetry(path, config.game.rules())
    assert games.other_play is not None and games.other_play.group == sym.group and sym.group.order == 12
    perms = games.other_play.group.elements[games.element_indices].view(-1, 6)
    assert {tuple(p) for p in perms.tolist()} <= {tuple(e) for e in sym.group.elements.tolist()}
    assert any(p[3:] == [4, 3, 5] for p in perms.tolist())  # slots are relabelled too
    env = games.env
    obs, _, _ = games.acting_view(env.observations(), env.legal_move_mask())
    current = env.state.current
    chosen = perms.view(256, 2, 6)[torch.arange(256), current]
    torch.testing.assert_close(obs, sym.observation_rep.act_permutations(env.observations()[torch.arange(256), current], chosen))


def test_config_refuses_bad_symmetries(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    path = group_file(tmp_path, config.game.rules())
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries is read by objective 'op' alone"):
        config.replace(rule={"objective": "sp", "symmetries": str(path)})
    with pytest.raises(ConfigError, match="no expected-return group file"):
        config.replace(rule={"objective": "op", "symmetries": str(tmp_path / "absent.json")})
    other_game = tiny_config()  # the standard game: 5 colours, 5 slots
    with pytest.raises(ConfigError, match="label set 'colour' of size 3"):
        other_game.replace(rule={"objective": "op", "symmetries": str(path)})
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "something else"}))
    with pytest.raises(ConfigError, match="'kind' must be"):
        config.replace(rule={"objective": "op", "symmetries": str(tmp_path / "bad.json")})


def test_run_and_agent_keep_the_group(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    path = group_file(tmp_path, config.game.rules(), slot_swap_free=False)
    config = config.replace(rule={"objective": "op", "symmetries": str(path)}, run={"total_moves": 1024, "eval_every_moves": 1024})
    train(config, tmp_path / "run", seed=0, device="cpu", progress=False, log=lambda _: None)
    kept = json.loads((tmp_path / "run" / SYMMETRIES_FILE).read_text())
    assert kept == json.loads(path.read_text())
    out = export_policy(tmp_path / "run", tmp_path / "agent")
    assert json.loads((out / SYMMETRIES_FILE).read_text()) == kept
