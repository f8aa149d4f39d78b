"""Hypothesis strategies for property tests of groups, representations and equivariant networks.

Use them in your own test suite::

    from hypothesis import given
    from eqc.verification import strategies as eqst

    @given(eqst.groups(), st.data())
    def test_my_layer(group, data): ...
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st
from torch import nn

from eqc.dec_pomdp import Layout
from eqc.groups import (
    PermutationGroup,
    PermutationRepresentation,
    alternating,
    cyclic,
    dihedral,
    direct_product,
    direct_sum,
    symmetric,
    tensor_product,
    trivial,
)

__all__ = ["element_indices", "element_permutations", "groups", "networks", "observations", "representations"]


@st.composite
def groups(draw: st.DrawFn, max_degree: int = 6) -> PermutationGroup:
    """A small group from the catalogue (cyclic, dihedral, symmetric, alternating, trivial) or a direct product of two."""
    def catalogue(n: int) -> st.SearchStrategy[PermutationGroup]:
        options = [st.just(cyclic(n)), st.just(trivial(n))]
        if n >= 3:
            options.append(st.just(dihedral(n)))
        if n <= 5:
            options += [st.just(symmetric(n)), st.just(alternating(n))]
        return st.one_of(options)

    n = draw(st.integers(1, max_degree))
    group = draw(catalogue(n))
    if n + 2 <= max_degree and draw(st.booleans()):
        m = draw(st.integers(1, max_degree - n))
        group = direct_product(group, draw(catalogue(m)))
    return group


@st.composite
def element_indices(draw: st.DrawFn, group: PermutationGroup) -> int:
    """An element index of ``group`` (a row of ``group.elements``; see :class:`~eqc.groups.PermutationGroup`)."""
    return draw(st.integers(0, group.order - 1))


@st.composite
def element_permutations(draw: st.DrawFn, group: PermutationGroup) -> torch.Tensor:
    """An element of ``group`` as a permutation ``[degree]`` (uniform, any group size)."""
    seed = draw(st.integers(0, 2**32 - 1))
    return group.random_permutations(1, torch.Generator().manual_seed(seed))[0]


@st.composite
def representations(draw: st.DrawFn, group: PermutationGroup, max_terms: int = 3) -> PermutationRepresentation:
    """A direct sum of tensor products of the standard and trivial representations of ``group``."""
    def factor() -> st.SearchStrategy[PermutationRepresentation]:
        return st.one_of(
            st.just(PermutationRepresentation.standard(group)),
            st.integers(1, 3).map(lambda d: PermutationRepresentation.trivial(group, d)),
        )

    terms = []
    for _ in range(draw(st.integers(1, max_terms))):
        factors = draw(st.lists(factor(), min_size=1, max_size=2))
        terms.append(tensor_product(*factors) if len(factors) > 1 else factors[0])
    return direct_sum(*terms) if len(terms) > 1 else terms[0]


@st.composite
def observations(draw: st.DrawFn, layout: Layout, batch: int = 1, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """A batch ``[batch, layout.dim]`` of observations respecting each block's encoding.

    ``real`` blocks get normal floats, ``binary`` blocks 0/1, ``one_hot`` blocks at most one 1
    over their last ``one_hot_axes`` axes for each index of the leading axes; a record's entries are
    drawn by the record's blocks.
    """
    seed = draw(st.integers(0, 2**31 - 1))
    return _layout_values(layout, batch, torch.Generator().manual_seed(seed), dtype)


def _layout_values(layout: Layout, batch: int, gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    """``[batch, layout.dim]`` values drawn with ``gen`` by each block's encoding (a record's blocks by theirs)."""
    parts = []
    for block in layout:
        if block.record is not None:
            outer = block.size // block.record.dim
            part = _layout_values(block.record, batch * outer, gen, dtype).reshape(batch, block.size)
        elif block.encoding == "real":
            part = torch.randn(batch, block.size, generator=gen, dtype=dtype)
        elif block.encoding == "binary":
            part = torch.randint(0, 2, (batch, block.size), generator=gen).to(dtype)
        else:
            inner = 1
            for s in block.shape[len(block.shape) - block.one_hot_axes :]:
                inner *= s
            outer = block.size // inner
            hot = torch.randint(0, inner + 1, (batch, outer), generator=gen)  # inner means "none"
            part = torch.nn.functional.one_hot(hot, inner + 1)[..., :inner].reshape(batch, block.size).to(dtype)
        parts.append(part)
    return torch.cat(parts, dim=-1) if parts else torch.zeros(batch, 0, dtype=dtype)


@st.composite
def networks(
    draw: st.DrawFn, in_dim: int, out_dim: int, dtype: torch.dtype = torch.float64
) -> nn.Module:
    """A small random MLP ``in_dim -> out_dim`` (1-2 hidden layers, tanh or ReLU), seeded by hypothesis."""
    gen_seed = draw(st.integers(0, 2**31 - 1))
    widths = draw(st.lists(st.integers(4, 32), min_size=1, max_size=2))
    activation = draw(st.sampled_from([nn.Tanh, nn.ReLU]))
    layers: list[nn.Module] = []
    previous = in_dim
    for w in widths:
        layers += [nn.Linear(previous, w), activation()]
        previous = w
    layers.append(nn.Linear(previous, out_dim))
    net = nn.Sequential(*layers).to(dtype)
    gen = torch.Generator().manual_seed(gen_seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype) * 0.5)
    return net
