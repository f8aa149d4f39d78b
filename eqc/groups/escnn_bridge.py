"""Bridge to escnn: eqc's cyclic and dihedral permutation representations as escnn representations.

escnn (an optional extra: ``pip install 'eqc[escnn]'``) builds layer-wise equivariant networks
from representations of its own group objects. This module transports an eqc
:class:`~eqc.groups.PermutationRepresentation` onto escnn's ``cyclic_group(n)`` or
``dihedral_group(n)`` through an explicit group isomorphism, so escnn layers and eqc's
symmetrizer can be built on the same action.

The isomorphism (:class:`EscnnGroupMap`) sends a rotation ``r`` of order ``n`` and, for
dihedral groups, a reflection ``s`` (``s*s = e``, ``s*r*s = r^-1``, ``s`` not a power of ``r``)
to escnn's generators: ``r^k * s^j`` (eqc product, ``s^j`` applied first) goes to escnn's
element ``(j, k)`` (escnn writes it ``r^k f^j``); for cyclic groups ``r^k`` goes to ``k``.
For eqc's catalogue groups ``r`` is the shift ``i -> i+1`` and ``s`` the reflection
``i -> -i (mod n)``, the groups' own generators. Other presentations of a cyclic or dihedral
group (any degree, any generators) are recognised by searching for such ``r`` and ``s``;
pass ``rotation=`` / ``reflection=`` to pick them yourself.

The escnn representation of element ``phi(g)`` equals eqc's dense ``rep.matrices()[g]``:
``rho(g) e_c = e_{perm_g(c)}``. It is assembled orbit by orbit (fixed coordinates are
trivial representations, free orbits regular representations, other orbits are decomposed
by escnn once per orbit type and cached), so large representations such as Hanabi's
658-float observation never go through a dense decomposition.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from eqc._checks import check_int
from eqc.groups.group import PermutationGroup
from eqc.groups.permutations import PermutationLike, compose_permutations, identity_permutation
from eqc.groups.representation import PermutationRepresentation, require_same_group

if TYPE_CHECKING:  # pragma: no cover - escnn is optional
    from escnn.group import Group as EscnnGroup
    from escnn.group import GroupElement, Representation
    from escnn.gspaces import GSpace0D
    from escnn.nn import FieldType

__all__ = [
    "EscnnGroupMap",
    "UnsupportedGroupError",
    "escnn_group_map",
    "field_type",
    "gspace",
    "to_escnn",
]

ElementLike = int | PermutationLike
#: Non-linearities every permutation representation supports (they commute with permutations).
_PERMUTATION_NONLINEARITIES = ("pointwise",)
#: escnn representations of non-trivial, non-free orbits, built once per (group, orbit action).
_ORBIT_CACHE: dict[tuple[str, str], Any] = {}


class UnsupportedGroupError(ValueError):
    """Raised when a group is not isomorphic to a cyclic or dihedral group (the groups escnn's bridge handles)."""


def _import_escnn() -> Any:
    try:
        import escnn.group
        import escnn.gspaces
        import escnn.nn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "eqc.groups.escnn_bridge needs escnn, an optional extra: pip install 'eqc[escnn]' "
            f"(import failed: {exc})"
        ) from exc
    return escnn


@dataclass(frozen=True)
class EscnnGroupMap:
    """An isomorphism from an eqc group onto escnn's ``cyclic_group(n)`` or ``dihedral_group(n)``.

    ``elements[k]`` is the escnn element of eqc element row ``k``; ``rotation`` and
    ``reflection`` are the eqc rows sent to escnn's generators (``reflection`` is ``None``
    for cyclic groups).
    """

    group: PermutationGroup
    escnn_group: EscnnGroup
    kind: Literal["cyclic", "dihedral"]
    n: int
    rotation: int
    reflection: int | None
    elements: tuple[GroupElement, ...]

    def to_escnn_element(self, k: int) -> GroupElement:
        """The escnn element of eqc element row ``k``."""
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(self.elements):
            raise ValueError(f"k must be an element row in 0..{len(self.elements) - 1}, got {k!r}")
        return self.elements[k]

    def from_escnn_element(self, element: GroupElement) -> int:
        """The eqc element row of escnn element ``element``."""
        if element.group != self.escnn_group:
            raise ValueError(f"{element} is an element of {element.group}, not of {self.escnn_group}")
        return self._rows[element]

    @cached_property
    def _rows(self) -> dict[GroupElement, int]:
        return {e: k for k, e in enumerate(self.elements)}


# ---------------------------------------------------------------------------------------------- group map
def _element_row(group: PermutationGroup, element: ElementLike, name: str) -> int:
    """The row of one element given as an int (its index; never a permutation) or as a permutation ``[degree]``."""
    if isinstance(element, bool):
        raise TypeError(f"{name} must be an element index (an int) or a permutation, got a bool")
    if isinstance(element, int | numbers.Integral):
        return group.check_elements(indices=int(element), name=name, batch_dims=0)
    return int(group.permutation_to_index(group.check_elements(permutations=element, name=name, batch_dims=0)))


def _powers(perm: torch.Tensor, count: int) -> torch.Tensor:
    """``[count, degree]``: ``perm^0, perm^1, ..., perm^(count-1)``."""
    rows = [identity_permutation(perm.numel())]
    for _ in range(count - 1):
        rows.append(compose_permutations(perm, rows[-1]))
    return torch.stack(rows)


def _element_orders(elements: torch.Tensor) -> torch.Tensor:
    """Order of each permutation in ``elements`` ``[N, degree]``: the lcm of its cycle lengths."""
    orders = []
    for perm in elements.tolist():
        seen, order = [False] * len(perm), 1
        for start in range(len(perm)):
            length, point = 0, start
            while not seen[point]:
                seen[point], point, length = True, perm[point], length + 1
            if length:
                order = math.lcm(order, length)
        orders.append(order)
    return torch.tensor(orders, dtype=torch.long)


def _order_of(perm: torch.Tensor) -> int:
    return int(_element_orders(perm.unsqueeze(0))[0])


def _is_reflection_for(group: PermutationGroup, r: torch.Tensor, m: int, s: torch.Tensor) -> bool:
    """``s*s = e``, ``s*r*s = r^-1`` and ``s`` not a power of ``r`` (so ``<r, s>`` is dihedral of order 2m)."""
    ident = identity_permutation(group.degree)
    if not torch.equal(compose_permutations(s, s), ident):
        return False
    if not torch.equal(compose_permutations(s, compose_permutations(r, s)), _powers(r, m)[-1]):  # r^(m-1) = r^-1
        return False
    return not bool((_powers(r, m) == s).all(-1).any())


def _choose_generators(
    group: PermutationGroup, rotation: ElementLike | None, reflection: ElementLike | None
) -> tuple[Literal["cyclic", "dihedral"], int, int, int | None]:
    """Pick (kind, n, rotation row, reflection row) presenting ``group`` as C_n or D_n."""
    order = group.order
    elements = group.elements
    if reflection is not None and rotation is None:
        if order != 2:
            raise ValueError(
                "reflection= needs rotation= too: a dihedral presentation is a (rotation, reflection) pair "
                "(only an order-2 group, escnn's D1, is a reflection alone)"
            )
        rotation = 0  # D1: the trivial rotation
    if rotation is not None:
        r_row = _element_row(group, rotation, "rotation")
        r = elements[r_row]
        m = _order_of(r)
        if reflection is None:
            if m != order:
                raise UnsupportedGroupError(
                    f"rotation {r.tolist()} has order {m}, but {group.name} has order {order}: it does not "
                    f"generate the group, so this is no cyclic presentation (pass reflection= for a dihedral one)"
                )
            return "cyclic", m, r_row, None
        s_row = _element_row(group, reflection, "reflection")
        s = elements[s_row]
        if 2 * m != order or not _is_reflection_for(group, r, m, s):
            raise UnsupportedGroupError(
                f"rotation {r.tolist()} (order {m}) and reflection {s.tolist()} do not present {group.name} "
                f"(order {order}) as a dihedral group: need 2*{m} == {order}, s*s = e, s*r*s = r^-1 and s not in <r>"
            )
        return "dihedral", m, r_row, s_row

    gens = group.generators
    orders = _element_orders(elements)
    # Cyclic: prefer a generator of full order (the catalogue's shift), else the first such element.
    for g in gens:
        if _order_of(g) == order:
            return "cyclic", order, int(group.permutation_to_index(g)), None
    full = (orders == order).nonzero().flatten()
    if full.numel():
        return "cyclic", order, int(full[0]), None
    # Dihedral D_m of order 2m: prefer the generators (rotation, reflection) as given, as in the catalogue.
    if order % 2 == 0:
        m = order // 2
        if gens.shape[0] == 2 and _order_of(gens[0]) == m and _is_reflection_for(group, gens[0], m, gens[1]):
            return "dihedral", m, int(group.permutation_to_index(gens[0])), int(group.permutation_to_index(gens[1]))
        candidates = (orders == 2).nonzero().flatten().tolist()
        for r_row in (orders == m).nonzero().flatten().tolist():
            r = elements[r_row]
            for s_row in candidates:
                if _is_reflection_for(group, r, m, elements[s_row]):
                    return "dihedral", m, r_row, s_row
            if m >= 3:  # the rotation subgroup is unique for m >= 3: another r cannot help
                break
    raise UnsupportedGroupError(
        f"{group.name} (order {order}, degree {group.degree}) is neither cyclic nor dihedral, so it has no "
        f"escnn cyclic_group/dihedral_group counterpart; escnn's bridge supports only those two families"
    )


def escnn_group_map(
    group: PermutationGroup, *, rotation: ElementLike | None = None, reflection: ElementLike | None = None
) -> EscnnGroupMap:
    """The isomorphism from ``group`` onto escnn's ``cyclic_group(n)`` or ``dihedral_group(n)``.

    ``rotation`` / ``reflection`` (element indices or permutations) choose the elements sent to
    escnn's generators; by default the group's own generators are used when they fit (so
    eqc's ``cyclic(n)`` and ``dihedral(n)`` map shift -> rotation 1 and ``i -> -i`` -> the flip),
    otherwise a rotation and reflection are searched for. Raises :class:`UnsupportedGroupError`
    for groups that are not cyclic or dihedral.
    """
    if not isinstance(group, PermutationGroup):
        raise TypeError(f"group must be a PermutationGroup, got {type(group).__name__}")
    escnn = _import_escnn()
    kind, n, r_row, s_row = _choose_generators(group, rotation, reflection)
    elements = group.elements
    r_powers = _powers(elements[r_row], n)
    if kind == "cyclic":
        target = escnn.group.cyclic_group(n)
        rows = group.permutation_to_index(r_powers)  # rows[k] = row of r^k
        by_row: list[Any] = [None] * group.order
        for k, row in enumerate(rows.tolist()):
            by_row[row] = target.element(k)
    else:
        target = escnn.group.dihedral_group(n)
        s = elements[s_row]
        by_row = [None] * group.order
        for j in (0, 1):
            words = compose_permutations(r_powers, s.expand_as(r_powers)) if j else r_powers  # r^k * s^j
            for k, row in enumerate(group.permutation_to_index(words).tolist()):
                by_row[row] = target.element((j, k))
    if any(e is None for e in by_row):  # cannot happen after _choose_generators; a guard for the invariant
        raise UnsupportedGroupError(f"the chosen generators do not reach every element of {group.name}")
    return EscnnGroupMap(group, target, kind, n, r_row, s_row, tuple(by_row))


# ---------------------------------------------------------------------------------------------- representations
def _permutation_matrix(images: np.ndarray) -> np.ndarray:
    """Dense matrix with ``M e_c = e_{images[c]}``."""
    size = images.shape[0]
    mat = np.zeros((size, size))
    mat[images, np.arange(size)] = 1.0
    return mat


def _block_diag(blocks: list[np.ndarray]) -> np.ndarray:
    size = sum(b.shape[0] for b in blocks)
    out = np.zeros((size, size))
    start = 0
    for b in blocks:
        out[start : start + b.shape[0], start : start + b.shape[0]] = b
        start += b.shape[0]
    return out


def _orbit_representation(target: EscnnGroup, local: np.ndarray) -> Any:
    """escnn representation of a transitive action of ``target``, cached.

    ``local[i]`` holds the images of the orbit's points ``0..k-1`` under ``target.elements[i]``
    (escnn's element order), so the cache key depends on the escnn action only.
    """
    escnn = _import_escnn()
    digest = hashlib.sha1(local.astype(np.int64).tobytes()).hexdigest()[:16]
    key = (target.name, digest)
    if key not in _ORBIT_CACHE:
        matrices = {e: _permutation_matrix(local[i]) for i, e in enumerate(target.elements)}
        _ORBIT_CACHE[key] = escnn.group.representation.build_from_discrete_group_representation(
            matrices, f"eqc_orbit[{digest}]", target, list(_PERMUTATION_NONLINEARITIES)
        )
    return _ORBIT_CACHE[key]


def to_escnn(
    rep: PermutationRepresentation,
    *,
    rotation: ElementLike | None = None,
    reflection: ElementLike | None = None,
    name: str | None = None,
) -> Representation:
    """``rep`` as an escnn ``Representation`` of ``cyclic_group(n)`` or ``dihedral_group(n)``.

    Its matrix at ``escnn_group_map(rep.group, rotation=..., reflection=...).elements[k]`` equals
    ``rep.matrices()[k]``.
    ``rotation`` / ``reflection`` choose the isomorphism (see :func:`escnn_group_map`);
    ``name`` defaults to a content hash (escnn caches layer bases by representation name, so
    different representations must never share one). Raises :class:`UnsupportedGroupError`
    for groups that are neither cyclic nor dihedral.
    """
    if not isinstance(rep, PermutationRepresentation):
        raise TypeError(f"rep must be a PermutationRepresentation, got {type(rep).__name__}")
    if rep.dim == 0:
        raise ValueError("escnn has no zero-dimensional representations; rep has dim 0")
    escnn = _import_escnn()
    gmap = escnn_group_map(rep.group, rotation=rotation, reflection=reflection)
    target = gmap.escnn_group
    table = rep.coordinate_permutations.numpy()  # [order, dim]: coordinate c -> table[g, c]
    # the action in escnn's element order (the regular representation's basis order)
    by_escnn = table[[gmap.from_escnn_element(e) for e in target.elements]]

    orbit_id = table.min(axis=0)  # the smallest coordinate of each orbit names it
    reprs, order = [], []
    for root in np.unique(orbit_id):
        coords = np.flatnonzero(orbit_id == root)
        if coords.size == 1:
            reprs.append(target.trivial_representation)
            order.extend(coords.tolist())
        elif coords.size == rep.group.order:
            # free orbit: basis vector i is coordinate (elements[i] applied to root), which the regular
            # representation permutes exactly as rep does (rho(g) e_{h root} = e_{gh root}).
            reprs.append(target.regular_representation)
            order.extend(by_escnn[:, root].tolist())
        else:
            position = np.full(rep.dim, -1, dtype=np.int64)
            position[coords] = np.arange(coords.size)
            reprs.append(_orbit_representation(target, position[by_escnn[:, coords]]))
            order.extend(coords.tolist())

    if name is None:  # the action in escnn's element order determines the escnn representation
        digest = hashlib.sha1(by_escnn.astype(np.int64).tobytes()).hexdigest()[:16]
        name = f"eqc[{rep.name}|{target.name}|{digest}]"
    # Direct sum of the orbit representations, then the permutation P that puts direct-sum slot p at
    # coordinate order[p]. Both changes of basis are assembled blockwise: P^-1 = P^T needs no inversion.
    perm = _permutation_matrix(np.asarray(order))
    inner = _block_diag([r.change_of_basis for r in reprs])
    inner_inv = _block_diag([r.change_of_basis_inv for r in reprs])
    irreps = [irrep for r in reprs for irrep in r.irreps]
    nonlinearities = set.intersection(*[set(r.supported_nonlinearities) for r in reprs])
    return escnn.group.Representation(
        target, name, irreps, perm @ inner, nonlinearities, change_of_basis_inv=inner_inv @ perm.T
    )


def gspace(
    group: PermutationGroup, *, rotation: ElementLike | None = None, reflection: ElementLike | None = None
) -> GSpace0D:
    """escnn's ``no_base_space`` over the escnn counterpart of ``group`` (features without a spatial base)."""
    escnn = _import_escnn()
    return escnn.gspaces.no_base_space(escnn_group_map(group, rotation=rotation, reflection=reflection).escnn_group)


def field_type(
    *reps: PermutationRepresentation,
    regular: int = 0,
    rotation: ElementLike | None = None,
    reflection: ElementLike | None = None,
) -> FieldType:
    """An escnn ``FieldType`` over ``no_base_space``: the fields ``reps`` (all of one group) followed by
    ``regular`` copies of the regular representation (the usual hidden layer of an equivariant MLP)."""
    escnn = _import_escnn()
    if not reps:
        raise ValueError("field_type needs at least one PermutationRepresentation (for its group)")
    group = require_same_group(reps)
    check_int(regular, "regular", low=0)
    space = gspace(group, rotation=rotation, reflection=reflection)
    fields = [to_escnn(rep, rotation=rotation, reflection=reflection) for rep in reps]
    fields += [space.fibergroup.regular_representation] * regular
    return escnn.nn.FieldType(space, fields)
