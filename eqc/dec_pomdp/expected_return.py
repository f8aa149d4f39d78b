"""Expected-return symmetries found by exact search over label permutations.

A Dec-POMDP symmetry maps every policy to one with the same expected return. Muglich, Forkel, van der Pol and
Foerster ("Expected Return Symmetries", ICLR 2025) relax that: a map of policies is an *expected-return (ER)
symmetry* of a set of policies when it preserves their expected return. It may relate conventions that no symmetry
of the game relates (in Hanabi, "play slot 0" and "play slot 1", though slot order is card age).

:func:`search_label_permutations` searches a *candidate group* acting on declared label sets (a
:class:`~eqc.dec_pomdp.Symmetry`, e.g. colours x hand slots) against a frozen pool of policies:

1. For every candidate element g, ``returns(g, 0)`` gives each pool member's expected return when it plays
   relabelled by g (``K_g^-1 pi(L_g o)``, every seat); its **return loss** is the identity's return minus that,
   averaged over the pool.
2. Elements whose loss is at most ``tolerance`` are accepted; the accepted set is closed under composition.
3. Every element of the closure is measured again, ``returns(g, 1)`` (fresh chance, e.g. new decks), and recorded.

The closure is a group: :attr:`ExpectedReturnGroup.symmetry` is the candidate declaration restricted to it, which
:class:`~eqc.symmetrize.OtherPlay` (Other-Play and G-OP) and :class:`~eqc.symmetrize.Symmetrizer` take unchanged.
The group is an empirical finding about one pool: its elements are exact symmetries of the game only where the
game's own check (:func:`eqc.verification.check_env_symmetry`) says so. ``cross_play`` (the ERS paper's variant
for conventions a pool does not share) also records, per element, the mean of XP(pi_i, g.pi_j) over ordered pairs
of distinct members; it is reported, never used to accept.

The search is exact over the candidate group (every element measured), so it suits label permutations (36 elements
for colour S3 x slot S3); the ERS paper's neural maps search a continuous family instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_float
from eqc.dec_pomdp.layout import Labels, Layout
from eqc.dec_pomdp.symmetry import Symmetry
from eqc.groups import PermutationGroup
from eqc.io import read_json

__all__ = ["FILE_KIND", "ElementLoss", "ExpectedReturnGroup", "load_group_symmetry", "read_group_file", "search_label_permutations"]

FILE_KIND = "eqc.expected_return_group"
"""The ``kind`` of an expected-return group file (:meth:`ExpectedReturnGroup.save`)."""

Returns = Callable[[torch.Tensor, int], torch.Tensor]
"""``returns(permutation, measurement) -> [pool]``: each member's expected return relabelled by ``permutation``."""
CrossPlay = Callable[[torch.Tensor, int], torch.Tensor]
"""``cross_play(permutation, measurement) -> [pool, pool]``: entry ``[i, j]`` is XP(pi_i, g.pi_j)."""


@dataclass(frozen=True)
class ElementLoss:
    """One element's measurement: ``permutation`` (an image array on the candidate group's points), each pool member's
    return ``per_member``, the return ``loss`` (the identity's mean return minus this element's) and ``cross_play``
    (mean XP(pi_i, g.pi_j) over ordered pairs of distinct members; NaN when not measured)."""

    permutation: tuple[int, ...]
    per_member: tuple[float, ...]
    loss: float
    cross_play: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        return {"permutation": list(self.permutation), "per_member": list(self.per_member), "loss": self.loss,
                "cross_play": None if math.isnan(self.cross_play) else self.cross_play}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ElementLoss:
        xp = data.get("cross_play")
        return cls(tuple(int(x) for x in data["permutation"]), tuple(float(x) for x in data["per_member"]), float(data["loss"]),
                   math.nan if xp is None else float(xp))


@dataclass(frozen=True)
class ExpectedReturnGroup:
    """What :func:`search_label_permutations` found.

    Attributes:
        symmetry: the candidate declaration restricted to the learned group (the closure of the accepted elements).
        tolerance: the largest return loss accepted.
        candidates: every candidate element's first measurement, in the candidate group's order.
        members: every element of the learned group measured again (the identity first).
        accepted: the candidate rows whose first loss was within ``tolerance``.
    """

    symmetry: Symmetry
    tolerance: float
    candidates: tuple[ElementLoss, ...]
    members: tuple[ElementLoss, ...]
    accepted: tuple[int, ...]

    @property
    def group(self) -> PermutationGroup:
        """The learned group (on the candidate's points: the acted-on label sets, concatenated)."""
        return self.symmetry.group

    @property
    def worst_loss(self) -> float:
        """The largest re-measured return loss over the learned group's elements."""
        return max(m.loss for m in self.members)

    def to_dict(self, **context: Any) -> dict[str, Any]:
        """A JSON-ready record; ``context`` (e.g. the pool's directories, the game) is stored under ``"context"``."""
        return {
            "kind": FILE_KIND, "version": 1,
            "acts_on": [{"name": lab.name, "size": lab.size} for lab in self.symmetry.acts_on],
            "tolerance": self.tolerance,
            "group": [list(map(int, p)) for p in self.group.elements.tolist()],
            "accepted": list(self.accepted),
            "candidates": [c.as_dict() for c in self.candidates],
            "members": [m.as_dict() for m in self.members],
            "context": context,
        }

    def save(self, path: str | Path, **context: Any) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` (a new file; an existing one is refused, so nothing saved is lost)."""
        out = Path(path)
        if out.exists():
            raise FileExistsError(f"{out} exists: an expected-return group is written once; choose a new path or remove it")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(self.to_dict(**context), indent=2) + "\n")
        return out


def read_group_file(path: str | Path) -> dict[str, Any]:
    """The record of an expected-return group file, checked: ValueError naming the file and the key that is wrong."""
    p = Path(path)
    data = read_json(p, "expected-return group file")
    if not isinstance(data, dict) or data.get("kind") != FILE_KIND:
        raise ValueError(f"{p}: 'kind' must be {FILE_KIND!r} (written by ExpectedReturnGroup.save), got "
                         f"{data.get('kind') if isinstance(data, dict) else type(data).__name__!r}")
    labels = data.get("acts_on")
    if not isinstance(labels, list) or not labels or not all(
            isinstance(x, dict) and isinstance(x.get("name"), str) and isinstance(x.get("size"), int) and x["size"] >= 1 for x in labels):
        raise ValueError(f"{p}: 'acts_on' must be a non-empty list of {{name, size}}, got {labels!r}")
    degree = sum(x["size"] for x in labels)
    rows = data.get("group")
    if (not isinstance(rows, list) or not rows
            or not all(isinstance(r, list) and sorted(r) == list(range(degree)) for r in rows)):
        raise ValueError(f"{p}: 'group' must list permutations of 0..{degree - 1} (the label sets' points)")
    if rows[0] != list(range(degree)):
        raise ValueError(f"{p}: 'group' must list the identity first")
    return data


def load_group_symmetry(path: str | Path, observation_layout: Layout, action_layout: Layout) -> Symmetry:
    """The learned group of the file at ``path`` (:meth:`ExpectedReturnGroup.save`) acting on ``observation_layout`` and
    ``action_layout`` (the game's, which must use the file's label sets at the file's sizes): what ``OtherPlay`` takes.
    ValueError naming the file and what is wrong."""
    data = read_group_file(path)
    labels = [Labels(x["name"], x["size"]) for x in data["acts_on"]]
    rows = torch.tensor(data["group"], dtype=torch.long)
    group = PermutationGroup.from_generators(rows, degree=rows.shape[1], name=f"learned ({Path(path).name})")
    listed = {tuple(r) for r in data["group"]}
    if group.order != len(listed) or any(tuple(e) not in listed for e in group.elements.tolist()):
        raise ValueError(f"{path}: 'group' lists {len(listed)} permutations that are not a group (they generate {group.order})")
    used = {lab.name: lab for layout in (observation_layout, action_layout) for lab in layout.labels()}
    for lab in labels:
        if used.get(lab.name) != lab:
            found = f"size {used[lab.name].size}" if lab.name in used else "no such label set"
            raise ValueError(f"{path}: acts on label set {lab.name!r} of size {lab.size}, but this game's layouts have {found}")
    return Symmetry(group, acts_on=labels, observation_layout=observation_layout, action_layout=action_layout)


def search_label_permutations(
    candidate: Symmetry,
    returns: Returns,
    *,
    tolerance: float,
    cross_play: CrossPlay | None = None,
    measured: Sequence[ElementLoss] | None = None,
) -> ExpectedReturnGroup:
    """Search ``candidate.group`` for expected-return symmetries of a pool (the module docstring's three steps).

    ``returns(permutation, measurement)``: a float tensor ``[pool]`` of each member's expected return when it plays
    relabelled by ``permutation`` (an image array on the candidate's points), ``measurement`` 0 for the search and 1
    for the re-measurement (use fresh chance for 1). ``tolerance``: the largest accepted return loss (>= 0).
    ``cross_play``: optional, the XP variant's ``[pool, pool]`` matrix (recorded, not used to accept).
    ``measured``: a previous search's first measurements of this candidate group on the same pool and chance
    (``ExpectedReturnGroup.candidates``, every element in the group's order): step 1 is skipped, so another
    tolerance costs only the re-measurement.
    """
    if not isinstance(candidate, Symmetry):
        raise TypeError(f"candidate must be an eqc Symmetry (the candidate group on declared label sets), got {type(candidate).__name__}")
    if not callable(returns):
        raise TypeError(f"returns must be a callable (permutation, measurement) -> tensor [pool], got {type(returns).__name__}")
    if cross_play is not None and not callable(cross_play):
        raise TypeError("cross_play must be None or a callable (permutation, measurement) -> [pool, pool], "
                        f"got {type(cross_play).__name__}")
    tolerance = check_float(tolerance, "tolerance", low=0.0)
    group = candidate.group
    if not group.is_enumerable:
        raise ValueError(f"the candidate group {group.name} has {group.order} elements, too many to search exactly")
    elements = group.elements
    if measured is None:
        first = [_measure(elements[k], 0, returns, cross_play) for k in range(group.order)]
        first = [_with_loss(e, first[0].per_member) for e in first]
    else:
        first = _check_measured(measured, elements)
    accepted = tuple(k for k, e in enumerate(first) if e.loss <= tolerance)
    closure = group.subgroup(elements[list(accepted)], name=f"learned from {group.name}")
    again = [_measure(closure.elements[k], 1, returns, cross_play) for k in range(closure.order)]
    again = [_with_loss(e, again[0].per_member) for e in again]
    return ExpectedReturnGroup(candidate.restrict(closure), tolerance, tuple(first), tuple(again), accepted)


def _measure(permutation: torch.Tensor, measurement: int, returns: Returns, cross_play: CrossPlay | None) -> ElementLoss:
    values = returns(permutation.clone(), measurement)
    if not isinstance(values, torch.Tensor) or values.dim() != 1 or not values.numel() or not bool(torch.isfinite(values).all()):
        raise ValueError(f"returns must give a finite 1-D tensor [pool], got {values!r} for element {permutation.tolist()}")
    xp = math.nan
    if cross_play is not None:
        matrix = cross_play(permutation.clone(), measurement)
        n = values.numel()
        if not isinstance(matrix, torch.Tensor) or tuple(matrix.shape) != (n, n):
            raise ValueError(f"cross_play must give a [{n}, {n}] tensor, got {getattr(matrix, 'shape', type(matrix).__name__)}")
        off = ~torch.eye(n, dtype=torch.bool)
        xp = float(matrix.double()[off].mean()) if n > 1 else math.nan
    return ElementLoss(tuple(permutation.tolist()), tuple(float(v) for v in values.tolist()), math.nan, xp)


def _check_measured(measured: Sequence[ElementLoss], elements: torch.Tensor) -> list[ElementLoss]:
    listed = [tuple(int(x) for x in e) for e in elements.tolist()]
    if not all(isinstance(m, ElementLoss) for m in measured) or [m.permutation for m in measured] != listed:
        raise ValueError(f"measured must hold an ElementLoss for every element of the candidate group, in its order "
                         f"({len(listed)} elements); got {len(measured)} entries that do not match")
    return list(measured)


def _with_loss(element: ElementLoss, baseline: Sequence[float]) -> ElementLoss:
    if len(baseline) != len(element.per_member):
        raise ValueError(f"returns gave {len(element.per_member)} members for element {list(element.permutation)} and "
                         f"{len(baseline)} for the identity; the pool must be the same for every element")
    loss = sum(baseline) / len(baseline) - sum(element.per_member) / len(element.per_member)
    return ElementLoss(element.permutation, element.per_member, loss, element.cross_play)
