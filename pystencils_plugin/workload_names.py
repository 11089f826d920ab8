"""The workloads' names, descriptions and default domains, without pystencils or lbmpy: what the
kernel provider lists (:mod:`pystencils_plugin.catalog`) and what the disk cache's keys name
(:mod:`pystencils_plugin.kernel_cache`); :mod:`pystencils_plugin.workloads` builds their update
rules. Reference: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during
Code Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023."""

from __future__ import annotations

#: Ernst et al. 2023, section 5.2: 3D 25-point range-4 star stencil on 640 x 512 x 512 cells.
PAPER_STENCIL_DOMAIN = (640, 512, 512)
PAPER_STENCIL_RADIUS = 4
#: Default LBM domain in cells (the paper gives no size for the LBM kernel; small enough to
#: generate quickly, large enough that waves are in the grid's interior).
DEFAULT_LBM_DOMAIN = (256, 256, 256)
DEFAULT_2D_DOMAIN = (4096, 4096)
DEFAULT_3D_DOMAIN = (256, 256, 256)

#: Named workloads: name -> (description, default domain).
WORKLOADS: dict[str, tuple[str, tuple[int, ...]]] = {
    "star3d-r4": ("3D 25-point range-4 star stencil (Ernst et al. 2023, 5.2)", PAPER_STENCIL_DOMAIN),
    "star3d-r1": ("3D 7-point star stencil", DEFAULT_3D_DOMAIN),
    "star2d-r1": ("2D 5-point star stencil", DEFAULT_2D_DOMAIN),
    "box3d-r1": ("3D 27-point box stencil", DEFAULT_3D_DOMAIN),
    "copy19-pull": ("19-array shifted copy (the memory pattern of a D3Q19 pull step, no arithmetic)",
                    DEFAULT_LBM_DOMAIN),
    "d3q19-srt": ("lbmpy D3Q19 SRT pull kernel", DEFAULT_LBM_DOMAIN),
    "d3q27-srt": ("lbmpy D3Q27 SRT pull kernel", DEFAULT_LBM_DOMAIN),
    "allen-cahn": ("conservative Allen-Cahn interface tracking, D3Q15 pull + 7-point FD (Ernst et al. 2023, 5.3)",
                   DEFAULT_LBM_DOMAIN),
}
#: The workloads whose update rule lbmpy derives (the others only need pystencils and sympy).
LBMPY_WORKLOADS = frozenset({"d3q19-srt", "d3q27-srt", "allen-cahn"})
