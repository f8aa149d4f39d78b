"""Which PettingZoo API an environment speaks, and how to observe a parallel one again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["cached_observations", "is_parallel", "observer"]


def is_parallel(env: Any) -> bool:
    """True for a ``ParallelEnv``, False for an ``AECEnv``; ``TypeError`` for anything else."""
    try:
        from pettingzoo.utils.env import AECEnv, ParallelEnv
    except ImportError as err:
        raise ImportError(f'eqc.pettingzoo needs PettingZoo: pip install -e ".[pettingzoo]" ({err})') from err

    if isinstance(env, AECEnv):
        return False
    if isinstance(env, ParallelEnv):
        return True
    raise TypeError(f"env must be a PettingZoo AECEnv or ParallelEnv, got {type(env).__name__}")


def observer(env: Any) -> Callable[[str], Any] | None:
    """``observe(agent)`` of a parallel env: its AEC original (``aec_to_parallel``) or its unwrapped env, if any."""
    for source in (getattr(env, "aec_env", None), getattr(env, "unwrapped", None)):
        if source is not None and callable(getattr(source, "observe", None)):
            return source.observe
    return None


def cached_observations(env: Any) -> Any:
    """The ``parallel_to_aec`` wrapper inside the AEC env ``env`` (whose ``observe`` replays observations cached at
    the parallel env's last reset or step), or None."""
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper

    while env is not None:
        if isinstance(env, parallel_to_aec_wrapper):
            return env
        env = getattr(env, "env", None)
    return None
