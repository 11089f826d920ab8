"""The interval model on a tensor-core kernel: compile gemm.cu, read its SASS, print its CPI stack.

warpspeed's address front end describes stencils, not tiled GEMMs, so this example writes the
GEMM's trace by hand around the compiled instruction stream: the launch (one warp per 16x16 tile
of C, 4 warps per block) follows from the matrix sizes; the memory figures are stated
assumptions (each 16x16 half tile load touches 4 L1 wavefronts and 2 L2 sectors per load
instruction, half of them L1 misses, a tenth of those L2 misses: A and B tiles are reused by the
blocks of a row and a column). The instruction stream is the SASS of the path a warp takes
(loops recorded once through the unrolled body), so the HMMA count is that of one pass.

Run: python examples/tensor_core_gemm/run.py [--device A100-SXM4-40GB] [--json]
(needs nvcc and cuobjdump: pip install 'warpspeed[cuda]').
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from warpspeed.files.records import json_record
from warpspeed.hardware.device import load_device
from warpspeed.interval import interval_model, interval_params
from warpspeed.sass import compile_sass, device_arch, full_warp_stream, parse_listing
from warpspeed.trace import trace_from_json, validate_trace
from warpspeed.trace.activity import thread_activity

SOURCE = Path(__file__).with_name("gemm.cu")
#: Matrix sizes (m = n = k) and warps per block of the example launch.
SIZE = 4096
WARPS_PER_BLOCK = 4
#: Assumed memory behaviour of the tile loads (see the module docstring).
WAVEFRONTS_PER_LOAD, SECTORS_PER_LOAD, L1_MISS, L2_MISS = 4.0, 2.0, 0.5, 0.1


def gemm_trace(device_name: str) -> dict:
    device = load_device(device_name)
    arch = device_arch(device)
    listing, compiler = compile_sass(SOURCE.read_text(), arch)
    stream = full_warp_stream(parse_listing(listing), arch=arch, compiler=compiler)
    tiles = (SIZE // 16) ** 2
    blocks = tiles // WARPS_PER_BLOCK
    grid = [SIZE // 16 // WARPS_PER_BLOCK, SIZE // 16, 1]
    # every warp computes a tile: the interior blocks and the last ones along x and y are alike
    kinds = [{"count": (grid[0] - 1 if not lx else 1) * (grid[1] - 1 if not ly else 1), "last": [lx, ly, True],
              "full": [True] * WARPS_PER_BLOCK} for lx in (False, True) for ly in (False, True)]
    memory = {"loads_per_thread": sum(1 for i in stream.instructions if i.opcode == "LDG"),
              "stores_per_thread": sum(1 for i in stream.instructions if i.opcode == "STG"),
              "l1_cycles_per_lup": 0.0, "l1_load_bytes_per_lup": 0.0, "l2_load_bytes_per_lup": 0.0,
              "l2_store_bytes_per_lup": 4.0, "dram_load_bytes_per_lup": 0.0, "dram_store_bytes_per_lup": 4.0,
              "l1_wavefronts_per_instruction": WAVEFRONTS_PER_LOAD, "l2_load_sectors_per_load": SECTORS_PER_LOAD,
              "l2_store_sectors_per_store": SECTORS_PER_LOAD, "l1_miss_rate": L1_MISS, "l2_miss_rate": L2_MISS}
    trace = {
        "format": "warpspeed-trace", "version": 1,
        "kernel": {"name": "wmma_gemm", "generator": None, "dtype": "float16", "domain": [SIZE, SIZE, 1],
                   "lups": SIZE * SIZE, "flops": {"adds": 0, "muls": 0, "fmas": SIZE, "divs": 0, "flops_per_lup": 2 * SIZE},
                   "fields": [{"name": "c", "element_bytes": 4, "loads_per_lup": 0, "stores_per_lup": 1}]},
        "device": {"name": device.name, "vendor": device.vendor, "architecture": device.architecture,
                   "sms": device.sms, "clock_mhz": device.clock_mhz, "warp_size": device.warp_size},
        "launch": {"block": [32 * WARPS_PER_BLOCK, 1, 1], "fold": [1, 1, 1], "grid": grid,
                   "blocks": blocks, "threads_per_block": 32 * WARPS_PER_BLOCK, "warps_per_block": WARPS_PER_BLOCK,
                   "cells_per_thread": 1, "blocks_per_sm": 8, "occupancy_limiter": "assumed",
                   "active_sms": min(device.sms, blocks), "waves": math.ceil(blocks / (8 * device.sms)),
                   "wave_blocks": 8 * device.sms, "registers_per_thread": 64, "registers_source": "assumed",
                   "shared_bytes_per_block": 0, "full_warps": tiles, "guard_warps": 0, "valid_threads": 32 * tiles,
                   "active_lanes_per_warp": 32.0, "block_kinds": kinds},
        "instructions": {"source": "sass", "arch": arch, "compiler": compiler,
                         "stream": [json_record(i) for i in stream.instructions],
                         "full_path_instructions": stream.full_path_instructions,
                         "guard_exit_instructions": stream.guard_exit_instructions,
                         "mix_per_warp": stream.mix(), "opcode_counts": stream.opcode_counts(),
                         "activity_per_thread": json_record(thread_activity(stream))},
        "memory": {"mapping": "uniform", "fields": {}, "totals": memory},
        "roofline": {"lups_per_s": None, "limiter": "fp", "limits": {}, "dram_bandwidth_gb_s": device.dram_bandwidth_gb_s},
    }
    trace["memory"]["fields"]["c"] = memory
    validate_trace(trace)
    return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="A100-SXM4-40GB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trace = gemm_trace(args.device)
    result = interval_model(trace_from_json(trace), interval_params(load_device(args.device)), floor=False)
    hmma = [i for i in trace["instructions"]["stream"] if i["fu"] == "tensor"]
    if args.json:
        print(json.dumps({"hmma": len(hmma), "shapes": sorted({tuple(i["tensor_shape"]) for i in hmma}),
                          "modifiers": sorted({".".join(i["modifiers"]) for i in hmma}), **result.as_dict()}))
        return
    print(f"wmma_gemm on {args.device}: {len(hmma)} tensor-core instructions per warp pass "
          f"({', '.join(sorted({i['opcode'] + '.' + '.'.join(i['modifiers']) for i in hmma}))}); "
          f"{result.cycles:,.0f} cycles")
    for name, cycles in result.cpi_stack.items():
        if cycles:
            print(f"  {name:32s} {cycles:14,.0f}  {100 * cycles / result.cycles:5.1f} %")


if __name__ == "__main__":
    main()
