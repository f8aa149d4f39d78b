"""The symmetrizer for recurrent policies (LSTM, GRU, or any ``(x, state) -> (y, state)`` module).

At each step the |G| copies ``rho_in(g) x_t`` share the incoming state; each copy returns
its own next state, and the copies' states are combined into one:

- ``hidden="average"`` (the paper's choice): the mean of the copies' states. The combined
  state is G-invariant, so the whole sequence map is G-equivariant.
- ``hidden="identity"``: the identity copy's state (element row 0). Each step is
  equivariant given its incoming state, but that state depends on how the history was
  labelled, so the sequence map is in general not equivariant.

Acting and learning must use the same scheme; :meth:`RecurrentSymmetrizer.forward` runs a
whole sequence through :meth:`~RecurrentSymmetrizer.step`, so both agree exactly.
"""

from __future__ import annotations

from typing import Literal, Union

import torch
from torch import nn

from eqc.groups import PermutationRepresentation
from eqc.symmetrize.symmetrizer import Average, GroupAverager

State = Union[torch.Tensor, tuple[torch.Tensor, ...], None]
HiddenScheme = Literal["average", "identity"]
_SCHEMES = ("average", "identity")


class RecurrentSymmetrizer(nn.Module):
    """Exact symmetrizer for a recurrent ``module(x [B, d_in], state) -> (y [B, d_out], state)``.

    ``state`` is ``None``, a tensor, or a tuple of tensors (e.g. LSTM ``(h, c)``) whose batch
    dimension is ``state_batch_dim`` (1 for ``nn.LSTM``'s ``[layers, B, H]``). Sampled subsets
    of G are not offered here: a recurrent policy must see the same elements at every step.
    """

    def __init__(
        self,
        module: nn.Module,
        in_rep: PermutationRepresentation,
        out_rep: PermutationRepresentation,
        *,
        hidden: HiddenScheme = "average",
        state_batch_dim: int = 1,
        average: Average = "outputs",
        mask_value: float = float("-inf"),
    ) -> None:
        super().__init__()
        if not callable(module):
            raise TypeError(f"module must be an nn.Module or a callable, got {type(module).__name__}")
        if hidden not in _SCHEMES:
            raise ValueError(f"hidden must be one of {_SCHEMES}, got {hidden!r}")
        if isinstance(state_batch_dim, bool) or not isinstance(state_batch_dim, int) or state_batch_dim < 0:
            raise ValueError(f"state_batch_dim must be a non-negative int, got {state_batch_dim!r}")
        self.module = module
        self.averager = GroupAverager(in_rep, out_rep, average=average, mask_value=mask_value)
        self.hidden = hidden
        self.state_batch_dim = state_batch_dim

    def _map_state(self, state: State, fn) -> State:  # noqa: ANN001
        if state is None:
            return None
        if isinstance(state, torch.Tensor):
            return fn(state)
        if isinstance(state, tuple):
            return tuple(fn(s) for s in state)
        raise TypeError(f"state must be None, a tensor or a tuple of tensors, got {type(state).__name__}")

    def _repeat(self, s: torch.Tensor) -> torch.Tensor:
        """Give each of the |G| copies of sample b the state of b (copies of b are adjacent)."""
        if s.dim() <= self.state_batch_dim:
            raise ValueError(f"state tensors need a batch dimension at {self.state_batch_dim}, got shape {tuple(s.shape)}")
        return s.repeat_interleave(self.averager.group_size, dim=self.state_batch_dim)

    def _combine(self, s: torch.Tensor) -> torch.Tensor:
        d, k = self.state_batch_dim, self.averager.group_size
        split = s.reshape(*s.shape[:d], s.shape[d] // k, k, *s.shape[d + 1 :])
        return split.mean(dim=d + 1) if self.hidden == "average" else split.select(d + 1, 0)

    def step(self, x: torch.Tensor, state: State = None, legal_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, State]:
        """One step: ``x [B, d_in]`` -> (``y [B, d_out]``, combined next state)."""
        avg = self.averager
        avg.check_input(x, legal_mask)
        if x.dim() != 2:
            raise ValueError(f"step expects x of shape [batch, {avg.in_rep.dim}], got {tuple(x.shape)}")
        copies = avg.expand(x, None).reshape(-1, avg.in_rep.dim)
        out, new_state = self.module(copies, self._map_state(state, self._repeat))
        if not isinstance(out, torch.Tensor) or out.shape != (copies.shape[0], avg.out_rep.dim):
            raise ValueError(
                f"module must return (y, state) with y of shape [{copies.shape[0]}, {avg.out_rep.dim}], got "
                f"{tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}"
            )
        y = avg.reduce(out.reshape(x.shape[0], avg.group_size, avg.out_rep.dim), None, legal_mask)
        return y, self._map_state(new_state, self._combine)

    def forward(
        self, x: torch.Tensor, state: State = None, legal_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, State]:
        """A whole sequence ``x [T, B, d_in]`` (``legal_mask [T, B, d_out]``), step by step."""
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            raise ValueError(f"forward expects x of shape [time, batch, d_in], got {getattr(x, 'shape', type(x).__name__)}")
        outputs = []
        for t in range(x.shape[0]):
            y, state = self.step(x[t], state, None if legal_mask is None else legal_mask[t])
            outputs.append(y)
        return torch.stack(outputs), state
