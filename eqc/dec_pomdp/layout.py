"""Describing flat feature vectors as labelled blocks.

A :class:`Layout` is an ordered list of :class:`Block` s; the flat vector is their
concatenation. A block's axes are :class:`Labels` (a named label set such as the five
colours, which a symmetry may permute) or plain ints (never moved); its flat index is
row-major over the axes. Example: Hanabi's partner hand is ``Block("hand", 5, colour, rank)``:
coordinate ``25*slot + 5*c + r``.

A block's last axis may instead be a **record**: a :class:`Layout` repeated for every index of the
leading axes. Hanabi's card knowledge is ``Block("knowledge", player, slot, record)`` with the record
(plausible cards, hinted colour, hinted rank) laid out once per (player, slot), so a symmetry can move
the slots of a section whose entries are themselves structured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from eqc._checks import check_choice, check_int, check_list

__all__ = ["Axis", "Block", "Encoding", "Labels", "Layout"]

Encoding = Literal["real", "binary", "one_hot", "record"]
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
"""An axis of a block: a label set (a symmetry may permute it) or a plain size (never moved)."""


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
    ``one_hot_axes`` axes, for each index of the leading axes). A block whose last axis is a record
    (a :class:`Layout`, see the module docstring) has encoding ``"record"``: its values are the record's.
    """

    name: str
    axes: tuple[Axis, ...]
    encoding: Encoding = "real"
    one_hot_axes: int = 1
    record: Layout | None = None

    def __init__(self, name: str, *axes: Axis | Layout, encoding: Encoding = "real", one_hot_axes: int = 1) -> None:
        _check_name(name, "Block name")
        if not axes:
            raise ValueError(f"Block {name!r} needs at least one axis (a Labels or a positive int)")
        record = None
        if isinstance(axes[-1], Layout):
            record, axes = axes[-1], axes[:-1]
            if encoding != "real" or one_hot_axes != 1:
                raise ValueError(f"Block {name!r}: a block with a record takes its encoding from the record's blocks; "
                                 f"leave encoding and one_hot_axes out")
            if not record.dim:
                raise ValueError(f"Block {name!r}: its record has no coordinates")
        for k, axis in enumerate(axes):
            if isinstance(axis, Labels):
                continue
            if isinstance(axis, Layout):
                raise TypeError(f"Block {name!r}, axis {k}: a record (a Layout) may only be the last axis")
            if isinstance(axis, bool) or not isinstance(axis, int):
                raise TypeError(f"Block {name!r}, axis {k}: must be a Labels or a positive int, got {type(axis).__name__} {axis!r}")
            check_int(axis, f"Block {name!r}, axis {k} (a Labels or a positive int)", low=1)
        if record is None:
            check_choice(encoding, f"Block {name!r}: encoding", _ENCODINGS)
            check_int(one_hot_axes, f"Block {name!r}: one_hot_axes (how many trailing axes the one-hot spans)", low=1, high=len(axes))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "axes", tuple(axes))
        object.__setattr__(self, "encoding", "record" if record is not None else encoding)
        object.__setattr__(self, "one_hot_axes", one_hot_axes)
        object.__setattr__(self, "record", record)

    @property
    def shape(self) -> tuple[int, ...]:
        """Sizes of the axes (the record's length last, for a block with a record)."""
        sizes = tuple(a.size if isinstance(a, Labels) else a for a in self.axes)
        return sizes if self.record is None else (*sizes, self.record.dim)

    @property
    def size(self) -> int:
        """Number of flat coordinates."""
        return math.prod(self.shape)

    def axis_name(self, k: int) -> str:
        axis = self.axes[k]
        return axis.name if isinstance(axis, Labels) else f"axis{k}"

    def unravel(self, index: int) -> dict[str, int | str]:
        """The axis coordinates of flat index ``index`` within this block (a record's entry by its description)."""
        coords: dict[str, int | str] = {}
        if self.record is not None:
            index, within = divmod(index, self.record.dim)
            coords["record"] = self.record.describe(within)
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
        """Every distinct label set used by an axis (records' axes included), in order of appearance."""
        seen: list[Labels] = []
        for block in self.blocks:
            inner = block.record.labels() if block.record is not None else []
            for axis in [*block.axes, *inner]:
                if isinstance(axis, Labels) and axis not in seen:
                    seen.append(axis)
        return seen
