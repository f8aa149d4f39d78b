"""Seal the saved results of ``reproduce`` written before results were sealed (a one-time migration).

``reproduce --reuse`` refuses a saved result without a seal (:mod:`eqc.domains.hanabi.reproduce.reuse`). This adds the
seal (``sha256`` of the key and result, :func:`~eqc.domains.hanabi.reproduce.reuse.seal`) as the first field of every
unsealed result under ``<out>/xp/`` and ``<out>/relabelled/`` and changes nothing else in the file: a file that would
not be written back byte for byte (not as ``reproduce`` writes it) is left as it is and named. A sealed file is checked
and left as it is. Run once on the committed results::

    python scripts/seal_reuse_caches.py results/*/
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eqc.domains.hanabi.reproduce.reuse import seal


def saved_results(out: Path) -> list[Path]:
    """The files under ``out/xp`` and ``out/relabelled`` that hold a saved result (``key`` and ``result``; not ``xp.json``)."""
    files = sorted(p for folder in ("xp", "relabelled") for p in (out / folder).rglob("*.json"))
    return [p for p in files if isinstance(saved := json.loads(p.read_text()), dict) and {"key", "result"} <= saved.keys()]


def seal_file(path: Path) -> str:
    """Seal the saved result at ``path``: "sealed", "already sealed", or raise ``ValueError`` saying why it cannot be."""
    text = path.read_text()
    saved = json.loads(text)
    if "sha256" in saved:
        if saved["sha256"] != seal(saved["key"], saved["result"]):
            raise ValueError(f"{path}: its seal does not match its key and result (edited after it was sealed)")
        return "already sealed"
    if set(saved) != {"key", "result"} or json.dumps(saved, indent=2, allow_nan=False) + "\n" != text:
        raise ValueError(f"{path}: not a result as reproduce writes it (fields {sorted(saved)}, or another layout); left unsealed")
    sealed = {"sha256": seal(saved["key"], saved["result"]), **saved}
    path.write_text(json.dumps(sealed, indent=2, allow_nan=False) + "\n")
    return "sealed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outs", type=Path, nargs="+", help="reproduce output directories (e.g. results/touched)")
    args = parser.parse_args()
    counts = {"sealed": 0, "already sealed": 0}
    failed = []
    for out in args.outs:
        for path in saved_results(out):
            try:
                counts[seal_file(path)] += 1
            except ValueError as exc:
                failed.append(str(exc))
    print(f"{counts['sealed']} results sealed, {counts['already sealed']} already sealed", *failed, sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
