"""One-off migration: the files this project wrote, rewritten in eqc's one vocabulary.

eqc once read renamed config keys, metrics fields and record fields under their old names; it no
longer does. This script renames them, once, in the JSON and CSV files under the given roots
(default: ``results`` and ``benchmarks/results``):

- config tables (a dict with ``run`` and ``rule`` sections): ``[run] total_env_steps`` ->
  ``total_moves``, ``eval_every_steps`` -> ``eval_every_moves``, ``eval_seed`` -> ``deck_seed``
  (its value kept), ``[pqn] eps_decay_steps`` -> ``eps_decay_moves``, ``[rule] rule`` ->
  ``objective``, ``[rule] hidden`` -> ``hidden_scheme``, ``[rule] symmetrize = ""`` -> ``"none"``;
- every other record: ``env_steps`` -> ``moves``, ``env_steps_per_s`` -> ``moves_per_s``,
  ``eval_bombout`` -> ``eval_bomb_out_rate``, ``eval_perfect`` -> ``eval_perfect_rate``, ``hidden``
  (the recurrent symmetrizer's scheme) -> ``hidden_scheme``, and ``rule`` holding the training
  objective (a string) -> ``objective``; the same fields in a CSV header.

A sealed ``policy.json`` that changes is resealed with ``seal_record`` (its weights unchanged) and
read back with ``read_policy``. Idempotent: a second run changes nothing.

    python scripts/migrate_vocabulary.py [ROOT ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, read_policy, seal_record
from eqc.io import write_json_atomic

CONFIG_KEYS = {
    ("run", "total_env_steps"): "total_moves",
    ("run", "eval_every_steps"): "eval_every_moves",
    ("run", "eval_seed"): "deck_seed",
    ("pqn", "eps_decay_steps"): "eps_decay_moves",
    ("rule", "rule"): "objective",
    ("rule", "hidden"): "hidden_scheme",
}
FIELDS = {
    "env_steps": "moves", "env_steps_per_s": "moves_per_s", "eval_bombout": "eval_bomb_out_rate",
    "eval_perfect": "eval_perfect_rate", "hidden": "hidden_scheme",
}


def _is_config(value: dict[str, Any]) -> bool:
    return isinstance(value.get("run"), dict) and isinstance(value.get("rule"), dict)


def _config(sections: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for name, table in sections.items():
        if isinstance(table, dict):
            table = {CONFIG_KEYS.get((name, key), key): value for key, value in table.items()}
            if name == "rule" and table.get("symmetrize") == "":
                table["symmetrize"] = "none"
        out[name] = table
    return out


def migrate(value: Any) -> Any:
    """``value`` (parsed JSON) with every old name under its current one."""
    if isinstance(value, list):
        return [migrate(v) for v in value]
    if not isinstance(value, dict):
        return value
    if _is_config(value):
        return _config({k: migrate(v) if not isinstance(v, dict) else v for k, v in value.items()})
    out = {}
    for key, item in value.items():
        if key == "rule":
            new = "objective" if isinstance(item, str) else key
        elif key == "hidden":
            new = "hidden_scheme" if item is None or isinstance(item, str) else key  # never a layer width
        else:
            new = FIELDS.get(key, key)
        out[new] = migrate(item)
    return out


def _migrate_json(path: Path) -> bool:
    before = json.loads(path.read_text())
    after = migrate(before)
    if after == before:
        return False
    if path.name == POLICY_JSON and "record_sha256" in before:
        after = seal_record(after, (path.parent / POLICY_WEIGHTS).read_bytes())
    write_json_atomic(path, after)
    if path.name == POLICY_JSON:
        read_policy(path.parent)  # the resealed record loads
    return True


def _migrate_csv(path: Path) -> bool:
    text = path.read_text()
    header, newline, rest = text.partition("\n")
    renamed = ",".join(FIELDS.get(field, field) for field in header.split(","))
    if renamed == header:
        return False
    path.write_text(renamed + newline + rest)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", type=Path, nargs="*", default=[Path("results"), Path("benchmarks/results")],
                        help="directories searched for .json and .csv files (default: results benchmarks/results)")
    args = parser.parse_args()
    changed = {"json": 0, "csv": 0, "policy.json": 0}
    seen = 0
    for root in args.roots:
        for path in sorted(root.rglob("*")):
            if path.suffix == ".json":
                seen += 1
                if _migrate_json(path):
                    changed["policy.json" if path.name == POLICY_JSON else "json"] += 1
                    print(f"migrated {path}")
            elif path.suffix == ".csv":
                seen += 1
                if _migrate_csv(path):
                    changed["csv"] += 1
                    print(f"migrated {path}")
    print(f"{seen} files read; changed: {changed['policy.json']} policy.json (resealed), {changed['json']} other JSON, "
          f"{changed['csv']} CSV")


if __name__ == "__main__":
    main()
