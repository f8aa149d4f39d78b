"""Speed and memory of eqc's Symmetrizer at Hanabi sizes, against the alternatives.

Network: MLP 658 -> 512 -> 20 (ReLU), batch 128, Hanabi's colour symmetry (observation dim 658,
action dim 20) under dihedral(5) (|G| = 10) and symmetric(5) (|G| = 120). Variants:

- ``bare net, batch B``: the unsymmetrized network (what an ordinary agent costs);
- ``(a) bare net, batch B*|G|``: the network on |G| times as many rows, the unavoidable cost of
  exact symmetrization (the target is Symmetrizer overhead <= 15% over this);
- ``Symmetrizer``: eqc.symmetrize.Symmetrizer, all copies as one gather + one batched call;
- ``Symmetrizer, chunk_size=k`` (groups larger than ``--chunk-rows / B`` elements): the same,
  k elements per module call, accumulated (less memory; faster for acting with large groups);
- ``(b) Python loop``: one network call per group element, with rho(g) applied by eqc's gathers;
- ``(c) dense matrices``: rho(g) as dense [|G|, 658, 658] and [|G|, 20, 20] permutation matrices
  applied by batched matmuls, as in the paper's public code;
- ``(d) escnn MLP`` (cyclic and dihedral groups): escnn ``Linear`` layers 658 -> hidden // |G| regular fields -> 20
  on fields over ``no_base_space``, input/output fields from ``PermutationRepresentation.to_escnn``.
  Forward is timed in eval mode (weights expanded once and cached), forward+backward in train mode
  (the equivariant basis is expanded on every call, as during learning).

"forward" runs under ``torch.no_grad()`` (acting); "fwd+bwd" is ``out.sum().backward()`` (learning).
Times are medians over interleaved rounds (every variant timed once per round, so load from
other processes hits all alike) of torch.utils.benchmark blocks; "peak MiB" is the peak of memory allocated
during one call, from torch.profiler's memory events (persistent buffers such as the dense matrices
are listed separately).

Usage: python benchmarks/symmetrizer.py [--groups D10 S5] [--min-run-time 1.0] [--rounds 5]
       [--threads 2] [--no-escnn] [--breakdown] [--append-results benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile
from torch.utils import benchmark

from eqc.dec_pomdp import Symmetry
from eqc.groups import PermutationGroup, PermutationRepresentation, cyclic, dihedral, symmetric
from eqc.symmetrize import Symmetrizer

OBS_DIM, ACT_DIM = 658, 20  # 2-player Hanabi: canonical observation, moves
GROUPS: dict[str, Callable[[], PermutationGroup]] = {
    "D10": lambda: dihedral(5),
    "C5": lambda: cyclic(5),
    "S5": lambda: symmetric(5),
}


# ---------------------------------------------------------------------------------------------- setup
def hanabi_symmetry(group: PermutationGroup) -> Symmetry:
    """Hanabi's 2-player colour symmetry (observation dim 658, action dim 20)."""
    from eqc.domains.hanabi.symmetry import colour_symmetry

    sym = colour_symmetry(group)
    if (sym.observation_rep.dim, sym.action_rep.dim) != (OBS_DIM, ACT_DIM):
        raise RuntimeError(f"expected Hanabi dims ({OBS_DIM}, {ACT_DIM}), got ({sym.observation_rep.dim}, {sym.action_rep.dim})")
    return sym


def mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))


class LoopSymmetrizer(nn.Module):
    """(b): one network call per group element (eqc gathers for rho)."""

    def __init__(self, module: nn.Module, in_rep: PermutationRepresentation, out_rep: PermutationRepresentation) -> None:
        super().__init__()
        self.module, self.in_rep, self.out_rep = module, in_rep, out_rep

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = torch.zeros(x.shape[0], self.out_rep.dim)
        for g in range(self.in_rep.group.order):
            total = total + self.out_rep.act(self.module(self.in_rep.act(x, g)), g, inverse=True)
        return total / self.in_rep.group.order


def dense_matrices(rep: PermutationRepresentation) -> torch.Tensor:
    """``[order, dim, dim]`` with ``M_g e_c = e_{perm_g(c)}`` (rep.matrices() without its size limit)."""
    order, dim = rep.group.order, rep.dim
    mats = torch.zeros(order, dim, dim)
    mats[torch.arange(order)[:, None], rep.coordinate_permutations, torch.arange(dim).expand(order, -1)] = 1.0
    return mats


class DenseSymmetrizer(nn.Module):
    """(c): rho(g) as dense permutation matrices, applied with batched matmuls."""

    def __init__(self, module: nn.Module, in_rep: PermutationRepresentation, out_rep: PermutationRepresentation) -> None:
        super().__init__()
        self.module = module
        self.register_buffer("rho_in", dense_matrices(in_rep))  # [G, d_in, d_in]
        self.register_buffer("rho_out_inv", dense_matrices(out_rep).transpose(1, 2).contiguous())  # [G, d_out, d_out]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        copies = torch.matmul(x.unsqueeze(0), self.rho_in.transpose(1, 2))  # [G, B, d_in]: row b is rho(g) x_b
        out = self.module(copies.reshape(-1, copies.shape[-1])).reshape(copies.shape[0], x.shape[0], -1)
        return torch.matmul(out, self.rho_out_inv.transpose(1, 2)).mean(0)  # rho(g)^-1 y_g, averaged


def escnn_mlp(sym: Symmetry, hidden_fields: int) -> tuple[nn.Module, float]:
    """(d): escnn equivariant MLP on the same representations; returns it and its build time in s."""
    import escnn.nn as enn

    from eqc.groups.escnn_bridge import field_type

    start = time.perf_counter()
    in_type = field_type(sym.observation_rep)
    hidden_type = enn.FieldType(in_type.gspace, [in_type.fibergroup.regular_representation] * hidden_fields)
    out_type = field_type(sym.action_rep)
    net = enn.SequentialModule(
        enn.Linear(in_type, hidden_type), enn.ReLU(hidden_type), enn.Linear(hidden_type, out_type)
    )

    class Wrapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(in_type(x)).tensor

    return Wrapped(), time.perf_counter() - start


# ---------------------------------------------------------------------------------------------- measuring
def interleaved_ms(fns: dict[str, Callable[[], object]], min_run_time: float, rounds: int) -> dict[str, tuple[float, float]]:
    """(median, min) ms per call of each function, measured in interleaved rounds.

    Each function is warmed up and calibrated (calls per block so that a block lasts about
    ``min_run_time / rounds``), then every round times one block of each function in turn, so
    load from other processes hits all variants alike. A function slower than a block (the
    Python loop over 120 elements takes seconds) is timed by its calibration call and one round.
    """
    timers, numbers, samples = {}, {}, {}
    block = min_run_time / rounds
    for label, fn in fns.items():
        fn()  # warm-up: allocator, caches, lazily built tables
        timers[label] = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
        once = timers[label].timeit(1).mean
        numbers[label] = max(1, int(block / once))
        samples[label] = [once] if once > block else []
    slow = {label for label, values in samples.items() if values}
    for r in range(rounds):
        for label, timer in timers.items():
            if r == 0 or label not in slow:
                samples[label].append(timer.timeit(numbers[label]).mean)
    return {label: (statistics.median(v) * 1e3, min(v) * 1e3) for label, v in samples.items()}


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak of the memory allocated (and not yet freed) during one call of ``fn`` (already warmed up)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns())
    live = peak = 0
    for event in events:
        live += event.nbytes()
        peak = max(peak, live)
    return peak / 2**20


def forward_fn(model: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    def run() -> object:
        with torch.no_grad():
            return model(x)

    return run


def train_fn(model: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    params = [p for p in model.parameters() if p.requires_grad]

    def run() -> None:
        for p in params:
            p.grad = None
        model(x).sum().backward()

    return run


@dataclass
class Row:
    group: str
    order: int
    variant: str
    mode: str
    ms: float
    ms_min: float
    peak: float
    note: str = ""


def bench_group(name: str, args: argparse.Namespace, rows: list[Row], breakdown: list[str]) -> None:
    group = GROUPS[name]()
    sym = hanabi_symmetry(group)
    in_rep, out_rep = sym.observation_rep, sym.action_rep
    order, batch = group.order, args.batch
    torch.manual_seed(0)
    net = mlp(in_rep.dim, args.hidden, out_rep.dim)
    x = torch.rand(batch, in_rep.dim).round()  # 0/1 features, like Hanabi's observation
    x_big = torch.rand(batch * order, in_rep.dim).round()

    sym_net = Symmetrizer(net, in_rep, out_rep)
    chunk = max(1, args.chunk_rows // batch)
    chunked = Symmetrizer(net, in_rep, out_rep, chunk_size=chunk)
    loop_net = LoopSymmetrizer(net, in_rep, out_rep)
    dense_net = DenseSymmetrizer(net, in_rep, out_rep)
    with torch.no_grad():  # all variants must agree before they are timed
        ref = sym_net(x)
        for other in (chunked, loop_net, dense_net):
            torch.testing.assert_close(other(x), ref, rtol=1e-4, atol=1e-5)
    dense_mib = (dense_net.rho_in.numel() + dense_net.rho_out_inv.numel()) * 4 / 2**20

    variants: list[tuple[str, nn.Module, torch.Tensor, str]] = [
        ("bare net, batch B", net, x, ""),
        ("(a) bare net, batch B*|G|", net, x_big, "reference"),
        ("Symmetrizer (eqc)", sym_net, x, ""),
    ]
    if chunk < order:
        variants.append((f"Symmetrizer, chunk_size={chunk}", chunked, x, ""))
    variants += [
        ("(b) Python loop over G", loop_net, x, ""),
        ("(c) dense matrices", dense_net, x, f"+{dense_mib:.0f} MiB of matrices"),
    ]
    if args.escnn and name in ("D10", "C5"):
        fields = args.hidden // order
        model, build_s = escnn_mlp(sym, fields)
        params = sum(p.numel() for p in model.parameters())
        note = f"build {build_s:.1f} s; {params:,} weights (MLP: {sum(p.numel() for p in net.parameters()):,})"
        variants.append((f"(d) escnn MLP ({fields} regular fields)", model, x, note))

    for mode, make in (("forward", forward_fn), ("fwd+bwd", train_fn)):
        fns = {}
        for label, model, inp, _ in variants:
            if label.startswith("(d)"):
                model.train(mode == "fwd+bwd")
            fns[label] = make(model, inp)
        times = interleaved_ms(fns, args.min_run_time, args.rounds)
        for label, _, _, note in variants:
            median, fastest = times[label]
            rows.append(Row(name, order, label, mode, median, fastest, peak_mib(fns[label]), note))
            print(f"  {name:11s} {mode:8s} {label:42s} {median:9.2f} ms", file=sys.stderr, flush=True)

    if args.breakdown:  # where the Symmetrizer's forward time goes
        avg = sym_net.averager
        with torch.no_grad():
            copies = avg.expand(x)
            flat = copies.reshape(-1, in_rep.dim)
            out = net(flat).reshape(batch, order, out_rep.dim)
            parts = {
                "expand (index_select of the gather table)": lambda: avg.expand(x),
                "reshape to [B*\\|G\\|, d] (a view)": lambda: copies.reshape(-1, in_rep.dim),
                "module on the copies": lambda: net(flat),
                "module on a contiguous fresh batch": lambda: net(x_big),
                "reduce (gather rho_out^-1, mean)": lambda: avg.reduce(out, None),
            }
            for part, (median, fastest) in interleaved_ms(parts, args.min_run_time / 2, args.rounds).items():
                breakdown.append(f"| {name} | {part} | {median:.2f} | {fastest:.2f} |")


# ---------------------------------------------------------------------------------------------- report
def table(rows: list[Row]) -> str:
    reference = {(r.group, r.mode): (r.ms, r.ms_min) for r in rows if r.variant.startswith("(a)")}
    lines = [
        "| group | \\|G\\| | mode | variant | median ms | min ms | median vs (a) | min vs (a) | peak MiB | note |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        ref_median, ref_min = reference[(r.group, r.mode)]
        lines.append(
            f"| {r.group} | {r.order} | {r.mode} | {r.variant.replace('|', chr(92) + '|')} | {r.ms:.2f} | {r.ms_min:.2f} "
            f"| {r.ms / ref_median:.2f}x | {r.ms_min / ref_min:.2f}x | {r.peak:.1f} | {r.note} |"
        )
    return "\n".join(lines)


def machine(load_before: tuple[float, ...], load_after: tuple[float, ...]) -> str:
    import numpy

    return (
        f"{platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"numpy {numpy.__version__}; load average (1/5/15 min) before {load_before[0]:.2f}/{load_before[1]:.2f}/"
        f"{load_before[2]:.2f}, after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", nargs="+", default=["D10", "S5"], choices=sorted(GROUPS))
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chunk-rows", type=int, default=3072, help="rows per module call in the chunked variant")
    parser.add_argument("--min-run-time", type=float, default=1.0, help="about this many seconds of timing per variant")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (the median is reported)")
    parser.add_argument("--no-escnn", dest="escnn", action="store_false", help="skip (d), the escnn MLP")
    parser.add_argument("--breakdown", action="store_true", help="also time the Symmetrizer's parts")
    parser.add_argument("--append-results", metavar="PATH", help="append the report to this markdown file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.escnn:
        try:
            import escnn  # noqa: F401
        except ImportError:
            print("escnn is not installed: skipping (d)", file=sys.stderr)
            args.escnn = False

    start, load_before = time.perf_counter(), os.getloadavg()
    rows: list[Row] = []
    breakdown: list[str] = []
    for name in args.groups:
        bench_group(name, args, rows, breakdown)
    elapsed, load_after = time.perf_counter() - start, os.getloadavg()

    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    report = [
        f"### Symmetrizer at Hanabi sizes ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"Command: `{command}` ({elapsed:.0f} s)",
        "",
        f"Machine: {machine(load_before, load_after)}",
        "",
        f"MLP {OBS_DIM} -> {args.hidden} -> {ACT_DIM} (ReLU), batch B = {args.batch}; forward under no_grad, fwd+bwd = "
        "out.sum().backward(); median and min over interleaved rounds of torch.utils.benchmark blocks; "
        "peak MiB = peak memory allocated during one call (torch.profiler).",
        "",
        table(rows),
    ]
    if breakdown:
        report += ["", "Symmetrizer forward, by part:", "", "| group | part | median ms | min ms |", "|---|---|---:|---:|", *breakdown]
    text = "\n".join(report) + "\n"
    print(text)
    if args.append_results:
        with open(args.append_results, "a", encoding="utf-8") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
