"""K seeds of the feed-forward PQN learner trained as one batched learner: each seed's own games, generators and
optimizer, the games of all K stepped as one ``K * B`` batch and the network work of all K in one call (``torch.vmap``
over the seed axis).

:class:`StackedSeeds` holds K ordinary :class:`~eqc.domains.hanabi.training.pqn.PQNLearner` s, each built as
``make_learner(config, seed, device)`` builds it for a single run (its initial weights, ``TrainingGames``, exploration
and learning generators, optimizer) and restored from its checkpoint where it resumes, and plays and learns them in
lockstep:

- *Games*: the K seeds' games are joined into one batch of K blocks (:meth:`TrainingGames.joined`): one step of
  ``K * B`` games per move, block ``k`` dealing and relabelling from seed ``k``'s generators, so that given the same
  moves it plays seed ``k``'s games bit for bit. Each learner reads its block (:meth:`~.learner.Learner.play_in`): its
  checkpoint saves that block's games, its metrics count that block's episodes.
- *Weights*: every parameter of the K networks is stacked into one ``[K, ...]`` tensor (:attr:`StackedSeeds.params`)
  and each seed's ``nn.Parameter`` becomes a view of its row, so the K agents, their optimizers, evaluation and
  checkpoints keep working on their own networks unchanged while the forwards read the stack.
- *Acting*: the rollout skeleton the single learner uses (:class:`~.rollout.Rollout`) plays the joined games with a
  vmapped acting forward (one ``torch.func.functional_call`` of the agent under ``torch.vmap``); each seed explores
  its block on its own generator.
- *Learning*: each seed draws its minibatches on its own generator; minibatch ``j`` of all K seeds is one vmapped
  :func:`~.pqn.td_loss`, its sum back-propagated into the stack (autograd outside ``vmap``: functorch's ``grad``
  inside it fails on a bf16 autocast); each seed's rows of the gradient become its parameters' ``.grad`` and its own
  optimizer steps (:meth:`~.learner.Learner.apply_gradients`: its own norm clipping, its Adam/RAdam
  state), so the update is the one its single run makes.

Exact and not: games, generators, deals, relabellings, minibatch orders and optimizer arithmetic are each seed's own,
but ``vmap`` computes a linear layer as a batched matmul plus the bias, where a single run's ``addmm`` fuses them, so
Q-values and gradients differ from the single run's in the last float bits (about 1e-7 relative on the CPU). A seed
therefore equals its own run up to that rounding, as long as no greedy choice or exploration tie flips on it
(``tests/domains/hanabi/training/test_seeds.py``). In bf16 (``[network] precision``) the rounding is bf16's (about 1e-3):
one iteration agrees to that, but over a run flipped choices make each seed play other games than its single run
would, so a bf16 seed is the same learner, not the same run. Recurrent networks and the other algorithms are refused
(:func:`check_stackable`); the seeds' configs may differ in ``[bootstrap] slots`` only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch
from torch import nn
from torch.func import functional_call

from eqc.domains.hanabi.agent.network import Agent, QNetwork, State, spec_agent
from eqc.domains.hanabi.config.schema import require
from eqc.domains.hanabi.training.config import TrainConfig
from eqc.domains.hanabi.training.games import TrainingGames
from eqc.domains.hanabi.training.pqn import PQN, PQNLearner, exploration_epsilon, lambda_returns, record_greedy_value, td_loss
from eqc.domains.hanabi.training.rollout import Rollout, View

__all__ = ["StackedSeeds", "check_stackable"]


def check_stackable(config: TrainConfig) -> None:
    """``ConfigError`` naming the key unless ``config`` trains the feed-forward PQN learner, the one
    :class:`StackedSeeds` batches."""
    require(config.run.algorithm == PQN.name, "[run] algorithm",
            f"must be 'pqn' to train seeds in one process (the feed-forward PQN learner is the one batched), got "
            f"{config.run.algorithm!r}: train each seed on its own (eqc hanabi pool)")
    require(config.network.lstm_layers == 0, "[network] lstm_layers",
            f"must be 0 to train seeds in one process (feed-forward networks only), got {config.network.lstm_layers}: "
            "train each seed on its own (eqc hanabi pool)")


class _Acting(nn.Module):
    """``agent.step``'s Q-values as a module's forward, for ``functional_call``."""

    def __init__(self, agent: Agent) -> None:
        super().__init__()
        self.agent = agent

    def forward(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        return self.agent.step(obs, legal)[0]


class StackedSeeds:
    """K feed-forward PQN learners, one per seed, trained as one batched learner (see the module docstring).

    Args:
        learners: the seeds' learners as :func:`~.learners.make_learner` builds them (restored from their checkpoints
            where they resume): one agent spec, one ``[run] num_envs``, one ``[pqn]`` and one ``[bootstrap]`` but for
            its ``slots``; their ``[optim]`` sections are their own. Their games are joined
            (:meth:`TrainingGames.joined`): from then on only this object steps them.
    """

    def __init__(self, learners: Sequence[PQNLearner]) -> None:
        if not learners or not all(isinstance(learner, PQNLearner) and not learner.recurrent for learner in learners):
            raise ValueError("learners must be one or more feed-forward PQNLearners (check_stackable)")
        first = learners[0]
        shape = (first.spec, first.num_envs, first.pqn, first.device)
        for learner in learners[1:]:
            if (learner.spec, learner.num_envs, learner.pqn, learner.device) != shape:
                raise ValueError("the seeds' learners must share the agent spec, [run] num_envs, [pqn] and the device to be "
                                 "batched")
        self.learners = list(learners)
        network = first.network
        with torch.device("meta"):  # the structure functional_call runs; the weights are always the stack's
            template = QNetwork(network.obs_dim, network.num_actions, network.config, aux_outputs=network.aux_outputs)
        self._acting = _Acting(spec_agent(first.spec, template))
        names = [name for name, _ in self._acting.named_parameters()]
        #: Every parameter of the K agents stacked ``[K, ...]`` (leaves that collect the batched gradients), by its name in
        #: :class:`_Acting` (``agent.network...``).
        self.params: dict[str, torch.Tensor] = {}
        owned = [dict(learner.agent.named_parameters(prefix="agent")) for learner in self.learners]
        for name in names:
            self.params[name] = torch.stack([own[name].detach() for own in owned]).requires_grad_()
            for k, own in enumerate(owned):
                own[name].data = self.params[name].detach()[k]  # the seed's parameter is now a view of its row of the stack
        self._owned = owned
        #: The seeds' games joined (block ``k`` seed ``k``'s, which its learner now reads) and their rollout.
        self.games = TrainingGames.joined([learner.games for learner in self.learners])
        for k, learner in enumerate(self.learners):
            learner.play_in(self.games, k)
        self.rollout = Rollout(self.games, first.rollout_steps, self._heads, num_actions=first.num_actions,
                               sad=first.spec.game.uses_sad, initial_state=None)

    # ---------------------------------------------------------------- the batched network
    def q_values(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """Every seed's Q-values ``[K, N, A]`` on its own ``obs [K, N, D]``, ``legal [K, N, A]`` (one vmapped call)."""
        with torch.no_grad():
            return torch.vmap(lambda p, o, m: functional_call(self._acting, p, (o, m)))(self.params, obs, legal)

    def _loss(self, params: dict[str, torch.Tensor], obs: torch.Tensor, legal: torch.Tensor, action: torch.Tensor,
              target: torch.Tensor) -> torch.Tensor:
        return td_loss(functional_call(self._acting, params, (obs, legal)), legal, action, target)

    def learn(self, obs: torch.Tensor, legal: torch.Tensor, action: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """One update of every seed on its own minibatch (``[K, n, ...]``): the gradients of the vmapped
        :func:`~.pqn.td_loss` set as each seed's ``.grad``, then its own optimizer step. Returns the losses ``[K]``."""
        losses = torch.vmap(self._loss)(self.params, obs, legal, action, target)
        grads = dict(zip(self.params, torch.autograd.grad(losses.sum(), list(self.params.values())), strict=True))
        for k, (learner, own) in enumerate(zip(self.learners, self._owned, strict=True)):  # seed k's loss reaches row k only
            for name, parameter in own.items():
                parameter.grad = grads[name][k]
            learner.apply_gradients()
            learner.optimizer.zero_grad(set_to_none=True)
        return losses.detach()

    def _heads(self, obs: torch.Tensor, legal: torch.Tensor, state: State) -> tuple[torch.Tensor, None, None]:
        """The acting forward of the joined games (:class:`~.rollout.Heads`): block ``k``'s rows through seed ``k``'s
        network, all K in one vmapped call."""
        K = len(self.learners)
        return self.q_values(obs.view(K, -1, obs.shape[-1]), legal.view(K, -1, legal.shape[-1])).flatten(0, 1), None, None

    # ---------------------------------------------------------------- one iteration
    def iteration(self) -> list[dict[str, torch.Tensor | float]]:
        """One :meth:`PQNLearner.iteration <eqc.domains.hanabi.training.pqn.PQNLearner.iteration>` of every seed, in
        lockstep; each seed's scalars to log, in the order of :attr:`learners`."""
        learners, first, rollout = self.learners, self.learners[0], self.rollout
        T, B = first.rollout_steps, first.num_envs
        blocks = [self.games.block_rows(k) for k in range(len(learners))]
        epsilons = [exploration_epsilon(x.pqn, x.moves_played, B, x.device) for x in learners]

        def choose(t: int, view: View) -> torch.Tensor:  # each seed explores its block on its own generator
            return torch.cat([x.explore(view.scores[rows], view.acting_legal[rows], epsilon)
                              for x, rows, epsilon in zip(learners, blocks, epsilons, strict=True)])

        rollout.collect(choose, functools.partial(record_greedy_value, rollout), shaping=first.shaping)
        for learner in learners:
            learner.moves_played += T * B
        returns = lambda_returns(rollout.reward, rollout.ended, rollout.value, first.pqn.gamma, first.pqn.td_lambda)
        flat = [tuple(x[:, rows].flatten(0, 1) for x in (rollout.obs, rollout.legal, rollout.action, returns)) for rows in blocks]
        losses = []
        for _ in range(first.epochs):
            orders = [x.minibatch_rows() for x in learners]
            for j in range(first.num_minibatches):
                batch = [tuple(b[order[j]] for b in own) for own, order in zip(flat, orders, strict=True)]
                losses.append(self.learn(*(torch.stack(parts) for parts in zip(*batch, strict=True))))
        loss = torch.stack(losses).mean(0)
        return [{"loss": loss[k], "epsilon": e if isinstance(e, float) else e.mean()} for k, e in enumerate(epsilons)]

    def state_dict(self, k: int) -> dict:
        """Seed ``k``'s :meth:`~.learner.Learner.state_dict`, its weights copied out of the stack (a view would save
        every seed's weights into each checkpoint)."""
        state = self.learners[k].state_dict()
        state["modules"] = {name: {key: value.clone() for key, value in module.items()} for name, module in state["modules"].items()}
        return state
