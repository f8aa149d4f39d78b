"""What a resumed training run continues beyond networks and optimizer: the games in progress, the LSTM states and
the random streams (the file format: :mod:`eqc.domains.hanabi.agent.files`).

Exact resume. A checkpoint is written between two iterations and holds everything the next one reads: the
games in progress (:func:`games_state`: ``HanabiBatch.state_dict`` with its decks and spare decks, the SAD
block, the Other-Play / G-OP element indices, the bootstrap's ``hinted`` colours and the episode counts since
the last metrics row), every player's LSTM state where the learner has one (:func:`lstm_state_dict`) and
every ``torch.Generator``'s state (deals, relabellings, exploration, learning). Restored on the device type it
was written on, the run continues move for move: its ``metrics.csv`` rows (all but the timings) and weights
equal the uninterrupted run's. A checkpoint from before the games were saved restarts them (new deals; the
run log says so). R2D2 restarts its games whatever the checkpoint holds: its replay buffer is not saved, and it warms
up again before it learns (the run log says so; :mod:`eqc.domains.hanabi.training.run` on warm-ups).

Resuming on another kind of device. The learner's state records the device it ran on
(``device``, e.g. ``"cpu"`` or ``"cuda:0"``; a checkpoint without it was written on the CPU, the
only device eqc had run on before it was recorded). Networks and optimizer states load on any
device, but a generator's state does not: a CPU generator's state is 5056 bytes (Mersenne
Twister), a CUDA one's 16 (Philox seed and offset), and neither can be set into the other. So
:func:`restore_generators` restores each generator exactly when the device *type* is the one the
checkpoint was written on (``cuda:1`` after ``cuda:0`` included), and otherwise re-seeds it from a
seed derived from the saved state (:func:`seed_from_state`: the first 8 bytes of its SHA-256). The
resumed run is then deterministic (the same checkpoint resumed on the same device type plays the
same moves) but does not continue the saved random streams; the run log says so.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

from eqc.domains.hanabi.agent.network import LSTMState
from eqc.domains.hanabi.training.games import TrainingGames

__all__ = ["games_state", "lstm_state_dict", "restore_games", "restore_generators", "restore_lstm_state", "seed_from_state"]


def seed_from_state(state: torch.Tensor) -> int:
    """A seed in ``0 .. 2**63 - 1`` derived from a saved generator state (a byte tensor): the first 8 bytes of its SHA-256."""
    digest = hashlib.sha256(state.detach().cpu().contiguous().numpy().tobytes()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def restore_generators(generators: dict[str, torch.Generator], states: dict[str, torch.Tensor], written_on: str) -> str | None:
    """Restore ``generators`` from the ``states`` a checkpoint saved on device ``written_on`` (see the module docstring).

    Returns None when every state was restored exactly, else one sentence for the run log naming the
    generators re-seeded because the device type changed.
    """
    saved_type = torch.device(written_on).type
    reseeded = []
    for name, generator in generators.items():
        state = states[name].cpu()  # set_state takes a CPU byte tensor on every device
        if generator.device.type == saved_type:
            generator.set_state(state)
        else:
            generator.manual_seed(seed_from_state(state))
            reseeded.append(name)
    if not reseeded:
        return None
    device = next(iter(generators.values())).device
    return (f"the checkpoint was written on {written_on}, this run is on {device}: generator states do not carry across "
            f"device types, so the generators {', '.join(reseeded)} were re-seeded from hashes of their saved states "
            f"(deterministic, but not the saved random streams); the games in progress continue")


def games_state(games: TrainingGames, block: int) -> dict[str, Any]:
    """The games in progress of block ``block`` of ``games`` (a seed's: :meth:`TrainingGames.joined`; ``0`` for games
    of one seed) as a dict of tensors (copies): ``env`` (``HanabiBatch.state_dict``), ``hinted``, ``episodes`` and
    ``score_sum`` (finished since the last metrics row) and, under Other-Play / G-OP, ``element_indices`` (group element
    indices, or a candidate set's draw indices)."""
    rows = games.block_rows(block)
    state: dict[str, Any] = {"env": games.env.block_state_dict(block), "hinted": games.hinted[rows].clone(),
                             "episodes": games.episodes[block].clone(), "score_sum": games.score_sum[block].clone()}
    if games.element_indices is not None:
        state["element_indices"] = games.element_indices[rows].clone()
    return state


def restore_games(games: TrainingGames, state: dict[str, Any]) -> None:
    """Continue in ``games`` (one seed's, not joined) the games of ``state`` (:func:`games_state` of the same run, saved
    on any device). ValueError naming an entry that is missing or does not fit these games (another ``num_envs``,
    objective or game)."""
    if games.blocks != 1:
        raise ValueError("restore a seed's games before they are joined (TrainingGames.joined)")
    relabelled = games.element_indices is not None
    if relabelled != ("element_indices" in state):
        raise ValueError(f"the saved games {'lack' if relabelled else 'have'} Other-Play element indices, these games "
                         f"{'are' if relabelled else 'are not'} relabelled: the checkpoint is of another [rule] objective")
    mine = {"hinted": games.hinted, "episodes": games.episodes[0], "score_sum": games.score_sum[0]}  # views: copied into
    if games.element_indices is not None:
        mine["element_indices"] = games.element_indices
    for name, tensor in mine.items():
        _check_like(state.get(name), tensor, f"games[{name!r}]")
    order = games.relabelling_order
    if order is not None and not bool(((state["element_indices"] >= 0) & (state["element_indices"] < order)).all()):
        raise ValueError(f"the saved games' Other-Play element indices do not all lie in 0..{order - 1}: the checkpoint "
                         "drew from another group or candidate set than [rule] symmetries names now")
    games.env.load_state_dict(state["env"])
    for name, tensor in mine.items():
        tensor.copy_(state[name])


def lstm_state_dict(state: LSTMState) -> dict[str, torch.Tensor]:
    """Every player's LSTM state ``(h, c)`` as ``{"h": ..., "c": ...}`` (copies) for a checkpoint."""
    return {"h": state[0].clone(), "c": state[1].clone()}


def restore_lstm_state(saved: dict[str, torch.Tensor], like: LSTMState) -> LSTMState:
    """The LSTM state of ``saved`` (:func:`lstm_state_dict`) on the device and in the dtype of ``like``, which it must match
    in shape (layers, players of every game, width); ValueError naming the mismatch otherwise."""
    for name, tensor in zip("hc", like, strict=True):
        _check_like(saved.get(name) if isinstance(saved, dict) else None, tensor, f"lstm[{name!r}]")
    return saved["h"].to(like[0]).clone(), saved["c"].to(like[1]).clone()


def _check_like(saved: object, tensor: torch.Tensor, name: str) -> None:
    if not isinstance(saved, torch.Tensor) or saved.dtype != tensor.dtype or saved.shape != tensor.shape:
        got = f"{saved.dtype} {list(saved.shape)}" if isinstance(saved, torch.Tensor) else type(saved).__name__
        raise ValueError(f"the checkpoint's {name} must be a {tensor.dtype} tensor of shape {list(tensor.shape)}, got {got}")
