"""What explains cross-play in pools with induced colour conventions (``eqc hanabi reproduce conventions``).

Reported beside the tables of the ``induced``, ``colour`` and ``touched`` scales, from the same shipped agents:

- **hint maps**: per agent, the slot its partner plays right after each colour hint and each rank hint in
  greedy self-play (:func:`~eqc.domains.hanabi.xp.conventions.hint_slot_counts`), the slot each hint
  asks for most often, and the share of colour-hint plays that hit the taught slot ``pi(c)``
  (``[bootstrap] slots``). A colour convention shows as different slots for different colours; a
  hint-to-slot *code* no colour permutation maps shows as one slot for every colour hint. Beside them,
  how equivariant the agent is: its greedy disagreement with itself in relabelled worlds
  (:mod:`eqc.domains.hanabi.xp.equivariance`).
- **best-aligned cross-play** of each self-play pool (:mod:`eqc.domains.hanabi.xp.alignment`): plain
  and aligned XP, and the alignable gap; every table cell's share of that gap is
  ``(XP - plain) / (aligned - plain)`` with the reference pool's plain and aligned XP.
- **the ceiling of test-time symmetrization**: per self-play agent, self-play, the mean score with
  colour-relabelled copies of itself (a pool of those copies cross-plays at that), and the self-play of
  the agent symmetrized over every colour permutation (the copies all symmetrize to this one agent, so
  the symmetrized pool cross-plays at its self-play).
- **shared-factor cross-play**: plain cross-play between two pools, split by whether the two agents share
  a factor (the seed at scale ``induced``: the same stream and pi; at scale ``colour``: the same pi on
  different streams, or different rules on the same stream and pi).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import torch

from eqc.domains.hanabi.agent.policy import TrainedPolicy, load_policy
from eqc.domains.hanabi.reproduce.record import read_table
from eqc.domains.hanabi.reproduce.reports import Alignment, Ceiling, ConventionReport, GapShare, HintMap, SharedFactor, read_conventions
from eqc.domains.hanabi.reproduce.specs import ReproduceError
from eqc.domains.hanabi.xp.alignment import alignable_share, aligned_cross_play
from eqc.domains.hanabi.xp.conventions import hint_slot_counts
from eqc.domains.hanabi.xp.equivariance import greedy_equivariance
from eqc.domains.hanabi.xp.play import play_pairs
from eqc.domains.hanabi.xp.relabelled import relabelled_self_play
from eqc.io import write_json_atomic, write_text_atomic

__all__ = ["ALIGNED_POOLS", "CONVENTION_GAMES", "SHARED_FACTORS", "convention_pools", "convention_report", "refresh_conventions",
           "render_conventions", "reproduce_conventions"]

#: Greedy games per measurement of ``eqc hanabi reproduce conventions``.
CONVENTION_GAMES = 400

#: Self-play pools whose best-aligned cross-play is measured, by scale; the first is the reference of the gap shares.
ALIGNED_POOLS = {"induced": ("sp",), "colour": ("sp", "touched", "sp_stream1", "ippo_c001", "ippo_c005"), "touched": ("sp", "op")}

#: Pool pairs whose plain cross-play is split by a shared factor, by scale: (pool a, pool b, the factor).
SHARED_FACTORS = {
    "induced": (("sp", "op", "seed"), ("op", "gop_c3", "seed")),
    "colour": (("sp", "sp_stream1", "pi"), ("sp", "op", "pi"), ("sp", "touched", "pi"), ("sp", "ippo_c005", "pi"),
               ("ippo_c001", "ippo_c005", "pi")),
    "touched": (("sp", "op", "stream and pi"), ("op", "eqc", "stream and pi"), ("op", "gop_c3", "stream and pi"),
                ("sp", "eqc", "stream and pi")),
}


def _check_scale(scale: str) -> None:
    """:class:`~.specs.ReproduceError` unless conventions are reported at ``scale`` (a key of :data:`ALIGNED_POOLS`)."""
    if scale not in ALIGNED_POOLS:
        raise ReproduceError("scale", f"conventions are reported at the scales with induced conventions {sorted(ALIGNED_POOLS)}, "
                             f"not {scale!r}")


def _shared_key(path: Path, keys: dict[Path, str]) -> str:
    """What an agent shares with agents of another pool: its matching key where the scale's pools span folders
    (``<folder>/slots_<pi>``: stream and pi), else its seed (``seed_<n>``) or its pi (``slots_<pi>``)."""
    return keys.get(path, path.name.split("_", 1)[1])


def _hint_maps(policy: TrainedPolicy, games: int) -> HintMap:
    scores, _, moves, _ = play_pairs([policy, policy], [(0, 0)], games, record_moves=games)
    colour, colour_hints = hint_slot_counts(moves[0], policy.rules)
    rank, rank_hints = hint_slot_counts(moves[0], policy.rules, hint="rank")
    slots = policy.trained_with.get("bootstrap", {}).get("slots", [])
    plays = int(colour.sum())
    taught = int(colour[torch.arange(len(slots)), torch.tensor(slots)].sum()) if slots else 0
    return HintMap(tuple(slots), float(scores.double().mean()), _rows(colour), _rows(rank),
                   tuple(int(r.argmax()) if r.sum() else -1 for r in colour), tuple(int(r.argmax()) if r.sum() else -1 for r in rank),
                   taught / plays if slots and plays else math.nan, colour_hints, rank_hints,
                   greedy_equivariance(policy, games=min(games, 200)).disagreement)


def _rows(counts: torch.Tensor) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(row) for row in counts.tolist())


def _ceiling(policy: TrainedPolicy, path: Path, device: str, precision: str, games: int) -> Ceiling:
    colours = policy.rules.num_colours
    relabelled = relabelled_self_play(policy, elements=math.factorial(colours) - 1, games=games)
    symmetrized = load_policy(path, device=device, symmetrize=f"S{colours}", precision=precision)
    scores, _, _, _ = play_pairs([symmetrized, symmetrized], [(0, 0)], games)
    return Ceiling(relabelled.self_play, sum(relabelled.relabelled) / len(relabelled.relabelled), float(scores.double().mean()))


def _shared_factor(a: list[Path], b: list[Path], factor: str, device: str, precision: str, games: int,
                   keys: dict[Path, str]) -> SharedFactor:
    policies = [load_policy(p, device=device, precision=precision) for p in (*a, *b)]
    across = [(i, j) for i in range(len(a)) for j in range(len(b))]
    pairs = [(i, len(a) + j) for i, j in across] + [(len(a) + j, i) for i, j in across]  # both seatings
    scores, _, _, _ = play_pairs(policies, pairs, games)
    means = scores.double().mean(1)
    shared = torch.tensor([_shared_key(a[i], keys) == _shared_key(b[j], keys) for i, j in across] * 2)
    return SharedFactor(factor, games, float(means[shared].mean()) if bool(shared.any()) else math.nan, int(shared.sum()),
                        float(means[~shared].mean()) if bool((~shared).any()) else math.nan, int((~shared).sum()))


def _gap_share(scale: str, alignment: dict[str, Alignment], cell_xp: dict[str, float]) -> GapShare | None:
    """The cells' shares of the alignable gap of the scale's reference pool (None: no cell, or the pool not aligned)."""
    reference = ALIGNED_POOLS[scale][0]
    if not cell_xp or reference not in alignment:
        return None
    plain, aligned = alignment[reference].plain_xp, alignment[reference].aligned_xp
    return GapShare(reference, plain, aligned, {label: alignable_share(xp, plain, aligned) for label, xp in cell_xp.items()})


def convention_report(scale: str, runs: dict[str, list[Path]], *, device: str = "cpu", precision: str = "auto",
                      games: int = CONVENTION_GAMES, cell_xp: dict[str, float] | None = None, keys: dict[Path, str] | None = None,
                      log: Callable[[str], None] = print) -> ConventionReport:
    """The report of the module docstring for the pools ``runs`` (pool name -> agent directories) of ``scale``
    (one of :data:`ALIGNED_POOLS`), ``games`` greedy games per measurement (alignment: per ordered pair and element, half
    held out). ``cell_xp``: table cells' XP by label, whose shares of the alignable gap are reported. ``keys``: each
    agent's matching key where a pool spans folders (:func:`~eqc.domains.hanabi.reproduce.run.pool_agents`); agents are
    named by it in the report, else by their directory."""
    keys = keys or {}
    _check_scale(scale)
    agents, alignment, ceiling, shared = {}, {}, {}, {}
    for pool, paths in runs.items():
        log(f"hint maps: {pool} ({len(paths)} agents)")
        agents[pool] = {keys.get(p, p.name): _hint_maps(load_policy(p, device=device, precision=precision), games) for p in paths}
    for pool in ALIGNED_POOLS[scale]:
        paths = runs.get(pool, [])
        if len(paths) < 2:
            continue
        log(f"best-aligned cross-play and the symmetrization ceiling: {pool}")
        policies = [load_policy(p, device=device, precision=precision) for p in paths]
        alignment[pool] = Alignment.of(aligned_cross_play(policies, games=games))
        ceiling[pool] = {keys.get(p, p.name): _ceiling(q, p, device, precision, games) for p, q in zip(paths, policies, strict=True)}
    for a, b, factor in SHARED_FACTORS[scale]:
        if len(runs.get(a, [])) and len(runs.get(b, [])):
            log(f"cross-play {a} x {b} by shared {factor}")
            shared[f"{a} x {b}"] = _shared_factor(runs[a], runs[b], factor, device, precision, games, keys)
    return ConventionReport(scale, games, agents, alignment, ceiling, shared, _gap_share(scale, alignment, cell_xp or {}), None)


def _section(title: str, intro: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown section: ``## title``, the ``intro`` paragraph (none when empty), a table of ``columns`` and ``rows``."""
    lines = [f"## {title}", ""] + ([intro, ""] if intro else [])
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _gap_share_section(report: ConventionReport) -> list[str]:
    if (g := report.gap_share) is None:
        return []
    intro = (f"Reference: pool `{g.reference}`, plain XP {g.plain_xp:.2f}, best-aligned XP {g.aligned_xp:.2f} "
             "(held-out decks). Share = (cell XP - plain) / (aligned - plain); 1 closes all that a colour relabelling "
             "can close, above 1 more than it.")
    if g.refreshed_by is not None:
        intro += f" The shares were computed again from this folder's tables by `{g.refreshed_by}` (nothing played)."
    rows = [(label, f"{share:.2f}") for label, share in g.cells.items()]
    return _section("Share of the colour-alignable gap", intro, ("cell", "share"), rows)


def _alignment_section(report: ConventionReport) -> list[str]:
    if not report.alignment:
        return []
    intro = ("How much of the gap between cross-play and self-play a colour relabelling closes: a design that isolates "
             "the colour choice brings best-aligned XP up to self-play.")
    rows = []
    for pool, a in report.alignment.items():
        agents = report.agents.get(pool, {})
        self_play = sum(x.self_play for x in agents.values()) / len(agents) if agents else math.nan
        rows.append((pool, len(a.plain), f"{a.plain_xp:.2f}", f"{a.aligned_xp:.2f}", f"{self_play:.2f}"))
    columns = ("pool", "agents", "plain XP", "best-aligned XP", "self-play (mean)")
    return _section("Best-aligned cross-play of self-play pools", intro, columns, rows)


def _ceiling_section(report: ConventionReport) -> list[str]:
    if not report.ceiling:
        return []
    intro = ("A pool of an agent's colour-relabelled copies cross-plays at the mean with relabelled copies; symmetrized "
             "over every colour permutation the copies are one agent, which cross-plays at its self-play.")
    rows = [(pool, name, f"{c.self_play:.2f}", f"{c.relabelled_copies:.2f}", f"{c.symmetrized_self_play:.2f}")
            for pool, agents in report.ceiling.items() for name, c in agents.items()]
    columns = ("pool", "agent", "self-play", "with relabelled copies", "symmetrized self-play")
    return _section("The ceiling of test-time symmetrization", intro, columns, rows)


def _shared_factor_section(report: ConventionReport) -> list[str]:
    if not report.shared_factor:
        return []
    rows = [(name, s.factor, f"{s.shared_xp:.2f} ({s.shared_pairs})", f"{s.other_xp:.2f} ({s.other_pairs})")
            for name, s in report.shared_factor.items()]
    columns = ("pools", "factor", "XP, shared (pairs)", "XP, not shared (pairs)")
    return _section("Cross-play between pools by shared factor", "", columns, rows)


def _hint_map_section(report: ConventionReport) -> list[str]:
    intro = ("The slot played most often right after each colour hint and each rank hint in greedy self-play "
             "(-1: never answered by a play), the share of colour-hint plays of the taught slot pi(c), and the greedy "
             "disagreement: the share of its self-play states where the agent in a colour-relabelled world picks another "
             "move (mean over the non-identity colour permutations; 0 is equivariant).")
    rows = [(pool, name, list(a.pi), list(a.colour_hint_slot), list(a.rank_hint_slot), f"{a.taught_slot_share:.2f}",
             f"{a.greedy_disagreement:.2f}", f"{a.self_play:.2f}")
            for pool, agents in report.agents.items() for name, a in agents.items()]
    columns = ("pool", "agent", "pi", "colour hint -> slot", "rank hint -> slot", "taught-slot share", "greedy disagreement",
               "self-play")
    return _section("Hint maps", intro, columns, rows)


def render_conventions(report: ConventionReport) -> str:
    """The report as Markdown."""
    lines = [f"# What explains cross-play: conventions at scale `{report.scale}`", "",
             f"{report.games} greedy games per measurement (alignment: per ordered pair and colour permutation, "
             "the element chosen on half of the decks and scored on the other half).", ""]
    for section in (_gap_share_section, _alignment_section, _ceiling_section, _shared_factor_section):
        if part := section(report):
            lines += [*part, ""]
    lines += _hint_map_section(report)
    if report.command:
        lines += ["", f"Produced by `{report.command}`."]
    return "\n".join(lines) + "\n"


def convention_pools(scale: str, agents: str | Path | None = None) -> tuple[dict[str, list[Path]], dict[Path, str]]:
    """The pools the conventions report reads at ``scale`` (one of :data:`ALIGNED_POOLS`): every pool of its shipped agents
    (or ``agents``: a directory of pools), with each agent's matching key where a pool spans folders (else none);
    :class:`~.specs.ReproduceError` naming the argument at fault otherwise."""
    from eqc.domains.hanabi.reproduce.run import pool_agents, shipped_agents
    from eqc.domains.hanabi.reproduce.specs import SCALES

    _check_scale(scale)
    where = Path(agents) if agents is not None else shipped_agents(SCALES[scale])
    if where is None or not where.is_dir():
        raise ReproduceError("agents", f"no pools at {str(where)!r}: pass agents=DIR (--agents), a directory of <pool>/ agent directories")
    scale_spec = SCALES[scale]
    names = sorted({p.name for p in where.iterdir() if p.is_dir()} | set(scale_spec.pool_folders) & set(ALIGNED_POOLS[scale]))
    listed = {name: pool_agents(where, scale_spec, name) for name in names}
    runs = {name: [run for _, run in agents] for name, agents in listed.items() if agents}
    spans = any(len(scale_spec.pool_folders.get(name, (name,))) > 1 for name in names)  # then the name alone is ambiguous
    return runs, ({run: key for agents in listed.values() for key, run in agents} if spans else {})


def _cell_xp(out: Path) -> dict[str, float]:
    """The XP of every cell of ``out/table1.json`` and ``out/table2.json`` that exists, by label;
    :class:`~.specs.ReproduceError` naming ``out`` when one is not a table record."""
    cell_xp = {}
    for table in ("table1", "table2"):
        if (out / f"{table}.json").is_file():
            try:
                cells = read_table(out / f"{table}.json").cells
            except ValueError as exc:  # not JSON, or not a table record
                raise ReproduceError("out", str(exc)) from exc
            cell_xp.update({label: cell.xp_mean for label, cell in cells.items()})
    return cell_xp


def _write(report: ConventionReport, out: Path) -> None:
    write_json_atomic(out / "conventions.json", report.to_json())
    write_text_atomic(out / "conventions.md", render_conventions(report))


def reproduce_conventions(scale: str, out: str | Path, *, agents: str | Path | None = None, device: str = "cpu",
                          precision: str = "auto", games: int = CONVENTION_GAMES, command: list[str] | None = None,
                          log: Callable[[str], None] = print) -> ConventionReport:
    """The report for every pool of ``scale``'s shipped agents (or ``agents``: a directory of pools; :func:`convention_pools`),
    written to ``out/conventions.json`` and ``.md``; the cells of ``out/table1.json`` and ``out/table2.json``, where they
    exist (``eqc hanabi reproduce table1|table2`` into the same ``out``), get their share of the alignable gap."""
    runs, keys = convention_pools(scale, agents)
    out = Path(out)
    cell_xp = _cell_xp(out)
    report = convention_report(scale, runs, device=device, precision=precision, games=games, cell_xp=cell_xp, keys=keys, log=log)
    report = replace(report, command=None if command is None else " ".join(command))
    out.mkdir(parents=True, exist_ok=True)
    _write(report, out)
    return report


def refresh_conventions(scale: str, out: str | Path, *, games: int = CONVENTION_GAMES,
                        command: list[str] | None = None) -> ConventionReport:
    """The report in ``out/conventions.json`` (of ``scale``, measured with ``games`` games) with its gap shares computed
    again from the tables now in ``out`` (``table1.json``, ``table2.json``), recorded as refreshed by ``command`` (None:
    the Python call); every measured section and the command that measured them kept, nothing played. Rewrites
    ``out/conventions.json`` and ``.md``; refuses (:class:`~.specs.ReproduceError` naming ``reuse`` or ``out``) before
    writing anything when the report is missing, of another scale or games count, or a file is not its record."""
    _check_scale(scale)
    out = Path(out)
    path = out / "conventions.json"
    if not path.is_file():
        raise ReproduceError("reuse", f"no conventions report to refresh at {str(path)!r}: measure it first (without --reuse)")
    try:
        report = read_conventions(path)
    except ValueError as exc:  # not JSON, or not a conventions report
        raise ReproduceError("out", str(exc)) from exc
    if (report.scale, report.games) != (scale, games):
        raise ReproduceError("reuse", f"{path} is the report at scale {report.scale!r} with {report.games} games per measurement, "
                             f"not at {scale!r} with {games}: measure it again (without --reuse)")
    shares = _gap_share(scale, report.alignment, _cell_xp(out))
    refreshed_by = " ".join(command) if command is not None else "eqc.domains.hanabi.reproduce.refresh_conventions(...)"
    report = replace(report, gap_share=None if shares is None else replace(shares, refreshed_by=refreshed_by))
    _write(report, out)
    return report
