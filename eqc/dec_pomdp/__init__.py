"""Declaring the symmetries of a Dec-POMDP, and discovering them for small tabular ones."""

from eqc.dec_pomdp.discovery import DiscoveredSymmetry, discover_agent_symmetries, discover_symmetries
from eqc.dec_pomdp.layout import Block, Labels, Layout
from eqc.dec_pomdp.protocol import DecPOMDP
from eqc.dec_pomdp.symmetry import Symmetry
from eqc.dec_pomdp.tabular import TabularDecPOMDP

__all__ = [
    "Block",
    "DecPOMDP",
    "DiscoveredSymmetry",
    "Labels",
    "Layout",
    "Symmetry",
    "TabularDecPOMDP",
    "discover_agent_symmetries",
    "discover_symmetries",
]
