"""The machinery of eqc's configuration files: one key, one :func:`config_field` (its default and help);
sections read strictly (:func:`read_section`: unknown keys and wrong types refused) and checked
(:func:`check_section`, :func:`require`); every refusal a :class:`ConfigError` naming the key.

A key whose type is ``X | None`` is optional: left out of a file (TOML has no null), it is None, and
what None means is the key's help text; a recorded config leaves it out too (:func:`section_dict`).
"""

from __future__ import annotations

import dataclasses
import math
import types
from dataclasses import field
from typing import Any, Union, get_args, get_origin, get_type_hints

__all__ = [
    "ConfigError",
    "check_section",
    "config_default",
    "config_field",
    "read_section",
    "require",
    "require_at_least",
    "require_in_unit",
    "section_dict",
    "toml_value",
]


class ConfigError(ValueError):
    """A configuration that cannot be used (names the key and what is allowed)."""


def config_field(text: str, default: Any) -> Any:
    """A config key: its ``default`` and its one-line ``help`` (what ``eqc hanabi config`` prints)."""
    return field(default=default, metadata={"help": text})


def config_default(section: type, key: str, default: Any) -> Any:
    """The key ``key`` of ``section`` (a config dataclass) with another default: how a section that extends ``section``
    declares a key it shares (its help is ``section``'s, written once)."""
    (shared,) = (f for f in dataclasses.fields(section) if f.name == key)
    return field(default=default, metadata=shared.metadata)


def require(condition: bool, key: str, message: str) -> None:
    """Raise ``ConfigError("{key} {message}")`` unless ``condition``."""
    if not condition:
        raise ConfigError(f"{key} {message}")


def require_at_least(name: str, section: Any, keys: tuple[str, ...], bound: float) -> None:
    """Each of ``keys`` of ``section`` (the section ``[name]``) is at least ``bound``."""
    for key in keys:
        require(getattr(section, key) >= bound, f"[{name}] {key}", f"must be >= {bound}, got {getattr(section, key)}")


def require_in_unit(name: str, section: Any, keys: tuple[str, ...]) -> None:
    """Each of ``keys`` of ``section`` (the section ``[name]``) is in [0, 1]."""
    for key in keys:
        require(0 <= getattr(section, key) <= 1, f"[{name}] {key}", f"must be in [0, 1], got {getattr(section, key)}")


def _optional(expected: Any) -> tuple[Any, bool]:
    """``(X, True)`` for a key typed ``X | None``, else ``(expected, False)``."""
    if get_origin(expected) in (Union, types.UnionType):
        rest = [arg for arg in get_args(expected) if arg is not type(None)]
        if len(rest) == 1 and len(get_args(expected)) == 2:
            return rest[0], True
    return expected, False


def _type_name(expected: Any) -> str:
    return "an array of integers" if get_origin(expected) is tuple else expected.__name__


def _conforms(value: object, expected: Any) -> bool:
    """Whether ``value`` has the key's type: bools are no ints, ints are floats, a tuple type is an int array."""
    if get_origin(expected) is tuple:
        return _is_int_sequence(value)
    if isinstance(value, bool):
        return expected is bool
    return isinstance(value, expected) or (expected is float and isinstance(value, int))


def _is_int_sequence(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def read_section(cls: type, values: dict[str, Any], where: str) -> Any:
    """``cls(**values)`` for a config section dataclass, refusing unknown keys and wrong types (an int is a float,
    an int array a tuple). An optional key (``X | None``) is given by its value or left out."""
    hints = get_type_hints(cls)
    read = {}
    for key, value in values.items():
        if key not in hints:
            raise ConfigError(f"{where}: unknown key {key!r}; allowed: {sorted(hints)}")
        expected, optional = _optional(hints[key])
        if not _conforms(value, expected):
            left_out = f" (or left out: {_help(cls, key)})" if optional else ""
            raise ConfigError(f"{where}: key {key!r} must be {_type_name(expected)}{left_out}, got {type(value).__name__} {value!r}")
        read[key] = tuple(value) if get_origin(expected) is tuple else float(value) if expected is float else value
    return cls(**read)


def _help(cls: type, key: str) -> str:
    return str(next(f.metadata.get("help", "") for f in dataclasses.fields(cls) if f.name == key))


def check_section(name: str, section: Any) -> None:
    """Every field of ``section`` (a config dataclass) has its declared type (None allowed for an optional key)
    and floats are finite."""
    hints = get_type_hints(type(section))
    for f in dataclasses.fields(section):
        v = getattr(section, f.name)
        expected, optional = _optional(hints[f.name])
        if v is None and optional:
            continue
        require(_conforms(v, expected), f"[{name}] {f.name}", f"must be {_type_name(expected)}, got {type(v).__name__} {v!r}")
        if isinstance(v, float):
            require(math.isfinite(v), f"[{name}] {f.name}", f"must be finite, got {v}")


def section_dict(section: Any) -> dict[str, Any]:
    """A section's keys as a plain dict (TOML/JSON-able), optional keys that are None left out."""
    return {f.name: _plain(getattr(section, f.name)) for f in dataclasses.fields(section) if getattr(section, f.name) is not None}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def toml_value(value: object) -> str:
    """``value`` (a bool, str, int, float or int array) as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):  # a TOML array ([bootstrap] slots)
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)
