"""Registers of a kernel generated for its domain against the same kernel with fields of runtime size.

pystencils bakes fixed field sizes into the code (strides and loop bounds are constants); with
fields of variable shape (``ps.fields("src, dst: double[3D]")``) the strides are kernel parameters
and one source serves every domain. This script counts the registers of both with ptxas (``nvcc
--resource-usage``) for the 25-point range-4 star stencil (star3d-r4) and its foldings none,
2 in y, 2 in z, on sm_80 (A100) and sm_90 (H100/H200), and for the domain-specific source on
several domains. The register cache (:mod:`pystencils_plugin.registers`) keys counts by the
domain-specific source, the kernel that runs, because the two differ.

Run: python benchmarks/register_sources.py
"""

from __future__ import annotations

import sys

import pystencils as ps

from pystencils_plugin.folding import _as_list, _field_accesses, _spatial_axis_order, create_folded_kernel, fold_assignments
from pystencils_plugin.registers import compile_register_count, find_nvcc, standalone_cuda_source
from pystencils_plugin.workloads import star_stencil_assignments

FOLDINGS = ((1, 1, 1), (1, 2, 1), (1, 1, 2))
ARCHS = ("sm_80", "sm_90")
DOMAINS = ((128, 128, 128), (640, 512, 512), (2048, 2048, 2048))
RADIUS = 4


def runtime_size(assignments) -> list:
    """The assignments with every field replaced by a field of the same name, type, layout and
    index shape, but of variable spatial size."""
    items = _as_list(assignments)
    generic = {}
    for acc in _field_accesses(items):
        f = acc.field
        if f not in generic:
            generic[f] = ps.Field.create_generic(f.name, f.spatial_dimensions, f.dtype, index_dimensions=f.index_dimensions,
                                                 layout=f.layout, index_shape=f.index_shape)
    return [a.xreplace({acc: generic[acc.field][acc.offsets](*acc.index) if acc.index else generic[acc.field][acc.offsets]
                        for acc in a.atoms(ps.Field.Access)}) for a in items]


def runtime_size_kernel(assignments, fold):
    """The folded kernel of fields of runtime size (as :func:`create_folded_kernel`, which needs fixed
    sizes to check that the domain divides by the fold)."""
    items = runtime_size(assignments)
    order = _spatial_axis_order(_field_accesses(items))
    slices = [slice(RADIUS, -RADIUS, fold[order.index(dim)] if fold[order.index(dim)] > 1 else None)
              for dim in range(len(order))]
    folded = fold_assignments(items, fold) if fold != (1, 1, 1) else items
    extra = {"allow_double_writes": True, "skip_independence_check": True} if fold != (1, 1, 1) else {}
    config = ps.CreateKernelConfig(target=ps.Target.CUDA, iteration_slice=tuple(slices), default_dtype="float64", **extra)
    return ps.create_kernel(folded, config)


def main() -> None:
    if find_nvcc() is None:
        sys.exit("nvcc not found (pip install 'warpspeed[cuda]')")
    print(f"{'source':34s} {'fold':>7s} " + " ".join(f"{a:>6s}" for a in ARCHS))
    for fold in FOLDINGS:
        rows = {f"domain {'x'.join(map(str, d))}": standalone_cuda_source(
            create_folded_kernel(star_stencil_assignments(3, RADIUS, d), fold=fold)) for d in DOMAINS}
        rows["fields of runtime size"] = standalone_cuda_source(
            runtime_size_kernel(star_stencil_assignments(3, RADIUS, DOMAINS[0]), fold))
        for label, source in rows.items():
            counts = [compile_register_count(source, arch)[0] for arch in ARCHS]
            print(f"{label:34s} {'x'.join(map(str, fold)):>7s} " + " ".join(f"{c!s:>6s}" for c in counts))


if __name__ == "__main__":
    main()
