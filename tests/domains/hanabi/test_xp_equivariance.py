"""How equivariant a trained policy is: greedy disagreement and policy distance in relabelled worlds."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.training.run import train
from eqc.domains.hanabi.xp.equivariance import greedy_equivariance, sampled_equivariance

SHIPPED = "results/induced/agents/sp/seed_0"  # an agent with an induced colour convention


def test_a_symmetrized_agent_never_disagrees_and_a_convention_does() -> None:
    torch.set_num_threads(1)
    plain = greedy_equivariance(load_policy(SHIPPED), games=16)
    symmetrized = greedy_equivariance(load_policy(SHIPPED, symmetrize="S3"), games=16)
    assert symmetrized.disagreement == 0.0 and symmetrized.per_element == (0.0,) * 5  # exact: every copy sees the same average
    assert plain.disagreement > 0.2 and len(plain.per_element) == 5 and plain.states > 100  # its moves depend on colour names
    assert greedy_equivariance(load_policy(SHIPPED), group="C3", games=4, max_states=50).states == 50


def test_a_recurrent_agent_is_measured_on_its_whole_histories(tmp_path: Path, tiny_config) -> None:
    """Each seat's history is replayed in the relabelled world from a fresh state: the agent symmetrized over the group
    (its hidden states averaged) never disagrees, the plain one does; the policy distance refuses recurrent IPPO agents."""
    torch.set_num_threads(1)
    recurrent = "results/cpu/agents/recurrent/seed_0"
    plain = greedy_equivariance(load_policy(recurrent), group="C5", games=4)
    symmetrized = greedy_equivariance(load_policy(recurrent, symmetrize="C5"), group="C5", games=4)
    assert symmetrized.disagreement == 0.0 and len(symmetrized.per_element) == 4 and symmetrized.states > 40  # its own games
    assert plain.disagreement > 0.0
    config = tiny_config(run={"algorithm": "ippo", "total_moves": 512, "eval_every_moves": 512}, network={"lstm_layers": 1},
                         ppo={"rollout_steps": 8, "epochs": 1, "minibatches": 2})
    train(config, tmp_path / "ippo", seed=0, progress=False, log=lambda _: None)
    with pytest.raises(ValueError, match="feed-forward agents"):
        sampled_equivariance(load_policy(tmp_path / "ippo"), games=2)


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="TrainedPolicy"):
        greedy_equivariance(SHIPPED)
    with pytest.raises(ValueError, match="games"):
        greedy_equivariance(load_policy(SHIPPED), games=0)
    with pytest.raises(ValueError, match="colour group C5 moves 5 colours but the game has 3"):
        greedy_equivariance(load_policy(SHIPPED), group="C5")


def test_the_policy_distance_of_an_ippo_agent_is_zero_once_symmetrized(tmp_path: Path, tiny_config) -> None:
    """As sampled, an IPPO agent is measured by the total-variation distance of its move distributions: 0 (to rounding)
    for the agent symmetrized over the group, above 0 for a plain network; a Q-learner is refused (its outputs are
    Q-values, not a policy)."""
    config = tiny_config(run={"algorithm": "ippo", "total_moves": 2048, "eval_every_moves": 2048},
                         ppo={"rollout_steps": 8, "epochs": 1, "minibatches": 2})
    train(config, tmp_path / "run", seed=0, progress=False, log=lambda _: None)
    plain = sampled_equivariance(load_policy(tmp_path / "run"), group="C5", games=8)
    symmetrized = sampled_equivariance(load_policy(tmp_path / "run", symmetrize="C5"), group="C5", games=8)
    assert symmetrized.distance < 1e-6 and max(symmetrized.per_element) < 1e-6 and len(symmetrized.per_element) == 4  # float32 sums
    assert plain.distance > 1e-3 and plain.states > 8 and plain.group == "C5"
    assert 0 < plain.entropy <= math.log(20)  # 20 moves in two-player Hanabi
    with pytest.raises(ValueError, match=r"head is 'q'.*greedy_equivariance"):
        sampled_equivariance(load_policy(SHIPPED), games=2)
