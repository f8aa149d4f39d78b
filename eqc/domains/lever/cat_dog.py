"""The Cat/Dog game, a toy game of the ERS paper (Muglich, Forkel, van der Pol, Foerster, "Expected Return
Symmetries", ICLR 2025), as an eqc Dec-POMDP.

Where the definition comes from: the paper names the game ("Cat/Dog") among its four environments, but neither its
text nor its public code (``gfppoy/expected-return-symmetries`` at commit ``1b80428``: Hanabi and Overcooked V2
scripts and JaxMARL's environments, no Cat/Dog game) could be read for its rules. Everything below is therefore
**inferred**, from the name, the "cat" vs "dog" signalling example of the ZSC literature and the paper's claim that
Other-Play over expected-return symmetries avoids conventions Other-Play over the game's symmetries leaves open:

- a pet, a cat (0) or a dog (1) with probability 1/2 each (inferred: a uniform prior), which Alice (agent 0) sees and
  Bob (agent 1) does not;
- step 1: Alice says "cat" or "dog" (free; inferred: one shared vocabulary, the same two action labels Bob guesses
  with); Bob hears it;
- step 2: Bob says "cat" or "dog", paid ``right`` (default 1) if it is the pet and ``wrong`` (default -1) if not, or
  bails out for ``bail`` (default 0.5) (inferred: a safe option worth less than a right guess and more than a coin
  flip, the grounded choice when words carry no meaning).

Layouts: the observation is ``Block("pet", pet)`` (Alice's view of the pet) and ``Block("heard", heard)`` (the word
Bob heard), both one-hot; the action is ``Block("said", said)`` (Alice's word or Bob's guess) and ``Block("bail", 1)``.
The three label sets name the three places the animals appear. :attr:`CatDogGame.symmetry`, the game's, swaps cat and
dog in all three at once (order 2): the rules tie them together (the heard word is the said word; a guess is right
when the said animal is the pet). :attr:`CatDogGame.candidate` swaps each one on its own (S2 x S2 x S2, order 8).
The two self-play conventions, "say the pet, guess the word" and "say the other animal, guess the other animal",
commute with the game's swap, so Other-Play over it keeps both; swapping only the said labels maps one to the other
and keeps every self-play optimum's return (:mod:`.ers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import torch

from eqc._checks import check_float, check_int
from eqc.dec_pomdp import Block, Labels, Layout, Symmetry
from eqc.domains.lever.game_tree import GameTree, game_tree
from eqc.groups import PermutationGroup, direct_product, symmetric

__all__ = ["ANIMALS", "CatDogGame"]

#: The pet and the words, by label.
ANIMALS = ("cat", "dog")
BAIL = 2  # the action index of bailing out: after the two "said" labels


class CatDogGame:
    """Alice sees the pet and says an animal; Bob hears it and guesses or bails (module docstring). Implements
    :class:`~eqc.dec_pomdp.DecPOMDP`; the chance outcome is the pet (0 cat, 1 dog), drawn at ``reset``.

    Args:
        right, wrong, bail: Bob's pay for a right guess, a wrong one, and bailing out (finite numbers).
        seed: seeds the game's own ``torch.Generator``, which draws the pet when ``reset`` is not given one.
    """

    num_agents = 2

    def __init__(self, *, right: float = 1.0, wrong: float = -1.0, bail: float = 0.5, seed: int = 0) -> None:
        self.right = check_float(right, "right")
        self.wrong = check_float(wrong, "wrong")
        self.bail = check_float(bail, "bail")
        check_int(seed, "seed", low=-(2**63), high=2**64 - 1)
        self.generator = torch.Generator().manual_seed(seed)
        self.pet, self.heard, self.said = Labels("pet", 2), Labels("heard", 2), Labels("said", 2)
        self.observation_layout = Layout([Block("pet", self.pet, encoding="one_hot"),
                                          Block("heard", self.heard, encoding="one_hot")])
        self.action_layout = Layout([Block("said", self.said), Block("bail", 1)])
        self._animal: int | None = None
        self._word: int | None = None
        self._done = False

    @cached_property
    def symmetry(self) -> Symmetry:
        """The game's symmetry: cat and dog swapped in ``pet``, ``heard`` and ``said`` together (order 2)."""
        swap = PermutationGroup.from_generators([[1, 0, 3, 2, 5, 4]], name="cat/dog swap")
        return Symmetry(swap, [self.pet, self.heard, self.said], self.observation_layout, self.action_layout)

    @cached_property
    def candidate(self) -> Symmetry:
        """The candidate group of the expected-return search: cat and dog swapped in each label set on its own (order 8)."""
        group = direct_product(symmetric(2), symmetric(2), symmetric(2))
        return Symmetry(group, [self.pet, self.heard, self.said], self.observation_layout, self.action_layout)

    @cached_property
    def tree(self) -> GameTree:
        """Every history (:func:`~eqc.domains.lever.game_tree.game_tree`): 4 observations, 12 endings."""
        return game_tree(self)

    def initial_outcomes(self) -> list[int]:
        return [0, 1]

    # ------------------------------------------------------------------ DecPOMDP protocol
    def reset(self, outcome: int | None = None) -> None:
        if outcome is None:
            outcome = int(torch.randint(2, (1,), generator=self.generator))
        if isinstance(outcome, bool) or not isinstance(outcome, int) or outcome not in (0, 1):
            raise ValueError(f"the outcome of reset is the pet, 0 (cat) or 1 (dog), got {outcome!r}")
        self._animal, self._word, self._done = outcome, None, False

    def step(self, actions: Sequence[int], outcome: object = None) -> float:
        if self._animal is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the game has ended (Bob has guessed or bailed); call reset()")
        if outcome is not None:
            raise ValueError(f"steps of the Cat/Dog game have no chance outcomes; step() takes outcome=None, got {outcome!r}")
        if len(actions) != self.num_agents:
            raise ValueError(f"need one entry per agent (2; the one not acting is ignored), got {list(actions)!r}")
        mover = 0 if self._word is None else 1
        action = int(actions[mover])
        if not 0 <= action <= BAIL or not bool(self.legal_actions()[mover, action]):
            who = "Alice says 0 (cat) or 1 (dog)" if mover == 0 else "Bob plays 0 (cat), 1 (dog) or 2 (bail)"
            raise ValueError(f"illegal action {action}: {who}")
        if mover == 0:
            self._word = action
            return 0.0
        self._done = True
        return self.bail if action == BAIL else self.right if action == self._animal else self.wrong

    def observations(self) -> torch.Tensor:
        if self._animal is None:
            raise RuntimeError("call reset() before observations()")
        obs = torch.zeros(self.num_agents, self.observation_layout.dim)
        obs[0, self._animal] = 1.0
        if self._word is not None:
            obs[1, 2 + self._word] = 1.0
        return obs

    def legal_actions(self) -> torch.Tensor:
        legal = torch.zeros(self.num_agents, BAIL + 1, dtype=torch.bool)
        if self._animal is not None and not self._done:
            if self._word is None:
                legal[0, :BAIL] = True
            else:
                legal[1] = True
        return legal

    @property
    def terminal(self) -> bool:
        return self._done

    @property
    def last_outcome(self) -> int | None:
        return self._animal if self._word is None and not self._done else None

    @property
    def last_outcome_probability(self) -> float:
        return 0.5 if self.last_outcome is not None else 1.0

    def relabel_outcome(self, outcome: int | None, perms: dict[str, torch.Tensor]) -> int | None:
        """The pet relabelled by ``perms["pet"]`` (unchanged when absent); other label sets do not touch it."""
        names = {self.pet.name, self.heard.name, self.said.name}
        unknown = sorted(set(perms) - names)
        if unknown:
            raise ValueError(f"perms has unknown label set(s) {unknown}; this game's label sets are {sorted(names)}")
        if outcome is None or "pet" not in perms:
            return outcome
        return int(perms["pet"][outcome])

    def __repr__(self) -> str:
        return f"CatDogGame(right={self.right:g}, wrong={self.wrong:g}, bail={self.bail:g})"
