"""The reports beside the tables as typed values, written as ``conventions.json``, ``entropy.json`` and ``codes.json``
and read back: :class:`ConventionReport` (:mod:`.conventions`), :class:`EntropyReport` (:mod:`.entropy`) and
:class:`CodeReport` (:mod:`.codes`), each with its parts.

Records of :mod:`.schema`: ``to_json()`` writes the keys in the order below, ``from_json(data)`` refuses a malformed or
foreign file with a :class:`~.schema.RecordError` naming the key. A number that JSON writes as null is NaN (a share
without a colour-hint play, an SE over too few agents, cross-play without such a pair, a matrix's diagonal).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.reproduce.record import NotRunTest
from eqc.domains.hanabi.reproduce.schema import (
    Fields,
    Matrix,
    Record,
    comparison,
    matrix_rows,
    read_float,
    read_int,
    read_mapping,
    read_record,
    read_str,
)
from eqc.domains.hanabi.xp.alignment import AlignedCrossPlay
from eqc.domains.hanabi.xp.codes import AgentCodes
from eqc.evaluation import PoolComparison, PoolSummary
from eqc.io import json_safe

__all__ = ["Alignment", "Ceiling", "CellCodes", "CodeReport", "CodeTest", "ConventionReport", "EntropyAgent", "EntropyPool",
           "EntropyReport", "GapShare", "HintMap", "PairsXP", "SampledTest", "SharedFactor", "XPByCode", "read_codes",
           "read_conventions", "read_entropy"]

Counts = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class HintMap(Record):
    """An agent's hint maps: its taught colour-to-slot map ``pi`` (empty: none), greedy self-play, per colour and per
    rank the slots played right after its hint (counts, and the most frequent: -1 when never), the share of colour-hint
    plays of the taught slot (NaN: none), how many hints of each kind, and its greedy disagreement."""

    pi: tuple[int, ...]
    self_play: float
    colour_hint_slot_counts: Counts
    rank_hint_slot_counts: Counts
    colour_hint_slot: tuple[int, ...]
    rank_hint_slot: tuple[int, ...]
    taught_slot_share: float
    colour_hints: int
    rank_hints: int
    greedy_disagreement: float

    @classmethod
    def _fields(cls, f: Fields) -> HintMap:
        return cls(f.items("pi", read_int), f.number("self_play"), f.integer_matrix("colour_hint_slot_counts"),
                   f.integer_matrix("rank_hint_slot_counts"), f.items("colour_hint_slot", read_int), f.items("rank_hint_slot", read_int),
                   f.number("taught_slot_share"), f.integer("colour_hints"), f.integer("rank_hints"), f.number("greedy_disagreement"))


@dataclass(frozen=True)
class Alignment(Record):
    """A pool's plain and best-aligned cross-play (:class:`~eqc.domains.hanabi.xp.alignment.AlignedCrossPlay`): its
    group, decks per ordered pair and element and how many were held out, the means and the per-pair matrices."""

    group: str
    games: int
    held_out_games: int
    plain_xp: float
    aligned_xp: float
    plain: Matrix
    aligned: Matrix
    element: Counts

    @classmethod
    def of(cls, result: AlignedCrossPlay) -> Alignment:
        """The record of ``result``."""
        return cls(result.group, result.games, result.games - result.games // 2, result.mean("plain"), result.mean("aligned"),
                   matrix_rows(result.plain), matrix_rows(result.aligned), tuple(map(tuple, result.element.tolist())))

    @classmethod
    def _fields(cls, f: Fields) -> Alignment:
        return cls(f.text("group"), f.integer("games"), f.integer("held_out_games"), f.number("plain_xp"), f.number("aligned_xp"),
                   f.matrix("plain"), f.matrix("aligned"), f.integer_matrix("element"))


@dataclass(frozen=True)
class Ceiling(Record):
    """An agent's self-play, its mean score with colour-relabelled copies of itself, and the self-play of the agent
    symmetrized over every colour permutation."""

    self_play: float
    relabelled_copies: float
    symmetrized_self_play: float

    @classmethod
    def _fields(cls, f: Fields) -> Ceiling:
        return cls(f.number("self_play"), f.number("relabelled_copies"), f.number("symmetrized_self_play"))


@dataclass(frozen=True)
class SharedFactor(Record):
    """Plain cross-play between two pools split by whether a pair's agents share ``factor``: the mean over each side's
    ordered pairs (NaN: none) and how many, at ``games_per_pair``."""

    factor: str
    games_per_pair: int
    shared_xp: float
    shared_pairs: int
    other_xp: float
    other_pairs: int

    @classmethod
    def _fields(cls, f: Fields) -> SharedFactor:
        return cls(f.text("factor"), f.integer("games_per_pair"), f.number("shared_xp"), f.integer("shared_pairs"),
                   f.number("other_xp"), f.integer("other_pairs"))


@dataclass(frozen=True)
class GapShare(Record):
    """Each table cell's share of the reference pool's colour-alignable gap, ``(XP - plain) / (aligned - plain)``
    (:func:`~eqc.domains.hanabi.xp.alignment.alignable_share`), with that pool's plain and aligned XP;
    ``refreshed_by``: the command that computed the shares again from later tables, nothing played
    (:func:`~.conventions.refresh_conventions`; None, not written: computed when the report was measured)."""

    reference: str
    plain_xp: float
    aligned_xp: float
    cells: dict[str, float]
    refreshed_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        return data if self.refreshed_by is not None else {k: v for k, v in data.items() if k != "refreshed_by"}

    @classmethod
    def _fields(cls, f: Fields) -> GapShare:
        return cls(f.text("reference"), f.number("plain_xp"), f.number("aligned_xp"), f.mapping("cells", read_float),
                   f.text("refreshed_by") if f.has("refreshed_by") else None)


@dataclass(frozen=True)
class ConventionReport(Record):
    """The conventions report (``conventions.json``; :mod:`.conventions` says how each part is measured).

    Attributes:
        scale, games: at which scale, greedy games per measurement.
        agents: each pool's agents' hint maps, by agent; alignment: each self-play pool's best-aligned cross-play.
        ceiling: each such pool's agents' symmetrization ceiling, by agent; shared_factor: cross-play between two
            pools by shared factor, by ``"<a> x <b>"``.
        gap_share: the table cells' shares of the alignable gap (None: no table, or no reference pool; not written).
        command: the command line that produced it (None: the Python call).
    """

    scale: str
    games: int
    agents: dict[str, dict[str, HintMap]]
    alignment: dict[str, Alignment]
    ceiling: dict[str, dict[str, Ceiling]]
    shared_factor: dict[str, SharedFactor]
    gap_share: GapShare | None
    command: str | None

    def to_json(self) -> dict[str, Any]:
        """The report as JSON (``gap_share`` only when there is one)."""
        data = super().to_json()
        return data if self.gap_share is not None else {k: v for k, v in data.items() if k != "gap_share"}

    @classmethod
    def _fields(cls, f: Fields) -> ConventionReport:
        return cls(f.text("scale"), f.integer("games"), f.mapping("agents", lambda v, w: read_mapping(v, w, HintMap.from_json)),
                   f.mapping("alignment", Alignment.from_json), f.mapping("ceiling", lambda v, w: read_mapping(v, w, Ceiling.from_json)),
                   f.mapping("shared_factor", SharedFactor.from_json),
                   f.value("gap_share", GapShare.from_json) if f.has("gap_share") else None, f.optional_text("command"))


@dataclass(frozen=True)
class EntropyAgent(Record):
    """One IPPO agent of the entropy report: its pool and name, entropy coefficient, self-play greedy and as sampled,
    greedy disagreement, policy distance and entropy over ``states`` states of its greedy self-play."""

    pool: str
    agent: str
    entropy_coef: float
    self_play_greedy: float
    self_play_sampled: float
    greedy_disagreement: float
    policy_distance: float
    policy_entropy: float
    states: int

    @classmethod
    def _fields(cls, f: Fields) -> EntropyAgent:
        return cls(f.text("pool"), f.text("agent"), f.number("entropy_coef"), f.number("self_play_greedy"),
                   f.number("self_play_sampled"), f.number("greedy_disagreement"), f.number("policy_distance"),
                   f.number("policy_entropy"), f.integer("states"))


def _summary(value: object, where: str) -> PoolSummary:
    f = Fields(value, where)
    summary = PoolSummary(f.number("mean"), f.number("sem"), f.integer("agents"), f.integer("ordered_pairs"))
    f.close()
    return summary


@dataclass(frozen=True)
class EntropyPool(Record):
    """A pool's cross-play between its agents, greedy and as sampled (mean ± jackknife SE over agents)."""

    agents: int
    greedy_xp: PoolSummary
    sampled_xp: PoolSummary

    @classmethod
    def _fields(cls, f: Fields) -> EntropyPool:
        return cls(f.integer("agents"), f.value("greedy_xp", _summary), f.value("sampled_xp", _summary))


@dataclass(frozen=True)
class SampledTest(Record):
    """A test of sampled cross-play between two pools (``pools``: better, worse), its role, verdict and comparison."""

    pools: tuple[str, str]
    role: str
    verdict: str
    comparison: PoolComparison

    def to_json(self) -> dict[str, Any]:
        """The test as JSON: the comparison's fields after the verdict."""
        return json_safe({"pools": self.pools, "role": self.role, "verdict": self.verdict, **self.comparison.as_dict()})

    @classmethod
    def _fields(cls, f: Fields) -> SampledTest:
        return cls(f.pair("pools", read_str), f.text("role"), f.text("verdict"), comparison(f))


@dataclass(frozen=True)
class EntropyReport(Record):
    """The entropy report (``entropy.json``; :mod:`.entropy` says how each part is measured).

    Attributes:
        scale, games_per_pair, equivariance_games, group: at which scale, games per ordered pair, self-play games whose
            states measure equivariance, over which colour group.
        agents: every agent; pools: each pool's cross-play; sampled_tests: the tests of sampled cross-play by H1.
        greedy_matrix, sampled_matrix: every agent's mean score with every other (rows and columns in ``order``:
            ``<pool>/<agent>``), greedy and as sampled.
        command: the command line that produced it (None: the Python call).
    """

    scale: str
    games_per_pair: int
    equivariance_games: int
    group: str
    agents: tuple[EntropyAgent, ...]
    pools: dict[str, EntropyPool]
    sampled_tests: dict[str, SampledTest]
    greedy_matrix: Matrix
    sampled_matrix: Matrix
    order: tuple[str, ...]
    command: str | None

    @classmethod
    def _fields(cls, f: Fields) -> EntropyReport:
        return cls(f.text("scale"), f.integer("games_per_pair"), f.integer("equivariance_games"), f.text("group"),
                   f.items("agents", EntropyAgent.from_json), f.mapping("pools", EntropyPool.from_json),
                   f.mapping("sampled_tests", SampledTest.from_json), f.matrix("greedy_matrix"), f.matrix("sampled_matrix"),
                   f.items("order", read_str), f.optional_text("command"))


def _codes(value: object, where: str) -> AgentCodes:
    f = Fields(value, where)
    codes = AgentCodes(f.integer("slot_code"), f.items("rank_hint_code", read_int), f.number("self_play"), f.integer("colour_hint_plays"))
    f.close()
    return codes


@dataclass(frozen=True)
class PairsXP(Record):
    """Cross-play over some ordered pairs of a cell: the mean (NaN: no such pair) and how many."""

    xp: float
    pairs: int

    @classmethod
    def _fields(cls, f: Fields) -> PairsXP:
        return cls(f.number("xp"), f.integer("pairs"))


@dataclass(frozen=True)
class XPByCode(Record):
    """A cell's cross-play over pairs whose codes are equal and over pairs whose codes differ
    (:func:`~.post_hoc.xp_by_code`)."""

    same: PairsXP
    different: PairsXP

    @classmethod
    def _fields(cls, f: Fields) -> XPByCode:
        return cls(f.value("same", PairsXP.from_json), f.value("different", PairsXP.from_json))


@dataclass(frozen=True)
class CellCodes(Record):
    """A cell's codes: its agents (matching keys, else indices), each one's codes, how many agents have each slot code
    (most common first), the same-code rates, cross-play by slot code and the cell's XP."""

    agents: tuple[str, ...]
    codes: tuple[AgentCodes, ...]
    slot_code_counts: dict[str, int]
    same_slot_code_rate: float
    same_rank_hint_code_rate: float
    same_both_codes_rate: float
    xp_by_slot_code: XPByCode
    xp: float

    @classmethod
    def _fields(cls, f: Fields) -> CellCodes:
        return cls(f.items("agents", read_str), f.items("codes", _codes), f.mapping("slot_code_counts", read_int),
                   f.number("same_slot_code_rate"), f.number("same_rank_hint_code_rate"), f.number("same_both_codes_rate"),
                   f.value("xp_by_slot_code", XPByCode.from_json), f.number("xp"))


@dataclass(frozen=True)
class CodeTest(Record):
    """A table's test run again on the same-slot-code matrix: its cells, kind, comparison and verdict."""

    cells: tuple[str, str]
    kind: str
    comparison: PoolComparison
    verdict: str

    def to_json(self) -> dict[str, Any]:
        """The test as JSON: the comparison's fields between the kind and the verdict."""
        return json_safe({"cells": self.cells, "kind": self.kind, **self.comparison.as_dict(), "verdict": self.verdict})

    @classmethod
    def _fields(cls, f: Fields) -> CodeTest:
        return cls(f.pair("cells", read_str), f.text("kind"), comparison(f), f.text("verdict"))


@dataclass(frozen=True)
class CodeReport(Record):
    """The code report (``codes.json``; :mod:`.codes` says how each part is measured): of ``table`` at ``scale``, codes
    from ``games`` self-play games, each cell's codes, the table's tests on the same-code matrix by ``"<a> vs <b>"``,
    the table's tests not run, and the command line that produced it (None: the Python call)."""

    table: str
    scale: str
    games: int
    cells: dict[str, CellCodes]
    tests: dict[str, CodeTest]
    not_run_tests: dict[str, NotRunTest]
    command: str | None

    @classmethod
    def _fields(cls, f: Fields) -> CodeReport:
        return cls(f.text("table"), f.text("scale"), f.integer("games"), f.mapping("cells", CellCodes.from_json),
                   f.mapping("tests", CodeTest.from_json), f.mapping("not_run_tests", NotRunTest.from_json), f.optional_text("command"))


def read_conventions(path: str | Path) -> ConventionReport:
    """The conventions report at ``path``; ``FileNotFoundError`` or :class:`~.schema.RecordError` naming the file and key."""
    return read_record(ConventionReport, path, "conventions report")


def read_entropy(path: str | Path) -> EntropyReport:
    """The entropy report at ``path``; ``FileNotFoundError`` or :class:`~.schema.RecordError` naming the file and key."""
    return read_record(EntropyReport, path, "entropy report")


def read_codes(path: str | Path) -> CodeReport:
    """The code report at ``path``; ``FileNotFoundError`` or :class:`~.schema.RecordError` naming the file and key."""
    return read_record(CodeReport, path, "code report")
