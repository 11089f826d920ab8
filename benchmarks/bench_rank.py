"""Speed of full predictions (Predictor.predict): paper spaces, domain-size and access-count scaling.

Serial, one process, after all imports; every configuration is timed on its own with
``time.perf_counter`` around ``Predictor.predict``. Building the kernel and the Predictor (once
per kernel and device) is timed separately. Memory is the process's peak resident set size
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, a high-water mark: each figure includes all
earlier sections) and, with ``--tracemalloc``, the peak of Python-level allocations (numpy
included, islpy's C heap not) in a second, separately run pass over each space.

Sections:

1. the 3D 25-point range-4 star stencil, 640x512x512, paper space of 1024 threads (168
   configurations) on A100-SXM4-40GB (Ernst et al., J. Parallel Distrib. Comput. 2023, 5.2);
2. the conservative Allen-Cahn kernel (pystencils plugin, 512-thread space, 147 configurations)
   if pystencils/lbmpy are installed, else the built-in D3Q15 pull pattern at 256^3 (the output
   says which);
3. the 2D 5-point star stencil (4096x4096), 1024 threads, z = 1 blocks only, foldings none / 2 in y;
4. one prediction (block (32, 8, 4), fold (1, 2, 1)) of the 25-point stencil on cubic domains
   128^3 ... 2048^3;
5. the same prediction for 3D star stencils of range 1, 2, 4, 8 (8 to 50 accesses) on 640x512x512.

Run: python benchmarks/bench_rank.py [--tracemalloc] [--out benchmarks/results/bench_rank.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from warpspeed.hardware.device import load_device
from warpspeed.errors import WarpspeedError
from warpspeed.kernel.description import Kernel
from warpspeed.predict import Predictor
from warpspeed.launch.space import PAPER_STENCIL_THREADS, Config, paper_space
from warpspeed.units import KIB, MIB

#: Threads per block of the article's LBM space (Ernst et al. 2023, 5.1: its registers do not fit 1024).
LBM_THREADS = 512
from warpspeed.kernel.builtin import PAPER_STENCIL_DOMAIN, builtin_kernel, star_stencil

DEVICE = "A100-SXM4-40GB"
SCALING_CONFIG = Config((32, 8, 4), (1, 2, 1))
SCALING_EDGES = (128, 256, 512, 1024, 2048)
STENCIL_RADII = (1, 2, 4, 8)
LBM_DOMAIN = (256, 256, 256)
#: Repeats of the single scaling prediction after the first call (median reported).
REPEATS = 3


@dataclass(frozen=True)
class SpaceTiming:
    """Timings of one configuration space, milliseconds; memory MiB."""

    name: str
    kernel: str
    configurations: int
    errors: int
    setup_ms: float  # kernel + Predictor construction
    total_ms: float  # sum of the per-configuration times
    first_ms: float
    median_ms: float
    worst_ms: float
    worst_config: str
    peak_rss_mib: float
    traced_peak_mib: float | None
    note: str = ""


@dataclass(frozen=True)
class PointTiming:
    """One prediction: Predictor construction, first call and median of repeats, milliseconds."""

    label: str
    accesses: int
    setup_ms: float
    first_ms: float
    median_ms: float


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1e3


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / KIB  # ru_maxrss is in KiB on Linux


def time_space(name: str, make_kernel: Callable[[], Kernel], configs: Sequence[Config], traced: bool,
               note: str = "") -> SpaceTiming:
    t0 = time.perf_counter()
    kernel = make_kernel()
    predictor = Predictor(kernel, DEVICE)
    setup = _ms(t0)
    times: list[float] = []
    errors = 0
    for c in configs:
        t = time.perf_counter()
        try:
            predictor.predict(c.block, c.fold)
        except WarpspeedError:
            errors += 1
        times.append(_ms(t))
    rss = _peak_rss_mib()
    traced_peak = None
    if traced:
        fresh = Predictor(kernel, DEVICE)
        tracemalloc.start()
        for c in configs:
            try:
                fresh.predict(c.block, c.fold)
            except WarpspeedError:
                pass
        traced_peak = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
    worst = max(range(len(times)), key=times.__getitem__)
    return SpaceTiming(name=name, kernel=kernel.name, configurations=len(configs), errors=errors, setup_ms=setup,
                       total_ms=sum(times), first_ms=times[0], median_ms=statistics.median(times),
                       worst_ms=times[worst], worst_config=configs[worst].label, peak_rss_mib=rss,
                       traced_peak_mib=traced_peak, note=note)


def time_point(label: str, kernel: Kernel, config: Config = SCALING_CONFIG) -> PointTiming:
    t0 = time.perf_counter()
    predictor = Predictor(kernel, DEVICE)
    setup = _ms(t0)
    t = time.perf_counter()
    predictor.predict(config.block, config.fold)
    first = _ms(t)
    repeats = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        predictor.predict(config.block, config.fold)
        repeats.append(_ms(t))
    return PointTiming(label=label, accesses=len(kernel.accesses), setup_ms=setup, first_ms=first,
                       median_ms=statistics.median(repeats))


def allen_cahn_kernel() -> tuple[Callable[[], Kernel], str]:
    """The plugin's Allen-Cahn kernel if pystencils/lbmpy work here, else the D3Q15 pull pattern."""
    try:
        from pystencils_plugin.workloads import WORKLOADS, extract_workload
    except ImportError as exc:
        return (lambda: builtin_kernel("d3q15-pull", LBM_DOMAIN),
                f"pystencils plugin unavailable ({exc}); built-in d3q15-pull at 256^3 instead")
    if "allen-cahn" not in WORKLOADS:
        return (lambda: builtin_kernel("d3q15-pull", LBM_DOMAIN),
                "the plugin has no 'allen-cahn' workload; built-in d3q15-pull at 256^3 instead")
    t0 = time.perf_counter()
    extracted = extract_workload("allen-cahn", LBM_DOMAIN)
    note = (f"pystencils_plugin 'allen-cahn' at 256^3, extracted once unfolded in {_ms(t0) / 1e3:.1f} s "
            f"(registers: {extracted.registers_source}); folded configurations reuse the unfolded kernel")
    return (lambda: extracted.kernel), note


def machine() -> dict:
    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""

    model = next((line.split(":", 1)[1].strip() for line in run(["lscpu"]).splitlines()
                  if line.startswith("Model name")), platform.processor())
    return {"date": datetime.date.today().isoformat(), "nproc": run(["nproc"]) or str(os.cpu_count()),
            "cpu": model, "python": platform.python_version(), "platform": platform.platform(),
            "commit": run(["git", "rev-parse", "--short", "HEAD"]),
            "load_average_at_start": list(os.getloadavg())}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tracemalloc", action="store_true", help="Add a traced pass for Python peak memory.")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_rank.json"))
    args = parser.parse_args(argv)

    info = machine()
    rss_after_imports = _peak_rss_mib()
    load_device(DEVICE)
    stencil_space = paper_space(PAPER_STENCIL_THREADS)
    make_lbm, lbm_note = allen_cahn_kernel()
    spaces = [
        time_space("3D 25-point star, 640x512x512, 1024 threads", lambda: builtin_kernel("star3d-r4"),
                   stencil_space, args.tracemalloc),
        time_space("Allen-Cahn / LBM, 512 threads", make_lbm, paper_space(LBM_THREADS), args.tracemalloc,
                   lbm_note),
        time_space("2D 5-point star, 4096x4096, 1024 threads, z = 1", lambda: builtin_kernel("star2d-r1"),
                   paper_space(PAPER_STENCIL_THREADS, ((1, 1, 1), (1, 2, 1)), max_z=1), args.tracemalloc),
    ]
    domains = [time_point(f"{n}^3", star_stencil(3, 4, (n, n, n))) for n in SCALING_EDGES]
    accesses = [time_point(f"range {r}", star_stencil(3, r, PAPER_STENCIL_DOMAIN)) for r in STENCIL_RADII]

    result = {"machine": info, "device": DEVICE, "rss_after_imports_mib": rss_after_imports,
              "spaces": [asdict(s) for s in spaces],
              "scaling_config": {"block": SCALING_CONFIG.block, "fold": SCALING_CONFIG.fold},
              "domain_scaling": [asdict(p) for p in domains], "access_scaling": [asdict(p) for p in accesses]}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{info['date']}, {info['nproc']} cores ({info['cpu']}), Python {info['python']}, commit {info['commit']}, "
          f"load average at start {info['load_average_at_start'][0]:.2f}; device {DEVICE}")
    print(f"peak RSS after imports: {rss_after_imports:.0f} MiB")
    head = f"{'space':48} {'configs':>7} {'err':>4} {'setup ms':>9} {'total s':>8} {'median ms':>10} " \
           f"{'worst ms':>9} {'peak RSS MiB':>12}" + (f" {'traced MiB':>10}" if args.tracemalloc else "")
    print(head)
    for s in spaces:
        print(f"{s.name:48} {s.configurations:7d} {s.errors:4d} {s.setup_ms:9.0f} {s.total_ms / 1e3:8.2f} "
              f"{s.median_ms:10.1f} {s.worst_ms:9.1f} {s.peak_rss_mib:12.0f}"
              + (f" {s.traced_peak_mib:10.1f}" if s.traced_peak_mib is not None else ""))
        if s.note:
            print(f"  note: {s.note}")
    label = f"{SCALING_CONFIG.block} fold {SCALING_CONFIG.fold}"
    for title, points in (("domain size (25-point stencil, " + label + ")", domains),
                          ("accesses (3D star stencils on 640x512x512, " + label + ")", accesses)):
        print(f"\nscaling with {title}:")
        print(f"{'':12} {'accesses':>8} {'setup ms':>9} {'first ms':>9} {'median ms':>10}")
        for p in points:
            print(f"{p.label:12} {p.accesses:8d} {p.setup_ms:9.1f} {p.first_ms:9.1f} {p.median_ms:10.1f}")
    print(f"\nwritten: {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
