"""Kernels by name: the built-in kernels, and the pystencils/lbmpy workloads when installed.

The names are what ``warpspeed rank --kernel``, studies and the measurement runner accept.
"""

from __future__ import annotations

from typing import Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.kernel.description import Kernel
from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel


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


def resolve_kernel(name: str, domain: Sequence[int] | None) -> Kernel:
    """A built-in kernel, or a pystencils/lbmpy workload when the plugin's extras are installed."""
    if name in BUILTIN_KERNELS:
        return builtin_kernel(name, domain)
    require_workload(name)
    from pystencils_plugin.workloads import extract_workload

    return extract_workload(name, domain).kernel
