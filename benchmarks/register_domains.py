"""Does a kernel on a new domain have the registers of the same code on a shipped domain?

pystencils bakes the domain into a kernel's source (loop bounds, strides), so the same update rule
on another domain is another source; :mod:`pystencils_plugin.register_shape` takes the constants
out and the shipped table (:mod:`pystencils_plugin.register_table`) files each count under the
shape too, so a domain nobody shipped gets the count of the same code on a shipped one. This script
checks that against ptxas on a sample of domains: for the built-in workloads the table ships at
one or more domains, it generates each folding on domains the table does not hold (odd sizes,
flat and tall boxes, 2^31-element fields), compiles it with ``nvcc --resource-usage`` for every
architecture of the table, and compares with the count the table holds for the same shape.

Output: one line per kernel and architecture where the two differ, then the summary
(agreeing / compared). ``--json FILE`` writes every comparison. Needs nvcc.

Run: python benchmarks/register_domains.py [--json benchmarks/results/register_domains.json]
"""

from __future__ import annotations

import argparse
import json
import sys

from pystencils_plugin.catalog import _generated
from pystencils_plugin.register_shape import shape_digest
from pystencils_plugin.register_table import shipped_table
from pystencils_plugin.registers import compile_register_counts, find_nvcc, standalone_cuda_source
from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import write_text_atomic

#: Workloads and the domains sampled for each (none of them shipped).
DOMAINS_3D = ((300, 200, 100), (1000, 60, 37), (64, 64, 64), (2048, 1024, 64), (130, 4100, 257),
              (4096, 4096, 1000))
DOMAINS_2D = ((300, 200), (10000, 37), (1000, 1000), (65536, 64), (131071, 3))
WORKLOADS = {"star3d-r1": DOMAINS_3D, "star3d-r4": DOMAINS_3D, "box3d-r1": DOMAINS_3D, "copy19-pull": DOMAINS_3D,
             "star2d-r1": DOMAINS_2D}
FOLDS_3D = ((1, 1, 1), (1, 2, 1), (1, 1, 2))
FOLDS_2D = ((1, 1, 1), (1, 2, 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="write every comparison to this file")
    args = parser.parse_args()
    if find_nvcc() is None:
        print("error: nvcc not found (pip install 'warpspeed[cuda]')", file=sys.stderr)
        return 2
    table = shipped_table()
    if table is None or not table.shapes:
        print("error: the shipped table has no shapes", file=sys.stderr)
        return 2
    sources = []
    for name, domains in WORKLOADS.items():
        folds = FOLDS_2D if len(domains[0]) == 2 else FOLDS_3D
        for domain in domains:
            for fold in folds:
                try:
                    kernel, code = _generated(name, domain, "double", fold, False)
                except WarpspeedError as exc:
                    print(f"skipped {name} {domain} {fold}: {exc}", file=sys.stderr)
                    continue
                sources.append((name, domain, fold, standalone_cuda_source(kernel, code)))
    rows = []
    archs = sorted({a for counts in table.shapes.values() for a in counts})
    for arch in archs:
        counts = compile_register_counts([s for *_, s in sources], arch)
        for (name, domain, fold, source), (ptxas, why) in zip(sources, counts):
            shipped = table.shapes.get(shape_digest(source), {}).get(arch)
            rows.append({"workload": name, "domain": list(domain), "fold": list(fold), "arch": arch,
                         "ptxas": ptxas, "shape_count": shipped, "error": why if ptxas is None else ""})
            if ptxas != shipped:
                print(f"{name} {'x'.join(map(str, domain))} fold {'x'.join(map(str, fold))} {arch}: "
                      f"ptxas {ptxas}, same shape shipped {shipped}")
    compared = [r for r in rows if r["ptxas"] is not None and r["shape_count"] is not None]
    agree = [r for r in compared if r["ptxas"] == r["shape_count"]]
    within4 = [r for r in compared if abs(r["ptxas"] - r["shape_count"]) <= 4]
    print(f"{len(agree)} of {len(compared)} (kernel, architecture) pairs: the same count as the shipped shape "
          f"({len(within4)} within 4 registers); {len(sources)} kernels on {len(archs)} architectures, "
          f"{len(rows) - len(compared)} without a shipped shape or a ptxas count")
    if args.json_path:
        write_text_atomic(args.json_path, json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
