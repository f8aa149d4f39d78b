"""``load_policy``: a trained agent from a policy directory or checkpoint, optionally symmetrized, ready to play.

The returned :class:`TrainedPolicy` is a ``(obs, legal) -> move uid`` callable with ``reset()``,
as :func:`eqc.domains.hanabi.play.hle.play_games` expects, and knows its :class:`~eqc.domains.hanabi.config.agent.AgentSpec`
(``spec``: its game and observation variant ``rules``, network, symmetrizer and precision), so the
same agent plays on ``HanabiBatch`` (``evaluate_agent(policy.agent, ...)``) and in HLE itself
through ``HanabiEnv``.
"""

from __future__ import annotations

from pathlib import Path

import torch

from eqc._checks import check_choice, check_device
from eqc.domains.hanabi.agent.files import (
    POLICY_JSON,
    POLICY_WEIGHTS,
    CheckpointError,
    checkpoint_network,
    is_policy_dir,
    load_checkpoint,
    read_policy,
)
from eqc.domains.hanabi.agent.network import ActingAgent, QNetwork, State, make_agent
from eqc.domains.hanabi.agent.obl import load_obl_network, obl_spec
from eqc.domains.hanabi.agent.precision import resolve_precision
from eqc.domains.hanabi.config.agent import DEFAULT_HIDDEN_SCHEME, HIDDEN_SCHEMES, REQUESTED_PRECISIONS, AgentSpec
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import ACTS_ON, COLOUR_GROUP_NAMES, colour_group
from eqc.groups import PermutationGroup

__all__ = ["TrainedPolicy", "load_policy"]


class TrainedPolicy:
    """A trained agent acting greedily on one observation at a time (see the module docstring).

    Attributes:
        agent: the (symmetrized) :class:`~.network.Agent`, or a wrapper acting as one (:class:`~.network.ActingAgent`), for
            batched use.
        spec: what the agent is (``spec.game`` is the observation variant; ``spec.network.head`` what its outputs
            are, Q-values or a policy's logits; ``spec.network.symmetrize`` the group it was trained symmetrized over).
        trained_moves: moves (summed over games) the agent was trained for.
        trained_with: the training config it was trained with, as recorded (a nested dict; empty for an
            agent eqc did not train, such as OBL's), as today's eqc writes it (:mod:`~eqc.domains.hanabi.config.upgrade`):
            its ``[network] precision`` the one it was trained in. What the agent is, ``spec``, is read from its
            ``[game]`` and ``[network]`` alone; training reads the whole record back as a config
            (``TrainConfig.from_dict(policy.trained_with)``, :mod:`eqc.domains.hanabi.training.config`).
    """

    def __init__(self, agent: ActingAgent, spec: AgentSpec, trained_moves: int, device: torch.device,
                 trained_with: dict | None = None) -> None:
        self.agent, self.spec, self.trained_moves, self.device = agent, spec, trained_moves, device
        self.trained_with = trained_with or {}
        self.obs_dim = agent.network.obs_dim
        self.num_moves = agent.network.num_actions - 1
        self._state: State = None

    @property
    def rules(self) -> HanabiRules:
        """The game and observation variant the agent was trained on (``play_games`` plays in it)."""
        return self.spec.rules()

    def reset(self) -> None:
        """Start a new game (clears the recurrent state)."""
        self._state = None

    @torch.no_grad()
    def observe(self, obs: torch.Tensor) -> None:
        """Step a recurrent agent's state on a move it does not make (its only move is the no-op)."""
        if not self.agent.recurrent:
            return
        only_no_op = torch.zeros(1, self.num_moves + 1, dtype=torch.bool, device=self.device)
        only_no_op[0, -1] = True
        _, self._state = self.agent.step(self._check_obs(obs).unsqueeze(0), only_no_op, self._state)

    def _check_obs(self, obs: torch.Tensor) -> torch.Tensor:
        if not isinstance(obs, torch.Tensor) or tuple(obs.shape) != (self.obs_dim,):
            game = self.spec.game
            variant = game.knowledge + (f" with SAD {game.sad}" if game.uses_sad else "")
            got = getattr(obs, "shape", type(obs).__name__)
            shape = f"({self.obs_dim},)"
            raise ValueError(f"obs must be a tensor of shape {shape} (the {variant} observation the agent was trained on), got {got}")
        return obs.to(self.device, torch.float32)

    @torch.no_grad()
    def __call__(self, obs: torch.Tensor, legal: torch.Tensor) -> int:
        """Greedy move uid for one observation ``obs [obs_dim]`` and legal mask ``legal [num_moves]``."""
        obs = self._check_obs(obs)
        if not isinstance(legal, torch.Tensor) or legal.dtype != torch.bool or tuple(legal.shape) != (self.num_moves,):
            raise ValueError(f"legal must be a bool tensor of shape ({self.num_moves},)")
        if not bool(legal.any()):
            raise ValueError("no legal move: the policy is not on turn")
        legal = legal.to(self.device)
        with_no_op = torch.cat([legal, legal.new_zeros(1)])  # the no-op, on legal's device
        q, self._state = self.agent.step(obs.unsqueeze(0), with_no_op.unsqueeze(0), self._state)
        return int(q.argmax(-1))


def load_policy(
    path: str | Path,
    device: torch.device | str = "cpu",
    symmetrize: str | PermutationGroup | None = None,
    hidden_scheme: str | None = None,
    precision: str = "auto",
    acts_on: str = "colour",
) -> TrainedPolicy:
    """Load a policy directory (:mod:`.files`), run directory, checkpoint file or public OBL ``.pthw``
    file (:mod:`.obl`).

    ``symmetrize``: None (the default) plays the agent as trained: plain, or symmetrized over the group it was
    trained symmetrized over. A colour group (a name of the agent's game, e.g. C5, D10, S5, A5 for 5 colours, or
    a :class:`PermutationGroup` on its colours) wraps the network in the symmetrizer at test time. An agent
    trained symmetrized stays symmetrized over its training group: another group is refused (that would
    silently replace the agent it was trained as); a group equal to it (the same elements, whatever its name)
    is that group.
    ``acts_on``: what a test-time ``symmetrize`` group permutes: "colour" (Hanabi's symmetry), or "rank" (not a
    symmetry of Hanabi: the control that averages as many forward passes over a group that is not the game's;
    :func:`~eqc.domains.hanabi.symmetry.rank_relabelling`), then ``symmetrize`` names a group on the ranks.
    ``hidden_scheme`` (recurrent agents): the hidden-state scheme; by default the one the agent was trained
    with, else "average". ``precision``: the requested precision (:mod:`.precision`): "fp32", "bf16", or
    "auto" (the default): the precision it was trained in (``[network] precision``) where ``device`` runs that
    natively, else fp32.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path (a policy directory, run directory, checkpoint or OBL file), "
                        f"got {type(path).__name__} {path!r:.80}")
    device = check_device(device)
    if hidden_scheme is not None:
        check_choice(hidden_scheme, "hidden_scheme", HIDDEN_SCHEMES)
    check_choice(precision, "precision", REQUESTED_PRECISIONS)
    network, spec, trained_moves, trained_with = _load_network(path, device)
    network.eval()
    check_choice(acts_on, "acts_on", ACTS_ON)
    trained = spec.network.symmetrize
    if acts_on == "rank" and (trained is not None or symmetrize is None):
        raise ValueError(f"acts_on='rank' needs a test-time group (symmetrize) and an agent trained plain; {path} was trained "
                         f"{'symmetrized over ' + trained if trained else 'plain'} and symmetrize is {symmetrize!r}")
    if trained is not None:
        if symmetrize is not None and not _same_group(symmetrize, spec):
            name = symmetrize if isinstance(symmetrize, str) else getattr(symmetrize, "name", "a group")
            raise ValueError(f"symmetrize={name!r}: {path} was trained symmetrized over {trained} and stays so; "
                             f"leave symmetrize unset or pass {trained!r}")
        symmetrize = trained
        hidden_scheme = hidden_scheme or spec.network.hidden_scheme
    hidden_scheme = hidden_scheme or DEFAULT_HIDDEN_SCHEME
    group: PermutationGroup | None
    if symmetrize is None or isinstance(symmetrize, PermutationGroup):
        group = symmetrize
    elif isinstance(symmetrize, str):
        check_choice(symmetrize, "symmetrize", COLOUR_GROUP_NAMES)
        group = colour_group(symmetrize, spec.rules().num_colours if acts_on == "colour" else spec.rules().num_ranks)
    else:
        raise TypeError(f"symmetrize must be None (as trained), a group name {COLOUR_GROUP_NAMES} or a PermutationGroup, "
                        f"got {type(symmetrize).__name__}")
    used = resolve_precision(precision, device, trained=spec.network.precision).used
    agent = make_agent(network, spec.rules(), group, hidden_scheme=hidden_scheme, precision=used, acts_on=acts_on)
    return TrainedPolicy(agent, spec, trained_moves, device, trained_with)


def _same_group(symmetrize: str | PermutationGroup, spec: AgentSpec) -> bool:
    """Whether ``symmetrize`` (a name, or a group compared by its elements) is the group ``spec`` was trained symmetrized over."""
    if isinstance(symmetrize, PermutationGroup):
        trained = spec.group()
        return trained is not None and symmetrize.degree == trained.degree and symmetrize == trained
    return symmetrize == spec.network.symmetrize


#: The suffix of public OBL model files (off-belief-learning's ``model0.pthw``).
OBL_SUFFIX = ".pthw"


def _load_network(path: str | Path, device: torch.device) -> tuple[QNetwork, AgentSpec, int, dict]:
    """By what ``path`` is, decided before reading it: a policy directory (or its ``policy.json`` /
    ``policy.safetensors``), an OBL model file (suffix ``.pthw``: 0 moves, no training config), else an eqc
    checkpoint or run directory (network, spec, moves trained, training config)."""
    if is_policy_dir(path) or Path(path).name in (POLICY_JSON, POLICY_WEIGHTS):
        network, spec, record = read_policy(path, device)
        return network, spec, int(record["moves"]), record["config"]
    if Path(path).suffix == OBL_SUFFIX:
        network = load_obl_network(path, device, dtype=torch.float32)
        return network, obl_spec(network), 0, {}
    try:
        data = load_checkpoint(path, map_location=device)
    except CheckpointError as exc:
        raise CheckpointError(f"{exc} (an agent is a policy directory holding {POLICY_JSON}, a run directory or checkpoint "
                              f"file of eqc, or an OBL model file *{OBL_SUFFIX})") from None
    network, spec, counters = checkpoint_network(data, str(path))
    return network.to(device), spec, counters["moves"], data["config"]
