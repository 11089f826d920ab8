"""Regenerate ``pystencils_plugin/data/ptxas_registers.json``: ptxas' register counts of the
built-in workloads' kernels (``pystencils_plugin.register_table``).

Run from the repository root, with the checkout installed (``pip install -e ".[dev]"``, which brings
nvcc), once per supported pystencils version (the
entries of each run are merged into the file, so the kernels of pystencils 2.0 and 2.1 are both
kept)::

    python scripts/ship_register_counts.py            # add this environment's kernels
    python scripts/ship_register_counts.py --fresh    # start from an empty table

The kernels: every built-in workload at its default domain and at the domains the documentation
ranks or ``warpspeed validate`` predicts (:data:`EXTRA_DOMAINS`), double precision and the float
variants of :data:`EXTRA_DTYPES`, the paper's three foldings; for every NVIDIA architecture of the
device database.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pystencils_plugin.catalog import _generated
from pystencils_plugin.register_estimate import code_features
from pystencils_plugin.register_shape import shape_digest
from pystencils_plugin.register_table import FORMAT, source_digest
from pystencils_plugin.registers import compile_register_counts, find_nvcc, standalone_cuda_source
from pystencils_plugin.workloads import LBMPY_WORKLOADS, WORKLOADS
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import all_devices
from warpspeed.launch.space import PAPER_FOLDINGS
from warpspeed.sass.compile import compiler_version
from warpspeed.sass.toolchain import compile_target, cuda_arch

#: Domains beyond the defaults that the README and docs rank or predict, and those of the kernels
#: timed on a real GPU that ``warpspeed validate`` predicts (``fits/data/H200/*.measure.csv``).
EXTRA_DOMAINS = {"star3d-r1": [(512, 512, 512), (640, 512, 512)], "star2d-r1": [(16384, 16384)]}
#: Element types beyond double, per workload: the float variant ``warpspeed validate`` predicts.
EXTRA_DTYPES = {"star3d-r4": ["float"]}
TABLE = Path(__file__).resolve().parent.parent / "pystencils_plugin" / "data" / "ptxas_registers.json"


def _architectures() -> list[str]:
    archs = set()
    for device in all_devices():
        if device.vendor.lower() == "nvidia":
            archs.add(cuda_arch(device.architecture))
    return sorted(archs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="start from an empty table")
    args = parser.parse_args()
    nvcc = find_nvcc()
    if nvcc is None:
        print("error: nvcc not found (pip install 'warpspeed[cuda]')", file=sys.stderr)
        return 2
    import lbmpy
    import pystencils

    versions = {"pystencils": pystencils.__version__, "lbmpy": lbmpy.__version__}
    entries: dict[str, dict] = {}
    if TABLE.is_file() and not args.fresh:
        old = json.loads(TABLE.read_text())
        if old.get("compiler") != compiler_version(nvcc):
            print(f"error: the table was counted by {old.get('compiler')!r}, this nvcc is "
                  f"{compiler_version(nvcc)!r}; use --fresh and rerun for every pystencils version", file=sys.stderr)
            return 2
        entries = {e["digest"]: e for e in old["kernels"]}
    sources = {}
    for name, (_, default_domain) in WORKLOADS.items():
        for domain in [default_domain, *EXTRA_DOMAINS.get(name, [])]:
            for dtype in ["double", *EXTRA_DTYPES.get(name, [])]:
                if dtype != "double" and tuple(domain) != tuple(default_domain):
                    continue
                for fold in PAPER_FOLDINGS:
                    try:
                        kernel, code = _generated(name, tuple(domain), dtype, fold, False)
                    except WarpspeedError:
                        continue
                    source = standalone_cuda_source(kernel, code)
                    generator = {"pystencils": versions["pystencils"]}
                    if name in LBMPY_WORKLOADS:
                        generator["lbmpy"] = versions["lbmpy"]
                    sources[source_digest(source)] = (source, {
                        "workload": name, "domain": list(domain), "dtype": dtype, "fold": list(fold),
                        "shape": shape_digest(source), "features": code_features(source).as_dict()}, generator)
    digests = sorted(sources)
    for arch in _architectures():
        target, _ = compile_target(nvcc, arch)
        counts = compile_register_counts([sources[d][0] for d in digests], arch)
        for digest, (registers, why) in zip(digests, counts):
            if registers is None:
                print(f"error: {sources[digest][1]['workload']} {arch}: {why}", file=sys.stderr)
                return 1
            entry = entries.setdefault(digest, {"digest": digest, **sources[digest][1], "generators": [],
                                                "registers": {}})
            if sources[digest][2] not in entry["generators"]:  # the same code from another version
                entry["generators"].append(sources[digest][2])
            entry["registers"][arch] = registers
            if target != arch:
                entry.setdefault("compiled_for", {})[arch] = target
    for entry in entries.values():
        entry["generators"].sort(key=lambda g: json.dumps(g, sort_keys=True))
    doc = {"format": FORMAT, "compiler": compiler_version(nvcc),
           "kernels": sorted(entries.values(), key=lambda e: (e["workload"], e["domain"], e["fold"]))}
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    tmp = TABLE.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(TABLE)
    print(f"{TABLE}: {len(entries)} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
