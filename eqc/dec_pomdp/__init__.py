"""Declaring the symmetries of a Dec-POMDP, and discovering them for small tabular ones."""

from eqc.dec_pomdp.layout import Block, Labels, Layout
from eqc.dec_pomdp.protocol import DecPOMDP
from eqc.dec_pomdp.symmetry import Symmetry

__all__ = ["Block", "DecPOMDP", "Labels", "Layout", "Symmetry"]
