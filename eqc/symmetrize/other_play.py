"""Other-Play (Hu et al., 2020) and G-OP (Muglich et al., 2022) relabelling.

Each agent plays each episode in its own relabelled copy of the game: a group element
``g`` is drawn per agent per episode from a seeded ``torch.Generator``; the agent sees
``rho_obs(g) o`` and ``rho_act(g) legal``, and the action ``a'`` it picks in that copy is
played in the real game as ``g^-1(a')``. Other-Play draws from the full symmetry group;
G-OP draws from a chosen subgroup G and deploys the policy symmetrized over G
(:class:`~eqc.symmetrize.Symmetrizer`). Elements are sampled as permutations (the forms of an
element: :class:`~eqc.groups.PermutationGroup`), so groups too large to list (e.g. symmetric(9)) work; the
direction of ``rho`` is the one of :mod:`eqc.groups.representation`. A training loop on an
accelerator keeps element *indices* on its device and builds relabellings with
:meth:`OtherPlay.relabelling_indices` (row gathers, no host round trip);
:meth:`OtherPlay.relabelling` of permutations maps them on the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from eqc._checks import check_bool, check_device, check_int, check_tensor
from eqc.dec_pomdp import Symmetry
from eqc.dec_pomdp.candidate_set import refuse_candidate_set
from eqc.groups import PermutationGroup, PermutationRepresentation, inverse_permutations
from eqc.groups.representation import broadcast_gather, require_same_group

__all__ = ["OtherPlay", "Relabelling"]


@dataclass(frozen=True)
class Relabelling:
    """One group element per (env, agent): the permutations and their precomputed index tables.

    ``permutations [..., degree]``; ``observation_index``/``action_index`` are gather tables
    ``(rho(g) x)[j] = x[index[j]]`` and ``action_coordinates[a] = g(a)``.

    Its methods are verbs: :meth:`relabel_observations`, :meth:`relabel_legal_actions`,
    :meth:`to_env_actions`, :meth:`to_agent_actions`, :meth:`where`.
    """

    permutations: torch.Tensor
    observation_index: torch.Tensor
    action_index: torch.Tensor
    action_coordinates: torch.Tensor

    def relabel_observations(self, obs: torch.Tensor) -> torch.Tensor:
        """What each agent sees: ``rho_obs(g) obs`` for ``obs [..., d_obs]`` matching ``permutations.shape[:-1]``."""
        return _gather(obs, self.observation_index, "obs")

    def relabel_legal_actions(self, legal: torch.Tensor) -> torch.Tensor:
        """Legal actions in each agent's relabelled game: ``rho_act(g) legal``."""
        return _gather(legal, self.action_index, "legal")

    def to_env_actions(self, actions: torch.Tensor, *, check: bool = True) -> torch.Tensor:
        """Map actions chosen in the relabelled games back to the real game: ``a = g^-1(a')``.

        ``check=False`` skips the range check (which synchronises with the device) in hot loops.
        """
        return _take(self.action_index, actions, check)

    def to_agent_actions(self, actions: torch.Tensor, *, check: bool = True) -> torch.Tensor:
        """Map real-game actions into each agent's relabelled game: ``a' = g(a)`` (e.g. partner actions)."""
        return _take(self.action_coordinates, actions, check)

    def where(self, condition: torch.Tensor, other: Relabelling) -> Relabelling:
        """Take ``other``'s elements where ``condition [...]`` is True (e.g. for episodes that just restarted)."""
        check_tensor(condition, "condition", dtypes=[torch.bool])
        if not isinstance(other, Relabelling):
            raise TypeError(f"other must be a Relabelling, got {type(other).__name__}")
        c = condition.unsqueeze(-1)
        return Relabelling(
            torch.where(c, other.permutations, self.permutations),
            torch.where(c, other.observation_index, self.observation_index),
            torch.where(c, other.action_index, self.action_index),
            torch.where(c, other.action_coordinates, self.action_coordinates),
        )


def _gather(x: torch.Tensor, index: torch.Tensor, name: str) -> torch.Tensor:
    check_tensor(x, name, last=index.shape[-1])
    return broadcast_gather(x, index)


def _take(table: torch.Tensor, actions: torch.Tensor, check: bool) -> torch.Tensor:
    check_tensor(actions, "actions")
    check_bool(check, "check")
    if actions.dtype.is_floating_point or actions.dtype.is_complex or actions.dtype == torch.bool:
        raise TypeError(f"actions must be integer action indices, got dtype {actions.dtype}")
    if check and actions.numel() and (int(actions.min()) < 0 or int(actions.max()) >= table.shape[-1]):
        raise ValueError(f"actions must lie in 0..{table.shape[-1] - 1}")
    return torch.gather(table, -1, actions.long().unsqueeze(-1)).squeeze(-1)


class OtherPlay:
    """Draws per-agent relabellings for Other-Play (full group) or G-OP (a subgroup).

    Args:
        group: the group to draw from.
        observation_rep, action_rep: its representations on one agent's observation and action
            vectors (``Symmetry.observation_rep`` and ``.action_rep``).
        generator: the seeded ``torch.Generator`` that draws elements (never the global RNG).
        device: where the index tables live (the training device).
    """

    def __init__(
        self,
        group: PermutationGroup,
        observation_rep: PermutationRepresentation,
        action_rep: PermutationRepresentation,
        generator: torch.Generator | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        refuse_candidate_set(group, "group")
        _check_rep(observation_rep, "observation_rep")
        _check_rep(action_rep, "action_rep")
        if not isinstance(generator, torch.Generator):
            raise TypeError("generator must be a seeded torch.Generator (Other-Play never uses the global RNG)")
        if not isinstance(group, PermutationGroup):
            raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
        if require_same_group([observation_rep, action_rep], ["observation_rep", "action_rep"]) != group:
            raise ValueError(f"observation_rep and action_rep must be representations of {group.name}")
        self.group, self.observation_rep, self.action_rep = group, observation_rep, action_rep
        self.generator, self.device = generator, check_device(device)

    @classmethod
    def from_symmetry(
        cls,
        symmetry: Symmetry,
        generator: torch.Generator,
        *,
        subgroup: PermutationGroup | None = None,
        device: torch.device | str = "cpu",
    ) -> OtherPlay:
        """Other-Play over ``symmetry.group``, or G-OP over ``subgroup`` of it. A learned
        :class:`~eqc.dec_pomdp.CandidateSet` is refused (it is no group): its own ``draw`` serves Other-Play."""
        refuse_candidate_set(symmetry, "symmetry")
        refuse_candidate_set(subgroup, "subgroup")
        if not isinstance(symmetry, Symmetry):
            raise TypeError(f"symmetry must be an eqc Symmetry, got {type(symmetry).__name__}")
        if subgroup is not None:
            symmetry = symmetry.restrict(subgroup)
        return cls(symmetry.group, symmetry.observation_rep, symmetry.action_rep, generator, device)

    def sample(self, *shape: int) -> Relabelling:
        """Uniform independent elements for a batch of shape ``shape`` (e.g. ``num_envs, num_agents``)."""
        for k, s in enumerate(shape):
            check_int(s, f"shape[{k}]", low=0)
        count = 1
        for s in shape:
            count *= s
        perms = self.group.random_permutations(count, self.generator).reshape(*shape, self.group.degree)
        return self.relabelling(perms)

    def relabelling_indices(self, indices: torch.Tensor, *, check: bool = True) -> Relabelling:
        """The :class:`Relabelling` for group elements given as indices ``[...]`` (rows of ``group.elements``;
        the group must be listable), on ``indices``' device.

        Every field is one row gather from tables copied to that device once, so a hot loop that keeps
        its element indices on the device never goes through the host. The indices are checked by
        :meth:`~eqc.groups.PermutationGroup.check_elements`; ``check=False`` skips its range check (which reads
        CPU indices back; on other devices it is skipped anyway).
        """
        check_tensor(indices, "indices")
        index = self.group.check_elements(indices=indices, name="indices", check_range=check_bool(check, "check"))
        device = index.device
        return Relabelling(
            self.group.device_table("elements", device)[index],
            self.observation_rep.device_table("gather", device)[index],
            self.action_rep.device_table("gather", device)[index],
            self.action_rep.device_table("coordinates", device)[index],
        )

    def relabelling(self, perms: torch.Tensor) -> Relabelling:
        """The :class:`Relabelling` for given group elements (permutations ``[..., degree]``, any group size)."""
        check_tensor(perms, "perms")
        obs_coords = self.observation_rep.coordinate_map(perms)
        act_coords = self.action_rep.coordinate_map(perms)
        to = self.device
        return Relabelling(
            perms.to(to), inverse_permutations(obs_coords).to(to), inverse_permutations(act_coords).to(to), act_coords.to(to)
        )


def _check_rep(value: object, name: str) -> None:
    if not isinstance(value, PermutationRepresentation):
        raise TypeError(f"{name} must be a PermutationRepresentation (e.g. Symmetry.{name}), got {type(value).__name__}")
