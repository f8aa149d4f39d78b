"""Convention codes and the code lottery's matrix; the averaged agent (the symmetrizer's formula over a fixed set)."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.xp.codes import agent_codes, same_code_matrix
from eqc.domains.hanabi.xp.relabelled import AveragedAgent
from eqc.evaluation import compare_pools

AGENT = "results/touched/agents/sp/stream_1/slots_012"


def test_same_code_matrix_makes_the_rate_a_pool_mean() -> None:
    codes = [1, 1, 2, 2, 1, 1, 1, 1]  # pool a: agents 0-3 (rate 4/12), pool b: agents 4-7 (rate 1)
    m = same_code_matrix(codes)
    assert m.shape == (8, 8) and torch.equal(m, m.T) and bool((m.diagonal() == 1).all())
    result = compare_pools(m, [4, 5, 6, 7], [0, 1, 2, 3], paired=True)
    assert result.difference == pytest.approx(1 - 4 / 12)


def test_agent_codes_are_well_formed() -> None:
    torch.set_num_threads(1)
    policy = load_policy(AGENT, precision="fp32")
    codes = agent_codes(policy, games=40)
    assert codes.slot_code in (-1, 0, 1, 2) and len(codes.rank_hint_code) == 3
    assert all(c in (-1, 0, 1, 2) for c in codes.rank_hint_code) and 0 <= codes.self_play <= 9
    with pytest.raises(TypeError, match="TrainedPolicy"):
        agent_codes("not a policy")  # type: ignore[arg-type]


def _observations(rules, games: int = 64, steps: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    env = HanabiBatch(games, rules, seed=3, auto_reset=True)
    env.reset()
    rng = torch.Generator().manual_seed(0)
    for _ in range(steps):
        env.step(torch.multinomial(env.legal_move_mask().float(), 1, generator=rng).squeeze(1))
    obs = env.observations()[torch.arange(games), env.state.current]
    legal = torch.cat([env.legal_move_mask(), torch.zeros(games, 1, dtype=torch.bool)], dim=1)
    return obs, legal


def test_averaged_agent_over_the_group_is_the_symmetrizer_and_over_a_subset_is_not_equivariant() -> None:
    torch.set_num_threads(1)
    plain, symmetrized = load_policy(AGENT, precision="fp32"), load_policy(AGENT, symmetrize="S3", precision="fp32")
    sym = colour_symmetry(colour_group("S3", 3), plain.rules)
    obs, legal = _observations(plain.rules)
    group = AveragedAgent(plain.agent, sym, tuple(range(6)))
    torch.testing.assert_close(group.step(obs, legal)[0], symmetrized.agent.step(obs, legal)[0], atol=1e-4, rtol=1e-4)
    swaps = [k for k, e in enumerate(sym.group.elements.tolist()) if e in ([1, 0, 2], [2, 1, 0])]
    subset = AveragedAgent(plain.agent, sym, (0, *swaps))
    q = subset.step(obs, legal)[0]
    differs = False
    for g in range(1, 6):
        moved = subset.step(sym.observation_rep.act(obs, g), torch.cat([sym.action_rep.act(legal[:, :-1], g), legal[:, -1:]], 1))[0]
        expected = torch.cat([sym.action_rep.act(q[:, :-1], g), q[:, -1:]], 1)
        differs |= not torch.allclose(moved, expected, atol=1e-4)
    assert differs
    with pytest.raises(ValueError, match="distinct rows"):
        AveragedAgent(plain.agent, sym, (0, 0))
