"""How equivariant a trained policy is: greedy disagreement in relabelled worlds."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.xp.equivariance import greedy_equivariance

SHIPPED = "results/induced/agents/sp/seed_0"  # an agent with an induced colour convention


def test_a_symmetrized_agent_never_disagrees_and_a_convention_does() -> None:
    torch.set_num_threads(1)
    plain = greedy_equivariance(load_policy(SHIPPED), games=16)
    symmetrized = greedy_equivariance(load_policy(SHIPPED, symmetrize="S3"), games=16)
    assert symmetrized.disagreement == 0.0 and symmetrized.per_element == (0.0,) * 5  # exact: every copy sees the same average
    assert plain.disagreement > 0.2 and len(plain.per_element) == 5 and plain.states > 100  # its moves depend on colour names
    assert greedy_equivariance(load_policy(SHIPPED), group="C3", games=4, max_states=50).states == 50


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="TrainedPolicy"):
        greedy_equivariance(SHIPPED)
    with pytest.raises(ValueError, match="games"):
        greedy_equivariance(load_policy(SHIPPED), games=0)
