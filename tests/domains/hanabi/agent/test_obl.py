"""Public OBL agents: loaded ``.pthw`` state dicts compute OBL's own forward pass, symmetrize exactly,
play through ``load_policy``, and anything else is refused clearly.

``_obl_forward`` below re-implements off-belief-learning's ``LSTMNet``/``PublicLSTMNet``/``FFWDNet``
(pyhanabi/net.py) with plain tensor operations on the state-dict tensors, and ``_obl_state_dict``
builds random state dicts with the exact keys and shapes those modules save.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from eqc.cli import main
from eqc.domains.hanabi import load_policy
from eqc.domains.hanabi.agent.files import CheckpointError
from eqc.domains.hanabi.agent.network import Agent, QNetwork, dueling_q, no_op_representation
from eqc.domains.hanabi.agent.obl import PublicQNetwork, load_obl_network
from eqc.domains.hanabi.config.agent import NetworkConfig
from eqc.domains.hanabi.play.self_play import greedy_games
from eqc.domains.hanabi.rules import HanabiRules
from eqc.domains.hanabi.symmetry import colour_symmetry
from eqc.groups import dihedral, symmetric
from eqc.verification import equivariance_error

CPU = torch.device("cpu")
HAND, PRIV, PUBL, ACTIONS = 125, 658, 533, 21  # OBL's 2-player sizes: feature 783 = own hand + priv_s


def _obl_state_dict(kind: str, hid: int = 512, lstm_layers: int = 2, *, seed: int = 0, dtype=torch.float64) -> dict[str, torch.Tensor]:
    """Random weights under OBL's exact keys, in its modules' registration order (as ``model0.pthw``)."""
    shapes: dict[str, tuple[int, ...]] = {}
    trunks = {"lstm": [("net", PRIV, 1)], "ffwd": [("net", PRIV, 3)], "publ": [("priv_net", PRIV, 3), ("publ_net", PUBL, 1)]}[kind]
    for name, width, layers in trunks:
        for k in range(layers):
            shapes[f"{name}.{2 * k}.weight"] = (hid, width if k == 0 else hid)
            shapes[f"{name}.{2 * k}.bias"] = (hid,)
    for k in range(lstm_layers if kind != "ffwd" else 0):
        shapes |= {f"lstm.weight_ih_l{k}": (4 * hid, hid), f"lstm.weight_hh_l{k}": (4 * hid, hid)}
        shapes |= {f"lstm.bias_ih_l{k}": (4 * hid,), f"lstm.bias_hh_l{k}": (4 * hid,)}
    shapes |= {"fc_v.weight": (1, hid), "fc_v.bias": (1,), "fc_a.weight": (ACTIONS, hid), "fc_a.bias": (ACTIONS,)}
    shapes |= {"pred_1st.weight": (15, hid), "pred_1st.bias": (15,)}
    generator = torch.Generator().manual_seed(seed)
    # uniform(-2/sqrt(hid), 2/sqrt(hid)): large enough that products and gates are far from trivial
    return {k: (torch.rand(s, generator=generator, dtype=dtype) * 2 - 1) * 2 / math.sqrt(hid) for k, s in shapes.items()}


def _linear(sd: dict[str, torch.Tensor], name: str, x: torch.Tensor, *, bias: str | None = None) -> torch.Tensor:
    """``x W^T + b`` with ``W = sd[name + ".weight"]`` (or ``sd[name]`` when ``bias`` names the bias)."""
    if bias is None:
        return x @ sd[f"{name}.weight"].T + sd[f"{name}.bias"]
    return x @ sd[name].T + sd[bias]


def _relu_trunk(sd: dict[str, torch.Tensor], name: str, x: torch.Tensor) -> torch.Tensor:
    k = 0
    while f"{name}.{k}.weight" in sd:
        x = torch.relu(_linear(sd, f"{name}.{k}", x))
        k += 2
    return x


def _lstm(
    sd: dict[str, torch.Tensor], x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """torch.nn.LSTM's equations (gates i, f, g, o), layer by layer, step by step: x [T, B, H], h, c [L, B, H]."""
    h, c, outputs = list(h), list(c), []
    for t in range(x.shape[0]):
        inp = x[t]
        for k in range(len(h)):
            gates = (
                inp @ sd[f"lstm.weight_ih_l{k}"].T
                + sd[f"lstm.bias_ih_l{k}"]
                + h[k] @ sd[f"lstm.weight_hh_l{k}"].T
                + sd[f"lstm.bias_hh_l{k}"]
            )
            i, f, g, o = gates.chunk(4, dim=-1)
            c[k] = torch.sigmoid(f) * c[k] + torch.sigmoid(i) * torch.tanh(g)
            h[k] = torch.sigmoid(o) * torch.tanh(c[k])
            inp = h[k]
        outputs.append(inp)
    return torch.stack(outputs), torch.stack(h), torch.stack(c)


def _obl_forward(sd: dict[str, torch.Tensor], feature: torch.Tensor, legal: torch.Tensor) -> dict[str, torch.Tensor]:
    """OBL's forward on its 783-float features ``[T, B, 783]`` (own hand first) from the zero state."""
    priv_s, publ_s = feature[..., HAND:], feature[..., 2 * HAND :]  # rlcc/utils.h splitPrivatePublic
    layers = sum(1 for k in sd if k.startswith("lstm.weight_ih_l"))
    hid = sd["fc_a.weight"].shape[1]
    zeros = torch.zeros(layers, feature.shape[1], hid, dtype=feature.dtype)
    h = c = zeros
    if "publ_net.0.weight" in sd:  # PublicLSTMNet
        publ_o, h, c = _lstm(sd, _relu_trunk(sd, "publ_net", publ_s), zeros, zeros)
        o = _relu_trunk(sd, "priv_net", priv_s) * publ_o
    elif layers:  # LSTMNet
        o, h, c = _lstm(sd, _relu_trunk(sd, "net", priv_s), zeros, zeros)
    else:  # FFWDNet
        o = _relu_trunk(sd, "net", priv_s)
    a, v = _linear(sd, "fc_a", o), _linear(sd, "fc_v", o)
    legal = legal.to(a.dtype)
    legal_a = a * legal
    q = v + legal_a - legal_a.mean(-1, keepdim=True)  # net.py duel
    act_greedy = ((1 + a - a.amin(-1, keepdim=True)) * legal).argmax(-1)  # R2D2Agent.greedy_act, per step
    forward_greedy = ((1 + q - q.min()) * legal).argmax(-1)  # LSTMNet.forward
    return {"a": a, "v": v, "q": q, "act_greedy": act_greedy, "forward_greedy": forward_greedy, "h": h, "c": c}


def _inputs(steps: int, batch: int, seed: int, dtype=torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    """OBL features (own hand zero) and legal masks: each row on turn (some moves) or waiting (no-op only)."""
    generator = torch.Generator().manual_seed(seed)
    feature = torch.rand(steps, batch, HAND + PRIV, generator=generator, dtype=dtype)
    feature[..., :HAND] = 0
    on_turn = torch.rand(steps, batch, 1, generator=generator) < 0.5
    moves = torch.rand(steps, batch, ACTIONS, generator=generator) < 0.6
    moves[..., 5], moves[..., -1] = True, False
    waiting = torch.zeros_like(moves)
    waiting[..., -1] = True
    return feature, torch.where(on_turn, moves, waiting)


SIZES = {"default": (512, 2), "small": (24, 1)}
KINDS = ["lstm", "publ", "ffwd"]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_loaded_network_computes_obl_forward_over_a_sequence(kind: str, size: str) -> None:
    sd = _obl_state_dict(kind, *SIZES[size])
    network = load_obl_network(sd)
    expected_type = PublicQNetwork if kind == "publ" else QNetwork
    assert type(network) is expected_type and network.recurrent == (kind != "ffwd")
    assert (network.obs_dim, network.num_actions, network.out_dim) == (PRIV, ACTIONS, ACTIONS + 1)
    feature, legal = _inputs(steps=6, batch=5, seed=1)
    ref = _obl_forward(sd, feature, legal)
    obs = feature[..., HAND:]  # eqc's v0_belief observation is OBL's priv_s
    with torch.no_grad():
        raw, state = network(obs) if network.recurrent else (network.feedforward(obs), None)
        agent = Agent(network)
        q_eqc, _ = agent.sequence(obs, legal)
    torch.testing.assert_close(raw[..., :-1], ref["a"], rtol=0, atol=1e-12)
    torch.testing.assert_close(raw[..., -1:], ref["v"], rtol=0, atol=1e-12)
    on_legal = ref["q"].masked_fill(~legal, 0.0)  # the loaded agent computes OBL's Q (hanabi_SAD's dueling centre)
    torch.testing.assert_close(q_eqc.masked_fill(~legal, 0.0), on_legal, rtol=0, atol=1e-12)
    torch.testing.assert_close(dueling_q(raw, legal, True, "all").masked_fill(~legal, 0.0), on_legal, rtol=0, atol=1e-12)
    if network.recurrent:
        torch.testing.assert_close(state[0], ref["h"], rtol=0, atol=1e-12)
        torch.testing.assert_close(state[1], ref["c"], rtol=0, atol=1e-12)
    greedy = q_eqc.argmax(-1)
    assert torch.equal(greedy, ref["act_greedy"]) and torch.equal(greedy, ref["forward_greedy"])
    # eqc's dueling (mean of A over legal moves) and OBL's (mean of legal-masked A over all 21)
    # differ on the legal moves by one constant per state
    gap = q_eqc - ref["q"]
    spread = gap.masked_fill(~legal, -math.inf).amax(-1) - gap.masked_fill(~legal, math.inf).amin(-1)
    assert spread.max() < 1e-12


def test_stepping_the_agent_equals_obl_acting_step_by_step() -> None:
    """OBL's actors step one move at a time carrying (h, c): so do eqc's agents."""
    sd = _obl_state_dict("publ", 32, 2, seed=3)
    feature, legal = _inputs(steps=7, batch=4, seed=4)
    ref = _obl_forward(sd, feature, legal)
    agent, state, moves = Agent(load_obl_network(sd)), None, []
    with torch.no_grad():
        for t in range(feature.shape[0]):
            q, state = agent.step(feature[t, :, HAND:], legal[t], state)
            moves.append(q.argmax(-1))
    assert torch.equal(torch.stack(moves), ref["act_greedy"])
    torch.testing.assert_close(state[0], ref["h"], rtol=0, atol=1e-12)


def test_public_part_is_a_subrepresentation() -> None:
    """publ_s = obs[125:] is closed under every colour permutation, so cutting it out commutes with rho_obs."""
    rep = colour_symmetry(symmetric(5), HanabiRules(knowledge="v0_belief")).observation_rep
    moves = rep.coordinate_permutations  # [120, 658]: coordinate c goes to moves[g, c]
    assert rep.dim == PRIV
    assert bool((moves[:, :HAND] < HAND).all()) and bool((moves[:, HAND:] >= HAND).all())
    assert not bool((moves[:, HAND:] == torch.arange(HAND, PRIV)).all())  # the public part does move


def _symmetrized_q(kind: str, hidden_scheme: str = "average", symmetrize: bool = True):
    network = load_obl_network(_obl_state_dict(kind, 16, 2, seed=5))
    sym = colour_symmetry(dihedral(5), HanabiRules(knowledge="v0_belief"))
    agent = Agent(network, sym.observation_rep, sym.action_rep, hidden_scheme=hidden_scheme) if symmetrize else Agent(network)

    def q(obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        values, _ = agent.sequence(obs, legal)
        return values.masked_fill(~legal, 0.0)

    return q, sym.observation_rep, no_op_representation(sym.action_rep, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_symmetrized_obl_networks_are_exactly_equivariant(kind: str) -> None:
    feature, legal = _inputs(steps=5, batch=3, seed=6)
    obs = feature[..., HAND:]
    q, obs_rep, act_rep = _symmetrized_q(kind)
    assert equivariance_error(q, [obs_rep, act_rep], act_rep, [obs, legal]).max_error < 1e-12
    plain, _, _ = _symmetrized_q(kind, symmetrize=False)  # negative control
    assert equivariance_error(plain, [obs_rep, act_rep], act_rep, [obs, legal]).max_error > 1e-4


def test_pthw_file_plays_through_load_policy_and_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sd = _obl_state_dict("publ", seed=7, dtype=torch.float32)  # default sizes, as OBL saves them
    path = tmp_path / "model0.pthw"
    torch.save(sd, path)
    policy = load_policy(path)
    assert policy.trained_moves == 0 and policy.agent.group is None
    game = policy.spec.game
    assert (game.num_players, game.knowledge, game.uses_sad) == (2, "v0_belief", False)
    assert policy.spec.network.hidden_size == 512 and policy.spec.network.lstm_layers == 2
    played = greedy_games(policy.agent, policy.rules, CPU, games=4, deck_seed=0)
    assert played.scores.min() >= 0 and played.scores.max() <= 25 and (played.moves >= 0).sum() > 4
    feature, legal = _inputs(steps=4, batch=2, seed=8, dtype=torch.float32)
    ref = _obl_forward({k: v.double() for k, v in sd.items()}, feature.double(), legal)
    q, _ = policy.agent.sequence(feature[..., HAND:], legal)
    assert torch.equal(q.argmax(-1), ref["act_greedy"])
    symmetrized = load_policy(path, symmetrize="D10")
    assert symmetrized.agent.group.order == 10
    assert greedy_games(symmetrized.agent, symmetrized.rules, CPU, games=2, deck_seed=0).scores.numel() == 2
    assert main(["hanabi", "eval", "--checkpoint", str(path), "--games", "2", "--symmetrize", "C5"]) == 0
    assert "0 moves trained, symmetrized over C5" in capsys.readouterr().out


def test_agent_state_dict_with_online_net_prefix_loads_its_online_net() -> None:
    sd = _obl_state_dict("lstm", 16, 1, seed=9)
    agent_sd = {f"online_net.{k}": v for k, v in sd.items()} | {f"target_net.{k}": v + 1 for k, v in sd.items()}
    torch.testing.assert_close(load_obl_network(agent_sd).state_dict(), load_obl_network(sd).state_dict(), rtol=0, atol=0)


class _Foreign:
    pass


def _error(source: object, match: str) -> str:
    with pytest.raises(CheckpointError, match=match) as info:
        load_obl_network(source)
    return str(info.value)


def test_foreign_and_mismatched_inputs_are_refused_naming_what_was_expected(tmp_path: Path) -> None:
    expected = "expected the state dict of off-belief-learning's LSTMNet"
    _error(QNetwork(PRIV, ACTIONS, NetworkConfig(hidden_size=16)).state_dict(), expected)  # an eqc network's keys
    _error(torch.zeros(3), "not a mapping of names to tensors")
    good = _obl_state_dict("lstm", 16, 2)
    message = _error({k: v for k, v in good.items() if k != "pred_1st.bias"}, r"missing \['pred_1st.bias'\]")
    assert expected in message
    _error(good | {"extra.weight": torch.zeros(2, dtype=torch.float64)}, r"unexpected \['extra.weight'\]")
    _error(good | {"fc_a.weight": torch.zeros(20, 16, dtype=torch.float64)}, r"fc_a.weight \(20, 16\) \(expected \(21, 16\)\)")
    sad = _obl_state_dict("publ", 16, 1) | {"priv_net.0.weight": torch.zeros(16, 713, dtype=torch.float64)}
    _error(sad, r"priv_net.0.weight \(16, 713\) \(expected \(16, 658\)\)")  # a SAD model: priv_s of 713
    _error({k: v for k, v in good.items() if not k.startswith("lstm.weight_hh_l1")}, r"missing \['lstm.weight_hh_l1'\]")
    _error({k: v.long() for k, v in good.items()}, "one floating dtype")
    pickled = tmp_path / "foreign.pthw"
    torch.save({"net.0.weight": _Foreign()}, pickled)
    _error(pickled, r"not readable with torch.load\(weights_only=True\)")
    garbage = tmp_path / "garbage.pthw"
    garbage.write_bytes(b"not a torch file")
    _error(garbage, "not readable")


def test_load_policy_decides_the_format_by_the_path_and_names_the_formats(tmp_path: Path) -> None:
    foreign = tmp_path / "other.pt"
    torch.save({"weights": torch.ones(2)}, foreign)
    with pytest.raises(CheckpointError, match=r"not an eqc Hanabi checkpoint.*an OBL model file \*\.pthw\)"):
        load_policy(foreign)
    broken = tmp_path / "model0.pthw"
    torch.save(_obl_state_dict("publ", 16, 1) | {"fc_v.weight": torch.zeros(2, 16, dtype=torch.float64)}, broken)
    with pytest.raises(CheckpointError, match=r"not a usable OBL PublicLSTMNet state dict.*fc_v.weight"):
        load_policy(broken)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_policy(tmp_path / "missing")


def test_a_directory_of_obl_files_is_a_cross_play_pool(tmp_path: Path) -> None:
    from eqc.domains.hanabi.xp import cross_play_games
    from eqc.domains.hanabi.xp.pools import load_pools, pool_runs

    for seed in range(2):  # off-belief-learning's layout: one directory per agent, each with model0.pthw
        (tmp_path / f"a{seed}").mkdir()
        state = {k: v.float() for k, v in _obl_state_dict("lstm", hid=16, lstm_layers=1, seed=seed).items()}
        torch.save(state, tmp_path / f"a{seed}" / "model0.pthw")
    assert [p.parent.name for p in pool_runs(tmp_path)] == ["a0", "a1"]
    agents = load_pools([tmp_path], symmetrize="D10")
    played = cross_play_games([a.policy for a in agents], 4)
    assert played.scores.shape == (4, 4)
