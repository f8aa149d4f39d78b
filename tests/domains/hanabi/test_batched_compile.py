"""``HanabiBatch(compile=True)``: the same games as the eager batch, bit for bit, and a clear refusal of what it cannot
compile. The compiled tests compile three functions per shape (about 20 s on one CPU thread): marked slow."""

from __future__ import annotations

import pytest
import torch

from eqc.domains.hanabi.batched import HanabiBatch
from eqc.domains.hanabi.rules import HanabiRules

#: (games, SAD variant, auto_reset): the pool refreshed by Fisher-Yates steps (>= 256 games) and by fresh decks (fewer),
#: with a SAD block; and finished games that stay over.
CASES = [(300, "off", True), (40, "greedy_last_action", True), (16, "off", False)]


@pytest.mark.slow
@pytest.mark.parametrize(("games", "sad", "auto_reset"), CASES)
def test_the_compiled_batch_plays_the_eager_games_bit_for_bit(games: int, sad: str, auto_reset: bool) -> None:
    """120 random legal moves in both batches: every state tensor (spare decks, SAD block and the step count included),
    the rewards, the observations and the legal masks are equal after every step, over game ends, same-step re-deals
    and spare-deck refreshes."""
    rules = HanabiRules(knowledge="v0_belief", sad=sad)
    eager, compiled = (HanabiBatch(games, rules, seed=7, auto_reset=auto_reset, check=False, compile=c) for c in (False, True))
    eager.reset()
    compiled.reset()
    generator = torch.Generator().manual_seed(0)
    steps, ended = 120, 0
    for step in range(steps):
        obs, legal = eager.observations(), eager.legal_move_mask()
        assert torch.equal(compiled.observations(), obs), step
        assert torch.equal(compiled.legal_move_mask(), legal), step
        moves, greedy = ((torch.rand(games, rules.num_moves, generator=generator) * legal).argmax(1) for _ in range(2))
        shown = greedy if sad != "off" else None
        assert torch.equal(compiled.step(moves, shown), eager.step(moves, shown)), step
        want, got = eager.state_dict(), compiled.state_dict()
        assert want.keys() == got.keys()
        for name in want:
            assert torch.equal(got[name], want[name]), (step, name)
        ended += int(eager.ended.sum())
    assert ended > games if auto_reset else ended == games  # every game ended (with auto_reset: re-dealt, ended again) ...
    assert steps > 10 * eager._pool_period  # ... and with auto_reset the spare decks were refreshed many times


def test_compile_refuses_a_device_it_cannot_compile_for_and_a_non_bool() -> None:
    with pytest.raises(ValueError, match="compile needs a 'cpu' or 'cuda' device, got 'meta'"):
        HanabiBatch(4, device="meta", compile=True)
    with pytest.raises(TypeError, match="compile must be a bool"):
        HanabiBatch(4, compile=1)  # type: ignore[arg-type]


def test_compile_on_a_cpu_without_a_cpp_compiler_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch._inductor.cpp_builder as builder

    def missing() -> str:
        raise RuntimeError("no compiler")

    monkeypatch.setattr(builder, "get_cpp_compiler", missing)
    with pytest.raises(RuntimeError, match="compile on the cpu needs a C\\+\\+ compiler"):
        HanabiBatch(4, compile=True)
