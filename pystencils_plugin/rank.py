"""Rank launch configurations of pystencils kernels: ``rank(assignments, device) -> Ranking``.

Each folding is real code: for every folding factor the assignments are folded and compiled
by pystencils (:func:`~pystencils_plugin.folding.create_folded_kernel`), the kernel is
extracted (registers from ptxas when ``nvcc`` is available, otherwise the documented
estimate), and all block sizes are predicted for it. The best row comes back as a
:class:`BestConfig` that creates the folded kernel with ``gpu.default_block_size`` set.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pystencils_plugin.extract import ExtractedKernel, extract_kernel
from pystencils_plugin.folding import create_folded_kernel
from pystencils_plugin.registers import cuda_arch
from pystencils_plugin.workloads import WORKLOADS, workload_assignments
from warpspeed.hardware.device import Device, load_device
from warpspeed.errors import KernelError, LaunchError, WarpspeedError
from warpspeed.kernel.description import Kernel
from warpspeed.launch.geometry import make_launch, occupancy
from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, PAPER_STENCIL_THREADS, Config, configuration_space
from warpspeed.memory.capacity import CapacityCurves
from warpspeed.rank import RankRow, Ranking, predict_configs, sort_rows

Triple = tuple[int, int, int]


@dataclass(frozen=True)
class BestConfig:
    """The best-ranked configuration, ready to generate with pystencils.

    ``block_size`` goes to ``CreateKernelConfig(...).gpu.default_block_size``; ``fold`` is the
    thread folding (cells per thread along x, y, z).
    """

    block_size: Triple
    fold: Triple
    row: RankRow
    assignments: Any = None

    def create_kernel(self, target: Any = None, **config_kwargs: Any) -> Any:
        """The folded pystencils kernel with this block size as its default launch block."""
        if self.assignments is None:
            raise WarpspeedError("this ranking was made from a warpspeed.Kernel; there are no assignments to generate")
        kernel = create_folded_kernel(self.assignments, fold=self.fold, target=target, **config_kwargs)
        return kernel

    def gpu_options(self) -> dict[str, Triple]:
        """Options for ``CreateKernelConfig.gpu``: ``{"default_block_size": block_size}``."""
        return {"default_block_size": self.block_size}


@dataclass(frozen=True)
class PystencilsRanking:
    """A :class:`warpspeed.sweep.Ranking` plus the extracted kernel of each folding."""

    ranking: Ranking
    kernels: dict[Triple, ExtractedKernel]
    assignments: Any = None

    @property
    def rows(self) -> tuple[RankRow, ...]:
        return self.ranking.rows

    def best(self) -> BestConfig:
        row = self.ranking.best()
        return BestConfig(block_size=row.config.block, fold=row.config.fold, row=row, assignments=self.assignments)


def default_threads(kernel: Kernel, device: Device) -> int:
    """Threads per block of the paper's space: 1024 when a 1024-thread block fits the register
    file with the kernel's registers, else the largest power of two that fits (512 for the
    paper's LBM kernel, 5.1)."""
    threads = PAPER_STENCIL_THREADS
    while threads >= device.warp_size:
        try:
            occupancy(make_launch((threads, 1, 1), 1, kernel.domain), device, kernel.registers)
            return threads
        except LaunchError:
            threads //= 2
    raise LaunchError(f"kernel {kernel.name!r} with {kernel.registers} registers fits no block on {device.name}")


def _extract(assignments: Any, fold: Triple, device: Device, target: Any, name: str | None) -> ExtractedKernel:
    gpu_kernel = create_folded_kernel(assignments, fold=fold, target=target)
    return extract_kernel(gpu_kernel, name=name, arch=cuda_arch(device.name))


def rank(source: Any, device: Device | str = "A100-SXM4-40GB", domain: Sequence[int] | None = None,
         blocks: Sequence[Triple] | None = None, foldings: Sequence[Triple] = PAPER_FOLDINGS,
         threads: int | None = None, executor: Executor | None | str = "auto",
         target: Any = None, progress: Callable[[int], None] | None = None,
         curves: CapacityCurves | None = None) -> PystencilsRanking:
    """Rank blocks x foldings for a pystencils update rule, workload name, or warpspeed kernel.

    Args:
        source: a list of ``ps.Assignment`` / an ``AssignmentCollection`` (fields with fixed
            shapes), a workload name of :data:`pystencils_plugin.workloads.WORKLOADS`, or a
            :class:`warpspeed.Kernel` (then foldings are launch parameters only).
        device: device name or :class:`~warpspeed.device.Device`.
        domain: iteration domain for a workload name (default: the workload's); for assignments
            and kernels the fields fix it, and a different ``domain`` is an error.
        blocks: candidate blocks (default: powers of two with ``threads`` threads, z <= 64, that
            the domain can use: :func:`warpspeed.launch.space.configuration_space`).
        foldings: folding factors (default: none, 2 in y, 2 in z).
        threads: threads per block of the default space (default: 1024, or 512 when the
            kernel's registers do not allow 1024).
        executor: as :func:`warpspeed.sweep.predict_configs`.
        target: ``ps.Target.CUDA`` (default) or ``ps.Target.HIP``.
        curves: capacity curves instead of the device family's.
    """
    dev = load_device(device) if isinstance(device, str) else device
    foldings = [tuple(f) + (1,) * (3 - len(f)) for f in foldings]  # type: ignore[misc]
    name = None
    assignments = source
    if isinstance(source, str):
        if source not in WORKLOADS:
            raise KernelError(f"unknown workload {source!r}; workloads: {', '.join(WORKLOADS)}")
        name = source.replace("-", "_")
        assignments = workload_assignments(source, domain)
    kernels: dict[Triple, ExtractedKernel] = {}
    if isinstance(source, Kernel):
        if domain is not None and tuple(domain) != tuple(source.domain)[: len(domain)]:
            raise KernelError(f"domain {tuple(domain)} differs from the kernel's domain {source.domain}")
        per_fold = {f: source for f in foldings}
        assignments = None
    else:
        for f in foldings:
            kernels[f] = _extract(assignments, f, dev, target, name)  # type: ignore[index]
        per_fold = {f: k.kernel for f, k in kernels.items()}
        first = next(iter(per_fold.values()))
        if domain is not None and not isinstance(source, str) and tuple(domain) != tuple(first.domain)[: len(domain)]:
            raise KernelError(f"domain {tuple(domain)} differs from the domain the fields fix, {first.domain}")
    rows: list[RankRow] = []
    for f, kernel in per_fold.items():
        if blocks is not None:
            configs = [Config(tuple(b) + (1,) * (3 - len(b)), f) for b in blocks]  # type: ignore[arg-type]
        else:
            configs = configuration_space(kernel, threads or default_threads(kernel, dev), [f], MAX_BLOCK_Z)
        done = len(rows)
        rows.extend(predict_configs(kernel, dev, configs, executor,
                                    (lambda n, base=done: progress(base + n)) if progress else None, curves))
    kernel_name = next(iter(per_fold.values())).name
    ranking = Ranking(kernel=kernel_name, device=dev.name, rows=sort_rows(rows))
    return PystencilsRanking(ranking=ranking, kernels=kernels, assignments=assignments)


__all__ = ["BestConfig", "PystencilsRanking", "default_threads", "rank"]
