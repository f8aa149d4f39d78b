"""Recorded configs of earlier file versions, read as today's (:func:`upgrade_config`).

A checkpoint or ``policy.json`` records its training config beside its file ``format_version``
(:mod:`eqc.domains.hanabi.agent.files`). Version 1 wrote keys that had more than one meaning; version 2
gives each one:

- ``[game] num_colours``, ``num_ranks``, ``hand_size``, ``max_info_tokens``, ``max_lives``: 0 meant "the
  preset's"; now such a key is left out.
- ``[game] max_moves``, read by R2D2 alone, is ``[r2d2] max_moves``.
- ``[rule] group`` was recorded for every objective; now only objective ``"gop"`` has one.
- ``[rule] symmetrize = "none"`` meant a plain network; now the key is left out.

Version 2 spread the agent's own keys over three sections; version 3 holds them in ``[network]``
(:data:`MOVED_KEYS`): ``[rule] symmetrize`` and ``hidden_scheme``, ``[run] precision`` (where a record has
none, its run trained in fp32, from before eqc recorded precisions).

Version 4 records what the agent's outputs are, ``[network] head`` (:data:`~.agent.HEADS`), and the section of its
algorithm alone. An earlier record's head is its ``[run] algorithm``'s (:data:`RECORDED_HEADS`; a record without one
trained with the default, "pqn"), and the other algorithms' sections it held, which its run never read, are dropped
(:data:`RECORDED_SECTIONS`).

The upgrade changes nothing else, so the agent a version-1 file describes is the agent it loads as.
"""

from __future__ import annotations

import copy
from typing import Any

from eqc.domains.hanabi.config.schema import ConfigError
from eqc.domains.hanabi.rules import SHAPE_FIELDS

__all__ = ["CONFIG_VERSIONS", "MOVED_KEYS", "RECORDED_HEADS", "RECORDED_SECTIONS", "upgrade_config"]

#: The file versions whose recorded config :func:`upgrade_config` reads; the last is today's.
CONFIG_VERSIONS = (1, 2, 3, 4)
#: Keys of version 2 that version 3 holds elsewhere: ``(section, key)`` -> its section now.
MOVED_KEYS = {("rule", "symmetrize"): "network", ("rule", "hidden_scheme"): "network", ("run", "precision"): "network"}
#: ``[network] head`` of a record of version 1-3, by its ``[run] algorithm``: the algorithms eqc had then, written out
#: here so that reading a record never imports training (tests check it against each algorithm's ``policy``).
RECORDED_HEADS = {"pqn": "q", "r2d2": "q", "ippo": "policy"}
#: The own section of each algorithm a record of version 1-3 may name (tests check it against each ``section``).
RECORDED_SECTIONS = {"pqn": "pqn", "r2d2": "r2d2", "ippo": "ppo"}


def upgrade_config(config: object, version: int, where: str) -> dict[str, Any]:
    """``config`` (a recorded config's nested dict, written by file version ``version``) as today's version writes
    it; a new dict, ``config`` untouched. ``where`` names the file in errors."""
    if version not in CONFIG_VERSIONS:
        raise ConfigError(f"{where}: config version {version!r} is not one this eqc reads ({list(CONFIG_VERSIONS)})")
    if not isinstance(config, dict) or not all(isinstance(v, dict) for v in config.values()):
        raise ConfigError(f"{where}: config must be a table of sections, got {type(config).__name__}")
    config = copy.deepcopy(config)
    if version == 1:
        game, rule = config.setdefault("game", {}), config.setdefault("rule", {})
        for key in SHAPE_FIELDS:
            if game.get(key) == 0:
                del game[key]
        if "max_moves" in game:
            config.setdefault("r2d2", {})["max_moves"] = game.pop("max_moves")
        if rule.get("objective", "sp") != "gop":
            rule.pop("group", None)
        if rule.get("symmetrize") == "none":
            del rule["symmetrize"]
    if version <= 2:
        config.setdefault("run", {}).setdefault("precision", "fp32")
        for (section, key), to in MOVED_KEYS.items():
            if key in config.get(section, {}):
                config.setdefault(to, {})[key] = config[section].pop(key)
    if version <= 3:
        algorithm = config.get("run", {}).get("algorithm", "pqn")
        if not isinstance(algorithm, str) or algorithm not in RECORDED_HEADS:
            raise ConfigError(f"{where}: [run] algorithm {algorithm!r} is not one a version-{version} file records "
                              f"({sorted(RECORDED_HEADS)}), so its [network] head is unknown")
        config.setdefault("network", {})["head"] = RECORDED_HEADS[algorithm]
        for other in RECORDED_SECTIONS.keys() - {algorithm}:
            config.pop(RECORDED_SECTIONS[other], None)
    return config
