"""Agent files: checkpoints (to resume training) and policy directories (to ship an agent), each
written atomically, loaded without executing code, describing and checking itself.

**Checkpoint**: one file ``checkpoint.pt`` in a run directory, a dict of tensors and plain Python
values saved with ``torch.save`` and read back with ``torch.load(weights_only=True)``, which
refuses anything but tensors and primitive containers (no pickled code runs). It holds
``format``/``format_version``, the training ``config`` (nested dict; its ``[network] precision`` the precision
the run trains in), ``seed``, ``precision`` (requested, used and why: :class:`~.precision.Precision`), the
learner's state (networks, optimizer, generators, counters), ``metrics`` rows so far and the versions of
eqc and torch that wrote it. Resuming from it, generators included, is training's
(:mod:`eqc.domains.hanabi.training.resume`).

**Policy directory** (e.g. ``results/cpu/agents/<pool>/seed_<n>/``), small (about 1 MB for the
cpu-scale feed-forward agents), what is committed and shared:

- ``policy.safetensors``: the network's weights (safetensors: tensors only, nothing to execute);
- ``policy.json``: ``format``/``format_version``, the full training ``config`` (its ``[game]`` and
  ``[network]`` are the agent's :class:`~eqc.domains.hanabi.config.agent.AgentSpec`; the other keys record how
  it was trained), the game's
  ``rules`` (``HanabiRules.to_dict()``: what the config's ``[game]`` gives, written out), ``seed``,
  ``moves``, ``updates``, ``wall_s``, ``precision`` (the run's: requested, used and why), the eqc/torch
  ``versions``, the ``source`` it was exported from, and two SHA-256 digests that seal the pair:
  ``weights_sha256`` of ``policy.safetensors`` (what ``sha256sum`` prints) and ``record_sha256`` of
  every other field of ``policy.json`` (its canonical JSON: sorted keys, no spaces);
- the run's training record beside them when exported from a run: ``symmetries.json`` (the group Other-Play drew
  from, when ``[rule] symmetries`` named one; for a candidate set of learned neural maps its record, with its weights
  in ``symmetries.safetensors``), ``metrics.csv`` and
  ``learning_curve.png``.

:func:`eqc.domains.hanabi.agent.policy.load_policy` plays either. What loading guarantees: the
format and version are this eqc's; for a policy, the weights are the ones exported with its
``policy.json`` and neither file was edited since (both digests match); every tensor is finite,
the input and output sizes are those of the recorded game (players, knowledge, SAD, dueling head)
and the counters are non-negative integers; anything else is refused with a ``CheckpointError``
naming the file. Writing goes through :func:`eqc.io.atomic_write` (temporary file, fsync, rename,
fsync of the directory): a kill at any moment leaves the old file or the new one. Exporting never
writes over an existing policy or run: ``out`` must be new or empty. A policy is written only from
the checkpoint of the run that trained its network (:func:`export_policy`), so what it records (the
observation variant, the symmetrizer, the precision) is that run's: a network paired with another
config (a ``v0_belief`` network recorded as ``canonical`` reads the same 658 floats and plays 0) cannot
be sealed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import torch

from eqc import __version__
from eqc._checks import check_float, check_int
from eqc.domains.hanabi.agent.network import QNetwork
from eqc.domains.hanabi.agent.precision import Precision
from eqc.domains.hanabi.config.agent import REQUESTED_PRECISIONS, AgentSpec
from eqc.domains.hanabi.config.upgrade import CONFIG_VERSIONS, upgrade_config
from eqc.io import atomic_write, recorded_path, write_json_atomic

__all__ = [
    "CHECKPOINT_NAME", "POLICY_JSON", "POLICY_WEIGHTS", "SYMMETRIES_FILE", "SYMMETRIES_WEIGHTS",
    "CheckpointError", "PolicyDirectoryError", "check_format",
    "checkpoint_network",
    "checkpoint_precision", "export_policy", "is_policy_dir", "load_checkpoint", "read_policy", "resolve", "save_checkpoint", "seal_record",
    "versions",
]

CHECKPOINT_NAME = "checkpoint.pt"
CHECKPOINT_FORMAT = "eqc-hanabi-agent"
#: The version written; :data:`~eqc.domains.hanabi.config.upgrade.CONFIG_VERSIONS` are read (older configs upgraded).
CHECKPOINT_FORMAT_VERSION = CONFIG_VERSIONS[-1]
_CHECKPOINT_KEYS = ("format", "format_version", "config", "seed", "learner", "versions")
POLICY_JSON = "policy.json"
POLICY_WEIGHTS = "policy.safetensors"
POLICY_FORMAT = "eqc-hanabi-policy"
POLICY_FORMAT_VERSION = CONFIG_VERSIONS[-1]
SYMMETRIES_FILE = "symmetries.json"
"""What an agent was trained over (``[rule] symmetries``: an expected-return group, or a candidate set's record),
copied into its run and policy."""
SYMMETRIES_WEIGHTS = "symmetries.safetensors"
"""A candidate set's weights, beside its record :data:`SYMMETRIES_FILE` (its ``weights`` names this file)."""
RECORD_FILES = ("metrics.csv", "learning_curve.png", SYMMETRIES_FILE, SYMMETRIES_WEIGHTS)


class CheckpointError(ValueError):
    """A file that is not a usable eqc Hanabi checkpoint (missing, truncated, foreign or mismatched)."""


def versions() -> dict[str, str]:
    """The versions of eqc and torch (recorded in checkpoints and results)."""
    return {"eqc": __version__, "torch": str(torch.__version__)}


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` (see the module docstring) atomically to ``path``."""
    missing = [k for k in ("config", "seed", "learner") if k not in payload]
    if missing:
        raise ValueError(f"checkpoint payload lacks {missing}")
    full = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_FORMAT_VERSION,
        "versions": versions(),
        **payload,
    }
    atomic_write(path, lambda f: torch.save(full, f))


def resolve(path: str | Path) -> Path:
    """A checkpoint file, or the checkpoint inside a run directory."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {str(path)!r} (expected a run directory holding {CHECKPOINT_NAME}, or the file itself)")
    return path


def check_format(record: object, path: str | Path, expected: str, kind: str) -> int:
    """The format version of ``record``; :class:`CheckpointError` unless it is a dict of format ``expected`` and a
    version this eqc reads (:data:`~eqc.domains.hanabi.config.upgrade.CONFIG_VERSIONS`; a ``kind`` of eqc file)."""
    if not isinstance(record, dict) or record.get("format") != expected:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise CheckpointError(f"{path} is not an eqc Hanabi {kind} (format {found!r}, expected {expected!r})")
    version = record.get("format_version")
    if isinstance(version, bool) or version not in CONFIG_VERSIONS:
        raise CheckpointError(f"{path} has {kind} format version {version!r}, this eqc reads versions {list(CONFIG_VERSIONS)}")
    return int(version)


def _upgraded(config: object, version: int, where: str) -> dict[str, Any]:
    """The recorded ``config`` as today's eqc writes it (:func:`~eqc.domains.hanabi.config.upgrade.upgrade_config`)."""
    try:
        return upgrade_config(config, version, where)
    except ValueError as exc:
        raise CheckpointError(f"{where}: its config is not valid for this eqc: {exc}") from None


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and check a checkpoint (file or run directory); raise ``CheckpointError`` naming the problem."""
    path = resolve(path)
    try:
        data = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # truncated zip, foreign pickle with code, wrong format...
        if "Unsupported global" in str(exc):  # a pickle that would build objects: possibly code
            unsupported = next((line.strip() for line in str(exc).splitlines() if "Unsupported global" in line), "")
            raise CheckpointError(f"{path} holds pickled objects that are not tensors; refused without running them (loading such "
                                  f"a file could execute arbitrary code). {unsupported}".strip()) from None
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        raise CheckpointError(f"{path} is not a readable eqc checkpoint (truncated, corrupt or foreign): {reason}") from None
    version = check_format(data, path, CHECKPOINT_FORMAT, "checkpoint")
    missing = [k for k in _CHECKPOINT_KEYS if k not in data]
    if missing:
        raise CheckpointError(f"{path} lacks {missing}")
    return {**data, "config": _upgraded(data["config"], version, str(path))}


def is_policy_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory holding ``policy.json``."""
    return (Path(path) / POLICY_JSON).is_file()


class PolicyDirectoryError(ValueError):
    """A directory that cannot receive an exported policy (a file, the run itself, or not empty)."""


def network_from_weights(weights: object, spec: AgentSpec, where: str) -> QNetwork:
    """The :class:`QNetwork` of ``spec`` with ``weights`` loaded, once they are checked against it: finite
    float tensors, an input as long as the spec's observation and a head with one output per move, the
    no-op and (dueling) the value. Raises ``CheckpointError`` naming ``where`` and the mismatch."""
    if not isinstance(weights, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise CheckpointError(f"{where}: the network's weights must be a dict of named tensors, got {type(weights).__name__}")
    for name, tensor in weights.items():
        if not tensor.is_floating_point():
            raise CheckpointError(f"{where}: weight {name!r} has dtype {tensor.dtype}, not a float type; not an eqc Q-network")
        bad = int((~torch.isfinite(tensor)).sum())
        if bad:
            raise CheckpointError(f"{where}: weight {name!r} holds {bad} NaN or infinite values of {tensor.numel()}; "
                                  "a network that diverged cannot play")
    for name in ("mlp.0.weight", "head.weight"):
        if name not in weights:
            raise CheckpointError(f"{where}: the weights lack {name!r}; not an eqc Q-network")
        if weights[name].dim() != 2:
            raise CheckpointError(f"{where}: weight {name!r} must be a matrix, got shape {list(weights[name].shape)}")
    rules, g, dueling = spec.rules(), spec.game, spec.network.dueling
    obs_dim, outputs = weights["mlp.0.weight"].shape[1], weights["head.weight"].shape[0]
    game = (f"num_players {g.num_players}, {rules.num_colours} colours x {rules.num_ranks} ranks, hand {rules.hand_size}, "
            f"knowledge {g.knowledge!r}, sad {g.sad!r}")
    if obs_dim != rules.obs_dim:
        raise CheckpointError(f"{where}: the network reads observations of {obs_dim} floats, but its config's game ({game}) "
                              f"has observations of {rules.obs_dim}: the weights and the config describe different agents")
    expected = rules.num_moves + 1 + (1 if dueling else 0)
    if outputs != expected:
        raise CheckpointError(f"{where}: the network's head has {outputs} outputs, but its config gives {expected} "
                              f"({rules.num_moves} moves of the game ({game}), the no-op{', the dueling value' if dueling else ''}, "
                              f"[network] dueling = {str(dueling).lower()})")
    aux = weights["aux_head.weight"].shape[0] if "aux_head.weight" in weights and weights["aux_head.weight"].dim() == 2 else 0
    network = QNetwork(obs_dim, rules.num_moves + 1, spec.network, aux_outputs=aux)
    try:
        network.load_state_dict({k: v.float() for k, v in weights.items()})
    except RuntimeError as exc:
        raise CheckpointError(f"{where}: the saved network does not match its config: {str(exc)[:300]}") from None
    return network


def _count(value: object, name: str, where: str) -> int:
    """``value`` if it is a Python int >= 0 (a seed, moves, updates); else ``CheckpointError`` naming it."""
    try:
        return check_int(value, name, low=0)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{where}: {exc}") from None


def _counters(values: dict[str, Any], where: str) -> dict[str, Any]:
    """``seed``, ``moves``, ``updates`` (ints >= 0) and ``wall_s`` (finite >= 0) of ``values``, checked."""
    try:
        wall_s = check_float(values.get("wall_s", 0.0), "wall_s", low=0)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{where}: {exc}") from None
    return {"seed": _count(values["seed"], "seed", where), "moves": _count(values["moves"], "moves", where),
            "updates": _count(values.get("updates", 0), "updates", where), "wall_s": wall_s}


def checkpoint_network(data: dict[str, Any], where: str) -> tuple[QNetwork, AgentSpec, dict[str, Any]]:
    """The network, agent spec (of the checkpoint's ``config``) and checked counters (``seed``, ``moves``,
    ``updates``, ``wall_s``) of a loaded
    checkpoint ``data`` (:func:`load_checkpoint`); ``CheckpointError`` naming ``where`` if malformed."""
    try:
        spec = AgentSpec.from_config(data["config"], f"{where} config")
    except ValueError as exc:
        raise CheckpointError(f"{where}: its config is not valid for this eqc: {exc}") from None
    learner = data["learner"]
    modules = learner.get("modules") if isinstance(learner, dict) else None
    counters = learner.get("counters") if isinstance(learner, dict) else None
    if not (isinstance(modules, dict) and "network" in modules and isinstance(counters, dict) and "moves" in counters):
        raise CheckpointError(f"{where}: its learner state lacks the network's weights or the moves counter; not an eqc Hanabi checkpoint")
    network = network_from_weights(modules["network"], spec, where)
    return network, spec, _counters({**counters, "seed": data["seed"]}, where)


def checkpoint_precision(data: dict[str, Any]) -> Precision:
    """The precision a loaded checkpoint's run trains in and why: its ``precision`` record; for a run from before
    records were kept (or a record that contradicts its config), its config's ``[network] precision``."""
    network = data["config"].get("network", {}) if isinstance(data["config"], dict) else {}
    used = network.get("precision", "fp32") if isinstance(network, dict) else "fp32"
    record = data.get("precision")
    if (isinstance(record, dict) and set(record) == {"requested", "used", "reason"} and all(isinstance(v, str) for v in record.values())
            and record["requested"] in REQUESTED_PRECISIONS and record["used"] == used):
        return Precision(**record)
    return Precision(used, used, f"recorded in the run's config ([network] precision = {used!r})")


def _record_sha256(record: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of ``record`` without its ``record_sha256``."""
    body = {k: v for k, v in record.items() if k != "record_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")).hexdigest()


def seal_record(record: dict[str, Any], weights: bytes) -> dict[str, Any]:
    """``record`` with ``weights_sha256`` (of the weights file's bytes ``weights``) and ``record_sha256`` (of the rest)."""
    sealed = {k: v for k, v in record.items() if k not in ("weights_sha256", "record_sha256")}
    sealed["weights_sha256"] = hashlib.sha256(weights).hexdigest()
    sealed["record_sha256"] = _record_sha256(sealed)
    return sealed


def _check_seal(record: dict[str, Any], weights: bytes, json_path: Path, weights_path: Path) -> None:
    """Raise ``CheckpointError`` unless ``record`` is sealed (:func:`seal_record`) and both digests match."""
    missing = [k for k in ("weights_sha256", "record_sha256") if not isinstance(record.get(k), str)]
    if missing:
        raise CheckpointError(f"{json_path} lacks {missing}: it does not tie its description to {weights_path.name} "
                              "(written before policy files were sealed, or edited); export it again from its run")
    if record["record_sha256"] != _record_sha256(record):
        raise CheckpointError(f"{json_path} was edited after export: its contents no longer match its record_sha256, so it may "
                              f"not describe {weights_path.name}; export the policy again from its run")
    digest = hashlib.sha256(weights).hexdigest()
    if digest != record["weights_sha256"]:
        raise CheckpointError(f"{weights_path} is not the weights file exported with {json_path.name} (changed, truncated or "
                              f"replaced since): its SHA-256 is "
                              f"{digest[:16]}..., {json_path.name} records {record['weights_sha256'][:16]}...")


def _write_policy(out: Path, network: QNetwork, spec: AgentSpec, data: dict[str, Any], counters: dict[str, Any], source: str) -> Path:
    """Write ``policy.safetensors`` and a sealed ``policy.json`` into ``out`` (created) for ``network``, the network of the
    loaded checkpoint ``data`` (its ``spec`` and checked ``counters``: :func:`checkpoint_network`); returns ``out``."""
    from safetensors.torch import save

    weights = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in network.state_dict().items()}
    blob = save(weights, metadata={"format": POLICY_FORMAT, "format_version": str(POLICY_FORMAT_VERSION)})
    record = {"format": POLICY_FORMAT, "format_version": POLICY_FORMAT_VERSION, "config": data["config"], "rules": spec.rules().to_dict(),
              **counters, "precision": checkpoint_precision(data).as_dict(), "versions": versions(), "source": source}
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / POLICY_WEIGHTS, lambda f: f.write(blob))
    write_json_atomic(out / POLICY_JSON, seal_record(record, blob))
    return out


def _check_export_target(run: Path, out: Path) -> None:
    """Refuse an ``out`` that is a file, the run directory itself, or a directory that already holds files."""
    run_dir = run if run.is_dir() else run.parent
    if out.exists() and not out.is_dir():
        raise PolicyDirectoryError(f"out {str(out)!r} is a file, not a directory")
    if out.resolve() == run_dir.resolve():
        raise PolicyDirectoryError(f"out {str(out)!r} is the run directory itself: a policy there would be read instead of "
                                   f"its {CHECKPOINT_NAME} once the run goes on; export into a directory of its own")
    held = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if held:
        what = "another agent's policy directory" if POLICY_JSON in held else "a directory that is not empty"
        raise PolicyDirectoryError(f"out {str(out)!r} is {what} (holds {', '.join(held[:5])}{', ...' if len(held) > 5 else ''}); "
                                   "export never overwrites files: give a new or empty directory")


def export_policy(run: str | Path, out: str | Path) -> Path:
    """Export the network of a checkpoint (a run directory or ``checkpoint.pt``) as a policy directory ``out``
    (new or empty; ``PolicyDirectoryError`` otherwise), with the run's ``metrics.csv`` and
    ``learning_curve.png`` when present beside the checkpoint. Everything is checked before ``out`` is created."""
    run, out = Path(run), Path(out)
    data = load_checkpoint(run)
    network, spec, counters = checkpoint_network(data, str(run))
    _check_export_target(run, out)
    out = _write_policy(out, network, spec, data, counters, recorded_path(run))
    run_dir = run if run.is_dir() else run.parent
    for name in RECORD_FILES:
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, out / name)
    return out


def _refuse_constant(name: str) -> None:
    """``json.loads``'s ``parse_constant``: NaN and infinities are not JSON and eqc never writes them."""
    raise ValueError(f"{name} is not a JSON number")


def read_policy(path: str | Path, device: torch.device | str = "cpu") -> tuple[QNetwork, AgentSpec, dict[str, Any]]:
    """Read a policy directory (or its ``policy.json``/``policy.safetensors``): the network on ``device``,
    its agent spec (of the recorded training ``config``) and the record of ``policy.json``. Raises
    ``CheckpointError`` naming the problem."""
    from safetensors import SafetensorError
    from safetensors.torch import load

    path = Path(path)
    folder = path.parent if path.is_file() and path.name in (POLICY_JSON, POLICY_WEIGHTS) else path
    json_path, weights_path = folder / POLICY_JSON, folder / POLICY_WEIGHTS
    for needed in (json_path, weights_path):
        if not needed.is_file():
            raise CheckpointError(f"{str(folder)!r} is not a policy directory: it lacks {needed.name}")
    try:
        record = json.loads(json_path.read_text(), parse_constant=_refuse_constant)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CheckpointError(f"{json_path} is not readable JSON: {exc}") from None
    version = check_format(record, json_path, POLICY_FORMAT, "policy file")
    try:
        blob = weights_path.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{weights_path} is not readable: {exc}") from None
    _check_seal(record, blob, json_path, weights_path)
    missing = [k for k in ("config", "seed", "moves") if k not in record]
    if missing:
        raise CheckpointError(f"{json_path} lacks {missing}")
    _counters(record, str(json_path))
    record = {**record, "config": _upgraded(record["config"], version, str(json_path))}
    try:
        spec = AgentSpec.from_config(record["config"], f"{json_path} config")
    except ValueError as exc:
        raise CheckpointError(f"{json_path}: its config is not valid for this eqc: {exc}") from None
    if "rules" in record and record["rules"] != spec.rules().to_dict():
        raise CheckpointError(f"{json_path}: its rules {record['rules']} are not the game of its config's [game] "
                              f"({spec.rules().to_dict()}); export the policy again from its run")
    used = record["precision"].get("used") if isinstance(record.get("precision"), dict) else spec.network.precision
    if used != spec.network.precision:
        raise CheckpointError(f"{json_path}: its precision record says the network was trained in {used!r}, its config's "
                              f"[network] precision says {spec.network.precision!r}; export the policy again from its run")
    try:
        weights = load(blob)
    except SafetensorError as exc:
        raise CheckpointError(f"{weights_path} is not a readable safetensors file (truncated or foreign): {exc}") from None
    network = network_from_weights(weights, spec, str(weights_path)).to(device)
    return network, spec, record
