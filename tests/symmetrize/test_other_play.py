import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.groups import cyclic, dihedral, symmetric
from eqc.symmetrize import OtherPlay, Relabelling

colour = Labels("colour", 5)
OBS = Layout([Block("hand", 3, colour), Block("hint", colour), Block("tokens", 2)])
ACT = Layout([Block("play", 3), Block("hint_colour", colour)])
SYM = Symmetry(symmetric(5), acts_on=colour, observation_layout=OBS, action_layout=ACT)


def test_seeded_and_reproducible():
    a = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(7)).sample(4, 2)
    b = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(7)).sample(4, 2)
    assert torch.equal(a.permutations, b.permutations) and a.permutations.shape == (4, 2, 5)


def test_relabelling_matches_the_representation_per_agent():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0))
    rel = op.sample(6, 2)
    obs = torch.randn(6, 2, OBS.dim)
    seen = rel.relabel_observations(obs)
    for e in range(6):
        for a in range(2):
            k = int(SYM.group.permutation_to_index(rel.permutations[e, a]))
            assert torch.equal(seen[e, a], SYM.observation_rep.act(obs[e, a], k))


def test_actions_map_back_consistently_with_legal_masks():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(1))
    rel = op.sample(50, 2)
    legal = torch.rand(50, 2, ACT.dim, generator=torch.Generator().manual_seed(2)) > 0.5
    legal[..., 0] = True
    seen_legal = rel.relabel_legal_actions(legal)
    # an agent picks any action legal in its relabelled game; the env receives a legal action
    choice = torch.multinomial(seen_legal.reshape(-1, ACT.dim).float(), 1).reshape(50, 2)
    env_actions = rel.to_env_actions(choice)
    assert legal.gather(-1, env_actions.unsqueeze(-1)).all()
    assert torch.equal(rel.to_agent_actions(env_actions), choice)
    # hint colour c in the relabelled game is hint colour g^-1(c) in the real game
    perms = rel.permutations
    hinted = torch.full((50, 2), 3 + 4)
    real_colour = rel.to_env_actions(hinted) - 3
    assert torch.equal(perms.gather(-1, real_colour.unsqueeze(-1)).squeeze(-1), torch.full((50, 2), 4))


def test_gop_draws_from_the_subgroup_and_other_play_covers_the_group():
    gop = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(3), subgroup=dihedral(5))
    perms = gop.sample(500, 2).permutations.reshape(-1, 5)
    assert all(p in dihedral(5) for p in perms)
    assert len({tuple(p) for p in perms.tolist()}) == 10
    full = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(3)).sample(4000).permutations
    assert len({tuple(p) for p in full.tolist()}) == 120


def test_where_replaces_finished_episodes_only():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(4))
    old, new = op.sample(5, 2), op.sample(5, 2)
    done = torch.tensor([True, False, True, False, False])
    mixed = old.where(done.unsqueeze(-1).expand(5, 2), new)
    assert torch.equal(mixed.permutations[done], new.permutations[done]) and torch.equal(mixed.permutations[~done], old.permutations[~done])


def test_large_group_other_play_samples_permutations():
    lever = Labels("lever", 9)
    sym = Symmetry(
        symmetric(9), acts_on=lever, observation_layout=Layout([Block("payoff", lever)]), action_layout=Layout([Block("pull", lever)])
    )
    rel = OtherPlay.from_symmetry(sym, torch.Generator().manual_seed(0)).sample(3, 2)
    assert all(p in sym.group for p in rel.permutations.reshape(-1, 9))
    actions = torch.randint(9, (3, 2), generator=torch.Generator().manual_seed(1))
    # the lever an agent pulls in its relabelled game is g^-1 of it in the real game
    assert torch.equal(rel.to_env_actions(actions), torch.argsort(rel.permutations, -1).gather(-1, actions.unsqueeze(-1)).squeeze(-1))
    payoff = torch.randn(3, 2, 9)
    assert torch.equal(rel.relabel_observations(payoff), sym.observation_rep.act_permutations(payoff, rel.permutations))


def test_bad_arguments():
    with pytest.raises(TypeError, match=r"torch\.Generator"):
        OtherPlay.from_symmetry(SYM, 0)
    with pytest.raises(ValueError, match="not a subgroup"):
        OtherPlay.from_symmetry(
            Symmetry(cyclic(5), acts_on=colour, observation_layout=OBS, action_layout=ACT), torch.Generator(), subgroup=dihedral(5)
        )
    rel = OtherPlay.from_symmetry(SYM, torch.Generator()).sample(2)
    with pytest.raises(ValueError, match=r"0\.\.7"):
        rel.to_env_actions(torch.tensor([8, 0]))
    with pytest.raises(TypeError, match="integer"):
        rel.to_env_actions(torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="last dimension"):
        rel.relabel_observations(torch.randn(2, 3))


def test_other_play_takes_representations_under_rep_names():
    gen = lambda: torch.Generator().manual_seed(5)  # noqa: E731
    by_keyword = OtherPlay(SYM.group, observation_rep=SYM.observation_rep, action_rep=SYM.action_rep, generator=gen())
    by_position = OtherPlay(SYM.group, SYM.observation_rep, SYM.action_rep, gen())
    assert torch.equal(by_keyword.sample(4).permutations, by_position.sample(4).permutations)
    assert not hasattr(by_keyword, "observation") and not hasattr(Relabelling, "perms")  # one spelling each
    with pytest.raises(TypeError, match=r"observation_rep must be a PermutationRepresentation .*got Layout"):
        OtherPlay(SYM.group, OBS, ACT, gen())
    with pytest.raises(TypeError, match="observation"):
        OtherPlay(SYM.group, SYM.observation_rep, SYM.action_rep, gen(), observation=SYM.observation_rep)


def test_bad_devices_inputs_and_shapes_are_clear():
    with pytest.raises(ValueError, match=r"device must be a torch device .*got 'gpu' \(did you mean 'cuda'\?\)"):
        OtherPlay.from_symmetry(SYM, torch.Generator(), device="gpu")
    rel = OtherPlay.from_symmetry(SYM, torch.Generator()).sample(2)
    with pytest.raises(TypeError, match=r"obs must be a torch\.Tensor, got ndarray"):
        rel.relabel_observations(torch.randn(2, OBS.dim).numpy())
    with pytest.raises(TypeError, match=r"actions must be a torch\.Tensor"):
        rel.to_env_actions([0, 1])
    with pytest.raises(TypeError, match=r"shape\[1\] must be a Python int"):
        OtherPlay.from_symmetry(SYM, torch.Generator()).sample(2, 1.0)
    with pytest.raises(TypeError, match="symmetry must be an eqc Symmetry"):
        OtherPlay.from_symmetry(SYM.observation_rep, torch.Generator())


# ---------------------------------------------------------------- element indices kept on the device
def _fields(rel) -> list[torch.Tensor]:
    return [rel.permutations, rel.observation_index, rel.action_index, rel.action_coordinates]


def test_relabelling_indices_equals_relabelling_of_the_permutations():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0))
    indices = torch.randint(SYM.group.order, (6, 2), generator=torch.Generator().manual_seed(1))
    by_index, by_perm = op.relabelling_indices(indices), op.relabelling(SYM.group.elements[indices])
    assert all(torch.equal(a, b) for a, b in zip(_fields(by_index), _fields(by_perm), strict=True))
    assert all(torch.equal(a, b) for a, b in zip(_fields(op.relabelling_indices(indices, check=False)), _fields(by_perm), strict=True))


def test_relabelling_indices_never_leaves_the_device():
    """On the meta device a tensor has no values: any copy to the host or read of a value raises
    ("Cannot copy out of meta tensor"), as relabelling by permutations does (negative control)."""
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0), device="meta")
    indices = torch.zeros(8, 2, dtype=torch.long, device="meta")
    for check in (True, False):  # the range check reads CPU indices only
        rel = op.relabelling_indices(indices, check=check)
        assert all(f.device.type == "meta" for f in _fields(rel))
        assert rel.relabel_observations(torch.empty(8, 2, OBS.dim, device="meta")).shape == (8, 2, OBS.dim)
        assert rel.to_env_actions(torch.zeros(8, 2, dtype=torch.long, device="meta"), check=False).device.type == "meta"
    with pytest.raises((NotImplementedError, RuntimeError)):
        op.relabelling(SYM.group.elements[:2].to("meta"))


def test_relabelling_indices_errors():
    op = OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"outside 0\.\.119"):
        op.relabelling_indices(torch.tensor([0, 120]))
    narrow = op.relabelling_indices(torch.tensor([0, 1], dtype=torch.int32), check=False)  # converted on its device
    assert all(torch.equal(a, b) for a, b in zip(_fields(narrow), _fields(op.relabelling_indices(torch.tensor([0, 1]))), strict=True))
    with pytest.raises(ValueError, match=r"indices holds element indices outside 0\.\.119 \(e\.g\. -1\)"):
        op.relabelling_indices(torch.tensor([-1]))
    with pytest.raises(TypeError, match="integer"):
        op.relabelling_indices(torch.tensor([0.0]))


def test_sample_draws_on_the_generators_device(monkeypatch: pytest.MonkeyPatch):
    """``torch.randint(generator=g)`` without ``device=`` draws on the CPU, which a CUDA generator refuses."""
    draws = []
    randint = torch.randint

    def spy(*args, generator=None, device=None, **kwargs):
        draws.append(device == generator.device)
        return randint(*args, generator=generator, device=device, **kwargs)

    monkeypatch.setattr(torch, "randint", spy)
    OtherPlay.from_symmetry(SYM, torch.Generator().manual_seed(0)).sample(4, 2)
    assert draws and all(draws)
