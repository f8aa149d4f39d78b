"""Entropy and equivariance: IPPO pools played greedily and as sampled (Forkel et al. 2025).

``eqc hanabi reproduce entropy --scale entropy|colour`` reads the IPPO pools of a scale (:func:`ippo_pools`):
at ``entropy`` those of :data:`~.specs.ENTROPY_POOLS` (Mini-Hanabi, one agent per seed, an entropy coefficient
per pool), at ``colour`` the colour testbed's IPPO pools (one stream seed, one agent per induced colour
convention; :data:`~.specs.COLOUR_POOLS`), and reports, beside the scale's tables (greedy cross-play and its
tests):

- per agent: self-play played greedily (the argmax of the logits) and as sampled (moves drawn from their
  softmax, :class:`~eqc.domains.hanabi.agent.sampled.SampledAgent`); how equivariant it is over every colour
  permutation (S3 in Mini-Hanabi), greedily
  (:func:`~eqc.domains.hanabi.xp.equivariance.greedy_equivariance`: the share of visited states where the
  relabelled agent picks another move) and as sampled (:func:`~eqc.domains.hanabi.xp.equivariance.sampled_equivariance`:
  the total-variation distance of the move distributions), and the policy's entropy at those states;
- per pool: cross-play between its agents, greedy and sampled, with the jackknife standard error over agents;
- tests of sampled cross-play between pools, the agent as the unit (:func:`eqc.evaluation.compare_pools` on the
  sampled cross-play matrix of all agents, cross-pool pairs played): exploratory, unadjusted (the primary test,
  greedy, is Table 1's).

Every agent of every pool plays every other on the same ``games`` common decks in both forms.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from eqc._checks import check_int
from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.agent.sampled import SampledAgent
from eqc.domains.hanabi.reproduce.reports import EntropyAgent, EntropyPool, EntropyReport, SampledTest
from eqc.domains.hanabi.reproduce.schema import matrix_rows
from eqc.domains.hanabi.xp.equivariance import greedy_equivariance, sampled_equivariance
from eqc.domains.hanabi.xp.play import cross_play_games
from eqc.evaluation import compare_pools, pool_summary

__all__ = ["ENTROPY_TESTS", "GREEDY_TESTS", "IPPO_POOLS", "check_entropy_pools", "entropy_report", "ippo_pools", "render_entropy",
           "reproduce_entropy"]

#: Tests of sampled cross-play between pools (better, worse): H1 better > worse.
ENTROPY_TESTS = (("ippo_c005", "ippo_c001"), ("ippo_c02", "ippo_c001"), ("ippo_c02", "ippo_c005"))
#: Where each scale's test of greedy cross-play between the IPPO pools is.
GREEDY_TESTS = {"entropy": "The primary test, greedy, is Table 1's.",
                "colour": "The greedy test is Table 2's (exploratory there too; the scale's primary tests are the paper's)."}
#: Seed of the common decks, of the sampled agents' draws (agent k draws from seed ``SAMPLING_SEED + k``) and of the tests.
DECK_SEED, SAMPLING_SEED, MONTE_CARLO_SEED = 1, 1000, 0


def _sampled(policy: TrainedPolicy, seed: int) -> TrainedPolicy:
    """``policy`` playing as sampled, drawing on its own generator."""
    generator = torch.Generator(device=policy.device).manual_seed(seed)
    return TrainedPolicy(SampledAgent(policy.agent, generator), policy.spec, policy.trained_moves, policy.device, policy.trained_with)


def _within(matrix: torch.Tensor, rows: list[int]) -> torch.Tensor:
    return matrix[rows][:, rows]


def entropy_report(scale: str, runs: dict[str, list[Path]], *, games: int = 1000, device: str = "cpu", precision: str = "auto",
                   equivariance_games: int = 200, log: Callable[[str], None] = print) -> EntropyReport:
    """The report of the module docstring for ``runs`` (pool name -> agent directories, every agent an IPPO agent) of
    ``scale`` (a key of :data:`IPPO_POOLS`)."""
    names = [(pool, run) for pool, pool_runs in runs.items() for run in pool_runs]
    if len(names) < 2:
        raise ValueError(f"the pools hold {len(names)} agents; cross-play needs at least 2")
    policies = [load_policy(run, device=device, precision=precision) for _, run in names]
    _check_ippo(names, policies)
    log(f"greedy cross-play: {len(policies)} agents, {games} games per ordered pair")
    greedy = cross_play_games(policies, games, deck_seed=DECK_SEED).summary().mean
    log("sampled cross-play")
    sampled = cross_play_games([_sampled(p, SAMPLING_SEED + k) for k, p in enumerate(policies)], games, deck_seed=DECK_SEED).summary().mean
    rows: dict[str, list[int]] = {}
    for k, (pool, _) in enumerate(names):
        rows.setdefault(pool, []).append(k)
    agents = []
    for k, ((pool, run), policy) in enumerate(zip(names, policies, strict=True)):
        log(f"equivariance of {pool}/{run.name}")
        as_greedy = greedy_equivariance(policy, games=equivariance_games)
        as_sampled = sampled_equivariance(policy, games=equivariance_games)
        agents.append(EntropyAgent(pool, run.name, policy.trained_with.get("ppo", {}).get("entropy_coef", math.nan),
                                   float(greedy[k, k]), float(sampled[k, k]), as_greedy.disagreement, as_sampled.distance,
                                   as_sampled.entropy, as_greedy.states))
    pools = {pool: EntropyPool(len(r), pool_summary(_within(greedy, r)), pool_summary(_within(sampled, r))) for pool, r in rows.items()}
    tests = {}
    for better, worse in ENTROPY_TESTS:
        if better in rows and worse in rows:
            result = compare_pools(sampled, rows[better], rows[worse], alternative="greater", generator=MONTE_CARLO_SEED)
            tests[f"{better} > {worse}"] = SampledTest((better, worse), "exploratory", result.verdict(), result)
    return EntropyReport(scale, games, equivariance_games, as_greedy.group, tuple(agents), pools, tests, matrix_rows(greedy),
                         matrix_rows(sampled), tuple(f"{pool}/{run.name}" for pool, run in names), None)


def _check_ippo(names: list[tuple[str, Path]], policies: list[TrainedPolicy]) -> None:
    for (pool, run), policy in zip(names, policies, strict=True):
        if policy.spec.network.head != "policy":
            raise ValueError(f"{run} (pool {pool!r}) has [network] head {policy.spec.network.head!r}, not 'policy' (trained by IPPO): "
                             f"the entropy report plays agents whose logits are a policy")
        if policy.agent.recurrent:
            raise ValueError(f"{run} (pool {pool!r}) is recurrent: the entropy report measures how equivariant feed-forward agents are")


def _ippo_pool_names() -> dict[str, list[str]]:
    from eqc.domains.hanabi.reproduce.specs import COLOUR_POOLS, ENTROPY_POOLS

    return {"entropy": list(ENTROPY_POOLS), "colour": [p for p, spec in COLOUR_POOLS.items() if spec.entropy_coef is not None]}


#: The IPPO pools of each scale that has them: at ``entropy`` :data:`~.specs.ENTROPY_POOLS`, at ``colour`` the pools of
#: :data:`~.specs.COLOUR_POOLS` with an entropy coefficient.
IPPO_POOLS = _ippo_pool_names()


def ippo_pools(scale: str, agents: str | Path | None = None) -> dict[str, list[Path]]:
    """The agent directories of each IPPO pool of ``scale`` (:data:`IPPO_POOLS`) found in ``agents`` (a directory of
    pools; default the scale's shipped ones); :class:`~.specs.ReproduceError` naming the argument when there are none."""
    from eqc.domains.hanabi.reproduce.run import shipped_agents
    from eqc.domains.hanabi.reproduce.specs import SCALES, ReproduceError
    from eqc.domains.hanabi.xp import PoolError, pool_runs

    if scale not in IPPO_POOLS:
        raise ReproduceError("scale", f"the entropy report reads the IPPO pools of scale {' or '.join(IPPO_POOLS)}, not {scale!r}")
    where = Path(agents) if agents is not None else shipped_agents(SCALES[scale])
    if where is None or not where.is_dir():
        raise ReproduceError("agents", f"no pools at {str(where)!r}: pass agents=DIR (--agents), a directory of <pool>/<agent>/ "
                             "policy directories")
    try:
        runs = {pool: pool_runs(where / pool) for pool in IPPO_POOLS[scale] if (where / pool).is_dir()}
    except PoolError as exc:
        raise ReproduceError("agents", str(exc)) from exc
    if not runs:
        raise ReproduceError("agents", f"{str(where)!r} holds none of the IPPO pools of scale {scale!r} {IPPO_POOLS[scale]} "
                             "(<pool>/<agent>/ agents)")
    return runs


def check_entropy_pools(runs: dict[str, list[Path]], device: str = "cpu") -> None:
    """Every agent of ``runs`` loads and was trained by IPPO (before any game is played); :class:`~.specs.ReproduceError`
    naming ``agents`` otherwise."""
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.reproduce.specs import ReproduceError

    names = [(pool, run) for pool, pool_runs in runs.items() for run in pool_runs]
    try:
        _check_ippo(names, [load_policy(run, device=device, precision="fp32") for _, run in names])
    except (CheckpointError, ValueError) as exc:
        raise ReproduceError("agents", str(exc)) from exc


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def render_entropy(report: EntropyReport) -> str:
    """``report`` (:func:`entropy_report`) as Markdown."""
    lines = [f"# Entropy and equivariance: IPPO pools played greedily and as sampled (scale `{report.scale}`)", "",
             f"Mini-Hanabi; {report.games_per_pair} games per ordered pair of agents, the same common decks for every pair, "
             "greedy (argmax of the logits) and as sampled (moves drawn from their softmax). XP: the mean over ordered pairs of "
             "distinct agents of a pool, ± the jackknife standard error over its agents (the unit of evidence). Equivariance "
             f"over {report.group}, on the states of each agent's greedy self-play ({report.equivariance_games} games): "
             "greedy disagreement (share of states where the agent in a relabelled world picks another move) and policy "
             "distance (total-variation distance of the move distributions; 0 = equivariant).", "",
             "| pool | entropy coef | agents | SP greedy | SP sampled | XP greedy | XP sampled | greedy disagreement | "
             "policy distance | policy entropy (nats) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for pool, summary in report.pools.items():
        own = [a for a in report.agents if a.pool == pool]
        g, s = summary.greedy_xp, summary.sampled_xp
        lines.append(f"| {pool} | {own[0].entropy_coef:g} | {summary.agents} | {_mean([a.self_play_greedy for a in own]):.2f} | "
                     f"{_mean([a.self_play_sampled for a in own]):.2f} | {g.mean:.2f} ± {g.sem:.2f} | "
                     f"{s.mean:.2f} ± {s.sem:.2f} | {_mean([a.greedy_disagreement for a in own]):.3f} | "
                     f"{_mean([a.policy_distance for a in own]):.3f} | {_mean([a.policy_entropy for a in own]):.3f} |")
    lines += ["", "Per agent:", "", "| agent | SP greedy | SP sampled | greedy disagreement | policy distance | policy entropy |",
              "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {a.pool}/{a.agent} | {a.self_play_greedy:.2f} | {a.self_play_sampled:.2f} | {a.greedy_disagreement:.3f} | "
              f"{a.policy_distance:.3f} | {a.policy_entropy:.3f} |" for a in report.agents]
    if report.sampled_tests:
        lines += ["", "Sampled cross-play between pools (exploratory, unadjusted; agents' pool labels permuted over the sampled "
                  f"cross-play matrix of both pools, cross-pool pairs played). {GREEDY_TESTS[report.scale]}", "",
                  "| H1 | difference | 95% interval | p | smallest attainable p | verdict |", "|---|---:|---:|---:|---:|---|"]
        for name, test in report.sampled_tests.items():
            t = test.comparison
            lines.append(f"| XP sampled {name} | {t.difference:+.2f} | [{t.interval[0]:.2f}, {t.interval[1]:.2f}] | "
                         f"{t.p_value:.3g} | {t.min_p:.3g} | {test.verdict} |")
    if report.command:
        lines += ["", f"Command: `{report.command}`"]
    return "\n".join(lines) + "\n"


def reproduce_entropy(scale: str, out: str | Path, *, agents: str | Path | None = None, device: str = "cpu", precision: str = "auto",
                      games: int | None = None, command: list[str] | None = None, log: Callable[[str], None] = print) -> EntropyReport:
    """The report for the IPPO pools of ``scale`` ("entropy" or "colour"; its shipped agents, or ``agents``: a directory
    of pools), written to ``out/entropy.json`` and ``.md``; ``games`` per pair defaults to the scale's."""
    from eqc.domains.hanabi.reproduce.specs import SCALES
    from eqc.io import write_json_atomic, write_text_atomic

    runs = ippo_pools(scale, agents)
    games = SCALES[scale].games if games is None else check_int(games, "games", low=1)
    report = entropy_report(scale, runs, games=games, device=device, precision=precision, log=log)
    report = replace(report, command=None if command is None else " ".join(command))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "entropy.json", report.to_json())
    write_text_atomic(out / "entropy.md", render_entropy(report))
    return report
