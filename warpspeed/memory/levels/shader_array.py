"""The blocks that share a shader array and the lines they load together.

RDNA's graphics L1 (GL1) is shared by the compute units of a shader array, so what it requests
from the L2 is the footprint of the blocks resident on those compute units at once: a group
``S_a`` of the wave's blocks, chosen by the level's ``dispatch``:

- ``round_robin``: consecutive blocks go to consecutive shader arrays, block ``first + i`` to
  array ``i mod n``;
- ``contiguous``: array ``a`` holds the run of ``ceil(B / n)`` consecutive blocks starting at
  ``first + a ceil(B / n)``.

The compulsory volume is ``|F(S_a)| x line / lups(S_a)`` per field, ``F`` the distinct lines the
group loads (exact box unions, :meth:`warpspeed.memory.wave.WaveModel.group_load_lines`),
evaluated for the first shader array of the prediction's representative wave.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from warpspeed.errors import LaunchError

if TYPE_CHECKING:
    from warpspeed.launch.geometry import Launch
    from warpspeed.memory.wave import WaveModel


def shader_array_ranges(first_block: int, blocks: int, arrays: int, dispatch: str,
                        array: int = 0) -> list[tuple[int, int]]:
    """Inclusive linear block ranges of shader array ``array`` among the ``blocks`` blocks of
    the wave starting at ``first_block`` (module docstring)."""
    if arrays < 1 or not 0 <= array < arrays or blocks < 1:
        raise LaunchError(f"shader array {array} of {arrays} for a wave of {blocks} blocks")
    if dispatch == "round_robin":
        return [(b, b) for b in range(first_block + array, first_block + blocks, arrays)]
    if dispatch == "contiguous":
        chunk = math.ceil(blocks / arrays)
        start = first_block + array * chunk
        end = min(first_block + blocks, start + chunk) - 1
        return [(start, end)] if end >= start else []
    raise LaunchError(f"unknown shader-array dispatch {dispatch!r}; allowed: round_robin, contiguous")


def shader_array_compulsory(model: "WaveModel", launch: "Launch", first_block: int, blocks: int, arrays: int,
                            dispatch: str, line_bytes: int) -> tuple[dict[str, float], int] | None:
    """Per field, the compulsory load (bytes per lup) of the first shader array's blocks of the
    wave, and how many blocks that array holds; None when the kernel's accesses are not box maps
    or the array gets no block."""
    ranges = shader_array_ranges(first_block, blocks, arrays, dispatch)
    counted = model.group_load_lines(launch, ranges, line_bytes) if ranges else None
    if counted is None or counted[1] == 0:
        return None
    lines, lups = counted
    return {name: n * line_bytes / lups for name, n in lines.items()}, sum(last - first + 1 for first, last in ranges)
