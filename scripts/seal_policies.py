"""One-off migration: seal the policy directories this project wrote before policy files were sealed.

Adds ``weights_sha256`` and ``record_sha256`` (see ``eqc.domains.hanabi.agent.files``) to each
``policy.json`` under the given roots that lacks them, after checking its weights against its
description (finite, the recorded game's sizes); the weights files are not touched.

    python scripts/seal_policies.py results/cpu/agents
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from safetensors.torch import load

from eqc.domains.hanabi.agent.files import POLICY_JSON, POLICY_WEIGHTS, network_from_weights, read_policy, seal_record
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.io import write_json_atomic


def seal(folder: Path) -> bool:
    """Seal ``folder``'s ``policy.json`` unless it is sealed already; whether it was written."""
    record = json.loads((folder / POLICY_JSON).read_text())
    if "record_sha256" in record:
        return False
    blob = (folder / POLICY_WEIGHTS).read_bytes()
    config = TrainConfig.from_dict(record["config"], str(folder / POLICY_JSON))
    network_from_weights(load(blob), config, str(folder / POLICY_WEIGHTS))
    write_json_atomic(folder / POLICY_JSON, seal_record(record, blob))
    read_policy(folder)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("roots", type=Path, nargs="+", help="directories searched for policy.json")
    args = parser.parse_args()
    for root in args.roots:
        for path in sorted(root.rglob(POLICY_JSON)):
            print(f"{path.parent}: {'sealed' if seal(path.parent) else 'already sealed'}")


if __name__ == "__main__":
    main()
