"""A reproduced table as Markdown: what was measured, on how many units, and what the tests can and cannot say."""

from __future__ import annotations

import math
from collections.abc import Callable

from eqc.domains.hanabi.reproduce.comparisons import ALPHA
from eqc.domains.hanabi.reproduce.record import RelabelledAgent, RelabelledPool, TableRecord, TableTest
from eqc.domains.hanabi.xp.relabelled import BREAKING_LOSS, BREAKING_SHARE, breaks_colour_symmetry

__all__ = ["format_number", "render_markdown"]


def format_number(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals, or n/a for a missing or NaN value."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _rate(rate: float | None) -> str:
    return "n/a" if rate is None or rate != rate else f"{100 * rate:.1f}%"


def _p(p: float) -> str:
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.2e}"


def render_markdown(record: TableRecord) -> str:
    """The Markdown of a ``reproduce`` record (see :mod:`eqc.domains.hanabi.reproduce.run`)."""
    sizes = ", ".join(f"`{p}` {n}" for p, n in record.agents_per_pool.items())
    lines = [
        f"# {record.table}: {record.title}",
        "",
        f"Scale `{record.scale}`; agents ({record.agents_source}): {sizes}. {record.games_per_pair} games per ordered pair "
        "of distinct agents on common decks, seats alternating. XP is the mean over ordered pairs of distinct agents. The unit "
        "of evidence is the agent (the pairs of one agent share its conventions), so its standard error is a jackknife over "
        "agents (SE; n/a with fewer than 3 agents); beside it the SEM over ordered pairs as if they were independent, the "
        "paper's convention, to compare with its numbers.",
        "",
        "| cell | pool | agents | eqc self-play | eqc XP | SE (jackknife over agents) | SEM (ordered pairs, as the paper) | eqc bomb-out "
        "| pool's relabelled-partner loss | paper XP | paper bomb-out |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    labels = [*record.paper, *(label for label in record.cells if label not in record.paper)]
    for label in labels:
        r, paper = record.cells.get(label), record.paper.get(label)
        ours = ("n/a",) * 7 if r is None else (
            str(r.agents), *(format_number(x) for x in (r.sp_mean, r.xp_mean, r.xp_sem, r.xp_sem_ordered_pairs)),
            _rate(r.bomb_out_rate), _pool_loss(record.relabelled.get(r.pool)))
        theirs = ("n/a", "n/a") if paper is None else (
            f"{format_number(paper.xp_mean)} ± {format_number(paper.xp_sem)}", _rate(paper.bomb_out_rate))
        lines.append(f"| {label} | {r.pool if r else 'not available'} | {' | '.join(ours)} | {' | '.join(theirs)} |")
    lines += ["", "Pools:", ""] + [f"- `{name}`: {text}" for name, text in record.pools.items()]
    if record.pools_not_at_this_scale:
        lines += ["", f"Pools run at paper scale only (not at this scale): {', '.join(record.pools_not_at_this_scale)}."]
    lines += _relabelled_lines(record.relabelled)
    lines += _test_lines(record)
    lines += ["", f"Produced by `{record.command or 'eqc.domains.hanabi.reproduce.reproduce(...)'}` with eqc "
              f"{record.versions['eqc']}, torch {record.versions['torch']}."]
    reused = [label for label, r in record.cells.items() if r.reused]
    if reused:
        lines.append(f"Cells taken from an earlier run of this eqc on the same agent files (`--reuse`): {', '.join(reused)}.")
    lines.append("")
    return "\n".join(lines)


def _pool_loss(relabelled: RelabelledPool | None) -> str:
    """A pool's mean relabelled-partner loss ± SEM over its agents, as trained (G-OP agents unsymmetrized)."""
    return "n/a" if relabelled is None else f"{relabelled.loss_mean:+.2f} ± {format_number(relabelled.loss_sem)}"


def _relabelled_lines(relabelled: dict[str, RelabelledPool]) -> list[str]:
    if not relabelled:
        return []
    first = next(iter(relabelled.values()))
    lines = ["", "Colour symmetry breaking: each agent's relabelled-partner loss (plain self-play minus self-play with a copy "
             f"of itself in a colour-relabelled world, {first.elements} non-identity colour permutations x {first.games} "
             "games, same decks; `eqc hanabi relabelled`; agents as trained: G-OP agents without their test-time symmetrizer, "
             "agents trained symmetrized with theirs) and its share of colour hints among hints. A loss near 0 means the "
             "agent's conventions do not depend on colour names: then no colour symmetrizer has anything to repair. Beside "
             "it, how equivariant the agent is: its greedy disagreement, the share of the states of its own greedy self-play "
             f"({first.equivariance_games} games) where the agent in a world relabelled by a colour permutation "
             "picks another move, mean over every non-identity permutation (0: equivariant; `greedy_equivariance`; a recurrent "
             "agent's seats replay their whole histories in the relabelled world).", "",
             "| pool | agents | mean loss ± SEM over agents | agents breaking the symmetry | mean greedy disagreement | per agent "
             "(self-play, loss, colour-hint share, greedy disagreement) |", "|---|---:|---:|---:|---:|---|"]
    for pool, r in relabelled.items():
        per = "; ".join(f"{a.self_play:.1f}, {a.loss:+.2f}, {a.colour_hint_share:.0%}, {_share(a.greedy_disagreement)}" for a in r.agents)
        breaking = sum(_breaks(a) for a in r.agents)
        lines.append(f"| {pool} | {len(r.agents)} | {r.loss_mean:+.2f} ± {format_number(r.loss_sem)} | {breaking} | "
                     f"{_share(r.greedy_disagreement_mean)} | {per} |")
    return [*lines, "", _breaking_verdict(relabelled)]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _breaks(agent: RelabelledAgent) -> bool:
    return breaks_colour_symmetry(agent.loss, agent.self_play, agent.max_score)


def _breaking_verdict(relabelled: dict[str, RelabelledPool]) -> str:
    """Which pools hold an agent that breaks the colour symmetry (:func:`breaks_colour_symmetry`), from the table above."""
    worst = {pool: max(a.loss for a in r.agents) for pool, r in relabelled.items()}
    breaking = sorted(pool for pool, r in relabelled.items() if any(_breaks(a) for a in r.agents))
    largest = ", ".join(f"`{pool}` {loss:+.2f}" for pool, loss in worst.items())
    rule = (f"a loss of {BREAKING_LOSS:g} points or more, or of {BREAKING_SHARE:.0%} of self-play or more where the maximum "
            "score is below 25")
    if not breaking:
        return (f"No agent breaks the colour symmetry ({rule}; largest loss per pool: {largest}): so no difference in the "
                "tables above can come from repairing it.")
    named = ", ".join(f"`{p}`" for p in breaking)
    return f"Pools with an agent that breaks the colour symmetry ({rule}): {named} (largest loss per pool: {largest})."


def _test_lines(record: TableRecord) -> list[str]:
    registered = record.registered
    lines = ["", "Tests (`eqc.evaluation.compare_pools`). The unit is the agent: each test runs on the cross-play matrix over "
             "every agent of both cells, the pairs between the cells included, and relabels agents over it. Its kind follows "
             "the design: *paired* when both cells hold the same agents in two forms (plain and symmetrized: swaps of each "
             "agent's two forms); *matched* when the cells hold different agents matched one to one by stream seed and pi, or "
             "by seed (swaps of the two members of each matched set); *unpaired* otherwise (splits of the agents of both "
             "cells). Exact when the arrangements number at most the draws, else Monte Carlo (seeded). With few agents the "
             "smallest attainable p is large whatever the games per pair; it is given beside each p. H0 is that the two "
             "cells' agents (or the two members of each pair or matched set) are exchangeable: the same distribution of "
             "agents, not only the same mean XP. Under weak nulls (equal means, different structure: a clustered, OP-like "
             "pool against an additive one, skewed agent effects, a symmetrizer that erases conventions) the tests can reject "
             "more often than their level; `benchmarks/weak_nulls.py` measures how often (its figures: "
             "`docs/concepts/cross-play-statistics.md`), so a p-value near its level is weaker evidence than it reads "
             "wherever a cell of other-play or symmetrized agents meets one of self-play agents.",
             "",
             "*Primary* tests are the claims of the paper's table this table reproduces"
             + (f" (here: the tests registered in `{registered}` before its agents trained)" if registered else "")
             + f"; they are one Holm family, and each has a simultaneous (Bonferroni) interval at confidence 1 - {ALPHA:g}/m for "
             "m primary tests. *Exploratory* tests (the rest, and every bomb-out test) have unadjusted p-values and 95% "
             "intervals. Intervals are t intervals on a jackknife over agents (n/a with fewer than 3 agents per cell). Verdicts "
             f"read both the (adjusted) p and the interval: 'holds' when p < {ALPHA:g} and the interval excludes 0 on H1's side; "
             "'reversed' when the interval lies wholly on the other side; 'does not hold' when the difference is 0 or on the "
             f"other side; for a two-sided test 'differs' when p < {ALPHA:g} and the interval excludes 0; else 'cannot tell'.",
             ""]
    if record.matching_note:
        lines += [record.matching_note, ""]
    if not record.tests:
        return [*lines, "No test: too few cells with at least 2 agents."]
    lines += ["On XP (H1: the first cell is higher; 'vs': two-sided):", ""]
    lines += _test_table(record.tests, lambda d: f"{d:+.2f}")
    if record.not_run_tests:
        lines += ["", "Tests of the design not run (a primary one stays in the Holm family and the simultaneous intervals with "
                  "p = 1):", ""]
        lines += [f"- {name} ({t.role}): not run: {t.reason}." for name, t in record.not_run_tests.items()]
    lines += ["", "On bomb-out rates (H1: the first cell's pairs bomb out less often; differences in percentage points, first "
              "minus second):", ""]
    return lines + _test_table(record.bomb_out_tests, lambda d: f"{100 * d:+.1f}")


def _agents(test: TableTest) -> str:
    """The test's agents column: agents in two forms, matched sets, or the two cells' agents."""
    n_a, n_b = test.comparison.agents
    return {"paired": f"{n_a} x 2 forms", "matched": f"{n_a} matched sets"}.get(test.kind, f"{n_a} vs {n_b}")


def _test_table(tests: dict[str, TableTest], difference: Callable[[float], str]) -> list[str]:
    lines = ["| test | role | kind | agents | difference [interval] | interval | SE (jackknife) | p | Holm-adjusted p | how | "
             "smallest attainable p | verdict |", "|---|---|---|---:|---:|---|---:|---:|---:|---|---:|---|"]
    for name, t in tests.items():
        c = t.comparison
        low, high = c.interval
        interval = "n/a" if math.isnan(low) else f"[{difference(low)}, {difference(high)}]"
        simultaneous = (t.interval_kind or "").startswith("simultaneous")
        which = f"{100 * c.confidence:.1f}%".replace(".0%", "%") + (" simultaneous" if simultaneous else "")
        se = "n/a" if math.isnan(c.se) else difference(c.se).lstrip("+")
        unit = "splits" if t.kind == "unpaired" else "swaps"
        how = f"exact, {c.arrangements:,} {unit}" if c.exact else f"Monte Carlo, {c.resamples:,} of {c.arrangements:,} {unit}"
        adjusted = t.adjusted_p
        lines.append(f"| {name} | {t.role} | {t.kind} | {_agents(t)} | {difference(c.difference)} {interval} | {which} | {se} | "
                     f"{_p(c.p_value)} | {'-' if adjusted is None else _p(adjusted)} | {how} | {_p(c.min_p)} | {t.verdict} |")
    return lines
