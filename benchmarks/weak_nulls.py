"""How often eqc's agent-level tests reject when H0 holds in mean but not in distribution (weak nulls).

``compare_pools`` is exact when, under H0, the agents of the two cells are exchangeable: the cells are the same
*distribution* of agents. A careful reader asks what it does when only the *mean* XP is equal. This benchmark
simulates cross-play matrices of two cells with equal expected XP and prints, per design, the share of datasets
the one-sided test rejects at alpha = 0.05 (a valid test: at most 5%) and its Monte Carlo SE.

Scenarios (``score[i, j]`` for ordered pairs of distinct agents, pair noise N(0, 0.5)):

- ``exchangeable``: both cells additive, ``10 + u_i + u_j`` with ``u ~ N(0, 1)``: the control (about 5% or less).
- ``clustered vs additive``: cell a holds agents of K = 3 conventions, same-convention pairs score ``h``, the others
  ``l``, mean equal to cell b's additive 10 (an OP-like pool against a seed pool); ``roles swapped``: H1 the other way.
- ``skewed effects``: agent effects of cell a left-skewed (a few agents far below), of cell b normal, equal means.
- ``erased conventions`` (paired forms): plain agents of K = 3 conventions; the transformed form (a symmetrizer
  that erases conventions) loses on same-convention pairs and gains on the others, its mean equal to the plain's.

Designs: *unpaired* (the splits of both cells' agents), *matched* (agent k of both cells shares its convention,
as pools that share stream and pi do; the swaps of each matched set) and *paired* (two forms of one agent).
Cross-cell pairs: clustered agents coordinate with any additive agent at the additive mean; matched agents of
the same convention coordinate as the convention's pairs do.

Run: ``OMP_NUM_THREADS=1 python benchmarks/weak_nulls.py [--datasets 1000] [--agents 6 12]`` (about 5 minutes on one
core at the defaults); the figures quoted in ``docs/concepts/cross-play-statistics.md`` come from
``benchmarks/results/weak_nulls.txt``, written by this script.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from eqc.evaluation import compare_pools

ALPHA = 0.05
NOISE = 0.5
CONVENTIONS = 3
HIGH, LOW = 14.0, 8.0  # same- and different-convention pair means of a clustered cell


def _conventions(rng: np.random.Generator, n: int) -> np.ndarray:
    """Each agent's convention, as balanced as ``n`` allows (as the six pi are in a testbed pool), in random order."""
    return rng.permutation(np.arange(n) % CONVENTIONS)


def _clustered_mean(labels: np.ndarray) -> float:
    """The expected XP of a clustered cell with these convention labels (ordered pairs of distinct agents)."""
    same = (labels[:, None] == labels[None, :]).sum() - len(labels)
    pairs = len(labels) * (len(labels) - 1)
    return (same * HIGH + (pairs - same) * LOW) / pairs


def clustered_vs_additive(rng: np.random.Generator, n: int, matched: bool) -> np.ndarray:
    """Cell a (rows 0..n-1) clustered, cell b additive with the same mean XP."""
    labels = _conventions(rng, n)
    mean = _clustered_mean(labels)
    u = rng.normal(0, 1, n)
    x = np.empty((2 * n, 2 * n))
    x[:n, :n] = np.where(labels[:, None] == labels[None, :], HIGH, LOW)
    x[n:, n:] = mean + u[:, None] + u[None, :]
    if matched:  # matched agents share a convention: a's agent with b's agent of its convention coordinates as a pair
        same = labels[:, None] == labels[None, :]
        x[:n, n:] = np.where(same, HIGH, LOW) + u[None, :]
        x[n:, :n] = x[:n, n:].T
    else:
        x[:n, n:] = mean + u[None, :]
        x[n:, :n] = mean + u[:, None]
    return x + rng.normal(0, NOISE, x.shape)


def skewed_effects(rng: np.random.Generator, n: int, matched: bool) -> np.ndarray:
    """Cell a's agent effects left-skewed (minus an exponential, recentred), cell b's normal; equal means."""
    skewed = -(rng.exponential(1.0, n) - 1.0) * 1.5
    normal = rng.normal(0, 1.5, n)
    if matched:  # a shared stream effect per matched set
        shared = rng.normal(0, 1.0, n)
        skewed, normal = skewed + shared, normal + shared
    u = np.concatenate([skewed, normal])
    return 10 + u[:, None] + u[None, :] + rng.normal(0, NOISE, (2 * n, 2 * n))


def exchangeable(rng: np.random.Generator, n: int, matched: bool) -> np.ndarray:
    """Both cells additive with the same distribution of agent effects (matched: plus a shared effect per set)."""
    u = rng.normal(0, 1, 2 * n)
    if matched:
        shared = rng.normal(0, 1, n)
        u = u + np.concatenate([shared, shared])
    return 10 + u[:, None] + u[None, :] + rng.normal(0, NOISE, (2 * n, 2 * n))


def erased_conventions(rng: np.random.Generator, n: int, matched: bool) -> np.ndarray:
    """Two forms of n agents: rows 0..n-1 the transformed form, whose pairs score the plain mean whatever the
    conventions (same-convention pairs lose, the others gain); rows n.. the plain, clustered form."""
    labels = _conventions(rng, n)
    mean = _clustered_mean(labels)
    same = labels[:, None] == labels[None, :]
    plain = np.where(same, HIGH, LOW)
    x = np.empty((2 * n, 2 * n))
    x[:n, :n] = mean
    x[n:, n:] = plain
    x[:n, n:] = x[n:, :n] = (mean + plain) / 2  # a transformed agent with a plain one: half way
    return x + rng.normal(0, NOISE, x.shape)


SCENARIOS: dict[str, tuple[Callable[[np.random.Generator, int, bool], np.ndarray], tuple[str, ...], bool]] = {
    # name -> (matrix maker, designs, roles swapped: H1 is "b > a")
    "exchangeable (control)": (exchangeable, ("unpaired", "matched"), False),
    "clustered vs additive": (clustered_vs_additive, ("unpaired", "matched"), False),
    "clustered vs additive, roles swapped": (clustered_vs_additive, ("unpaired", "matched"), True),
    "skewed effects": (skewed_effects, ("unpaired", "matched"), False),
    "erased conventions (symmetrizer)": (erased_conventions, ("paired",), False),
}


def rejection_rate(name: str, design: str, n: int, datasets: int, seed: int, resamples: int) -> tuple[float, float]:
    """The share of ``datasets`` simulated matrices whose test rejects at ALPHA, and its Monte Carlo SE."""
    make, _, swapped = SCENARIOS[name]
    rng = np.random.default_rng(seed)
    a, b = list(range(n)), list(range(n, 2 * n))
    first, second = (b, a) if swapped else (a, b)
    rejected = 0
    for _ in range(datasets):
        x = make(rng, n, design != "unpaired")
        result = compare_pools(x, first, second, paired=design != "unpaired", resamples=resamples, generator=rng)
        rejected += result.p_value <= ALPHA
    rate = rejected / datasets
    return rate, math.sqrt(rate * (1 - rate) / datasets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000, help="simulated matrices per scenario, design and size")
    parser.add_argument("--agents", type=int, nargs="+", default=[6, 12], help="agents per cell")
    parser.add_argument("--resamples", type=int, default=2000, help="Monte Carlo draws where the arrangements are more")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    if args.datasets < 1 or any(n < 3 for n in args.agents) or args.resamples < 1:
        parser.error("--datasets and --resamples must be >= 1 and every --agents >= 3")
    lines = [f"Rejections at alpha = {ALPHA} (one-sided) of compare_pools under weak nulls (equal expected XP), "
             f"{args.datasets} datasets each, Monte Carlo SE beside; exact below {args.resamples} arrangements, else "
             f"{args.resamples} draws. `{' '.join(['python', *sys.argv])}`", "",
             "| scenario | design | agents per cell | rejected | SE |", "|---|---|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    for k, (name, (_, designs, _)) in enumerate(SCENARIOS.items()):
        for design in designs:
            for n in args.agents:
                rate, se = rejection_rate(name, design, n, args.datasets, seed=1000 * k + n, resamples=args.resamples)
                line = f"| {name} | {design} | {n} | {100 * rate:.1f}% | {100 * se:.1f} |"
                lines.append(line)
                print(line, flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
