"""The ``--config FILE`` and ``--set SECTION.KEY=VALUE`` flags of the commands that train (``eqc hanabi train``,
``pool``, ``reproduce``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eqc.cli import common as flags
from eqc.domains.hanabi.config.files import check_overrides, shipped_configs
from eqc.domains.hanabi.config.schema import ConfigError, toml_value
from eqc.domains.hanabi.training.config import TrainConfig, load_config

__all__ = ["add_set_flag", "config_source", "load_config_flags"]


def config_source(text: str) -> str:
    """``type=`` for ``--config``: a TOML file, or the name of a shipped config."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a TOML file or a shipped config: {shipped_configs()}")
    if not path.is_file() and ("/" in text or text.removesuffix(".toml") not in shipped_configs()):
        raise argparse.ArgumentTypeError(f"config {text!r} is neither a file nor a shipped config: {shipped_configs()}")
    return text


def add_set_flag(parser: argparse.ArgumentParser) -> None:
    """``--set section.key=value`` (repeatable): override a config key, validated like the file."""
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a config key (repeatable), e.g. --set run.num_envs=64; keys: eqc hanabi config")


def load_config_flags(args: argparse.Namespace, keys: dict[str, Any] | None = None) -> TrainConfig:
    """The config of ``--config`` with the ``--set`` overrides, then the keys ``keys`` gives (``"section.key"`` -> value,
    from flags such as ``--threads``; None: left as configured), built and validated once; a malformed override is
    blamed on ``--set``."""
    try:
        check_overrides(args.overrides)
    except ConfigError as exc:
        raise flags.FlagError("--set", str(exc)) from None
    flagged = [f"{key}={toml_value(value)}" for key, value in (keys or {}).items() if value is not None]
    try:
        return load_config(args.config, [*args.overrides, *flagged])
    except ConfigError as exc:
        raise flags.FlagError("--set" if args.overrides and "--set" in str(exc) else "--config", str(exc)) from None
