"""Declaring the symmetries of a Dec-POMDP, discovering them for small tabular ones, and searching label permutations
for expected-return symmetries of a pool of policies (exactly) or learning neural candidate maps for them."""

from eqc.dec_pomdp.candidate_set import CandidateSet, load_candidate_set
from eqc.dec_pomdp.discovery import DiscoveredSymmetry, discover_agent_symmetries, discover_symmetries
from eqc.dec_pomdp.expected_return import ElementLoss, ExpectedReturnGroup, load_group_symmetry, search_label_permutations
from eqc.dec_pomdp.layout import Block, Labels, Layout
from eqc.dec_pomdp.neural_maps import CandidateMap, LearnedMap, NeuralMapOptions, train_candidate_map, transform_logits
from eqc.dec_pomdp.protocol import DecPOMDP
from eqc.dec_pomdp.symmetry import Symmetry
from eqc.dec_pomdp.tabular import TabularDecPOMDP

__all__ = [
    "Block",
    "CandidateMap",
    "CandidateSet",
    "DecPOMDP",
    "DiscoveredSymmetry",
    "ElementLoss",
    "ExpectedReturnGroup",
    "Labels",
    "Layout",
    "LearnedMap",
    "NeuralMapOptions",
    "Symmetry",
    "TabularDecPOMDP",
    "discover_agent_symmetries",
    "discover_symmetries",
    "load_candidate_set",
    "load_group_symmetry",
    "search_label_permutations",
    "train_candidate_map",
    "transform_logits",
]
