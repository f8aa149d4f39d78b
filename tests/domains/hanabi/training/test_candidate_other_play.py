"""Other-Play over a candidate set of learned neural maps (``[rule] symmetries`` naming one, not a group): the
relabelling applies f and sigma as the neural family's convention states, the training games draw from identity + the
maps, a run trains end to end and keeps the set (record and weights) with itself and its exported agent, identity maps
train exactly as self-play, a resumed run equals the uninterrupted one, and bad inputs are refused before anything is
written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch

from eqc.dec_pomdp import CandidateMap, CandidateSet, LearnedMap, NeuralMapOptions, load_candidate_set, transform_logits
from eqc.domains.hanabi.agent.files import SYMMETRIES_FILE, SYMMETRIES_WEIGHTS, export_policy, load_checkpoint
from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.games import TrainingGames
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.xp.neural_maps import slot_transposition
from eqc.symmetrize import CandidatePlay, CandidateRelabelling

CPU = torch.device("cpu")
MINI = {"preset": "mini", "knowledge": "v0_belief"}
QUIET = {"progress": False, "log": lambda _: None}
TIMINGS = ("wall_s", "moves_per_s", "updates_per_s")
HIDDEN = 8


def _map(rules: HanabiRules, sigma: list[int], seed: int, identity: bool = False) -> CandidateMap:
    """A map on ``rules``' observations and moves: f the identity function when ``identity`` (a new map's last layer is
    zero), else a random non-identity f (its last layer drawn too)."""
    generator = torch.Generator().manual_seed(seed)
    phi = CandidateMap(rules.obs_dim, HIDDEN, sigma, generator=generator)
    if not identity:
        with torch.no_grad():
            phi.weights[2].copy_(torch.randn(phi.weights[2].shape, generator=generator) * 0.5)
            phi.biases[2].copy_(torch.randn(phi.biases[2].shape, generator=generator) * 0.5)
    phi.requires_grad_(False)
    return phi


def candidate_file(tmp_path: Path, rules: HanabiRules, *, identity: bool = False, name: str = "maps") -> Path:
    """A saved set of two maps on ``rules``: slot 0 <-> 1 (discards and plays), and the discards of slots 0 -> 1 -> 2 -> 0
    (a 3-cycle, so sigma and its inverse differ); with ``identity`` two maps that are the identity function with the
    identity move permutation."""
    if identity:
        sigmas = [list(range(rules.num_moves))] * 2
    else:
        cycle = list(range(rules.num_moves))
        cycle[0], cycle[1], cycle[2] = 1, 2, 0  # HLE: discard slot s is move s
        sigmas = [slot_transposition(rules, [0, 1]), cycle]
    maps = tuple(LearnedMap(_map(rules, s, seed=k, identity=identity), 0.0, 0.0) for k, s in enumerate(sigmas))
    return CandidateSet(maps, NeuralMapOptions(hidden_size=HIDDEN, steps=0), {"made_by": "test"}).save(tmp_path / f"{name}.json")


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv") as f:
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in csv.DictReader(f)]


def _assert_same_weights(a: Path, b: Path) -> None:
    wa, wb = load_checkpoint(a)["learner"]["modules"], load_checkpoint(b)["learner"]["modules"]
    assert wa.keys() == wb.keys()
    for module in wa:
        assert all(torch.equal(wa[module][k], wb[module][k]) for k in wa[module]), module


# ---------------------------------------------------------------- (c) the relabelling, on hand-made maps
def test_the_relabelling_applies_f_and_sigma_as_the_convention_states(tmp_path: Path) -> None:
    rules = TrainConfig().replace(game=MINI).game.rules()
    found = load_candidate_set(candidate_file(tmp_path, rules))
    play = CandidatePlay(found, CPU)
    phi1, phi2 = (m.map for m in found.maps)
    A, D = rules.num_moves, rules.obs_dim
    g = torch.Generator().manual_seed(0)
    obs = torch.rand(6, D, generator=g)
    legal = torch.rand(6, A, generator=g) < 0.6
    indices = torch.tensor([0, 1, 2, 0, 2, 1])
    r = play.relabelling_indices(indices)
    assert isinstance(r, CandidateRelabelling)
    seen = r.relabel_observations(obs)
    assert torch.equal(seen[indices == 0], obs[indices == 0])  # the identity: the observation itself, bit for bit
    assert torch.equal(seen[indices == 1], phi1(obs)[indices == 1])  # f of the drawn map (run on the whole batch)
    assert torch.equal(seen[indices == 2], phi2(obs)[indices == 2])
    assert not torch.allclose(seen[indices == 1], obs[indices == 1])  # the hand-made f is not the identity
    sigma = {0: torch.arange(A), 1: phi1.move_permutation, 2: phi2.move_permutation}
    agent_legal = r.relabel_legal_actions(legal)
    moves = torch.arange(A)
    for row, k in enumerate(indices.tolist()):
        assert torch.equal(agent_legal[row], legal[row, sigma[k]])  # legal'[a] = legal[sigma(a)]
        one = r.take(torch.full((A,), row))  # this row's draw, once per move
        assert torch.equal(one.to_env_actions(moves), sigma[k])  # the agent's a is played as sigma(a)
        assert torch.equal(one.to_env_actions(one.to_agent_actions(moves)), moves)
    # The agent's greedy choice in its frame, played through sigma, is the transformed policy's (transform_logits):
    # logits'(o)[sigma(a)] = logits(f(o))[a], masked by the real legal moves.
    weight = torch.randn(D, A, generator=g)

    def logits(x: torch.Tensor) -> torch.Tensor:
        return x @ weight

    legal[:, 0] = True  # at least one legal move in every row
    agent_choice = logits(r.relabel_observations(obs)).masked_fill(~r.relabel_legal_actions(legal), float("-inf")).argmax(-1)
    played = r.to_env_actions(agent_choice)
    for row, k in enumerate(indices.tolist()):
        maps = () if k == 0 else ((phi1,) if k == 1 else (phi2,))
        expected = transform_logits(logits, maps, obs, legal)[row].argmax(-1)
        assert int(played[row]) == int(expected)
    assert torch.equal(r.take(torch.tensor([1, 4])).indices, torch.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"must lie in 0\.\.2"):
        play.relabelling_indices(torch.tensor([3]))


def test_the_training_games_draw_from_identity_and_the_maps_and_play_through_sigma(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    rules = config.game.rules()
    path = candidate_file(tmp_path, rules)
    config = config.replace(rule={"objective": "op", "symmetries": str(path)})
    games = TrainingGames(rules, config.rule, config.bootstrap, num_envs=256, seed=1, device=CPU)
    plain = TrainingGames(rules, tiny_config(game=MINI).rule, config.bootstrap, num_envs=256, seed=1, device=CPU)  # self-play
    assert games.other_play is None and games.candidate_play is not None and games.relabelling_order == 3
    drawn = games.element_indices
    assert drawn is not None and drawn.shape == (256, 2)
    assert set(drawn.flatten().tolist()) == {0, 1, 2}
    assert bool(((drawn == 0).sum(-1) >= 1).all())  # keep_identity: one player of each game keeps the identity
    found = load_candidate_set(path)
    sigmas = torch.stack([torch.arange(rules.num_moves), *(m.map.move_permutation for m in found.maps)])  # [3, M]
    env, rows = games.env, torch.arange(256)
    choose = torch.Generator().manual_seed(2)
    for _ in range(12):
        raw_obs, raw_legal = env.observations()[rows, env.state.current], env.legal_move_mask()
        obs, legal, acting = games.acting_view(env.observations(), env.legal_move_mask())
        assert isinstance(acting, CandidateRelabelling)
        k = drawn[rows, env.state.current]
        for index in range(3):
            pick = k == index
            expected = raw_obs[pick] if index == 0 else found.maps[index - 1].map(raw_obs)[pick]
            assert torch.equal(obs[pick], expected)
        assert not bool(legal[:, -1].any())  # the no-op stays illegal for the acting player
        sigma = sigmas[k]
        assert torch.equal(legal[:, :-1], torch.gather(raw_legal, 1, sigma))
        # the acting players choose a random legal move in their frame; the game plays sigma of it
        action = torch.multinomial(legal[:, :-1].float(), 1, generator=choose).squeeze(1)
        games.step(action, acting)
        plain.step(sigma.gather(1, action.view(-1, 1)).squeeze(1), None)
        assert torch.equal(games.env.observations(), plain.env.observations())  # the same real games
        drawn = games.element_indices
    raw_all = env.observations().clone()
    all_obs, _, current, acting = games.player_views(env.observations(), env.legal_move_mask())  # every player's view
    assert isinstance(acting, CandidateRelabelling) and torch.equal(acting.indices, drawn[rows, current])
    for index in range(3):
        pick = drawn == index
        expected = raw_all[pick] if index == 0 else found.maps[index - 1].map(raw_all)[pick]
        assert torch.equal(all_obs[pick], expected)


# ---------------------------------------------------------------- (a) end to end, kept with the run and the agent
def test_a_run_trains_over_a_candidate_set_and_keeps_it_with_the_run_and_the_agent(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    path = candidate_file(tmp_path / "learned", config.game.rules())
    config = config.replace(rule={"objective": "op", "symmetries": str(path)}, run={"total_moves": 1024, "eval_every_moves": 1024})
    summary = train(config, tmp_path / "run", seed=0, device="cpu", **QUIET)
    assert summary.moves == 1024
    original = load_candidate_set(path)
    for where in (tmp_path / "run", export_policy(tmp_path / "run", tmp_path / "agent")):
        record = json.loads((where / SYMMETRIES_FILE).read_text())
        assert record["weights"] == SYMMETRIES_WEIGHTS
        assert (where / SYMMETRIES_WEIGHTS).read_bytes() == path.with_suffix(".safetensors").read_bytes()
        assert {k: v for k, v in record.items() if k != "weights"} == {
            k: v for k, v in json.loads(path.read_text()).items() if k != "weights"}
        kept = load_candidate_set(where / SYMMETRIES_FILE)  # the copy loads on its own
        for a, b in zip(kept.maps, original.maps, strict=True):
            assert all(torch.equal(x, y) for x, y in zip(a.map.state_dict().values(), b.map.state_dict().values(), strict=True))
    path.unlink()
    path.with_suffix(".safetensors").unlink()
    (tmp_path / "agent" / SYMMETRIES_WEIGHTS).unlink()
    policy = load_policy(tmp_path / "agent")  # a record: the policy loads and plays without it
    assert policy.trained_moves == 1024


# ---------------------------------------------------------------- (b) identity maps: exactly self-play
def test_identity_maps_with_the_identity_permutation_train_as_self_play_move_for_move(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI, run={"total_moves": 2048, "eval_every_moves": 1024})
    path = candidate_file(tmp_path, config.game.rules(), identity=True)
    op = config.replace(rule={"objective": "op", "symmetries": str(path)})
    train(config, tmp_path / "sp", seed=5, **QUIET)
    train(op, tmp_path / "op", seed=5, **QUIET)
    rows = _rows(tmp_path / "sp")
    assert [r["moves"] for r in rows] == ["0", "1024", "2048"]
    assert rows == _rows(tmp_path / "op")
    _assert_same_weights(tmp_path / "sp", tmp_path / "op")
    # the control: non-identity maps part from self-play
    other = config.replace(rule={"objective": "op", "symmetries": str(candidate_file(tmp_path, config.game.rules(), name="real"))})
    train(other, tmp_path / "real", seed=5, **QUIET)
    assert _rows(tmp_path / "real") != rows


# ---------------------------------------------------------------- (d) exact resume
@pytest.mark.parametrize("changes", [{}, {"network": {"lstm_layers": 1}, "run": {"algorithm": "ippo"}}], ids=["pqn", "ippo_rnn"])
def test_a_resumed_run_over_a_candidate_set_equals_the_uninterrupted_one(tiny_config, tmp_path: Path, changes: dict) -> None:
    base = tiny_config(game=MINI)
    path = candidate_file(tmp_path, base.game.rules())
    extra = {section: dict(values) for section, values in changes.items()}
    run = {"num_envs": 32, "eval_games": 32, "total_moves": 4096, "eval_every_moves": 1024, **extra.pop("run", {})}
    network = {"hidden_size": 32, **extra.pop("network", {})}
    ppo = {"ppo": {"rollout_steps": 8, "epochs": 1, "minibatches": 2}} if run.get("algorithm") == "ippo" else {}
    whole = base.replace(rule={"objective": "op", "symmetries": str(path)}, run=run, network=network, **ppo)
    train(whole, tmp_path / "whole", seed=3, **QUIET)
    train(whole.replace(run={"total_moves": 2048}), tmp_path / "resumed", seed=3, **QUIET)
    lines: list[str] = []
    summary = train(whole, tmp_path / "resumed", seed=3, progress=False, log=lines.append)
    assert summary.resumed and summary.moves == 4096
    assert not any("new games" in line or "re-seeded" in line for line in lines), lines
    rows = _rows(tmp_path / "whole")
    assert [r["moves"] for r in rows] == ["0", "1024", "2048", "3072", "4096"]
    assert rows == _rows(tmp_path / "resumed")
    _assert_same_weights(tmp_path / "whole", tmp_path / "resumed")
    saved = load_checkpoint(tmp_path / "resumed")["learner"]["games"]["element_indices"]
    assert set(saved.flatten().tolist()) <= {0, 1, 2}


# ---------------------------------------------------------------- (e) bad inputs
def test_bad_candidate_sets_are_refused_before_anything_is_written(tiny_config, tmp_path: Path) -> None:
    config = tiny_config(game=MINI)
    rules = config.game.rules()
    path = candidate_file(tmp_path, rules)
    standard = TrainConfig().game.rules()
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries .*observations of size "
                                          rf"{standard.obs_dim} and {standard.num_moves} moves.*size {rules.obs_dim} and "
                                          rf"{rules.num_moves} moves"):
        config.replace(rule={"objective": "op", "symmetries": str(candidate_file(tmp_path, standard, name="standard"))})
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries names a candidate set.*objective 'gop'.*not a group"):
        config.replace(rule={"objective": "gop", "group": "S3", "symmetries": str(path)})
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries names a candidate set.*only Other-Play.*objective 'sp'"):
        config.replace(rule={"objective": "sp", "symmetries": str(path)})
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries .*no expected-return group file at .*absent\.json"):
        config.replace(rule={"objective": "op", "symmetries": str(tmp_path / "absent.json")})
    good = config.replace(rule={"objective": "op", "symmetries": str(path)}, run={"total_moves": 512})
    weights = path.with_suffix(".safetensors")
    blob = weights.read_bytes()
    weights.write_bytes(blob[:-8] + bytes(8))  # damaged after the config was checked: train checks it again
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries .*'weights_sha256' does not match maps\.safetensors"):
        train(good, tmp_path / "damaged", seed=0, **QUIET)
    assert not (tmp_path / "damaged").exists()
    weights.unlink()
    with pytest.raises(ConfigError, match=r"\[rule\] symmetries .*'weights' must name the weights file beside it"):
        train(good, tmp_path / "missing", seed=0, **QUIET)
    assert not (tmp_path / "missing").exists()


# ---------------------------------------------------------------- R2D2: its replay records the agent's frame
def test_r2d2_records_its_players_frames_and_learns_over_a_candidate_set(tiny_config, tmp_path: Path) -> None:
    from eqc.domains.hanabi.training.learner import LearnerSetup
    from eqc.domains.hanabi.training.r2d2 import R2D2, R2D2Learner

    base = tiny_config(game={**MINI, "sad": "greedy_last_action"})
    config = base.replace(
        rule={"objective": "op", "symmetries": str(candidate_file(tmp_path, base.game.rules()))},
        run={"algorithm": "r2d2", "num_envs": 32, "eval_games": 32},
        network={"hidden_size": 32, "lstm_layers": 1},
        r2d2={"batch_size": 8, "buffer_episodes": 256, "warmup_episodes": 16, "updates_per_step": 1.0, "max_moves": 40})
    with torch.random.fork_rng():
        torch.manual_seed(0)
        learner = R2D2Learner(LearnerSetup.of(config, 0, CPU), config.settings(R2D2))
    games = learner.games
    raw = games.env.observations().clone()
    obs, legal, _, _ = games.player_views(games.env.observations(), games.env.legal_move_mask())
    assert not torch.equal(obs, raw)  # some players drew a map
    slots = learner.replay.current_slots().clone()
    learner.act()  # move 0 of every game, recorded
    assert torch.equal(learner.replay.obs[slots, 0], obs.to(torch.float16))  # f(o) of each player's draw
    assert torch.equal(learner.replay.legal[slots, 0], legal)  # the real legal moves gathered through sigma
    while learner.updates == 0:
        stats = learner.iteration()
    assert torch.isfinite(stats["loss"])
