"""A planned measurement launch: the kernel, its launch geometry and its field allocations.

A :class:`LaunchPlan` is plain data (JSON-serialisable), so the Nsight Compute child process
can rebuild exactly the launch the parent timed. Generating the kernel is the code generator's
job (:func:`pystencils_plugin.measure_kernels.plan_launch`).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config

Triple = tuple[int, int, int]


class MeasurementError(WarpspeedError):
    """A measurement cannot be made (no cupy, no GPU, no ncu output) or its data are invalid."""


def allocation_elements(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements a strided array of ``shape`` with element ``strides`` spans (>= 1)."""
    if len(shape) != len(strides):
        raise MeasurementError(f"shape {tuple(shape)} and strides {tuple(strides)} differ in length")
    if any(n <= 0 for n in shape) or any(s <= 0 for s in strides):
        raise MeasurementError(f"shape {tuple(shape)} and strides {tuple(strides)} must be positive")
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides))


#: Element type of the measured kernels unless one is named (pystencils' ``double``).
DEFAULT_DTYPE = "double"


def kernel_function_name(kernel: str, config: Config, dtype: str = DEFAULT_DTYPE) -> str:
    """A CUDA function name unique per configuration (for ``ncu --kernel-name``):
    ``ws_<kernel>_b<block>_f<fold>``, with ``_<dtype>`` after the kernel for other element types
    than double (``ws_star3d_r4_float_b8x4x32_f1x1x2``)."""
    stem = re.sub(r"[^0-9A-Za-z]+", "_", kernel).strip("_")
    if dtype != DEFAULT_DTYPE:
        stem += "_" + re.sub(r"[^0-9A-Za-z]+", "_", dtype).strip("_")
    return "ws_{}_b{}_f{}".format(stem, "x".join(map(str, config.block)), "x".join(map(str, config.fold)))


@dataclass(frozen=True)
class FieldAllocation:
    """One kernel argument array: shape and element strides as the code generator expects them."""

    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # elements
    dtype: str  # numpy dtype name

    @property
    def buffer_elements(self) -> int:
        """Elements of the flat buffer that holds every index (1 + sum (n_i - 1) * stride_i)."""
        return allocation_elements(self.shape, self.strides)


@dataclass(frozen=True)
class LaunchPlan:
    """One configuration ready to compile and run (JSON-serialisable for the ncu child).

    ``block`` and ``grid`` are the CUDA launch dimensions (x, y, z); ``lups`` the lattice
    updates of one launch (interior cells of the domain); ``dtype`` the element type the kernel
    was generated for (``double`` or ``float``).
    """

    kernel: str
    domain: tuple[int, ...]
    block: Triple
    fold: Triple
    grid: Triple
    function_name: str
    lups: int
    fields: tuple[FieldAllocation, ...] = ()
    scalars: tuple[str, ...] = ()
    dtype: str = DEFAULT_DTYPE

    @property
    def config(self) -> Config:
        return Config(self.block, self.fold)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> "LaunchPlan":
        try:
            d = json.loads(text)
            fields = tuple(FieldAllocation(f["name"], tuple(f["shape"]), tuple(f["strides"]), f["dtype"])
                           for f in d["fields"])
            return LaunchPlan(kernel=d["kernel"], domain=tuple(d["domain"]), block=tuple(d["block"]),
                              fold=tuple(d["fold"]), grid=tuple(d["grid"]), function_name=d["function_name"],
                              lups=int(d["lups"]), fields=fields, scalars=tuple(d["scalars"]),
                              dtype=str(d.get("dtype", DEFAULT_DTYPE)))
        except (ValueError, KeyError, TypeError) as exc:
            raise MeasurementError(f"invalid launch plan JSON ({exc}); expected LaunchPlan.to_json() output") from None
