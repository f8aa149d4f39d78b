"""``eqc hanabi``: train Hanabi agents, evaluate them, print the config keys.

- ``eqc hanabi train --config FILE --seed N --device DEV --out DIR [--max-minutes M]``: train, or
  resume the run already in ``DIR`` (see ``eqc.domains.hanabi.training.run``). With ``--seeds 0-7`` instead of
  ``--seed``: the seeds' runs ``DIR/seed_<n>/`` trained in one process as one batched learner (feed-forward PQN; see
  ``eqc.domains.hanabi.training.seeds``).
- ``eqc hanabi eval --checkpoint PATH [--symmetrize GROUP] [--hidden-scheme average|identity] --games N [--deck-seed S] [--hle]``:
  greedy self-play score ± SEM, bomb-out and perfect-score rates on HanabiBatch, or in HLE itself.
- ``eqc hanabi xp --pool DIR... [--symmetrize GROUP] [--hidden-scheme average|identity] --games N --out DIR [--verify-hle K]``:
  greedy cross-play of every ordered pair of the pools' agents on common decks; ``xp.json``,
  ``xp.csv``, ``xp.png`` in ``DIR`` (see ``eqc.domains.hanabi.xp``).
- ``eqc hanabi actions --checkpoint PATH --games 1000 --out DIR``: conditional action matrices of
  one agent, unsymmetrized and symmetrized over C5 and D10 (C3 and D6 for 3 colours, ...), or as trained for an agent
  trained symmetrized (``actions.png``, ``actions.json``).
- ``eqc hanabi relabelled --pool DIR... --elements K --games N [--out FILE]``: each agent with copies of
  itself in colour-relabelled worlds (the measure of colour symmetry breaking, see
  ``eqc.domains.hanabi.xp.relabelled``): plain self-play, relabelled-partner loss, colour-hint share.
- ``eqc hanabi export --checkpoint PATH --out DIR``: a run's network as a shipped policy directory
  (``policy.safetensors``, ``policy.json``, the training record; see ``eqc.domains.hanabi.agent.files``).
- ``eqc hanabi config``: every config key with its default and meaning.
- ``eqc hanabi pool`` and ``eqc hanabi reproduce``: train pools, reproduce the paper's tables (their own ``--help``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eqc.cli import common as flags
from eqc.cli.config_flags import add_set_flag, config_source, load_config_flags
from eqc.cli.reproduce import add_reproduce_parsers
from eqc.domains.hanabi.config.agent import HIDDEN_SCHEMES
from eqc.domains.hanabi.symmetry import COLOUR_GROUP_NAMES
from eqc.domains.hanabi.training.config import RunConfig, TrainConfig

#: ``xp --symmetrize``'s value for a pool played as trained (plain, or over its training group).
AS_TRAINED = "trained"

__all__ = ["add_hanabi_parser"]



def _train(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.config.schema import ConfigError
    from eqc.domains.hanabi.training.driver import RunDirectoryError, TrainingDiverged
    from eqc.domains.hanabi.training.run import train
    from eqc.domains.hanabi.training.warmup import SegmentTooShort

    config = load_config_flags(args, {"run.threads": args.threads, "network.precision": args.precision})
    flags.check_compile(config.run.compile, args.device)
    if args.seeds is not None:
        return _train_seeds(args, config)
    flags.prepare_output_dir(args.out)
    try:
        seed = 0 if args.seed is None else args.seed  # None: --seed not given (so that --seeds can refuse it)
        summary = train(config, args.out, seed=seed, device=args.device, max_minutes=args.max_minutes, progress=not args.no_progress)
    except (RunDirectoryError, CheckpointError) as exc:  # --out holds another run, a foreign checkpoint, or is locked
        raise flags.FlagError("--out", str(exc)) from None
    except SegmentTooShort as exc:  # a resumed R2D2 run whose segment cannot get past its replay warm-up
        raise flags.FlagError("--max-minutes", str(exc)) from None
    except ConfigError as exc:  # e.g. [run] tensorboard without the package
        raise flags.FlagError("--config", str(exc)) from None
    except TrainingDiverged as exc:
        print(f"eqc hanabi train: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.out}: {summary.moves:,} moves, {summary.updates:,} updates, {summary.wall_s / 60:.1f} min; "
        f"greedy score {summary.eval_score:.2f} ± {summary.eval_sem:.2f} (bomb-out {summary.eval_bomb_out_rate:.1%}); "
        f"stopped at {summary.stopped}; metrics in {args.out / 'metrics.csv'}"
    )
    return 0


def _train_seeds(args: argparse.Namespace, config: TrainConfig) -> int:
    """``train --seeds``: the seeds in one process (``eqc.domains.hanabi.training.seeds_run``), refused before any work
    where the config cannot be batched."""
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.config.schema import ConfigError
    from eqc.domains.hanabi.training.driver import RunDirectoryError, TrainingDiverged
    from eqc.domains.hanabi.training.seeds import check_stackable
    from eqc.domains.hanabi.training.seeds_run import check_seed_count, train_seeds

    try:
        check_seed_count(len(args.seeds))
        check_stackable(config)
    except ValueError as exc:  # ConfigError among them
        raise flags.FlagError("--seeds", str(exc)) from None
    flags.prepare_output_dir(args.out)
    try:
        summaries = train_seeds(dict.fromkeys(args.seeds, config), args.out, device=args.device, max_minutes=args.max_minutes,
                                progress=not args.no_progress)
    except (RunDirectoryError, CheckpointError) as exc:  # --out holds other runs, a foreign checkpoint, or is locked
        raise flags.FlagError("--out", str(exc)) from None
    except ConfigError as exc:
        raise flags.FlagError("--config", str(exc)) from None
    except TrainingDiverged as exc:
        print(f"eqc hanabi train: {exc}", file=sys.stderr)
        return 1
    for seed, summary in summaries.items():
        print(f"seed {seed}: {summary.moves:,} moves, {summary.updates:,} updates; greedy score {summary.eval_score:.2f} "
              f"± {summary.eval_sem:.2f} (bomb-out {summary.eval_bomb_out_rate:.1%}); stopped at {summary.stopped}")
    print(f"{len(summaries)} runs in {args.out}/seed_<n>/, trained in one process; pool status in {args.out / 'pool.json'}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.agent.network import Agent
    from eqc.domains.hanabi.agent.policy import load_policy

    try:
        policy = load_policy(args.checkpoint, device=args.device, symmetrize=args.symmetrize, hidden_scheme=args.hidden_scheme,
                             precision=args.precision)
    except CheckpointError as exc:
        raise flags.FlagError("--checkpoint", str(exc)) from None
    except ValueError as exc:  # another group than the one the agent was trained symmetrized over
        raise flags.FlagError("--symmetrize", str(exc)) from None
    assert isinstance(policy.agent, Agent)  # load_policy wraps the network in an Agent
    if args.deck_seed is None:  # the decks metrics.csv was evaluated on; the default for an agent eqc did not train
        run = policy.trained_with.get("run")
        if run is not None and "deck_seed" not in run:
            raise flags.FlagError("--deck-seed", "the agent's recorded training config has no [run] deck_seed "
                                  "(it predates the name): pass --deck-seed")
        args.deck_seed = RunConfig().deck_seed if run is None else run["deck_seed"]
    head = policy.spec.network.head
    if args.sampled and (args.hle or head != "policy"):
        why = "plays in HanabiBatch only (not with --hle)" if args.hle else "plays agents whose logits are a policy (trained by IPPO)"
        raise flags.FlagError("--sampled", f"{why}; {args.checkpoint} has [network] head {head!r}")
    if args.hle:
        from eqc.domains.hanabi.play.self_play import evaluate_in_hle

        result = evaluate_in_hle(policy, args.games, args.deck_seed)
        where = "HLE"
    else:
        from eqc.domains.hanabi.play.self_play import evaluate_agent

        result = evaluate_agent(policy.agent, policy.rules, args.games, args.deck_seed, policy.device)
        where = "HanabiBatch"
    symmetrized = f", symmetrized over {args.symmetrize}" if args.symmetrize else ""
    name = f"{args.checkpoint} ({policy.trained_moves:,} moves trained{symmetrized}, run in {policy.agent.precision})"
    print(f"{name}, greedy self-play on {where}: {result}")
    record = {"checkpoint": str(args.checkpoint), "where": where, "symmetrize": args.symmetrize, "precision": policy.agent.precision,
              "deck_seed": args.deck_seed, **result.as_dict()}
    trained = policy.spec.network.precision
    if policy.agent.precision != trained and args.precision == "auto":  # comparing would run bf16 where it is slow
        from eqc.domains.hanabi.agent.precision import bf16_support

        print(f"trained in {trained}, run in {policy.agent.precision}: {bf16_support(policy.device).hardware} "
              f"(--precision {trained} runs it as trained, and says how many moves fp32 changes)")
    elif policy.agent.precision != trained:  # say how many moves the other precision changes
        from eqc.domains.hanabi.play.self_play import precision_difference

        difference = precision_difference(policy.agent, trained, policy.rules, args.games, args.deck_seed, policy.device)
        print(f"trained in {trained}: {difference}")
        record["precision_difference"] = difference.as_dict()
    if args.sampled:
        import torch

        from eqc.domains.hanabi.agent.sampled import SampledAgent
        from eqc.domains.hanabi.play.self_play import evaluate_agent

        sampled = SampledAgent(policy.agent, torch.Generator(device=policy.device).manual_seed(args.deck_seed))
        result = evaluate_agent(sampled, policy.rules, args.games, args.deck_seed, policy.device)
        print(f"{name}, sampled self-play on {where} (moves drawn from the softmax of the logits): {result}")
        record["sampled"] = result.as_dict()
    if args.json:
        print(json.dumps(record))
    return 0


def _xp(args: argparse.Namespace) -> int:
    import time

    from eqc.domains.hanabi.xp import PoolError, cross_play_games, describe_policy, load_pools, verify_hle, write_xp

    groups = [None if g == AS_TRAINED else g for g in args.symmetrize or [AS_TRAINED]]
    if len(groups) not in (1, len(args.pool)):
        raise flags.FlagError("--symmetrize", f"give one group for every pool, or one per --pool ({len(args.pool)}), got {len(groups)}")
    try:
        agents = load_pools(args.pool, groups if len(groups) > 1 else groups[0], hidden_scheme=args.hidden_scheme, device=args.device,
                            precision=args.precision)
    except PoolError as exc:
        raise flags.FlagError("--pool", str(exc)) from None
    if len(agents) < 2:
        raise flags.FlagError("--pool", f"cross-play needs at least 2 agents, the pools hold {len(agents)} ({agents[0].path})")
    if args.verify_hle > args.games:
        raise flags.FlagError("--verify-hle", f"must be at most --games ({args.games}), got {args.verify_hle}")
    policies, names = [a.policy for a in agents], [a.name for a in agents]
    if args.verify_hle:
        variants = {(p.spec.game.knowledge, p.spec.game.sad) for p in policies}
        if len(variants) > 1:
            raise flags.FlagError("--verify-hle", f"HLE replays need agents of one observation variant, the pools mix {sorted(variants)}")
    flags.prepare_output_dir(args.out)
    start = time.perf_counter()
    games = cross_play_games(policies, args.games, deck_seed=args.deck_seed, record_moves=args.verify_hle)
    wall = time.perf_counter() - start
    verified = verify_hle(games, policies, args.verify_hle, names) if args.verify_hle else 0
    described = [{"name": n, **describe_policy(a.policy, a.path, a.symmetrize)} for n, a in zip(names, agents, strict=True)]
    extra = {"command": args.command_line, "hle_verified_games_per_pair": args.verify_hle, "wall_s": wall,
             "games_per_s": games.scores.numel() / wall}
    paths = write_xp(args.out, games, described, extra=extra)
    summary = games.summary()
    print(
        f"{len(agents)} agents, {games.games} games per pair ({games.scores.numel() / wall:,.0f} games/s): "
        f"XP {summary.xp} over {summary.xp.n} pairs (bomb-out {summary.xp_bomb_out_rate:.1%}, perfect {summary.xp_perfect_rate:.1%}, "
        f"non-zero games {games.mean_nonzero():.2f}); SP {summary.sp}"
        + (f"; {verified} games replayed in HLE: identical" if verified else "")
    )
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def _actions(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.agent.files import CheckpointError
    from eqc.domains.hanabi.agent.policy import load_policy
    from eqc.domains.hanabi.xp import action_matrices, plot_action_matrices
    from eqc.io import write_json_atomic

    try:
        policy = load_policy(args.checkpoint, device=args.device, precision=args.precision)
    except CheckpointError as exc:
        raise flags.FlagError("--checkpoint", str(exc)) from None
    flags.prepare_output_dir(args.out)
    result = action_matrices(policy, args.games, deck_seed=args.deck_seed, hidden_scheme=args.hidden_scheme)
    title = f"{args.checkpoint}: P(a_t | partner's a_(t-1)) over {args.games} self-play games"
    plot_action_matrices(result, args.out / "actions.png", title=title)
    write_json_atomic(args.out / "actions.json", {"checkpoint": str(args.checkpoint), "moves": policy.trained_moves,
                                                  "precision": policy.agent.precision, **result.as_dict()})
    scores = ", ".join(f"{result.caption(k)} {v:.2f}" for k, v in result.scores.items())
    print(f"self-play scores: {scores}; wrote {args.out / 'actions.png'}, {args.out / 'actions.json'}")
    return 0


def _relabelled(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.symmetry import colour_group
    from eqc.domains.hanabi.xp import DuplicateAgentError, PoolError, load_pools, relabelled_self_play
    from eqc.io import recorded_path, write_json_atomic

    if args.out is not None and (args.out.is_dir() or not args.out.parent.is_dir()):  # everything is checked before --out is written
        raise flags.FlagError("--out", f"must be a JSON file path in an existing directory, got {str(args.out)!r}")
    try:
        agents = load_pools(args.pool, device=args.device, precision=args.precision)
    except DuplicateAgentError as exc:
        raise flags.FlagError("--pool", f"{str(exc.run)!r} is listed twice (also through {str(exc.first)!r}): relabelled "
                              "self-play already plays each agent with copies of itself; list it once") from None
    except PoolError as exc:
        raise flags.FlagError("--pool", str(exc)) from None
    if args.group is not None:  # the agents play one game (load_pools), so one check covers them all
        try:
            colour_group(args.group, agents[0].policy.rules.num_colours)
        except ValueError as exc:  # a group on more colours than the agents' game
            raise flags.FlagError("--group", f"{agents[0].name}: {exc}") from None
    rows = []
    for agent in agents:
        result = relabelled_self_play(agent.policy, elements=args.elements, games=args.games, deck_seed=args.deck_seed, group=args.group)
        print(f"{agent.name} ({agent.policy.trained_moves:,} moves trained): {result}")
        rows.append({"name": agent.name, "path": recorded_path(agent.path), "moves": agent.policy.trained_moves, **result.as_dict()})
    if args.out is not None:
        group = args.group or f"S{agents[0].policy.rules.num_colours}"
        record = {"group": group, "games": args.games, "deck_seed": args.deck_seed, "command": args.command_line, "agents": rows}
        write_json_atomic(args.out, record)
        print(f"wrote {args.out}")
    return 0


def _learn_symmetries(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.xp import DuplicateAgentError, PoolError, load_pools
    from eqc.domains.hanabi.xp.expected_return import learn_label_group
    from eqc.io import recorded_path

    if args.out.exists() or not args.out.parent.is_dir():  # everything is checked before any game is played
        why = "exists (a learned group is written once; choose a new path)" if args.out.exists() else "is not in an existing directory"
        raise flags.FlagError("--out", f"{str(args.out)!r} {why}")
    if len(set(args.labels)) != len(args.labels):
        raise flags.FlagError("--labels", f"names a label set twice: {args.labels}")
    try:
        agents = load_pools(args.pool, device=args.device, precision=args.precision)
    except DuplicateAgentError as exc:
        raise flags.FlagError("--pool", f"{str(exc.run)!r} is listed twice (also through {str(exc.first)!r}); list it once") from None
    except PoolError as exc:
        raise flags.FlagError("--pool", str(exc)) from None
    measured = None if args.measured is None else _previous_measurements(args, [recorded_path(a.path) for a in agents])
    found = learn_label_group([a.policy for a in agents], args.labels, tolerance=args.tolerance, games=args.games,
                              deck_seed=args.deck_seed, cross_play_games=args.cross_play_games, measured=measured)
    context = {"pool": [recorded_path(a.path) for a in agents], "labels": args.labels, "games": args.games,
               "deck_seed": args.deck_seed, "cross_play_games": args.cross_play_games,
               "measured": None if args.measured is None else recorded_path(args.measured),
               "game": agents[0].policy.rules.to_dict(), "command": args.command_line}
    found.save(args.out, **context)
    names = ", ".join(f"{lab.name}({lab.size})" for lab in found.symmetry.acts_on)
    print(f"candidate group on {names}: {len(found.candidates)} elements, {len(found.accepted)} within tolerance {args.tolerance}; "
          f"learned group of order {found.group.order}, worst re-measured loss {found.worst_loss:+.3f}; wrote {args.out}")
    for m in found.members:
        print(f"  {list(m.permutation)}: loss {m.loss:+.3f}")
    return 0


def _previous_measurements(args: argparse.Namespace, pool: list[str]) -> list:
    """The candidate measurements of ``--measured``, refused unless that search had this pool, labels, games and decks."""
    from eqc.dec_pomdp import ElementLoss
    from eqc.dec_pomdp.expected_return import read_group_file

    try:
        record = read_group_file(args.measured)
    except (OSError, ValueError) as exc:
        raise flags.FlagError("--measured", str(exc)) from None
    context = record.get("context", {})
    for key, ours in (("pool", pool), ("labels", args.labels), ("games", args.games), ("deck_seed", args.deck_seed)):
        if context.get(key) != ours:
            raise flags.FlagError("--measured", f"{args.measured} was measured with {key} {context.get(key)!r}, this search has {ours!r}; "
                                  "its measurements apply only to the same pool, labels, games and decks")
    return [ElementLoss.from_dict(c) for c in record["candidates"]]


def _export(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.agent.files import CheckpointError, PolicyDirectoryError, export_policy

    try:  # everything is checked before --out is created
        out = export_policy(args.checkpoint, args.out)
    except CheckpointError as exc:
        raise flags.FlagError("--checkpoint", str(exc)) from None
    except PolicyDirectoryError as exc:
        raise flags.FlagError("--out", str(exc)) from None
    size = sum(p.stat().st_size for p in out.iterdir()) / 1e6
    print(f"exported {args.checkpoint} to {out} ({size:.2f} MB): " + ", ".join(sorted(p.name for p in out.iterdir())))
    return 0


def _config(args: argparse.Namespace) -> int:
    from eqc.domains.hanabi.training.config import describe_config

    print(describe_config())
    return 0


def add_hanabi_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``eqc hanabi {train,eval,xp,actions,relabelled,export,config,pool,reproduce}``."""
    hanabi = subparsers.add_parser("hanabi", help="train and evaluate Hanabi agents", description=__doc__.replace("``", ""),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = hanabi.add_subparsers(dest="hanabi_command", required=True)
    _add_train_parser(sub)
    _add_eval_parser(sub)
    _add_xp_parser(sub)
    _add_actions_parser(sub)
    _add_relabelled_parser(sub)
    _add_export_parser(sub)
    _add_symmetries_parser(sub)
    _add_config_parser(sub)
    add_reproduce_parsers(sub)


def _add_hidden_scheme_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hidden-scheme", choices=HIDDEN_SCHEMES, default=None,
                        help="recurrent symmetrizer's hidden-state scheme (default: the one it was trained with, else average)")


def _add_pool_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", type=Path, action="append", required=True,
                        help="pool directory of agents seed_<n>/, or one agent directory (repeat to pool several)")


def _add_train_parser(sub: argparse._SubParsersAction) -> None:
    train = sub.add_parser("train", help="train an agent (re-run the same command to resume)")
    train.add_argument("--config", type=config_source, required=True,
                       help="TOML config file or shipped config name (configs/hanabi/*.toml: vdn_cpu, paper, op, ...)")
    add_set_flag(train)
    seeds = train.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=flags.seed, default=None, help="seed of games, exploration and initialisation (default 0)")
    seeds.add_argument("--seeds", type=flags.seed_list(distinct=True), default=None,
                       help="train these seeds ('0-7', '0,2,5') in one process as one batched learner, each into OUT/seed_<n>/ "
                       "(feed-forward [run] algorithm 'pqn' only; each seed equals its own run up to float rounding)")
    train.add_argument("--device", type=flags.device, default="cpu", help="torch device: cpu, cuda, cuda:1 (default cpu)")
    train.add_argument("--out", type=flags.output_dir, required=True, help="run directory (created; an existing run resumes)")
    train.add_argument("--max-minutes", type=flags.float_in(0, low_open=True), default=None,
                       help="stop after this many minutes of this invocation (resume later)")
    flags.add_threads_flag(train, trains=True)
    flags.add_precision_flag(train, trains=True)
    train.add_argument("--no-progress", action="store_true", help="no progress bar; one line per evaluation")
    train.set_defaults(run=_train)


def _add_eval_parser(sub: argparse._SubParsersAction) -> None:
    evaluate = sub.add_parser("eval", help="greedy self-play of a trained agent")
    evaluate.add_argument("--checkpoint", type=Path, required=True, help="run directory or checkpoint file")
    evaluate.add_argument("--symmetrize", choices=COLOUR_GROUP_NAMES, default=None,
                          help="symmetrize the agent at test time over this colour group")
    _add_hidden_scheme_flag(evaluate)
    evaluate.add_argument("--games", type=flags.int_in(2), default=1000, help="games, at least 2 (default 1000)")
    evaluate.add_argument("--deck-seed", type=flags.seed, default=None,
                          help="seed of the decks (default: the agent's training config [run] deck_seed, the decks of metrics.csv)")
    evaluate.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    evaluate.add_argument("--hle", action="store_true", help="play in the Hanabi Learning Environment itself")
    evaluate.add_argument("--sampled", action="store_true",
                          help="IPPO agents: also self-play with moves drawn from the policy (softmax of the logits), beside greedy")
    evaluate.add_argument("--json", action="store_true", help="also print the result as one JSON line")
    flags.add_threads_flag(evaluate)
    flags.add_precision_flag(evaluate)
    evaluate.set_defaults(run=_eval)


def _add_xp_parser(sub: argparse._SubParsersAction) -> None:
    xp = sub.add_parser("xp", help="cross-play of every ordered pair of the pools' agents on common decks")
    _add_pool_flag(xp)
    xp.add_argument("--symmetrize", choices=(*COLOUR_GROUP_NAMES, AS_TRAINED), action="append", default=None,
                    help=f"symmetrize at test time over this colour group: once for all pools, or once per --pool in order "
                    f"('{AS_TRAINED}', the default: each agent as trained)")
    _add_hidden_scheme_flag(xp)
    xp.add_argument("--games", type=flags.positive_int, required=True, help="games per ordered pair (the paper: 5000)")
    xp.add_argument("--out", type=flags.output_dir, required=True, help="directory for xp.json, xp.csv and xp.png")
    xp.add_argument("--verify-hle", type=flags.non_negative_int, default=0, metavar="K",
                    help="replay the first K games of every pair in HLE and fail if any differs (default 0)")
    xp.add_argument("--deck-seed", type=flags.seed, default=1, help="seed of the common decks (default 1)")
    xp.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    flags.add_threads_flag(xp)
    flags.add_precision_flag(xp)
    xp.set_defaults(run=_xp)


def _add_actions_parser(sub: argparse._SubParsersAction) -> None:
    actions = sub.add_parser("actions", help="conditional action matrices of one agent, unsymmetrized and C5/D10-symmetrized "
                             "(an agent trained symmetrized: as trained)")
    actions.add_argument("--checkpoint", type=Path, required=True, help="run directory or checkpoint file")
    actions.add_argument("--games", type=flags.positive_int, default=1000, help="self-play games per matrix (default 1000, as the paper)")
    actions.add_argument("--out", type=flags.output_dir, required=True, help="directory for actions.png and actions.json")
    _add_hidden_scheme_flag(actions)
    actions.add_argument("--deck-seed", type=flags.seed, default=1, help="seed of the decks (default 1)")
    actions.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    flags.add_threads_flag(actions)
    flags.add_precision_flag(actions)
    actions.set_defaults(run=_actions)


def _add_relabelled_parser(sub: argparse._SubParsersAction) -> None:
    relabelled = sub.add_parser("relabelled", help="self-play with colour-relabelled copies: does coordination depend on colour names?")
    _add_pool_flag(relabelled)
    relabelled.add_argument("--elements", type=flags.int_in(1, 119), default=12,
                            help="non-identity group elements drawn (seeded) for the relabelled copies (default 12)")
    relabelled.add_argument("--games", type=flags.int_in(2), default=500, help="games per element and for plain self-play (default 500)")
    relabelled.add_argument("--group", choices=COLOUR_GROUP_NAMES, default=None,
                            help="colour group the elements come from (default: every permutation of the agents' colours, "
                                 "S5 in the full game)")
    relabelled.add_argument("--deck-seed", type=flags.seed, default=1, help="seed of the common decks (default 1)")
    relabelled.add_argument("--out", type=Path, default=None, help="also write the results to this JSON file")
    relabelled.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    flags.add_threads_flag(relabelled)
    flags.add_precision_flag(relabelled)
    relabelled.set_defaults(run=_relabelled)


def _add_symmetries_parser(sub: argparse._SubParsersAction) -> None:
    from eqc.domains.hanabi.symmetry import LABEL_SETS

    symmetries = sub.add_parser("symmetries", help="expected-return symmetries of a pool of agents")
    what = symmetries.add_subparsers(dest="symmetries_command", required=True)
    learn = what.add_parser("learn", help="exact search over permutations of label sets: the group a frozen pool's return "
                                          "tolerates (eqc.dec_pomdp.search_label_permutations)")
    _add_pool_flag(learn)
    learn.add_argument("--labels", nargs="+", choices=LABEL_SETS, required=True,
                       help="label sets whose permutations are candidates (e.g. colour slot: S3 x S3 on Mini-Hanabi)")
    learn.add_argument("--tolerance", type=flags.float_in(0.0), required=True,
                       help="largest accepted return loss (pool-mean self-play minus self-play relabelled), in points")
    learn.add_argument("--games", type=flags.int_in(2), default=1000, help="self-play games per agent and element (default 1000)")
    learn.add_argument("--deck-seed", type=flags.seed, default=0,
                       help="seed of the search's common decks; the re-measurement uses the next seed (default 0)")
    learn.add_argument("--cross-play-games", type=flags.int_in(0), default=0,
                       help="games per ordered pair for the XP variant (recorded, not used to accept; default 0: not measured)")
    learn.add_argument("--measured", type=Path, default=None,
                       help="a previous group file of the same pool, labels, games and deck seed: reuse its candidate "
                            "measurements (another --tolerance without searching again; the group is still re-measured)")
    learn.add_argument("--out", type=Path, required=True, help="JSON file to write (new)")
    learn.add_argument("--device", type=flags.device, default="cpu", help="torch device (default cpu)")
    flags.add_threads_flag(learn)
    flags.add_precision_flag(learn)
    learn.set_defaults(run=_learn_symmetries)
    _add_neural_parser(what)


def _add_neural_parser(what: argparse._SubParsersAction) -> None:
    from eqc.dec_pomdp import NeuralMapOptions
    from eqc.domains.hanabi.xp.neural_maps import MOVE_KINDS

    default = NeuralMapOptions()
    neural = what.add_parser("neural", help="the ERS paper's neural maps: an identity-initialised observation network with a "
                                            "fixed slot transposition of moves, trained against a frozen pool "
                                            "(eqc.dec_pomdp.train_candidate_map); writes a candidate set, not a group")
    _add_pool_flag(neural)
    neural.add_argument("--swap-slots", type=flags.int_in(0), nargs=2, action="append", required=True, metavar=("I", "J"),
                        help="the move permutation of one map: swap the moves of hand slots I and J (repeat for more maps, "
                             "learned in order; later maps are composed with earlier ones)")
    neural.add_argument("--moves", nargs="+", choices=MOVE_KINDS, default=list(MOVE_KINDS),
                        help="which moves of the two slots are swapped (default: discard and play)")
    neural.add_argument("--steps", type=flags.int_in(0), default=default.steps, help=f"Adam steps per map (default {default.steps})")
    neural.add_argument("--games", type=flags.int_in(2), default=64, help="sampled self-play games per return estimate (default 64)")
    neural.add_argument("--temperature", type=flags.float_in(0.0, low_open=True), default=1.0,
                        help="softmax temperature over an agent's Q-values for the sampled games (default 1.0)")
    neural.add_argument("--hidden-size", type=flags.int_in(1), default=default.hidden_size,
                        help=f"width of the observation network's hidden layers (default {default.hidden_size})")
    neural.add_argument("--lr", type=flags.float_in(0.0, low_open=True), default=default.lr,
                        help=f"Adam learning rate (default {default.lr})")
    neural.add_argument("--closure-probability", type=flags.float_in(0.0, 1.0), default=default.closure_probability,
                        help=f"per step, train phi o phi instead of phi (default {default.closure_probability})")
    neural.add_argument("--composition-probability", type=flags.float_in(0.0, 1.0), default=default.composition_probability,
                        help=f"per step, train phi o (an earlier map) (default {default.composition_probability})")
    neural.add_argument("--invertibility", type=flags.float_in(0.0), default=default.invertibility,
                        help=f"weight of the L1 term |f(f(o)) - o| (default {default.invertibility})")
    neural.add_argument("--cross-play", action="store_true",
                        help="the XP variant: maximise XP(pi_i, phi(pi_j)) over ordered pairs of distinct agents (needs 2+)")
    neural.add_argument("--seed", type=flags.seed, default=default.seed, help=f"seed of initialisation and draws (default {default.seed})")
    neural.add_argument("--deck-seed", type=flags.seed, default=0,
                        help="seed of the training decks; the greedy measurement uses the next seed (default 0)")
    neural.add_argument("--measure-games", type=flags.int_in(1), default=200,
                        help="greedy self-play games per agent for each map's final return loss (default 200)")
    neural.add_argument("--out", type=Path, required=True,
                        help="the candidate set's record, a new .json file (its weights go beside it, .safetensors)")
    flags.add_threads_flag(neural)
    neural.set_defaults(run=_neural_symmetries)


def _neural_symmetries(args: argparse.Namespace) -> int:
    from eqc.dec_pomdp import NeuralMapOptions
    from eqc.domains.hanabi.xp import DuplicateAgentError, PoolError, load_pools
    from eqc.domains.hanabi.xp.neural_maps import learn_hanabi_maps, slot_transposition
    from eqc.io import recorded_path

    out: Path = args.out
    if out.suffix != ".json":
        raise flags.FlagError("--out", f"{str(out)!r} must name a .json file (the weights go beside it as .safetensors)")
    for path in (out, out.with_suffix(".safetensors")):
        if path.exists():
            raise flags.FlagError("--out", f"{str(path)!r} exists (a candidate set is written once; choose a new path)")
    if not out.parent.is_dir():
        raise flags.FlagError("--out", f"{str(out)!r} is not in an existing directory")
    for i, j in args.swap_slots:
        if i == j:
            raise flags.FlagError("--swap-slots", f"names slot {i} twice; a transposition swaps two different slots")
    if len(set(args.moves)) != len(args.moves):
        raise flags.FlagError("--moves", f"names a move kind twice: {args.moves}")
    try:
        options = NeuralMapOptions(hidden_size=args.hidden_size, steps=args.steps, lr=args.lr,
                                   closure_probability=args.closure_probability,
                                   composition_probability=args.composition_probability,
                                   invertibility=args.invertibility, cross_play=args.cross_play, seed=args.seed)
    except ValueError as exc:
        raise flags.FlagError("--closure-probability", str(exc)) from None
    try:
        agents = load_pools(args.pool, device="cpu")
    except DuplicateAgentError as exc:
        raise flags.FlagError("--pool", f"{str(exc.run)!r} is listed twice (also through {str(exc.first)!r}); list it once") from None
    except PoolError as exc:
        raise flags.FlagError("--pool", str(exc)) from None
    rules = agents[0].policy.rules
    if any(a.policy.rules != rules for a in agents):
        raise flags.FlagError("--pool", "the agents play different games (HanabiRules); pool agents of one game")
    if any(a.policy.agent.recurrent for a in agents):
        raise flags.FlagError("--pool", "the neural maps need feed-forward agents (lstm_layers 0); the pool holds a recurrent one")
    if args.cross_play and len(agents) < 2:
        raise flags.FlagError("--cross-play", f"the XP variant needs at least 2 agents, the pool has {len(agents)}")
    if any(s >= rules.hand_size for pair in args.swap_slots for s in pair):
        raise flags.FlagError("--swap-slots", f"slots must be in 0..{rules.hand_size - 1} (this game's hand size {rules.hand_size})")
    sigmas = [slot_transposition(rules, pair, args.moves) for pair in args.swap_slots]
    found = learn_hanabi_maps([a.policy for a in agents], sigmas, options=options, games=args.games, temperature=args.temperature,
                              measure_games=args.measure_games, deck_seed=args.deck_seed)
    found.save(out, pool=[recorded_path(a.path) for a in agents], swap_slots=args.swap_slots, moves=args.moves,
               command=args.command_line)
    for pair, m in zip(args.swap_slots, found.maps, strict=True):
        xp = "" if args.cross_play is False else f", XP {m.cross_play:.3f}"
        print(f"slots {pair[0]} <-> {pair[1]} ({'/'.join(args.moves)}): return loss {m.loss:+.3f} (self-play under the map "
              f"{m.self_play:.3f}{xp})")
    print(f"wrote {out} and {out.with_suffix('.safetensors').name}: a candidate set of {len(found.maps)} map(s), not a group")
    return 0


def _add_export_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="a run's network as a small shipped policy directory (no pickle)")
    export.add_argument("--checkpoint", type=Path, required=True, help="run directory or checkpoint file")
    export.add_argument("--out", type=flags.output_dir, required=True,
                        help="policy directory to write: new or empty (an existing policy or run is never overwritten)")
    export.set_defaults(run=_export)


def _add_config_parser(sub: argparse._SubParsersAction) -> None:
    config = sub.add_parser("config", help="print every config key with its default and meaning")
    config.set_defaults(run=_config)
