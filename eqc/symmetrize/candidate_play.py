"""Other-Play over a :class:`~eqc.dec_pomdp.CandidateSet` of learned neural maps (not a group).

Each agent plays each episode through one draw of the candidate set: index 0 is the identity, index ``k`` the map
phi_k = (f_k, sigma_k) (:class:`~eqc.dec_pomdp.CandidateMap`). The learner's network pi is the policy the map acts
on, so phi_k(pi) is what plays the game (:mod:`eqc.dec_pomdp.neural_maps`' convention,
``logits'(o)[sigma(a)] = logits(f(o))[a]``, masked by the real legal moves):

- the agent sees ``f_k(o)`` for the game's observation ``o`` (the map runs under ``torch.no_grad()``: it is frozen
  while the agent trains);
- its legal moves, in its own frame, are the real ones gathered through sigma_k: ``legal'[a] = legal[sigma_k(a)]``;
- the move ``a`` it chooses in its frame is played in the game as ``sigma_k(a)``; a real move ``m`` is
  ``sigma_k^-1(m)`` in its frame.

What a learner records (observations, legal moves, actions) is therefore in the agent's frame, as under a group's
relabelling (:class:`~eqc.symmetrize.Relabelling`, whose verbs :class:`CandidateRelabelling` shares). Partner moves
that the game writes into an observation (the last action, a SAD greedy move) are written there in the real game's
labels, and f_k acts on the whole observation vector: there is no separate table for them as a group's
observation permutation has, because f_k is a learned map of the whole vector, not a relabelling of its labels. Whether
f_k maps the recorded partner move as sigma_k would is whatever the map learned; nothing here forces it.

:class:`CandidatePlay` keeps the maps on the training device and builds a :class:`CandidateRelabelling` from draw
indices (:meth:`CandidatePlay.relabelling_indices`, no host round trip), as :class:`~eqc.symmetrize.OtherPlay` does
from group element indices; the draws themselves are the caller's (a seeded generator, uniform over ``size``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from eqc._checks import check_bool, check_device, check_tensor
from eqc.dec_pomdp.candidate_set import CandidateSet
from eqc.dec_pomdp.neural_maps import CandidateMap
from eqc.groups.permutations import inverse_permutations
from eqc.groups.representation import broadcast_gather
from eqc.symmetrize.other_play import _take

__all__ = ["CandidatePlay", "CandidateRelabelling"]


@dataclass(frozen=True)
class CandidateRelabelling:
    """One candidate-set draw per (env, agent): its index and the move tables of its map.

    ``indices [...]``: the draw (0 the identity, ``k`` the map ``maps[k - 1]``); ``action_index [..., A]``: sigma of the
    drawn map (the identity for index 0), the move played for the agent's move ``a`` being ``action_index[a]``;
    ``action_coordinates [..., A]``: its inverse; ``maps``: the set's maps, frozen, on the tables' device.

    Its verbs are :class:`~eqc.symmetrize.Relabelling`'s: :meth:`relabel_observations`, :meth:`relabel_legal_actions`,
    :meth:`to_env_actions`, :meth:`to_agent_actions`, and :meth:`take` (rows of a batch).
    """

    indices: torch.Tensor
    action_index: torch.Tensor
    action_coordinates: torch.Tensor
    maps: tuple[CandidateMap, ...]

    def relabel_observations(self, obs: torch.Tensor) -> torch.Tensor:
        """What each agent sees: ``f_k(obs)`` for ``obs [..., d]`` with leading dims ``indices.shape`` (``obs`` itself,
        bit for bit, where the draw is the identity); in ``obs``' dtype, computed without gradients."""
        check_tensor(obs, "obs", last=self.maps[0].observation_size if self.maps else None)
        if obs.shape[:-1] != self.indices.shape:
            raise ValueError(f"obs must have leading dims {tuple(self.indices.shape)} (one per draw), got {tuple(obs.shape)}")
        out = obs
        with torch.no_grad():
            for k, phi in enumerate(self.maps, start=1):
                mapped = phi(obs.to(phi.biases[0].dtype)).to(obs.dtype)
                out = torch.where((self.indices == k).unsqueeze(-1), mapped, out)
        return out

    def relabel_legal_actions(self, legal: torch.Tensor) -> torch.Tensor:
        """Legal moves in each agent's frame: ``legal'[a] = legal[sigma_k(a)]`` (the real game's, gathered)."""
        check_tensor(legal, "legal", last=self.action_index.shape[-1])
        return broadcast_gather(legal, self.action_index)

    def to_env_actions(self, actions: torch.Tensor, *, check: bool = True) -> torch.Tensor:
        """The real game's moves for the agents' ``actions`` (chosen in their frames): ``sigma_k(a)``. ``check=False``
        skips the range check (which synchronises with the device) in hot loops."""
        return _take(self.action_index, actions, check)

    def to_agent_actions(self, actions: torch.Tensor, *, check: bool = True) -> torch.Tensor:
        """Real moves in each agent's frame: ``sigma_k^-1(m)``."""
        return _take(self.action_coordinates, actions, check)

    def take(self, *index: torch.Tensor) -> CandidateRelabelling:
        """The draws at ``indices[index]`` (e.g. ``take(rows, current)``: each game's acting agent)."""
        return CandidateRelabelling(self.indices[index], self.action_index[index], self.action_coordinates[index], self.maps)


class CandidatePlay:
    """Builds per-agent :class:`CandidateRelabelling` from draw indices over a :class:`~eqc.dec_pomdp.CandidateSet`.

    Args:
        candidates: the set (identity + its maps: :attr:`size` draw indices).
        device: where the maps (copies, frozen) and the move tables live (the training device).
    """

    def __init__(self, candidates: CandidateSet, device: torch.device | str = "cpu") -> None:
        if not isinstance(candidates, CandidateSet):
            raise TypeError(f"candidates must be a CandidateSet (load_candidate_set), got {type(candidates).__name__}")
        self.candidates, self.device = candidates, check_device(device)
        maps = []
        for learned in candidates.maps:
            phi = copy.deepcopy(learned.map).to(self.device)
            phi.requires_grad_(False)
            phi.eval()
            maps.append(phi)
        self.maps: tuple[CandidateMap, ...] = tuple(maps)
        first = candidates.maps[0].map
        self.observation_size, self.num_moves = first.observation_size, first.num_moves
        identity = torch.arange(self.num_moves)
        sigma = torch.stack([identity, *(m.map.move_permutation.cpu() for m in candidates.maps)])
        self.action_index = sigma.to(self.device)  # [size, A]: row k is sigma_k
        self.action_coordinates = inverse_permutations(sigma).to(self.device)

    @property
    def size(self) -> int:
        """How many draw indices there are: the identity and the maps."""
        return self.candidates.size

    def relabelling_indices(self, indices: torch.Tensor, *, check: bool = True) -> CandidateRelabelling:
        """The :class:`CandidateRelabelling` of draws ``indices [...]`` (integers in ``0..size-1``) on this device.
        ``check=False`` skips the range check (which reads the indices back)."""
        check_tensor(indices, "indices")
        check_bool(check, "check")
        if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == torch.bool:
            raise TypeError(f"indices must be integer draw indices, got dtype {indices.dtype}")
        if check and indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= self.size):
            raise ValueError(f"indices must lie in 0..{self.size - 1} (identity + {self.size - 1} maps)")
        index = indices.to(self.device).long()
        return CandidateRelabelling(index, self.action_index[index], self.action_coordinates[index], self.maps)
