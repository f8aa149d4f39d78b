"""Your own game, end to end: the code of docs/tutorials/your-own-game.md, its Python blocks in page order.

Run it from any directory, with eqc's core installed: python docs/tutorials/your_own_game.py (under a
minute on one CPU thread). The page explains each step and shows what each block prints;
tests/test_your_own_game.py keeps this file the same code as the page.
"""

import torch
import torch.nn.functional as F

from eqc.dec_pomdp import Block, Labels, Layout

torch.set_num_threads(1)
COLOURS = 3
colour = Labels("colour", COLOURS)
observation_layout = Layout([
    Block("seat", 2, encoding="one_hot"),        # who I am: 0 Alice, 1 Bob (never relabelled)
    Block("card", colour, encoding="one_hot"),   # Alice's card (all zeros in Bob's view)
    Block("token", colour, encoding="one_hot"),  # the token Alice showed (all zeros before)
])
action_layout = Layout([Block("show", colour), Block("guess", colour)])
SHOW, GUESS = action_layout.offset("show"), action_layout.offset("guess")


def observe(cards, tokens):
    """Both players' views of n games: cards, tokens [n] (token -1: none yet) -> [n, 2, 8]."""
    n = len(cards)
    seat = torch.eye(2).expand(n, 2, 2)
    card = torch.stack([F.one_hot(cards, COLOURS), torch.zeros(n, COLOURS, dtype=torch.long)], 1)
    token = F.one_hot(tokens + 1, COLOURS + 1)[:, 1:].unsqueeze(1).expand(n, 2, COLOURS)
    return torch.cat([seat, card.float(), token.float()], -1)


def legal(turn, n):
    """Legal actions [n, 2, 6]: Alice shows a token at turn 0, Bob guesses at turn 1."""
    mask = torch.zeros(n, 2, action_layout.dim, dtype=torch.bool)
    if turn == 0:
        mask[:, 0, SHOW:SHOW + COLOURS] = True
    elif turn == 1:
        mask[:, 1, GUESS:GUESS + COLOURS] = True
    return mask


def score(cards, guesses):
    """1 where Bob's guess (an action index) names the card, else 0."""
    return (guesses - GUESS == cards).float()


views = observe(torch.tensor([2]), torch.tensor([1]))[0]
for seat, view in zip(("Alice", "Bob"), views, strict=True):
    print(seat, [observation_layout.describe(int(k)) for k in view.nonzero()])


from eqc.dec_pomdp import DecPOMDP


class TokenGame:
    """One game at a time, through eqc's DecPOMDP protocol, on the rules above."""

    num_agents = 2

    def __init__(self, seed=0):
        self.generator = torch.Generator().manual_seed(seed)  # chance: the card dealt
        self.card, self.token, self.turn = 0, -1, 2
        self._outcome, self._probability = None, 1.0

    def reset(self, outcome=None):
        """Deal Alice a card; `outcome` forces its colour (a relabelled replay does)."""
        if outcome is None:
            outcome = int(torch.randint(COLOURS, (), generator=self.generator))
        if outcome not in range(COLOURS):
            raise ValueError(f"a card is a colour 0..{COLOURS - 1}, got {outcome!r}")
        self.card, self.token, self.turn = outcome, -1, 0
        self._outcome, self._probability = outcome, 1 / COLOURS

    def step(self, actions, outcome=None):
        if self.terminal:
            raise RuntimeError("the game has ended: call reset()")
        if outcome is not None:
            raise ValueError(f"a turn has no chance outcome, got {outcome!r}")
        seat, action = self.turn, int(actions[self.turn])
        if not self.legal_actions()[seat, action]:
            raise ValueError(f"player {seat} cannot play action {action} at turn {self.turn}")
        self._outcome, self._probability = None, 1.0
        self.turn += 1
        if seat == 0:
            self.token = action - SHOW
            return 0.0
        return float(score(torch.tensor([self.card]), torch.tensor([action]))[0])

    def observations(self):
        return observe(torch.tensor([self.card]), torch.tensor([self.token]))[0]

    def legal_actions(self):
        return legal(self.turn, 1)[0]

    @property
    def terminal(self):
        return self.turn == 2

    @property
    def last_outcome(self):
        return self._outcome

    @property
    def last_outcome_probability(self):
        return self._probability

    def relabel_outcome(self, outcome, perms):
        """The card dealt, relabelled: colour c becomes perms["colour"][c]."""
        return int(perms["colour"][outcome])


game = TokenGame()
print(isinstance(game, DecPOMDP))
game.reset()
print("dealt", game.last_outcome, "with probability", round(game.last_outcome_probability, 3))
print(game.step([SHOW + game.card, 0]), game.step([0, GUESS + game.token]), game.terminal)


from eqc.dec_pomdp import Symmetry
from eqc.groups import symmetric
from eqc.verification import check_env_symmetry

symmetry = Symmetry(symmetric(COLOURS), acts_on=colour, observation_layout=observation_layout,
                    action_layout=action_layout)
found = check_env_symmetry(game, symmetry, episodes=200, generator=torch.Generator().manual_seed(0))
print(found or "the declared symmetry held in 200 relabelled games")
assert found is None


uncoloured_guess = Layout([Block("show", colour), Block("guess", COLOURS)])
wrong = Symmetry(symmetric(COLOURS), acts_on=colour, observation_layout=observation_layout,
                 action_layout=uncoloured_guess)
print(check_env_symmetry(game, wrong, episodes=200, generator=torch.Generator().manual_seed(0)))


class Forgetful(TokenGame):
    def relabel_outcome(self, outcome, perms):
        return outcome  # forgets to relabel the card


print(check_env_symmetry(Forgetful(), symmetry, episodes=200,
                         generator=torch.Generator().manual_seed(0)))


from torch import nn

from eqc.symmetrize import OtherPlay, Symmetrizer

RULES = ("self-play", "other-play", "symmetrized")


def make_policy(rule, seed):
    torch.manual_seed(seed)  # the initial weights
    net = nn.Sequential(nn.Linear(observation_layout.dim, 32), nn.ReLU(),
                        nn.Linear(32, action_layout.dim))
    if rule == "symmetrized":  # S(net): exactly S3-equivariant, trained by self-play
        return Symmetrizer(net, symmetry.observation_rep, symmetry.action_rep)
    return net


def train(rule, seed, updates=200, batch=256, lr=0.02, entropy_bonus=0.02):
    """REINFORCE on batches of games: the policy and its mean return over its last 25 updates."""
    policy = make_policy(rule, seed)
    draws = torch.Generator().manual_seed(seed)  # cards, actions and relabellings
    other_play = OtherPlay.from_symmetry(symmetry, draws) if rule == "other-play" else None
    optimiser = torch.optim.Adam(policy.parameters(), lr=lr)
    returns = []
    for _ in range(updates):
        cards = torch.randint(COLOURS, (batch,), generator=draws)
        tokens = torch.full((batch,), -1)
        log_prob, entropy = 0.0, 0.0
        for seat in (0, 1):  # Alice shows a token, then Bob guesses
            obs, mask = observe(cards, tokens)[:, seat], legal(seat, batch)[:, seat]
            if other_play is not None:  # each player plays its own relabelled game
                elements = torch.randint(symmetry.group.order, (batch,), generator=draws)
                relabelling = other_play.relabelling_indices(elements)
                obs = relabelling.relabel_observations(obs)
                mask = relabelling.relabel_legal_actions(mask)
            logp = policy(obs).masked_fill(~mask, float("-inf")).log_softmax(-1)
            actions = torch.multinomial(logp.exp(), 1, generator=draws).squeeze(1)
            log_prob = log_prob + logp.gather(1, actions[:, None]).squeeze(1)
            entropy = entropy - (logp.exp() * logp.masked_fill(~mask, 0.0)).sum(-1).mean()
            if other_play is not None:
                actions = relabelling.to_env_actions(actions)  # back to the real game
            if seat == 0:
                tokens = actions - SHOW
        reward = score(cards, actions)
        loss = -((reward - reward.mean()) * log_prob).mean() - entropy_bonus * entropy
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        returns.append(reward.mean().item())
    return policy, sum(returns[-25:]) / 25


print(sum(p.numel() for p in make_policy("self-play", 0).parameters()), "parameters per network")


AGENTS, TRIES = 5, 10


def make_agent(rule, k):
    """Agent k of a rule: runs from fresh seeds until one reaches a perfect convention (its training
    return above 0.9), at most TRIES; the best run is kept. Every rule gets the same procedure."""
    runs = []
    for attempt in range(TRIES):
        runs.append(train(rule, seed=100 * k + attempt))
        if runs[-1][1] > 0.9:
            break
    return max(runs, key=lambda run: run[1])[0], len(runs)


agents = {}
for rule in RULES:
    kept = [make_agent(rule, k) for k in range(AGENTS)]
    agents[rule] = [policy for policy, _ in kept]
    print(f"{rule:<12} {AGENTS} agents from {sum(runs for _, runs in kept):2d} runs")


from eqc.evaluation import compare_pools, cross_play, pool_summary


@torch.no_grad()
def strategy(policy):
    """Alice's token for each card, Bob's guess for each token: probabilities [3, 3] each."""
    colours, none = torch.arange(COLOURS), torch.full((COLOURS,), -1)
    alice = policy(observe(colours, none)[:, 0])[:, SHOW:SHOW + COLOURS].softmax(-1)
    bob = policy(observe(colours, colours)[:, 1])[:, GUESS:GUESS + COLOURS].softmax(-1)
    return alice, bob


def play(first, second):
    """The exact expected score of `first` as Alice with `second` as Bob (no game sampled)."""
    alice, bob = first[0], second[1]
    return [float((alice @ bob).trace() / COLOURS)]


SHORT = {"self-play": "sp", "other-play": "op", "symmetrized": "sym"}
names = [f"{SHORT[rule]}{k}" for rule in RULES for k in range(AGENTS)]
result = cross_play([strategy(policy) for rule in RULES for policy in agents[rule]], play)
xp = result.mean  # [15, 15]: row = Alice's agent, column = Bob's
print("Alice \\ Bob", " ".join(f"{name:>4}" for name in names))
for name, row in zip(names, xp.tolist(), strict=True):
    print(f"{name:<11}", " ".join(f"{value:4.1f}" for value in row))


pools = {rule: [names.index(f"{SHORT[rule]}{k}") for k in range(AGENTS)] for rule in RULES}
print(f"{'rule':<12} {'self-play':>9}  cross-play ± jackknife SE over agents")
for rule, pool in pools.items():
    block = xp[pool][:, pool]
    xp_pool = pool_summary(block)
    print(f"{rule:<12} {block.diagonal().mean():9.2f}  {xp_pool.mean:.2f} ± {xp_pool.sem:.2f}")
for rule in ("other-play", "symmetrized"):
    test = compare_pools(xp, pools[rule], pools["self-play"])
    low, high = test.interval
    print(f"{rule} - self-play: {test.difference:+.2f}, 95% interval [{low:.2f}, {high:.2f}], "
          f"p = {test.p_value:.3f} (exact, {test.arrangements} splits): {test.verdict()}")
