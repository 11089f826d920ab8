"""warpspeed: predict GPU kernel performance from address expressions, before compiling.

The public API: describe a kernel (:class:`Field`, :func:`load`, :func:`store`,
:class:`Kernel`), pick a device (:func:`load_device`), and call the estimators.

The model is the one of D. Ernst, M. Holzer, G. Hager, M. Knorr, G. Wellein, "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing 173 (2023) 152-167. Docstrings cite it as "Ernst et al., JPDC 2023" with
its section numbers; ``docs/model.md`` describes every stage.
"""

from warpspeed.hardware.device import Device, all_devices, device_names, load_device
from warpspeed.errors import (
    DeviceError,
    FitError,
    KernelError,
    LaunchError,
    UnsupportedKernelError,
    WarpspeedError,
)
from warpspeed.kernel.description import (
    Access,
    Field,
    FlopCounts,
    Kernel,
    load,
    load_linear,
    store,
    store_linear,
)

__all__ = [
    "Access", "Device", "DeviceError", "Field", "FitError", "FlopCounts", "Kernel", "KernelError",
    "LaunchError", "UnsupportedKernelError", "WarpspeedError", "all_devices", "device_names",
    "load", "load_device", "load_linear", "store", "store_linear",
]

__version__ = "0.1.0"
