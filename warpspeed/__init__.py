"""warpspeed: predict GPU kernel performance from address expressions, before compiling.

The public API: describe a kernel (:class:`Field`, :func:`load`, :func:`store`,
:class:`Kernel`), pick a device (:func:`load_device`), and predict launch configurations with a
:class:`Predictor` (one configuration: :func:`warpspeed.predict.predict`; the module's name is
``warpspeed.predict``, so the function is not exported here); the result is a :class:`Prediction`.

The model is the one of D. Ernst, M. Holzer, G. Hager, M. Knorr, G. Wellein, "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing 173 (2023) 152-167. Docstrings cite it as "Ernst et al., JPDC 2023" with
its section numbers; ``docs/model.md`` describes every stage and ``docs/architecture.md`` the
layers of the package.
"""

from __future__ import annotations

#: Public names, by the module that defines them. They are imported on first use (PEP 562), so
#: that ``import warpspeed.<subpackage>`` (the command line's ``--help`` among them) does not pay
#: for sympy, which the kernel description needs.
_DEVICE_NAMES = frozenset(("Device", "all_devices", "device_names", "load_device"))
_ERROR_NAMES = frozenset(("DeviceError", "FitError", "KernelError", "LaunchError", "UnsupportedKernelError",
                          "WarpspeedError"))
_KERNEL_NAMES = frozenset(("Access", "Field", "FlopCounts", "Kernel", "load", "load_linear", "store",
                           "store_linear"))
_PREDICT_NAMES = frozenset(("Predictor",))
_PREDICTION_NAMES = frozenset(("Prediction",))

__all__ = sorted(_DEVICE_NAMES | _ERROR_NAMES | _KERNEL_NAMES | _PREDICT_NAMES | _PREDICTION_NAMES)

__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _DEVICE_NAMES:
        from warpspeed.hardware import device as module
    elif name in _ERROR_NAMES:
        from warpspeed import errors as module
    elif name in _KERNEL_NAMES:
        from warpspeed.kernel import description as module
    elif name in _PREDICT_NAMES:
        from warpspeed import predict as module
    elif name in _PREDICTION_NAMES:
        from warpspeed import prediction as module
    else:
        raise AttributeError(f"module 'warpspeed' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
