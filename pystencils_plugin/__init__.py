"""pystencils 2.x -> warpspeed: extract kernels, fold threads, count registers.

Needs pystencils >= 2.0 (and lbmpy for the LBM workloads), dependencies of warpspeed. Most public
names are imported on first use (PEP 562), so that the kernel provider
(:mod:`pystencils_plugin.catalog`) reads a kernel back from its disk cache without importing
pystencils.
"""

from pystencils_plugin.environment import prepare_pystencils_cache
from warpspeed.lazy import lazy_exports

prepare_pystencils_cache()  # before pystencils is imported: it needs its cache directory then


def _extract():
    from pystencils_plugin import extract

    return extract


def _folding():
    from pystencils_plugin import folding

    return folding


def _registers():
    from pystencils_plugin import registers

    return registers


def _workloads():
    from pystencils_plugin import workloads

    return workloads


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _extract: ("ExtractedKernel", "extract_kernel"),
    _folding: ("check_affine_accesses", "create_folded_kernel", "fold_assignments"),
    _registers: ("RegisterCount", "cuda_arch", "estimate_registers", "register_count", "standalone_cuda_source"),
    _workloads: ("WORKLOADS", "allen_cahn_assignments", "extract_workload", "lbm_srt_pull_assignments",
                 "star_stencil_assignments", "workload_assignments", "workload_kernel"),
})

# ``rank`` and ``tune`` name both a module and its function; the package's attribute is the
# function, bound here once the modules are loaded (neither imports pystencils before it generates)
from pystencils_plugin.rank import BestConfig, PystencilsRanking, create_kernel, default_threads, rank  # noqa: E402
from pystencils_plugin.tune import tune  # noqa: E402

__all__ += ["BestConfig", "PystencilsRanking", "create_kernel", "default_threads", "rank", "tune"]
