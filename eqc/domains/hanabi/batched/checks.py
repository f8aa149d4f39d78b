"""Input validation for ``HanabiBatch`` (its checked mode). Errors name the argument and the games.

These checks synchronise with the device (they read tensor values on the host); the unchecked
fast path of ``HanabiBatch`` skips them.
"""

from __future__ import annotations

import torch

from eqc._checks import check_tensor
from eqc.domains.hanabi.batched.tables import HanabiTables

__all__ = ["as_long_tensor", "check_decks", "check_legal", "check_moves", "check_out"]

_SHOW = 5  # offending games listed in an error message
_INTEGER_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def _check_shape_device(value: torch.Tensor, name: str, shape: tuple[int, ...], device: torch.device) -> None:
    if tuple(value.shape) != shape:
        raise ValueError(f"{name} must have shape {list(shape)}, got {list(value.shape)}")
    if value.device != device:
        raise ValueError(f"{name} is on device {value.device}, but the environment is on {device}")


def as_long_tensor(value: object, name: str, shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """Check that ``value`` is an integer tensor of ``shape`` on ``device``; return it as long."""
    tensor = check_tensor(value, name)
    if tensor.dtype not in _INTEGER_DTYPES:
        raise TypeError(f"{name} must have an integer dtype (torch.long), got {tensor.dtype}")
    _check_shape_device(tensor, name, shape, device)
    return tensor.long()


def check_out(value: object, name: str, dtype: torch.dtype, shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """Check a caller-owned output buffer: a ``dtype`` tensor of ``shape`` on ``device``."""
    tensor = check_tensor(value, name, dtypes=(dtype,))
    _check_shape_device(tensor, name, shape, device)
    return tensor


def _games(rows: torch.Tensor) -> str:
    idx = rows.nonzero().flatten().tolist()
    more = f" (and {len(idx) - _SHOW} more)" if len(idx) > _SHOW else ""
    return ", ".join(str(i) for i in idx[:_SHOW]) + more


def check_decks(decks: object, num_envs: int, tables: HanabiTables) -> torch.Tensor:
    """``decks`` as long [num_envs, D]: each row a permutation of the D-card multiset (``rules.deck_size``)."""
    n = tables.num_cards
    d = as_long_tensor(decks, "decks", (num_envs, tables.deck_size), tables.device)
    bad_id = ((d < 0) | (d >= n)).any(dim=1)
    if bool(bad_id.any()):
        raise ValueError(f"decks holds card ids outside [0, {n}) in games {_games(bad_id)}")
    not_perm = (d.sort(dim=1).values != tables.initial_deck).any(dim=1)
    if bool(not_perm.any()):
        first = int(not_perm.nonzero()[0, 0])
        counts = torch.bincount(d[first], minlength=n)
        want = torch.bincount(tables.initial_deck, minlength=n)
        card = int((counts != want).nonzero()[0, 0])
        raise ValueError(
            f"decks rows must be permutations of the {tables.deck_size}-card deck; games {_games(not_perm)} are not "
            f"(game {first}: card {card} appears {int(counts[card])} times, expected {int(want[card])})"
        )
    return d


def check_moves(moves: object, num_envs: int, tables: HanabiTables, name: str = "moves") -> torch.Tensor:
    """``moves`` as long [num_envs] with every entry a move uid in [0, M)."""
    m = as_long_tensor(moves, name, (num_envs,), tables.device)
    bad = (m < 0) | (m >= tables.num_moves)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"{name} must be move uids in [0, {tables.num_moves}); games {_games(bad)} are not "
            f"({name}[{first}] = {int(m[first])})"
        )
    return m


def check_legal(moves: torch.Tensor, legal: torch.Tensor, applies: torch.Tensor, name: str = "moves") -> None:
    """Raise ValueError if a move that will be applied (``applies``, bool [B]) is illegal."""
    ok = legal.gather(1, moves.view(-1, 1)).view(-1)
    bad = applies & ~ok
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        allowed = legal[first].nonzero().flatten().tolist()
        raise ValueError(
            f"{name} holds illegal moves in games {_games(bad)}: {name}[{first}] = {int(moves[first])}, "
            f"legal move uids there: {allowed}"
        )
