"""Peak memory of a study against its number of configurations: rows stream to the output.

Studies of 10^3 to 10^6 configurations (``--sizes``), each in its own Python process so that
``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak resident set, KiB on Linux) is that study's
alone. Each process runs the study twice: *fresh* (every row computed and written) and
*resumed* (the same study interrupted half way, then resumed: the stored half is read back
through the on-disk index). Printed per size: rows, seconds, rows/s, and the process's peak RSS
after each run.

The model is made cheap so that 10^6 rows take minutes, not days: every configuration reuses one
real roofline prediction (copy on 1024^3 cells, A100-SXM4-40GB, block 256x1x1; the default models' row is still
computed from it by :func:`warpspeed.studies.models.model_record`, and the key, block and fold
columns are each row's own). What is measured is the study's own machinery: enumeration,
journal, output, resume index. A real prediction costs 6-230 ms a row (benchmarks/README.md),
so with real predictions rows/s is the predictor's and the memory is the same.

    python benchmarks/bench_study_memory.py                 # 10^3, 10^4, 10^5, 10^6
    python benchmarks/bench_study_memory.py --sizes 1000 100000
    python benchmarks/bench_study_memory.py --sizes 10000000 --fresh-only   # 10^7: about 20 min, 4 GB of disk
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Blocks of 32 to 1024 threads with z <= 64 on a domain of at least 1024^3 cells: (a, b, c) with a + b + c = 5..10,
#: c <= 6: 21 + 28 + 35 + 42 + 49 + 56 = 231.
BLOCKS_PER_DOMAIN = 231
FOLDINGS = [[1, 1, 1], [1, 2, 1], [1, 1, 2], [2, 1, 1]]
CONFIGS_PER_DOMAIN = BLOCKS_PER_DOMAIN * len(FOLDINGS)
DEFAULT_SIZES = (10**3, 10**4, 10**5, 10**6)


def _study(directory: Path, rows: int):
    """A study of about ``rows`` configurations: copy on one device, ``rows / 924`` domains of
    (1024 + i) x 1024 x 1024 cells (10^7 rows: 10 822 domains, the largest 1.3e10 cells)."""
    from warpspeed.studies.spec import study_from_dict

    domains = [[1024 + i, 1024, 1024] for i in range(max(1, round(rows / CONFIGS_PER_DOMAIN)))]
    return study_from_dict({"kernels": ["copy"], "devices": ["A100-SXM4-40GB"], "domains": domains,
                            "threads": [32, 64, 128, 256, 512, 1024], "max_block_z": 64, "foldings": FOLDINGS,
                            "output": "study.csv"}, directory)


def _cheap_model() -> None:
    """Every configuration reuses one real prediction (see the module docstring)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.catalog import resolve_kernel
    from warpspeed.predict import Predictor
    from warpspeed.studies.predictors import FoldingPredictors

    device = load_device("A100-SXM4-40GB")
    prediction = Predictor(resolve_kernel("copy", (1024, 1024, 1024), device=device), device).predict((256, 1, 1))
    FoldingPredictors.predict = lambda self, config: prediction  # type: ignore[method-assign]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(rows: int, resume: bool = True) -> dict[str, float]:
    """Run the study of about ``rows`` configurations fresh, then (``resume``) interrupted and resumed."""
    from warpspeed.studies.study import run_study

    _cheap_model()
    out: dict[str, float] = {"start_mib": _peak_mib()}
    with tempfile.TemporaryDirectory() as directory:
        spec = _study(Path(directory), rows)
        start = time.perf_counter()
        result = run_study(spec, resume=False)
        out.update(rows=result.rows, fresh_s=time.perf_counter() - start, fresh_mib=_peak_mib(),
                   output_mb=spec.output.stat().st_size / 1e6)
        if not resume:
            return out

        def stop(done: int, total: int) -> None:
            if done >= total // 2:
                raise KeyboardInterrupt

        start = time.perf_counter()
        try:
            run_study(spec, resume=False, progress=stop)
        except KeyboardInterrupt:
            pass
        resumed = run_study(spec)
        out.update(resumed=resumed.resumed, resumed_s=time.perf_counter() - start, resumed_mib=_peak_mib())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--fresh-only", action="store_true", help="skip the interrupted and resumed run")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, resume=not args.fresh_only)))
        return
    print(f"{'rows':>9} {'fresh s':>8} {'rows/s':>8} {'peak MiB':>9} {'resumed':>9} {'s':>7} {'rows/s':>8} "
          f"{'peak MiB':>9} {'CSV MB':>8}")
    for size in args.sizes:
        flags = ["--fresh-only"] if args.fresh_only else []
        done = subprocess.run([sys.executable, __file__, "--one", str(size), *flags], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{size} rows failed:\n{done.stderr}")
        r = json.loads(done.stdout.splitlines()[-1])
        resumed = (f"{r['resumed']:>9.0f} {r['resumed_s']:>7.1f} {r['rows'] / r['resumed_s']:>8.0f} "
                   f"{r['resumed_mib']:>9.1f}" if "resumed" in r else f"{'-':>9} {'-':>7} {'-':>8} {'-':>9}")
        print(f"{r['rows']:>9.0f} {r['fresh_s']:>8.1f} {r['rows'] / r['fresh_s']:>8.0f} {r['fresh_mib']:>9.1f} "
              f"{resumed} {r['output_mb']:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
