"""warpspeed: predict GPU kernel performance from address expressions, before compiling.

The public API: describe a kernel (:class:`Field`, :func:`load`, :func:`store`,
:class:`Kernel`), pick a device (:func:`load_device`), and predict launch configurations with a
:class:`Predictor` (one configuration: :func:`warpspeed.predict.predict`; the module's name is
``warpspeed.predict``, so the function is not exported here); the result is a :class:`Prediction`.
Its rate, as the command line reports it, is the default time model's (:data:`DEFAULT_TIME_MODEL`):
``Prediction.lups_per_s`` (the predictor's model, by default the default one) and
:func:`time_estimate` (``time_estimate(p).lups_per_s``, lattice updates per second); the
four-limiter roofline's figures are ``Prediction.roofline``.

The model is the one of D. Ernst, M. Holzer, G. Hager, M. Knorr, G. Wellein, "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing 173 (2023) 152-167. Docstrings cite it as "Ernst et al., JPDC 2023" with
its section numbers; ``docs/model.md`` describes every stage and ``docs/architecture.md`` the
layers of the package.
"""

from __future__ import annotations

from warpspeed.lazy import lazy_exports

__version__ = "0.1.0"


def _device():
    from warpspeed.hardware import device

    return device


def _errors():
    from warpspeed import errors

    return errors


def _description():
    from warpspeed.kernel import description

    return description


def _predict():
    from warpspeed import predict

    return predict


def _prediction():
    from warpspeed import prediction

    return prediction


def _models():
    from warpspeed import models

    return models


#: Public names, by the module that defines them. They are imported on first use (PEP 562), so
#: that ``import warpspeed.<subpackage>`` (the command line's ``--help`` among them) does not pay
#: for sympy, which the kernel description needs.
__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _device: ("Device", "all_devices", "device_names", "load_device"),
    _errors: ("DeviceError", "FitError", "FoldingError", "KernelError", "LaunchError", "UnsupportedKernelError",
              "WarpspeedError"),
    _description: ("Access", "Field", "FlopCounts", "Kernel", "load", "load_linear", "store", "store_linear"),
    _predict: ("Predictor",),
    _prediction: ("Prediction",),
    _models: ("DEFAULT_TIME_MODEL", "time_estimate"),
})
