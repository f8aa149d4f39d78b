"""The exact search for expected-return symmetries over label permutations (eqc.dec_pomdp.expected_return).

A pool's returns are given as a table per element, so each step of the search (measure, accept, close, re-measure)
is checked against what the table implies; the result is a declaration OtherPlay and the Symmetrizer take as is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eqc.dec_pomdp import Block, Labels, Layout, Symmetry, load_group_symmetry, search_label_permutations
from eqc.dec_pomdp.expected_return import read_group_file
from eqc.groups import direct_product, symmetric
from eqc.symmetrize import OtherPlay, Symmetrizer

COLOUR, SLOT = Labels("colour", 3), Labels("slot", 3)
OBS = Layout([Block("hand", SLOT, COLOUR), Block("hint", COLOUR)])
ACT = Layout([Block("play", SLOT), Block("hint", COLOUR)])


def candidate() -> Symmetry:
    return Symmetry(direct_product(symmetric(3), symmetric(3)), [COLOUR, SLOT], OBS, ACT)


def table_returns(loss_of: dict[tuple[int, ...], float], members: int = 4, noise: float = 0.0):
    """Returns of ``members`` agents: 8 minus the element's loss (0 unless listed), plus a per-measurement offset."""
    calls: list[tuple[tuple[int, ...], int]] = []

    def returns(permutation: torch.Tensor, measurement: int) -> torch.Tensor:
        key = tuple(permutation.tolist())
        calls.append((key, measurement))
        return torch.full((members,), 8.0 - loss_of.get(key, 0.0)) + noise * measurement + torch.arange(members) * 0.1

    return returns, calls


def _slot_swap(a: int, b: int) -> tuple[int, ...]:
    image = [0, 1, 2, 3, 4, 5]
    image[3 + a], image[3 + b] = 3 + b, 3 + a
    return tuple(image)


def test_colour_moves_free_slot_moves_cost_but_one() -> None:
    """Every slot permutation but the swap of slots 0 and 1 loses 1 point: the group is colour S3 x <(0 1)>."""
    sym = candidate()
    losses = {tuple(e): 1.0 for e in sym.group.elements.tolist() if e[3:] not in ([3, 4, 5], [4, 3, 5])}
    returns, calls = table_returns(losses)
    found = search_label_permutations(sym, returns, tolerance=0.25)
    assert found.group.order == 12 and len(found.accepted) == 12
    assert all(found.candidates[k].loss == pytest.approx(0.0) for k in found.accepted)
    assert {m.permutation for m in found.members} == {tuple(e) for e in found.group.elements.tolist()}
    assert _slot_swap(0, 1) in {m.permutation for m in found.members} and _slot_swap(1, 2) not in {m.permutation for m in found.members}
    assert [m for _, m in calls].count(0) == 36 and [m for _, m in calls].count(1) == 12  # searched once, the group re-measured
    assert found.worst_loss == pytest.approx(0.0)


def test_closure_adds_elements_and_records_their_loss() -> None:
    """Two accepted swaps generate all of S3 on the slots; the 3-cycles were not accepted and keep their loss."""
    sym = candidate()
    cheap = {_slot_swap(0, 1), _slot_swap(1, 2), tuple(range(6))}
    losses = {tuple(e): 1.0 for e in sym.group.elements.tolist() if tuple(e) not in cheap}
    found = search_label_permutations(sym, table_returns(losses)[0], tolerance=0.1)
    assert len(found.accepted) == 3 and found.group.order == 6
    assert found.worst_loss == pytest.approx(1.0)  # the 3-cycles, re-measured


def test_nothing_accepted_gives_the_trivial_group() -> None:
    sym = candidate()
    losses = {tuple(e): 2.0 for e in sym.group.elements.tolist()[1:]}
    found = search_label_permutations(sym, table_returns(losses)[0], tolerance=0.5)
    assert found.group.order == 1 and found.accepted == (0,)


def test_the_result_feeds_other_play_and_the_symmetrizer() -> None:
    sym = candidate()
    losses = {tuple(e): 1.0 for e in sym.group.elements.tolist() if e[3:] not in ([3, 4, 5], [4, 3, 5])}
    found = search_label_permutations(sym, table_returns(losses)[0], tolerance=0.25)
    op = OtherPlay.from_symmetry(found.symmetry, torch.Generator().manual_seed(0))
    relabelling = op.sample(64, 2)
    assert all(tuple(p) in {tuple(e) for e in found.group.elements.tolist()} for p in relabelling.permutations.view(-1, 6).tolist())
    net = torch.nn.Linear(OBS.dim, ACT.dim)
    s = Symmetrizer(net, found.symmetry.observation_rep, found.symmetry.action_rep)
    x = torch.randn(5, OBS.dim)
    for g in range(found.group.order):
        gx = found.symmetry.observation_rep.act(x, g)
        assert torch.allclose(s(gx), found.symmetry.action_rep.act(s(x), g), atol=1e-6)


def test_save_and_load(tmp_path: Path) -> None:
    sym = candidate()
    found = search_label_permutations(sym, table_returns({})[0], tolerance=0.0)
    path = found.save(tmp_path / "group.json", pool=["a", "b"])
    assert read_group_file(path)["context"] == {"pool": ["a", "b"]}
    loaded = load_group_symmetry(path, OBS, ACT)
    assert loaded.group == found.group and [lab.name for lab in loaded.acts_on] == ["colour", "slot"]
    with pytest.raises(FileExistsError, match="written once"):
        found.save(path)


def test_load_refuses_bad_files(tmp_path: Path) -> None:
    good = search_label_permutations(candidate(), table_returns({})[0], tolerance=0.0).to_dict()
    cases = {
        "kind": ({**good, "kind": "other"}, "'kind' must be"),
        "labels": ({**good, "acts_on": [{"name": "colour", "size": 3}, {"name": "suit", "size": 3}]}, "no such label set"),
        "sizes": ({**good, "acts_on": [{"name": "colour", "size": 4}, {"name": "slot", "size": 3}]}, "permutations of 0..6"),
        "not a group": ({**good, "group": [list(range(6)), [1, 2, 0, 3, 4, 5]]}, "not a group"),
        "not permutations": ({**good, "group": [list(range(6)), [0, 0, 1, 3, 4, 5]]}, "permutations of 0..5"),
        "identity": ({**good, "group": [[1, 0, 2, 3, 4, 5], list(range(6))]}, "identity first"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ValueError, match=message):
            load_group_symmetry(path, OBS, ACT)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="not a readable JSON"):
        load_group_symmetry(tmp_path / "broken.json", OBS, ACT)
    with pytest.raises(FileNotFoundError, match="no expected-return group file"):
        load_group_symmetry(tmp_path / "absent.json", OBS, ACT)


def test_search_refuses_bad_input() -> None:
    sym = candidate()
    with pytest.raises(ValueError, match="tolerance"):
        search_label_permutations(sym, table_returns({})[0], tolerance=-1.0)
    with pytest.raises(TypeError, match="returns must be a callable"):
        search_label_permutations(sym, 3, tolerance=0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite 1-D tensor"):
        search_label_permutations(sym, lambda p, m: torch.tensor(float("nan")), tolerance=0.1)

    def changing_pool(permutation: torch.Tensor, measurement: int) -> torch.Tensor:
        return torch.zeros(3 if permutation.tolist() == list(range(6)) else 4)

    with pytest.raises(ValueError, match="the pool must be the same"):
        search_label_permutations(sym, changing_pool, tolerance=0.1)


def test_another_tolerance_from_the_same_measurements() -> None:
    """``measured=``: the candidates are not measured again; only the new group is."""
    sym = candidate()
    losses = {tuple(e): 0.3 for e in sym.group.elements.tolist() if e[3:] == [4, 3, 5]}
    losses |= {tuple(e): 1.0 for e in sym.group.elements.tolist() if e[3:] not in ([3, 4, 5], [4, 3, 5])}
    returns, calls = table_returns(losses)
    strict = search_label_permutations(sym, returns, tolerance=0.25)
    assert strict.group.order == 6
    calls.clear()
    loose = search_label_permutations(sym, returns, tolerance=0.35, measured=strict.candidates)
    assert loose.group.order == 12 and loose.candidates == strict.candidates
    assert [m for _, m in calls] == [1] * 12  # only the re-measurement
    with pytest.raises(ValueError, match="every element of the candidate group"):
        search_label_permutations(sym, returns, tolerance=0.35, measured=strict.candidates[:5])
