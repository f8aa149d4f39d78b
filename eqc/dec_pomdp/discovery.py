"""Symmetry discovery for tabular Dec-POMDPs, as a coloured-graph automorphism problem.

An Other-Play symmetry of a :class:`~eqc.dec_pomdp.tabular.TabularDecPOMDP` is one relabelling
``phi = (phi_S, phi_A, phi_O)`` of states, actions and observations, applied to every agent
alike, that leaves every table unchanged::

    b0[phi_S s] = b0[s]                      R[phi_S s, phi_A a_1, ..., phi_A a_n] = R[s, a]
    T[phi_S s, phi_A a_1, ..., phi_A a_n, phi_S s'] = T[s, a, s']
    O_i[phi_S s, phi_O o] = O_i[s, o]        for every agent i

:func:`symmetry_graph` builds a graph whose colour-preserving automorphisms are exactly these:
one node per state (coloured by its initial probability), action and observation, and one
intermediate node per joint entry ``(s, a_1..a_n)`` coloured by its reward, joined to its
state, to each agent's action and to its next states by edges coloured with the agent index
or the transition probability (observation probabilities colour state--observation edges).
An entry node is determined by its neighbours, so an automorphism is determined by where it
sends states, actions and observations. :func:`discover_symmetries`
finds a *generating set* of the automorphism group with networkx's VF2 ``GraphMatcher``,
never listing the group: it walks a base point by point (deepest first), and at each level
searches for an automorphism fixing the earlier base points and moving the current one to a
point outside its orbit under the generators found so far (colour refinement prunes and
speeds up every search). The generators give an eqc :class:`~eqc.groups.PermutationGroup`.

Points of the discovered group (degree ``S + A + O``): states ``0..S-1``, actions
``S..S+A-1``, observations ``S+A..S+A+O-1``, the label sets ``"state"``, ``"action"``,
``"observation"`` of the returned :class:`~eqc.dec_pomdp.Symmetry`.

Agent permutations (interchangeable agents) are a different kind of symmetry, reported
separately by :func:`discover_agent_symmetries`. (About 400 lines: the graph and the search over it
read best together.)
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

import networkx as nx
import torch
from networkx.algorithms.isomorphism import GraphMatcher

from eqc._checks import check_int, check_list
from eqc.dec_pomdp.symmetry import Symmetry
from eqc.dec_pomdp.tabular import TabularDecPOMDP
from eqc.groups import PermutationGroup
from eqc.groups.permutations import PermutationLike

__all__ = [
    "DEFAULT_DECIMALS",
    "DiscoveredSymmetry",
    "automorphism_generators",
    "discover_agent_symmetries",
    "discover_symmetries",
    "permute_agents",
    "symmetry_graph",
]

#: Table values are compared after rounding to this many decimals.
DEFAULT_DECIMALS = 9


class DiscoveredSymmetry(PermutationGroup):
    """The Other-Play symmetry group of a tabular Dec-POMDP: an eqc :class:`PermutationGroup`.

    It acts on ``S + A + O`` points laid out as in :attr:`segments` (states, then actions, then
    observations); :attr:`symmetry` declares it on the game's observation, action and state
    layouts. ``order`` comes from the generators, never from listing the group.
    """

    def __init__(self, generators: torch.Tensor, game: TabularDecPOMDP) -> None:
        super().__init__(generators, name="discovered")
        labels = game.labels
        self.segments: dict[str, range] = {}
        start = 0
        for name in ("state", "action", "observation"):
            self.segments[name] = range(start, start + labels[name].size)
            start += labels[name].size
        self.symmetry = Symmetry(
            self,
            acts_on=[labels["state"], labels["action"], labels["observation"]],
            observation_layout=game.observation_layout,
            action_layout=game.action_layout,
            state_layout=game.state_layout,
        )

    @property
    def group(self) -> PermutationGroup:
        """The group itself (reads well as ``found.group``)."""
        return self

    def label_permutations(
        self, *, index: int | torch.Tensor | None = None, permutation: PermutationLike | None = None
    ) -> dict[str, torch.Tensor]:
        """How one element (``index=`` or ``permutation=``, as in :meth:`Symmetry.label_permutations`) relabels
        ``"state"``, ``"action"`` and ``"observation"``."""
        return self.symmetry.label_permutations(index=index, permutation=permutation)

    def __repr__(self) -> str:
        return f"DiscoveredSymmetry(order {self.order}, {self.generators.shape[0]} generators, segments {self.segments})"


# ---------------------------------------------------------------------- the graph
def symmetry_graph(game: TabularDecPOMDP, *, decimals: int = DEFAULT_DECIMALS) -> tuple[nx.Graph, list[Hashable]]:
    """The coloured graph of ``game`` and its *point* nodes (states, actions, observations, in point order).

    Nodes carry a ``colour``, edges a ``colour`` (a sorted tuple of labels); automorphisms must
    preserve both. Nodes: one per state (coloured by its initial probability), action,
    observation, and joint entry ``(s, a_1..a_n)`` (coloured by its reward). Edges: entry -- ``s``
    ("source"), entry -- ``a_i`` (("agent", i), one label per agent playing it), entry -- ``s'``
    (("transition", T)), state -- ``o`` (("observe", i, O_i)). Agents are part of the colours, so
    automorphisms never permute them. Values are rounded to ``decimals`` before comparing.
    """
    if not isinstance(game, TabularDecPOMDP):
        raise TypeError(f"game must be a TabularDecPOMDP, got {type(game).__name__}")

    def value(x: torch.Tensor) -> float:
        return round(float(x), decimals) + 0.0  # + 0.0 turns -0.0 into 0.0

    graph = nx.Graph()
    labels: dict[tuple[Hashable, Hashable], list[tuple[Hashable, ...]]] = {}

    def connect(u: Hashable, v: Hashable, label: tuple[Hashable, ...]) -> None:
        labels.setdefault((u, v), []).append(label)

    states: list[Hashable] = [("state", s) for s in range(game.num_states)]
    actions: list[Hashable] = [("action", a) for a in range(game.num_actions)]
    observations: list[Hashable] = [("observation", o) for o in range(game.num_observations)]
    for s in range(game.num_states):
        graph.add_node(states[s], colour=("state", value(game.initial[s])))
    graph.add_nodes_from(actions, colour=("action",))
    graph.add_nodes_from(observations, colour=("observation",))
    for s in range(game.num_states):
        for joint in itertools.product(range(game.num_actions), repeat=game.num_agents):
            entry = ("entry", s, joint)
            graph.add_node(entry, colour=("reward", value(game.reward[(s, *joint)])))
            connect(entry, states[s], ("source",))
            for i, a in enumerate(joint):
                connect(entry, actions[a], ("agent", i))
            row = game.transition[(s, *joint)]
            for s2 in row.nonzero().flatten().tolist():
                connect(entry, states[s2], ("transition", value(row[s2])))
    for i in range(game.num_agents):
        for s in range(game.num_states):
            row = game.observation[i, s]
            for o in row.nonzero().flatten().tolist():
                connect(states[s], observations[o], ("observe", i, value(row[o])))
    for (u, v), edge_labels in labels.items():
        graph.add_edge(u, v, colour=tuple(sorted(edge_labels)))
    return graph, states + actions + observations


# ---------------------------------------------------------------------- search
class _Refiner:
    """Colour refinement (1-dimensional Weisfeiler-Leman) with edge colours, names shared across calls.

    Sharing the names makes the refined colours of two colourings of one graph comparable.
    """

    def __init__(self, graph: nx.Graph) -> None:
        edge_names: dict[Hashable, int] = {}
        self.neighbours = {
            v: [(u, edge_names.setdefault(graph.edges[v, u]["colour"], len(edge_names))) for u in graph[v]] for v in graph
        }
        self.names: dict[Hashable, int] = {}

    def refine(self, colouring: dict[Hashable, Hashable]) -> dict[Hashable, int]:
        """The stable refinement of ``colouring``."""
        colours = {v: self.names.setdefault(("init", c), len(self.names)) for v, c in colouring.items()}
        classes = len(set(colours.values()))
        while True:
            colours = {
                v: self.names.setdefault((colours[v], tuple(sorted((e, colours[u]) for u, e in nbrs))), len(self.names))
                for v, nbrs in self.neighbours.items()
            }
            count = len(set(colours.values()))
            if count == classes:
                return colours
            classes = count


def _individualised(colours: dict[Hashable, Hashable], fixed: list[Hashable]) -> dict[Hashable, Hashable]:
    result = dict(colours)
    for k, node in enumerate(fixed):
        result[node] = ("fixed", k)
    return result


def _find_automorphism(
    graph: nx.Graph,
    refiner: _Refiner,
    colours: dict[Hashable, Hashable],
    fixed: list[Hashable],
    source: Hashable,
    target: Hashable,
) -> dict[Hashable, Hashable] | None:
    """A colour-preserving automorphism fixing ``fixed`` pointwise and mapping ``source`` to ``target``, or ``None``.

    Colour refinement first (a differing histogram proves there is none); then individualisation-
    refinement tries one consistent choice per step, which finds the automorphism directly in
    the usual case; when that does not end in an automorphism, VF2 (exact) decides.
    """
    first, second = _individualised(colours, fixed), _individualised(colours, fixed)
    first[source] = second[target] = ("moved",)
    a, b = refiner.refine(first), refiner.refine(second)
    if sorted(a.values()) != sorted(b.values()):
        return None  # refinement already tells them apart
    mapping = _individualise_greedily(graph, refiner, a, b)
    return mapping if mapping is not None else _isomorphism(graph, a, b)


def _individualise_greedily(
    graph: nx.Graph, refiner: _Refiner, a: dict[Hashable, int], b: dict[Hashable, int]
) -> dict[Hashable, Hashable] | None:
    """Pair a node of the first non-singleton class of ``a`` with the first node of ``b``'s class that keeps the
    refined histograms equal, refine, repeat; return the final bijection if it is an automorphism."""
    depth = 0
    while True:
        members_a: dict[int, list[Hashable]] = {}
        for v, c in a.items():
            members_a.setdefault(c, []).append(v)
        open_classes = [vs for vs in members_a.values() if len(vs) > 1]
        if not open_classes:
            by_colour = {c: v for v, c in b.items()}
            mapping = {v: by_colour[c] for v, c in a.items()}
            return mapping if _is_automorphism(graph, mapping) else None
        v = min(open_classes, key=len)[0]
        for w in (u for u, c in b.items() if c == a[v]):
            next_a = refiner.refine({**a, v: ("chosen", depth)})
            next_b = refiner.refine({**b, w: ("chosen", depth)})
            if sorted(next_a.values()) == sorted(next_b.values()):
                a, b = next_a, next_b
                break
        else:
            return None
        depth += 1


def _is_automorphism(graph: nx.Graph, mapping: dict[Hashable, Hashable]) -> bool:
    """Whether ``mapping`` preserves node colours, edges and edge colours."""
    nodes = graph.nodes
    if any(nodes[v]["colour"] != nodes[w]["colour"] for v, w in mapping.items()):
        return False
    return all(
        graph.has_edge(mapping[u], mapping[v]) and graph.edges[mapping[u], mapping[v]]["colour"] == data["colour"]
        for u, v, data in graph.edges(data=True)
    )


def _isomorphism(
    graph: nx.Graph, a: dict[Hashable, int], b: dict[Hashable, int], other: nx.Graph | None = None
) -> dict[Hashable, Hashable] | None:
    """VF2: an isomorphism from ``graph`` coloured by ``a`` onto ``other`` (default ``graph``) coloured by ``b``,
    keeping edge colours.

    The second graph lists its nodes rarest refined colour first, the order VF2 matches them in.
    """
    other = graph if other is None else other
    sizes: dict[int, int] = {}
    for c in b.values():
        sizes[c] = sizes.get(c, 0) + 1
    g1 = graph.copy()
    nx.set_node_attributes(g1, a, "refined")
    g2 = nx.Graph()
    g2.add_nodes_from(sorted(other.nodes, key=lambda v: (sizes[b[v]], b[v])))
    g2.add_edges_from(other.edges(data=True))
    nx.set_node_attributes(g2, b, "refined")
    matcher = GraphMatcher(
        g1,
        g2,
        node_match=lambda x, y: x["refined"] == y["refined"],
        edge_match=lambda x, y: x["colour"] == y["colour"],
    )
    return next(matcher.isomorphisms_iter(), None)


def automorphism_generators(graph: nx.Graph, points: list[Hashable]) -> list[list[int]]:
    """Generators (permutations of ``points``) of the colour-preserving automorphisms of ``graph``.

    ``points`` must determine an automorphism (every other node is fixed by the images of the
    points), as in :func:`symmetry_graph`. The group is never listed: a base point is only
    searched towards points that refinement cannot tell from it and that lie outside its orbit
    under the generators found so far, so each new generator lies outside the group generated
    by the earlier ones, and together they generate every stabiliser of the base.
    """
    colours = nx.get_node_attributes(graph, "colour")
    if len(colours) != graph.number_of_nodes():
        raise ValueError("every node needs a 'colour' attribute")
    refiner = _Refiner(graph)
    index = {p: k for k, p in enumerate(points)}
    generators: list[list[int]] = []
    for level in range(len(points) - 1, -1, -1):
        fixed, point = points[:level], points[level]
        refined = refiner.refine(_individualised(colours, fixed))
        orbit = _orbit(generators, level)
        for candidate in points[level + 1 :]:
            if refined[candidate] != refined[point] or index[candidate] in orbit:
                continue
            mapping = _find_automorphism(graph, refiner, colours, fixed, point, candidate)
            if mapping is None:
                continue
            generators.append([index[mapping[p]] for p in points])
            orbit = _orbit(generators, level)
    return generators


def _orbit(generators: list[list[int]], point: int) -> set[int]:
    """The orbit of ``point`` under the group generated by ``generators``."""
    orbit, frontier = {point}, [point]
    while frontier:
        q = frontier.pop()
        for g in generators:
            if g[q] not in orbit:
                orbit.add(g[q])
                frontier.append(g[q])
    return orbit


# ---------------------------------------------------------------------- public
def discover_symmetries(game: TabularDecPOMDP, *, decimals: int = DEFAULT_DECIMALS) -> DiscoveredSymmetry:
    """The group of Other-Play symmetries of ``game`` (see the module docstring for the point layout).

    ``game`` is a :class:`TabularDecPOMDP` or anything with a ``to_tabular()`` method (e.g.
    :func:`eqc.domains.lever.lever_game`). ``decimals``: table values that agree to this many
    decimals count as equal.
    """
    game = _as_tabular(game)
    _check_decimals(decimals)
    graph, points = symmetry_graph(game, decimals=decimals)
    generators = automorphism_generators(graph, points)
    validated = PermutationGroup.from_generators(generators, degree=len(points)).generators
    return DiscoveredSymmetry(validated, game)


def _as_tabular(game: object) -> TabularDecPOMDP:
    to_tabular = getattr(game, "to_tabular", None)
    if not isinstance(game, TabularDecPOMDP) and callable(to_tabular):
        game = to_tabular()
    if not isinstance(game, TabularDecPOMDP):
        raise TypeError(f"game must be a TabularDecPOMDP or have a to_tabular() method, got {type(game).__name__}")
    return game


def discover_agent_symmetries(
    game: TabularDecPOMDP, *, decimals: int = DEFAULT_DECIMALS, max_agents: int = 6
) -> PermutationGroup:
    """Which agent permutations are symmetries of ``game`` (a group of degree ``num_agents``).

    ``sigma`` counts when the game with agent ``i``'s role given to agent ``sigma(i)`` equals the
    original up to some relabelling of states, actions and observations (a VF2 isomorphism test
    of the two games' graphs). Permutations already in the group found so far are skipped; at
    most ``max_agents`` agents (``n!`` candidates). E.g. the lever game's two players: order 2.
    """
    game = _as_tabular(game)
    _check_decimals(decimals)
    check_int(max_agents, "max_agents", low=1)
    n = game.num_agents
    if n > max_agents:
        raise ValueError(f"agent symmetry search tries up to {n}! permutations; {n} agents exceeds max_agents={max_agents}")
    graph, _ = symmetry_graph(game, decimals=decimals)
    found: list[list[int]] = []
    group = PermutationGroup.from_generators([], degree=n)
    for sigma in itertools.permutations(range(n)):
        if list(sigma) in group:
            continue
        other, _ = symmetry_graph(permute_agents(game, list(sigma)), decimals=decimals)
        if _isomorphic(graph, other):
            found.append(list(sigma))
            group = PermutationGroup.from_generators(found, degree=n)
    return PermutationGroup.from_generators(found, degree=n, name="agent symmetries")


def _isomorphic(first: nx.Graph, second: nx.Graph) -> bool:
    """Whether a colour-preserving isomorphism exists (refinement on the disjoint union, then VF2)."""
    union = nx.Graph()
    for tag, g in ((0, first), (1, second)):
        union.add_nodes_from(((tag, v), data) for v, data in g.nodes(data=True))
        union.add_edges_from(((tag, u), (tag, v), data) for u, v, data in g.edges(data=True))
    refined = _Refiner(union).refine(nx.get_node_attributes(union, "colour"))
    a = {v: refined[(0, v)] for v in first}
    b = {v: refined[(1, v)] for v in second}
    if sorted(a.values()) != sorted(b.values()):
        return False
    return _isomorphism(first, a, b, second) is not None


def permute_agents(game: TabularDecPOMDP, sigma: list[int]) -> TabularDecPOMDP:
    """``game`` with agent ``i``'s role given to agent ``sigma[i]`` (same tables, agent axes reordered)."""
    n = game.num_agents
    sigma = check_list(sigma, "sigma", item="agent indices")
    if sorted(sigma) != list(range(n)):
        raise ValueError(f"sigma must be a permutation of the {n} agents, got {sigma}")
    inverse = [0] * n
    for i, j in enumerate(sigma):
        inverse[j] = i
    # new agent j plays old agent inverse[j]: its action axis is the old axis 1 + inverse[j]
    agent_axes = [1 + inverse[j] for j in range(n)]
    return TabularDecPOMDP(
        game.initial,
        game.transition.permute(0, *agent_axes, n + 1),
        game.reward.permute(0, *agent_axes),
        game.observation[inverse],
        game.horizon,
    )


def _check_decimals(decimals: int) -> None:
    check_int(decimals, "decimals", low=0, high=15)
