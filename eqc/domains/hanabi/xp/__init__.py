"""Cross-play of trained Hanabi agents at scale, checked against HLE, and their conditional action matrices.

Modules: ``play`` (:func:`cross_play_games`: every ordered pair, batched on ``HanabiBatch``),
``pools`` (pool directories of agents ``seed_<n>/`` or ``slots_<pi>/``), ``report`` (``xp.json``, ``xp.csv``,
``xp.png``), ``verify`` (:func:`verify_hle`: replay games in HLE), ``actions`` (conditional action
matrices, plain and C5/D10-symmetrized), ``relabelled``
(:func:`relabelled_self_play`: an agent with colour-relabelled copies of itself, the measure of colour
symmetry breaking), ``conventions`` (:func:`hint_slot_counts`, :func:`slot_dependence`: which slot a
colour hint asks for), ``alignment`` (:func:`aligned_cross_play`: cross-play after the best colour
alignment of each pair), ``equivariance`` (:func:`greedy_equivariance`, :func:`sampled_equivariance`: how equivariant an agent is).
The command line is ``eqc hanabi xp`` / ``eqc hanabi actions``.

Example::

    agents = load_pools(["pools/op", "pools/gop_d10"], symmetrize="D10")
    games = cross_play_games([a.policy for a in agents], 5000, record_moves=10)
    verify_hle(games, [a.policy for a in agents], 10)
    print(games.summary().xp)
"""

from eqc.domains.hanabi.xp.actions import ActionMatrices, action_matrices, paper_order, plot_action_matrices
from eqc.domains.hanabi.xp.alignment import AlignedCrossPlay, alignable_share, aligned_cross_play
from eqc.domains.hanabi.xp.conventions import hint_slot_counts, slot_dependence
from eqc.domains.hanabi.xp.equivariance import GreedyEquivariance, SampledEquivariance, greedy_equivariance, sampled_equivariance
from eqc.domains.hanabi.xp.play import XPGames, cross_play_games, play_pairs
from eqc.domains.hanabi.xp.pools import DuplicateAgentError, PoolAgent, PoolError, describe_policy, load_pools, pool_runs
from eqc.domains.hanabi.xp.relabelled import RelabelledAgent, RelabelledSelfPlay, breaks_colour_symmetry, relabelled_self_play
from eqc.domains.hanabi.xp.report import plot_xp, write_xp, xp_record
from eqc.domains.hanabi.xp.verify import HLEMismatchError, verify_hle

__all__ = [
    "ActionMatrices",
    "AlignedCrossPlay",
    "DuplicateAgentError",
    "GreedyEquivariance",
    "HLEMismatchError",
    "PoolAgent",
    "PoolError",
    "RelabelledAgent",
    "RelabelledSelfPlay",
    "SampledEquivariance",
    "XPGames",
    "action_matrices",
    "alignable_share",
    "aligned_cross_play",
    "breaks_colour_symmetry",
    "cross_play_games",
    "describe_policy",
    "greedy_equivariance",
    "hint_slot_counts",
    "load_pools",
    "paper_order",
    "play_pairs",
    "plot_action_matrices",
    "plot_xp",
    "pool_runs",
    "relabelled_self_play",
    "sampled_equivariance",
    "slot_dependence",
    "verify_hle",
    "write_xp",
    "xp_record",
]
