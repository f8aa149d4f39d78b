"""Pure functions on permutations stored as image arrays.

This module is where eqc's composition convention is defined; every other module refers here.

A group element has two forms in eqc, and every name says which one it takes:

- a **permutation** is an image array ``p`` of ``{0, ..., n-1}``: point ``i`` goes to ``p[i]``
  (a ``torch.long`` tensor ``[..., degree]``);
- an **index** is the element's row in ``group.elements`` (a Python int or ``torch.long`` tensor
  ``[...]``); see :class:`eqc.groups.PermutationGroup`.

The product follows function composition,

    (g * h)[i] = g[h[i]]        (apply ``h`` first, then ``g``),

so ``compose_permutations(g, h) == g[h]``. sympy's ``Permutation`` multiplies the other way round
(``p * q`` applies ``p`` first); :func:`to_sympy` / :func:`from_sympy` are the only places that
cross that boundary.

The functions here follow one naming pattern (``identity_*``, ``compose_*``, ``inverse_*``);
:class:`~eqc.groups.PermutationGroup` offers the same verbs for indices.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from sympy.combinatorics import Permutation

from eqc._checks import check_int, check_tensor

__all__ = [
    "PermutationLike",
    "as_permutation",
    "compose_permutations",
    "from_sympy",
    "identity_permutation",
    "inverse_permutations",
    "to_sympy",
]

PermutationLike = Sequence[int] | torch.Tensor


def as_permutation(perm: PermutationLike, degree: int | None = None, *, name: str = "perm") -> torch.Tensor:
    """Validate ``perm`` as an image array and return it as a 1-D ``torch.long`` tensor.

    Raises ``TypeError`` for non-integer input and ``ValueError`` when ``perm`` is not a
    bijection of ``{0..n-1}`` or its length disagrees with ``degree``.
    """
    if isinstance(perm, torch.Tensor):
        if perm.dtype.is_floating_point or perm.dtype.is_complex or perm.dtype == torch.bool:
            raise TypeError(f"{name} must hold integers, got a tensor of dtype {perm.dtype}")
        tensor = perm.detach().to(device="cpu", dtype=torch.long)
    else:
        if perm is None or isinstance(perm, (str, bytes)) or not hasattr(perm, "__iter__"):
            raise TypeError(f"{name} must be a permutation (a sequence of ints or a LongTensor), got {type(perm).__name__}")
        values = list(perm)
        for value in values:
            if isinstance(value, bool) or (not isinstance(value, int) and not hasattr(value, "__index__")):
                raise TypeError(f"{name} must be a sequence of ints, got element {value!r} of type {type(value).__name__}")
        tensor = torch.tensor([int(v) for v in values], dtype=torch.long)
    if tensor.dim() != 1:
        raise ValueError(f"{name} must be one-dimensional (an image array), got shape {tuple(tensor.shape)}")
    n = tensor.numel()
    if degree is not None and n != degree:
        raise ValueError(f"{name} has length {n} but the degree is {degree}")
    if n and not torch.equal(torch.sort(tensor).values, torch.arange(n)):
        raise ValueError(f"{name} = {tensor.tolist()} is not a permutation of 0..{n - 1}: every point must appear exactly once")
    return tensor


def identity_permutation(degree: int) -> torch.Tensor:
    """The identity permutation of ``degree`` points, ``torch.long [degree]``."""
    check_int(degree, "degree", low=0)
    return torch.arange(degree, dtype=torch.long)


def compose_permutations(g: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Return ``g * h`` (apply ``h`` first): ``(g * h)[i] = g[h[i]]``. Batched over broadcast leading dims."""
    check_tensor(g, "g")
    check_tensor(h, "h")
    g, h = torch.broadcast_tensors(g, h)
    return torch.gather(g, -1, h)


def inverse_permutations(p: torch.Tensor) -> torch.Tensor:
    """Return ``p⁻¹`` (``p⁻¹[p[i]] = i``). Batched over leading dims."""
    check_tensor(p, "p")
    return torch.argsort(p, dim=-1)


def to_sympy(p: torch.Tensor) -> Permutation:
    """Convert an image array to a sympy ``Permutation`` (same image array)."""
    return Permutation(p.tolist())


def from_sympy(p: Permutation, degree: int) -> torch.Tensor:
    """Convert a sympy ``Permutation`` to an image array of ``degree`` points."""
    image = list(p.array_form)
    image.extend(range(len(image), degree))
    return torch.tensor(image, dtype=torch.long)

