"""Other-Play (Hu et al., 2020) and G-OP (Muglich et al., 2022) relabelling.

Each agent plays each episode in its own relabelled copy of the game: a group element
``g`` is drawn per agent per episode from a seeded ``torch.Generator``; the agent sees
``rho_obs(g) o`` and ``rho_act(g) legal``, and the action ``a'`` it picks in that copy is
played in the real game as ``g^-1(a')``. Other-Play draws from the full symmetry group;
G-OP draws from a chosen subgroup G and deploys the policy symmetrized over G
(:class:`~eqc.symmetrize.Symmetrizer`). Elements are sampled as image arrays, so groups too
large to list (e.g. symmetric(9)) work.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from eqc.dec_pomdp import Symmetry
from eqc.groups import PermutationGroup, PermutationRepresentation, invert
from eqc.groups.representation import broadcast_gather, require_same_group


@dataclass(frozen=True)
class Relabelling:
    """One group element per (env, agent): the permutations and their precomputed index tables.

    ``perms [..., degree]``; ``observation_index``/``action_index`` are gather tables
    ``(rho(g) x)[j] = x[index[j]]`` and ``action_coordinates[a] = g(a)``.
    """

    perms: torch.Tensor
    observation_index: torch.Tensor
    action_index: torch.Tensor
    action_coordinates: torch.Tensor

    def observations(self, obs: torch.Tensor) -> torch.Tensor:
        """What each agent sees: ``rho_obs(g) obs`` for ``obs [..., d_obs]`` matching ``perms.shape[:-1]``."""
        return _gather(obs, self.observation_index, "obs")

    def legal_actions(self, legal: torch.Tensor) -> torch.Tensor:
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
        c = condition.unsqueeze(-1)
        return Relabelling(
            torch.where(c, other.perms, self.perms),
            torch.where(c, other.observation_index, self.observation_index),
            torch.where(c, other.action_index, self.action_index),
            torch.where(c, other.action_coordinates, self.action_coordinates),
        )


def _gather(x: torch.Tensor, index: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.shape[-1] != index.shape[-1]:
        raise ValueError(f"{name} must be a tensor with last dimension {index.shape[-1]}, got {getattr(x, 'shape', type(x).__name__)}")
    return broadcast_gather(x, index)


def _take(table: torch.Tensor, actions: torch.Tensor, check: bool) -> torch.Tensor:
    if actions.dtype.is_floating_point or actions.dtype == torch.bool:
        raise TypeError(f"actions must be integer action indices, got dtype {actions.dtype}")
    if check and actions.numel() and (int(actions.min()) < 0 or int(actions.max()) >= table.shape[-1]):
        raise ValueError(f"actions must lie in 0..{table.shape[-1] - 1}")
    return torch.gather(table, -1, actions.long().unsqueeze(-1)).squeeze(-1)


class OtherPlay:
    """Draws per-agent relabellings for Other-Play (full group) or G-OP (a subgroup).

    Args:
        group: the group to draw from.
        observation, action: its representations on one agent's observation and action vectors.
        generator: the seeded ``torch.Generator`` that draws elements (never the global RNG).
        device: where the index tables live (the training device).
    """

    def __init__(
        self,
        group: PermutationGroup,
        observation: PermutationRepresentation,
        action: PermutationRepresentation,
        generator: torch.Generator,
        device: torch.device | str = "cpu",
    ) -> None:
        if not isinstance(generator, torch.Generator):
            raise TypeError("generator must be a seeded torch.Generator (Other-Play never uses the global RNG)")
        if not isinstance(group, PermutationGroup):
            raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
        if require_same_group([observation, action], ["observation", "action"]) != group:
            raise ValueError(f"observation and action must be representations of {group.name}")
        self.group, self.observation, self.action = group, observation, action
        self.generator, self.device = generator, torch.device(device)

    @classmethod
    def from_symmetry(
        cls,
        symmetry: Symmetry,
        generator: torch.Generator,
        *,
        subgroup: PermutationGroup | None = None,
        device: torch.device | str = "cpu",
    ) -> OtherPlay:
        """Other-Play over ``symmetry.group``, or G-OP over ``subgroup`` of it."""
        if subgroup is not None:
            symmetry = symmetry.restrict(subgroup)
        return cls(symmetry.group, symmetry.observation, symmetry.action, generator, device)

    def sample(self, *shape: int) -> Relabelling:
        """Uniform independent elements for a batch of shape ``shape`` (e.g. ``num_envs, num_agents``)."""
        for s in shape:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ValueError(f"shape must be non-negative ints, got {shape}")
        count = 1
        for s in shape:
            count *= s
        perms = self.group.random_permutations(count, self.generator).reshape(*shape, self.group.degree)
        return self.relabelling(perms)

    def relabelling(self, perms: torch.Tensor) -> Relabelling:
        """Index tables for given group elements (image arrays ``[..., degree]``)."""
        obs_coords = self.observation.coordinate_map(perms)
        act_coords = self.action.coordinate_map(perms)
        to = self.device
        return Relabelling(perms.to(to), invert(obs_coords).to(to), invert(act_coords).to(to), act_coords.to(to))
