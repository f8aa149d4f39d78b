"""Symmetrizing lever policies: symmetric(9) is too large to sum over exactly, cyclic(9) suffices on
the game's observation, and sampled symmetrization converges as the sample count grows."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.lever import lever_game
from eqc.domains.lever.policy import EnsembleMLP
from eqc.groups import GroupTooLargeError
from eqc.symmetrize import Symmetrizer
from eqc.verification import assert_equivariant, equivariance_error


def network(members: int = 1, seed: int = 0) -> EnsembleMLP:
    return EnsembleMLP([seed + k for k in range(members)], 10, 32, 10)


def test_exact_symmetrization_over_symmetric_9_is_refused() -> None:
    game = lever_game()
    with pytest.raises(GroupTooLargeError, match="362,880"):
        Symmetrizer(network(), game.symmetry.observation_rep, game.symmetry.action_rep)


def test_cyclic_9_gives_an_exactly_s9_invariant_policy_on_the_game() -> None:
    game = lever_game()
    full, cyclic = game.symmetry, game.cyclic_symmetry
    policy = Symmetrizer(network(), cyclic.observation_rep, cyclic.action_rep, average="probabilities")
    obs = game.observation().unsqueeze(0)
    probabilities = policy(obs).exp()[0]
    assert torch.allclose(probabilities[:9], probabilities[:9].mean().expand(9), atol=1e-6)
    # equivariance under 64 random elements of S9 (the observation itself is S9-invariant)
    perms = full.group.random_permutations(64, torch.Generator().manual_seed(0))
    assert_equivariant(policy, full.observation_rep, full.action_rep, obs, permutations=perms)
    # the raw network is not, and the cyclic symmetrization is not S9-equivariant on other inputs
    raw = lambda x: torch.log_softmax(network()(x), -1)  # noqa: E731
    assert not equivariance_error(raw, full.observation_rep, full.action_rep, obs, permutations=perms).ok
    generic = torch.randn(3, 10, generator=torch.Generator().manual_seed(1))
    assert not equivariance_error(policy, full.observation_rep, full.action_rep, generic, permutations=perms).ok
    assert_equivariant(policy, cyclic.observation_rep, cyclic.action_rep, generic)


def test_sampled_symmetrization_converges_to_invariance() -> None:
    game = lever_game()
    full = game.symmetry
    obs = game.observation().unsqueeze(0)
    errors = []
    for samples in (4, 64, 2048):
        policy = Symmetrizer(
            network(seed=3),
            full.observation_rep,
            full.action_rep,
            average="probabilities",
            samples=samples,
            generator=torch.Generator().manual_seed(samples),
        )
        spread = []
        for _ in range(5):
            with torch.no_grad():
                p = policy(obs).exp()[0, :9]
            spread.append(float((p - p.mean()).abs().max()))
        errors.append(sum(spread) / len(spread))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.1 * errors[0]
    with torch.no_grad():
        raw = torch.softmax(network(seed=3)(obs), -1)[0, :9]
    assert errors[0] < float((raw - raw.mean()).abs().max())  # even 4 samples help


def test_ensemble_members_are_symmetrized_separately() -> None:
    game = lever_game()
    cyclic = game.cyclic_symmetry
    net = network(members=3)
    policy = Symmetrizer(net, cyclic.observation_rep, cyclic.action_rep, average="probabilities")
    x = torch.randn(3, 5, 10, generator=torch.Generator().manual_seed(0))
    together = policy(x)
    for k in range(3):
        single = EnsembleMLP([k], 10, 32, 10)
        alone = Symmetrizer(single, cyclic.observation_rep, cyclic.action_rep, average="probabilities")(x[k : k + 1])
        assert torch.allclose(together[k : k + 1], alone, atol=1e-6)


def test_ensemble_rejects_bad_shapes() -> None:
    net = network(members=3)
    with pytest.raises(ValueError, match="split evenly"):
        net(torch.zeros(4, 10))
    with pytest.raises(ValueError, match="last dimension 10"):
        net(torch.zeros(3, 9))
    with pytest.raises(ValueError, match="at least one member"):
        EnsembleMLP([], 10, 32, 10)
