"""Declaring how a group acts on a Dec-POMDP's label sets.

``Symmetry(group, acts_on=[colour], observation_layout=obs, action_layout=act)`` derives
the permutation representations ``observation_rep`` and ``action_rep``: every axis of a block
whose label set is acted on is permuted by the group; every other axis stays put. With
several label sets, the group acts on their concatenated points: the first label set is
points ``0..size_1-1``, the next ``size_1..size_1+size_2-1``, and so on (build such a group
with :func:`eqc.groups.direct_product`, or any group preserving those segments). The direction
is the one of :mod:`eqc.groups.representation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import torch

from eqc._checks import check_list
from eqc.dec_pomdp.layout import Labels, Layout
from eqc.groups import PermutationGroup, PermutationRepresentation, direct_sum, tensor_product
from eqc.groups.permutations import PermutationLike

__all__ = ["Symmetry"]


class Symmetry:
    """A group acting on the label sets ``acts_on`` of a Dec-POMDP's observation/action (and state) layouts.

    Layouts (what each coordinate means) and representations (how the group moves coordinates)
    have distinct names: the constructor takes ``observation_layout``, ``action_layout`` and
    ``state_layout``, kept as attributes of the same names; the derived representations are
    :attr:`observation_rep`, :attr:`action_rep` and :attr:`state_rep`.

    Args:
        group: the group; its points are the acted-on label sets, concatenated in order.
        acts_on: the :class:`~eqc.dec_pomdp.Labels` the group permutes (one, or a list).
        observation_layout, action_layout: :class:`~eqc.dec_pomdp.Layout` of one agent's
            observation and action vectors.
        state_layout: optional layout of the state vector.
    """

    def __init__(
        self,
        group: PermutationGroup,
        acts_on: Labels | Sequence[Labels],
        observation_layout: Layout | None = None,
        action_layout: Layout | None = None,
        state_layout: Layout | None = None,
    ) -> None:
        # Over 60 lines on purpose: it validates a user's declaration, naming the layout or label set that is wrong.
        observation = _required(observation_layout, "observation_layout")
        action = _required(action_layout, "action_layout")
        state = state_layout
        if not isinstance(group, PermutationGroup):
            raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
        if isinstance(acts_on, Labels):
            labels = [acts_on]
        else:
            labels = check_list(acts_on, "acts_on", item="Labels")
        if not labels:
            raise ValueError("acts_on must name at least one Labels")
        for k, lab in enumerate(labels):
            if not isinstance(lab, Labels):
                raise TypeError(f"acts_on[{k}] must be a Labels, got {type(lab).__name__}")
        names = [lab.name for lab in labels]
        if len(set(names)) != len(names):
            raise ValueError(f"acts_on names a label set twice: {names}")
        total = sum(lab.size for lab in labels)
        if total != group.degree:
            sizes = " + ".join(f"{lab.name}({lab.size})" for lab in labels)
            raise ValueError(
                f"the group acts on {group.degree} points but acts_on has {sizes} = {total} labels; "
                f"they must agree (use direct_product for several label sets)"
            )
        for name, layout in (("observation_layout", observation), ("action_layout", action), ("state_layout", state)):
            if layout is not None and not isinstance(layout, Layout):
                hint = " (a representation is derived from a Layout, not given)" if isinstance(layout, PermutationRepresentation) else ""
                raise TypeError(f"{name} must be a Layout, got {type(layout).__name__}{hint}")
        self.group = group
        self.acts_on = tuple(labels)
        self.observation_layout = observation
        self.action_layout = action
        self.state_layout = state
        self._segments: dict[str, tuple[int, int]] = {}
        offset = 0
        for lab in labels:
            self._segments[lab.name] = (offset, lab.size)
            offset += lab.size
        self._label_reps = {
            lab.name: PermutationRepresentation.on_points(group, start, size, name=lab.name)
            for lab, (start, size) in zip(labels, self._segments.values(), strict=False)
        }
        for name, layout in (("observation", observation), ("action", action), ("state", state)):
            if layout is not None:
                self._check_layout(name, layout)

        used = {axis.name for layout in (observation, action, state) if layout is not None for axis in layout.labels()}
        unused = [lab.name for lab in labels if lab.name not in used]
        if unused:
            raise ValueError(
                f"acts_on names label set(s) {unused} that no observation, action or state block uses, so the "
                f"declaration would move nothing there; label sets used by the layouts: {sorted(used)}"
            )

    def _check_layout(self, layout_name: str, layout: Layout) -> None:
        by_name = {lab.name: lab for lab in self.acts_on}
        for block in layout:
            for k, axis in enumerate(block.axes):
                if isinstance(axis, Labels) and axis.name in by_name and axis != by_name[axis.name]:
                    raise ValueError(
                        f"{layout_name} block {block.name!r}, axis {k}: label set {axis.name!r} has size "
                        f"{axis.size} but the symmetry acts on {axis.name!r} of size {by_name[axis.name].size}"
                    )
            if block.record is not None:
                self._check_layout(f"{layout_name} block {block.name!r}'s record", block.record)

    def _representation(self, layout: Layout, name: str) -> PermutationRepresentation:
        blocks = []
        for block in layout:
            axes = [
                self._label_reps[axis.name]
                if isinstance(axis, Labels) and axis.name in self._label_reps
                else PermutationRepresentation.trivial(self.group, axis.size if isinstance(axis, Labels) else axis)
                for axis in block.axes
            ]
            if block.record is not None:
                axes.append(self._representation(block.record, f"{block.name}.record"))
            blocks.append(tensor_product(*axes, name=block.name))
        if not blocks:
            return PermutationRepresentation.trivial(self.group, 0)
        return direct_sum(*blocks, name=name)

    @cached_property
    def observation_rep(self) -> PermutationRepresentation:
        """rho_obs on ``R^observation_layout.dim``."""
        return self._representation(self.observation_layout, "observation")

    @cached_property
    def action_rep(self) -> PermutationRepresentation:
        """rho_act on ``R^action_layout.dim`` (also relabels discrete actions via ``act_index``)."""
        return self._representation(self.action_layout, "action")

    @cached_property
    def state_rep(self) -> PermutationRepresentation:
        """rho_state, when a state layout was declared."""
        if self.state_layout is None:
            raise AttributeError("this Symmetry was declared without a state layout")
        return self._representation(self.state_layout, "state")

    def label_permutations(
        self, *, index: int | torch.Tensor | None = None, permutation: PermutationLike | None = None
    ) -> dict[str, torch.Tensor]:
        """How one group element relabels each acted-on label set: ``{name: LongTensor [size]}``, label ``c`` -> ``[c]``.

        The element is given as ``index=`` (an int or 0-d tensor: a row of ``group.elements``) or as
        ``permutation=`` (an image array ``[degree]``, for groups too large to list); see
        :class:`~eqc.groups.PermutationGroup`.
        """
        if (index is None) == (permutation is None):
            given = "both" if index is not None else "neither"
            raise TypeError(f"label_permutations takes one element, as index= or as permutation=, got {given}")
        if permutation is not None:
            perm = self.group.check_elements(permutations=permutation, name="permutation", batch_dims=0)
        else:
            perm = self.group.elements[self.group.check_elements(indices=index, name="index", batch_dims=0)]
        return {name: perm[start : start + size] - start for name, (start, size) in self._segments.items()}

    def restrict(self, subgroup: PermutationGroup) -> Symmetry:
        """The same declaration for a subgroup (e.g. a cyclic subgroup of a symmetric group)."""
        if not isinstance(subgroup, PermutationGroup):
            raise TypeError(f"subgroup must be a PermutationGroup, got {type(subgroup).__name__}")
        if not subgroup.is_subgroup_of(self.group):
            raise ValueError(f"{subgroup.name} is not a subgroup of {self.group.name}")
        return Symmetry(subgroup, self.acts_on, self.observation_layout, self.action_layout, self.state_layout)

    def __repr__(self) -> str:
        labels = ", ".join(f"{lab.name}({lab.size})" for lab in self.acts_on)
        return (
            f"Symmetry({self.group.name} on [{labels}], observation dim {self.observation_layout.dim}, "
            f"action dim {self.action_layout.dim})"
        )


def _required(value: Layout | None, name: str) -> Layout:
    if value is None:
        raise TypeError(f"Symmetry needs {name}: the Layout of one agent's {name.split('_')[0]} vector")
    return value
