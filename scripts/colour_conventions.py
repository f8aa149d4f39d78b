"""Where does self-play break the colour symmetry on a CPU? A bounded search, and induced conventions.

Each *setting* is a training config (``eqc hanabi train``) run for a few seeds; each of its agents is
then measured on the same decks:

- the **relabelled-partner loss**: greedy self-play minus self-play with a copy of itself in a
  colour-relabelled game (every non-identity permutation of the game's colours, up to 12), in points
  and as a share of self-play (:func:`eqc.domains.hanabi.xp.relabelled_self_play`);
- **inter-seed cross-play** (XP): the mean over ordered pairs of seeds, with its jackknife SE over seeds;
- the **colour-hint share** among hints, and the **hint-colour -> slot dependence**: after a colour
  hint, the distribution of the slot the partner plays next, per hinted colour; the mean total
  variation distance between those distributions over pairs of colours (0: the hinted colour says
  nothing about which slot to play, as for any colour-equivariant policy; 1: each colour names its
  own slot);
- for induced conventions (``[bootstrap] convention = "colour_to_slot"``), the share of plays after
  a colour hint ``c`` that play the taught slot ``pi(c)``.

A setting **breaks the colour symmetry** when most of its agents lose at least 2 points with a
relabelled partner, or at least 15% of self-play in a game whose maximum score is below 25.

    python scripts/colour_conventions.py train --settings mini small --seeds 0 1 2 --moves 5000000
    python scripts/colour_conventions.py measure --out results/cpu/colour_conventions

``train`` runs ``eqc hanabi train`` (one thread; vdn_cpu's bf16) for every setting and seed in turn, into
``ROOT/<setting>/seed_<n>/`` (re-running resumes); start two ``train`` processes with different
settings to use two cores. ``measure`` writes ``OUT.json`` and ``OUT.md`` from every setting found
under ``ROOT``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.policy import load_policy
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.reproduce.specs import INDUCED_BOOTSTRAP, INDUCED_POOLS, INDUCED_SLOTS, SCALES, describe_pool
from eqc.domains.hanabi.training.bootstrap import colour_slot_maps
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.xp import (
    breaks_colour_symmetry,
    cross_play_games,
    hint_slot_counts,
    pool_runs,
    relabelled_self_play,
    slot_dependence,
)
from eqc.evaluation import pool_summary


@dataclass(frozen=True)
class Setting:
    """A training config (shipped name) with ``--set`` overrides, and what it tries."""

    what: str
    overrides: tuple[str, ...] = ()
    config: str = "vdn_cpu"


INDUCE = ("bootstrap.convention=colour_to_slot", "bootstrap.bonus=1.0")
SETTINGS = {
    "full": Setting("the standard game, vdn_cpu (little exploration: eps 0.02 -> 0.005)"),
    "full_ladder": Setting("the standard game, hanabi_SAD's per-game exploration ladder 0.1 ** (1 + 7k/79)",
                           ("pqn.exploration=ladder", "pqn.eps_start=0.1", "pqn.eps_end=1e-8")),
    "full_2_tokens": Setting("the standard game with 2 information tokens", ("game.max_info_tokens=2",)),
    "colours5_ranks2": Setting("5 colours x 2 ranks (rank hints carry little)", ("game.num_ranks=2",)),
    "colours5_ranks3": Setting("5 colours x 3 ranks", ("game.num_ranks=3",)),
    "mini": Setting("Mini-Hanabi (3 colours x 3 ranks, hand 3, 5 tokens, 3 lives)", ("game.preset=mini",)),
    "mini_ladder": Setting("Mini-Hanabi, exploration ladder", ("game.preset=mini", "pqn.exploration=ladder", "pqn.eps_start=0.1",
                                                              "pqn.eps_end=1e-8")),
    "mini_2_tokens": Setting("Mini-Hanabi with 2 information tokens", ("game.preset=mini", "game.max_info_tokens=2")),
    "mini_sad_lstm": Setting("Mini-Hanabi, recurrent learner (LSTM 128) with SAD's greedy-action observation",
                             ("game.preset=mini", "game.sad=greedy_last_action", "network.lstm_layers=1", "network.hidden_size=128",
                              "network.mlp_layers=1")),
    "small": Setting("Hanabi-Small (2 colours x 5 ranks, hand 2, 3 tokens, 1 life)", ("game.preset=small",)),
    "small_ladder": Setting("Hanabi-Small, exploration ladder", ("game.preset=small", "pqn.exploration=ladder", "pqn.eps_start=0.1",
                                                                "pqn.eps_end=1e-8")),
    "mini_induced": Setting("Mini-Hanabi, induced: colour c -> play slot pi(c) paid +1 for the first 2.5M moves, then the game alone",
                            ("game.preset=mini", *INDUCE, "bootstrap.moves=2500000")),
    "full_induced": Setting("the standard game, induced: colour c -> play slot pi(c) paid +1 for the first 2.5M moves, then the game alone",
                            (*INDUCE, "bootstrap.moves=2500000")),
}

#: The pools of ``eqc hanabi reproduce --scale induced`` (``reproduce.specs.INDUCED_POOLS``), by setting name.
INDUCED_SETTINGS = {"mini_induced_strong": "sp", "mini_induced_strong_op": "op", "mini_induced_strong_gop_c2": "gop_c2",
                    "mini_induced_strong_gop_c3": "gop_c3", "mini_induced_strong_sym_s3": "sym_s3"}


def _induced_overrides(pool: str) -> tuple[str, ...]:
    keys = {"game.preset": "mini", **{f"bootstrap.{k}": v for k, v in INDUCED_BOOTSTRAP.items()},
            **{f"{section}.{k}": v for section, values in INDUCED_POOLS[pool].items() for k, v in values.items()}}
    return tuple(f"{k}={v}" for k, v in keys.items())


SETTINGS.update({name: Setting(f"pool {pool!r} of reproduce --scale induced: {describe_pool(pool, SCALES['induced'])}",
                               _induced_overrides(pool)) for name, pool in INDUCED_SETTINGS.items()})


def train_command(name: str, seed: int, root: Path, moves: int) -> list[str]:
    setting = SETTINGS[name]
    overrides = (f"run.total_moves={moves}", *setting.overrides)
    if any(o.startswith("bootstrap.convention=") for o in overrides):  # pi: the seed's shipped one, else the seed-th map
        colours = 3 if "game.preset=mini" in overrides else 5
        maps = colour_slot_maps(colours, colours)
        slots = INDUCED_SLOTS[seed] if colours == 3 and seed in INDUCED_SLOTS else maps[seed % len(maps)]
        overrides = (*overrides, f"bootstrap.slots={list(slots)}")
    sets = [arg for o in overrides for arg in ("--set", o)]
    return ["eqc", "hanabi", "train", "--config", setting.config, *sets, "--seed", str(seed), "--out", str(root / name / f"seed_{seed}"),
            "--threads", "1", "--no-progress"]


def measure_agent(path: Path, games: int) -> tuple[dict, object]:
    policy = load_policy(path)
    rules = policy.rules
    relabelled = relabelled_self_play(policy, elements=12, games=games)
    played = greedy_games(policy.agent, rules, policy.device, games=games, deck_seed=1)
    counts, hints = hint_slot_counts(played.moves, rules)
    row = {"path": str(path), "moves": policy.trained_moves, **relabelled.as_dict(), "max_score": rules.max_score,
           "loss_share": relabelled.loss / relabelled.self_play if relabelled.self_play > 0 else float("nan"),
           "hint_slot_counts": counts.tolist(), "colour_hints_answered": hints,
           "slot_dependence": slot_dependence(counts)}
    training = TrainConfig.from_dict(policy.trained_with, f"{path} training record") if policy.trained_with else None
    if training is not None and training.bootstrap.convention != "none":
        pi = torch.tensor(training.bootstrap.slots)
        taught = counts[torch.arange(rules.num_colours), pi].sum()
        row["taught_slot_share"] = float(taught / counts.sum()) if counts.sum() else float("nan")
    return row, policy


def measure(root: Path, games: int) -> list[dict]:
    settings = []
    for name in SETTINGS:
        if not (root / name).is_dir():
            continue
        runs = pool_runs(root / name)
        rows, policies = zip(*(measure_agent(run, games) for run in runs), strict=True)
        record = {"setting": name, "what": SETTINGS[name].what, "agents": list(rows),
                  "commands": [shlex.join(train_command(name, int(r.name.split("_")[1]), root, moves)[:-3])
                               for r, moves in zip(runs, (row["moves"] for row in rows), strict=True)]}
        if len(policies) >= 2:
            summary = cross_play_games(list(policies), games, deck_seed=1).summary()
            pool = pool_summary(summary.mean)
            record.update(xp=pool.mean, xp_sem=pool.sem, pairs=pool.ordered_pairs, xp_matrix=summary.mean.tolist())
        record["breaking_agents"] = sum(breaks_colour_symmetry(r["loss"], r["self_play"], r["max_score"]) for r in rows)
        record["breaks"] = record["breaking_agents"] > len(rows) / 2
        settings.append(record)
        print(f"{name}: {record['breaking_agents']} of {len(rows)} agents break it; XP {record.get('xp', float('nan')):.2f}", flush=True)
    return settings


def render(settings: list[dict], command: str, games: int) -> str:
    lines = ["# Colour conventions on a CPU: where self-play breaks the colour symmetry", "",
             f"Produced by `{command}` from the runs each row's command trains (one thread, bf16). Per agent: greedy "
             f"self-play (SP) and the relabelled-partner loss (SP minus SP with a copy of itself in a colour-relabelled "
             f"game, mean over up to 12 non-identity colour permutations x {games} decks), as points and share of SP; "
             "the colour-hint share among hints; the hint-colour -> slot dependence (mean total variation between the "
             "distributions of the slot played right after each colour's hint: 0 when the colour says nothing about the "
             "slot, over colours answered by at least 30 plays; mean over agents, '-' where no agent has two such colours). "
             "XP: inter-seed cross-play, mean over ordered pairs of seeds ± its jackknife SE over seeds (n/a below 3 seeds; "
             "ordered pairs in brackets). Breaks: a loss of at least 2 points, "
             "or 15% of SP where the maximum score is below 25, for most agents. Rows marked *induced* were paid a shaping "
             "reward for a colour convention drawn per seed; they are induced, not spontaneous.", "",
             "| setting | agents (moves) | SP | relabelled-partner loss | loss / SP | XP (pairs) | colour hints | slot dependence "
             "| breaks |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for s in settings:
        a = s["agents"]

        def mean(key: str, a: list[dict] = a) -> float:
            values = [r[key] for r in a if not math.isnan(r[key])]
            return sum(values) / len(values) if values else float("nan")
        moves = "/".join(f"{r['moves'] / 1e6:.0f}M" for r in a)
        xp = f"{s['xp']:.2f} ± {_number(s['xp_sem'])} ({s['pairs']})" if "xp" in s else "-"
        label = f"{s['setting']}{' (*induced*)' if 'induced' in s['setting'] else ''}"
        losses = ", ".join(f"{r['loss']:+.2f}" for r in a)
        lines.append(f"| {label} | {len(a)} ({moves}) | {mean('self_play'):.2f} | {losses} | {mean('loss_share'):.0%} | {xp} | "
                     f"{mean('colour_hint_share'):.0%} | {_number(mean('slot_dependence'))} | "
                     f"{'yes' if s['breaks'] else 'no'} ({s['breaking_agents']}/{len(a)}) |")
    lines += ["", "Settings and the command that trains each seed (replace SEED):", ""]
    for s in settings:
        taught = [r["taught_slot_share"] for r in s["agents"] if "taught_slot_share" in r]
        extra = f" Plays after a colour hint that play the taught slot: {', '.join(f'{t:.0%}' for t in taught)}." if taught else ""
        command = s["commands"][0].replace("seed_0", "seed_SEED").replace("--seed 0", "--seed SEED")
        lines.append(f"- **{s['setting']}**: {s['what']}.{extra} `{command}`")
    return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    train = sub.add_parser("train")
    train.add_argument("--settings", nargs="+", choices=sorted(SETTINGS), required=True)
    train.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    train.add_argument("--moves", type=int, required=True, help="moves per run ([run] total_moves)")
    train.add_argument("--root", type=Path, default=Path("runs/colour_conventions"))
    meas = sub.add_parser("measure")
    meas.add_argument("--root", type=Path, default=Path("runs/colour_conventions"))
    meas.add_argument("--out", type=Path, required=True, help="OUT.json and OUT.md are written")
    meas.add_argument("--games", type=int, default=500)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.action == "train":
        for name, seed in itertools.product(args.settings, args.seeds):
            command = train_command(name, seed, args.root, args.moves)
            print(shlex.join(command), flush=True)
            subprocess.run([sys.executable, "-m", "eqc.cli", *command[1:]], check=True)
        return
    settings = measure(args.root, args.games)
    command = f"python scripts/colour_conventions.py measure --root {args.root} --out {args.out} --games {args.games}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps({"command": command, "games": args.games, "settings": settings}, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(render(settings, command, args.games))


if __name__ == "__main__":
    main()
