"""R2D2's replay warm-up and a run's segments (:attr:`~.learner.Learner.learning`, :meth:`~.learner.Learner.warmup`).

Until a learner has started learning it makes no update and logs no loss: an evaluation or a stop in its warm-up writes
its row (``loss`` NaN) and its checkpoint like any other (:mod:`~eqc.domains.hanabi.training.driver`). The warm-up's
data is not saved (R2D2's replay: about 1.1 GiB for ``paper.toml``'s 5,000 warm-up episodes, 14 GiB for its whole
buffer), so every run warms up again from empty, and says so when it resumes. A checkpoint records how the last warm-up
went (``warmup``: :meth:`WarmupWatch.record`): a stop inside the warm-up says so and how long the warm-up takes at its
pace, and a resumed run that cannot get past it is refused before any work (:class:`SegmentTooShort`,
:func:`check_segment`: on the same device type, a ``max_minutes`` no longer than that of a run that stopped inside the
warm-up, or shorter than a warm-up that took longer); it would stop in the warm-up again and play its moves without
learning. A new run cannot know its pace: its first segment may stop inside the warm-up (keeping its checkpoint), and
the next one is then refused or runs.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.learner import Learner

__all__ = ["SegmentTooShort", "WarmupWatch", "check_segment"]


class SegmentTooShort(ValueError):
    """A resumed run's ``max_minutes`` is shorter than its warm-up, which it must redo (not saved): refused before any work."""


class WarmupWatch:
    """How the learner's warm-up goes in this call, timed from where its loop starts (after the start and the untrained
    agent's evaluation: what a resumed call redoes): the checkpoint's ``warmup`` record, which the next call reads
    (:func:`check_segment`), and the note of a stop inside it."""

    def __init__(self, learner: Learner, device: torch.device, max_minutes: float | None) -> None:
        self.start, self.device, self.max_minutes = time.monotonic(), str(device), max_minutes
        self.active = not learner.learning and learner.warmup() is not None
        self.done: dict[str, Any] | None = None

    def poll(self, learner: Learner) -> None:
        """After every iteration: notes when the warm-up ends (an attribute read until then, one device read then)."""
        if self.active and self.done is None and learner.learning:
            self.done = self._record(learner, finished=True)

    def _record(self, learner: Learner, *, finished: bool) -> dict[str, Any]:
        got = learner.warmup()
        assert got is not None  # active: the learner has a warm-up
        return {"episodes": got[0], "needed": got[1], "seconds": round(time.monotonic() - self.start, 3), "finished": finished,
                "device": self.device, "max_minutes": self.max_minutes}

    def record(self, learner: Learner) -> dict[str, Any] | None:
        """This call's warm-up so far: ``episodes`` collected of ``needed`` in ``seconds``, ``finished`` or not, on
        ``device`` in a call of ``max_minutes`` (None: it had no warm-up)."""
        if not self.active:
            return None
        return self.done if self.done is not None else self._record(learner, finished=False)

    def stopped_in_warmup(self, learner: Learner) -> str | None:
        """A line for the run log when the call ends inside the warm-up, else None."""
        if not self.active or learner.learning:
            return None
        record = self._record(learner, finished=False)
        estimate = _warmup_seconds(record)
        pace = f", about {estimate / 60:.1f} min at this pace" if estimate is not None else ""
        refused = (f"; a next run on {self.device} with max_minutes no longer than {self.max_minutes:g} is refused"
                   if self.max_minutes is not None else "")
        return (f"stopped in the warm-up ({record['episodes']:,} of {record['needed']:,} episodes after {record['seconds'] / 60:.1f} min): "
                f"no update was made; the warm-up is not saved (R2D2's replay), so the next run collects all {record['needed']:,} "
                f"again before it learns{pace} (a trained agent's longer games take longer){refused}")


def _warmup_seconds(record: dict[str, Any]) -> float | None:
    """The seconds a whole warm-up takes at the pace of ``record`` (its time per episode so far; an overestimate early
    on, when the first games have not ended yet); None where it collected nothing."""
    episodes, seconds = record["episodes"], record["seconds"]
    return seconds * record["needed"] / episodes if episodes > 0 and seconds > 0 else None


def check_segment(checkpoint: dict[str, Any] | None, config: TrainConfig, max_minutes: float | None,
                  device: torch.device) -> str | None:
    """Refuse (:class:`SegmentTooShort`) a resumed run that cannot get past the warm-up it must redo (its data is not
    saved): on the device type of the checkpoint's ``warmup`` record (:class:`WarmupWatch`), a ``max_minutes`` shorter than
    that warm-up took, or, where it did not end, no longer than the call it did not end in (the same empty start, an agent
    at least as trained: its games no shorter). Else a line for the run log on the last warm-up (a warning where
    ``max_minutes`` is shorter than its estimate, or the refusal's evidence is from another device type), or None (no
    warm-up recorded, or nothing left to do)."""
    if checkpoint is None or checkpoint.get("warmup") is None or int(checkpoint["learner"]["counters"]["moves"]) >= config.run.total_moves:
        return None
    record = checkpoint["warmup"]
    needed, minutes, on, before = record["needed"], record["seconds"] / 60, record["device"], record.get("max_minutes")
    if record["finished"]:
        last = f"the last run's warm-up ({needed:,} episodes) took {minutes:.1f} min on {on}"
    else:
        limit = f" (max_minutes {before:g})" if before is not None else ""
        last = (f"the last run{limit} stopped in its warm-up on {on} with {record['episodes']:,} of {needed:,} episodes "
                f"after {minutes:.1f} min")
    estimate = _warmup_seconds(record)
    about = f"; about {estimate / 60:.1f} min at its pace" if estimate is not None and not record["finished"] else ""
    if max_minutes is None:
        return f"warm-up: {last}{about}"
    if record["finished"]:
        short = 60 * max_minutes < record["seconds"]
    else:
        short = before is not None and max_minutes <= before
    if short and torch.device(on).type == device.type:
        enough = math.ceil(1.25 * (estimate if estimate is not None else 2 * 60 * max_minutes) / 60)
        raise SegmentTooShort(f"max_minutes {max_minutes:g} cannot get past the warm-up this resumed run must redo before it "
                              f"learns (its replay is not saved): {last}{about}, so it would stop in its warm-up again and play "
                              f"its moves without learning. Give max_minutes of at least {enough} (or none), or start a new run "
                              f"with a smaller [r2d2] warmup_episodes")
    if short or (estimate is not None and 60 * max_minutes < estimate):
        return f"warning: max_minutes {max_minutes:g} may not get past the warm-up: {last}{about} (this run is on {device})"
    return f"warm-up: {last}{about}"
