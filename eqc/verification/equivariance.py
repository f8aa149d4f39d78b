"""Measuring and asserting equivariance: ``f(rho_in(g) x) == rho_out(g) f(x)`` for every tested ``g``.

``fn`` may take several inputs and return several outputs. Each input has a representation,
or ``None`` to pass it untransformed (hidden states, seeds); each output has a
representation, or ``None`` to leave it unchecked. Errors are reported per element and per
output coordinate; tolerances default by dtype and scale with the output's magnitude.

The elements to test are given as ``indices=`` or ``permutations=`` (the two forms of
:class:`~eqc.groups.PermutationGroup`, never guessed from a shape). A check that checks nothing
never passes: an empty batch, an empty list of elements, or no checked output is an error, and
NaN in an output is reported as NaN (``ok`` is False), saying whether ``fn(x)`` itself or a
transformed copy produced it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import torch

from eqc._checks import check_float, check_tensor
from eqc.groups import PermutationGroup, PermutationRepresentation, inverse_permutations
from eqc.groups.representation import require_same_group

__all__ = [
    "DEFAULT_SAMPLED_ELEMENTS",
    "DTYPE_TOLERANCE",
    "EquivarianceOptions",
    "EquivarianceReport",
    "OutputError",
    "assert_equivariant",
    "equivariance_error",
    "tested_permutations",
]

Reps = PermutationRepresentation | Sequence[PermutationRepresentation | None] | None

#: Default absolute tolerance per unit of output magnitude, by dtype.
DTYPE_TOLERANCE = {
    torch.float64: 1e-10,
    torch.float32: 1e-5,
    torch.float16: 1e-2,
    torch.bfloat16: 2e-2,
}
#: Elements sampled when the group is too large to test exhaustively.
DEFAULT_SAMPLED_ELEMENTS = 64


class EquivarianceOptions(TypedDict, total=False):
    """The keyword options of :func:`equivariance_error`, which :func:`assert_equivariant` passes on as they are."""

    indices: Sequence[int] | torch.Tensor | None
    permutations: Sequence[Sequence[int]] | torch.Tensor | None
    generator: torch.Generator | None
    atol: float | None


@dataclass(frozen=True)
class OutputError:
    """Equivariance error of one output of ``fn``; NaN where an output held NaN.

    ``reference_nan`` is True when ``fn(x)`` itself (the untransformed input) held NaN: then no
    element is to blame and every error is NaN.
    """

    index: int
    per_element: torch.Tensor  # [k] max |f(rho_in(g)x) - rho_out(g)f(x)| for each tested element
    per_coordinate: torch.Tensor  # [d_out] max over elements and batch
    tolerance: float
    reference_nan: bool = False

    @property
    def max_error(self) -> float:
        """The largest error (NaN if any output held NaN)."""
        return float(self.per_element.max()) if self.per_element.numel() else 0.0

    @property
    def worst_element(self) -> int:
        """Position (in the report's permutations) of the element with the largest error, or the first with NaN."""
        return _worst(self.per_element)

    @property
    def worst_coordinate(self) -> int:
        """Output coordinate with the largest error, or the first with NaN."""
        return _worst(self.per_coordinate)

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance


@dataclass(frozen=True)
class EquivarianceReport:
    """Result of :func:`equivariance_error`: the tested elements as permutations ``[k, degree]``
    and one entry per checked output."""

    permutations: torch.Tensor
    outputs: tuple[OutputError, ...]

    @property
    def max_error(self) -> float:
        """The largest error over all checked outputs (NaN if any held NaN)."""
        errors = [o.max_error for o in self.outputs]
        return float("nan") if any(math.isnan(e) for e in errors) else max(errors, default=0.0)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    def describe(self) -> str:
        lines = []
        for o in self.outputs:
            status = "ok" if o.ok else "NOT EQUIVARIANT"
            head = f"output {o.index}: max error {o.max_error:.3g} (tolerance {o.tolerance:.3g}) {status}"
            if o.reference_nan:
                lines.append(
                    f"{head}: fn(x) itself, on the untransformed input, returned NaN (first at coordinate "
                    f"{o.worst_coordinate}), so no element can be checked; fix the NaN first"
                )
            elif math.isnan(o.max_error):
                count = int(o.per_element.isnan().sum())
                lines.append(
                    f"{head}: fn(rho_in(g) x) returned NaN for {count} of {len(o.per_element)} elements, first for "
                    f"element {self.permutations[o.worst_element].tolist()} (coordinate {o.worst_coordinate})"
                )
            else:
                lines.append(
                    f"{head}; worst element {self.permutations[o.worst_element].tolist()}, worst coordinate "
                    f"{o.worst_coordinate}"
                )
        return "\n".join(lines)


def _worst(errors: torch.Tensor) -> int:
    nan = errors.isnan()
    return int(nan.nonzero()[0, 0]) if bool(nan.any()) else int(errors.argmax())


def _as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]



def _difference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b|, with equal entries (including equal infinities) counted as 0."""
    diff = (a.double() - b.double()).abs()
    return torch.where(a == b, torch.zeros_like(diff), diff)


def tested_permutations(
    group: PermutationGroup,
    *,
    indices: Sequence[int] | torch.Tensor | None = None,
    permutations: Sequence[Sequence[int]] | torch.Tensor | None = None,
) -> torch.Tensor | None:
    """The elements a check is asked to test, as permutations ``[k, degree]`` on the CPU; ``None`` if neither is given.

    They come as ``indices [k]`` or ``permutations [k, degree]`` (at most one of them), checked by
    :meth:`~eqc.groups.PermutationGroup.check_elements`; every index is range-checked (a check is no hot
    loop). An empty list is refused: a check over no elements checks nothing.
    """
    if indices is None and permutations is None:
        return None
    if permutations is None:
        index = group.check_elements(indices=indices.cpu() if isinstance(indices, torch.Tensor) else indices, batch_dims=1)
        perms = group.elements[index]
    else:
        perms = group.check_elements(indices=indices, permutations=permutations, batch_dims=1)
    if perms.shape[0] == 0:
        raise ValueError(f"{'permutations' if indices is None else 'indices'} is empty: a check over no elements checks nothing")
    return perms


def _tested_elements(
    group: PermutationGroup,
    indices: Sequence[int] | torch.Tensor | None,
    permutations: Sequence[Sequence[int]] | torch.Tensor | None,
    generator: torch.Generator | None,
) -> torch.Tensor:
    perms = tested_permutations(group, indices=indices, permutations=permutations)
    if perms is not None:
        return perms
    if group.is_enumerable:
        return group.elements
    return group.random_permutations(DEFAULT_SAMPLED_ELEMENTS, generator)


def equivariance_error(
    fn: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    in_rep: Reps,
    out_rep: Reps,
    x: torch.Tensor | Sequence[torch.Tensor],
    *,
    indices: Sequence[int] | torch.Tensor | None = None,
    permutations: Sequence[Sequence[int]] | torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    atol: float | None = None,
) -> EquivarianceReport:
    """Compare ``fn(rho_in(g) x)`` with ``rho_out(g) fn(x)`` for each tested element ``g``.

    Args:
        fn: called as ``fn(*inputs)``; returns a tensor or a tuple of tensors.
        in_rep: one representation per input (``None``: pass that input unchanged).
        out_rep: one representation per output (``None``: do not check that output).
        x: the input tensor, or a tuple of inputs.
        indices, permutations: the elements to test, as element indices ``[k]`` or as permutations
            ``[k, degree]`` (at most one; :class:`~eqc.groups.PermutationGroup`); default all of G (or 64
            uniform samples from ``generator`` when G is too large to list).
        atol: absolute tolerance per unit of output magnitude, finite and >= 0; default by dtype
            (:data:`DTYPE_TOLERANCE`).

    Raises ``ValueError`` when nothing would be checked: an empty input batch or output, an empty
    ``indices`` or ``permutations``, or every output representation ``None``.
    """
    # Over 60 lines on purpose: most of it validates the arguments, so that no check passes by checking nothing.
    if not callable(fn):
        raise TypeError(f"fn must be callable (a module or function), got {type(fn).__name__}")
    if atol is not None:
        atol = check_float(atol, "atol", low=0.0)
    inputs, in_reps = _as_list(x), _as_list(in_rep)
    if len(in_reps) != len(inputs):
        raise ValueError(f"got {len(inputs)} inputs but {len(in_reps)} input representations")
    for k, (inp, rep) in enumerate(zip(inputs, in_reps, strict=False)):
        if rep is None:
            continue
        name = "x" if len(inputs) == 1 else f"x[{k}]"
        check_tensor(inp, name, last=rep.dim)
        if inp.numel() == 0:
            raise ValueError(f"{name} is empty (shape {list(inp.shape)}): a check on no inputs checks nothing")
    out_reps = _as_list(out_rep)
    if all(rep is None for rep in out_reps):
        raise ValueError("every output representation is None: nothing would be checked")
    with torch.no_grad():
        reference = _as_list(fn(*inputs))
    if len(out_reps) != len(reference):
        raise ValueError(f"fn returned {len(reference)} outputs but {len(out_reps)} output representations were given")
    for j, (rep, ref) in enumerate(zip(out_reps, reference, strict=False)):
        if rep is None:
            continue
        if not isinstance(ref, torch.Tensor) or ref.shape[-1:] != (rep.dim,):
            got = list(ref.shape) if isinstance(ref, torch.Tensor) else type(ref).__name__
            raise ValueError(f"output {j} of fn must be a tensor with last dimension {rep.dim}, got {got}")
        if ref.numel() == 0:
            raise ValueError(f"output {j} of fn is empty (shape {list(ref.shape)}): nothing would be checked")
    names = [f"in_rep[{k}]" for k in range(len(in_reps))] + [f"out_rep[{k}]" for k in range(len(out_reps))]
    group = require_same_group(in_reps + out_reps, names)
    perms = _tested_elements(group, indices, permutations, generator)

    # coordinate permutations of every tested element, computed once per representation
    in_index = [None if rep is None else inverse_permutations(rep.coordinate_map(perms)) for rep in in_reps]
    out_index = {j: inverse_permutations(rep.coordinate_map(perms)) for j, rep in enumerate(out_reps) if rep is not None}
    per_element: dict[int, list[torch.Tensor]] = {j: [] for j in out_index}
    per_coord = {
        j: torch.zeros(r.dim, dtype=torch.float64, device=ref.device)
        for j, (r, ref) in enumerate(zip(out_reps, reference, strict=False)) if r is not None
    }
    with torch.no_grad():
        for k in range(perms.shape[0]):
            moved = [inp if idx is None else inp[..., idx[k].to(inp.device)] for inp, idx in zip(inputs, in_index, strict=False)]
            got = _as_list(fn(*moved))
            for j, (rep, out, ref) in enumerate(zip(out_reps, got, reference, strict=False)):
                if rep is None:
                    continue
                if not isinstance(out, torch.Tensor) or out.shape != ref.shape:
                    got = list(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
                    raise ValueError(f"output {j} of fn has shape {list(ref.shape)} for x but {got} for a transformed x")
                diff = _difference(out, ref[..., out_index[j][k].to(ref.device)])
                per_element[j].append(diff.max().cpu())
                per_coord[j] = torch.maximum(per_coord[j], diff.reshape(-1, rep.dim).amax(0))

    outputs = []
    for j, (rep, ref) in enumerate(zip(out_reps, reference, strict=False)):
        if rep is None:
            continue
        finite = ref[torch.isfinite(ref)]
        scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
        tol = (atol if atol is not None else DTYPE_TOLERANCE.get(ref.dtype, 1e-5)) * scale
        reference_nan = bool(ref.isnan().any()) if ref.is_floating_point() else False
        coords = per_coord[j].cpu()
        if reference_nan:  # point at where fn(x) itself is NaN, not at an element
            coords = torch.where(ref.isnan().reshape(-1, rep.dim).any(0).cpu(), float("nan"), coords)
        outputs.append(OutputError(j, torch.stack(per_element[j]), coords, tol, reference_nan))
    return EquivarianceReport(perms, tuple(outputs))


def assert_equivariant(
    fn: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    in_rep: Reps,
    out_rep: Reps,
    x: torch.Tensor | Sequence[torch.Tensor],
    **options: Unpack[EquivarianceOptions],
) -> EquivarianceReport:
    """Like :func:`equivariance_error` (the same arguments; ``options``: its keyword ones, ``indices``, ``permutations``,
    ``generator`` and ``atol``), raising ``AssertionError`` with the worst element and coordinate on failure.

    Meant for your own test suites: its frame is hidden from pytest tracebacks, so a failure
    points at your test.
    """
    __tracebackhide__ = True
    report = equivariance_error(fn, in_rep, out_rep, x, **options)
    if not report.ok:
        raise AssertionError("fn is not equivariant:\n" + report.describe())
    return report
