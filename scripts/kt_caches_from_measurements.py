"""Convert warpspeed measurement tables into Kernel Tuner cache files.

    python scripts/kt_caches_from_measurements.py [--out fits/data/H200/kerneltuner] fits/data/H200/*.measure.csv

Each measurement CSV (``warpspeed measure``; ``docs/validation.md``) becomes one cache in Kernel
Tuner's format (``kernel_tuner.util.process_cache``) named after it (``star3d-r4.measure.csv`` ->
``star3d-r4.json``), so Kernel Tuner's simulation mode, its dashboard and ``warpspeed tune
--simulate`` replay the measured configurations:

* tune parameters ``block_size_x``, ``block_size_y``, ``block_size_z`` (Kernel Tuner's block names)
  and ``fold_x``, ``fold_y``, ``fold_z`` (cells per thread), each listing the values measured;
* one entry per row: its six values and ``time``, the row's ``time_median_s`` in milliseconds per
  launch (Kernel Tuner's unit; the median of the timed launches, each between its own pair of CUDA
  events); a row with an ``error`` becomes Kernel Tuner's ``CompilationFailedConfig`` when the code
  could not be generated for it (pystencils trims the block) and ``RuntimeFailedConfig`` otherwise;
* ``device_name``: the GPU's name as cupy reports it (the table's ``gpu_name``), as Kernel Tuner's
  cupy backend names it; ``kernel_name``: the CUDA function name ``warpspeed tune`` gives the kernel
  (``ws_<kernel>``, ``_float`` for float kernels); ``problem_size``: the domain;
* ``warpspeed``: provenance (the table's file name and SHA-256, its kernel, dtype, domain, GPU,
  measurement date and warpspeed version, the time column converted, this script).

Each cache is written whole or not at all; the same tables give the same files byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from pathlib import Path

from warpspeed.tune.cache import make_cache, write_cache
from warpspeed.tune.mapping import BLOCK_NAMES, FOLD_NAMES
from warpspeed.validation.measurement_csv import read_measurement_csv
from warpspeed.validation.plan import DEFAULT_DTYPE

#: Milliseconds per second (Kernel Tuner's times are ms per launch).
MS_PER_S = 1e3
#: The table's column the cache's ``time`` comes from.
TIME_COLUMN = "time_median_s"


def function_name(kernel: str, dtype: str) -> str:
    """The CUDA function name of a tuned kernel: ``ws_star3d_r4`` (``ws_star3d_r4_float`` in float)."""
    from warpspeed.tune.gpu import tuned_function_name

    return tuned_function_name(kernel, dtype)


def error_class(message: str) -> str:
    """Kernel Tuner's error class for a row's error text."""
    generation = ("generate", "trim", "codegen", "cannot be folded")
    return "CompilationFailedConfig" if any(w in message.lower() for w in generation) else "RuntimeFailedConfig"


def convert(path: Path, out_dir: Path) -> Path:
    table = read_measurement_csv(path)
    meta = table.metadata
    kernel, dtype = meta["kernel"], meta.get("dtype", DEFAULT_DTYPE)
    domain = tuple(int(v) for v in meta["domain"].split("x"))
    rows = []
    for row in table.rows:
        values = [row[f"block_{a}"] for a in "xyz"] + [row[f"fold_{a}"] for a in "xyz"]
        seconds = row.get(TIME_COLUMN, math.nan)
        if row.get("error") or not math.isfinite(seconds):
            rows.append((values, None, error_class(row.get("error", ""))))
        else:
            rows.append((values, seconds * MS_PER_S, ""))
    provenance = {
        "source": path.name, "source_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "kernel": kernel, "dtype": dtype, "domain": list(domain), "gpu": meta.get("gpu_name", ""),
        "measured": meta.get("date", ""), "measured_with": f"warpspeed {meta.get('warpspeed_version', '')} "
                                                          "warpspeed measure".strip(),
        "time": f"{TIME_COLUMN} x 1000: median of the timed launches, ms per launch",
        "converted_by": "scripts/kt_caches_from_measurements.py",
    }
    cache = make_cache(meta.get("gpu_name", meta.get("device_model", "")), function_name(kernel, dtype), domain,
                       BLOCK_NAMES + FOLD_NAMES, rows, {"warpspeed": provenance})
    out = out_dir / (path.name.removesuffix(".measure.csv") + ".json")
    return write_cache(cache, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", nargs="+", type=Path, help="measurement CSV files (warpspeed measure)")
    parser.add_argument("--out", type=Path, default=Path("fits/data/H200/kerneltuner"),
                        help="directory of the caches (default: fits/data/H200/kerneltuner)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for table in args.tables:
        print(convert(table, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
