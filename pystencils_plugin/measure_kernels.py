"""Kernels for the measurement runner: generate a configuration's CUDA code with pystencils.

:func:`plan_launch` builds one launch configuration of a workload
(:data:`pystencils_plugin.workloads.WORKLOADS`): the folded kernel, its launch geometry and
field allocations as a :class:`~warpspeed.validation.plan.LaunchPlan`. No GPU is needed; the
returned pystencils kernel is compiled on the GPU machine (``.compile()``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from warpspeed.validation.plan import DEFAULT_DTYPE, FieldAllocation, LaunchPlan, MeasurementError, kernel_function_name


def measurable_kernels() -> dict[str, str]:
    """Kernels the runner can generate: the workloads (name -> description)."""
    from pystencils_plugin.workloads import WORKLOADS

    return {name: desc for name, (desc, _) in WORKLOADS.items()}


def _require_measurable(kernel: str) -> None:
    measurable = measurable_kernels()
    if kernel not in measurable:
        raise MeasurementError(f"kernel {kernel!r} has no pystencils workload; measurable kernels: "
                               f"{', '.join(measurable)}")


def default_domain(kernel: str) -> tuple[int, ...]:
    """The workload's default domain (cells)."""
    from pystencils_plugin.workloads import WORKLOADS

    _require_measurable(kernel)
    return tuple(WORKLOADS[kernel][1])


def _pad3(values: Sequence[Any]) -> tuple[int, int, int]:
    return tuple(int(v) for v in values) + (1,) * (3 - len(values))  # type: ignore[return-value]


def _allocations(gpu_kernel: Any) -> tuple[tuple[FieldAllocation, ...], tuple[str, ...]]:
    """Field arrays (pystencils' shapes and element strides) and scalar parameter names."""
    fields = tuple(FieldAllocation(f.name, tuple(int(s) for s in f.shape), tuple(int(s) for s in f.strides),
                                   str(f.dtype.numpy_dtype))
                   for f in sorted(gpu_kernel.get_fields(), key=lambda f: f.name))
    scalars = tuple(sorted(p.name for p in gpu_kernel.parameters if not p.is_field_parameter))
    return fields, scalars


def plan_launch(kernel: str, config: Config, domain: Sequence[int] | None = None,
                dtype: str = DEFAULT_DTYPE) -> tuple[LaunchPlan, Any]:
    """Generate ``config``'s CUDA kernel with pystencils and fix its launch geometry.

    ``dtype`` is the element type of the fields (``double`` or ``float``); the function name
    says it (:func:`~warpspeed.validation.plan.kernel_function_name`).

    Returns the plan and the pystencils ``GpuKernel`` (compile it with ``.compile()`` on a GPU
    machine). Raises :class:`MeasurementError` for unknown kernels and pystencils' refusals
    (e.g. a domain not divisible by the fold).
    """
    _require_measurable(kernel)
    import pystencils as ps

    from pystencils_plugin.folding import create_folded_kernel
    from pystencils_plugin.workloads import workload_assignments

    dom = tuple(domain) if domain is not None else default_domain(kernel)
    name = kernel_function_name(kernel, config, dtype)
    try:
        gpu_kernel = create_folded_kernel(workload_assignments(kernel, dom, dtype), fold=config.fold,
                                          target=ps.Target.CUDA, function_name=name)
        launch = gpu_kernel.get_launch_configuration()
        launch.trim_block_size(tuple(config.block))
        block, grid = launch.evaluate()
    except WarpspeedError:
        raise
    except Exception as exc:  # pystencils' CodegenError and friends
        raise MeasurementError(f"pystencils cannot generate {kernel!r} for {config.label}: {exc}") from None
    block, grid = _pad3(block), _pad3(grid)
    if block != tuple(config.block):
        raise MeasurementError(f"pystencils trimmed block {config.block} to {block} on domain {dom}; "
                               "use a domain at least as large as block x fold along every axis")
    fields, scalars = _allocations(gpu_kernel)
    plan = LaunchPlan(kernel=kernel, domain=dom, block=block, fold=tuple(config.fold), grid=grid,  # type: ignore[arg-type]
                      function_name=name, lups=math.prod(dom), fields=fields, scalars=scalars, dtype=dtype)
    return plan, gpu_kernel
