"""The plugin's kernel provider: the pystencils/lbmpy workloads by name.

Registered under the entry-point group ``warpspeed.kernels`` (see
:mod:`warpspeed.kernel.catalog`), so ``warpspeed rank``, ``predict``, studies and measurements
resolve a workload name to the kernel that :func:`extract_for` generates: the update rule of
:mod:`pystencils_plugin.workloads`, folded and compiled by pystencils for that folding, CUDA
for NVIDIA devices and HIP for AMD devices, with its own register count (ptxas when nvcc is
available for an NVIDIA device, otherwise the count shipped with the package for the same source,
:mod:`pystencils_plugin.register_table`, otherwise the estimate of :mod:`pystencils_plugin.registers`).
:func:`pystencils_plugin.rank.rank` uses the same function for workload names.

Generating a workload (lbmpy's symbolic derivation in particular) takes seconds, so the
results are memoised per (workload, domain, precision, fold, target, architecture), in the
process and on disk (:mod:`pystencils_plugin.kernel_cache`). Register
counts are cached on disk (:mod:`pystencils_plugin.registers`); when a folding's count is not
there, the kernels of the paper's foldings (none, 2 in y, 2 in z) of the same workload are generated
and compiled together, concurrently, since a ranking asks for all of them next.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from pystencils_plugin.extracted import ExtractedKernel
from pystencils_plugin.kernel_cache import entry_key, load as load_cached, store as store_cached
from pystencils_plugin.register_table import shipped_table, table_digest
from pystencils_plugin.registers import DEFAULT_ARCH, find_nvcc, prefetch_register_counts, registers_cached
from pystencils_plugin.workload_names import WORKLOADS
from warpspeed.errors import WarpspeedError
from warpspeed.kernel.catalog import ResolvedKernel, importable
from warpspeed.kernel.limits import check_domain, check_fold
from warpspeed.launch.space import PAPER_FOLDINGS
from warpspeed.sass.compile import compiler_version

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

# pystencils itself is imported only to generate a kernel: one read back from the disk cache needs
# none of it. Without pystencils the provider does not load, as the catalog expects of a plugin
# whose optional dependencies are missing (warpspeed.kernel.catalog: the built-in kernels serve).
if not importable("pystencils"):
    raise ModuleNotFoundError("pystencils_plugin needs pystencils >= 2.0 (pip install 'warpspeed[pystencils]')",
                              name="pystencils")

#: Memoised generated kernels (each holds a few hundred sympy expressions at most).
CACHE_SIZE = 64


def is_amd(device: "Device | None") -> bool:
    """Whether ``device`` is an AMD GPU (then kernels are generated for HIP)."""
    return device is not None and device.vendor.lower() == "amd"


def target_for(device: "Device | None") -> Any:
    """``ps.Target.HIP`` for AMD devices, else ``ps.Target.CUDA``."""
    import pystencils as ps

    return ps.Target.HIP if is_amd(device) else ps.Target.CUDA


def arch_for(device: "Device | None") -> str:
    """Architecture name for the register count: the device's (``'ampere'``, ``'cdna2'``)."""
    return DEFAULT_ARCH if device is None else device.architecture


@lru_cache(maxsize=CACHE_SIZE)
def cached_assignments(name: str, domain: tuple[int, ...] | None, dtype: str) -> Any:
    """:func:`~pystencils_plugin.workloads.workload_assignments`, memoised (treat as read-only)."""
    from pystencils_plugin.workloads import workload_assignments

    return workload_assignments(name, domain, dtype)


@lru_cache(maxsize=CACHE_SIZE)
def _generated(name: str, domain: tuple[int, ...] | None, dtype: str, fold: tuple[int, int, int],
               hip: bool) -> tuple[Any, str]:
    """The pystencils kernel of a workload for one folding and its source, memoised (treat as
    read-only)."""
    import pystencils as ps

    from pystencils_plugin.folding import create_folded_kernel

    target = ps.Target.HIP if hip else ps.Target.CUDA
    kernel = create_folded_kernel(cached_assignments(name, domain, dtype), fold=fold, target=target)
    return kernel, kernel.get_c_code()


def _prefetch_foldings(name: str, domain: tuple[int, ...] | None, dtype: str, fold: tuple[int, int, int],
                       arch: str) -> None:
    """Compile the registers of ``fold`` and of the paper's foldings together (see the module
    docstring); foldings the workload's domain cannot use are left out."""
    kernels = []
    for f in dict.fromkeys((fold, *PAPER_FOLDINGS)):
        try:
            kernels.append(_generated(name, domain, dtype, f, False)[0])
        except WarpspeedError:
            continue
    prefetch_register_counts(kernels, arch)


def _toolchain(hip: bool) -> tuple[str, tuple[str, ...]]:
    """What counts a kernel's registers and the register sources that it gives: the estimate for
    HIP; without nvcc the counts shipped with the package (named by the table's digest), else the
    estimate; else ptxas of the nvcc found (named by its version line), and the shipped counts of
    the same code where that compiler counted the table."""
    if hip:
        return "estimate", ("estimate",)
    nvcc = find_nvcc()
    if nvcc is None:
        return f"no nvcc; shipped counts {table_digest()}", ("shipped", "estimate")
    compiler = compiler_version(nvcc)
    table = shipped_table()
    if table is not None and table.compiler == compiler:
        # this compiler counted the table: the count of the same code on a shipped domain is its own
        return f"nvcc {compiler}; shipped counts {table_digest()}", ("ptxas", "shipped")
    return f"nvcc {compiler}", ("ptxas",)


@lru_cache(maxsize=CACHE_SIZE)
def _extract(name: str, domain: tuple[int, ...] | None, dtype: str, fold: tuple[int, int, int],
             hip: bool, arch: str) -> ExtractedKernel:
    toolchain, expected_sources = _toolchain(hip)
    key = entry_key(name, domain, dtype, fold, hip, arch, toolchain)
    stored = load_cached(key)
    if stored is not None:
        return stored
    from pystencils_plugin.extract import extract_kernel

    kernel, source = _generated(name, domain, dtype, fold, hip)
    if not hip and not registers_cached(kernel, arch, source):
        _prefetch_foldings(name, domain, dtype, fold, arch)
    extracted = extract_kernel(kernel, name=name, arch=arch, source=source)
    if extracted.registers_source in expected_sources:
        store_cached(key, extracted)
    return extracted


def _register_arch(device: "Device | None") -> str:
    """The architecture the register count depends on: the device's for an NVIDIA device (ptxas,
    or the count shipped for that architecture); for AMD devices the estimate, which is the same
    for every architecture, so one cached kernel serves them all."""
    if is_amd(device):
        return DEFAULT_ARCH
    return arch_for(device)


def extract_for(name: str, domain: Sequence[int] | None = None, *, fold: Sequence[int] = (1, 1, 1),
                device: "Device | None" = None, dtype: str | None = None) -> ExtractedKernel:
    """The extracted kernel of workload ``name`` generated for ``fold`` on ``device``.

    ``domain``: cells (default: the workload's); ``dtype``: ``'double'`` (default) or
    ``'float'``; ``device`` None generates CUDA code for the default architecture.
    """
    f = check_fold(tuple(fold) + (1,) * (3 - len(tuple(fold))))
    dom = check_domain(tuple(domain)) if domain is not None else None  # before generating anything
    return _extract(name, dom, dtype or "double", f, is_amd(device), _register_arch(device))  # type: ignore[arg-type]


@dataclass(frozen=True)
class PystencilsKernels:
    """The kernel provider registered under ``warpspeed.kernels``."""

    def kernels(self) -> Mapping[str, str]:
        return {name: description + " (pystencils)" for name, (description, _) in WORKLOADS.items()}

    def resolve(self, name: str, domain: Sequence[int] | None, *, fold: tuple[int, int, int],
                device: "Device | None", dtype: str | None) -> ResolvedKernel:
        extracted = extract_for(name, domain, fold=fold, device=device, dtype=dtype)
        kernel, detail = extracted.kernel, extracted.registers_detail
        cap = hip_register_cap(device) if is_amd(device) else None
        if cap is not None and kernel.registers is not None and kernel.registers > cap:
            detail = (f"{detail}; capped at {cap}: HIP compiles kernels for work-groups of up to 1024 threads by "
                      "default, and the AMDGPU backend limits the VGPRs so that such a work-group fits a compute unit")
            kernel = replace(kernel, registers=cap)
        return ResolvedKernel(kernel, extracted.registers_source, detail)


def hip_register_cap(device: "Device") -> int:
    """The most VGPRs per thread of a HIP kernel with the default launch bound: the AMDGPU
    backend sizes registers for the maximum flat work-group size, 1024 threads unless the kernel
    says otherwise (LLVM AMDGPU backend documentation, AMDGPUUsage: ``amdgpu-flat-work-group-size``,
    default "1,1024" for HIP), so that one work-group fits a compute unit's register file:
    registers per CU / threads, rounded down to the allocation granule per lane."""
    granule = max(1, device.register_alloc_unit // device.warp_size)
    return device.registers_per_sm // device.max_threads_per_block // granule * granule


#: The object the entry point loads.
PROVIDER = PystencilsKernels()
