"""How often eqc's agent-level tests reject when H0 holds in mean but not in distribution (weak nulls).

``compare_pools`` is exact when, under H0, the agents of the two cells are exchangeable: the cells are the same
*distribution* of agents. A careful reader asks what it does when only the *mean* XP is equal. This benchmark
simulates cross-play matrices of two cells with equal expected XP and prints, per design, the share of datasets
the one-sided test rejects at alpha = 0.05 (a valid test: at most 5%) with its Monte Carlo SE, and the share whose
interval lies wholly on the other side of 0: the verdict *reversed*, false under these nulls, for the 95% interval of
an exploratory test (nominal 2.5%) and for the simultaneous interval of a primary test in a family of three, as in the
pre-registered table (confidence 1 - 0.05/3, nominal 0.83%).

Scenarios (``score[i, j]`` for ordered pairs of distinct agents, pair noise N(0, 0.5); each agent's convention code
drawn uniformly from K = 3 at random, as training draws them. The nulls equate *expected* XP over those draws: a
clustered cell whose codes happen to coincide cross-plays above its expectation, one whose codes differ below it, and
that variation, which a pool of exactly balanced codes would remove, is part of what the tests face):

- ``exchangeable``: both cells additive, ``10 + u_i + u_j`` with ``u ~ N(0, 1)``: the control (about 5% or less).
- ``clustered vs additive``: cell a holds agents of K = 3 conventions, same-convention pairs score ``h`` = 14, the
  others ``l`` = 8, expected XP (h + 2 l) / 3 = 10, cell b's additive mean (an OP-like pool against a seed pool);
  ``roles swapped``: H1 the other way.
- ``skewed effects``: agent effects of cell a left-skewed (a few agents far below), of cell b normal, equal means.
- ``erased conventions`` (paired forms): plain agents of K = 3 conventions; the transformed form (a symmetrizer
  that erases conventions) scores the plain form's expected XP on every pair: it loses on same-convention pairs and
  gains on the others.

Designs: *unpaired* (the splits of both cells' agents), *matched* (agent k of both cells shares its convention,
as pools that share stream and pi do; the swaps of each matched set) and *paired* (two forms of one agent).
Cross-cell pairs: clustered agents coordinate with any additive agent at the additive mean; matched agents of
the same convention coordinate as the convention's pairs do.

Run: ``OMP_NUM_THREADS=1 python benchmarks/weak_nulls.py [--datasets 1000] [--agents 6 12]`` (minutes on an idle
core at the defaults; the output records the CPU, the load it ran under and its wall clock); the figures quoted in
``docs/concepts/cross-play-statistics.md`` come from ``benchmarks/results/weak_nulls.txt``, written by this script.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats

from eqc.evaluation import compare_pools, verdict

ALPHA = 0.05
NOISE = 0.5
CONVENTIONS = 3
HIGH, LOW = 14.0, 8.0  # same- and different-convention pair means of a clustered cell
#: Primary tests in the pre-registered table's Holm family: its simultaneous intervals have confidence 1 - ALPHA / FAMILY.
FAMILY = 3


def _conventions(rng: np.random.Generator, n: int) -> np.ndarray:
    """Each agent's convention code, drawn uniformly at random from :data:`CONVENTIONS` (as training draws them)."""
    return rng.integers(0, CONVENTIONS, n)


#: The expected XP of a clustered cell over the code draws: two distinct agents share their code with probability 1/K.
CLUSTERED_MEAN = (HIGH + (CONVENTIONS - 1) * LOW) / CONVENTIONS


def clustered_vs_additive(rng: np.random.Generator, n: int, matched: bool) -> np.ndarray:
    """Cell a (rows 0..n-1) clustered, cell b additive with the same expected XP."""
    labels = _conventions(rng, n)
    mean = CLUSTERED_MEAN
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
    """Two forms of n agents: rows 0..n-1 the transformed form, whose pairs score the plain form's expected XP whatever
    the conventions (same-convention pairs lose, the others gain); rows n.. the plain, clustered form."""
    labels = _conventions(rng, n)
    mean = CLUSTERED_MEAN
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


def _rate(count: int, datasets: int) -> str:
    """A share in percent with its Monte Carlo SE."""
    rate = count / datasets
    return f"{100 * rate:.1f}% | {100 * math.sqrt(rate * (1 - rate) / datasets):.1f}"


def error_rates(name: str, design: str, n: int, datasets: int, seed: int, resamples: int) -> tuple[int, int, int]:
    """Of ``datasets`` simulated matrices: how many the test rejects at ALPHA, and how many get the verdict *reversed*
    from the 95% interval and from the simultaneous interval of a family of :data:`FAMILY`."""
    make, _, swapped = SCENARIOS[name]
    rng = np.random.default_rng(seed)
    a, b = list(range(n)), list(range(n, 2 * n))
    first, second = (b, a) if swapped else (a, b)
    rejected = reversed_95 = reversed_family = 0
    for _ in range(datasets):
        x = make(rng, n, design != "unpaired")
        result = compare_pools(x, first, second, paired=design != "unpaired", resamples=resamples, generator=rng)
        rejected += result.p_value <= ALPHA
        reversed_95 += verdict(result.difference, result.p_value, "greater", ALPHA, interval=result.interval) == "reversed"
        half = float(stats.t.ppf(1 - ALPHA / (2 * FAMILY), result.df)) * result.se
        family = (result.difference - half, result.difference + half)
        reversed_family += verdict(result.difference, result.p_value, "greater", ALPHA, interval=family) == "reversed"
    return rejected, reversed_95, reversed_family


def machine() -> str:
    """The CPU model (``lscpu``'s "Model name") and the load average when the run starts."""
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines()
        model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")), "unknown")
    except (OSError, subprocess.CalledProcessError):
        model = "unknown (no lscpu)"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return f"CPU {model}, {os.cpu_count()} logical cores, load average {load} (1, 5, 15 minutes) at the start"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000, help="simulated matrices per scenario, design and size")
    parser.add_argument("--agents", type=int, nargs="+", default=[6, 12], help="agents per cell")
    parser.add_argument("--resamples", type=int, default=2000, help="Monte Carlo draws where the arrangements are more")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    if args.datasets < 1 or any(n < 3 for n in args.agents) or args.resamples < 1:
        parser.error("--datasets and --resamples must be >= 1 and every --agents >= 3")
    start = time.perf_counter()
    lines = [f"Under weak nulls (equal expected XP; convention codes drawn at random), of {args.datasets} datasets each: the share "
             f"compare_pools rejects at alpha = {ALPHA} (one-sided; nominal 5%), and the share whose interval lies wholly on the "
             f"other side of 0 (verdict 'reversed', false here) for the 95% interval (nominal 2.5%) and the simultaneous interval "
             f"of a family of {FAMILY} (confidence 1 - {ALPHA}/{FAMILY}, nominal {100 * ALPHA / (2 * FAMILY):.2f}%); Monte Carlo SE "
             f"beside each, in points. Exact below {args.resamples} arrangements, else {args.resamples} draws. "
             f"`OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} {' '.join(['python', *sys.argv])}`; {machine()}.", "",
             "| scenario | design | agents per cell | rejected | SE | reversed, 95% | SE | reversed, simultaneous | SE |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    for k, (name, (_, designs, _)) in enumerate(SCENARIOS.items()):
        for design in designs:
            for n in args.agents:
                counts = error_rates(name, design, n, args.datasets, seed=1000 * k + n, resamples=args.resamples)
                line = f"| {name} | {design} | {n} | " + " | ".join(_rate(count, args.datasets) for count in counts) + " |"
                lines.append(line)
                print(line, flush=True)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    lines += ["", f"{(time.perf_counter() - start) / 60:.1f} minutes wall clock; load average {load} at the end."]
    print(lines[-1], flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
