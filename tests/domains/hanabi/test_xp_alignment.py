"""Cross-play after the best colour alignment of each pair."""

from __future__ import annotations

import math

import pytest
import torch

from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.symmetry import colour_group, colour_symmetry
from eqc.domains.hanabi.xp.alignment import alignable_share, aligned_cross_play
from eqc.domains.hanabi.xp.relabelled import RelabelledAgent

SHIPPED = "results/induced/agents/sp/seed_0"  # an agent with an induced colour convention (pi = [2, 0, 1])


def test_alignment_undoes_a_colour_relabelling() -> None:
    """The agent beside a copy of itself in a relabelled world: the pair's best element is the relabelling's
    inverse, and aligned cross-play recovers what plain cross-play lost."""
    torch.set_num_threads(1)
    policy = load_policy(SHIPPED)
    s3 = colour_group("S3", 3)
    element = 3
    relabelled = RelabelledAgent(policy.agent, colour_symmetry(s3, policy.rules), element)
    copy = TrainedPolicy(relabelled, policy.spec, policy.trained_moves, policy.device)
    result = aligned_cross_play([policy, copy], games=128)
    # this agent scores about 8.5 in self-play and with a partner whose colours 1 and 2 are swapped (its convention
    # does not tell them apart), under 4 with the other relabelled partners: the inverse of the relabelling aligns
    # the pair, and so does the inverse followed by that swap
    undo = int(s3.inverse[element])
    swap = int(s3.permutation_to_index([[0, 2, 1]])[0])
    assert int(result.element[0, 1]) in (undo, int(s3.compose_indices(undo, swap)))
    assert int(result.element[0, 1]) == int(result.element[1, 0])
    assert result.mean("aligned") > 7 and result.mean("plain") < 4
    assert math.isnan(result.plain[0, 0]) and result.games == 128


def test_arguments_are_checked() -> None:
    policy = load_policy(SHIPPED)
    with pytest.raises(TypeError, match="at least 2 TrainedPolicy"):
        aligned_cross_play([policy])
    with pytest.raises(ValueError, match="games"):
        aligned_cross_play([policy, policy], games=2)


def test_alignable_share() -> None:
    assert alignable_share(3.0, 2.0, 6.0) == 0.25
    assert alignable_share(1.0, 2.0, 6.0) == -0.25  # a method below plain cross-play closes a negative share
    assert math.isnan(alignable_share(3.0, 2.0, 2.0))
