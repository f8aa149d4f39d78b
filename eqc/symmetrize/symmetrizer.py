"""The symmetrizer: any network made exactly G-equivariant.

``S(psi)(x) = 1/|G| sum_g rho_out(g)^-1 psi(rho_in(g) x)`` (Muglich et al., 2022, eq. 3),
with ``rho`` in the direction of :mod:`eqc.groups.representation`. The |G| transformed copies of
the input run through ``psi`` as one batch, or in a few large chunks (``chunk_size``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, TypedDict, Unpack

import torch
from torch import nn

from eqc._checks import check_choice, check_int, check_tensor
from eqc.dec_pomdp.candidate_set import refuse_candidate_set
from eqc.groups import PermutationRepresentation
from eqc.groups.representation import require_same_group

__all__ = ["AUTO_CHUNK_ROWS", "Average", "ElementChunk", "GroupAverager", "Symmetrizer", "check_representations"]

Average = Literal["outputs", "probabilities"]
#: Rows per module call when ``chunk_size="auto"`` chunks (acting without gradients): measured on a
#: 2-core CPU for a 658 -> 512 -> 20 MLP, ~3k rows keep the copies in cache (benchmarks/symmetrizer.py).
AUTO_CHUNK_ROWS = 3072
_AVERAGES = ("outputs", "probabilities")


class ElementChunk(TypedDict, total=False):
    """The elements of one batch of copies, as keyword arguments of :class:`GroupAverager`'s methods, named by their
    form (:class:`~eqc.groups.PermutationGroup`): ``{}`` for all of G, ``{"indices": LongTensor [k]}`` or
    ``{"permutations": LongTensor [k, degree]}``."""

    indices: torch.Tensor | None
    permutations: torch.Tensor | None


def check_representations(in_rep: PermutationRepresentation, out_rep: PermutationRepresentation) -> None:
    """Both must be representations (never ``None``) of the same group; a learned CandidateSet is refused, saying why."""
    for name, rep in (("in_rep", in_rep), ("out_rep", out_rep)):
        refuse_candidate_set(rep, name)
        if not isinstance(rep, PermutationRepresentation):
            raise TypeError(
                f"{name} must be a PermutationRepresentation (e.g. sym.observation_rep or sym.action_rep of a "
                f"Symmetry), got {type(rep).__name__}"
            )
    require_same_group([in_rep, out_rep], ["in_rep", "out_rep"])


class GroupAverager:
    """The group bookkeeping shared by the feed-forward and recurrent symmetrizers.

    ``expand`` turns ``x [..., d_in]`` into the copies ``rho_in(g) x`` ``[..., k, d_in]`` for the
    elements in use (all of G, or ``samples`` drawn per call), and ``reduce`` maps per-copy
    outputs back with ``rho_out(g)^-1`` and averages them. The methods take the elements of a batch of
    copies as ``indices=`` or ``permutations=`` (:data:`ElementChunk`; neither: all of G).
    """

    def __init__(
        self,
        in_rep: PermutationRepresentation,
        out_rep: PermutationRepresentation,
        *,
        average: Average = "outputs",
        samples: int | None = None,
        generator: torch.Generator | None = None,
        mask_value: float = float("-inf"),
    ) -> None:
        check_representations(in_rep, out_rep)
        check_choice(average, "average", _AVERAGES)
        if samples is not None:
            check_int(samples, "samples (None for exact: all of G)", low=1)
        if samples is None:
            in_rep.group.require_enumerable("exact symmetrization (samples=None)")
        self.in_rep, self.out_rep = in_rep, out_rep
        self.average, self.samples, self.generator, self.mask_value = average, samples, generator, mask_value

    @property
    def group_size(self) -> int:
        """Number of copies per input: |G|, or ``samples``."""
        return self.in_rep.group.order if self.samples is None else self.samples

    def draw(self) -> torch.Tensor | None:
        """The elements for one call: ``None`` for all of G, else sampled permutations ``[samples, degree]``."""
        if self.samples is None:
            return None
        return self.in_rep.group.random_permutations(self.samples, self.generator)

    def chunks(
        self, perms: torch.Tensor | None, chunk_size: int | None, device: torch.device | str = "cpu"
    ) -> list[ElementChunk]:
        """Split the elements in use (``perms`` from :meth:`draw`) into chunks: element indices (exact) or
        permutations (sampled), each as the keyword arguments of :meth:`expand` and :meth:`partial`."""
        if perms is not None:
            return [{"permutations": part} for part in ([perms] if chunk_size is None else perms.split(chunk_size))]
        if chunk_size is None:
            return [{}]
        return [{"indices": part} for part in torch.arange(self.group_size, device=device).split(chunk_size)]

    def expand(self, x: torch.Tensor, **chunk: Unpack[ElementChunk]) -> torch.Tensor:
        """``[..., k, d_in]``: ``rho_in(g) x`` for every element in use (neither given: all of G)."""
        return self.in_rep.act_all(x, **chunk)

    def expand_mask(self, legal_mask: torch.Tensor, **chunk: Unpack[ElementChunk]) -> torch.Tensor:
        """``[..., k, d_out]``: ``rho_out(g) mask`` for each copy (what copy ``g`` sees as legal)."""
        return self.out_rep.act_all(legal_mask, **chunk)

    def partial(self, y: torch.Tensor, legal_mask: torch.Tensor | None, **chunk: Unpack[ElementChunk]) -> torch.Tensor:
        """Map the copies ``y [..., k, d_out]`` back with ``rho_out(g)^-1`` and reduce them over ``k``:
        their sum (``"outputs"``) or the log of their summed probabilities (``"probabilities"``)."""
        back = self.out_rep.act_all(y, **chunk, inverse=True)
        if self.average == "outputs":
            return back.sum(dim=-2)
        if legal_mask is None:
            return torch.logsumexp(torch.log_softmax(back, dim=-1), dim=-2)
        # -inf entries would make NaN gradients (in log_softmax for rows with no legal action, e.g. a
        # player not to act, and in logsumexp for illegal entries): keep every reduction finite
        usable = (legal_mask | ~legal_mask.any(-1, keepdim=True)).unsqueeze(-2)
        log_probs = torch.log_softmax(back.masked_fill(~usable, float("-inf")), dim=-1).masked_fill(~usable, 0.0)
        return torch.logsumexp(log_probs, dim=-2)

    def finish(self, partials: list[torch.Tensor], legal_mask: torch.Tensor | None) -> torch.Tensor:
        """Combine the chunks' partial reductions into the group average; illegal entries get ``mask_value``
        (``"outputs"``) or ``-inf`` (``"probabilities"``, returned as log-probabilities)."""
        k = self.group_size
        if self.average == "outputs":
            result = (partials[0] if len(partials) == 1 else torch.stack(partials).sum(0)) / k
            fill = self.mask_value
        else:
            total = partials[0] if len(partials) == 1 else torch.logsumexp(torch.stack(partials), dim=0)
            result, fill = total - math.log(k), float("-inf")
        return result if legal_mask is None else result.masked_fill(~legal_mask, fill)

    def reduce(self, y: torch.Tensor, legal_mask: torch.Tensor | None, **chunk: Unpack[ElementChunk]) -> torch.Tensor:
        """Average ``rho_out(g)^-1 y_g`` over all copies ``y [..., k, d_out]`` in one go."""
        return self.finish([self.partial(y, legal_mask, **chunk)], legal_mask)

    def check_input(self, x: torch.Tensor, legal_mask: torch.Tensor | None) -> None:
        check_tensor(x, "x")
        if x.dim() == 0 or x.shape[-1] != self.in_rep.dim:
            raise ValueError(f"x must have last dimension {self.in_rep.dim} (in_rep.dim), got shape {tuple(x.shape)}")
        if legal_mask is not None:
            check_tensor(legal_mask, "legal_mask", dtypes=[torch.bool])
            if legal_mask.device != x.device:
                raise ValueError(f"legal_mask is on {legal_mask.device} but x is on {x.device}")
            if legal_mask.shape[:-1] != x.shape[:-1] or legal_mask.shape[-1] != self.out_rep.dim:
                raise ValueError(
                    f"legal_mask must have shape {(*tuple(x.shape[:-1]), self.out_rep.dim)} (x's leading dims, "
                    f"then out_rep.dim), got {tuple(legal_mask.shape)}"
                )


class Symmetrizer(nn.Module):
    """``S(psi)``: wraps ``module`` (``[N, d_in] -> [N, d_out]``) into an exactly G-equivariant module.

    Args:
        module: any network or callable on a batch of flat inputs.
        in_rep, out_rep: permutation representations of one group on inputs and outputs.
        average: ``"outputs"`` averages the raw outputs (Q-values, logits, values);
            ``"probabilities"`` averages each copy's softmax and returns log-probabilities.
        samples: ``None`` sums over all of G (exact; refused for groups larger than their
            ``enumeration_limit``); an int draws that many uniform elements per call instead:
            an unbiased but *approximate* symmetrization, equivariant only in expectation.
        generator: the torch.Generator for ``samples``.
        pass_mask: call ``module(x_g, mask_g)`` with the legal mask relabelled for each copy.
        mask_value: fill value for illegal outputs when ``average="outputs"``.
        chunk_size: run the copies through ``module`` this many elements at a time and accumulate
            (same result; peak memory divided by about ``|G| / chunk_size``). ``None``: all copies in
            one batched call. ``"auto"`` (default): one call, except when acting (no gradients) on
            a CPU, where chunks of about :data:`AUTO_CHUNK_ROWS` rows keep the copies cache-sized.

    ``forward(x, legal_mask=None)``: ``x [..., d_in]``, ``legal_mask`` bool ``[..., d_out]``.
    """

    def __init__(
        self,
        module: nn.Module | Callable[..., torch.Tensor],
        in_rep: PermutationRepresentation,
        out_rep: PermutationRepresentation,
        *,
        average: Average = "outputs",
        samples: int | None = None,
        generator: torch.Generator | None = None,
        pass_mask: bool = False,
        mask_value: float = float("-inf"),
        chunk_size: int | Literal["auto"] | None = "auto",
    ) -> None:
        super().__init__()
        if not callable(module):
            raise TypeError(f"module must be an nn.Module or a callable, got {type(module).__name__}")
        if chunk_size not in (None, "auto"):
            check_int(chunk_size, "chunk_size", low=1)
        self.module = module
        self.chunk_size = chunk_size
        self.averager = GroupAverager(
            in_rep, out_rep, average=average, samples=samples, generator=generator, mask_value=mask_value
        )
        self.pass_mask = pass_mask

    @property
    def in_rep(self) -> PermutationRepresentation:
        return self.averager.in_rep

    @property
    def out_rep(self) -> PermutationRepresentation:
        return self.averager.out_rep

    def forward(self, x: torch.Tensor, legal_mask: torch.Tensor | None = None) -> torch.Tensor:
        avg = self.averager
        avg.check_input(x, legal_mask)
        if self.pass_mask and legal_mask is None:
            raise ValueError("pass_mask=True needs a legal_mask")
        chunks = avg.chunks(avg.draw(), self._chunk_size(x), x.device)
        return avg.finish([self._partial(x, legal_mask, chunk) for chunk in chunks], legal_mask)

    def _chunk_size(self, x: torch.Tensor) -> int | None:
        if self.chunk_size != "auto":
            return self.chunk_size
        rows = x.numel() // max(1, x.shape[-1])
        if torch.is_grad_enabled() or x.device.type != "cpu" or rows * self.averager.group_size <= AUTO_CHUNK_ROWS:
            return None
        return max(1, AUTO_CHUNK_ROWS // max(1, rows))

    def _partial(self, x: torch.Tensor, legal_mask: torch.Tensor | None, chunk: ElementChunk) -> torch.Tensor:
        """Run the copies for the elements of ``chunk`` through the module and reduce them (see ``GroupAverager.partial``)."""
        avg = self.averager
        copies = avg.expand(x, **chunk)  # [..., k, d_in]
        lead = copies.shape[:-1]
        flat = copies.reshape(-1, avg.in_rep.dim)
        if self.pass_mask and legal_mask is not None:  # forward refuses pass_mask without a legal_mask
            masks = avg.expand_mask(legal_mask, **chunk)
            out = self.module(flat, masks.reshape(-1, avg.out_rep.dim))
        else:
            out = self.module(flat)
        if not isinstance(out, torch.Tensor) or out.shape[-1] != avg.out_rep.dim:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(f"module must return a tensor with last dimension {avg.out_rep.dim} (out_rep.dim), got {shape}")
        return avg.partial(out.reshape(*lead, avg.out_rep.dim), legal_mask, **chunk)
