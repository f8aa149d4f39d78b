"""A reproduced table as Markdown: what was measured, on how many units, and what the tests can and cannot say."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["format_number", "render_markdown"]


def format_number(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals, or n/a for a missing or NaN value."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None or rate != rate else f"{100 * rate:.1f}%"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.2e}"


def render_markdown(record: dict[str, Any]) -> str:
    """The Markdown of a ``reproduce`` record (see :mod:`eqc.domains.hanabi.reproduce.run`)."""
    sizes = ", ".join(f"`{p}` {n}" for p, n in record["agents_per_pool"].items())
    lines = [
        f"# {record['table']}: {record['title']}",
        "",
        f"Scale `{record['scale']}`; agents ({record['agents_source']}): {sizes}. {record['games_per_pair']} games per ordered pair "
        "of distinct agents on common decks, seats alternating. XP is the mean over pairs of distinct agents, with its standard "
        "error over ordered pairs (the paper's convention, for comparison) and over unordered pairs (i with j and j with i "
        "averaged: the unit of evidence).",
        "",
        "| cell | pool | agents | eqc XP | SEM (ordered) | SEM (unordered) | eqc bomb-out | paper XP | paper bomb-out |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, paper in record["paper"].items():
        r = record["cells"].get(label)
        ours = ("n/a",) * 5 if r is None else (
            str(r["agents"]), *(format_number(r[k]) for k in ("xp_mean", "xp_sem", "xp_sem_unordered")), _rate(r["bomb_out_rate"]))
        pool = r["pool"] if r else "not available"
        lines.append(f"| {label} | {pool} | {' | '.join(ours)} | {format_number(paper['xp_mean'])} ± {format_number(paper['xp_sem'])} | "
                     f"{_rate(paper.get('bomb_out_rate'))} |")
    for label, r in record["cells"].items():
        if label not in record["paper"]:
            lines.append(f"| {label} | {r['pool']} | {r['agents']} | {format_number(r['xp_mean'])} | {format_number(r['xp_sem'])} | "
                         f"{format_number(r['xp_sem_unordered'])} | {_rate(r['bomb_out_rate'])} | n/a | n/a |")
    lines += ["", "Pools:", ""] + [f"- `{name}`: {text}" for name, text in record["pools"].items()]
    if record["paper_only_pools_skipped"]:
        lines += ["", f"Pools run at paper scale only (not at this scale): {', '.join(record['paper_only_pools_skipped'])}."]
    lines += _relabelled_lines(record)
    lines += _test_lines(record)
    lines += ["", f"Produced by `{record['command'] or 'eqc.domains.hanabi.reproduce.reproduce(...)'}` with eqc "
              f"{record['versions']['eqc']}, torch {record['versions']['torch']}."]
    reused = [label for label, r in record["cells"].items() if r.get("reused")]
    if reused:
        lines.append(f"Cells taken from an earlier run of this eqc on the same agent files (`--reuse`): {', '.join(reused)}.")
    lines.append("")
    return "\n".join(lines)


def _relabelled_lines(record: dict[str, Any]) -> list[str]:
    if not record["relabelled"]:
        return []
    first = next(iter(record["relabelled"].values()))
    lines = ["", "Colour symmetry breaking: each agent's relabelled-partner loss (plain self-play minus self-play with a copy "
             f"of itself in a colour-relabelled world, {first['elements']} S5 elements x {first['games']} games, same decks; "
             "`eqc hanabi relabelled`) and its share of colour hints among hints. A loss near 0 means the agent's "
             "conventions do not depend on colour names: then no colour symmetrizer has anything to repair.", "",
             "| pool | agents | mean loss ± SEM over agents | per agent (self-play, loss, colour-hint share) |", "|---|---:|---:|---|"]
    for pool, r in record["relabelled"].items():
        per = "; ".join(f"{a['self_play']:.1f}, {a['loss']:+.2f}, {a['colour_hint_share']:.0%}" for a in r["agents"])
        lines.append(f"| {pool} | {len(r['agents'])} | {r['loss_mean']:+.2f} ± {format_number(r['loss_sem'])} | {per} |")
    return [*lines, "", _breaking_verdict(record["relabelled"])]


BREAKING_LOSS = 2.0
"""A relabelled-partner loss of at least this many points counts as colour symmetry breaking."""


def _breaking_verdict(relabelled: dict[str, Any]) -> str:
    """Which pools hold an agent that breaks the colour symmetry (loss >= ``BREAKING_LOSS``), from the table above."""
    worst = {pool: max(a["loss"] for a in r["agents"]) for pool, r in relabelled.items()}
    breaking = sorted(pool for pool, loss in worst.items() if loss >= BREAKING_LOSS)
    largest = ", ".join(f"`{pool}` {loss:+.2f}" for pool, loss in worst.items())
    if not breaking:
        return (f"No agent loses {BREAKING_LOSS:g} points or more to a colour-relabelled partner (largest loss per pool: "
                f"{largest}): no colour symmetry breaking at this scale, so no difference in the tables above can come "
                "from repairing it.")
    return (f"Pools with an agent that breaks the colour symmetry (a loss of {BREAKING_LOSS:g} points or more): "
            f"{', '.join(f'`{p}`' for p in breaking)} (largest loss per pool: {largest}).")


def _test_lines(record: dict[str, Any]) -> list[str]:
    lines = ["", "Tests (`eqc.evaluation.compare_pools`, H1: the first cell is higher). The unit is the unordered pair of "
             "agents; cells of the same agents are compared paired (sign flips of per-pair differences), cells of different "
             "pools by a permutation test of pair means. With few agents the smallest attainable p is large whatever the "
             "games per pair; it is given beside each p.", ""]
    if not record["tests"]:
        return [*lines, "No test: too few cells with at least 2 agents."]
    lines += _test_table(record["tests"], lambda d: f"{d:+.2f}")
    lines += ["", "The same tests on bomb-out rates (H1: the first cell's pairs bomb out less often; difference in "
              "percentage points, first minus second):", ""]
    return lines + _test_table(record.get("bomb_out_tests", {}), lambda d: f"{100 * d:+.1f}")


def _test_table(tests: dict[str, dict[str, Any]], difference: Callable[[float], str]) -> list[str]:
    lines = ["| test | kind | pairs | difference | p | how | smallest attainable p |", "|---|---|---:|---:|---:|---|---:|"]
    for name, t in tests.items():
        kind = "paired" if t["paired"] else "unpaired"
        how = "exact" if t["exact"] else f"Monte Carlo {t['resamples']:,}, 99% [{_p(t['interval'][0])}, {_p(t['interval'][1])}]"
        units = f"{t['units'][0]}" if t["paired"] else f"{t['units'][0]} vs {t['units'][1]}"
        lines.append(f"| {name} | {kind} | {units} | {difference(t['difference'])} | {_p(t['p_value'])} | {how} | {_p(t['min_p'])} |")
    return lines
