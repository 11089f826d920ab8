"""The result of extracting a pystencils kernel (:class:`ExtractedKernel`), without pystencils: the
disk cache of extracted kernels (:mod:`pystencils_plugin.kernel_cache`) rebuilds one from data, so a
kernel generated before is read back without importing pystencils."""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field

from warpspeed.errors import KernelError
from warpspeed.kernel.description import Kernel

#: Register source labels of :attr:`ExtractedKernel.registers_source`.
REGISTER_SOURCES = ("ptxas", "shipped", "estimate", "given")


@dataclass(frozen=True)
class ExtractedKernel:
    """Result of :func:`pystencils_plugin.extract.extract_kernel`.

    Attributes:
        kernel: the per-cell warpspeed kernel (accesses in cell coordinates x, y, z; flops
            per cell; registers per thread).
        fold: thread-folding factors ``(fx, fy, fz)``: cells per thread along each axis.
        registers_source: ``'ptxas'`` (compiled with nvcc), ``'shipped'`` (ptxas' count shipped
            with the package, :mod:`pystencils_plugin.register_table`), ``'estimate'`` (see
            :mod:`pystencils_plugin.registers`) or ``'given'`` (passed by the caller).
        source: the kernel's CUDA/HIP source (``kernel.get_c_code()``).
        registers_detail: why that register source was used (e.g. the reason a compile
            failed), for reports.
        special_functions: calls to math functions other than FMA per cell (``sqrt``,
            ``exp``, ...), as sorted ``(name, count)`` pairs; they are not in ``flops``.
        thread_axes: for each pystencils spatial dimension (``ctr_0, ctr_1, ...``) the
            warpspeed axis (``'x'``, ``'y'``, ``'z'``) that drives it.
    """

    kernel: Kernel
    fold: tuple[int, int, int]
    registers_source: str
    source: str
    registers_detail: str = ""
    special_functions: tuple[tuple[str, float], ...] = ()
    thread_axes: tuple[str, ...] = dc_field(default=())

    def __post_init__(self) -> None:
        if self.registers_source not in REGISTER_SOURCES:
            raise KernelError(
                f"registers_source {self.registers_source!r} unknown; allowed: {', '.join(REGISTER_SOURCES)}"
            )
