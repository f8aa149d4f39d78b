import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, symmetric
from eqc.symmetrize import OtherPlay

colour = Labels("colour", 5)
OBS = Layout([Block("hand", 3, colour), Block("hint", colour), Block("tokens", 2)])
ACT = Layout([Block("play", 3), Block("hint_colour", colour)])
SYM = Symmetry(symmetric(5), acts_on=colour, observation=OBS, action=ACT)


def test_seeded_and_reproducible():
    a = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(7)).sample(4, 2)
    b = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(7)).sample(4, 2)
    assert torch.equal(a.perms, b.perms) and a.perms.shape == (4, 2, 5)


def test_relabelling_matches_the_representation_per_agent():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0))
    rel = op.sample(6, 2)
    obs = torch.randn(6, 2, OBS.dim)
    seen = rel.observations(obs)
    for e in range(6):
        for a in range(2):
            k = int(SYM.group.index_of(rel.perms[e, a]))
            assert torch.equal(seen[e, a], SYM.observation.act(obs[e, a], k))


def test_actions_map_back_consistently_with_legal_masks():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(1))
    rel = op.sample(50, 2)
    legal = torch.rand(50, 2, ACT.dim, generator=torch.Generator().manual_seed(2)) > 0.5
    legal[..., 0] = True
    seen_legal = rel.legal_actions(legal)
    # an agent picks any action legal in its relabelled game; the env receives a legal action
    choice = torch.multinomial(seen_legal.reshape(-1, ACT.dim).float(), 1).reshape(50, 2)
    env_actions = rel.to_env_actions(choice)
    assert legal.gather(-1, env_actions.unsqueeze(-1)).all()
    assert torch.equal(rel.to_agent_actions(env_actions), choice)
    # hint colour c in the relabelled game is hint colour g^-1(c) in the real game
    perms = rel.perms
    hinted = torch.full((50, 2), 3 + 4)
    real_colour = rel.to_env_actions(hinted) - 3
    assert torch.equal(perms.gather(-1, real_colour.unsqueeze(-1)).squeeze(-1), torch.full((50, 2), 4))


def test_gop_draws_from_the_subgroup_and_other_play_covers_the_group():
    gop = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(3), subgroup=dihedral(5))
    perms = gop.sample(500, 2).perms.reshape(-1, 5)
    assert all(p in dihedral(5) for p in perms)
    assert len({tuple(p) for p in perms.tolist()}) == 10
    full = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(3)).sample(4000).perms
    assert len({tuple(p) for p in full.tolist()}) == 120


def test_where_replaces_finished_episodes_only():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(4))
    old, new = op.sample(5, 2), op.sample(5, 2)
    done = torch.tensor([True, False, True, False, False])
    mixed = old.where(done.unsqueeze(-1).expand(5, 2), new)
    assert torch.equal(mixed.perms[done], new.perms[done]) and torch.equal(mixed.perms[~done], old.perms[~done])


def test_large_group_other_play_samples_permutations():
    lever = Labels("lever", 9)
    sym = Symmetry(symmetric(9), acts_on=lever, observation=Layout([Block("payoff", lever)]), action=Layout([Block("pull", lever)]))
    rel = OtherPlay.from_symmetry(sym, torch.Generator().manual_seed(0)).sample(3, 2)
    assert all(p in sym.group for p in rel.perms.reshape(-1, 9))
    actions = torch.randint(9, (3, 2), generator=torch.Generator().manual_seed(1))
    # the lever an agent pulls in its relabelled game is g^-1 of it in the real game
    assert torch.equal(rel.to_env_actions(actions), torch.argsort(rel.perms, -1).gather(-1, actions.unsqueeze(-1)).squeeze(-1))
    payoff = torch.randn(3, 2, 9)
    assert torch.equal(rel.observations(payoff), sym.observation.act_by_permutations(payoff, rel.perms))


def test_bad_arguments():
    with pytest.raises(TypeError, match="torch.Generator"):
        OtherPlay.from_symmetry(SYM, 0)
    with pytest.raises(ValueError, match="not a subgroup"):
        OtherPlay.from_symmetry(Symmetry(cyclic(5), acts_on=colour, observation=OBS, action=ACT), torch.Generator(), subgroup=dihedral(5))
    rel = OtherPlay.from_symmetry(SYM, torch.Generator()).sample(2)
    with pytest.raises(ValueError, match="0..7"):
        rel.to_env_actions(torch.tensor([8, 0]))
    with pytest.raises(TypeError, match="integer"):
        rel.to_env_actions(torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="last dimension"):
        rel.observations(torch.randn(2, 3))
