"""Describing flat feature vectors as labelled blocks.

A :class:`Layout` is an ordered list of :class:`Block` s; the flat vector is their
concatenation. A block's axes are :class:`Labels` (a named label set such as the five
colours, which a symmetry may permute) or plain ints (never moved); its flat index is
row-major over the axes. Example: Hanabi's partner hand is ``Block("hand", 5, colour, rank)``:
coordinate ``25*slot + 5*c + r``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from eqc._checks import check_choice, check_int, check_list

__all__ = ["Axis", "Block", "Encoding", "Labels", "Layout"]

Encoding = Literal["real", "binary", "one_hot"]
_ENCODINGS = ("real", "binary", "one_hot")


@dataclass(frozen=True)
class Labels:
    """A named set of ``size`` labels ``0..size-1`` (colours, levers, agents...)."""

    name: str
    size: int

    def __post_init__(self) -> None:
        _check_name(self.name, "Labels name")
        check_int(self.size, f"Labels {self.name!r}: size (a positive int)", low=1)


Axis = Labels | int


def _check_name(name: object, what: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, got {type(name).__name__} {name!r}")
    if not name:
        raise ValueError(f"{what} must be a non-empty str, got {name!r}")


@dataclass(frozen=True, init=False)
class Block:
    """A named block of features whose axes are :class:`Labels` or plain sizes.

    ``encoding`` describes the values (used to draw valid random observations):
    ``"real"``, ``"binary"`` (0/1), or ``"one_hot"`` (0/1 with at most one 1 over the last
    ``one_hot_axes`` axes, for each index of the leading axes).
    """

    name: str
    axes: tuple[Axis, ...]
    encoding: Encoding = "real"
    one_hot_axes: int = 1

    def __init__(self, name: str, *axes: Axis, encoding: Encoding = "real", one_hot_axes: int = 1) -> None:
        _check_name(name, "Block name")
        if not axes:
            raise ValueError(f"Block {name!r} needs at least one axis (a Labels or a positive int)")
        for k, axis in enumerate(axes):
            if isinstance(axis, Labels):
                continue
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise TypeError(f"Block {name!r}, axis {k}: must be a Labels or a positive int, got {type(axis).__name__} {axis!r}")
            check_int(axis, f"Block {name!r}, axis {k} (a Labels or a positive int)", low=1)
        check_choice(encoding, f"Block {name!r}: encoding", _ENCODINGS)
        check_int(one_hot_axes, f"Block {name!r}: one_hot_axes (how many trailing axes the one-hot spans)", low=1, high=len(axes))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "axes", tuple(axes))
        object.__setattr__(self, "encoding", encoding)
        object.__setattr__(self, "one_hot_axes", one_hot_axes)

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of the axes."""
        return tuple(a.size if isinstance(a, Labels) else a for a in self.axes)

    @property
    def size(self) -> int:
        """Number of flat coordinates."""
        return math.prod(self.shape)

    def axis_name(self, k: int) -> str:
        axis = self.axes[k]
        return axis.name if isinstance(axis, Labels) else f"axis{k}"

    def unravel(self, index: int) -> dict[str, int]:
        """The axis coordinates of flat index ``index`` within this block."""
        coords: dict[str, int] = {}
        for k in range(len(self.axes) - 1, -1, -1):
            index, coords[self.axis_name(k)] = divmod(index, self.shape[k])
        return dict(reversed(list(coords.items())))


@dataclass(frozen=True)
class Layout:
    """The concatenation of ``blocks``: what each coordinate of a flat vector means."""

    blocks: tuple[Block, ...] = field()

    def __init__(self, blocks: Iterable[Block]) -> None:
        blocks = tuple(check_list(blocks, "Layout(blocks): blocks", item="Blocks (wrap a single Block in a list)"))
        names = set()
        for k, block in enumerate(blocks):
            if not isinstance(block, Block):
                raise TypeError(f"blocks[{k}] must be a Block, got {type(block).__name__}")
            if block.name in names:
                raise ValueError(f"duplicate block name {block.name!r}: block names must be unique")
            names.add(block.name)
        object.__setattr__(self, "blocks", blocks)

    @property
    def dim(self) -> int:
        """Length of the flat vector."""
        return sum(b.size for b in self.blocks)

    def __iter__(self) -> Iterator[Block]:
        return iter(self.blocks)

    def __len__(self) -> int:
        return len(self.blocks)

    def __add__(self, other: Layout) -> Layout:
        return Layout(self.blocks + other.blocks)

    def offsets(self) -> dict[str, int]:
        """Start coordinate of each block, by name."""
        result, offset = {}, 0
        for block in self.blocks:
            result[block.name] = offset
            offset += block.size
        return result

    def offset(self, name: str) -> int:
        """Start coordinate of block ``name``."""
        offsets = self.offsets()
        if name not in offsets:
            raise KeyError(f"no block named {name!r}; blocks are {list(offsets)}")
        return offsets[name]

    def block(self, name: str) -> Block:
        """The block called ``name``."""
        for block in self.blocks:
            if block.name == name:
                return block
        raise KeyError(f"no block named {name!r}; blocks are {[b.name for b in self.blocks]}")

    def slice(self, name: str) -> slice:
        """The coordinates of block ``name`` as a slice."""
        start = self.offset(name)
        return slice(start, start + self.block(name).size)

    def block_at(self, index: int) -> tuple[Block, int]:
        """The block holding flat coordinate ``index`` and that block's start offset."""
        if not 0 <= index < self.dim:
            raise IndexError(f"index {index} is outside 0..{self.dim - 1}")
        offset = 0
        for block in self.blocks:
            if index < offset + block.size:
                return block, offset
            offset += block.size
        raise AssertionError("unreachable")

    def describe(self, index: int) -> str:
        """Human-readable name of coordinate ``index``, e.g. ``hand[axis0=2, colour=3, rank=1]``."""
        block, offset = self.block_at(index)
        coords = ", ".join(f"{k}={v}" for k, v in block.unravel(index - offset).items())
        return f"{block.name}[{coords}]"

    def labels(self) -> list[Labels]:
        """Every distinct label set used by an axis, in order of appearance."""
        seen: list[Labels] = []
        for block in self.blocks:
            for axis in block.axes:
                if isinstance(axis, Labels) and axis not in seen:
                    seen.append(axis)
        return seen
