"""Pools of trained agents, loaded as policies. A pool directory holds one directory per agent (each a run
holding ``checkpoint.pt`` or a shipped policy directory holding ``policy.json``), named by what varies
between its agents: ``seed_<n>/`` (seed pools: one agent per training seed, in order of n) or
``slots_<pi>/`` (convention pools: one stream seed, one agent per colour-to-slot map ``pi`` written as
its digits, e.g. ``slots_201`` for ``[bootstrap] slots = [2, 0, 1]``, in lexicographic order)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from eqc._checks import check_choice, check_list
from eqc.domains.hanabi.agent.files import CHECKPOINT_NAME, POLICY_JSON, CheckpointError, is_policy_dir
from eqc.domains.hanabi.agent.network import Agent, AgentWrapper
from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.config.agent import HIDDEN_SCHEMES, REQUESTED_PRECISIONS
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES, colour_group_name
from eqc.io import recorded_path

__all__ = ["DuplicateAgentError", "PoolAgent", "PoolError", "describe_policy", "load_pools", "pool_runs"]

_AGENT_DIR = re.compile(r"seed_(\d+)|slots_(\d+)")


def _agent_key(match: re.Match[str]) -> tuple[int, str]:
    """Order of a pool's agent directories: seeds by number, colour-to-slot maps by their digits."""
    return (int(match.group(1)), "") if match.group(1) is not None else (0, match.group(2))


class PoolError(ValueError):
    """A pool that holds no usable agents (no checkpoints, or a file that is not an eqc checkpoint)."""


class DuplicateAgentError(PoolError):
    """An agent listed twice among the pools: ``run``, also listed as ``first``."""

    def __init__(self, run: Path, first: Path) -> None:
        super().__init__(f"{str(run)!r} is listed twice (also through {str(first)!r}); an agent cannot cross-play itself")
        self.run, self.first = run, first


@dataclass(frozen=True)
class PoolAgent:
    """One agent of a pool: its run directory (or checkpoint file), the loaded policy and the test-time group."""

    path: Path
    policy: TrainedPolicy
    symmetrize: str | None = None

    @property
    def name(self) -> str:
        """A short label: ``<pool>/<run>`` with the test-time group, e.g. ``op/seed_3[C5]``."""
        path = self.path.parent if self.path.name == CHECKPOINT_NAME else self.path
        name = f"{path.parent.name}/{path.name}" if path.parent.name else path.name
        return name + (f"[{self.symmetrize}]" if self.symmetrize is not None else "")


def _is_agent_dir(path: Path) -> bool:
    return (path / CHECKPOINT_NAME).is_file() or is_policy_dir(path)


def pool_runs(pool: str | Path) -> list[Path]:
    """The agents of ``pool``: its agent directories (module docstring) in order, or ``[pool]`` when it is one agent
    (a run directory holding ``checkpoint.pt``, a policy directory holding ``policy.json``, a checkpoint or OBL
    file), or the OBL ``*.pthw`` files in it (or in its subdirectories). Raises :class:`PoolError` otherwise."""
    pool = Path(pool)
    if pool.is_file() or _is_agent_dir(pool):
        return [pool]
    if not pool.is_dir():
        raise PoolError(f"{str(pool)!r} is neither a pool directory, a run directory nor a checkpoint file")
    runs = sorted((_agent_key(m), p) for p in pool.iterdir() if p.is_dir() and (m := _AGENT_DIR.fullmatch(p.name)))
    if len({p.name.split("_")[0] for _, p in runs}) > 1:
        raise PoolError(f"{str(pool)!r} mixes seed_<n>/ and slots_<pi>/ agent directories; a pool varies one thing")
    if not runs and (obl := sorted(pool.glob("*.pthw")) or sorted(pool.glob("*/*.pthw"))):
        return obl  # public OBL agents (model0.pthw files), as off-belief-learning lays them out
    if not runs:
        raise PoolError(f"{str(pool)!r} holds no agent directories seed_<n>/ or slots_<pi>/, no {CHECKPOINT_NAME} and no {POLICY_JSON}")
    missing = [p.name for _, p in runs if not _is_agent_dir(p)]
    if missing:
        raise PoolError(f"{str(pool)!r}: {', '.join(missing)} hold neither {CHECKPOINT_NAME} nor {POLICY_JSON} (not trained yet?)")
    return [p for _, p in runs]


def load_pools(
    pools: Sequence[str | Path],
    symmetrize: str | Sequence[str | None] | None = None,
    hidden_scheme: str | None = None,
    device: torch.device | str = "cpu",
    precision: str = "auto",
) -> list[PoolAgent]:
    """Every agent of every pool, in order. ``symmetrize``: for all pools or one per pool, a colour group name
    (``COLOUR_GROUP_NAMES``) to symmetrize over at test time, or None (as trained; see :func:`load_policy`).
    ``precision``: the requested precision of every agent (see :func:`load_policy`; "auto": each agent's training
    precision where the device runs it natively, else fp32). A run listed twice (:class:`DuplicateAgentError`), or
    agents of different games (deck shape, hand, tokens: ``HanabiRules.game``), are refused."""
    pools = check_list(pools, "pools", item="pool directories")
    if not pools:
        raise ValueError("pools must name at least one pool directory")
    groups: list[str | None] = [symmetrize] * len(pools) if symmetrize is None or isinstance(symmetrize, str) else list(symmetrize)
    if len(groups) != len(pools):
        raise ValueError(f"symmetrize must be one group or one per pool ({len(pools)}), got {len(groups)}")
    for group in groups:
        if group is not None:
            check_choice(group, "symmetrize", COLOUR_GROUP_NAMES)
    if hidden_scheme is not None:
        check_choice(hidden_scheme, "hidden_scheme", HIDDEN_SCHEMES)
    check_choice(precision, "precision", REQUESTED_PRECISIONS)
    agents: list[PoolAgent] = []
    seen: dict[Path, Path] = {}
    for pool, group in zip(pools, groups, strict=True):
        for run in pool_runs(pool):
            key = (run / CHECKPOINT_NAME if (run / CHECKPOINT_NAME).is_file() else run).resolve()
            if key in seen:
                raise DuplicateAgentError(run, seen[key])
            seen[key] = run
            try:
                policy = load_policy(run, device=device, symmetrize=group, hidden_scheme=hidden_scheme, precision=precision)
            except (CheckpointError, ValueError) as exc:  # unreadable, or symmetrize clashes with a training group
                raise PoolError(f"pool {str(pool)!r}: {exc}") from None
            if agents and policy.rules.game != agents[0].policy.rules.game:
                first = agents[0].policy.rules
                raise PoolError(f"{str(run)!r} plays another game ({policy.rules.num_colours} colours x {policy.rules.num_ranks} ranks, "
                                f"hand {policy.rules.hand_size}) than {str(agents[0].path)!r} ({first.num_colours} colours x "
                                f"{first.num_ranks} ranks, hand {first.hand_size}); agents of different games cannot cross-play")
            agents.append(PoolAgent(Path(run), policy, group))
    return agents


def describe_policy(policy: TrainedPolicy, path: str | Path | None = None, symmetrize: str | None = None) -> dict[str, object]:
    """A JSON-ready description of an agent: where it came from, how it was trained (None for an agent eqc
    did not train), how it is symmetrized, and the wrappers it acts through (``wrapped_by``, outermost first: e.g. an
    ``AveragedAgent``), if any."""
    agent, wrappers = policy.agent, []
    while isinstance(agent, AgentWrapper):
        wrappers.append(type(agent).__name__)
        agent = agent.agent
    if not isinstance(agent, Agent):
        raise TypeError(f"policy must hold an Agent (as load_policy builds), or wrappers of one, got {type(agent).__name__}")
    spec, group, trained_with = policy.spec, agent.group, policy.trained_with
    return {
        "path": None if path is None else recorded_path(path),
        "symmetrize": symmetrize if symmetrize is not None else spec.network.symmetrize,
        "symmetrized_at": "test" if symmetrize is not None else ("training" if spec.network.symmetrize else None),
        "group": None if group is None else {"name": colour_group_name(group), "order": group.order},
        "hidden_scheme": agent.hidden_scheme if group is not None and agent.recurrent else None,
        "moves": policy.trained_moves,
        "precision": agent.precision,
        "algorithm": trained_with.get("run", {}).get("algorithm"),
        "objective": trained_with.get("rule", {}).get("objective"),
        "knowledge": spec.game.knowledge,
        "sad": spec.game.sad,
        "network": {k: getattr(spec.network, k) for k in ("hidden_size", "mlp_layers", "lstm_layers")},
        **({"wrapped_by": wrappers} if wrappers else {}),
    }
