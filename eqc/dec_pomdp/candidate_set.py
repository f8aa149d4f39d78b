"""A set of learned neural maps (:mod:`~eqc.dec_pomdp.neural_maps`): what Other-Play draws from, and its file.

A :class:`CandidateSet` holds maps phi_1..phi_k learned against one pool; the identity is implicit (index 0). It is
**not a group**: the maps are not closed under composition (phi_1 o phi_2 is in no list) and are not exact inverses
of one another (f o f only approaches the identity), so an average over them is equivariant to nothing and "a
subgroup" of them is undefined. Other-Play can use it all the same, since it only draws: :meth:`CandidateSet.draw`
gives each seat of each episode a uniform index over identity + maps, and :meth:`CandidateSet.seat_policy` turns a
policy and an index into the seat's policy. :class:`~eqc.symmetrize.Symmetrizer` and G-OP refuse it
(:func:`refuse_candidate_set`).

The file is two files side by side: ``NAME.json``, the record (``kind``, ``version``, ``observation_size``,
``hidden_size``, ``num_moves``, ``dtype``, ``options``, per map its ``move_permutation``, ``loss``, ``self_play``,
``cross_play`` and ``objective``, the ``weights`` file's name and SHA-256, ``context``), and ``NAME.safetensors``,
the weights (tensors only: loading runs no code).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from eqc._checks import check_int
from eqc.dec_pomdp.neural_maps import CandidateMap, LearnedMap, NeuralMapOptions, SeatPolicy, transform_logits
from eqc.groups.permutations import as_permutations
from eqc.io import atomic_write, read_json, write_json_atomic

__all__ = [
    "CANDIDATE_SET_KIND", "NOT_A_GROUP", "CandidateSet", "copy_candidate_set", "is_candidate_set_file", "load_candidate_set",
    "refuse_candidate_set",
]

CANDIDATE_SET_KIND = "eqc.neural_candidate_set"
"""The ``kind`` of a candidate-set record (:meth:`CandidateSet.save`)."""
NOT_A_GROUP = ("its learned maps are not closed under composition nor exact inverses of one another, so an average "
               "over them is equivariant to nothing and 'a subgroup' of them is undefined; Other-Play draws from it "
               "(CandidateSet.draw), the symmetrizer and G-OP need a group (a Symmetry, or an ExpectedReturnGroup's "
               ".symmetry)")
_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def refuse_candidate_set(value: object, name: str) -> None:
    """TypeError saying why, when ``value`` (the argument ``name``) is a :class:`CandidateSet` where a group is needed."""
    if isinstance(value, CandidateSet):
        raise TypeError(f"{name} is a CandidateSet, not a group: {NOT_A_GROUP}")


@dataclass(frozen=True)
class CandidateSet:
    """Learned maps on one game's observations and moves, the identity implicit (module docstring).

    Attributes:
        maps: the learned maps, each with its final measurement; draw index ``k + 1`` is ``maps[k]``.
        options: the options they were learned with.
        context: what they were learned against (the pool, the game, the command), as recorded.
    """

    maps: tuple[LearnedMap, ...]
    options: NeuralMapOptions
    context: dict[str, Any]

    def __post_init__(self) -> None:
        if not self.maps or not all(isinstance(m, LearnedMap) for m in self.maps):
            raise TypeError("maps must be a non-empty tuple of LearnedMap (train_candidate_map)")
        shapes = {(m.map.observation_size, m.map.hidden_size, m.map.num_moves) for m in self.maps}
        if len(shapes) != 1:
            raise ValueError(f"every map must have one (observation_size, hidden_size, num_moves); got {sorted(shapes)}")

    @property
    def size(self) -> int:
        """How many indices :meth:`draw` draws from: the identity and the maps."""
        return len(self.maps) + 1

    def draw(self, generator: torch.Generator, *shape: int) -> torch.Tensor:
        """``long [*shape]`` (e.g. ``episodes, seats``): independent uniform indices over identity (0) + maps."""
        if not isinstance(generator, torch.Generator):
            raise TypeError("generator must be a seeded torch.Generator (Other-Play never uses the global RNG)")
        for k, s in enumerate(shape):
            check_int(s, f"shape[{k}]", low=0)
        return torch.randint(self.size, shape, generator=generator)

    def seat_policy(self, logits: Callable[[torch.Tensor], torch.Tensor], index: int) -> SeatPolicy:
        """The seat policy ``(obs, legal) -> logits`` of ``logits`` transformed by draw ``index`` (0: untransformed)."""
        check_int(index, "index", low=0, high=self.size - 1)
        maps = () if index == 0 else (self.maps[index - 1].map,)
        return lambda obs, legal: transform_logits(logits, maps, obs, legal)

    def save(self, path: str | Path, **context: Any) -> Path:
        """Write ``path`` (``NAME.json``) and ``NAME.safetensors``; refuses when either exists. ``context`` adds to
        :attr:`context`. Returns the JSON path."""
        from safetensors.torch import save

        out = Path(path)
        if out.suffix != ".json":
            raise ValueError(f"path must name the record, a .json file (the weights go beside it), got {str(out)!r}")
        weights_path = out.with_suffix(".safetensors")
        for p in (out, weights_path):
            if p.exists():
                raise FileExistsError(f"{p} exists: a candidate set is written once; choose a new path or remove it")
        first = self.maps[0].map
        tensors = {f"map{k}.{name}": t.detach().cpu().contiguous() for k, m in enumerate(self.maps)
                   for name, t in m.map.named_parameters()}
        blob = save(tensors, metadata={"kind": CANDIDATE_SET_KIND})
        record = {
            "kind": CANDIDATE_SET_KIND, "version": 1, "observation_size": first.observation_size,
            "hidden_size": first.hidden_size, "num_moves": first.num_moves, "dtype": str(first.biases[0].dtype).removeprefix("torch."),
            "options": self.options.to_dict(),
            "maps": [{"move_permutation": m.map.move_permutation.tolist(), "loss": m.loss, "self_play": m.self_play,
                      "cross_play": None if math.isnan(m.cross_play) else m.cross_play, "objective": list(m.objective)}
                     for m in self.maps],
            "weights": weights_path.name, "weights_sha256": hashlib.sha256(blob).hexdigest(),
            "context": {**self.context, **context},
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        weights_path.write_bytes(blob)
        write_json_atomic(out, record)
        return out


def _bad(path: Path, key: str, what: str) -> ValueError:
    return ValueError(f"{path}: {key!r} {what}")


def _number(path: Path, key: str, value: object, *, nullable: bool = False) -> float:
    if nullable and value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(path, key, f"must be a finite number{' or null' if nullable else ''}, got {value!r}")
    return float(value)


def _size(path: Path, record: dict[str, Any], key: str) -> int:
    value = record.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _bad(path, key, f"must be a positive integer, got {value!r}")
    return value


def copy_candidate_set(path: str | Path, out: str | Path) -> Path:
    """Copy the candidate set saved at ``path`` (checked by :func:`load_candidate_set`) to ``out`` (``NAME.json``) and
    ``NAME.safetensors`` beside it, the weights byte for byte and the record with only ``weights`` renamed to the new
    file's name (so the copy loads; its ``weights_sha256`` still holds). Overwrites both atomically; returns ``out``."""
    src, dest = Path(path), Path(out)
    if dest.suffix != ".json":
        raise ValueError(f"out must name the record, a .json file (the weights go beside it), got {str(dest)!r}")
    load_candidate_set(src)
    record = json.loads(src.read_text())
    blob = (src.parent / record["weights"]).read_bytes()
    if hashlib.sha256(blob).hexdigest() != record["weights_sha256"]:
        raise _bad(src, "weights_sha256", f"does not match {record['weights']} (changed while it was being copied)")
    weights = dest.with_suffix(".safetensors")
    atomic_write(weights, lambda f: f.write(blob))
    write_json_atomic(dest, {**record, "weights": weights.name})
    return dest


def is_candidate_set_file(path: str | Path) -> bool:
    """Whether ``path`` is a JSON record whose ``kind`` is a candidate set's (how a file naming "symmetries" is told from
    an expected-return group file). False for anything unreadable: the loader of either kind then says what is wrong."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and record.get("kind") == CANDIDATE_SET_KIND


def load_candidate_set(path: str | Path) -> CandidateSet:
    """The :class:`CandidateSet` saved at ``path`` (its ``.json``), every key checked: ValueError naming the file and key."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    p = Path(path)
    record = read_json(p, "candidate-set record")
    if not isinstance(record, dict) or record.get("kind") != CANDIDATE_SET_KIND:
        got = record.get("kind") if isinstance(record, dict) else type(record).__name__
        raise _bad(p, "kind", f"must be {CANDIDATE_SET_KIND!r} (written by CandidateSet.save), got {got!r}")
    if record.get("version") != 1:
        raise _bad(p, "version", f"must be 1 (the only version this eqc reads), got {record.get('version')!r}")
    d, h, a = (_size(p, record, k) for k in ("observation_size", "hidden_size", "num_moves"))
    dtype = _DTYPES.get(record.get("dtype"))  # type: ignore[arg-type]
    if dtype is None:
        raise _bad(p, "dtype", f"must be one of {sorted(_DTYPES)}, got {record.get('dtype')!r}")
    options_record = record.get("options")
    try:
        options = NeuralMapOptions(**options_record) if isinstance(options_record, dict) else None
    except (TypeError, ValueError) as e:
        raise _bad(p, "options", f"are not valid NeuralMapOptions: {e}") from None
    if options is None or options.hidden_size != h:
        raise _bad(p, "options", f"must be NeuralMapOptions with hidden_size {h}, got {options_record!r}")
    entries = record.get("maps")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise _bad(p, "maps", "must be a non-empty list of records")
    if not isinstance(record.get("context"), dict):
        raise _bad(p, "context", f"must be an object, got {record.get('context')!r}")
    weights_path = p.parent / str(record.get("weights"))
    if record.get("weights") != p.with_suffix(".safetensors").name or not weights_path.is_file():
        raise _bad(p, "weights", f"must name the weights file beside it, {p.with_suffix('.safetensors').name}, which must exist")
    blob = weights_path.read_bytes()
    if hashlib.sha256(blob).hexdigest() != record.get("weights_sha256"):
        raise _bad(p, "weights_sha256", f"does not match {weights_path.name} (changed or replaced since it was saved)")
    try:
        tensors = load(blob)
    except SafetensorError as e:
        raise _bad(p, "weights", f"names an unreadable safetensors file: {e}") from None
    maps = []
    for k, entry in enumerate(entries):
        key = f"maps[{k}]"
        try:
            sigma = as_permutations(entry.get("move_permutation"), a, name=f"{key}.move_permutation", batch_dims=0)
        except (TypeError, ValueError) as e:
            raise _bad(p, f"{key}.move_permutation", f"must be a permutation of 0..{a - 1}: {e}") from None
        phi = CandidateMap(d, h, sigma, generator=torch.Generator(), dtype=dtype)
        for name, param in phi.named_parameters():
            t = tensors.pop(f"map{k}.{name}", None)
            if t is None or t.shape != param.shape or t.dtype != dtype or not bool(torch.isfinite(t).all()):
                raise _bad(p, "weights", f"must hold map{k}.{name}, finite {str(dtype).removeprefix('torch.')} of shape "
                                         f"{list(param.shape)}, in {weights_path.name}")
            param.data.copy_(t)
        phi.requires_grad_(False)
        objective = entry.get("objective")
        if not isinstance(objective, list):
            raise _bad(p, f"{key}.objective", f"must be a list of numbers, got {objective!r}")
        maps.append(LearnedMap(phi, _number(p, f"{key}.loss", entry.get("loss")), _number(p, f"{key}.self_play", entry.get("self_play")),
                               _number(p, f"{key}.cross_play", entry.get("cross_play"), nullable=True),
                               tuple(_number(p, f"{key}.objective", x) for x in objective)))
    if tensors:
        raise _bad(p, "weights", f"names a file with tensors no map uses: {sorted(tensors)[:3]}")
    return CandidateSet(tuple(maps), options, record["context"])
