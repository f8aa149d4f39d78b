"""Reproducing the paper's Hanabi tables: ``reproduce(table, scale, out)`` (``eqc hanabi reproduce``), its record
(:class:`~.record.TableRecord`, read back by :func:`~.record.read_table`)."""

from eqc.domains.hanabi.reproduce.record import TableRecord, read_table
from eqc.domains.hanabi.reproduce.run import reproduce
from eqc.domains.hanabi.reproduce.specs import PAPER, SCALES, TABLES, ReproduceError

__all__ = ["PAPER", "SCALES", "TABLES", "ReproduceError", "TableRecord", "read_table", "reproduce"]
