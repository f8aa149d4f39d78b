"""A reproduced table as typed values: :class:`TableRecord` and its parts, written as ``<table>.json`` and read back.

``to_json()`` gives the JSON object a record is written as (NaN as null, tuples as lists, keys in the order below);
``from_json(data)`` reads one back and raises :class:`RecordError` naming the key (``['cells']['OP']['xp_mean']``) and
what is wrong with it for a malformed or foreign file: a key missing or unexpected, a value of the wrong type. A number
that JSON writes as null is NaN (an SE over too few agents, the paper's missing bomb-out rates), except where a field
says None: ``TableTest.adjusted_p`` (not primary), ``RelabelledAgent.greedy_disagreement`` (not measured).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

import torch

from eqc.evaluation import PoolComparison
from eqc.io import json_safe, read_json

__all__ = ["CellResult", "NotRunTest", "PaperNumbers", "RecordError", "RelabelledAgent", "RelabelledPool", "TableRecord",
           "TableTest", "UnionMatrices", "matrix_rows", "read_table"]

T = TypeVar("T")
Matrix = tuple[tuple[float, ...], ...]


class RecordError(ValueError):
    """A JSON record that is not the record it should be; the message names the key and what is wrong with it."""


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


class _Object:
    """One JSON object of a record, read key by key: every error names the key's path (``['cells']['OP']``)."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, dict):
            raise RecordError(f"{path or 'the record'}: expected a JSON object, got {_describe(data)}")
        self.data, self.path, self.read = data, path, set[str]()

    def at(self, key: str) -> str:
        return f"{self.path}[{key!r}]"

    def get(self, key: str) -> object:
        if key not in self.data:
            raise RecordError(f"{self.at(key)}: missing")
        self.read.add(key)
        return self.data[key]

    def has(self, key: str) -> bool:
        return key in self.data

    def text(self, key: str) -> str:
        return _str(self.get(key), self.at(key))

    def optional_text(self, key: str) -> str | None:
        value = self.get(key)
        return None if value is None else _str(value, self.at(key))

    def integer(self, key: str) -> int:
        return _int(self.get(key), self.at(key))

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise RecordError(f"{self.at(key)}: expected true or false, got {_describe(value)}")
        return value

    def number(self, key: str) -> float:
        return _float(self.get(key), self.at(key))

    def optional_number(self, key: str) -> float | None:
        value = self.get(key)
        return None if value is None else _float(value, self.at(key))

    def items(self, key: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
        return _list(self.get(key), self.at(key), item)

    def pair(self, key: str, item: Callable[[object, str], T]) -> tuple[T, T]:
        values = self.items(key, item)
        if len(values) != 2:
            raise RecordError(f"{self.at(key)}: expected a list of 2, got {len(values)} items")
        return values[0], values[1]

    def matrix(self, key: str) -> Matrix:
        return self.items(key, lambda row, where: _list(row, where, _float))

    def mapping(self, key: str, item: Callable[[object, str], T]) -> dict[str, T]:
        value = _Object(self.get(key), self.at(key))
        return {name: item(entry, value.at(name)) for name, entry in value.data.items()}

    def close(self) -> None:
        """Refuse keys this record does not have (a foreign file, or one of another version)."""
        extra = [key for key in self.data if key not in self.read]
        if extra:
            raise RecordError(f"{self.at(extra[0])}: unexpected key (the record has no such field)")


def _str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {_describe(value)}")
    return value


def _int(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{where}: expected an integer, got {_describe(value)}")
    return value


def _float(value: object, where: str) -> float:
    """A number as JSON holds it (an integer stays one, so that it is written back as it was); null is NaN."""
    if value is None:
        return math.nan
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RecordError(f"{where}: expected a number (null for NaN), got {_describe(value)}")
    return value


def _list(value: object, where: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, got {_describe(value)}")
    return tuple(item(entry, f"{where}[{k}]") for k, entry in enumerate(value))


def _record_json(value: object) -> object:
    """``value`` with every record in it as its JSON (the dataclasses of this module, in dicts and tuples)."""
    if isinstance(value, _Record):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _record_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_record_json(v) for v in value]
    return value


class _Record:
    """A record's JSON: its fields in order (records in them as their JSON), NaN as null; read back by :meth:`from_json`."""

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object."""
        return json_safe({k: _record_json(v) for k, v in vars(self).items()})

    @classmethod
    def from_json(cls, data: object, path: str = "") -> Self:
        """The record the JSON object ``data`` holds (at ``path`` in an enclosing record); :class:`RecordError` naming the
        key and what is wrong otherwise."""
        fields = _Object(data, path)
        record = cls._fields(fields)
        fields.close()
        return record

    @classmethod
    def _fields(cls, f: _Object) -> Self:
        raise NotImplementedError


@dataclass(frozen=True)
class CellResult(_Record):
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
    def _fields(cls, f: _Object) -> CellResult:
        return cls(f.number("xp_mean"), f.number("xp_sem"), f.number("xp_sem_ordered_pairs"), f.integer("ordered_pairs"),
                   f.number("bomb_out_rate"), f.number("perfect_rate"), f.number("sp_mean"), f.integer("agents"),
                   f.optional_text("symmetrize"), f.text("hidden_scheme"), f.text("pool"), f.matrix("matrix"),
                   f.matrix("bomb_out_matrix"), f.matrix("perfect_matrix"), f.flag("reused") if f.has("reused") else False,
                   f.items("matching", _str) if f.has("matching") else None)


@dataclass(frozen=True)
class PaperNumbers(_Record):
    """The paper's XP mean, SEM (over ordered pairs) and bomb-out rate (NaN where it gives none) for one cell."""

    xp_mean: float
    xp_sem: float
    bomb_out_rate: float

    @classmethod
    def _fields(cls, f: _Object) -> PaperNumbers:
        return cls(f.number("xp_mean"), f.number("xp_sem"), f.number("bomb_out_rate"))


@dataclass(frozen=True)
class TableTest(_Record):
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
    def _fields(cls, f: _Object) -> TableTest:
        cells, role, kind, adjusted = f.pair("cells", _str), f.text("role"), f.text("kind"), f.optional_number("adjusted_p")
        comparison = PoolComparison(
            f.number("difference"), f.pair("means", _float), f.number("p_value"), f.number("min_p"), f.flag("exact"),
            f.integer("arrangements"), f.integer("resamples"), f.pair("agents", _int), f.flag("paired"), f.text("alternative"),
            f.number("se"), f.number("df"), f.pair("interval", _float), f.number("confidence"))
        return cls(cells, role, kind, adjusted, comparison, f.optional_text("interval_kind") if f.has("interval_kind") else None,
                   f.text("verdict"))


@dataclass(frozen=True)
class UnionMatrices(_Record):
    """The matrices a test of two cells ran on: over every agent of both cells (rows ``a`` the first cell's, ``b`` the
    second's), the pairs between the cells included, of scores and of bomb-out rates."""

    cells: tuple[str, str]
    a: tuple[int, ...]
    b: tuple[int, ...]
    matrix: Matrix
    bomb_out_matrix: Matrix

    @classmethod
    def _fields(cls, f: _Object) -> UnionMatrices:
        return cls(f.pair("cells", _str), f.items("a", _int), f.items("b", _int), f.matrix("matrix"),
                   f.matrix("bomb_out_matrix"))


@dataclass(frozen=True)
class NotRunTest(_Record):
    """A test of the design that was not run (a cell's pool was not trained), with the reason."""

    cells: tuple[str, str]
    role: str
    reason: str

    @classmethod
    def _fields(cls, f: _Object) -> NotRunTest:
        return cls(f.pair("cells", _str), f.text("role"), f.text("reason"))


@dataclass(frozen=True)
class RelabelledAgent(_Record):
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
    def _fields(cls, f: _Object) -> RelabelledAgent:
        return cls(f.text("agent"), f.number("self_play"), f.items("relabelled", _float), f.number("loss"), f.number("loss_sem"),
                   f.items("elements", _int), f.integer("games"), f.number("colour_hint_share"), f.integer("max_score"),
                   f.optional_number("greedy_disagreement"))


@dataclass(frozen=True)
class RelabelledPool(_Record):
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
    def _fields(cls, f: _Object) -> RelabelledPool:
        return cls(f.integer("elements"), f.integer("games"), f.items("agents", RelabelledAgent.from_json), f.number("loss_mean"),
                   f.number("loss_sem"), f.optional_number("greedy_disagreement_mean"), f.integer("equivariance_games"))


@dataclass(frozen=True)
class TableRecord(_Record):
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
    def _fields(cls, f: _Object) -> TableRecord:
        tests = TableTest.from_json
        return cls(
            f.text("table"), f.text("title"), f.text("scale"), f.integer("games_per_pair"), f.text("precision"),
            f.mapping("agents_per_pool", _int), f.text("agents_source"), f.mapping("cells", CellResult.from_json),
            f.mapping("paper", PaperNumbers.from_json), f.mapping("tests", tests), f.mapping("bomb_out_tests", tests),
            f.mapping("test_matrices", UnionMatrices.from_json), f.mapping("not_run_tests", NotRunTest.from_json),
            f.mapping("relabelled", RelabelledPool.from_json), f.items("pools_not_at_this_scale", _str),
            f.optional_text("registered"), f.optional_text("matching_note"), f.mapping("pools", _str),
            f.mapping("pool_configs", _config), f.optional_text("command"), f.mapping("versions", _str))


def _config(value: object, where: str) -> dict[str, Any]:
    """A recorded config: sections of keys (read as they are; ``TrainConfig.from_dict`` checks their meaning)."""
    sections = _Object(value, where)
    for name, section in sections.data.items():
        _Object(section, sections.at(name))
    return dict(sections.data)


def matrix_rows(values: torch.Tensor) -> Matrix:
    """A matrix of a record from a 2-d tensor (its rows as tuples of Python floats)."""
    return tuple(tuple(row) for row in values.tolist())


def read_table(path: str | Path) -> TableRecord:
    """The table record in the file at ``path`` (``reproduce``'s ``<table>.json``); ``FileNotFoundError`` when there is
    none, :class:`RecordError` naming the file and the key when it is not one."""
    try:
        return TableRecord.from_json(read_json(path, "table record"))
    except RecordError as exc:
        raise RecordError(f"{path} is not a table record: {exc}") from None
