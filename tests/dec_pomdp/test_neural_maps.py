"""The neural family of candidate maps: the transform's convention, the trainer's terms and draws, the candidate-set
file, and the refusals of the symmetrizer and G-OP. Float64 throughout; the returns here are hand-made functions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
import torch
from torch import nn

from eqc.dec_pomdp import (
    CandidateMap,
    CandidateSet,
    LearnedMap,
    NeuralMapOptions,
    load_candidate_set,
    train_candidate_map,
    transform_logits,
)
from eqc.dec_pomdp.neural_maps import SeatPolicy, invertibility_penalty
from eqc.symmetrize import OtherPlay, Symmetrizer

D, A = 2, 3
OBS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 2.0]], dtype=torch.float64)


def make_map(sigma: Sequence[int], last: torch.Tensor | None = None, seed: int = 0) -> CandidateMap:
    """A map whose first two layers are the identity (so g(o) = last @ o for o >= 0) when ``last`` is given."""
    phi = CandidateMap(D, D, sigma, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    if last is not None:
        with torch.no_grad():
            for k in range(2):
                phi.weights[k].copy_(torch.eye(D, dtype=torch.float64))
                phi.biases[k].zero_()
            phi.weights[2].copy_(last)
    return phi


def linear_policy(seed: int = 0) -> nn.Module:
    net = nn.Linear(D, A).double()
    with torch.no_grad():
        net.weight.copy_(torch.randn(A, D, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
        net.bias.zero_()
    return net


def test_a_new_map_is_exactly_the_identity() -> None:
    phi = make_map([0, 1, 2])
    obs = torch.randn(5, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert torch.equal(phi(obs), obs)
    pi, legal = linear_policy(), torch.ones(5, A, dtype=torch.bool)
    assert torch.equal(transform_logits(pi, (phi,), obs, legal), pi(obs))


def test_the_move_permutation_and_the_real_legal_moves() -> None:
    """logits'[sigma(a)] = logits(f(o))[a], then the real game's illegal moves get -inf."""
    phi, pi = make_map([1, 2, 0]), linear_policy()
    legal = torch.tensor([[True, True, True], [True, False, True], [False, True, True]])
    out, raw = transform_logits(pi, (phi,), OBS, legal), pi(OBS)
    for a in range(A):
        b = [1, 2, 0][a]
        assert torch.equal(out[:, b][legal[:, b]], raw[:, a][legal[:, b]])
    assert bool((out[~legal] == -math.inf).all())


def test_closure_is_f_twice_and_sigma_squared() -> None:
    """(phi, phi): pi sees f(f(o)) and its move a is played as sigma(sigma(a)); on a hand-made f(o) = 3 o."""
    phi, pi = make_map([1, 2, 0], last=2 * torch.eye(D, dtype=torch.float64)), linear_policy()
    legal = torch.ones(len(OBS), A, dtype=torch.bool)
    assert torch.allclose(phi(OBS), 3 * OBS, atol=1e-12)
    twice = transform_logits(pi, (phi, phi), OBS, legal)
    raw = pi(9 * OBS)
    squared = [2, 0, 1]  # sigma o sigma for sigma = [1, 2, 0]
    for a in range(A):
        assert torch.allclose(twice[:, squared[a]], raw[:, a], atol=1e-12)


def test_invertibility_is_the_mean_l1_of_f_f_o_minus_o() -> None:
    swap = make_map([0, 1, 2], last=torch.tensor([[-1.0, 1.0], [1.0, -1.0]], dtype=torch.float64))  # f(o) = (o1, o0)
    assert torch.allclose(swap(OBS), OBS.flip(-1), atol=1e-12)
    assert float(invertibility_penalty(swap, OBS).detach()) == pytest.approx(0.0, abs=1e-12)
    triple = make_map([0, 1, 2], last=2 * torch.eye(D, dtype=torch.float64))  # f(f(o)) - o = 8 o
    assert float(invertibility_penalty(triple, OBS).detach()) == pytest.approx(float((8 * OBS).abs().sum(-1).mean()), rel=1e-12)


def probing_returns(seen: list[torch.Tensor]) -> object:
    """A differentiable return that records what seat 1's policy plays at OBS."""
    def returns(policies: Sequence[SeatPolicy]) -> torch.Tensor:
        legal = torch.ones(len(OBS), A, dtype=torch.bool)
        logits = [p(OBS, legal) for p in policies]
        seen.append(logits[1].detach())
        return sum(torch.softmax(x, -1)[:, 0].sum() for x in logits)  # type: ignore[return-value]
    return returns


@pytest.mark.parametrize(("closure", "composition", "played"), [(1.0, 0.0, [2, 0, 1]), (0.0, 0.0, [1, 2, 0]), (0.0, 1.0, None)])
def test_each_step_trains_phi_phi_o_phi_or_phi_o_an_earlier_map(closure: float, composition: float, played: list[int] | None) -> None:
    pi = linear_policy()
    earlier = make_map([0, 2, 1], last=torch.tensor([[-1.0, 1.0], [1.0, -1.0]], dtype=torch.float64))
    seen: list[torch.Tensor] = []
    options = NeuralMapOptions(hidden_size=D, steps=1, lr=1e-300, closure_probability=closure, composition_probability=composition)
    train_candidate_map([pi], [1, 2, 0], probing_returns(seen), observation_size=D, options=options, earlier=[earlier],
                        dtype=torch.float64)
    raw = pi(OBS if played is not None else OBS.flip(-1))  # phi o psi feeds f_psi(f(o)) = flipped o to pi
    moves = played if played is not None else [1, 0, 2]  # sigma o sigma_psi: a -> [1, 2, 0][[0, 2, 1][a]]
    for a in range(A):
        assert torch.allclose(seen[0][:, moves[a]], raw[:, a], atol=1e-12)


def test_the_pool_is_frozen_and_unchanged() -> None:
    pool = [linear_policy(0), linear_policy(1)]
    before = [{k: v.clone() for k, v in p.state_dict().items()} for p in pool]
    learned = train_candidate_map(pool, [1, 0, 2], probing_returns([]), observation_size=D,
                                  options=NeuralMapOptions(hidden_size=4, steps=5, lr=0.1, cross_play=True), dtype=torch.float64)
    for p, b in zip(pool, before, strict=True):
        assert not any(q.requires_grad for q in p.parameters())
        assert all(torch.equal(v, b[k]) for k, v in p.state_dict().items())
    assert len(learned.objective) == 5 and not math.isnan(learned.cross_play)
    assert any(float(w.abs().max()) > 0 for w in learned.map.weights[2:])  # f itself did train


def test_training_is_deterministic_for_a_seed() -> None:
    def run(seed: int) -> LearnedMap:
        return train_candidate_map([linear_policy()], [1, 0, 2], probing_returns([]), observation_size=D,
                                   options=NeuralMapOptions(hidden_size=4, steps=4, lr=0.1, seed=seed), dtype=torch.float64)
    a, b, c = run(3), run(3), run(4)
    assert a.objective == b.objective and all(torch.equal(x, y) for x, y in zip(a.map.parameters(), b.map.parameters(), strict=True))
    assert not torch.equal(a.map.weights[0], c.map.weights[0])


def test_bad_arguments_are_refused_with_their_names() -> None:
    g = torch.Generator()
    with pytest.raises(ValueError, match="move_permutation"):
        CandidateMap(D, 4, [0, 0, 1], generator=g)
    with pytest.raises(TypeError, match="generator must be a seeded"):
        CandidateMap(D, 4, [0, 1], generator=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hidden_size must be in"):
        NeuralMapOptions(hidden_size=0)
    with pytest.raises(ValueError, match="closure_probability \\+ composition_probability"):
        NeuralMapOptions(closure_probability=0.8, composition_probability=0.3)
    with pytest.raises(TypeError, match=r"pool must be a non-empty list of nn\.Module"):
        train_candidate_map([lambda x: x], [0, 1, 2], probing_returns([]), observation_size=D)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="XP variant"):
        train_candidate_map([linear_policy()], [0, 1, 2], probing_returns([]), observation_size=D,
                            options=NeuralMapOptions(cross_play=True))
    with pytest.raises(ValueError, match="is not one"):
        train_candidate_map([linear_policy()], [1, 2, 0], probing_returns([]), observation_size=D,
                            options=NeuralMapOptions(invertibility=0.1))
    with pytest.raises(TypeError, match="returns must be a callable"):
        train_candidate_map([linear_policy()], [0, 1, 2], None, observation_size=D)  # type: ignore[arg-type]


def small_set() -> CandidateSet:
    maps = (LearnedMap(make_map([1, 0, 2], seed=1), 0.25, 0.75, math.nan, (0.5, 0.75)),
            LearnedMap(make_map([0, 2, 1], last=torch.ones(D, D, dtype=torch.float64), seed=2), 0.0, 1.0, 1.0, ()))
    return CandidateSet(maps, NeuralMapOptions(hidden_size=D), {"game": "test"})


def test_a_candidate_set_round_trips_through_safetensors_and_json(tmp_path) -> None:
    found = small_set()
    path = found.save(tmp_path / "set.json", note="x")
    assert (tmp_path / "set.safetensors").is_file()
    back = load_candidate_set(path)
    assert back.options == found.options and back.context == {"game": "test", "note": "x"}
    for m, n in zip(found.maps, back.maps, strict=True):
        assert torch.equal(m.map.move_permutation, n.map.move_permutation) and m.objective == n.objective
        assert (m.loss, m.self_play) == (n.loss, n.self_play) and (math.isnan(n.cross_play) == math.isnan(m.cross_play))
        assert torch.equal(m.map(OBS), n.map(OBS))
    with pytest.raises(FileExistsError, match="written once"):
        found.save(path)


def test_a_damaged_candidate_set_file_is_refused_naming_file_and_key(tmp_path) -> None:
    import json

    path = small_set().save(tmp_path / "set.json")
    record = json.loads(path.read_text())
    for key, value, message in (("kind", "other", "'kind'"), ("maps", [{"move_permutation": [0, 0, 1]}], "move_permutation"),
                                ("weights_sha256", "0" * 64, "'weights_sha256'"), ("hidden_size", 0, "'hidden_size'")):
        bad = tmp_path / f"bad_{key}.json"
        (tmp_path / f"bad_{key}.safetensors").write_bytes((tmp_path / "set.safetensors").read_bytes())
        bad.write_text(json.dumps({**record, key: value, "weights": bad.with_suffix(".safetensors").name}))
        with pytest.raises(ValueError, match=message) as err:
            load_candidate_set(bad)
        assert str(bad) in str(err.value)


def test_other_play_draws_indices_over_identity_and_the_maps() -> None:
    found = small_set()
    draws = found.draw(torch.Generator().manual_seed(0), 600, 2)
    assert draws.shape == (600, 2) and set(draws.unique().tolist()) == {0, 1, 2}
    assert torch.equal(draws, found.draw(torch.Generator().manual_seed(0), 600, 2))
    pi, legal = linear_policy(), torch.ones(len(OBS), A, dtype=torch.bool)
    assert torch.equal(found.seat_policy(pi, 0)(OBS, legal), pi(OBS))
    assert torch.equal(found.seat_policy(pi, 1)(OBS, legal), transform_logits(pi, (found.maps[0].map,), OBS, legal))


def test_the_symmetrizer_and_g_op_refuse_a_candidate_set() -> None:
    found = small_set()
    with pytest.raises(TypeError, match=r"not a group: .*not closed under composition nor exact inverses"):
        Symmetrizer(nn.Linear(D, A), found, found)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not a group: .*'a subgroup' of them is undefined"):
        OtherPlay.from_symmetry(found, torch.Generator())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="subgroup is a CandidateSet, not a group"):
        OtherPlay.from_symmetry(None, torch.Generator(), subgroup=found)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="group is a CandidateSet, not a group"):
        OtherPlay(found, None, None, torch.Generator())  # type: ignore[arg-type]
