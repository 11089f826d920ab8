"""pystencils 2.x -> warpspeed: extract kernels, fold threads, count registers.

Needs pystencils >= 2.0 (and lbmpy for the LBM workloads), dependencies of warpspeed.
"""

from pystencils_plugin.environment import prepare_pystencils_cache

prepare_pystencils_cache()  # before pystencils is imported: it needs its cache directory then

from pystencils_plugin.extract import ExtractedKernel, extract_kernel  # noqa: E402
from pystencils_plugin.folding import check_affine_accesses, create_folded_kernel, fold_assignments  # noqa: E402
from pystencils_plugin.registers import (  # noqa: E402
    RegisterCount,
    cuda_arch,
    estimate_registers,
    register_count,
    standalone_cuda_source,
)
from pystencils_plugin.workloads import (  # noqa: E402
    WORKLOADS,
    allen_cahn_assignments,
    extract_workload,
    lbm_srt_pull_assignments,
    star_stencil_assignments,
    workload_assignments,
    workload_kernel,
)

__all__ = [
    "ExtractedKernel", "RegisterCount", "WORKLOADS", "allen_cahn_assignments", "check_affine_accesses",
    "create_folded_kernel",
    "cuda_arch", "estimate_registers", "extract_kernel", "extract_workload", "fold_assignments",
    "lbm_srt_pull_assignments", "register_count", "standalone_cuda_source", "star_stencil_assignments",
    "workload_assignments", "workload_kernel",
]

from pystencils_plugin.rank import BestConfig, PystencilsRanking, create_kernel, default_threads, rank  # noqa: E402

__all__ += ["BestConfig", "PystencilsRanking", "create_kernel", "default_threads", "rank"]

from pystencils_plugin.tune import tune  # noqa: E402

__all__ += ["tune"]
