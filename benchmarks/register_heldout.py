"""The register estimate without a compiler on kernels of families the shipped table does not hold.

Leaving one shipped kernel out (``benchmarks/register_estimate.py``) still leaves its foldings and
domains of the same family in the table. This script judges the estimate
(:func:`pystencils_plugin.register_estimate.estimate_from_table`, learned from the whole shipped
table) on kernels no entry of the table resembles as closely: stars of range 2 and 3 in 3D, 2 and 4
in 2D, the 7-point star and the 27-point box in float, a 9-array pull copy and the D3Q15 SRT
update, each unfolded and folded 2 in y and in z; it compiles every one with
``nvcc --resource-usage`` for every architecture of the table and compares. Close means, as in
``docs/registers.md``: within 4 registers and the same resident blocks per SM at 256, 512 and 1024
threads on the architecture's device.

Output: one line per kernel (ptxas / estimate per architecture, ``*`` where not close), then the
summary. ``--json FILE`` writes every comparison. Needs nvcc.

Run: python benchmarks/register_heldout.py [--json benchmarks/results/register_heldout.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from pystencils_plugin import workloads
from pystencils_plugin.folding import create_folded_kernel
from pystencils_plugin.register_estimate import (CLOSE_REGISTERS, code_features, estimate_from_table,
                                                 fallback_registers, resident_blocks)
from pystencils_plugin.register_table import shipped_table
from pystencils_plugin.registers import compile_register_counts, find_nvcc, standalone_cuda_source
from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import write_text_atomic

#: Domains of the held-out kernels (the workloads' own defaults).
DOMAIN_3D = (256, 256, 256)
DOMAIN_2D = (4096, 4096)
#: The held-out kernels: name -> (assignments, spatial dimensions).
KERNELS: dict[str, tuple[Callable[[], Any], int]] = {
    "star3d-r2": (lambda: workloads.star_stencil_assignments(3, 2, DOMAIN_3D), 3),
    "star3d-r3": (lambda: workloads.star_stencil_assignments(3, 3, DOMAIN_3D), 3),
    "star2d-r2": (lambda: workloads.star_stencil_assignments(2, 2, DOMAIN_2D), 2),
    "star2d-r4": (lambda: workloads.star_stencil_assignments(2, 4, DOMAIN_2D), 2),
    "star3d-r1 float": (lambda: workloads.star_stencil_assignments(3, 1, DOMAIN_3D, "float"), 3),
    "box3d-r1 float": (lambda: workloads.box_stencil_assignments(1, DOMAIN_3D, "float"), 3),
    "copy9-pull": (lambda: workloads.pull_copy_assignments(DOMAIN_3D, "double", workloads.D3Q19_DIRECTIONS[:9]), 3),
    "d3q15-srt": (lambda: workloads.lbm_srt_pull_assignments("D3Q15", DOMAIN_3D), 3),
}
FOLDS = {3: ((1, 1, 1), (1, 2, 1), (1, 1, 2)), 2: ((1, 1, 1), (1, 2, 1))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="write every comparison to this file")
    args = parser.parse_args()
    if find_nvcc() is None:
        print("error: nvcc not found (pip install 'warpspeed[cuda]')", file=sys.stderr)
        return 2
    table = shipped_table()
    if table is None or not table.samples:
        print("error: the shipped table has no kernels to learn from", file=sys.stderr)
        return 2
    import pystencils as ps

    sources = []
    for name, (make, dims) in KERNELS.items():
        assignments = make()
        for fold in FOLDS[dims]:
            try:
                kernel = create_folded_kernel(assignments, fold=fold, target=ps.Target.CUDA)
            except WarpspeedError as exc:
                print(f"skipped {name} {fold}: {exc}", file=sys.stderr)
                continue
            sources.append((name, fold, standalone_cuda_source(kernel, kernel.get_c_code())))
    archs = sorted({a for s in table.samples for a in s.registers})
    rows = []
    for arch in archs:
        counts = compile_register_counts([source for _, _, source in sources], arch)
        for (name, fold, source), (ptxas, why) in zip(sources, counts):
            if ptxas is None:
                print(f"error: {name} {fold} {arch}: {why}", file=sys.stderr)
                return 1
            features = code_features(source)
            found = estimate_from_table(features, arch, table.samples)
            estimate = found[0] if found is not None else fallback_registers(features)
            close = abs(estimate - ptxas) <= CLOSE_REGISTERS
            same = resident_blocks(arch, estimate) == resident_blocks(arch, ptxas)
            rows.append({"kernel": name, "fold": list(fold), "arch": arch, "ptxas": ptxas, "estimate": estimate,
                         "close": close, "same_occupancy": same, "features": features.as_dict()})
    seen = []
    for row in rows:
        key = (row["kernel"], tuple(row["fold"]))
        if key not in seen:
            seen.append(key)
    for key in seen:
        cells = [f"{r['arch']} {r['ptxas']}/{r['estimate']}{'' if r['close'] and r['same_occupancy'] else '*'}"
                 for r in rows if (r["kernel"], tuple(r["fold"])) == key]
        print(f"{key[0]} fold {'x'.join(map(str, key[1]))}: " + "  ".join(cells))
    n = len(rows)
    close = sum(r["close"] for r in rows)
    same = sum(r["same_occupancy"] for r in rows)
    both = sum(r["close"] and r["same_occupancy"] for r in rows)
    print(f"{n} pairs: within {CLOSE_REGISTERS} registers {close} ({100 * close / n:.1f} %), same occupancy "
          f"{same} ({100 * same / n:.1f} %), both {both} ({100 * both / n:.1f} %)")
    if args.json_path:
        write_text_atomic(args.json_path, json.dumps({"compiler_table": table.compiler, "rows": rows}, indent=1) + "\n")
        print(f"wrote {args.json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
