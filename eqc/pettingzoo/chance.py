"""Explicit chance for OpenSpiel games played through Shimmy (e.g. PettingZoo's ``hanabi_v5``).

Shimmy's ``OpenSpielCompatibilityV0`` resolves every chance node (a card dealt, a die thrown) by
``np_random.choice`` over ``state.chance_outcomes()``. :class:`OpenSpielChance` takes that over
on one instance: it samples exactly as Shimmy does (the same generator, the same call), records
each outcome (an OpenSpiel chance action) and its probability, and, when given a sequence of
outcomes, plays those instead. That turns the game's hidden chance into the explicit outcomes
of :class:`~eqc.dec_pomdp.DecPOMDP`, so a relabelled game can be dealt the relabelled cards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["OpenSpielChance", "chance_control", "find_openspiel", "has_chance_nodes"]


def find_openspiel(env: Any) -> Any | None:
    """The Shimmy ``OpenSpielCompatibilityV0`` inside ``env`` (itself, or an attribute of ``env.unwrapped``), or None."""
    try:
        from shimmy.openspiel_compatibility import OpenSpielCompatibilityV0
    except ImportError:
        return None
    unwrapped = getattr(env, "unwrapped", env)
    if isinstance(unwrapped, OpenSpielCompatibilityV0):
        return unwrapped
    inner = [v for v in vars(unwrapped).values() if isinstance(v, OpenSpielCompatibilityV0)]
    return inner[0] if len(inner) == 1 else None


def has_chance_nodes(compat: Any) -> bool:
    """Whether the OpenSpiel game has chance nodes (its chance mode is not deterministic)."""
    return "DETERMINISTIC" not in str(compat.game_type.chance_mode).upper()


class OpenSpielChance:
    """Records the chance outcomes of a Shimmy OpenSpiel env, or forces given ones.

    Call :meth:`begin` before the env's ``reset``/``step`` (with ``None`` to sample, or the outcomes
    to play) and :meth:`end` after it: it returns the outcomes of that call; :attr:`probability` is
    their joint probability. A forced outcome that is impossible at its chance node, or a forced
    sequence of another length than the chance nodes met, raises ``ValueError``.
    """

    def __init__(self, compat: Any) -> None:
        self.compat = compat
        self.forced: list[int] | None = None
        self.drawn: list[int] = []
        self.probability = 1.0
        compat._execute_chance_node = self._execute_chance_node  # the instance attribute shadows Shimmy's method

    def begin(self, forced: Sequence[int] | None) -> None:
        self.forced = None if forced is None else [int(a) for a in forced]
        self.drawn, self.probability = [], 1.0

    def end(self) -> tuple[int, ...]:
        if self.forced:
            raise ValueError(f"{len(self.forced)} forced chance outcome(s) left over: the game met fewer chance nodes")
        self.forced = None
        return tuple(self.drawn)

    def _execute_chance_node(self) -> None:
        state = self.compat.game_state
        while state.is_chance_node():
            self.compat.game_length += 1
            outcomes = state.chance_outcomes()
            if self.forced is None:
                actions, probabilities = zip(*outcomes, strict=True)
                action = int(self.compat.np_random.choice(actions, p=probabilities))  # Shimmy's own draw
            elif not self.forced:
                raise ValueError("the game met more chance nodes than forced outcomes were given")
            else:
                action = self.forced.pop(0)
            probability = dict(outcomes).get(action)
            if probability is None:
                raise ValueError(f"chance outcome {action} is impossible here; possible: {sorted(a for a, _ in outcomes)}")
            self.drawn.append(action)
            self.probability *= probability
            state.apply_action(action)


def chance_control(env: Any, relabel_chance: Callable[..., int] | None) -> OpenSpielChance | None:
    """The :class:`OpenSpielChance` of ``env`` when it has chance nodes (then ``relabel_chance`` is required), else None."""
    compat = find_openspiel(env)
    if compat is None or not has_chance_nodes(compat):
        if relabel_chance is not None:
            raise ValueError(
                f"relabel_chance relabels the chance nodes of an OpenSpiel game played through Shimmy; {env} has none "
                f"(relabel what its reset draws with relabel_state instead)"
            )
        return None
    if relabel_chance is None:
        raise ValueError(
            f"{env} is the OpenSpiel game {compat.game_name!r}, which deals chance outcomes during play; give "
            f"relabel_chance=(outcome, labels) -> outcome so that the relabelled game can be dealt the relabelled outcomes"
        )
    return OpenSpielChance(compat)
