"""Refusing what cannot be replayed exactly: the probe run when a :class:`PettingZooDecPOMDP` is built.

A relabelled replay is exact only if the environment's chance comes from the generator that
``reset(seed=...)`` seeds (or from OpenSpiel chance nodes, which the adapter controls). The probe
plays the same random moves twice from the same seed and requires bit-identical observations,
legal actions, rewards and terminations; an environment that also reads the global ``numpy``/
``random`` generators, the clock or an unseeded source fails it and is refused. It then plays from
another seed: if that changes anything, the environment draws chance, and without ``relabel_state``
or ``relabel_chance`` a relabelled replay would see the original draws, so that is refused too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from eqc.pettingzoo.outcomes import EpisodeStart

if TYPE_CHECKING:
    from eqc.pettingzoo.adapter import PettingZooDecPOMDP

__all__ = ["probe", "replay_difference"]

_SEEDS = (12345, 54321)
#: What the probe says when it refuses, formatted with the env, both seeds and where the episodes differ.
_NOT_REPLAYABLE = (
    "{env} cannot be replayed exactly: two episodes from reset(seed={first}) with the same moves differ "
    "at {where}. It draws from something reset(seed=...) does not seed (the global numpy or random "
    "generators, the clock, ...), so eqc cannot give a relabelled copy the same draws"
)
_CHANCE_NOT_RELABELLED = (
    "{env} draws chance (reset(seed={first}) and reset(seed={seed}) differ at {where}) but no "
    "relabel_state was given: a relabelled copy would see the original draws. Give "
    "relabel_state=(env, labels) -> None applying the labels to what reset drew, or "
    "relabel_state=lambda env, labels: None if no draw depends on the labels"
)


def _run(adapter: PettingZooDecPOMDP, seed: int, steps: int) -> list[tuple[str, Any]]:
    """(what, value) after the reset and after each of up to ``steps`` seeded random moves."""
    moves = torch.Generator().manual_seed(0)
    adapter.reset(EpisodeStart(seed))
    trace: list[tuple[str, Any]] = []
    for t in range(steps + 1):
        if t:
            legal = adapter.legal_actions()
            actions = [int(row.nonzero().flatten()[torch.randint(int(row.sum()), (), generator=moves)]) if row.any() else 0
                       for row in legal]
            trace.append((f"step {t}: reward", adapter.step(actions)))
        trace += [
            (f"step {t}: observations", adapter.observations()),
            (f"step {t}: legal actions", adapter.legal_actions()),
            (f"step {t}: rewards and terminations", adapter.record()),
        ]
        if adapter.terminal:
            break
    return trace


def _first_difference(a: list[tuple[str, Any]], b: list[tuple[str, Any]]) -> str | None:
    for (what, x), (_, y) in zip(a, b, strict=False):
        same = torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y
        if not same:
            return what
    return None if len(a) == len(b) else f"episode length ({len(a)} vs {len(b)} records)"


def replay_difference(adapter: PettingZooDecPOMDP, steps: int, runs: int = 8) -> str | None:
    """Where ``runs`` episodes from one seed with the same moves first differ (None: they are all the same). The probe
    plays two; this plays more, so that an environment whose reset ignores its seed (a few outcomes of the global
    generator) is caught with near certainty before a counterexample is blamed on the declaration."""
    first = _run(adapter, _SEEDS[0], steps)
    for _ in range(runs - 1):
        if (where := _first_difference(first, _run(adapter, _SEEDS[0], steps))) is not None:
            return where
    return None


def _refuse_a_difference(adapter: PettingZooDecPOMDP, steps: int, first: list[tuple[str, Any]], seed: int, message: str) -> None:
    """Raise ``ValueError(message)`` if an episode from ``seed`` differs from ``first`` (played from ``_SEEDS[0]``)."""
    where = _first_difference(first, _run(adapter, seed, steps))
    if where is not None:
        raise ValueError(message.format(env=adapter.env, first=_SEEDS[0], seed=seed, where=where))


def probe(adapter: PettingZooDecPOMDP, steps: int) -> None:
    """Raise ``ValueError`` if ``adapter``'s environment cannot be replayed exactly (``steps`` = 0 skips)."""
    if steps == 0:
        return
    first = _run(adapter, _SEEDS[0], steps)
    _refuse_a_difference(adapter, steps, first, _SEEDS[0], _NOT_REPLAYABLE)
    if adapter.relabel_state is None and adapter.relabel_chance is None:
        _refuse_a_difference(adapter, steps, first, _SEEDS[1], _CHANCE_NOT_RELABELLED)
