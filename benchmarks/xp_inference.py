"""How often the pool comparisons reject a true null on dyadic cross-play: agent-level tests against the old pair-level ones.

Data: two pools of ``--agents`` agents (8, as the shipped ``induced`` pools), cross-play
``score[i, j] = 10 + u_i + u_j + e_ij`` over every ordered pair of distinct agents of both pools, agent
effect ``u ~ N(0, u_sd^2)``, pair noise ``e ~ N(0, e_sd^2)``, at (u_sd, e_sd) = (1.0, 2.0) and (1.5, 0.5).
Paired data: each agent in two forms, form ``f`` of agent ``k`` with effect ``u_k + z_kf`` (``z ~ N(0,
u_sd^2)``, so the forms are exchangeable: H0 holds), every ordered pair of the ``2 * agents`` rows played.

Tests, each at level 5% on ``--datasets`` datasets per setting (seeded):

- agent level (:func:`eqc.evaluation.compare_pools`, as ``reproduce`` calls it: exact over the
  C(16, 8) = 12,870 splits of the agents, or the 2^8 = 256 swaps of each agent's forms);
- pair level (the test ``compare_pools`` ran before, re-implemented here only): unordered pair means
  ``(xp[i, j] + xp[j, i]) / 2`` as independent units, permuted between the pools (unpaired), or the signs of
  the per-pair differences between the forms flipped (paired); ``--resamples`` Monte Carlo draws,
  ``p = (hits + 1) / (draws + 1)``.

Printed: the rejection rate with a 95% Clopper-Pearson interval, the coverage of the agent-level 95%
interval for the difference (jackknife over agents), and the time of ``compare_pools`` on the largest
requests ``reproduce`` makes (8 + 8 agents, exact; 10 + 10 at paper scale, exact over 184,756 splits).

Usage: python benchmarks/xp_inference.py [--datasets 1000] [--agents 8] [--resamples 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from eqc.evaluation import clopper_pearson, compare_pools

ALPHA = 0.05
SETTINGS = ((1.0, 2.0), (1.5, 0.5))


def _unpaired_data(rng: np.random.Generator, agents: int, u_sd: float, e_sd: float) -> np.ndarray:
    u = rng.normal(0, u_sd, 2 * agents)
    return 10 + u[:, None] + u[None, :] + rng.normal(0, e_sd, (2 * agents, 2 * agents))


def _paired_data(rng: np.random.Generator, agents: int, u_sd: float, e_sd: float) -> np.ndarray:
    u = rng.normal(0, u_sd, agents)
    node = np.concatenate([u + rng.normal(0, u_sd, agents), u + rng.normal(0, u_sd, agents)])
    return 10 + node[:, None] + node[None, :] + rng.normal(0, e_sd, (2 * agents, 2 * agents))


def _pair_means(xp: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """The old unit: unordered pair means of a pool, ``i < j``."""
    i, j = np.triu_indices(len(pool), k=1)
    return (xp[pool[i], pool[j]] + xp[pool[j], pool[i]]) / 2


def _old_unpaired_p(xp: np.ndarray, agents: int, resamples: int, rng: np.random.Generator) -> float:
    """The former pair-level test: pair means of the two pools permuted between them, one-sided (a > b)."""
    a, b = _pair_means(xp, np.arange(agents)), _pair_means(xp, np.arange(agents, 2 * agents))
    pooled, n_a = np.concatenate([a, b]), len(a)
    observed = a.mean() - b.mean()
    chosen = np.argsort(rng.random((resamples, len(pooled))), axis=1)[:, :n_a]
    sums = pooled[chosen].sum(axis=1)
    drawn = sums / n_a - (pooled.sum() - sums) / (len(pooled) - n_a)
    return (int((drawn >= observed - 1e-9).sum()) + 1) / (resamples + 1)


def _old_paired_p(xp: np.ndarray, agents: int, resamples: int, rng: np.random.Generator) -> float:
    """The former paired test: signs of the per-pair differences (form a minus form b) flipped."""
    d = _pair_means(xp, np.arange(agents)) - _pair_means(xp, np.arange(agents, 2 * agents))
    signs = 1.0 - 2.0 * rng.integers(0, 2, (resamples, len(d)))
    drawn = signs @ d / len(d)
    return (int((drawn >= d.mean() - 1e-9).sum()) + 1) / (resamples + 1)


def _rate(rejections: int, datasets: int) -> str:
    low, high = clopper_pearson(rejections, datasets, 0.95)
    return f"{rejections / datasets:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=8, help="agents per pool")
    parser.add_argument("--resamples", type=int, default=2000, help="Monte Carlo draws of the old pair-level tests")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    n = args.agents
    a, b = np.arange(n), np.arange(n, 2 * n)
    print(f"{args.datasets} datasets per setting, {n} agents per pool, level {ALPHA:g}; rate of rejecting a true null "
          f"[95% Clopper-Pearson]; coverage of the agent-level 95% interval for the difference (true difference 0)\n")
    print("| data | u sd | e sd | agent-level test | pair-level test (old) | agent-level interval coverage |")
    print("|---|---:|---:|---:|---:|---:|")
    for paired in (False, True):
        for setting, (u_sd, e_sd) in enumerate(SETTINGS):
            rng = np.random.default_rng([args.seed, int(paired), setting])
            new = old = covered = 0
            for _ in range(args.datasets):
                xp = (_paired_data if paired else _unpaired_data)(rng, n, u_sd, e_sd)
                result = compare_pools(xp, a, b, paired=paired)
                new += result.p_value <= ALPHA
                covered += result.interval[0] <= 0.0 <= result.interval[1]
                old += (_old_paired_p if paired else _old_unpaired_p)(xp, n, args.resamples, rng) <= ALPHA
            kind = f"paired ({n} agents x 2 forms)" if paired else f"unpaired ({n} + {n} agents)"
            print(f"| {kind} | {u_sd:g} | {e_sd:g} | {_rate(new, args.datasets)} | {_rate(old, args.datasets)} | "
                  f"{covered / args.datasets:.3f} |", flush=True)
    print("\nTime of one compare_pools call (median of 5, default resamples=200,000):\n")
    for agents in (8, 10):
        xp = _unpaired_data(np.random.default_rng(args.seed), agents, 1.0, 2.0)
        for paired in (False, True):
            times = []
            for _ in range(5):
                start = time.perf_counter()
                result = compare_pools(xp, np.arange(agents), np.arange(agents, 2 * agents), paired=paired)
                times.append(time.perf_counter() - start)
            how = "exact" if result.exact else f"Monte Carlo {result.resamples:,}"
            kind = f"paired, {agents} agents x 2 forms" if paired else f"unpaired, {agents} + {agents} agents"
            print(f"- {kind}: {result.arrangements:,} arrangements, {how}, {sorted(times)[2]:.3f} s")


if __name__ == "__main__":
    main()
