"""The public OBL agents (off-belief-learning's ``model*.pthw``) as eqc networks.

A ``.pthw`` file is the ``state_dict()`` of one of OBL's Q-networks (pyhanabi/net.py),
which read ``priv_s``, the observation without the observer's own (empty) hand: for two players
without SAD exactly eqc's ``v0_belief`` observation (658 floats), and ``publ_s``, the public part
``priv_s[125:]`` (the partner's hand removed; 533 floats). Both nets compute advantages
``A = fc_a(o)`` over the 21 actions (20 moves, no-op) and a value ``V = fc_v(o)`` from features:

- ``LSTMNet``: ``o = LSTM(MLP(priv_s))`` with ``MLP`` = Linear+ReLU layers (``net.*``): this is
  a :class:`QNetwork` (no LayerNorm, dueling, auxiliary head of 15 logits).
- ``PublicLSTMNet``: ``o = MLP3(priv_s) * LSTM(MLP(publ_s))`` (``priv_net.*``, ``publ_net.*``):
  a :class:`PublicQNetwork`, which cuts ``publ_s`` out of its 658-float input itself.
- ``FFWDNet`` (the same keys as ``LSTMNet`` without ``lstm.*``): ``o = MLP(priv_s)``, a
  feed-forward :class:`QNetwork`.

Key mapping (sizes are read from the shapes): ``net.*`` or ``publ_net.*`` -> ``mlp.*``;
``priv_net.*`` -> ``private.*``; ``lstm.*`` -> ``lstm.*``; ``fc_a`` stacked over ``fc_v`` ->
``head`` (raw output ``[A, V]``); ``pred_1st`` -> ``aux_head``. A state dict saved from OBL's
``R2D2Agent`` (keys under ``online_net.``) is read through its online net.

Q-values: OBL's dueling subtracts the legal-masked advantages' mean over *all* 21 actions, as
hanabi_SAD's does; imported networks get ``[network] dueling_centre = "all"`` and compute the same Q.

Symmetrizing: colour permutations move coordinates within ``obs[:125]`` and within ``obs[125:]``,
so cutting ``publ_s`` out inside the network commutes with the observation representation and
``Agent(network, obs_rep, move_rep)`` symmetrizes OBL's two-input function as it stands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn

from eqc.domains.hanabi.agent.files import CheckpointError
from eqc.domains.hanabi.agent.network import QNetwork, State
from eqc.domains.hanabi.config.agent import AgentSpec, GameConfig, NetworkConfig

__all__ = ["OBL_EXPECTED", "PublicQNetwork", "load_obl_network", "obl_spec"]

OBS_DIM, HAND_BITS, NUM_ACTIONS, AUX_OUTPUTS = 658, 125, 21, 15
OBL_EXPECTED = (
    "the state dict of off-belief-learning's LSTMNet (keys net.*, lstm.*, fc_v.*, fc_a.*, pred_1st.*; FFWDNet: no lstm.*) or "
    "PublicLSTMNet (keys priv_net.*, publ_net.*, lstm.*, fc_v.*, fc_a.*, pred_1st.*) for 2 players without SAD, "
    f"reading priv_s of {OBS_DIM} floats and publ_s of {OBS_DIM - HAND_BITS}"
)


class PublicQNetwork(QNetwork):
    """OBL's ``PublicLSTMNet`` as a :class:`QNetwork`: features ``private(x) * LSTM(mlp(x[..., public_start:]))``.

    ``config`` describes the public trunk (``mlp_layers`` Linear+ReLU, then ``lstm_layers``
    LSTM layers, no LayerNorm); ``private_layers`` Linear+ReLU layers read the whole input.
    """

    def __init__(
        self, obs_dim: int, num_actions: int, config: NetworkConfig, *, public_start: int, private_layers: int, aux_outputs: int = 0
    ) -> None:
        if config.lstm_layers < 1 or config.layer_norm or not 0 <= public_start < obs_dim:
            needs = "lstm_layers >= 1, layer_norm False and 0 <= public_start < obs_dim"
            raise ValueError(f"PublicQNetwork needs {needs}; got {config} and public_start {public_start}")
        super().__init__(obs_dim - public_start, num_actions, config, aux_outputs)
        self.obs_dim, self.public_start = obs_dim, public_start
        layers: list[nn.Module] = []
        for k in range(private_layers):
            layers += [nn.Linear(obs_dim if k == 0 else config.hidden_size, config.hidden_size), nn.ReLU()]
        self.private = nn.Sequential(*layers)

    def features(self, x: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        public, state = super().features(x[..., self.public_start :], state)
        return self.private(x) * public, state

    def feedforward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("PublicQNetwork is recurrent: call it as network(x, state)")


def _read(source: str | Path | Mapping[str, torch.Tensor], device: torch.device | str) -> dict[str, torch.Tensor]:
    if isinstance(source, (str, Path)):
        try:
            source = torch.load(source, map_location=device, weights_only=True)
        except Exception as exc:  # missing, truncated, or a pickle that holds code
            reason = f"{type(exc).__name__}: {str(exc)[:200]}"
            raise CheckpointError(
                f"{source} is not readable with torch.load(weights_only=True) ({reason}); expected {OBL_EXPECTED}"
            ) from None
    if not isinstance(source, Mapping) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in source.items()):
        raise CheckpointError(f"expected {OBL_EXPECTED}; got a {type(source).__name__} that is not a mapping of names to tensors")
    if any(k.startswith("online_net.") for k in source):  # an R2D2Agent's state dict: its online net
        source = {k[len("online_net.") :]: v for k, v in source.items() if k.startswith("online_net.")}
    return dict(source)


def _layers(keys: set[str], pattern: str) -> int:
    """How many keys fully match ``pattern`` (one per layer)."""
    return sum(1 for k in keys if re.fullmatch(pattern, k))


def _expected_shapes(hid: int, ff: dict[str, int], lstm_layers: int, inputs: dict[str, int]) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for trunk, layers in ff.items():
        for k in range(layers):
            shapes[f"{trunk}.{2 * k}.weight"] = (hid, inputs[trunk] if k == 0 else hid)
            shapes[f"{trunk}.{2 * k}.bias"] = (hid,)
    for k in range(lstm_layers):
        shapes |= {f"lstm.weight_ih_l{k}": (4 * hid, hid), f"lstm.weight_hh_l{k}": (4 * hid, hid)}
        shapes |= {f"lstm.bias_ih_l{k}": (4 * hid,), f"lstm.bias_hh_l{k}": (4 * hid,)}
    for head, size in (("fc_v", 1), ("fc_a", NUM_ACTIONS), ("pred_1st", AUX_OUTPUTS)):
        shapes |= {f"{head}.weight": (size, hid), f"{head}.bias": (size,)}
    return shapes


def _check(sd: dict[str, torch.Tensor]) -> tuple[str, int, dict[str, int], int]:
    """Validate an OBL state dict exactly; return (kind, hidden size, trunk layers, LSTM layers)."""
    keys = set(sd)
    kind = "PublicLSTMNet" if "publ_net.0.weight" in keys else "LSTMNet"
    trunks = ("priv_net", "publ_net") if kind == "PublicLSTMNet" else ("net",)
    fc_a = sd.get("fc_a.weight")
    if fc_a is None or fc_a.dim() != 2 or any(f"{t}.0.weight" not in keys or sd[f"{t}.0.weight"].dim() != 2 for t in trunks):
        raise CheckpointError(f"expected {OBL_EXPECTED}; got keys {sorted(keys)[:12]}{' ...' if len(keys) > 12 else ''}")
    hid, lstm_layers = fc_a.shape[1], _layers(keys, r"lstm\.weight_ih_l\d+")
    if kind == "PublicLSTMNet":
        lstm_layers = max(lstm_layers, 1)
    elif lstm_layers == 0:
        kind = "FFWDNet"
    ff = {t: _layers(keys, rf"{t}\.\d+\.weight") for t in trunks}
    inputs = {"net": OBS_DIM, "priv_net": OBS_DIM, "publ_net": OBS_DIM - HAND_BITS}
    expected = _expected_shapes(hid, ff, lstm_layers, inputs)
    missing, unexpected = sorted(expected.keys() - keys), sorted(keys - expected.keys())
    wrong = [f"{k} {tuple(sd[k].shape)} (expected {v})" for k, v in expected.items() if k in sd and tuple(sd[k].shape) != v]
    if missing or unexpected or wrong:
        problems = [f"missing {missing[:8]}"] * bool(missing) + [f"unexpected {unexpected[:8]}"] * bool(unexpected)
        problems += [f"wrong shapes: {', '.join(wrong[:4])}"] * bool(wrong)
        raise CheckpointError(f"not a usable OBL {kind} state dict ({'; '.join(problems)}); expected {OBL_EXPECTED}")
    dtypes = {v.dtype for v in sd.values()}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise CheckpointError(f"OBL state dict tensors must share one floating dtype, got {sorted(map(str, dtypes))}")
    return kind, hid, ff, lstm_layers


def load_obl_network(
    source: str | Path | Mapping[str, torch.Tensor], device: torch.device | str = "cpu", dtype: torch.dtype | None = None
) -> QNetwork:
    """An eqc network computing an OBL net's raw outputs ``[A, V]`` from the 658-float v0_belief observation.

    ``source``: a ``.pthw`` file (read with ``torch.load(weights_only=True)``) or its state dict;
    ``dtype``: None keeps the saved tensors' dtype. Anything else raises ``CheckpointError``.
    """
    sd = _read(source, device)
    kind, hid, ff, lstm_layers = _check(sd)
    head = {"head.weight": torch.cat([sd["fc_a.weight"], sd["fc_v.weight"]]), "head.bias": torch.cat([sd["fc_a.bias"], sd["fc_v.bias"]])}
    rename = {"net.": "mlp.", "publ_net.": "mlp.", "priv_net.": "private.", "lstm.": "lstm.", "pred_1st.": "aux_head."}
    weights = dict(head)
    for key, value in sd.items():
        prefix = key.split(".", 1)[0] + "."
        if prefix in rename:
            weights[rename[prefix] + key[len(prefix) :]] = value
    trunk = ff["publ_net"] if kind == "PublicLSTMNet" else ff["net"]
    config = NetworkConfig(hidden_size=hid, mlp_layers=trunk, lstm_layers=lstm_layers, layer_norm=False, dueling=True,
                           dueling_centre="all", head="q", precision="fp32")
    if kind == "PublicLSTMNet":
        private = ff["priv_net"]
        network: QNetwork = PublicQNetwork(
            OBS_DIM, NUM_ACTIONS, config, public_start=HAND_BITS, private_layers=private, aux_outputs=AUX_OUTPUTS
        )
    else:
        network = QNetwork(OBS_DIM, NUM_ACTIONS, config, aux_outputs=AUX_OUTPUTS)
    network = network.to(device=device, dtype=sd["fc_a.weight"].dtype if dtype is None else dtype)
    network.load_state_dict(weights)
    return network.eval()


def obl_spec(network: QNetwork) -> AgentSpec:
    """The spec of an OBL agent: 2 players, v0_belief, no SAD, ``network``'s sizes, a plain network in fp32."""
    return AgentSpec(GameConfig(num_players=2, knowledge="v0_belief", sad="off"), network.config)
