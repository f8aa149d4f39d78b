"""Symmetries of PettingZoo environments: exact proofs by test, Other-Play/G-OP as a wrapper.

Needs the ``pettingzoo`` extra (``pip install -e ".[pettingzoo]"``); names load lazily, so
``import eqc`` never needs PettingZoo.

- :class:`PettingZooDecPOMDP` (``adapter``): an AEC or parallel env as the DecPOMDP that
  :func:`eqc.verification.check_env_symmetry` drives, replayed exactly from seeds (``outcomes``,
  ``chance`` for OpenSpiel games, ``replay`` for what is refused, ``spaces`` for what is read).
- :func:`check_pettingzoo_symmetry` / :func:`assert_pettingzoo_symmetry` (``check``): the check with no tolerance.
- :func:`other_play` (``wrappers``): the env as each agent sees it under Other-Play or G-OP.
- ``examples``: declarations of mpe2's ``simple_spread_v3`` and PettingZoo's ``hanabi_v5``.
"""

from __future__ import annotations

from typing import Any

from eqc._lazy import lazy_attribute, lazy_homes

_HOMES = lazy_homes({
    "eqc.pettingzoo.outcomes": ("EpisodeStart", "StepRecord"),
    "eqc.pettingzoo.adapter": ("HookError", "PettingZooDecPOMDP"),
    "eqc.pettingzoo.check": ("assert_pettingzoo_symmetry", "check_pettingzoo_symmetry"),
    "eqc.pettingzoo.wrappers": ("other_play", "OtherPlayAEC", "OtherPlayParallel"),
})

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    try:
        return lazy_attribute(__name__, _HOMES, name)
    except ModuleNotFoundError as err:
        if err.name and err.name.split(".")[0] in ("pettingzoo", "gymnasium"):
            raise ImportError(f"eqc.pettingzoo.{name} needs PettingZoo: pip install -e \".[pettingzoo]\" ({err})") from err
        raise


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
