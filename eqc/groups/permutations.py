"""Pure functions on permutations stored as image arrays.

This module is where eqc's composition convention is defined; every other module refers here.
A **permutation** of ``{0, ..., n-1}`` is an image array ``p``: point ``i`` goes to ``p[i]`` (a
``torch.long`` tensor ``[..., n]``). The product follows function composition,

    (g * h)[i] = g[h[i]]        (apply ``h`` first, then ``g``),

so ``compose_permutations(g, h) == g[h]``. sympy's ``Permutation`` multiplies the other way round
(``p * q`` applies ``p`` first); :func:`to_sympy` / :func:`from_sympy` are the only places that
cross that boundary. The two forms of a *group element* (permutation or index) are defined in
:class:`eqc.groups.PermutationGroup`.

The functions here follow one naming pattern (``identity_*``, ``compose_*``, ``inverse_*``);
:class:`~eqc.groups.PermutationGroup` offers the same verbs for indices.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from sympy.combinatorics import Permutation

from eqc._checks import check_int, check_integers, check_tensor, position

__all__ = [
    "PermutationLike",
    "as_permutations",
    "compose_permutations",
    "from_sympy",
    "identity_permutation",
    "inverse_permutations",
    "to_sympy",
]

PermutationLike = Sequence[int] | torch.Tensor


def as_permutations(
    perms: PermutationLike | Sequence[PermutationLike],
    degree: int | None = None,
    *,
    name: str = "perms",
    batch_dims: int | None = None,
) -> torch.Tensor:
    """Validate image arrays ``[..., n]`` and return them as a ``torch.long`` CPU tensor.

    Each row must be a bijection of ``{0..n-1}``; ``degree`` fixes ``n`` and ``batch_dims`` the number of
    leading dims (0: one permutation ``[n]``; ``None``: any). Group membership is checked on top of this by
    :meth:`eqc.groups.PermutationGroup.check_elements`. Raises ``TypeError`` for non-integers and
    ``ValueError`` for a wrong shape or a row that is not a permutation (naming the first).
    """
    tensor = check_integers(perms, name, what="a permutation" if batch_dims == 0 else "permutations").cpu()
    if tensor.dim() == 0 or (batch_dims is not None and tensor.dim() != batch_dims + 1):
        size = "n" if degree is None else str(degree)
        want = "[..., n]" if batch_dims is None else f"[{', '.join(['k'] * batch_dims + [size])}]"
        raise ValueError(f"{name} must be image arrays of shape {want}, got shape {list(tensor.shape)}")
    n = tensor.shape[-1]
    if degree is not None and n != degree:
        raise ValueError(f"{name} must have last dimension {degree} (the degree), got shape {list(tensor.shape)}")
    if n == 0:
        return tensor
    flat = tensor.reshape(-1, n)
    bad = (torch.sort(flat, dim=-1).values != torch.arange(n)).any(-1)
    if bool(bad.any()):
        k = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"{name}{position(k, tensor.shape[:-1])} = {flat[k].tolist()} is not a permutation of 0..{n - 1}: "
            f"every point must appear exactly once"
        )
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

