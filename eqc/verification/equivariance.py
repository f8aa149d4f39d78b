"""Measuring and asserting equivariance: ``f(rho_in(g) x) == rho_out(g) f(x)`` for every tested ``g``.

``fn`` may take several inputs and return several outputs. Each input has a representation,
or ``None`` to pass it untransformed (hidden states, seeds); each output has a
representation, or ``None`` to leave it unchecked. Errors are reported per element and per
output coordinate; tolerances default by dtype and scale with the output's magnitude.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from eqc.groups import PermutationGroup, PermutationRepresentation, invert
from eqc.groups.representation import require_same_group

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


@dataclass(frozen=True)
class OutputError:
    """Equivariance error of one output of ``fn``."""

    index: int
    per_element: torch.Tensor  # [k] max |f(rho_in(g)x) - rho_out(g)f(x)| for each tested element
    per_coordinate: torch.Tensor  # [d_out] max over elements and batch
    tolerance: float

    @property
    def max_error(self) -> float:
        return float(self.per_element.max()) if self.per_element.numel() else 0.0

    @property
    def worst_element(self) -> int:
        return int(self.per_element.argmax())

    @property
    def worst_coordinate(self) -> int:
        return int(self.per_coordinate.argmax())

    @property
    def ok(self) -> bool:
        return self.max_error <= self.tolerance


@dataclass(frozen=True)
class EquivarianceReport:
    """Result of :func:`equivariance_error`: the tested elements (image arrays ``[k, degree]``) and one entry per checked output."""

    elements: torch.Tensor
    outputs: tuple[OutputError, ...]

    @property
    def max_error(self) -> float:
        return max((o.max_error for o in self.outputs), default=0.0)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    def describe(self) -> str:
        lines = []
        for o in self.outputs:
            status = "ok" if o.ok else "NOT EQUIVARIANT"
            lines.append(
                f"output {o.index}: max error {o.max_error:.3g} (tolerance {o.tolerance:.3g}) {status}; worst element "
                f"{self.elements[o.worst_element].tolist()}, worst coordinate {o.worst_coordinate}"
            )
        return "\n".join(lines)


def _as_list(value: object) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]




def _difference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b|, with equal entries (including equal infinities) counted as 0."""
    diff = (a.double() - b.double()).abs()
    return torch.where(a == b, torch.zeros_like(diff), diff)


def _tested_elements(group: PermutationGroup, elements: torch.Tensor | None, generator: torch.Generator | None) -> torch.Tensor:
    if elements is not None:
        elements = torch.as_tensor(elements, dtype=torch.long)
        if elements.dim() == 1:  # element rows
            return group.elements[group._check_index(elements, "elements")]
        if elements.shape[-1] != group.degree:
            raise ValueError(f"elements must be element rows [k] or image arrays [k, {group.degree}]")
        return elements
    if group.is_enumerable:
        return group.elements
    return group.random_permutations(DEFAULT_SAMPLED_ELEMENTS, generator)


def equivariance_error(
    fn: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    in_rep: Reps,
    out_rep: Reps,
    x: torch.Tensor | Sequence[torch.Tensor],
    *,
    elements: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    atol: float | None = None,
) -> EquivarianceReport:
    """Compare ``fn(rho_in(g) x)`` with ``rho_out(g) fn(x)`` for each tested element ``g``.

    Args:
        fn: called as ``fn(*inputs)``; returns a tensor or a tuple of tensors.
        in_rep: one representation per input (``None``: pass that input unchanged).
        out_rep: one representation per output (``None``: do not check that output).
        x: the input tensor, or a tuple of inputs.
        elements: rows ``[k]`` or image arrays ``[k, degree]`` to test; default all of G
            (or 64 uniform samples when G is too large to list).
        atol: absolute tolerance per unit of output magnitude; default by dtype (:data:`DTYPE_TOLERANCE`).
    """
    inputs, in_reps = _as_list(x), _as_list(in_rep)
    if len(in_reps) != len(inputs):
        raise ValueError(f"got {len(inputs)} inputs but {len(in_reps)} input representations")
    for k, (inp, rep) in enumerate(zip(inputs, in_reps)):
        if rep is not None and (not isinstance(inp, torch.Tensor) or inp.shape[-1:] != (rep.dim,)):
            raise ValueError(f"input {k} must be a tensor with last dimension {rep.dim}, got {getattr(inp, 'shape', type(inp).__name__)}")
    with torch.no_grad():
        reference = _as_list(fn(*inputs))
    out_reps = _as_list(out_rep)
    if len(out_reps) != len(reference):
        raise ValueError(f"fn returned {len(reference)} outputs but {len(out_reps)} output representations were given")
    for j, (rep, ref) in enumerate(zip(out_reps, reference)):
        if rep is not None and (not isinstance(ref, torch.Tensor) or ref.shape[-1:] != (rep.dim,)):
            raise ValueError(f"output {j} of fn must be a tensor with last dimension {rep.dim}, got {getattr(ref, 'shape', type(ref).__name__)}")
    names = [f"in_rep[{k}]" for k in range(len(in_reps))] + [f"out_rep[{k}]" for k in range(len(out_reps))]
    group = require_same_group(in_reps + out_reps, names)
    perms = _tested_elements(group, elements, generator)

    # coordinate permutations of every tested element, computed once per representation
    in_index = [None if rep is None else invert(rep.coordinate_map(perms)) for rep in in_reps]
    out_index = [None if rep is None else invert(rep.coordinate_map(perms)) for rep in out_reps]
    per_element = [[] for _ in out_reps]
    per_coord = [
        torch.zeros(r.dim, dtype=torch.float64, device=ref.device) if r is not None else None
        for r, ref in zip(out_reps, reference)
    ]
    with torch.no_grad():
        for k in range(perms.shape[0]):
            moved = [inp if idx is None else inp[..., idx[k].to(inp.device)] for inp, idx in zip(inputs, in_index)]
            got = _as_list(fn(*moved))
            for j, (rep, out, ref) in enumerate(zip(out_reps, got, reference)):
                if rep is None:
                    continue
                diff = _difference(out, ref[..., out_index[j][k].to(ref.device)])
                per_element[j].append(diff.max().cpu() if diff.numel() else torch.tensor(0.0, dtype=torch.float64))
                per_coord[j] = torch.maximum(per_coord[j], diff.reshape(-1, rep.dim).amax(0) if diff.numel() else per_coord[j])

    outputs = []
    for j, (rep, ref) in enumerate(zip(out_reps, reference)):
        if rep is None:
            continue
        finite = ref[torch.isfinite(ref)] if ref.numel() else ref
        scale = max(1.0, float(finite.abs().max())) if finite.numel() else 1.0
        tol = (atol if atol is not None else DTYPE_TOLERANCE.get(ref.dtype, 1e-5)) * scale
        outputs.append(OutputError(j, torch.stack(per_element[j]), per_coord[j].cpu(), tol))
    return EquivarianceReport(perms, tuple(outputs))


def assert_equivariant(
    fn: Callable[..., torch.Tensor | Sequence[torch.Tensor]],
    in_rep: Reps,
    out_rep: Reps,
    x: torch.Tensor | Sequence[torch.Tensor],
    **kwargs: object,
) -> EquivarianceReport:
    """Like :func:`equivariance_error`, raising ``AssertionError`` with the worst element and coordinate on failure."""
    report = equivariance_error(fn, in_rep, out_rep, x, **kwargs)  # type: ignore[arg-type]
    if not report.ok:
        raise AssertionError("fn is not equivariant:\n" + report.describe())
    return report
