"""The symmetrizer for recurrent policies (LSTM, GRU, or any ``(x, state) -> (y, state)`` module).

At each step the |G| copies ``rho_in(g) x_t`` share the incoming state; each copy returns
its own next state, and the copies' states are combined into one:

- ``hidden_scheme="average"`` (the paper's choice): the mean of the copies' states. The combined
  state is G-invariant, so the whole sequence map is G-equivariant.
- ``hidden_scheme="identity"``: the identity copy's state (element row 0). Each step is
  equivariant given its incoming state, but that state depends on how the history was
  labelled, so the sequence map is in general not equivariant.

Acting and learning must use the same scheme; :meth:`RecurrentSymmetrizer.forward` runs a
whole sequence through :meth:`~RecurrentSymmetrizer.step`, so both agree exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

import torch
from torch import nn

from eqc._checks import check_choice, check_int, check_tensor
from eqc.groups import PermutationRepresentation
from eqc.symmetrize.symmetrizer import Average, GroupAverager

__all__ = ["DEFAULT_HIDDEN_SCHEME", "HIDDEN_SCHEMES", "HiddenScheme", "RecurrentSymmetrizer", "State"]

State = torch.Tensor | tuple[torch.Tensor, ...] | None
_T = TypeVar("_T")
HiddenScheme = Literal["average", "identity"]
#: The hidden-state schemes (see the module docstring), and the default: the paper's.
HIDDEN_SCHEMES: tuple[HiddenScheme, ...] = ("average", "identity")
DEFAULT_HIDDEN_SCHEME: HiddenScheme = "average"


class RecurrentSymmetrizer(nn.Module):
    """Exact symmetrizer for a recurrent ``module(x [B, d_in], state) -> (y [B, d_out], state)``.

    ``state`` is ``None``, a tensor, or a tuple of tensors (e.g. LSTM ``(h, c)``) whose batch
    dimension is ``state_batch_dim`` (1 for ``nn.LSTM``'s ``[layers, B, H]``). Sampled subsets
    of G are not offered here: a recurrent policy must see the same elements at every step.

    Calling convention: ``module`` is called once per step as ``module(x_copies, state_copies)``
    with ``x_copies [B * |G|, d_in]`` (the |G| copies of each input, adjacent) and every state
    tensor repeated |G| times along ``state_batch_dim``; it must return ``(y [B * |G|, d_out],
    next_state)`` with the state in the same layout. ``nn.LSTM`` itself does not fit (it wants a
    time axis): wrap it, e.g. ``z, s = lstm(x.unsqueeze(0), s); return head(z[0]), s``.
    """

    def __init__(
        self,
        module: nn.Module | Callable[..., tuple[torch.Tensor, State]],
        in_rep: PermutationRepresentation,
        out_rep: PermutationRepresentation,
        *,
        hidden_scheme: HiddenScheme = DEFAULT_HIDDEN_SCHEME,
        state_batch_dim: int = 1,
        average: Average = "outputs",
        mask_value: float = float("-inf"),
    ) -> None:
        super().__init__()
        if not callable(module):
            raise TypeError(f"module must be an nn.Module or a callable, got {type(module).__name__}")
        check_choice(hidden_scheme, "hidden_scheme", HIDDEN_SCHEMES)
        check_int(state_batch_dim, "state_batch_dim", low=0)
        self.module = module
        self.averager = GroupAverager(in_rep, out_rep, average=average, mask_value=mask_value)
        self.hidden_scheme = hidden_scheme
        self.state_batch_dim = state_batch_dim

    def _map_state(self, state: State, fn: Callable[[torch.Tensor], _T], name: str = "state") -> _T | tuple[_T, ...] | None:
        if state is None:
            return None
        if isinstance(state, torch.Tensor):
            return fn(state)
        if isinstance(state, tuple):
            for k, s in enumerate(state):
                if not isinstance(s, torch.Tensor):
                    raise TypeError(f"{name}[{k}] must be a torch.Tensor, got {type(s).__name__}")
            return tuple(fn(s) for s in state)
        raise TypeError(f"{name} must be None, a tensor or a tuple of tensors, got {type(state).__name__}")

    def _check_state(self, state: State, batch: int) -> None:
        """Every state tensor holds one state per input: size ``batch`` at ``state_batch_dim``."""
        tensors = [] if state is None else [("state", state)] if isinstance(state, torch.Tensor) else [
            (f"state[{k}]", s) for k, s in enumerate(state)
        ]
        d = self.state_batch_dim
        for name, s in tensors:
            if s.dim() <= d or s.shape[d] != batch:
                expected = list(s.shape)
                if s.dim() > d:
                    expected[d] = batch
                    want = f"shape {expected}"
                else:
                    want = f"a batch dimension of size {batch} at dim {d}"
                raise ValueError(
                    f"{name} must hold one state per input: x has batch {batch} and state_batch_dim is {d}, so "
                    f"{name} needs {want}; got shape {list(s.shape)}"
                )

    def _repeat(self, s: torch.Tensor) -> torch.Tensor:
        """Give each of the |G| copies of sample b the state of b (copies of b are adjacent)."""
        return s.repeat_interleave(self.averager.group_size, dim=self.state_batch_dim)

    def _convention(self, batch: int, state: State) -> str:
        k, d = self.averager.group_size, self.state_batch_dim
        return (
            f"RecurrentSymmetrizer calls module(x, state) once per step with the |G|={k} copies of each of the "
            f"{batch} inputs: x of shape [{batch} * {k}, {self.averager.in_rep.dim}] and each state tensor "
            f"repeated {k} times along state_batch_dim={d}; the module must take (x, state) and return "
            f"(y [{batch} * {k}, {self.averager.out_rep.dim}], state in the same layout)"
        )

    def _shapes(self, state: State) -> object:
        return None if state is None else self._map_state(state, lambda s: list(s.shape))

    def _combine(self, s: torch.Tensor) -> torch.Tensor:
        d, k = self.state_batch_dim, self.averager.group_size
        split = s.reshape(*s.shape[:d], s.shape[d] // k, k, *s.shape[d + 1 :])
        return split.mean(dim=d + 1) if self.hidden_scheme == "average" else split.select(d + 1, 0)

    def step(self, x: torch.Tensor, state: State = None, legal_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, State]:
        """One step: ``x [B, d_in]`` -> (``y [B, d_out]``, combined next state)."""
        avg = self.averager
        avg.check_input(x, legal_mask)
        if x.dim() != 2:
            raise ValueError(f"step expects x of shape [batch, {avg.in_rep.dim}], got {tuple(x.shape)}")
        batch = x.shape[0]
        self._map_state(state, lambda s: s)  # type check
        self._check_state(state, batch)
        copies = avg.expand(x).reshape(-1, avg.in_rep.dim)
        try:
            result = self.module(copies, self._map_state(state, self._repeat))
        except (TypeError, RuntimeError) as err:
            raise type(err)(
                f"the module failed on the state given per input as {self._shapes(state)}: {self._convention(batch, state)}. "
                f"The module said (sizes there are {self.averager.group_size}x the batch): {err}"
            ) from err
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(
                f"module must return a pair (y, state), got {type(result).__name__}: {self._convention(batch, state)}"
            )
        out, new_state = result
        if not isinstance(out, torch.Tensor) or out.shape != (copies.shape[0], avg.out_rep.dim):
            raise ValueError(
                f"module must return (y, state) with y of shape [{batch} * {avg.group_size}, {avg.out_rep.dim}], got "
                f"{list(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}"
            )
        self._check_state(self._map_state(new_state, lambda s: s, "the module's returned state"), copies.shape[0])
        y = avg.reduce(out.reshape(x.shape[0], avg.group_size, avg.out_rep.dim), legal_mask)
        return y, self._map_state(new_state, self._combine)

    def forward(
        self, x: torch.Tensor, state: State = None, legal_mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, State]:
        """A whole sequence ``x [T, B, d_in]`` (``legal_mask [T, B, d_out]``), step by step."""
        check_tensor(x, "x")
        if x.dim() != 3:
            raise ValueError(f"forward expects x of shape [time, batch, d_in], got {getattr(x, 'shape', type(x).__name__)}")
        outputs = []
        for t in range(x.shape[0]):
            y, state = self.step(x[t], state, None if legal_mask is None else legal_mask[t])
            outputs.append(y)
        return torch.stack(outputs), state
