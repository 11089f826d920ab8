"""Kernels by name: the built-in kernels, and the pystencils/lbmpy workloads when installed.

The names are what ``warpspeed rank --kernel``, studies and the measurement runner accept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.kernel.description import Kernel
from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device


def kernel_names() -> dict[str, str]:
    """Every kernel name with a one-line description."""
    names = dict(BUILTIN_KERNELS)
    try:
        from pystencils_plugin.workloads import WORKLOADS
    except ImportError:
        return names
    for name, (description, _) in WORKLOADS.items():
        names.setdefault(name, description + " (pystencils)")
    return names


def require_workload(name: str) -> None:
    """Raise a clear WarpspeedError unless ``name`` is a pystencils workload that can be built."""
    try:
        from pystencils_plugin.workloads import WORKLOADS
    except ImportError:
        raise WarpspeedError(
            f"unknown kernel {name!r}; built-in kernels: {', '.join(BUILTIN_KERNELS)} "
            "(install warpspeed[pystencils] for the pystencils/lbmpy workloads)"
        ) from None
    if name not in WORKLOADS:
        raise WarpspeedError(f"unknown kernel {name!r}; available: {', '.join(kernel_names())}")


def resolve_kernel(name: str, domain: Sequence[int] | None = None, *, fold: Sequence[int] = (1, 1, 1),
                   device: "Device | str | None" = None, dtype: str | None = None) -> Kernel:
    """The kernel that runs under ``name`` for thread folding ``fold`` on ``device``.

    Every command (rank, predict, study, measure) resolves names through this function, so one
    name means one binary: for a pystencils/lbmpy workload it is the kernel generated with that
    folding (its own register count); the folding is still passed to the prediction as a launch
    parameter. ``dtype`` (``"double"`` or ``"float"``) selects the precision where the kernel
    offers both (default: the kernel's own).
    """
    if name in BUILTIN_KERNELS:
        return builtin_kernel(name, domain)
    require_workload(name)
    from pystencils_plugin.registers import cuda_arch
    from pystencils_plugin.workloads import extract_workload
    from warpspeed.hardware.device import load_device

    dev = load_device(device) if isinstance(device, str) else device
    arch = cuda_arch(dev.name) if dev is not None else None
    kwargs = {"arch": arch} if arch is not None else {}
    return extract_workload(name, domain, fold=tuple(fold), dtype=dtype or "double", **kwargs).kernel
