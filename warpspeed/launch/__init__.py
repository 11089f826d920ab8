"""Launch geometry (grid, folding), occupancy (blocks per SM and its limiter), the device-wide
wave, and the configuration spaces that are ranked."""

from warpspeed.launch.geometry import (
    DEFAULT_REGISTERS_PER_THREAD,
    Launch,
    LaunchInfo,
    Occupancy,
    Wave,
    analyze_launch,
    make_launch,
    occupancy,
    wave,
)

__all__ = [
    "DEFAULT_REGISTERS_PER_THREAD", "Launch", "LaunchInfo", "Occupancy", "Wave", "analyze_launch",
    "make_launch", "occupancy", "wave",
]
