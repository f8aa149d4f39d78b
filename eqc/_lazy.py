"""Package names that load on first use (a module ``__getattr__``, PEP 562): importing the package imports none of
their modules, so a name whose module needs an optional dependency costs nothing until it is used."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["lazy_attribute", "lazy_homes"]


def lazy_homes(modules: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each name -> the module that defines it, from each module -> the names taken from it."""
    return {name: module for module, names in modules.items() for name in names}


def lazy_attribute(package: str, homes: Mapping[str, str], name: str) -> Any:
    """``package.name``, imported from its module in ``homes`` (``AttributeError`` for a name not there)."""
    if name not in homes:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(homes[name]), name)
