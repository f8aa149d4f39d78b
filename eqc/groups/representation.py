"""Permutation representations: a group acting on R^d by moving coordinates.

Convention: under element ``g`` the feature at coordinate ``c`` moves to coordinate
``perm_g(c)``, i.e. ``(rho(g) x)[perm_g(c)] = x[c]``. This is a homomorphism,
``rho(g * h) = rho(g) rho(h)``, with ``(g * h)[i] = g[h[i]]`` as in :mod:`eqc.groups.permutations`.

A representation is stored as a vectorised map from group permutations ``[k, degree]`` to
coordinate permutations ``[k, dim]``, so it works for any group, also one too large to
list. For listable groups the map is evaluated once into :attr:`coordinate_permutations`
``[order, dim]`` and applying ``rho(g)`` is a single gather; no dense matrix is formed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property

import torch

from eqc._checks import check_int
from eqc.groups.group import PermutationGroup
from eqc.groups.permutations import compose, invert

CoordinateMap = Callable[[torch.Tensor], torch.Tensor]
#: Largest dense ``[order, dim, dim]`` tensor :meth:`PermutationRepresentation.matrices` builds.
DENSE_MATRIX_LIMIT = 50_000_000


class PermutationRepresentation:
    """A permutation representation of ``group`` on ``R^dim``.

    Build one with :meth:`standard`, :meth:`on_points`, :meth:`trivial`, :meth:`from_table`,
    :func:`direct_sum` or :func:`tensor_product`; apply it with :meth:`act`.
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
        stop = start + size
        if start < 0 or size < 0 or stop > group.degree:
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
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 0:
            raise ValueError(f"dim must be a non-negative int, got {dim!r}")
        return cls(group, dim, lambda perms: torch.arange(dim).expand(*perms.shape[:-1], dim), name="trivial")

    @classmethod
    def from_table(cls, group: PermutationGroup, coordinate_permutations: torch.Tensor, *, name: str = "table") -> PermutationRepresentation:
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
        gens = group.index_of(group.generators)
        products = group.compose(torch.arange(group.order)[:, None], gens[None, :])
        if not torch.equal(table[products], compose(table[:, None, :], table[gens][None, :, :])):
            raise ValueError("coordinate_permutations is not a homomorphism: rho(g*h) != rho(g) rho(h) for some g, h")
        return cls(group, dim, lambda perms: table[group.index_of(perms)], name=name)

    # ------------------------------------------------------------------ tables
    def coordinate_map(self, perms: torch.Tensor) -> torch.Tensor:
        """Coordinate permutations ``[..., dim]`` of group permutations ``[..., degree]`` (any group size)."""
        perms = torch.as_tensor(perms, dtype=torch.long)
        if perms.shape[-1:] != (self.group.degree,):
            raise ValueError(
                f"perms must have last dimension {self.group.degree} (the group's degree), got shape {tuple(perms.shape)}"
            )
        if perms.dtype.is_floating_point or perms.dtype == torch.bool:
            raise TypeError(f"perms must hold integers, got dtype {perms.dtype}")
        perms = perms.cpu()
        if self.group.is_enumerable:  # look the cached table up rather than rebuild the map
            return self.coordinate_permutations[self.group.index_of(perms)]
        return self._map(perms)

    @cached_property
    def coordinate_permutations(self) -> torch.Tensor:
        """``[order, dim]``: under element ``k``, coordinate ``c`` moves to ``[k, c]``."""
        return self._map(self.group.elements).contiguous()

    @cached_property
    def gather_index(self) -> torch.Tensor:
        """``[order, dim]``: ``(rho(g) x)[j] = x[gather_index[g, j]]`` (the inverse permutations)."""
        return invert(self.coordinate_permutations).contiguous()

    def _table(self, kind: str, device: torch.device) -> torch.Tensor:
        key = (device, kind)
        if key not in self._device_tables:
            table = self.gather_index if kind == "gather" else self.coordinate_permutations
            self._device_tables[key] = table.to(device)
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
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() == 0 or x.shape[-1] != self.dim:
            raise ValueError(
                f"{name} must have last dimension {self.dim} (the dimension of {self.name}), got shape {tuple(x.shape)}"
            )

    def _element_index(self, g: int | torch.Tensor, device: torch.device) -> torch.Tensor:
        return self.group._check_index(g, "g").to(device)

    def _element_rows(self, elements: torch.Tensor, device: torch.device) -> torch.Tensor:
        rows = self._element_index(elements, device)
        if rows.dim() != 1:
            raise ValueError(f"elements must be a 1-D LongTensor of element rows, got shape {tuple(rows.shape)}")
        return rows

    def _apply(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return broadcast_gather(x, index)

    def act(self, x: torch.Tensor, g: int | torch.Tensor) -> torch.Tensor:
        """``rho(g) x``. ``x``: ``[..., dim]``; ``g``: an element row, or a LongTensor of rows broadcast
        (right-aligned, as in numpy) against ``x.shape[:-1]``: one element per vector in one gather."""
        self._check_input(x)
        return self._apply(x, self._table("gather", x.device)[self._element_index(g, x.device)])

    def act_inverse(self, x: torch.Tensor, g: int | torch.Tensor) -> torch.Tensor:
        """``rho(g)^-1 x`` (same broadcasting as :meth:`act`)."""
        self._check_input(x)
        return self._apply(x, self._table("coordinates", x.device)[self._element_index(g, x.device)])

    def act_by_permutations(self, x: torch.Tensor, perms: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        """``rho(p) x`` for group elements given as image arrays ``[..., degree]`` (e.g. sampled from a
        group too large to list); ``inverse=True`` applies ``rho(p)^-1``."""
        self._check_input(x)
        coords = self.coordinate_map(perms).to(x.device)
        return self._apply(x, coords if inverse else invert(coords))

    def act_all(self, x: torch.Tensor, elements: torch.Tensor | None = None) -> torch.Tensor:
        """``[..., k, dim]``: ``rho(g) x`` for each of ``elements`` (rows; default all ``order``), one gather."""
        self._check_input(x)
        table = self._table("gather", x.device)
        if elements is not None:
            table = table[self._element_rows(elements, x.device)]
        # index_select on the flattened table is several times faster than x[..., table] on CPU
        return torch.index_select(x, -1, table.reshape(-1)).view(*x.shape[:-1], *table.shape)

    def act_all_inverse(self, y: torch.Tensor, elements: torch.Tensor | None = None) -> torch.Tensor:
        """Undo :meth:`act_all`: ``y [..., k, dim]`` -> ``rho(g_k)^-1 y_k`` for each of ``elements``."""
        self._check_input(y, "y")
        table = self._table("coordinates", y.device)
        if elements is not None:
            table = table[self._element_rows(elements, y.device)]
        if y.dim() < 2 or y.shape[-2] != table.shape[0]:
            raise ValueError(f"y must have shape [..., {table.shape[0]}, {self.dim}], got {tuple(y.shape)}")
        k = table.shape[0]
        flat = table + self.dim * torch.arange(k, device=y.device).unsqueeze(-1)  # row g reads copy g
        return torch.index_select(y.reshape(*y.shape[:-2], k * self.dim), -1, flat.reshape(-1)).view(y.shape)

    def permute_index(self, index: int | torch.Tensor, g: int | torch.Tensor) -> torch.Tensor:
        """Where coordinate ``index`` moves under ``g`` (e.g. relabel a discrete action). Broadcasts."""
        idx = torch.as_tensor(index)
        if idx.dtype.is_floating_point or idx.dtype == torch.bool:
            raise TypeError(f"index must hold integers, got dtype {idx.dtype}")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.dim):
            raise ValueError(f"index holds values outside 0..{self.dim - 1}")
        table = self._table("coordinates", idx.device)
        return table[self._element_index(g, idx.device), idx.long()]

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

    def to_escnn(self, **kwargs: object):  # noqa: ANN201 - escnn is optional
        """This representation as an escnn ``Representation`` (cyclic and dihedral groups; needs escnn).

        Keyword arguments (``rotation``, ``reflection``, ``name``) go to :func:`eqc.groups.escnn_bridge.to_escnn`.
        """
        from eqc.groups.escnn_bridge import to_escnn

        return to_escnn(self, **kwargs)


def broadcast_gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``out[..., j] = x[..., index[..., j]]``, broadcasting the leading dims of ``x`` and ``index`` (numpy-style)."""
    shape = torch.broadcast_shapes(x.shape[:-1], index.shape[:-1]) + (index.shape[-1],)
    return torch.gather(x.expand(shape), -1, index.to(x.device).expand(shape))


def require_same_group(reps: Sequence[object], names: Sequence[str] | None = None) -> PermutationGroup:
    """Check that every entry is a PermutationRepresentation (``None`` entries are skipped) of one group; return it."""
    names = list(names) if names is not None else [f"reps[{k}]" for k in range(len(reps))]
    group: PermutationGroup | None = None
    for name, rep in zip(names, reps):
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
    maps = [(rep._map, off) for rep, off in zip(reps, offsets)]

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
        for axis, (m, stride) in enumerate(zip(maps, strides)):
            shape = [1] * len(dims)
            shape[axis] = dims[axis]
            flat = flat + (m(perms) * stride).reshape(*lead, *shape)
        return flat.reshape(*lead, total)

    return PermutationRepresentation(group, total, coordinate_map, name=name)
