"""The acting half of a learner: relabelled views, moves mapped back, relabellings redrawn per episode, shaping."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.training.config import BootstrapConfig, RuleConfig
from eqc.domains.hanabi.training.games import TrainingGames

CPU = torch.device("cpu")


def games_of(tiny_config, num_envs: int, seed: int = 0, **changes: dict) -> TrainingGames:
    config = tiny_config(**changes)
    return TrainingGames(config.game.rules(), config.rule, config.bootstrap, num_envs=num_envs, seed=seed, device=CPU)


@pytest.mark.parametrize(("rule", "group"), [("op", "S5"), ("gop", "C5"), ("gop", "D10")])
def test_acting_player_sees_and_plays_in_its_relabelled_game(tiny_config, rule: str, group: str) -> None:
    games = games_of(tiny_config, 16, seed=3, rule={"objective": rule} | ({"group": group} if rule == "gop" else {}))
    sym = colour_symmetry(colour_group(group), games.env.rules)
    perms = games.other_play.group.elements[games.element_indices]
    assert all(p in sym.group for p in perms.view(-1, 5))  # elements of the rule's group
    kept = (perms == torch.arange(5)).all(-1)  # [B, P]: one player per game keeps the identity (VDN's Other-Play)
    assert bool(kept.any(-1).all())
    env = games.env
    obs, legal, acting_relabelling = games.acting_view(env.observations(), env.legal_move_mask())
    current = env.state.current
    raw_obs = env.observations()[torch.arange(16), current]
    acting = perms[torch.arange(16), current]
    torch.testing.assert_close(obs, sym.observation_rep.act_permutations(raw_obs, acting))
    expected_legal = sym.action_rep.act_permutations(env.legal_move_mask(), acting)
    assert torch.equal(legal[:, :-1], expected_legal) and not bool(legal[:, -1].any())
    # A move chosen in the relabelled game is played as g^-1 of it in the real game.
    choice = legal.float().argmax(-1)
    played = acting_relabelling.to_env_actions(choice)
    assert torch.equal(sym.action_rep.act_index_permutations(played, acting), choice)
    before = env.state.moves_made.clone()
    step = games.step(choice, acting_relabelling)
    assert bool((env.state.moves_made == before + 1).logical_or(step.ended).all())


def test_relabellings_are_redrawn_only_for_games_that_ended(tiny_config) -> None:
    games = games_of(tiny_config, 64, rule={"objective": "op"})
    obs_buffer, legal_buffer = games.env.observations(), games.env.legal_move_mask()
    redrawn = 0
    for _ in range(40):
        before = games.element_indices.clone()
        _, legal, acting = games.acting_view(obs_buffer, legal_buffer)
        ended = games.step(legal.float().argmax(-1), acting).ended
        unchanged = (games.element_indices == before).all(-1)
        assert bool(unchanged[~ended].all())
        redrawn += int((~unchanged).sum())
    assert redrawn > 0


def test_player_views_give_the_waiting_players_only_the_no_op(tiny_config) -> None:
    games = games_of(tiny_config, 8, rule={"objective": "op"})
    obs, legal, current, acting = games.player_views(games.env.observations(), games.env.legal_move_mask())
    assert obs.shape[:2] == legal.shape[:2] == (8, 2) and acting is not None
    waiting = 1 - current
    assert bool(legal[torch.arange(8), waiting, -1].all()) and not bool(legal[torch.arange(8), waiting, :-1].any())
    assert not bool(legal[torch.arange(8), current, -1].any()) and bool(legal[torch.arange(8), current, :-1].any(-1).all())


def test_episodes_are_counted_once_and_unshaped_rewards_are_the_games(tiny_config) -> None:
    bootstrap = BootstrapConfig(convention="colour_to_slot", slots=(0, 1, 2, 3, 4), bonus=5.0)
    games = TrainingGames(tiny_config().game.rules(), RuleConfig(), bootstrap,
                          num_envs=32, seed=0, device=CPU)
    obs_buffer, legal_buffer = games.env.observations(), games.env.legal_move_mask()
    rewards = {True: [], False: []}
    ended_total, score_total = 0, 0
    for t in range(400):
        _, legal, acting = games.acting_view(obs_buffer, legal_buffer)
        shaping = t % 2 == 0
        step = games.step(legal.float().argmax(-1), acting, shaping=shaping)
        ended_total += int(step.ended.sum())
        score_total += int(torch.where(step.ended, games.env.state.final_score, 0).sum())
        rewards[shaping].append(step.reward)
    episodes, mean = games.take_episode_stats()
    assert episodes == ended_total > 0 and mean == pytest.approx(score_total / ended_total)
    assert games.take_episode_stats()[0] == 0  # counted once
    assert all(bool((r <= 1).all()) for r in rewards[False])  # unshaped: the game's own rewards, at most 1 per move
