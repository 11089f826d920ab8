"""The SM clocks a device runs at: the range a requested clock (``--clock-mhz``) must lie in.

* **Highest**: the device file's ``clock_ghz``, documented in every built-in file as the part's
  maximum boost (NVIDIA) or peak engine clock (AMD); the FP and L1 limits hold at it, and the
  power model scales them down from it, never up (a GPU does not run above its maximum boost).
* **Lowest**: :data:`MIN_CLOCK_FRACTION` of it. NVIDIA boards support clocks down to 210-300 MHz
  (the TechPowerUp "Clock Profiles" tables cited at
  :data:`warpspeed.power.params.PLAUSIBLE_V_MIN`), 15-20 % of their boost clocks; one tenth of the
  highest clock covers every such floor, and it is where the power model's search for the
  energy-optimal clock starts (:data:`warpspeed.power.dvfs.OPTIMUM_FRACTIONS`).

A clock outside the range, or not a finite number, is a one-line error naming the range.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from warpspeed.errors import WarpspeedError

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Lowest SM clock the model accepts, relative to the device's highest clock (module docstring).
MIN_CLOCK_FRACTION = 0.1


class ClockError(WarpspeedError):
    """A requested SM clock is not a finite number inside the device's range."""


def clock_range_mhz(device: "Device") -> tuple[float, float]:
    """(lowest, highest) SM clock of ``device`` in MHz (module docstring)."""
    return MIN_CLOCK_FRACTION * device.clock_mhz, device.clock_mhz


def check_clock_mhz(device: "Device", clock_mhz: object, what: str = "clock") -> float:
    """``clock_mhz`` as a float if it is a finite number in :func:`clock_range_mhz` of ``device``,
    else :class:`ClockError` naming ``what``, the value and the range."""
    low, high = clock_range_mhz(device)
    number = isinstance(clock_mhz, (int, float)) and not isinstance(clock_mhz, bool)
    if not number or not math.isfinite(clock_mhz) or not low <= clock_mhz <= high:  # type: ignore[operator,arg-type]
        raise ClockError(f"{what} is outside the SM clock range of {device.name} (got {clock_mhz!r} MHz); "
                         f"allowed: {low:g} to {high:g} MHz (one tenth of its maximum clock to the maximum)")
    return float(clock_mhz)  # type: ignore[arg-type]
