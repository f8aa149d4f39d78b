"""Hanabi on the Hanabi Learning Environment 0.0.4: ``HanabiEnv`` (``env``), the C++ objects
and controlled dealing (``native``), and the observation variants computed from HLE (``variants``).

Importing this package does not import HLE; constructing a ``HanabiEnv`` does.
"""

from __future__ import annotations

from eqc.domains.hanabi.hle.env import HanabiEnv
from eqc.domains.hanabi.hle.native import OBSERVATION_TYPES, load_pyhanabi

__all__ = ["OBSERVATION_TYPES", "HanabiEnv", "load_pyhanabi"]
