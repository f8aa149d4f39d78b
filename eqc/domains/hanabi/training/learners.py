"""The table of learners: ``[run] algorithm`` to the class that trains it (in every form the algorithm has, feed-forward
or recurrent: ``Algorithm.forms``).

A learner's class takes the :class:`~.learner.LearnerSetup` every learner reads and its algorithm's own section
(``config.<section>`` of :class:`~eqc.domains.hanabi.config.algorithms.Algorithm`). What the configuration knows of
an algorithm (its section, rules and forms) is :data:`~eqc.domains.hanabi.config.algorithms.ALGORITHMS`; a test checks
that both tables name the same algorithms. A new learner is its module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from eqc.domains.hanabi.config.algorithms import ALGORITHMS
from eqc.domains.hanabi.config.train import TrainConfig
from eqc.domains.hanabi.training.ippo import IPPOLearner
from eqc.domains.hanabi.training.learner import Learner, LearnerSetup
from eqc.domains.hanabi.training.pqn import PQNLearner
from eqc.domains.hanabi.training.r2d2 import R2D2Learner

__all__ = ["LEARNERS", "make_learner"]

#: ``[run] algorithm`` to the learner's class, called with the setup and the algorithm's section.
LEARNERS: dict[str, Callable[[LearnerSetup, Any], Learner]] = {
    "pqn": PQNLearner,
    "ippo": IPPOLearner,
    "r2d2": R2D2Learner,
}


def make_learner(config: TrainConfig, seed: int, device: torch.device) -> Learner:
    """The learner of ``config``'s ``[run] algorithm`` (recurrent when ``[network] lstm_layers >= 1``), its precision
    resolved on ``device`` ("auto": :func:`~eqc.domains.hanabi.agent.precision.resolve_precision`, measuring one
    training step (:mod:`~eqc.domains.hanabi.training.probe`) where the hardware's report does not tell)."""
    if config.run.precision == "auto":
        from eqc.domains.hanabi.agent.precision import resolve_precision
        from eqc.domains.hanabi.training.probe import training_step_ms

        used = resolve_precision("auto", device, measure=lambda: training_step_ms(config, device)).used
        config = config.replace(run={"precision": used})
    algorithm = ALGORITHMS[config.run.algorithm]
    return LEARNERS[algorithm.name](LearnerSetup.of(config, seed, device), getattr(config, algorithm.section))
