"""Building the learner a training config names: ``[run] algorithm``'s learner (:data:`~.algorithms.ALGORITHMS`), in
the form ``[network] lstm_layers`` asks for, with its precision resolved on the device that trains."""

from __future__ import annotations

import torch

from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learner import Learner, LearnerSetup

__all__ = ["make_learner"]


def make_learner(config: TrainConfig, seed: int, device: torch.device) -> Learner:
    """The learner of ``config``'s ``[run] algorithm`` (recurrent when ``[network] lstm_layers >= 1``), its precision
    resolved on ``device`` ("auto": :func:`~eqc.domains.hanabi.agent.precision.resolve_precision`, measuring one
    training step (:mod:`~eqc.domains.hanabi.training.probe`) where the hardware's report does not tell). ``[run] compile``
    on a device it cannot compile for is refused by the games it builds first (``HanabiBatch``)."""
    if config.network.precision == "auto":
        from eqc.domains.hanabi.agent.precision import resolve_precision
        from eqc.domains.hanabi.training.probe import training_step_ms

        used = resolve_precision("auto", device, measure=lambda: training_step_ms(config, device)).used
        config = config.replace(network={"precision": used})
    algorithm = config.algorithm
    return algorithm.learner(LearnerSetup.of(config, seed, device), config.settings(algorithm))
