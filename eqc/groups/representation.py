"""Permutation representations: a group acting on R^d by moving coordinates.

This module is where eqc's direction convention is defined; every other module refers here.
Under element ``g`` the feature at coordinate ``c`` moves to coordinate ``perm_g(c)``::

    (rho(g) x)[perm_g(c)] = x[c]        equivalently   (rho(g) x)[j] = x[perm_g^-1(j)]

where ``perm_g`` is ``g``'s coordinate permutation. With the product of
:mod:`eqc.groups.permutations` (``(g * h)[i] = g[h[i]]``) this is a homomorphism,
``rho(g * h) = rho(g) rho(h)``. For a declared symmetry, the feature for label ``c`` moves to
label ``g(c)``.

A representation is stored as a vectorised map from group permutations ``[k, degree]`` to
coordinate permutations ``[k, dim]``, so it works for any group, also one too large to
list. For listable groups the map is evaluated once into :attr:`PermutationRepresentation.coordinate_permutations`
``[order, dim]`` and applying ``rho(g)`` is a single gather; no dense matrix is formed. The tables
are copied once to each device they are used on (:meth:`PermutationRepresentation.device_table`);
acting with element indices on that device, or with one int element, never goes through the host.
Elements come in the two forms of :class:`~eqc.groups.PermutationGroup`, named by the argument and
checked by its :meth:`~eqc.groups.PermutationGroup.check_elements`; permutations are mapped to
coordinates on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import torch

from eqc._checks import check_bool, check_int, check_integers, check_tensor
from eqc.groups.group import PermutationGroup
from eqc.groups.permutations import compose_permutations, inverse_permutations

__all__ = [
    "DENSE_MATRIX_LIMIT",
    "CoordinateMap",
    "PermutationRepresentation",
    "broadcast_gather",
    "direct_sum",
    "require_same_group",
    "tensor_product",
]

CoordinateMap = Callable[[torch.Tensor], torch.Tensor]
#: Largest dense ``[order, dim, dim]`` tensor :meth:`PermutationRepresentation.matrices` builds.
DENSE_MATRIX_LIMIT = 50_000_000


class PermutationRepresentation:
    """A permutation representation of ``group`` on ``R^dim`` (direction: see :mod:`eqc.groups.representation`).

    Build one with :meth:`standard`, :meth:`on_points`, :meth:`trivial`, :meth:`from_table`,
    :func:`direct_sum` or :func:`tensor_product`.

    Apply it with the ``act`` family. Every method takes ``inverse=False`` (``True`` applies
    ``rho(g)^-1``), and the elements come in the form the name says (:class:`~eqc.groups.PermutationGroup`):
    *indices* (``g``, ``indices=``) or *permutations* ``[..., degree]`` (``perms``, ``permutations=``; any group size):

    | what                   | elements as indices                  | elements as permutations                      |
    |------------------------|--------------------------------------|-----------------------------------------------|
    | one element per vector | :meth:`act` ``(x, g)``               | :meth:`act_permutations` ``(x, perms)``       |
    | every element, each x  | :meth:`act_all` ``(x, indices=...)`` | :meth:`act_all` ``(x, permutations=...)``     |
    | one coordinate index   | :meth:`act_index` ``(c, g)``         | :meth:`act_index_permutations` ``(c, perms)`` |

    Broadcasting rule (:meth:`act`, :meth:`act_permutations`, :meth:`act_index`): one element per
    vector. The element tensor's batch shape broadcasts against the vectors' batch shape
    ``x.shape[:-1]`` right-aligned, as in numpy, and the result has the batch shape of one of
    the two, never a combination: ``x [B, d]`` with ``g [B]`` (one element per row) or
    ``g []`` (one for all) is fine; ``x [B, P, d]`` with ``g [B, 1]`` (one per row, shared
    over ``P``) is fine; ``x [B, d]`` with ``g [B, 1]``, which numpy would broadcast to
    ``[B, B, d]``, is refused. Use :meth:`act_all` for every element on each vector.
    """

    def __init__(self, group: PermutationGroup, dim: int, coordinate_map: CoordinateMap, *, name: str = "rho") -> None:
        if not isinstance(group, PermutationGroup):
            raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
        check_int(dim, "dim", low=0)
        self.group = group
        self.dim = dim
        self.name = name
        self._map = coordinate_map
        self._device_tables: dict[tuple[torch.device, str], torch.Tensor] = {}

    # ------------------------------------------------------------------ constructors
    @classmethod
    def standard(cls, group: PermutationGroup) -> PermutationRepresentation:
        """The defining representation on ``R^degree``: coordinate ``i`` moves to ``g[i]``."""
        return cls.on_points(group, 0, group.degree, name="standard")

    @classmethod
    def on_points(cls, group: PermutationGroup, start: int, size: int, *, name: str = "points") -> PermutationRepresentation:
        """The action on the points ``start .. start+size-1``, which the group must map onto themselves."""
        check_int(start, "start", low=0)
        check_int(size, "size", low=0)
        stop = start + size
        if stop > group.degree:
            raise ValueError(f"points {start}..{stop - 1} are outside the group's 0..{group.degree - 1}")
        block = group.generators[:, start:stop]
        if bool(((block < start) | (block >= stop)).any()):
            raise ValueError(
                f"{group.name} does not map the points {start}..{stop - 1} onto themselves, "
                f"so it has no action on them alone"
            )
        return cls(group, size, lambda perms: perms[..., start:stop] - start, name=name)

    @classmethod
    def trivial(cls, group: PermutationGroup, dim: int) -> PermutationRepresentation:
        """Every element fixes every coordinate."""
        check_int(dim, "dim", low=0)
        return cls(group, dim, lambda perms: torch.arange(dim).expand(*perms.shape[:-1], dim), name="trivial")

    @classmethod
    def from_table(
        cls, group: PermutationGroup, coordinate_permutations: torch.Tensor, *, name: str = "table"
    ) -> PermutationRepresentation:
        """A representation given by its coordinate permutation for every element (row k for element k).

        Checked to be a homomorphism on every (element, generator) pair, which implies it for all pairs.
        """
        table = torch.as_tensor(coordinate_permutations, dtype=torch.long)
        if table.dim() != 2 or table.shape[0] != group.order:
            raise ValueError(
                f"coordinate_permutations must have shape [order={group.order}, dim], got {tuple(table.shape)}"
            )
        dim = table.shape[1]
        if not torch.equal(torch.sort(table, dim=-1).values, torch.arange(dim).expand_as(table)):
            raise ValueError("every row of coordinate_permutations must be a permutation of 0..dim-1")
        gens = group.permutation_to_index(group.generators)
        products = group.compose_indices(torch.arange(group.order)[:, None], gens[None, :])
        if not torch.equal(table[products], compose_permutations(table[:, None, :], table[gens][None, :, :])):
            raise ValueError("coordinate_permutations is not a homomorphism: rho(g*h) != rho(g) rho(h) for some g, h")
        return cls(group, dim, lambda perms: table[group.permutation_to_index(perms)], name=name)

    # ------------------------------------------------------------------ tables
    def coordinate_map(self, perms: torch.Tensor) -> torch.Tensor:
        """Coordinate permutations ``[..., dim]`` (CPU) of group elements given as permutations ``[..., degree]``
        (any group size), checked by :meth:`~eqc.groups.PermutationGroup.check_elements`."""
        if self.group.is_enumerable:  # look the cached table up rather than rebuild the map
            index = self.group.permutation_to_index(perms)
            return self.coordinate_permutations[index.to(self.coordinate_permutations.device)]
        return self._map(self.group.check_elements(permutations=perms, name="perms"))

    @cached_property
    def coordinate_permutations(self) -> torch.Tensor:
        """``[order, dim]``: under element ``k``, coordinate ``c`` moves to ``[k, c]``."""
        return self._map(self.group.elements).contiguous()

    @cached_property
    def gather_index(self) -> torch.Tensor:
        """``[order, dim]``: ``(rho(g) x)[j] = x[gather_index[g, j]]`` (the inverse permutations)."""
        return inverse_permutations(self.coordinate_permutations).contiguous()

    def device_table(self, kind: str, device: torch.device | str) -> torch.Tensor:
        """:attr:`gather_index` (``kind="gather"``) or :attr:`coordinate_permutations` (``"coordinates"``) on
        ``device``, copied there once and kept: acting gathers rows of it and never leaves the device."""
        key = (torch.device(device), kind)
        if key not in self._device_tables:
            if kind not in ("gather", "coordinates"):
                raise ValueError(f"kind must be 'gather' or 'coordinates', got {kind!r}")
            table = self.gather_index if kind == "gather" else self.coordinate_permutations
            self._device_tables[key] = table.to(key[0])
        return self._device_tables[key]

    def matrices(self) -> torch.Tensor:
        """Dense matrices ``[order, dim, dim]`` with ``rho(g) e_c = e_{perm_g(c)}``; for small cases and tests only."""
        size = self.group.order * self.dim * self.dim
        if size > DENSE_MATRIX_LIMIT:
            raise ValueError(
                f"dense matrices would hold {size:,} entries (limit {DENSE_MATRIX_LIMIT:,}); use act() instead"
            )
        mats = torch.zeros(self.group.order, self.dim, self.dim)
        cols = torch.arange(self.dim).expand(self.group.order, -1)
        mats[torch.arange(self.group.order)[:, None], self.coordinate_permutations, cols] = 1.0
        return mats

    # ------------------------------------------------------------------ acting
    def _check_input(self, x: torch.Tensor, name: str = "x") -> None:
        check_tensor(x, name)
        if x.dim() == 0 or x.shape[-1] != self.dim:
            raise ValueError(
                f"{name} must have last dimension {self.dim} (the dimension of {self.name}), got shape {tuple(x.shape)}"
            )

    def _element_index(
        self, g: int | torch.Tensor, device: torch.device, name: str = "g", batch_dims: int | None = None
    ) -> int | torch.Tensor:
        """Checked element indices on ``device``; an int stays an int (one row of a table: no tensor is built)."""
        index = self.group.check_elements(indices=g, name=name, batch_dims=batch_dims)
        return index if isinstance(index, int) else index.to(device)

    def act(self, x: torch.Tensor, g: int | torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        """``rho(g) x`` (``rho(g)^-1 x`` with ``inverse=True``): ``x [..., dim]``, ``g`` element indices.

        ``g`` is one index (int) or a LongTensor of indices, one per vector, under the class's
        broadcasting rule (``x [B, d]`` takes ``g [B]``, not ``[B, 1]``). One gather.
        """
        self._check_input(x)
        check_bool(inverse, "inverse")
        index = self._element_index(g, x.device)
        _check_one_element_per_vector(x.shape[:-1], _shape(index), "g")
        return broadcast_gather(x, self.device_table("coordinates" if inverse else "gather", x.device)[index])

    def act_permutations(self, x: torch.Tensor, perms: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        """``rho(p) x`` (``rho(p)^-1 x`` with ``inverse=True``) for group elements given as permutations
        ``[..., degree]`` (e.g. sampled from a group too large to list); broadcasting as for :meth:`act`."""
        self._check_input(x)
        check_bool(inverse, "inverse")
        coords = self.coordinate_map(perms).to(x.device)
        _check_one_element_per_vector(x.shape[:-1], coords.shape[:-1], "perms")
        return broadcast_gather(x, coords if inverse else inverse_permutations(coords))

    def act_all(
        self,
        x: torch.Tensor,
        *,
        indices: torch.Tensor | None = None,
        permutations: torch.Tensor | None = None,
        inverse: bool = False,
    ) -> torch.Tensor:
        """Every element on every vector, one gather.

        The elements are ``indices [k]`` or ``permutations [k, degree]`` (at most one of them; default: all
        ``order`` elements, in row order). ``inverse=False``: ``x [..., dim]`` -> ``[..., k, dim]``, copy ``k``
        being ``rho(g_k) x``. ``inverse=True`` undoes that: ``x [..., k, dim]`` -> ``rho(g_k)^-1 x[..., k, :]``.
        """
        self._check_input(x)
        check_bool(inverse, "inverse")
        if permutations is not None:
            checked = self.group.check_elements(indices=indices, permutations=permutations, batch_dims=1)
            coords = self.coordinate_map(checked).to(x.device)
            table = coords if inverse else inverse_permutations(coords)
        else:
            table = self.device_table("coordinates" if inverse else "gather", x.device)
            if indices is not None:
                table = table[self._element_index(indices, x.device, "indices", batch_dims=1)]
        k = table.shape[0]
        if not inverse:
            # index_select on the flattened table is several times faster than x[..., table] on CPU
            return torch.index_select(x, -1, table.reshape(-1)).view(*x.shape[:-1], *table.shape)
        if x.dim() < 2 or x.shape[-2] != k:
            raise ValueError(f"with inverse=True, x must have shape [..., {k}, {self.dim}] (one copy per element), got {tuple(x.shape)}")
        flat = table + self.dim * torch.arange(k, device=x.device).unsqueeze(-1)  # row g reads copy g
        return torch.index_select(x.reshape(*x.shape[:-2], k * self.dim), -1, flat.reshape(-1)).view(x.shape)

    def act_index(self, index: int | torch.Tensor, g: int | torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        """Where coordinate ``index`` moves under element index ``g``: ``perm_g(index)`` (``perm_g^-1`` with
        ``inverse=True``), e.g. to relabel a discrete action. ``index`` and ``g`` broadcast, one element per index."""
        idx = self._check_coordinate_index(index)
        check_bool(inverse, "inverse")
        element = self._element_index(g, idx.device)
        _check_one_element_per_vector(idx.shape, _shape(element), "g", what="index")
        return self.device_table("gather" if inverse else "coordinates", idx.device)[element, idx]

    def act_index_permutations(self, index: int | torch.Tensor, perms: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        """:meth:`act_index` for group elements given as permutations ``[..., degree]``."""
        idx = self._check_coordinate_index(index)
        check_bool(inverse, "inverse")
        coords = self.coordinate_map(perms).to(idx.device)
        _check_one_element_per_vector(idx.shape, coords.shape[:-1], "perms", what="index")
        table = inverse_permutations(coords) if inverse else coords
        shape = torch.broadcast_shapes(idx.shape, table.shape[:-1])
        return torch.gather(table.expand(*shape, self.dim), -1, idx.expand(shape).unsqueeze(-1)).squeeze(-1)

    def _check_coordinate_index(self, index: int | torch.Tensor) -> torch.Tensor:
        """Coordinate indices (not elements) as a LongTensor; range-checked on the CPU only (no device read)."""
        if isinstance(index, bool) or not isinstance(index, (int, torch.Tensor)):
            raise TypeError(f"index must be a coordinate index (an int or a LongTensor), got {type(index).__name__}")
        return check_integers(index, "index", what="coordinate indices", high=self.dim, context=f" (the coordinates of {self.name})")

    # ------------------------------------------------------------------ derived representations
    def restrict(self, subgroup: PermutationGroup) -> PermutationRepresentation:
        """The same action restricted to ``subgroup`` (which must be a subgroup of :attr:`group`)."""
        if not isinstance(subgroup, PermutationGroup):
            raise TypeError(f"subgroup must be a PermutationGroup, got {type(subgroup).__name__}")
        if not subgroup.is_subgroup_of(self.group):
            raise ValueError(f"{subgroup.name} is not a subgroup of {self.group.name}")
        return PermutationRepresentation(subgroup, self.dim, self._map, name=self.name)

    def __add__(self, other: PermutationRepresentation) -> PermutationRepresentation:
        return direct_sum(self, other)

    def __repr__(self) -> str:
        return f"PermutationRepresentation({self.name}, dim={self.dim}, group={self.group.name})"


def _shape(index: int | torch.Tensor) -> torch.Size:
    """The batch shape of element indices (``[]`` for one int)."""
    return index.shape if isinstance(index, torch.Tensor) else torch.Size()


def _check_one_element_per_vector(batch: torch.Size, elements: torch.Size, name: str, what: str = "x") -> None:
    """Refuse element shapes that would broadcast to a combination of both batch shapes (an outer product)."""
    try:
        shape = torch.broadcast_shapes(batch, elements)
    except RuntimeError:
        raise ValueError(
            f"{name} of batch shape {list(elements)} does not broadcast against {what}'s batch shape {list(batch)}"
        ) from None
    if shape != batch and shape != elements:
        hint = f"; for one element per row pass {name}.squeeze(-1)" if len(elements) and elements[-1] == 1 else ""
        raise ValueError(
            f"{name} of batch shape {list(elements)} against {what}'s batch shape {list(batch)} would broadcast to "
            f"{list(shape)}, a combination of both: give one element per vector (shape {list(batch)}, or one that "
            f"broadcasts to it){hint}, or use act_all for every element on each vector"
        )


def broadcast_gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``out[..., j] = x[..., index[..., j]]``, broadcasting the leading dims of ``x`` and ``index`` (numpy-style)."""
    shape = (*torch.broadcast_shapes(x.shape[:-1], index.shape[:-1]), index.shape[-1])
    return torch.gather(x.expand(shape), -1, index.to(x.device).expand(shape))


def require_same_group(reps: Sequence[object], names: Sequence[str] | None = None) -> PermutationGroup:
    """Check that every entry is a PermutationRepresentation (``None`` entries are skipped) of one group; return it.

    Callers for which ``None`` is not allowed check that first (see the symmetrizer).
    """
    names = list(names) if names is not None else [f"reps[{k}]" for k in range(len(reps))]
    group: PermutationGroup | None = None
    for name, rep in zip(names, reps, strict=False):
        if rep is None:
            continue
        if not isinstance(rep, PermutationRepresentation):
            raise TypeError(f"{name} must be a PermutationRepresentation, got {type(rep).__name__}")
        if group is None:
            group = rep.group
        elif rep.group is not group and rep.group != group:
            raise ValueError(f"{name} is a representation of {rep.group.name}, not of {group.name}; they must share one group")
    if group is None:
        raise ValueError("need at least one representation")
    return group


def direct_sum(*reps: PermutationRepresentation, name: str = "direct_sum") -> PermutationRepresentation:
    """``rho_1 + rho_2 + ...`` on the concatenation of the coordinates, in order."""
    group = require_same_group(reps)
    offsets = [0]
    for rep in reps:
        offsets.append(offsets[-1] + rep.dim)
    maps = [(rep._map, off) for rep, off in zip(reps, offsets, strict=False)]

    def coordinate_map(perms: torch.Tensor) -> torch.Tensor:
        return torch.cat([m(perms) + off for m, off in maps], dim=-1)

    return PermutationRepresentation(group, offsets[-1], coordinate_map, name=name)


def tensor_product(*reps: PermutationRepresentation, name: str = "tensor_product") -> PermutationRepresentation:
    """``rho_1 (x) rho_2 (x) ...`` on row-major flattened coordinates ``(i_1, i_2, ...)``."""
    group = require_same_group(reps)
    dims = [rep.dim for rep in reps]
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    total = 1
    for d in dims:
        total *= d
    maps = [rep._map for rep in reps]

    def coordinate_map(perms: torch.Tensor) -> torch.Tensor:
        lead = perms.shape[:-1]
        flat = torch.zeros(*lead, *dims, dtype=torch.long)
        for axis, (m, stride) in enumerate(zip(maps, strides, strict=False)):
            shape = [1] * len(dims)
            shape[axis] = dims[axis]
            flat = flat + (m(perms) * stride).reshape(*lead, *shape)
        return flat.reshape(*lead, total)

    return PermutationRepresentation(group, total, coordinate_map, name=name)
