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
    episodes, mean = games.take_episode_stats(0)
    assert episodes == ended_total > 0 and mean == pytest.approx(score_total / ended_total)
    assert games.take_episode_stats(0)[0] == 0  # counted once
    assert all(bool((r <= 1).all()) for r in rewards[False])  # unshaped: the game's own rewards, at most 1 per move


def test_joined_games_play_each_seeds_games_bit_for_bit(tiny_config) -> None:
    """Two seeds' games (Other-Play, the touched-slot convention, each seed its own slots) joined into one batch play,
    given the same moves, what each seed's games play alone: views, rewards, relabellings, episode counts and saved
    state (``games_state`` of a block is the seed's own, so its checkpoint is unchanged)."""
    from eqc.domains.hanabi.training.resume import games_state

    def seed_games(seed: int, slots: list[int]) -> TrainingGames:
        return games_of(tiny_config, 8, seed=seed, rule={"objective": "op"},
                        bootstrap={"convention": "colour_to_touched_slot", "slots": slots, "bonus": 3.0, "moves": 10**6})

    slots = {0: [0, 1, 2, 3, 4], 1: [4, 3, 2, 1, 0]}
    alone = [seed_games(seed, s) for seed, s in slots.items()]
    joined = TrainingGames.joined([seed_games(seed, s) for seed, s in slots.items()])
    assert joined.blocks == 2 and joined.num_envs == 16
    assert vars(joined).keys() == vars(alone[0]).keys()  # joined sets every attribute the constructor sets
    buffers = [(g.env.observations(), g.env.legal_move_mask()) for g in (*alone, joined)]
    moves = torch.Generator().manual_seed(0)
    for _ in range(200):
        views = [g.acting_view(*b) for g, b in zip((*alone, joined), buffers, strict=True)]
        assert torch.equal(views[2][0], torch.cat([views[0][0], views[1][0]]))
        action = [torch.multinomial(legal.float(), 1, generator=moves).squeeze(1) for _, legal, _ in views[:2]]
        steps = [g.step(a, v[2], shaping=True) for g, a, v in zip(alone, action, views[:2], strict=True)]
        step = joined.step(torch.cat(action), views[2][2], shaping=True)
        assert torch.equal(step.reward, torch.cat([s.reward for s in steps]))
        assert torch.equal(step.ended, torch.cat([s.ended for s in steps]))
    for k, games in enumerate(alone):
        state, want = games_state(joined, k), games_state(games, 0)
        assert torch.equal(state["element_indices"], want["element_indices"]) and torch.equal(state["hinted"], want["hinted"])
        assert all(torch.equal(state["env"][n], want["env"][n]) for n in want["env"])
        assert joined.generators(k)["relabel"].get_state().equal(games.generators(0)["relabel"].get_state())
        assert joined.take_episode_stats(k) == games.take_episode_stats(0) and games_state(joined, k)["episodes"] == 0
    assert not torch.equal(games_state(joined, 0)["env"]["deck"], games_state(alone[1], 0)["env"]["deck"])  # the blocks differ


def test_joined_games_refuse_seeds_that_differ_beyond_their_slots(tiny_config) -> None:
    a = games_of(tiny_config, 8, seed=0, bootstrap={"convention": "colour_to_slot", "slots": [0, 1, 2, 3, 4], "bonus": 1.0})
    b = games_of(tiny_config, 8, seed=1, bootstrap={"convention": "colour_to_slot", "slots": [0, 1, 2, 3, 4], "bonus": 2.0})
    with pytest.raises(ValueError, match=r"\[bootstrap\] \(but for its slots\)"):
        TrainingGames.joined([a, b])
    op, gop = games_of(tiny_config, 8, rule={"objective": "op"}), games_of(tiny_config, 8, seed=1, rule={"objective": "gop", "group": "S5"})
    assert op.relabelling_order == gop.relabelling_order == 120  # as many relabellings, another [rule]: refused all the same
    with pytest.raises(ValueError, match=r"\[rule\] and \[bootstrap\]"):
        TrainingGames.joined([op, gop])
    with pytest.raises(ValueError, match="none of them joined already"):
        TrainingGames.joined([TrainingGames.joined([games_of(tiny_config, 8, seed=2), games_of(tiny_config, 8, seed=3)]), a])
    with pytest.raises(ValueError, match=r"block must be in \[0, 0\], got 1"):
        a.take_episode_stats(1)
