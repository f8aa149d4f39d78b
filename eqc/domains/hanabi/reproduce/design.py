"""A registered table's pools, checked against the registered design before any game is played or file written.

A registered table (:attr:`~.specs.Table.registered`) tests what its pre-registration fixed before its agents trained,
and its tests hold for that design alone: one agent missing turns a matched test into an unpaired one, a stray directory
hides a folder of agents, a copied agent plays its twin as if it were a stranger, another scale's agents give a table
with some of its tests. So every pool of such a table must be the scale's :class:`~.specs.Design` exactly, and
:func:`check_design` refuses anything else with a :class:`DesignError` that lists every difference: the pool, the agent
directory (missing, extra, unreadable, a duplicate of another agent's weights, trained on another stream seed or by
another config) and what the design expects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eqc.domains.hanabi.agent.files import CheckpointError, read_policy
from eqc.domains.hanabi.reproduce.specs import Design, Scale, Table
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.xp import PoolError

__all__ = ["DesignError", "check_design"]

#: Config differences named per agent (the rest are counted).
SHOWN_DIFFERENCES = 3


class DesignError(PoolError):
    """Pools that are not the registered design of the table that reads them (the message lists every difference)."""


def check_design(spec: Table, scale: Scale, where: Path) -> None:
    """Raise :class:`DesignError` unless every pool of the registered table ``spec`` under ``where`` is ``scale.design``:
    each folder of a pool (``scale.pool_folders``) holds the design's agents and nothing else, each agent reads as a
    policy directory trained on its folder's stream seed by the design's config, and no two agents share their weights."""
    design = scale.design
    if design is None:
        raise ValueError(f"{spec.name} at scale {scale.name!r} is registered ({spec.registered}) but the scale declares no "
                         "design to check its pools against (Scale.design)")
    problems: list[str] = []
    holders: dict[str, tuple[Path, str]] = {}  # weights digest -> the directory first seen with them, and its label
    for pool in dict.fromkeys(cell.pool for cell in spec.cells if cell.pool not in scale.not_trained):
        folders, streams = scale.pool_folders.get(pool, (pool,)), design.streams[pool]
        if len(folders) != len(streams):
            raise ValueError(f"pool {pool!r} of scale {scale.name!r} has {len(folders)} folders, its design {len(streams)} "
                             f"stream seeds {list(streams)}")
        for folder, stream in zip(folders, streams, strict=True):
            problems += _folder_problems(pool, folder, stream, where, design, holders)
    if problems:
        pools = dict.fromkeys(c.pool for c in spec.cells if c.pool not in scale.not_trained)
        layout = "; ".join(f"{pool}: {', '.join(_folder_names(scale, pool, design))}" for pool in pools)
        raise DesignError(f"{spec.name} at scale {scale.name!r} is registered ({spec.registered}) and reads only its registered "
                          f"design: every folder of every pool ({layout}) holds the agents {', '.join(design.agents)} and nothing "
                          f"else, each trained on its folder's stream seed by the design's config, no two with the same weights. "
                          f"{where} differs in {len(problems)} places:\n" + "\n".join(f"- {problem}" for problem in problems))


def _folder_names(scale: Scale, pool: str, design: Design) -> list[str]:
    return [f"{folder} (stream {stream})" for folder, stream in zip(scale.pool_folders.get(pool, (pool,)), design.streams[pool],
                                                                     strict=True)]


def _folder_problems(pool: str, folder: str, stream: int, where: Path, design: Design,
                     holders: dict[str, tuple[Path, str]]) -> list[str]:
    """What differs from the design in one folder of ``pool`` (its agents trained on ``stream``)."""
    path = where / folder
    if not path.is_dir():
        return [f"pool {pool!r}: folder {folder} (stream {stream}) is missing"]
    try:
        held = sorted(entry.name for entry in path.iterdir())
    except OSError as exc:
        return [f"pool {pool!r}: folder {folder} cannot be listed ({exc})"]
    problems = [f"pool {pool!r}: agent directory {folder}/{name} is missing" for name in design.agents if name not in held]
    problems += [f"pool {pool!r}: {folder}/{name} is extra: the design's agents there are {', '.join(design.agents)}"
                 for name in held if name not in design.agents]
    for name in design.agents:
        if name in held:
            problems += _agent_problems(pool, name, f"{folder}/{name}", path / name, stream, design, holders)
    return problems


def _agent_problems(pool: str, agent: str, label: str, path: Path, stream: int, design: Design,
                    holders: dict[str, tuple[Path, str]]) -> list[str]:
    """What differs from the design in one agent directory (``label``: its path under the pools). One directory may serve two
    pools (a pool of another's agents, matched to a third); two directories with the same weights are a duplicate."""
    try:
        _, _, record = read_policy(path)
        trained = TrainConfig.from_dict(record["config"], f"{path}/policy.json config")
    except (CheckpointError, ValueError) as exc:  # ValueError: a recorded config this eqc cannot read (ConfigError)
        return [f"pool {pool!r}: agent directory {label} is unreadable: {exc}"]
    problems = []
    digest = record["weights_sha256"]  # read_policy checked it against the weights file
    first, first_label = holders.setdefault(digest, (path.resolve(), label))
    if first != path.resolve():
        problems.append(f"pool {pool!r}: agent directory {label} is a duplicate: the same weights digest (sha256 {digest[:16]}...) "
                        f"as {first_label}")
    if record["seed"] != stream:
        problems.append(f"pool {pool!r}: agent {label} was trained on stream seed {record['seed']}, the design's folder is stream {stream}")
    differences = _differences(trained.to_dict(), design.config(pool, agent).to_dict())
    if differences:
        shown = "; ".join(differences[:SHOWN_DIFFERENCES]) + (f"; {len(differences) - SHOWN_DIFFERENCES} more"
                                                               if len(differences) > SHOWN_DIFFERENCES else "")
        problems.append(f"pool {pool!r}: agent {label} was not trained by the design's config: {shown}")
    return problems


def _differences(trained: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """``[section] key = trained value, the design's value`` for every key where two config dicts differ."""
    return [f"[{section}] {key} = {trained.get(section, {}).get(key)!r}, the design's {expected.get(section, {}).get(key)!r}"
            for section in sorted(set(trained) | set(expected))
            for key in sorted(set(trained.get(section, {})) | set(expected.get(section, {})))
            if trained.get(section, {}).get(key) != expected.get(section, {}).get(key)]
