"""Many independent small MLP policies evaluated as one batched network.

Member ``k`` is an ordinary MLP ``observation -> hidden (tanh) -> logits`` with its own weights,
initialised from its own seed. Inputs are member-major: ``x [members, ..., d_in]``, or any
tensor whose rows, flattened, come in ``members`` equal consecutive runs (row ``r`` belongs to
member ``r // (rows / members)``). The symmetrizer flattens ``[members, ..., |G|, d_in]`` that
way, so ``Symmetrizer(EnsembleMLP(...), ...)`` symmetrizes every member separately.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from eqc._checks import check_int

__all__ = ["EnsembleMLP", "LogSoftmax"]


class EnsembleMLP(nn.Module):
    """``members`` independent MLPs ``d_in -> hidden -> d_out``, PyTorch-default (uniform fan-in) initialisation.

    Args:
        seeds: one seed per member; member ``k``'s weights come from ``torch.Generator().manual_seed(seeds[k])``.
    """

    def __init__(self, seeds: Sequence[int], d_in: int, hidden: int, d_out: int, device: torch.device | str = "cpu") -> None:
        super().__init__()
        if len(seeds) == 0:
            raise ValueError("need at least one member (one seed)")
        for name, value in (("d_in", d_in), ("hidden", hidden), ("d_out", d_out)):
            check_int(value, name, low=1)
        shapes = {"w1": (d_in, hidden), "b1": (hidden,), "w2": (hidden, d_out), "b2": (d_out,)}
        fan_in = {"w1": d_in, "b1": d_in, "w2": hidden, "b2": hidden}
        tensors: dict[str, list[torch.Tensor]] = {name: [] for name in shapes}
        for seed in seeds:
            generator = torch.Generator().manual_seed(int(seed))
            for name, shape in shapes.items():
                bound = fan_in[name] ** -0.5
                tensors[name].append((torch.rand(shape, generator=generator) * 2 - 1) * bound)
        self.members = len(seeds)
        self.d_in, self.d_out = d_in, d_out
        self.w1, self.b1, self.w2, self.b2 = (nn.Parameter(torch.stack(tensors[n]).to(device)) for n in shapes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``[..., d_out]`` for member-major inputs ``x [..., d_in]`` (see the module docstring)."""
        if x.shape[-1] != self.d_in:
            raise ValueError(f"x must have last dimension {self.d_in}, got shape {tuple(x.shape)}")
        rows = x.numel() // self.d_in
        if rows % self.members:
            raise ValueError(f"{rows} input rows do not split evenly over {self.members} members")
        flat = x.reshape(self.members, rows // self.members, self.d_in)
        hidden = torch.tanh(torch.baddbmm(self.b1.unsqueeze(1), flat, self.w1))
        logits = torch.baddbmm(self.b2.unsqueeze(1), hidden, self.w2)
        return logits.reshape(*x.shape[:-1], self.d_out)


class LogSoftmax(nn.Module):
    """``module`` followed by ``log_softmax``: a policy returning log-probabilities, like ``Symmetrizer(average="probabilities")``."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.module(x), dim=-1)
