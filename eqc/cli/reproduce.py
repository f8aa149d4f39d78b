"""``eqc hanabi pool`` and ``eqc hanabi reproduce``: seed pools (locally or on Ray) and the paper's tables.

- ``eqc hanabi pool --config FILE --seeds 0-9 --out DIR [--ray ADDRESS] [--max-minutes M]``: one
  run per seed in ``DIR/seed_<n>/`` (see ``eqc.domains.hanabi.training.pool``).
- ``eqc hanabi reproduce {table1,table2,table3} --scale smoke|cpu|induced|colour|touched|ers|entropy|paper --out DIR [--retrain]``: read
  the shipped agents (cpu, induced, colour, touched, entropy) or train the table's pools, cross-play them, write ``DIR/<table>.md`` and
  ``.json`` (see ``eqc.domains.hanabi.reproduce``); ``conventions``, ``entropy`` and ``codes``: the reports of
  ``eqc.domains.hanabi.reproduce.conventions``, ``.entropy`` and ``.codes``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from eqc.cli import common as flags
from eqc.cli.config_flags import add_set_flag, config_source, load_config_flags

__all__ = ["add_reproduce_parsers"]


def _ray_flags(args: argparse.Namespace) -> tuple[str | None, bool | None]:
    """(address, use_ray) from ``--ray``/``--no-ray``, checked before any work: Ray installed, the address
    reachable (a wrong one would otherwise be retried for minutes), ``auto`` only with a running cluster."""
    if args.no_ray and args.ray is not None:
        raise flags.FlagError("--no-ray", f"contradicts --ray {args.ray}: give one of them")
    if args.no_ray:
        return None, False
    if args.ray is not None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise flags.FlagError("--ray", "Ray is not installed: pip install 'eqc[ray]'") from None
        _check_ray_address(args.ray)
    return args.ray, None


def _check_ray_address(address: str) -> None:
    from eqc.domains.hanabi.training.pool import check_ray_address

    try:
        check_ray_address(address)
    except ValueError as exc:
        raise flags.FlagError("--ray", str(exc)) from None


def _pool(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.training.pool import train_pool

    config = load_config_flags(args)
    if args.threads is not None:  # the flag wins in every worker, not only in this process
        config = config.replace(run={"threads": args.threads})
    address, use_ray = _ray_flags(args)
    _check_pool_device(args, address, use_ray)
    if address is None:  # the seeds compile on this machine (with --ray ADDRESS, on the workers)
        flags.check_compile(config.run.compile, args.device)
    flags.prepare_output_dir(args.out)
    record = train_pool(
        {seed: config for seed in args.seeds}, args.out,
        device=args.device, max_minutes=args.max_minutes, ray_address=address, use_ray=use_ray,
        gpus_per_seed=1.0 if args.gpus_per_seed is None else args.gpus_per_seed,
    )
    for seed, status in record["status"].items():
        score = f", greedy score {status['eval_score']:.2f}" if "eval_score" in status else ""
        print(f"seed {seed}: {status['state']}{score}")
    print(f"pool status in {args.out / 'pool.json'}")
    return 0


def _check_pool_device(args: argparse.Namespace, address: str | None, use_ray: bool | None) -> None:
    """``--device`` is checked here when the seeds train on this machine; with ``--ray ADDRESS`` the workers check
    it (this machine may have no GPU). ``--gpus-per-seed`` needs a CUDA device and Ray."""
    if address is None:
        try:
            flags.device(args.device)
        except argparse.ArgumentTypeError as exc:
            raise flags.FlagError("--device", f"{exc} (the seeds train on this machine; with --ray ADDRESS the workers check it)") from None
    if args.gpus_per_seed is not None and (use_ray is False or not args.device.startswith("cuda")):
        raise flags.FlagError("--gpus-per-seed", "shares GPUs between Ray tasks: it needs --device cuda and Ray (not --no-ray)")


def _conventions(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce conventions --scale induced|colour|touched``: what explains cross-play (hint maps, best-aligned
    cross-play, the symmetrization ceiling, shared-factor cross-play)."""
    from eqc.domains.hanabi.reproduce.conventions import ALIGNED_POOLS, reproduce_conventions

    if args.scale not in ALIGNED_POOLS:
        raise flags.FlagError("--scale", f"conventions are reported at the scales with induced conventions {sorted(ALIGNED_POOLS)}, "
                              f"not {args.scale!r}")
    _check_report_flags(args, "conventions")
    flags.prepare_output_dir(args.out)
    reproduce_conventions(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision,
                          command=args.command_line)
    print((args.out / "conventions.md").read_text())
    return 0


def _check_report_flags(args: argparse.Namespace, report: str) -> None:
    """A report reads shipped agents (or ``--agents``): the flags that train or reuse tables do not apply to it."""
    for flag, given in (("--retrain", args.retrain), ("--obl", args.obl), ("--set", args.overrides), ("--reuse", args.reuse)):
        if given:
            raise flags.FlagError(flag, f"does not apply to {report} (it reads the shipped agents or --agents)")
    if args.agents is not None and not args.agents.is_dir():
        raise flags.FlagError("--agents", f"{str(args.agents)!r} is not a directory of pools")


def _entropy(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce entropy --scale entropy|colour``: IPPO pools played greedily and as sampled, and how
    equivariant each agent is (:mod:`eqc.domains.hanabi.reproduce.entropy`)."""
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.reproduce.entropy import check_entropy_pools, ippo_pools, reproduce_entropy
    from eqc.domains.hanabi.xp import PoolError

    if args.scale not in ("entropy", "colour"):
        raise flags.FlagError("--scale", f"the entropy report reads the IPPO pools of --scale entropy or colour, not {args.scale!r}")
    _check_report_flags(args, "the entropy report")
    try:  # before --out is created: every agent loads and is an IPPO agent
        check_entropy_pools(ippo_pools(args.scale, args.agents), args.device)
    except (PoolError, CheckpointError, ValueError) as exc:
        raise flags.FlagError("--agents", str(exc)) from None
    flags.prepare_output_dir(args.out)
    reproduce_entropy(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision, command=args.command_line)
    print((args.out / "entropy.md").read_text())
    return 0


def _codes(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce codes --scale touched|ers``: the code lottery of a rendered registered table
    (:mod:`eqc.domains.hanabi.reproduce.codes`)."""
    from eqc.domains.hanabi.reproduce.codes import reproduce_codes
    from eqc.domains.hanabi.reproduce.specs import SCALES

    registered = sorted(name for name, scale in SCALES.items() if "table1" in scale.tables and scale.tables["table1"].registered)
    if args.scale not in registered:
        raise flags.FlagError("--scale", f"the code report reads a registered table1 ({registered}), not {args.scale!r}")
    _check_report_flags(args, "the code report")
    if not (args.out / "table1.json").is_file():
        raise flags.FlagError("--out", f"{str(args.out / 'table1.json')!r} does not exist: render the table into it first "
                              f"(eqc hanabi reproduce table1 --scale {args.scale} --out {args.out})")
    reproduce_codes(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision, command=args.command_line)
    print((args.out / "codes.md").read_text())
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.reproduce import SCALES, reproduce
    from eqc.domains.hanabi.reproduce.specs import table_spec

    if args.table == "conventions":
        return _conventions(args)
    if args.table == "entropy":
        return _entropy(args)
    if args.table == "codes":
        return _codes(args)

    try:
        spec = table_spec(args.table, args.scale)
    except ValueError as exc:
        raise flags.FlagError("table", str(exc)) from None
    address, use_ray = _ray_flags(args)
    scale = SCALES[args.scale]
    shipping = sorted(name for name, sc in SCALES.items() if sc.shipped)
    if args.agents is not None and (args.retrain or scale.shipped is None):
        raise flags.FlagError("--agents", f"reads shipped agents at --scale {' or '.join(shipping)}; it cannot be combined with "
                              "--retrain or another scale")
    if args.agents is not None and not args.agents.is_dir():
        raise flags.FlagError("--agents", f"{str(args.agents)!r} is not a directory of pools (<pool>/seed_<n>/ or <pool>/slots_<pi>/)")
    if args.retrain and scale.trained_by:
        raise flags.FlagError("--retrain", f"the {args.scale} scale's agents differ in their colour-to-slot map, not their seed: "
                              f"train them with `python {scale.trained_by}` (one worker per core) and pass --agents")
    trained = args.retrain or scale.shipped is None
    if args.overrides and not trained:
        raise flags.FlagError("--set", f"changes the configs of trained pools: at --scale {args.scale} it needs --retrain "
                              "(shipped agents are fixed)")
    if args.overrides:
        from eqc.domains.hanabi.config.schema import ConfigError
        from eqc.domains.hanabi.reproduce.specs import pool_config
        from eqc.domains.hanabi.training.config import with_overrides

        try:
            overridden = with_overrides(pool_config(spec.cells[0].pool, scale, scale.seeds[0]), args.overrides)
        except ConfigError as exc:
            raise flags.FlagError("--set", str(exc)) from None
        if address is None:  # the pools compile on this machine (with --ray ADDRESS, on the workers)
            flags.check_compile(overridden.run.compile, args.device)
    if args.obl and args.table != "table2":
        raise flags.FlagError("--obl", f"OBL agents are a column of table2 only, not of {args.table}")
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.agent.policy import load_policy

    for path in args.obl or []:  # before any training: a bad file is found now, not after hours
        try:
            load_policy(path, device=args.device)
        except CheckpointError as exc:
            raise flags.FlagError("--obl", str(exc)) from None
    from eqc.domains.hanabi.reproduce.reuse import ResultFileError, ReuseError
    from eqc.domains.hanabi.reproduce.run import shipped_pools
    from eqc.domains.hanabi.xp import PoolError

    if not trained:  # before --out is created: agents that make no cell of the table, are not its registered design, or do not load
        try:
            pools = shipped_pools(args.table, args.scale, args.agents, obl=bool(args.obl))
            for run in (run for runs in pools.values() for run in runs):
                load_policy(run, device=args.device, precision="fp32")  # fp32: checks the files and warns of nothing
        except (PoolError, CheckpointError) as exc:
            raise flags.FlagError("--agents", str(exc)) from None
    flags.prepare_output_dir(args.out)
    try:
        reproduce(args.table, args.scale, args.out, agents=args.agents, retrain=args.retrain, device=args.device, precision=args.precision,
                  ray_address=address, use_ray=use_ray, obl=args.obl, reuse=args.reuse, command=args.command_line,
                  overrides=[*args.overrides, *([f"run.threads={args.threads}"] if args.threads is not None and trained else [])])
    except CheckpointError as exc:
        raise flags.FlagError("--agents", str(exc)) from None
    except ResultFileError as exc:
        raise flags.FlagError("--out", str(exc)) from None
    except ReuseError as exc:
        raise flags.FlagError("--reuse", str(exc)) from None
    print((args.out / f"{args.table}.md").read_text())
    return 0


def _add_ray_flags(parser: argparse.ArgumentParser, device: Callable[[str], str] = flags.device) -> None:
    """``--ray``, ``--no-ray`` and ``--device`` (parsed by ``device``: :func:`flags.device_name` where workers check it)."""
    parser.add_argument("--ray", metavar="ADDRESS", default=None,
                        help="join a Ray cluster ('auto' or host:port); default: a local Ray instance when Ray is installed")
    parser.add_argument("--no-ray", action="store_true", help="train the seeds one after another in this process")
    where = " (checked on the Ray workers with --ray ADDRESS: each trains on its own GPU)" if device is flags.device_name else ""
    parser.add_argument("--device", type=device, default="cpu", help=f"torch device of every run (default cpu){where}")


def add_reproduce_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``pool`` and ``reproduce`` under ``eqc hanabi``."""
    pool = sub.add_parser("pool", help="train one agent per seed (resumable; Ray spreads seeds over machines)")
    pool.add_argument("--config", type=config_source, required=True, help="TOML config file or shipped config name")
    add_set_flag(pool)
    pool.add_argument("--seeds", type=flags.seed_list(), required=True, help="seeds: '0-9', '3' or '0,2,5-7'")
    pool.add_argument("--out", type=flags.output_dir, required=True,
                      help="pool directory (seed_<n>/ runs; reachable by every Ray worker)")
    pool.add_argument("--max-minutes", type=flags.float_in(0, low_open=True), default=None,
                      help="bound each seed's run to this many minutes (re-run to resume)")
    _add_ray_flags(pool, device=flags.device_name)
    pool.add_argument("--gpus-per-seed", type=flags.float_in(0, 1, low_open=True), default=None, metavar="SHARE",
                      help="share of a GPU each seed's Ray task asks for with --device cuda, in (0, 1] (default 1; 0.25: four "
                      "seeds per GPU)")
    flags.add_threads_flag(pool, trains=True)
    pool.set_defaults(run=_pool)

    reproduce = sub.add_parser("reproduce", help="train or reuse pools, cross-play them and write one of the paper's tables")
    reproduce.add_argument("table", choices=("table1", "table2", "table3", "conventions", "entropy", "codes"),
                           help="a table; 'conventions': what explains cross-play at --scale induced, colour or touched "
                           "(run after table1 and table2 into the same --out to get each cell's share of the alignable gap); "
                           "'entropy': the IPPO pools of --scale entropy or colour played greedily and as sampled, and how "
                           "equivariant each is; 'codes': the code lottery of a registered table1 (--scale touched or ers; "
                           "render table1 into the same --out first)")
    reproduce.add_argument("--scale", choices=("smoke", "cpu", "induced", "colour", "touched", "ers", "entropy", "paper"), required=True,
                           help="smoke: seconds (tests); cpu: the shipped agents (5 per pool), minutes; induced: the shipped "
                           "Mini-Hanabi agents with INDUCED colour conventions (8 per pool; table1, table2), minutes; colour: the "
                           "shipped colour testbed (one stream seed, the six induced conventions per pool; table1, table2, conventions, "
                           "entropy), "
                           "minutes; touched: the pre-registered claim-1 experiment on the card-grounded testbed (12 agents per "
                           "pool matched by stream and pi; table1); ers: the pre-registered experiment on learned expected-return "
                           "symmetries (24 agents per registered pool; table1); entropy: the shipped Mini-Hanabi IPPO pools of "
                           "three entropy coefficients (6 seeds each; "
                           "table1, entropy), minutes; paper: 10 seeds, 5000 games, a GPU or cluster")
    reproduce.add_argument("--out", type=flags.output_dir, required=True,
                           help="directory for pools/, xp/ and the tables (pools are reused)")
    reproduce.add_argument("--obl", type=Path, nargs="+", default=None, help="public OBL agent files (model0.pthw) to add to table2")
    reproduce.add_argument("--agents", type=Path, default=None,
                           help="pools to read at --scale cpu, induced, colour, touched or entropy (default: the repository's "
                           "results/<scale>/agents)")
    reproduce.add_argument("--retrain", action="store_true",
                           help="at --scale cpu, induced or entropy, train the pools from scratch under OUT/pools instead of "
                           "reading the shipped agents")
    flags.add_precision_flag(reproduce)
    reproduce.add_argument("--reuse", action="store_true",
                           help="take cells and relabelled self-play already in OUT for the same agent files, games and decks "
                           "(hashed) instead of playing them again; only results of this eqc version. A saved result that was "
                           "edited (its seal no longer matches) or holds impossible numbers is refused")
    add_set_flag(reproduce)
    _add_ray_flags(reproduce)
    flags.add_threads_flag(reproduce, trains=True)
    reproduce.set_defaults(run=_reproduce)
