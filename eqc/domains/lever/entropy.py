"""Does entropy alone make self-play agents agree? The lever game under entropy-regularised self-play.

Forkel, Ruhdorfer, Bulling and Foerster (arXiv 2511.22581) prove that policy gradient with enough
entropy regularisation converges, from every initialisation, to one joint policy equivariant to every
symmetry of the Dec-POMDP; greedified after training, such agents are reported to cross-play well. The
lever game tests it where the theory applies almost directly (one state, a softmax policy; here an MLP
on the one observation): self-play pools trained with the objective ``payoff + c * entropy``
(:class:`~eqc.domains.lever.train.LeverConfig` ``entropy = c``) for each coefficient ``c``, one agent
per seed, then

- **sampled**: the agents as trained (their action distributions), SP and XP;
- **greedified**: each agent plays its most probable lever, SP and XP;
- the mass on the levers of the lone payoff (the 0.9 lever by default), and the share of agents whose
  greedy lever it is;
- the **equivariance gap**: per agent, the largest spread of probabilities within a set of levers of equal
  payoff (the symmetry's orbits: 0 for an equivariant policy), averaged over agents.

Each coefficient's greedified pool is compared with the unregularised pool (``c = 0``) by
:func:`eqc.evaluation.compare_pools` over their joint cross-play matrix (H1: the entropy pool
cross-plays higher), the agent as the unit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch

from eqc.domains.lever.evaluate import cross_play_matrix
from eqc.domains.lever.game import LeverGame
from eqc.domains.lever.train import LeverConfig, check_seeds, train_pool
from eqc.evaluation import compare_pools

__all__ = ["entropy_sweep", "render_entropy_sweep"]


def _greedy(probabilities: torch.Tensor) -> torch.Tensor:
    """One-hot distributions on each agent's most probable lever ``[agents, n]``."""
    return torch.nn.functional.one_hot(probabilities.argmax(-1), probabilities.shape[-1]).to(probabilities.dtype)


def _sp_xp(matrix: torch.Tensor) -> tuple[float, float]:
    off = ~torch.eye(matrix.shape[0], dtype=torch.bool)
    return float(matrix.diagonal().mean()), float(matrix[off].mean())


def _equivariance_gap(game: LeverGame, probabilities: torch.Tensor) -> float:
    """Mean over agents of the largest spread of probabilities within a set of levers of equal payoff."""
    gaps = torch.zeros(probabilities.shape[0], dtype=probabilities.dtype)
    for value in game.payoffs.unique():
        orbit = probabilities[:, game.payoffs == value]
        gaps = torch.maximum(gaps, orbit.max(-1).values - orbit.min(-1).values)
    return float(gaps.mean())


def entropy_sweep(game: LeverGame, coefficients: Sequence[float], *, seeds: Sequence[int],
                  config: LeverConfig | None = None) -> dict[str, Any]:
    """The sweep of the module docstring: a self-play pool per coefficient (0 is added when missing, as the baseline)."""
    seeds = check_seeds(seeds, low=2)
    config = config or LeverConfig()
    values = sorted({0.0, *(float(c) for c in coefficients)})
    if any(c < 0 for c in values):
        raise ValueError(f"coefficients must be >= 0, got {list(coefficients)}")
    lone = game.payoffs == min(game.payoffs.unique(), key=lambda v: int((game.payoffs == v).sum()))
    pools = {c: train_pool(game, "sp", seeds=seeds, config=dataclasses.replace(config, entropy=c)).probabilities for c in values}
    rows, greedy = [], {c: _greedy(p) for c, p in pools.items()}
    for c in values:
        sampled_sp, sampled_xp = _sp_xp(cross_play_matrix(game, pools[c]))
        greedy_sp, greedy_xp = _sp_xp(cross_play_matrix(game, greedy[c]))
        row: dict[str, Any] = {
            "entropy": c, "sampled_sp": sampled_sp, "sampled_xp": sampled_xp, "greedy_sp": greedy_sp, "greedy_xp": greedy_xp,
            "lone_mass": float(pools[c][:, lone].sum(-1).mean()), "lone_greedy_share": float(greedy[c][:, lone].sum(-1).mean()),
            "equivariance_gap": _equivariance_gap(game, pools[c]),
        }
        if c > 0:
            both = torch.cat([greedy[c], greedy[0.0]])
            n = len(seeds)
            test = compare_pools(cross_play_matrix(game, both), list(range(n)), list(range(n, 2 * n)), generator=0)
            row["greedy_xp_test"] = {**test.as_dict(), "verdict": test.verdict()}
        rows.append(row)
    return {"payoffs": game.payoffs.tolist(), "seeds": seeds, "config": dataclasses.asdict(config), "rows": rows,
            "lone_payoff": float(game.payoffs[lone][0])}


def render_entropy_sweep(record: dict[str, Any]) -> str:
    """The sweep as a Markdown table."""
    n = len(record["seeds"])
    lines = [
        f"# Entropy-regularised self-play in the lever game ({n} agents per coefficient)", "",
        f"Payoffs {record['payoffs']}; each agent trained by self-play on payoff + c x entropy "
        f"({record['config']['steps']} Adam steps, {record['config']['restarts']} candidates, the best kept). Sampled: the "
        f"agents as trained; greedified: each plays its most probable lever. Lone lever: the one of payoff "
        f"{record['lone_payoff']:g}. Equivariance gap: the largest spread of an agent's probabilities among levers of equal "
        "payoff (0: equivariant), mean over agents. Test: greedified XP of the pool above that of c = 0, agents permuted "
        "over their joint cross-play matrix (exact; one-sided; one test per coefficient, none adjusted for multiplicity: "
        "exploratory).", "",
        "| c | sampled SP | sampled XP | greedified SP | greedified XP | mass on the lone lever | agents playing it greedily | "
        "equivariance gap | greedified XP > c = 0: difference, p (smallest p), verdict |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in record["rows"]:
        test = r.get("greedy_xp_test")
        verdict = "-" if test is None else (f"{test['difference']:+.3f}, p = {test['p_value']:.3g} ({test['min_p']:.2g}), "
                                             f"{test['verdict']}")
        lines.append(f"| {r['entropy']:g} | {r['sampled_sp']:.3f} | {r['sampled_xp']:.3f} | {r['greedy_sp']:.3f} | "
                     f"{r['greedy_xp']:.3f} | {r['lone_mass']:.3f} | {r['lone_greedy_share']:.0%} | {r['equivariance_gap']:.3f} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"
