"""Traffic through every level of a device's cache hierarchy (:mod:`warpspeed.hardware.caches`).

:func:`level_traffic` turns a prediction's block- and wave-level volumes into bytes per lattice
update between each level and the next one outwards, and the limit each level's bandwidth
imposes; :mod:`warpspeed.memory.levels.shader_array` counts the footprint of the blocks that
share a shader array.
"""

from warpspeed.memory.levels.shader_array import shader_array_compulsory, shader_array_ranges
from warpspeed.memory.levels.traffic import LevelTraffic, level_traffic, memory_side_dram

__all__ = ["LevelTraffic", "level_traffic", "memory_side_dram", "shader_array_compulsory", "shader_array_ranges"]
