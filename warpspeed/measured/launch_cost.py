"""A device's launch cost: the stored fit of kernel launches, and the one rule that reads it.

``fits/kernel-launch.toml`` (written by :mod:`warpspeed.calibration.launch`) holds the fit to
gpu-benches' back-to-back small kernels (gpu-small-kernels) of several parts: one block dispatch
time per block and SM for every part, and a per-launch overhead per measured part. A device takes,
from the first that it gives:

1. ``[device] launch_overhead_us``: its own measured overhead (``warpspeed calibrate``);
2. ``[device] launch_overhead_part``: the overhead of the measured part it names (the same chip,
   or the same launch path);
3. the median over the measured parts (1.3-2.3 us: the launch path is the driver's and the front
   end's, alike across recent NVIDIA parts), marked as borrowed.

The time models read the result, :func:`launch_cost`, in seconds (the interval model converts it
to cycles at the device's clock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from statistics import median
from typing import TYPE_CHECKING

from warpspeed.errors import DeviceError
from warpspeed.files.stored import fits_file
from warpspeed.files.toml import read_toml
from warpspeed.units import MICRO, NANO

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: The fitted launch-cost constants, in ``fits/`` (:mod:`warpspeed.calibration.launch` writes it).
LAUNCH_FIT_FILE = "kernel-launch.toml"


@dataclass(frozen=True)
class LaunchConstants:
    """The stored fit: ``block_dispatch_s`` per block and SM, ``overhead_s`` per measured part,
    ``device_of_part``: the built-in device each part was measured on."""

    block_dispatch_s: float
    overhead_s: dict[str, float]
    device_of_part: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=1)
def launch_constants() -> LaunchConstants:
    """The constants of the stored ``fits/kernel-launch.toml``."""
    data = read_toml(fits_file(LAUNCH_FIT_FILE), "kernel launch fit", DeviceError)
    return LaunchConstants(data["block_dispatch_ns"] * NANO,
                           {p: v["overhead_us"] * MICRO for p, v in data["parts"].items()},
                           {p: v["device"] for p, v in data["parts"].items()})


@dataclass(frozen=True)
class LaunchCost:
    """A device's launch cost.

    Attributes:
        block_dispatch_s: seconds the block scheduler takes per block and SM.
        overhead_s: seconds per launch before the first block runs.
        source: ``"measured"`` (the device's own ``launch_overhead_us``), the measured part whose
            overhead it takes, or ``"median"`` (none named).
    """

    block_dispatch_s: float
    overhead_s: float
    source: str

    @property
    def borrowed_median(self) -> bool:
        """Whether the overhead is the median over the measured parts (the device names none)."""
        return self.source == "median"


def launch_cost(device: "Device") -> LaunchCost:
    """``device``'s launch cost (module docstring); a one-line :class:`DeviceError` when
    ``launch_overhead_part`` names a part the stored fit does not have."""
    constants = launch_constants()
    if device.launch_overhead_us is not None:
        return LaunchCost(constants.block_dispatch_s, device.launch_overhead_us * MICRO, "measured")
    part = device.launch_overhead_part
    if part is None:
        return LaunchCost(constants.block_dispatch_s, median(constants.overhead_s.values()), "median")
    if part not in constants.overhead_s:
        raise DeviceError(f"device {device.name!r}: launch_overhead_part must be one of "
                          f"{', '.join(constants.overhead_s)}; got {part!r}")
    return LaunchCost(constants.block_dispatch_s, constants.overhead_s[part], part)
