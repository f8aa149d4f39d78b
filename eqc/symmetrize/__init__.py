"""Equivariance by symmetrization, and the Other-Play / G-OP training rules.

- :class:`Symmetrizer`: ``S(psi)(x) = 1/|G| sum_g rho_out(g)^-1 psi(rho_in(g) x)`` for any network.
- :class:`RecurrentSymmetrizer`: the same for ``(x, state) -> (y, state)`` modules.
- :class:`OtherPlay`: per-agent, per-episode relabelling for Other-Play and G-OP.
- :class:`CandidatePlay`: Other-Play's per-agent draws over a learned candidate set (not a group).
"""

from eqc.symmetrize.candidate_play import CandidatePlay, CandidateRelabelling
from eqc.symmetrize.other_play import OtherPlay, Relabelling
from eqc.symmetrize.recurrent import RecurrentSymmetrizer
from eqc.symmetrize.symmetrizer import Symmetrizer

__all__ = ["CandidatePlay", "CandidateRelabelling", "OtherPlay", "RecurrentSymmetrizer", "Relabelling", "Symmetrizer"]
