"""Declaring the symmetries of a Dec-POMDP, discovering them for small tabular ones, and searching label permutations
for expected-return symmetries of a pool of policies."""

from eqc.dec_pomdp.discovery import DiscoveredSymmetry, discover_agent_symmetries, discover_symmetries
from eqc.dec_pomdp.expected_return import ElementLoss, ExpectedReturnGroup, load_group_symmetry, search_label_permutations
from eqc.dec_pomdp.layout import Block, Labels, Layout
from eqc.dec_pomdp.protocol import DecPOMDP
from eqc.dec_pomdp.symmetry import Symmetry
from eqc.dec_pomdp.tabular import TabularDecPOMDP

__all__ = [
    "Block",
    "DecPOMDP",
    "DiscoveredSymmetry",
    "ElementLoss",
    "ExpectedReturnGroup",
    "Labels",
    "Layout",
    "Symmetry",
    "TabularDecPOMDP",
    "discover_agent_symmetries",
    "discover_symmetries",
    "load_group_symmetry",
    "search_label_permutations",
]
