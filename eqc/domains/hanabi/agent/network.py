"""The Hanabi Q-network (the paper's agent) and its symmetrized version.

``QNetwork``: ``mlp_layers`` x (Linear + [LayerNorm] + ReLU), then ``lstm_layers`` LSTM layers
(0 = feed-forward), then linear heads. With ``dueling`` the heads give advantages ``A [.., M]``
and a value ``V [.., 1]``; :func:`dueling_q` turns them into ``Q = V + A - mean of A over legal
moves``. The network's raw output is ``[A, V]`` (or ``Q`` without dueling): a vector on which the
colour group acts by permuting ``A`` like moves and fixing ``V``, so the symmetrizer can average
raw outputs and the dueling combination, which is linear, commutes with it.

``Agent`` wraps a ``QNetwork`` and, optionally, the symmetrizer over a colour group
(:class:`~eqc.symmetrize.Symmetrizer` feed-forward, :class:`~eqc.symmetrize.RecurrentSymmetrizer`
recurrent). Acting, learning targets and evaluation all call ``Agent.step``/``Agent.sequence``,
so they run the same (symmetrized) computation.

Moves are HLE's move uids plus one no-op (uid ``num_moves``), the only legal move of a player who
is not on turn (hanabi_SAD, OBL and JaxMARL use the same 21st action for two players).
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, TypeGuard

import torch
from torch import nn

from eqc._checks import check_choice
from eqc.domains.hanabi.config.agent import DEFAULT_HIDDEN_SCHEME, HIDDEN_SCHEMES, PRECISIONS, AgentSpec, NetworkConfig
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import ACTS_ON, colour_symmetry, rank_relabelling
from eqc.groups import PermutationGroup, PermutationRepresentation
from eqc.symmetrize import RecurrentSymmetrizer, Symmetrizer
from eqc.symmetrize.recurrent import HiddenScheme

__all__ = [
    "ActingAgent", "Agent", "AgentWrapper", "LSTMState", "QNetwork", "State", "as_lstm_state", "autocast", "dueling_q", "make_agent",
    "no_op_representation", "spec_agent",
]

#: A recurrent network's LSTM state ``(h, c)``, each ``[lstm_layers, batch, hidden]``; a feed-forward one's is None.
LSTMState = tuple[torch.Tensor, torch.Tensor]
State = LSTMState | None


def as_lstm_state(state: State) -> LSTMState:
    """``state`` of a recurrent agent, which is never None (only a feed-forward agent's is)."""
    if state is None:
        raise ValueError("expected a recurrent agent's LSTM state (h, c), got None (a feed-forward agent's)")
    return state


def autocast(device: torch.device | str, precision: str) -> torch.autocast:
    """The autocast context of ``precision`` (one of :data:`~.precision.PRECISIONS`) on ``device``'s type; fp32 disables it."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    device_type = torch.device(device).type
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16")


def _full_precision_head(head: nn.Linear, h: torch.Tensor) -> torch.Tensor:
    """``head(h)`` in the head's own dtype (float32) even inside a bf16 autocast: Q-values stay float32, so bf16
    rounding of the last layer cannot tie or flip greedy moves, and losses and targets are float32."""
    with torch.autocast(h.device.type, enabled=False):
        return head(h.to(head.weight.dtype))


class QNetwork(nn.Module):
    """Q-network over flat observations ``[N, obs_dim]``; see the module docstring for the layout.

    Args:
        obs_dim: observation length.
        num_actions: moves including the no-op.
        config: widths and depths (:class:`NetworkConfig`).
        aux_outputs: size of the auxiliary own-hand head (0 = none); its logits are the last
            ``aux_outputs`` outputs of :meth:`with_aux`.
    """

    def __init__(self, obs_dim: int, num_actions: int, config: NetworkConfig, aux_outputs: int = 0) -> None:
        super().__init__()
        self.obs_dim, self.num_actions, self.config = obs_dim, num_actions, config
        layers: list[nn.Module] = []
        width = obs_dim
        for _ in range(config.mlp_layers):
            layers.append(nn.Linear(width, config.hidden_size))
            if config.layer_norm:
                layers.append(nn.LayerNorm(config.hidden_size))
            layers.append(nn.ReLU())
            width = config.hidden_size
        self.mlp = nn.Sequential(*layers)
        self.lstm = nn.LSTM(width, config.hidden_size, num_layers=config.lstm_layers) if config.lstm_layers else None
        self.out_dim = num_actions + (1 if config.dueling else 0)
        self.head = nn.Linear(config.hidden_size, self.out_dim)
        self.aux_head = nn.Linear(config.hidden_size, aux_outputs) if aux_outputs else None
        self.aux_outputs = aux_outputs

    @property
    def recurrent(self) -> bool:
        return self.lstm is not None

    def initial_state(self, batch: int, device: torch.device | str) -> State:
        """Zero LSTM state ``(h, c)``, each ``[lstm_layers, batch, hidden]`` (None when feed-forward)."""
        if self.lstm is None:
            return None
        shape = (self.config.lstm_layers, batch, self.config.hidden_size)
        return torch.zeros(shape, device=device), torch.zeros(shape, device=device)

    def features(self, x: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        """Trunk features for one step ``x [N, obs_dim]`` (or a sequence ``[T, N, obs_dim]`` when recurrent)."""
        h = self.mlp(x)
        if self.lstm is None:
            return h, None
        step = h.dim() == 2
        out, (h_n, c_n) = self.lstm(h.unsqueeze(0) if step else h, state)
        dtype = self.lstm.weight_hh_l0.dtype  # the carried state stays in the parameters' dtype under autocast
        return (out.squeeze(0) if step else out), (h_n.to(dtype), c_n.to(dtype))

    def forward(self, x: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        """Raw outputs ``[..., out_dim]`` (``[A, V]`` with dueling, else Q) and the next state."""
        h, state = self.features(x, state)
        return _full_precision_head(self.head, h), state

    def feedforward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw outputs of a feed-forward network (the callable the feed-forward symmetrizer wraps)."""
        return _full_precision_head(self.head, self.mlp(x))

    def with_aux(self, x: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        """Raw outputs and the auxiliary own-hand logits after them, ``[..., out_dim + aux_outputs]``, from one
        trunk pass (what a symmetrized agent averages, so that both heads read the symmetrized trajectory)."""
        h, state = self.features(x, state)
        out = _full_precision_head(self.head, h)
        return (out if self.aux_head is None else torch.cat([out, _full_precision_head(self.aux_head, h)], dim=-1)), state

    def with_aux_feedforward(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`with_aux` of a feed-forward network."""
        return self.with_aux(x)[0]


def dueling_q(raw: torch.Tensor, legal: torch.Tensor | None, dueling: bool, centre: str = "legal") -> torch.Tensor:
    """Q-values ``[..., M]`` from raw outputs; illegal moves (``legal`` False) get -inf.

    ``centre`` (:attr:`NetworkConfig.dueling_centre`): "legal" subtracts the mean advantage of the
    legal moves; "all" is hanabi_SAD's and OBL's ``V + A*legal - mean(A*legal)`` over all actions.
    On the legal moves the two differ by one constant per state (the same greedy moves, other values).
    """
    if dueling:
        adv, value = raw[..., :-1], raw[..., -1:]
        if legal is None:
            q = value + adv - adv.mean(-1, keepdim=True)
        elif centre == "all":
            masked = adv * legal
            q = value + masked - masked.mean(-1, keepdim=True)
        else:
            count = legal.sum(-1, keepdim=True).clamp(min=1)
            mean = (adv * legal).sum(-1, keepdim=True) / count
            q = value + adv - mean
    else:
        q = raw
    return q if legal is None else q.masked_fill(~legal, float("-inf"))


def _is_hidden_scheme(value: str) -> TypeGuard[HiddenScheme]:
    return value in HIDDEN_SCHEMES


def no_op_representation(move_rep: PermutationRepresentation, extra: int) -> PermutationRepresentation:
    """``move_rep`` on HLE's moves extended by ``extra`` fixed coordinates (the no-op, the dueling value)."""
    return move_rep + PermutationRepresentation.trivial(move_rep.group, extra)


class Agent(nn.Module):
    """A ``QNetwork``, optionally symmetrized over a colour group, with one calling convention.

    Args:
        network: the Q-network.
        obs_rep, move_rep: the group's representations on one player's observation and on HLE's
            moves (``colour_symmetry(group, ...)``); both None for a plain agent.
        hidden_scheme: the recurrent symmetrizer's scheme, "average" or "identity".
        precision: where the trunk's matrix products run, one of :data:`~.precision.PRECISIONS`
            (:meth:`in_precision` gives the same agent in another).

    ``step(obs [N, d], legal [N, M] | None, state)`` returns ``(q [N, M], state)``;
    ``sequence(obs [T, N, d], legal [T, N, M], state)`` runs ``step`` over time for recurrent
    networks (one batched call for feed-forward ones).
    """

    def __init__(
        self,
        network: QNetwork,
        obs_rep: PermutationRepresentation | None = None,
        move_rep: PermutationRepresentation | None = None,
        *,
        hidden_scheme: str = DEFAULT_HIDDEN_SCHEME,
        precision: str = "fp32",
    ) -> None:
        super().__init__()
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        self.precision = precision
        self.network = network
        self.group: PermutationGroup | None = None
        self.symmetrizer: RecurrentSymmetrizer | Symmetrizer | None = None
        if (obs_rep is None) != (move_rep is None):
            raise ValueError("obs_rep and move_rep must both be given (symmetrized agent) or both be None")
        if obs_rep is not None and move_rep is not None:
            extra = network.out_dim + network.aux_outputs - move_rep.dim  # the no-op, the value, the aux logits: fixed
            if extra < 0 or obs_rep.dim != network.obs_dim:
                raise ValueError(
                    f"representations of dims {obs_rep.dim} (observation) and {move_rep.dim} (moves) do not fit a "
                    f"network of input {network.obs_dim} and output {network.out_dim}"
                )
            out_rep = no_op_representation(move_rep, extra)
            self.group = obs_rep.group
            if network.recurrent:
                if not _is_hidden_scheme(hidden_scheme):
                    raise ValueError(f"hidden_scheme must be one of {list(HIDDEN_SCHEMES)}, got {hidden_scheme!r}")
                self.symmetrizer = RecurrentSymmetrizer(network.with_aux, obs_rep, out_rep, hidden_scheme=hidden_scheme)
            else:
                self.symmetrizer = Symmetrizer(network.with_aux_feedforward, obs_rep, out_rep)
        self.hidden_scheme = hidden_scheme

    @property
    def recurrent(self) -> bool:
        return self.network.recurrent

    def initial_state(self, batch: int, device: torch.device | str) -> State:
        return self.network.initial_state(batch, device)

    def in_precision(self, precision: str) -> Agent:
        """This agent (the same network and symmetrizer) run in ``precision``."""
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        other = copy.copy(self)
        other.precision = precision
        return other

    def raw(self, obs: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        """Raw outputs and aux logits ``[N, out_dim + aux_outputs]`` for one step ``[N, d]`` (symmetrized when a
        group is set), float32 in every precision."""
        with autocast(obs.device, self.precision):
            if self.symmetrizer is None:
                return self.network.with_aux(obs, state)
            if isinstance(self.symmetrizer, RecurrentSymmetrizer):  # exactly when the network is recurrent
                out, combined = self.symmetrizer.step(obs, state)
                # The symmetrizer combines the LSTM's (h, c) tensor by tensor, so it returns such a pair.
                assert isinstance(combined, tuple) and len(combined) == 2
                return out, combined
            return self.symmetrizer(obs), None

    def _q(self, raw: torch.Tensor, legal: torch.Tensor | None) -> torch.Tensor:
        config = self.network.config
        return dueling_q(raw[..., : self.network.out_dim], legal, config.dueling, config.dueling_centre)

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        raw, state = self.raw(obs, state)
        return self._q(raw, legal), state

    def sequence(self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None) -> tuple[torch.Tensor, State]:
        """Q-values for a sequence ``obs [T, N, d]`` from ``state`` (zeros when None)."""
        q, _, state = self.sequence_with_aux(obs, legal, state)
        return q, state

    def sequence_with_aux(
        self, obs: torch.Tensor, legal: torch.Tensor | None, state: State = None
    ) -> tuple[torch.Tensor, torch.Tensor, State]:
        """Q-values ``[T, N, M]`` and aux logits ``[T, N, aux_outputs]`` for a sequence, from one (symmetrized) pass."""
        if not self.recurrent:
            raw, _ = self.raw(obs.flatten(0, 1))
            raw = raw.view(*obs.shape[:2], -1)
        elif self.symmetrizer is None:
            with autocast(obs.device, self.precision):
                raw, state = self.network.with_aux(obs, state)
        else:
            outputs = []
            for t in range(obs.shape[0]):
                out, state = self.raw(obs[t], state)
                outputs.append(out)
            raw = torch.stack(outputs)
        return self._q(raw, legal), raw[..., self.network.out_dim :], state


class ActingAgent(Protocol):
    """An agent, as everything that plays one sees it (a :class:`~.policy.TrainedPolicy`, the game loops of
    ``eqc.domains.hanabi.play``): an :class:`Agent`, or an :class:`AgentWrapper` acting through one.

    ``step(obs [R, D], legal [R, A] | None, state) -> (scores [R, A], state)`` (``A``: HLE's moves plus the no-op; the
    loops play the argmax), from ``initial_state(rows, device)``; a ``recurrent`` agent is stepped on every seat it
    holds at every move. ``network`` and ``precision``: the network that acts and what it runs in."""

    @property
    def network(self) -> QNetwork: ...

    @property
    def precision(self) -> str: ...

    @property
    def recurrent(self) -> bool: ...

    def initial_state(self, batch: int, device: torch.device | str) -> Any: ...

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: Any = None) -> tuple[torch.Tensor, Any]: ...


class AgentWrapper(nn.Module):
    """An agent acting through ``agent`` (the one wrapper pattern: a relabelled, sampled, recording or comparing
    agent): its ``network``, ``precision``, ``recurrent`` and ``initial_state`` are ``agent``'s; a subclass
    implements :meth:`step`."""

    def __init__(self, agent: ActingAgent) -> None:
        super().__init__()
        self.agent = agent

    @property
    def network(self) -> QNetwork:
        return self.agent.network

    @property
    def precision(self) -> str:
        return self.agent.precision

    @property
    def recurrent(self) -> bool:
        return self.agent.recurrent

    def initial_state(self, batch: int, device: torch.device | str) -> Any:
        return self.agent.initial_state(batch, device)

    def step(self, obs: torch.Tensor, legal: torch.Tensor | None, state: Any = None) -> tuple[torch.Tensor, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement step")


def make_agent(network: QNetwork, rules: HanabiRules, group: PermutationGroup | None = None, *, hidden_scheme: str = DEFAULT_HIDDEN_SCHEME,
               precision: str = "fp32", acts_on: str = "colour") -> Agent:
    """``network`` as an :class:`Agent` playing ``rules``, symmetrized over ``group`` (None: plain) acting on the
    colours, or with ``acts_on="rank"`` on the ranks (not a symmetry of Hanabi: a control, :func:`rank_relabelling`).

    The one way eqc builds an agent: learning (``training.learner``) and loading (``policy.load_policy``)
    call it, so they run the same (symmetrized) computation."""
    check_choice(acts_on, "acts_on", ACTS_ON)
    if group is None:
        return Agent(network, precision=precision)
    sym = colour_symmetry(group, rules) if acts_on == "colour" else rank_relabelling(group, rules)
    return Agent(network, sym.observation_rep, sym.action_rep, hidden_scheme=hidden_scheme, precision=precision)


def spec_agent(spec: AgentSpec, network: QNetwork) -> Agent:
    """The agent ``spec`` describes around ``network``: symmetrized over ``spec.network.symmetrize``, in ``spec.network.precision``."""
    return make_agent(network, spec.rules(), spec.group(), hidden_scheme=spec.network.hidden_scheme, precision=spec.network.precision)
