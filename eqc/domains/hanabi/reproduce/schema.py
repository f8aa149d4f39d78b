"""JSON records read key by key: the base of ``reproduce``'s records (:mod:`.record`: a table; :mod:`.reports`: the
reports beside the tables).

A record is a frozen dataclass deriving :class:`Record`. ``to_json()`` gives the JSON object it is written as (its
fields in order, records and :class:`~eqc.io.JsonRecord` results in them as their JSON, NaN as null, tuples as lists);
``from_json(data)`` reads one back and raises :class:`RecordError` naming the key (``['cells']['OP']['xp_mean']``) and
what is wrong with it: a key missing or unexpected, a value of the wrong type. A number JSON writes as null is NaN,
except where a field says None. An integer read where a number is expected stays one, so that it is written back as
it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, TypeVar

import torch

from eqc.evaluation import PoolComparison
from eqc.io import JsonRecord, json_safe, read_json

__all__ = ["Fields", "Matrix", "Record", "RecordError", "comparison", "matrix_rows", "read_float", "read_int", "read_list",
           "read_mapping", "read_record", "read_str"]

T = TypeVar("T")
R = TypeVar("R", bound="Record")
Matrix = tuple[tuple[float, ...], ...]


class RecordError(ValueError):
    """A JSON record that is not the record it should be; the message names the key and what is wrong with it."""


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def read_str(value: object, where: str) -> str:
    """``value`` (at key path ``where``) as a string; :class:`RecordError` naming ``where`` otherwise."""
    if not isinstance(value, str):
        raise RecordError(f"{where}: expected a string, got {_describe(value)}")
    return value


def read_int(value: object, where: str) -> int:
    """``value`` as an integer (not a bool)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{where}: expected an integer, got {_describe(value)}")
    return value


def read_float(value: object, where: str) -> float:
    """``value`` as a number as JSON holds it (an integer stays one); null is NaN."""
    if value is None:
        return math.nan
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RecordError(f"{where}: expected a number (null for NaN), got {_describe(value)}")
    return value


def read_list(value: object, where: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
    """``value`` as a list, each entry read by ``item``."""
    if not isinstance(value, list):
        raise RecordError(f"{where}: expected a list, got {_describe(value)}")
    return tuple(item(entry, f"{where}[{k}]") for k, entry in enumerate(value))


def read_mapping(value: object, where: str, item: Callable[[object, str], T]) -> dict[str, T]:
    """``value`` as a JSON object of any keys, each value read by ``item``."""
    fields = Fields(value, where)
    return {name: item(entry, fields.at(name)) for name, entry in fields.data.items()}


class Fields:
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
        return read_str(self.get(key), self.at(key))

    def optional_text(self, key: str) -> str | None:
        value = self.get(key)
        return None if value is None else read_str(value, self.at(key))

    def integer(self, key: str) -> int:
        return read_int(self.get(key), self.at(key))

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise RecordError(f"{self.at(key)}: expected true or false, got {_describe(value)}")
        return value

    def number(self, key: str) -> float:
        return read_float(self.get(key), self.at(key))

    def optional_number(self, key: str) -> float | None:
        value = self.get(key)
        return None if value is None else read_float(value, self.at(key))

    def items(self, key: str, item: Callable[[object, str], T]) -> tuple[T, ...]:
        return read_list(self.get(key), self.at(key), item)

    def pair(self, key: str, item: Callable[[object, str], T]) -> tuple[T, T]:
        values = self.items(key, item)
        if len(values) != 2:
            raise RecordError(f"{self.at(key)}: expected a list of 2, got {len(values)} items")
        return values[0], values[1]

    def matrix(self, key: str) -> Matrix:
        return self.items(key, lambda row, where: read_list(row, where, read_float))

    def integer_matrix(self, key: str) -> tuple[tuple[int, ...], ...]:
        return self.items(key, lambda row, where: read_list(row, where, read_int))

    def value(self, key: str, item: Callable[[object, str], T]) -> T:
        return item(self.get(key), self.at(key))

    def mapping(self, key: str, item: Callable[[object, str], T]) -> dict[str, T]:
        return read_mapping(self.get(key), self.at(key), item)

    def close(self) -> None:
        """Refuse keys this record does not have (a foreign file, or one of another version)."""
        extra = [key for key in self.data if key not in self.read]
        if extra:
            raise RecordError(f"{self.at(extra[0])}: unexpected key (the record has no such field)")


def comparison(f: Fields) -> PoolComparison:
    """The :class:`~eqc.evaluation.PoolComparison` whose fields a test's JSON object holds among its own."""
    return PoolComparison(
        f.number("difference"), f.pair("means", read_float), f.number("p_value"), f.number("min_p"), f.flag("exact"),
        f.integer("arrangements"), f.integer("resamples"), f.pair("agents", read_int), f.flag("paired"), f.text("alternative"),
        f.number("se"), f.number("df"), f.pair("interval", read_float), f.number("confidence"))


def _as_json(value: object) -> object:
    """``value`` with every record and :class:`~eqc.io.JsonRecord` in it (in dicts and tuples) as its JSON."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, JsonRecord):
        return _as_json(value.as_dict())
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return value


class Record:
    """A record's JSON: its fields in order (records in them as their JSON), NaN as null; read back by :meth:`from_json`."""

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object."""
        return json_safe({k: _as_json(v) for k, v in vars(self).items()})

    @classmethod
    def from_json(cls, data: object, path: str = "") -> Self:
        """The record the JSON object ``data`` holds (at ``path`` in an enclosing record); :class:`RecordError` naming the
        key and what is wrong otherwise."""
        fields = Fields(data, path)
        record = cls._fields(fields)
        fields.close()
        return record

    @classmethod
    def _fields(cls, f: Fields) -> Self:
        raise NotImplementedError


def read_record(kind: type[R], path: str | Path, what: str) -> R:
    """The ``kind`` record in the file at ``path``, a ``what`` (e.g. "table record"); ``FileNotFoundError`` when there is
    none, :class:`RecordError` naming the file and the key when it is not one."""
    try:
        return kind.from_json(read_json(path, what))
    except RecordError as exc:
        raise RecordError(f"{path} is not a {what}: {exc}") from None


def matrix_rows(values: torch.Tensor) -> Matrix:
    """A matrix of a record from a 2-d tensor (its rows as tuples of Python floats)."""
    return tuple(tuple(row) for row in values.tolist())
