"""``eqc hanabi``: train Hanabi agents, evaluate them, print the config keys.

- ``eqc hanabi train --config FILE --seed N --device DEV --out DIR [--max-minutes M]``: train, or
  resume the run already in ``DIR`` (see ``eqc.domains.hanabi.training.run``).
- ``eqc hanabi eval --checkpoint PATH [--symmetrize GROUP] [--hidden average|identity] --games N [--hle]``:
  greedy self-play score ± SEM, bomb-out and perfect-score rates on HanabiBatch, or in HLE itself.
- ``eqc hanabi config``: every config key with its default and meaning.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eqc import _cli_common as flags

__all__ = ["add_hanabi_parser"]

_GROUPS = ("C5", "D10", "S5", "A5")


def _config_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"config file {text!r} does not exist (examples: configs/hanabi/*.toml)")
    return path


def _train(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.training.config import ConfigError, load_config
    from eqc.domains.hanabi.training.run import train

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise flags.FlagError("--config", str(exc)) from None
    if args.threads is not None:
        config = config.replace(run={"threads": args.threads})
    flags.prepare_output_dir(args.out)
    try:
        summary = train(config, args.out, seed=args.seed, device=args.device, max_minutes=args.max_minutes, progress=not args.quiet)
    except ConfigError as exc:  # --out holds another run
        raise flags.FlagError("--out", str(exc)) from None
    print(
        f"{args.out}: {summary['env_steps']:,} env steps, {summary['updates']:,} updates, {summary['wall_s'] / 60:.1f} min; "
        f"greedy score {summary['eval_score']:.2f} ± {summary['eval_sem']:.2f} (bomb-out {summary['eval_bombout']:.1%}); "
        f"stopped at {summary['stopped']}; metrics in {args.out / 'metrics.csv'}"
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.training.checkpoint import CheckpointError
    from eqc.domains.hanabi.training.policy import load_policy

    try:
        policy = load_policy(args.checkpoint, device=args.device, symmetrize=args.symmetrize, hidden=args.hidden)
    except CheckpointError as exc:
        raise flags.FlagError("--checkpoint", str(exc)) from None
    if args.hle:
        from eqc.domains.hanabi.training.hle_eval import evaluate_in_hle

        result = evaluate_in_hle(policy, args.games, args.seed)
        where = "HLE"
    else:
        from eqc.domains.hanabi.training.greedy_eval import evaluate_agent

        result = evaluate_agent(policy.agent, policy.config, args.games, args.seed, policy.device)
        where = "HanabiBatch"
    symmetrized = f", symmetrized over {args.symmetrize}" if args.symmetrize else ""
    name = f"{args.checkpoint} ({policy.env_steps:,} training steps{symmetrized})"
    print(f"{name}, greedy self-play on {where}: {result}")
    if args.json:
        print(json.dumps({"checkpoint": str(args.checkpoint), "where": where, "symmetrize": args.symmetrize, **result.as_dict()}))
    return 0


def _config(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.training.config import describe_config

    print(describe_config())
    return 0


def add_hanabi_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``eqc hanabi {train,eval,config}``."""
    hanabi = subparsers.add_parser("hanabi", help="train and evaluate Hanabi agents", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = hanabi.add_subparsers(dest="hanabi_command", required=True)

    train = sub.add_parser("train", help="train an agent (re-run the same command to resume)")
    train.add_argument("--config", type=_config_file, required=True, help="TOML config (configs/hanabi/*.toml)")
    train.add_argument("--seed", type=flags.seed, default=0, help="seed of games, exploration and initialisation (default 0)")
    train.add_argument("--device", type=flags.device, default="cpu", help="torch device: cpu, cuda, cuda:1 (default cpu)")
    train.add_argument("--out", type=flags.output_dir, required=True, help="run directory (created; an existing run resumes)")
    train.add_argument("--max-minutes", type=flags.float_in(0, low_open=True), default=None,
                       help="stop after this many minutes of this invocation (resume later)")
    train.add_argument("--threads", type=flags.positive_int, default=None,
                       help="torch CPU threads (default: the config's [run] threads, 1 in the shipped configs)")
    train.add_argument("--quiet", action="store_true", help="no progress bar; one line per evaluation")
    train.set_defaults(run=_train)

    evaluate = sub.add_parser("eval", help="greedy self-play of a trained agent")
    evaluate.add_argument("--checkpoint", type=Path, required=True, help="run directory or checkpoint file")
    evaluate.add_argument("--symmetrize", choices=_GROUPS, default=None, help="symmetrize the agent at test time over this colour group")
    evaluate.add_argument("--hidden", choices=("average", "identity"), default="average", help="recurrent symmetrizer's hidden scheme")
    evaluate.add_argument("--games", type=flags.positive_int, default=1000, help="games (default 1000)")
    evaluate.add_argument("--seed", type=flags.seed, default=1, help="seed of the evaluation decks (default 1)")
    evaluate.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    evaluate.add_argument("--hle", action="store_true", help="play in the Hanabi Learning Environment itself")
    evaluate.add_argument("--json", action="store_true", help="also print the result as one JSON line")
    flags.add_threads_flag(evaluate)
    evaluate.set_defaults(run=_eval)

    config = sub.add_parser("config", help="print every config key with its default and meaning")
    config.set_defaults(run=_config)
