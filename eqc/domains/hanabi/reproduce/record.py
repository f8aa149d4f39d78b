"""A reproduced table as typed values: :class:`TableRecord` and its parts, written as ``<table>.json`` and read back.

Records of :mod:`.schema`: ``to_json()`` writes the keys in the order below, ``from_json(data)`` refuses a malformed or
foreign file with a :class:`~.schema.RecordError` naming the key. A number that JSON writes as null is NaN (an SE over
too few agents, the paper's missing bomb-out rates), except where a field says None: ``TableTest.adjusted_p`` (not
primary), ``RelabelledAgent.greedy_disagreement`` (not measured).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eqc.domains.hanabi.reproduce.schema import Fields, Matrix, Record, comparison, read_float, read_int, read_record, read_str
from eqc.evaluation import PoolComparison
from eqc.io import json_safe

__all__ = ["CellResult", "NotRunTest", "PaperNumbers", "RelabelledAgent", "RelabelledPool", "TableRecord", "TableTest",
           "UnionMatrices", "read_table"]


@dataclass(frozen=True)
class CellResult(Record):
    """One cell's cross-play: XP mean over ordered pairs of distinct agents, its jackknife SE over agents and the SEM
    over ordered pairs (the paper's), bomb-out, perfect-score and self-play rates, all derived from the per-pair
    matrices it keeps. ``reused``: taken from an earlier run (``--reuse``; written only when true); ``matching``: its
    agents' matching keys (``<folder index>/<agent name>``; None for OBL cells and a cell's saved result: not written)."""

    xp_mean: float
    xp_sem: float
    xp_sem_ordered_pairs: float
    ordered_pairs: int
    bomb_out_rate: float
    perfect_rate: float
    sp_mean: float
    agents: int
    symmetrize: str | None
    hidden_scheme: str
    pool: str
    matrix: Matrix
    bomb_out_matrix: Matrix
    perfect_matrix: Matrix
    reused: bool = False
    matching: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The cell as JSON (a cell's saved result when neither reused nor matched)."""
        fields = {k: v for k, v in vars(self).items() if k not in ("reused", "matching")}
        return json_safe({**fields, **({"reused": True} if self.reused else {}),
                          **({} if self.matching is None else {"matching": self.matching})})

    @classmethod
    def _fields(cls, f: Fields) -> CellResult:
        return cls(f.number("xp_mean"), f.number("xp_sem"), f.number("xp_sem_ordered_pairs"), f.integer("ordered_pairs"),
                   f.number("bomb_out_rate"), f.number("perfect_rate"), f.number("sp_mean"), f.integer("agents"),
                   f.optional_text("symmetrize"), f.text("hidden_scheme"), f.text("pool"), f.matrix("matrix"),
                   f.matrix("bomb_out_matrix"), f.matrix("perfect_matrix"), f.flag("reused") if f.has("reused") else False,
                   f.items("matching", read_str) if f.has("matching") else None)


@dataclass(frozen=True)
class PaperNumbers(Record):
    """The paper's XP mean, SEM (over ordered pairs) and bomb-out rate (NaN where it gives none) for one cell."""

    xp_mean: float
    xp_sem: float
    bomb_out_rate: float

    @classmethod
    def _fields(cls, f: Fields) -> PaperNumbers:
        return cls(f.number("xp_mean"), f.number("xp_sem"), f.number("bomb_out_rate"))


@dataclass(frozen=True)
class TableTest(Record):
    """One test between two cells (:mod:`.comparisons`): ``cells`` (first, second), ``role`` ("primary" or
    "exploratory"), ``kind`` ("paired", "matched" or "unpaired"), the Holm-adjusted p of a primary test (None
    otherwise), the comparison, how its interval was made when it is not the comparison's own (``interval_kind``,
    e.g. "simultaneous (Bonferroni)"; None: not written), and the verdict read from its (adjusted) p and interval."""

    cells: tuple[str, str]
    role: str
    kind: str
    adjusted_p: float | None
    comparison: PoolComparison
    interval_kind: str | None
    verdict: str

    def to_json(self) -> dict[str, Any]:
        """The test as JSON: the comparison's fields between ``adjusted_p`` and ``interval_kind``."""
        return json_safe({"cells": self.cells, "role": self.role, "kind": self.kind, "adjusted_p": self.adjusted_p,
                          **self.comparison.as_dict(), **({} if self.interval_kind is None else {"interval_kind": self.interval_kind}),
                          "verdict": self.verdict})

    @classmethod
    def _fields(cls, f: Fields) -> TableTest:
        cells, role, kind, adjusted = f.pair("cells", read_str), f.text("role"), f.text("kind"), f.optional_number("adjusted_p")
        return cls(cells, role, kind, adjusted, comparison(f), f.optional_text("interval_kind") if f.has("interval_kind") else None,
                   f.text("verdict"))


@dataclass(frozen=True)
class UnionMatrices(Record):
    """The matrices a test of two cells ran on: over every agent of both cells (rows ``a`` the first cell's, ``b`` the
    second's), the pairs between the cells included, of scores and of bomb-out rates."""

    cells: tuple[str, str]
    a: tuple[int, ...]
    b: tuple[int, ...]
    matrix: Matrix
    bomb_out_matrix: Matrix

    @classmethod
    def _fields(cls, f: Fields) -> UnionMatrices:
        return cls(f.pair("cells", read_str), f.items("a", read_int), f.items("b", read_int), f.matrix("matrix"),
                   f.matrix("bomb_out_matrix"))


@dataclass(frozen=True)
class NotRunTest(Record):
    """A test of the design that was not run (a cell's pool was not trained), with the reason."""

    cells: tuple[str, str]
    role: str
    reason: str

    @classmethod
    def _fields(cls, f: Fields) -> NotRunTest:
        return cls(f.pair("cells", read_str), f.text("role"), f.text("reason"))


@dataclass(frozen=True)
class RelabelledAgent(Record):
    """One agent's relabelled self-play (:class:`~eqc.domains.hanabi.xp.relabelled.RelabelledSelfPlay`'s fields) in a game
    of maximum ``max_score``, and its greedy disagreement (None: not measured)."""

    agent: str
    self_play: float
    relabelled: tuple[float, ...]
    loss: float
    loss_sem: float
    elements: tuple[int, ...]
    games: int
    colour_hint_share: float
    max_score: int
    greedy_disagreement: float | None

    @classmethod
    def _fields(cls, f: Fields) -> RelabelledAgent:
        return cls(f.text("agent"), f.number("self_play"), f.items("relabelled", read_float), f.number("loss"), f.number("loss_sem"),
                   f.items("elements", read_int), f.integer("games"), f.number("colour_hint_share"), f.integer("max_score"),
                   f.optional_number("greedy_disagreement"))


@dataclass(frozen=True)
class RelabelledPool(Record):
    """A pool's relabelled self-play: ``elements`` colour permutations x ``games``, each agent's row, the mean loss ± SEM
    over agents, and the mean greedy disagreement (None: none measured) over ``equivariance_games`` self-play games."""

    elements: int
    games: int
    agents: tuple[RelabelledAgent, ...]
    loss_mean: float
    loss_sem: float
    greedy_disagreement_mean: float | None
    equivariance_games: int

    @classmethod
    def _fields(cls, f: Fields) -> RelabelledPool:
        return cls(f.integer("elements"), f.integer("games"), f.items("agents", RelabelledAgent.from_json), f.number("loss_mean"),
                   f.number("loss_sem"), f.optional_number("greedy_disagreement_mean"), f.integer("equivariance_games"))


@dataclass(frozen=True)
class TableRecord(Record):
    """A reproduced table (``reproduce``'s ``<table>.json``; :mod:`.run` says how each part is computed).

    Attributes:
        table, title, scale: which table, its title, at which scale.
        games_per_pair, precision: games per ordered pair, the precision requested for every agent.
        agents_per_pool, agents_source: agents per pool read or trained, and where from.
        cells: each played cell by label; paper: the paper's numbers by label.
        tests, bomb_out_tests: the tests on XP and on bomb-out rates by name; test_matrices: what each pair of cells was
            tested on; not_run_tests: tests of the design not run, with the reason.
        relabelled: each pool's relabelled self-play; pools_not_at_this_scale: the table's pools not run at this scale.
        registered: the pre-registration its tests follow (None: not registered); matching_note: what a reader must know
            of its matched tests (None: nothing).
        pools: what each pool's agents are; pool_configs: the config each pool trained with (``TrainConfig.to_dict()``).
        command: the command line that produced it (None: the Python call); versions: eqc's and torch's.
    """

    table: str
    title: str
    scale: str
    games_per_pair: int
    precision: str
    agents_per_pool: dict[str, int]
    agents_source: str
    cells: dict[str, CellResult]
    paper: dict[str, PaperNumbers]
    tests: dict[str, TableTest]
    bomb_out_tests: dict[str, TableTest]
    test_matrices: dict[str, UnionMatrices]
    not_run_tests: dict[str, NotRunTest]
    relabelled: dict[str, RelabelledPool]
    pools_not_at_this_scale: tuple[str, ...]
    registered: str | None
    matching_note: str | None
    pools: dict[str, str]
    pool_configs: dict[str, dict[str, Any]]
    command: str | None
    versions: dict[str, str]

    @classmethod
    def _fields(cls, f: Fields) -> TableRecord:
        tests = TableTest.from_json
        return cls(
            f.text("table"), f.text("title"), f.text("scale"), f.integer("games_per_pair"), f.text("precision"),
            f.mapping("agents_per_pool", read_int), f.text("agents_source"), f.mapping("cells", CellResult.from_json),
            f.mapping("paper", PaperNumbers.from_json), f.mapping("tests", tests), f.mapping("bomb_out_tests", tests),
            f.mapping("test_matrices", UnionMatrices.from_json), f.mapping("not_run_tests", NotRunTest.from_json),
            f.mapping("relabelled", RelabelledPool.from_json), f.items("pools_not_at_this_scale", read_str),
            f.optional_text("registered"), f.optional_text("matching_note"), f.mapping("pools", read_str),
            f.mapping("pool_configs", _config), f.optional_text("command"), f.mapping("versions", read_str))


def _config(value: object, where: str) -> dict[str, Any]:
    """A recorded config: sections of keys (read as they are; ``TrainConfig.from_dict`` checks their meaning)."""
    sections = Fields(value, where)
    for name, section in sections.data.items():
        Fields(section, sections.at(name))
    return dict(sections.data)


def read_table(path: str | Path) -> TableRecord:
    """The table record in the file at ``path`` (``reproduce``'s ``<table>.json``); ``FileNotFoundError`` when there is
    none, :class:`~.schema.RecordError` naming the file and the key when it is not one."""
    return read_record(TableRecord, path, "table record")
