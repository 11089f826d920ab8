"""Traffic through every level of a device's cache hierarchy (:mod:`warpspeed.hardware.caches`).

:func:`memory_side_dram` gives the DRAM volumes behind a memory-side cache (the predictor puts
every level's bytes per lattice update, capacity and limit into one list,
:func:`warpspeed.levels.level_demands`); :mod:`warpspeed.memory.levels.shader_array` counts the footprint of the blocks that
share a shader array.
"""

from warpspeed.memory.levels.shader_array import shader_array_compulsory, shader_array_ranges
from warpspeed.memory.levels.traffic import memory_side_dram

__all__ = ["memory_side_dram", "shader_array_compulsory", "shader_array_ranges"]
