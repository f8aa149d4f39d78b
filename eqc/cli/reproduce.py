"""``eqc hanabi pool`` and ``eqc hanabi reproduce``: seed pools (locally or on Ray) and the paper's tables.

- ``eqc hanabi pool --config FILE --seeds 0-9 --out DIR [--ray ADDRESS] [--max-minutes M]``: one
  run per seed in ``DIR/seed_<n>/`` (see ``eqc.domains.hanabi.training.pool``).
- ``eqc hanabi reproduce TABLE --scale SCALE --out DIR [--retrain]`` (the tables and scales of
  ``eqc.domains.hanabi.reproduce.specs.SCALES``): read the shipped agents or train the table's pools, cross-play them,
  write ``DIR/<table>.md`` and ``.json`` (see ``eqc.domains.hanabi.reproduce``); ``conventions``, ``entropy`` and
  ``codes``: the reports of ``eqc.domains.hanabi.reproduce.conventions``, ``.entropy`` and ``.codes`` (``conventions
  --reuse``: the report's gap shares again from the tables in ``DIR``, nothing played). The arguments'
  rules are the library's: its :class:`~eqc.domains.hanabi.reproduce.specs.ReproduceError` becomes a usage error.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection
from pathlib import Path

from eqc.cli import common as flags
from eqc.cli.config_flags import add_set_flag, config_source, load_config_flags
from eqc.domains.hanabi.reproduce.specs import SCALES, ReproduceError

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


#: The flag of each argument a :class:`~eqc.domains.hanabi.reproduce.specs.ReproduceError` names.
FLAGS = {"table": "table", "scale": "--scale", "agents": "--agents", "retrain": "--retrain", "obl": "--obl", "overrides": "--set",
         "out": "--out", "reuse": "--reuse"}


def _usage(exc: ReproduceError) -> flags.FlagError:
    """The usage error of the library's :class:`~eqc.domains.hanabi.reproduce.specs.ReproduceError`, naming its flag."""
    return flags.FlagError(FLAGS[exc.argument], str(exc))


def _conventions(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce conventions --scale induced|colour|touched``: what explains cross-play (hint maps, best-aligned
    cross-play, the symmetrization ceiling, shared-factor cross-play); with ``--reuse``, the report in ``--out`` with its
    gap shares computed again from the tables there (nothing played)."""
    from eqc.domains.hanabi.reproduce.conventions import convention_pools, refresh_conventions, reproduce_conventions

    _check_report_flags(args, "conventions", reuse=True)
    try:
        if args.reuse:
            if args.agents is not None:
                raise flags.FlagError("--agents", "does not apply with --reuse (nothing is played)")
            refresh_conventions(args.scale, args.out, command=args.command_line)
        else:
            convention_pools(args.scale, args.agents)
            flags.prepare_output_dir(args.out)
            reproduce_conventions(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision,
                                  command=args.command_line)
    except ReproduceError as exc:
        raise _usage(exc) from None
    print((args.out / "conventions.md").read_text())
    return 0


def _check_report_flags(args: argparse.Namespace, report: str, *, reuse: bool = False) -> None:
    """A report reads shipped agents (or ``--agents``): the flags that train tables do not apply to it, nor ``--reuse``
    unless the report can be refreshed (``reuse``)."""
    for flag, given in (("--retrain", args.retrain), ("--obl", args.obl), ("--set", args.overrides), ("--reuse", args.reuse and not reuse)):
        if given:
            raise flags.FlagError(flag, f"does not apply to {report} (it reads the shipped agents or --agents)")


def _entropy(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce entropy --scale entropy|colour``: IPPO pools played greedily and as sampled, and how
    equivariant each agent is (:mod:`eqc.domains.hanabi.reproduce.entropy`)."""
    from eqc.domains.hanabi.reproduce.entropy import check_entropy_pools, ippo_pools, reproduce_entropy

    _check_report_flags(args, "the entropy report")
    try:  # before --out is created: every agent loads and is an IPPO agent
        check_entropy_pools(ippo_pools(args.scale, args.agents), args.device)
    except ReproduceError as exc:
        raise _usage(exc) from None
    flags.prepare_output_dir(args.out)
    reproduce_entropy(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision, command=args.command_line)
    print((args.out / "entropy.md").read_text())
    return 0


def _codes(args: argparse.Namespace) -> int:
    """``eqc hanabi reproduce codes --scale touched|ers``: the code lottery of a rendered registered table
    (:mod:`eqc.domains.hanabi.reproduce.codes`)."""
    from eqc.domains.hanabi.reproduce.codes import code_sources, reproduce_codes

    _check_report_flags(args, "the code report")
    try:
        code_sources(args.scale, args.out, args.agents)
    except ReproduceError as exc:
        raise _usage(exc) from None
    reproduce_codes(args.scale, args.out, agents=args.agents, device=args.device, precision=args.precision, command=args.command_line)
    print((args.out / "codes.md").read_text())
    return 0


#: The reports ``eqc hanabi reproduce`` writes beside the tables, by name.
REPORTS = {"conventions": _conventions, "entropy": _entropy, "codes": _codes}


def _reproduce(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.reproduce import reproduce
    from eqc.domains.hanabi.reproduce.reuse import ResultFileError, ReuseError
    from eqc.domains.hanabi.reproduce.run import check_request

    if args.table in REPORTS:
        return REPORTS[args.table](args)
    address, use_ray = _ray_flags(args)
    try:  # before --out is created: every rule of the arguments, and the agents read
        request = check_request(args.table, args.scale, agents=args.agents, retrain=args.retrain, obl=args.obl, overrides=args.overrides,
                                device=args.device)
    except ReproduceError as exc:
        raise _usage(exc) from None
    if args.overrides and address is None:  # the pools compile on this machine (with --ray ADDRESS, on the workers)
        for compile_mode in {config.run.compile for seeds in request.configs.values() for config in seeds.values()}:
            flags.check_compile(compile_mode, args.device)
    flags.prepare_output_dir(args.out)
    threads = [f"run.threads={args.threads}"] if args.threads is not None and request.trained else []
    try:
        reproduce(args.table, args.scale, args.out, agents=args.agents, retrain=args.retrain, device=args.device, precision=args.precision,
                  ray_address=address, use_ray=use_ray, obl=args.obl, reuse=args.reuse, command=args.command_line,
                  overrides=[*args.overrides, *threads])
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


def _or(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def _choices() -> tuple[list[str], list[str]]:
    """The tables of every scale (in the order the scales list them) and the scales, from :data:`~.specs.SCALES`."""
    return list(dict.fromkeys(table for scale in SCALES.values() for table in scale.tables)), list(SCALES)


def _report_scales() -> dict[str, list[str]]:
    """The scales each report reads, from the report modules' data."""
    from eqc.domains.hanabi.reproduce.codes import CODE_SCALES
    from eqc.domains.hanabi.reproduce.conventions import ALIGNED_POOLS
    from eqc.domains.hanabi.reproduce.entropy import IPPO_POOLS

    reading: dict[str, Collection[str]] = {"conventions": ALIGNED_POOLS, "entropy": IPPO_POOLS, "codes": CODE_SCALES}
    return {report: [name for name in SCALES if name in reading[report]] for report in REPORTS}


def _table_help(tables: list[str]) -> str:
    at = _report_scales()
    return (f"a table ({', '.join(tables)}: which a scale has, see --scale); 'conventions': what explains cross-play at --scale "
            f"{_or(at['conventions'])} (run after table1 and table2 into the same --out to get each cell's share of the alignable "
            f"gap); 'entropy': the IPPO pools of --scale {_or(at['entropy'])} played greedily and as sampled, and how equivariant "
            f"each is; 'codes': the code lottery of a registered table1 (--scale {_or(at['codes'])}; render table1 into the same "
            "--out first)")


def _scale_help() -> str:
    at = _report_scales()
    return "; ".join(f"{name}: {scale.summary} ({', '.join([*scale.tables, *(r for r, scales in at.items() if name in scales)])})"
                     for name, scale in SCALES.items())


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
    tables, scales = _choices()
    reproduce.add_argument("table", choices=(*tables, *REPORTS), help=_table_help(tables))
    reproduce.add_argument("--scale", choices=scales, required=True, help=_scale_help())
    reproduce.add_argument("--out", type=flags.output_dir, required=True,
                           help="directory for pools/, xp/ and the tables (pools are reused)")
    reproduce.add_argument("--obl", type=Path, nargs="+", default=None, help="public OBL agent files (model0.pthw) to add to table2")
    shipping = [name for name, scale in SCALES.items() if scale.shipped]
    reproduce.add_argument("--agents", type=Path, default=None,
                           help=f"pools to read at --scale {_or(shipping)} (default: the repository's results/<scale>/agents)")
    seed_pools = [name for name in shipping if not SCALES[name].trained_by]
    reproduce.add_argument("--retrain", action="store_true",
                           help=f"at --scale {_or(seed_pools)}, train the pools from scratch under OUT/pools instead of "
                           "reading the shipped agents")
    flags.add_precision_flag(reproduce)
    reproduce.add_argument("--reuse", action="store_true",
                           help="take cells and relabelled self-play already in OUT for the same agent files, games and decks "
                           "(hashed) instead of playing them again; only results of this eqc version. A saved result that was "
                           "edited (its seal no longer matches) or holds impossible numbers is refused. With conventions: keep the report "
                           "in OUT and compute its cells' shares of the alignable gap again from the tables now in OUT (nothing played)")
    add_set_flag(reproduce)
    _add_ray_flags(reproduce)
    flags.add_threads_flag(reproduce, trains=True)
    reproduce.set_defaults(run=_reproduce)
