"""Pure functions on permutations stored as image arrays.

Convention (used everywhere in eqc): a permutation ``p`` of ``{0, ..., n-1}`` is an
image array, point ``i`` goes to ``p[i]``. The product follows function composition,

    (g * h)[i] = g[h[i]]        (apply ``h`` first, then ``g``),

so ``compose(g, h) == g[h]``. sympy's ``Permutation`` multiplies the other way round
(``p * q`` applies ``p`` first); :func:`to_sympy` / :func:`from_sympy` are the only
places that cross that boundary.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from sympy.combinatorics import Permutation

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
        values = list(perm)
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
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


def identity(degree: int) -> torch.Tensor:
    """The identity permutation of ``degree`` points."""
    return torch.arange(degree, dtype=torch.long)


def compose(g: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """Return ``g * h`` (apply ``h`` first): ``(g * h)[i] = g[h[i]]``. Batched over leading dims."""
    g, h = torch.broadcast_tensors(g, h)
    return torch.gather(g, -1, h)


def invert(p: torch.Tensor) -> torch.Tensor:
    """Return ``p⁻¹`` (``p⁻¹[p[i]] = i``). Batched over leading dims."""
    return torch.argsort(p, dim=-1)


def to_sympy(p: torch.Tensor) -> Permutation:
    """Convert an image array to a sympy ``Permutation`` (same image array)."""
    return Permutation(p.tolist())


def from_sympy(p: Permutation, degree: int) -> torch.Tensor:
    """Convert a sympy ``Permutation`` to an image array of ``degree`` points."""
    image = list(p.array_form)
    image.extend(range(len(image), degree))
    return torch.tensor(image, dtype=torch.long)
