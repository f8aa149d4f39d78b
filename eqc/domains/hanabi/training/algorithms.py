"""The table of learning algorithms: what ``[run] algorithm`` may name.

Each algorithm is one module of this package that declares, together, its section's dataclass, that section's rules,
its learner and its :class:`~eqc.domains.hanabi.training.learner.Algorithm` (:mod:`.pqn`, :mod:`.ippo`, :mod:`.r2d2`).
The training config takes its algorithms' sections from this table (``TrainConfig``, :mod:`eqc.domains.hanabi.training.config`)
and ``make_learner`` (:mod:`.learners`) the learner. Adding an algorithm: its module, and its declaration here.
"""

from __future__ import annotations

from typing import Any

from eqc.domains.hanabi.training.ippo import IPPO
from eqc.domains.hanabi.training.learner import Algorithm
from eqc.domains.hanabi.training.pqn import PQN
from eqc.domains.hanabi.training.r2d2 import R2D2

__all__ = ["ALGORITHMS"]

#: ``[run] algorithm`` to its declaration; a config writes their sections in this order.
ALGORITHMS: dict[str, Algorithm[Any]] = {a.name: a for a in (PQN, R2D2, IPPO)}
