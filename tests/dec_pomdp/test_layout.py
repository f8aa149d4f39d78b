import pytest

from eqc.dec_pomdp import Block, Labels, Layout

colour, rank = Labels("colour", 5), Labels("rank", 5)


def test_block_shape_size_and_row_major_unravel():
    hand = Block("hand", 5, colour, rank)
    assert hand.shape == (5, 5, 5) and hand.size == 125
    assert hand.unravel(25 * 2 + 5 * 3 + 1) == {"axis0": 2, "colour": 3, "rank": 1}


def test_layout_offsets_slices_and_description():
    layout = Layout([Block("hand", 5, colour, rank), Block("fireworks", colour, rank), Block("tokens", 8)])
    assert layout.dim == 125 + 25 + 8
    assert layout.offsets() == {"hand": 0, "fireworks": 125, "tokens": 150}
    assert layout.slice("fireworks") == slice(125, 150)
    assert layout.block_at(151)[0].name == "tokens"
    assert layout.describe(125 + 5 * 2 + 4) == "fireworks[colour=2, rank=4]"
    assert layout.labels() == [colour, rank]
    assert (layout + Layout([Block("extra", 2)])).dim == layout.dim + 2


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: Labels("colour", 0), ValueError, r"size \(a positive int\) must be in \[1, inf\], got 0"),
        (lambda: Labels("colour", 2.0), TypeError, "size .* must be a Python int"),
        (lambda: Labels("", 3), ValueError, "non-empty"),
        (lambda: Labels(3, 3), TypeError, "name must be a str"),
        (lambda: Block(None, 3), TypeError, "Block name must be a str"),
        (lambda: Block("hand", 5, "colour"), TypeError, "axis 1: must be a Labels or a positive int"),
        (lambda: Block("hand"), ValueError, "at least one axis"),
        (lambda: Block("hand", 5, -1), ValueError, "axis 1"),
        (lambda: Block("hand", 5, encoding="onehot"), ValueError, "encoding"),
        (lambda: Block("hand", 5, encoding="one_hot", one_hot_axes=2), ValueError, "one_hot_axes"),
        (lambda: Block("hand", 5, colour, one_hot_axes=-7), ValueError, r"one_hot_axes .* must be in \[1, 2\], got -7"),
        (lambda: Block("hand", 5, encoding="one_hot", one_hot_axes=1.5), TypeError, "one_hot_axes .* must be a Python int"),
        (lambda: Layout(Block("hand", 5)), TypeError, r"blocks must be a list of Blocks \(wrap a single Block in a list\)"),
        (lambda: Layout(None), TypeError, "blocks must be a list of Blocks"),
        (lambda: Layout([Block("a", 2), Block("a", 3)]), ValueError, "duplicate block name"),
        (lambda: Layout([3]), TypeError, "must be a Block"),
    ],
)
def test_bad_declarations(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_unknown_block_names_list_the_known_ones():
    layout = Layout([Block("hand", 5)])
    with pytest.raises(KeyError, match="hand"):
        layout.offset("discards")
    with pytest.raises(IndexError):
        layout.block_at(5)
