"""Reproducing the paper's Hanabi tables: ``reproduce(table, scale, out)`` (``eqc hanabi reproduce``)."""

from eqc.domains.hanabi.reproduce.run import reproduce
from eqc.domains.hanabi.reproduce.specs import PAPER, SCALES, TABLES

__all__ = ["PAPER", "SCALES", "TABLES", "reproduce"]
