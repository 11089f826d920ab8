"""Board power of the power-fit benchmark on this machine's GPU: one run per inner-loop length.

For each ``its`` it compiles the kernel of :mod:`warpspeed.validation.roofline_soak` with cupy,
launches one full-occupancy wave back to back for ``--seconds`` while nvidia-smi samples board
power and SM clock (:class:`warpspeed.validation.power_sampling.PowerSampler`), and writes a row
as soon as it is measured. The file is what ``warpspeed power-fit`` reads::

    python benchmarks/gpu/roofline_power.py --out runs.csv
    warpspeed power-fit runs.csv --device H200 --family hopper-h200-measured --out h200.toml

Needs cupy, an NVIDIA GPU and nvidia-smi.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys

from warpspeed.power.benchmark import BLOCK_THREADS
from warpspeed.validation.power_sampling import DEFAULT_SETTLE_S, PowerSampler
from warpspeed.validation.runners import back_to_back
from warpspeed.validation.roofline_soak import (
    DEFAULT_ITS,
    FILL_A,
    FILL_B,
    RUN_COLUMNS,
    array_elements,
    cuda_source,
    function_name,
    grid_blocks,
    run_record,
)

def _blocks_per_sm(cp, kernel, device_id: int) -> int:
    """Resident blocks of BLOCK_THREADS threads per SM (threads, registers and the block limit)."""
    props = cp.cuda.runtime.getDeviceProperties(device_id)
    regs = max(1, int(kernel.num_regs))
    by_threads = props["maxThreadsPerMultiProcessor"] // BLOCK_THREADS
    by_registers = props["regsPerMultiprocessor"] // (regs * BLOCK_THREADS)
    return max(1, min(by_threads, by_registers, props.get("maxBlocksPerMultiProcessor", 32)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output CSV (power-fit's input)")
    parser.add_argument("--its", default=",".join(map(str, DEFAULT_ITS)), help="inner-loop lengths, comma-separated")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of back-to-back launches per run")
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    args = parser.parse_args(argv)
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no cupy, no driver or no GPU: one line, no traceback
        print(f"error: this benchmark needs an NVIDIA GPU and cupy (pip install cupy-cuda12x): {exc}", file=sys.stderr)
        return 2

    its_values = [int(v) for v in args.its.split(",") if v.strip()]
    sampler = PowerSampler(args.gpu, settle_s=min(DEFAULT_SETTLE_S, args.seconds / 3))
    with cp.cuda.Device(args.gpu):
        props = cp.cuda.runtime.getDeviceProperties(args.gpu)
        raw = props["name"]
        name = (raw.decode() if isinstance(raw, bytes) else str(raw)).replace(",", " ")
        kernels = {its: cp.RawKernel(cuda_source(its), function_name(its)) for its in its_values}
        blocks = grid_blocks(props["multiProcessorCount"], min(_blocks_per_sm(cp, k, args.gpu) for k in kernels.values()))
        a = cp.full(array_elements(blocks), FILL_A, dtype=cp.float32)
        b = cp.full(array_elements(blocks), FILL_B, dtype=cp.float32)
        out = cp.zeros(blocks, dtype=cp.float32)
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(f"# measured: warpspeed benchmarks/gpu/roofline_power.py, {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}\n"
                     f"# part: {name}, {blocks} blocks of {BLOCK_THREADS} threads (one full-occupancy wave)\n"
                     f"# power: {' '.join(sampler.command)}, medians after settling, {args.seconds:g} s per run\n"
                     + ",".join(RUN_COLUMNS) + "\n")
            fh.flush()
            for its in its_values:
                kernel = kernels[its]

                def launch(kernel=kernel) -> None:
                    kernel((blocks,), (BLOCK_THREADS,), (a, b, out))

                (launches, seconds), reading = sampler.sample_during(lambda: back_to_back(cp, launch, args.seconds))
                row = run_record(name, its, blocks, launches, seconds, reading)
                fh.write(",".join(str(row[c]) for c in RUN_COLUMNS) + "\n")
                fh.flush()
                print(f"its {its:4d}: {row['gflop_s']:9.1f} GFLOP/s {row['gb_s']:7.1f} GB/s "
                      f"{row['watts']:6.1f} W {row['clock_mhz']:6.0f} MHz", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
