"""The figures of each built-in device file derived from the stored measurements, and the rule
for devices without measurements (:mod:`warpspeed.calibration.device_figures`, which defines them).

The figures are calibration, not prediction; this module keeps the path the accuracy report
(``docs/accuracy.md``) names for them.
"""

from warpspeed.calibration.device_figures import (
    CURVE_KERNELS,
    DRAM_RULE_REFERENCE,
    MEASURED_AS,
    VENDOR_DRAM_GB_S,
    DeviceFigures,
    Figure,
    device_figures,
)

__all__ = ["CURVE_KERNELS", "DRAM_RULE_REFERENCE", "MEASURED_AS", "VENDOR_DRAM_GB_S", "DeviceFigures", "Figure",
           "device_figures"]
