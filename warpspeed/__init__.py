"""warpspeed: predict GPU kernel performance from address expressions, before compiling.

The public API: describe a kernel (:class:`Field`, :func:`load`, :func:`store`,
:class:`Kernel`), pick a device (:func:`load_device`), and call the estimators.

The model is the one of D. Ernst, M. Holzer, G. Hager, M. Knorr, G. Wellein, "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing 173 (2023) 152-167. Docstrings cite it as "Ernst et al., JPDC 2023" with
its section numbers; ``docs/model.md`` describes every stage.
"""

from importlib import import_module

#: Public names and the modules that define them. They are imported on first use (PEP 562), so
#: that ``import warpspeed.<subpackage>`` (the command line's ``--help`` among them) does not pay
#: for sympy, which the kernel description needs.
_EXPORTS = {
    "Device": "warpspeed.hardware.device", "all_devices": "warpspeed.hardware.device",
    "device_names": "warpspeed.hardware.device", "load_device": "warpspeed.hardware.device",
    "DeviceError": "warpspeed.errors", "FitError": "warpspeed.errors", "KernelError": "warpspeed.errors",
    "LaunchError": "warpspeed.errors", "UnsupportedKernelError": "warpspeed.errors",
    "WarpspeedError": "warpspeed.errors",
    "Access": "warpspeed.kernel.description", "Field": "warpspeed.kernel.description",
    "FlopCounts": "warpspeed.kernel.description", "Kernel": "warpspeed.kernel.description",
    "load": "warpspeed.kernel.description", "load_linear": "warpspeed.kernel.description",
    "store": "warpspeed.kernel.description", "store_linear": "warpspeed.kernel.description",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'warpspeed' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "Access", "Device", "DeviceError", "Field", "FitError", "FlopCounts", "Kernel", "KernelError",
    "LaunchError", "UnsupportedKernelError", "WarpspeedError", "all_devices", "device_names",
    "load", "load_device", "load_linear", "store", "store_linear",
]

__version__ = "0.1.0"
