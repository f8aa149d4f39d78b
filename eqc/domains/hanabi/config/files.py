"""Config files: shipped configs by name, ``base`` derivation, and ``section.key=value`` overrides, as
nested dicts (``eqc.domains.hanabi.training.config.load_config`` validates them into a ``TrainConfig``).

- A config is a TOML file, or the name of a config shipped with eqc (``paper``, ``vdn_cpu``, ...:
  ``shipped_configs()``; package data, so an installed wheel has them too; ``configs/hanabi`` in
  the repository links to the same files).
- A file may start with ``base = "NAME"`` (a shipped config name, or a path relative to the file):
  it then holds only what differs from that config, section by section, key by key.
- Overrides ``"section.key=value"`` (the CLI's ``--set``, repeatable) change any key after the
  file is read; the value is TOML (``run.num_envs=64``, ``optim.lr=1e-3``, ``network.symmetrize="C5"``;
  a bare word such as ``rule.objective=op`` is read as a string). The result is validated like a file.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from eqc._checks import check_list
from eqc.domains.hanabi.config.schema import ConfigError

__all__ = ["apply_overrides", "check_overrides", "parse_override", "read_config_file", "shipped_configs"]

_PACKAGE = "eqc.domains.hanabi.config"
_MAX_DEPTH = 8


def shipped_configs() -> list[str]:
    """Names of the configs shipped with eqc."""
    return sorted(p.name.removesuffix(".toml") for p in resources.files(_PACKAGE).joinpath("configs").iterdir()
                  if p.name.endswith(".toml"))


def read_config_file(source: str | Path) -> dict[str, Any]:
    """The sections of ``source`` (a TOML file or a shipped config name) as nested dicts, its ``base`` chain merged in."""
    return _read(source, ())


def _read(source: str | Path, chain: tuple[str, ...]) -> dict[str, Any]:
    """The merged sections of ``source`` (a path or a shipped name) with its ``base`` chain resolved."""
    path = Path(source)
    name = str(source).removesuffix(".toml")
    if path.is_dir():
        raise ConfigError(f"config {str(source)!r} is a directory; give a TOML file or one of {shipped_configs()}")
    if path.is_file():
        text, where = path.read_bytes(), str(path)
    elif "/" not in str(source) and name in shipped_configs():
        text, where = resources.files(_PACKAGE).joinpath("configs", f"{name}.toml").read_bytes(), f"{name} (shipped)"
    else:
        raise ConfigError(f"config {str(source)!r} is neither a file nor a shipped config; shipped: {shipped_configs()}")
    if where in chain or len(chain) >= _MAX_DEPTH:
        raise ConfigError(f"config {where}: base configs form a cycle or are nested too deep: {' -> '.join((*chain, where))}")
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError(f"{where}: base must be a config name or path (a string), got {type(base).__name__}")
    if not base.strip():
        raise ConfigError(f"{where}: base must name a shipped config {shipped_configs()} or a TOML file, got an empty string")
    base_source = path.parent / base if path.is_file() and (path.parent / base).is_file() else base
    merged = _read(base_source, (*chain, where))
    for section, values in data.items():
        if isinstance(values, dict) and isinstance(merged.get(section), dict):
            merged[section] = {**merged[section], **values}
        else:
            merged[section] = values
    return merged


def parse_override(text: str) -> tuple[str, str, Any]:
    """``"section.key=value"`` (one line) as ``(section, key, value)``; the value is TOML, or a bare string."""
    if not isinstance(text, str):
        raise TypeError(f"an override must be a string 'section.key=value', got {type(text).__name__} {text!r:.80}")
    if "\n" in text or "\r" in text:
        raise ConfigError(f"override {text!r} must be one line section.key=value; give each key its own override")
    lhs, equals, raw = text.partition("=")
    section, _, key = (part.strip() for part in lhs.partition("."))
    if not equals or not section or not key:
        raise ConfigError(f"override {text!r} must look like section.key=value (e.g. run.num_envs=64)")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return section, key, value


def check_overrides(overrides: object) -> list[str]:
    """``overrides`` as a list after parsing each (:func:`parse_override`); a lone string is refused, not read per character."""
    items = check_list(overrides, "overrides", item="'section.key=value' strings (wrap a single override in a list)")
    for text in items:
        parse_override(text)
    return items


def apply_overrides(data: dict[str, Any], overrides: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``data`` (config sections) with each override applied in order."""
    sections = {name: dict(values) if isinstance(values, dict) else values for name, values in data.items()}
    for text in check_overrides(overrides):
        section, key, value = parse_override(text)
        if not isinstance(sections.setdefault(section, {}), dict):
            raise ConfigError(f"override {text!r}: [{section}] is not a table")
        sections[section][key] = value
    return sections
