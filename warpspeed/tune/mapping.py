"""Which tune parameters are the thread block and the thread folding.

Kernel Tuner names a kernel's thread block ``block_size_x``, ``block_size_y``, ``block_size_z``
(its default ``block_size_names``); warpspeed names the cells per thread ``fold_x``, ``fold_y``,
``fold_z``. A :class:`ParamMapping` says which tune parameters hold these six numbers (another
name, or None: the extent is 1 along that axis), so any Kernel Tuner search space maps to
warpspeed's launch configurations; the other tune parameters are left to Kernel Tuner's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from warpspeed.launch.space import Config
from warpspeed.tune.cache import TuneError

#: Kernel Tuner's thread block parameters (``kernel_tuner.util.append_default_block_size_names``).
BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
#: warpspeed's thread folding parameters: cells per thread along x, y, z.
FOLD_NAMES = ("fold_x", "fold_y", "fold_z")
#: Largest block or fold entry a mapped value may have: CUDA's most threads per block (CUDA C++
#: Programming Guide, "Compute Capabilities": 1024 threads per block).
MAX_EXTENT = 1024

Names = tuple[str | None, str | None, str | None]


@dataclass(frozen=True)
class ParamMapping:
    """Tune parameter names of the block and the folding along x, y, z (None: 1 along that axis)."""

    block: Names = BLOCK_NAMES  # type: ignore[assignment]
    fold: Names = FOLD_NAMES  # type: ignore[assignment]

    @classmethod
    def from_dict(cls, mapping: Mapping[str, str]) -> "ParamMapping":
        """From ``{"block_x": "BLOCK_X", "fold_y": "UNROLL_Y", ...}``: keys ``block_x``..``block_z``
        and ``fold_x``..``fold_z``; a key left out keeps the default name."""
        allowed = [f"{kind}_{axis}" for kind in ("block", "fold") for axis in "xyz"]
        unknown = [k for k in mapping if k not in allowed]
        if unknown:
            raise TuneError(f"unknown mapping key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")
        block = tuple(mapping.get(f"block_{a}", d) for a, d in zip("xyz", BLOCK_NAMES))
        fold = tuple(mapping.get(f"fold_{a}", d) for a, d in zip("xyz", FOLD_NAMES))
        return cls(block, fold)  # type: ignore[arg-type]

    def restricted_to(self, params: Sequence[str]) -> "ParamMapping":
        """This mapping with the names that ``params`` lacks set to None (extent 1); raises
        :class:`TuneError` when none of the block names is a parameter: nothing maps."""
        present = set(params)
        block = tuple(n if n in present else None for n in self.block)
        fold = tuple(n if n in present else None for n in self.fold)
        if all(n is None for n in block):
            wanted = ", ".join(n for n in self.block if n)
            raise TuneError(f"the tune parameters ({', '.join(params)}) do not map to a thread block: none of "
                            f"{wanted} is among them; allowed: Kernel Tuner's block_size_x/y/z (and fold_x/y/z), "
                            "or a mapping naming the parameters that hold them")
        return ParamMapping(block, fold)  # type: ignore[arg-type]

    def mapped(self) -> tuple[str, ...]:
        """The parameter names this mapping reads."""
        return tuple(n for n in (*self.block, *self.fold) if n is not None)

    def config(self, params: Mapping[str, Any]) -> Config | None:
        """The launch configuration of one set of parameter values, or None when a mapped value is
        not a whole number from 1 to :data:`MAX_EXTENT` (such a configuration is left to Kernel
        Tuner's order)."""
        triples = []
        for names in (self.block, self.fold):
            extents = []
            for name in names:
                value = 1 if name is None else params.get(name)
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                if isinstance(value, str) and value.strip().isdigit():
                    value = int(value.strip())
                if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EXTENT:
                    return None
                extents.append(value)
            triples.append(tuple(extents))
        return Config(triples[0], triples[1])  # type: ignore[arg-type]


#: Kernel Tuner's block names and warpspeed's fold names.
DEFAULT_MAPPING = ParamMapping()
