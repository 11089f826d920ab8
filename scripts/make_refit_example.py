"""Write ``examples/refit-example.csv``: a synthetic measurement file that ``warpspeed refit`` fits.

The H200 campaign stored in ``fits/data/H200/`` was timed without Nsight Compute counters, so it
holds no measured L2 and DRAM volumes and ``refit`` has nothing to fit on it. This file shows the
command on data it can fit: 40 rows whose "measured" L2 and DRAM load volumes follow two known
Gompertz miss-rate curves exactly (``TRUE_L1_LOAD``, ``TRUE_Z_LAYER`` below), so the refit must
recover them. It is not a GPU measurement, and its header says so.

Run from the repository root: ``python scripts/make_refit_example.py``.
"""

from __future__ import annotations

import math

import numpy as np

from warpspeed.validation.measurement_csv import write_measurement_csv

#: Where the example is written (relative to the repository root).
OUT = "examples/refit-example.csv"
#: The curves the synthetic volumes follow: miss rate m(o) = a exp(-b exp(-c o)).
TRUE_L1_LOAD = (0.6, 6.0, 1.3)
TRUE_Z_LAYER = (0.95, 20.0, 2.5)
#: Rows of the file.
ROWS = 40
#: Per lattice update: compulsory L2 load, the L1 load without reuse, compulsory DRAM load, the
#: z-layer overlap, the stores (bytes).
L2_COMPULSORY, L1_LOAD, DRAM_COMPULSORY, Z_OVERLAP, STORE = 16.0, 48.0, 48.0, 8.0, 8.0


def miss(curve: tuple[float, float, float], o: float) -> float:
    a, b, c = curve
    return a * math.exp(-b * math.exp(-c * o))


def rows() -> list[dict]:
    out = []
    for i, (o1, oz) in enumerate(zip(np.linspace(0.0, 5.0, ROWS), np.linspace(0.1, 4.0, ROWS)[::-1])):
        out.append({
            "config": f"c{i}", "block_x": 2 ** (i % 11), "block_y": 1, "block_z": 1,
            "fold_x": 1, "fold_y": 1, "fold_z": 1, "error": "",
            "meas_l2_load_bytes_per_lup": L2_COMPULSORY + miss(TRUE_L1_LOAD, o1) * (L1_LOAD - L2_COMPULSORY),
            "meas_dram_load_bytes_per_lup": DRAM_COMPULSORY - Z_OVERLAP * (1 - miss(TRUE_Z_LAYER, oz)),
            "meas_l2_store_bytes_per_lup": STORE, "meas_dram_store_bytes_per_lup": STORE,
            "meas_lups_per_s": 1e9,
            "pred_l1_oversubscription": float(o1), "pred_l1_load_bytes_per_lup": L1_LOAD,
            "pred_l2_load_compulsory_bytes_per_lup": L2_COMPULSORY, "pred_l2_load_bytes_per_lup": 30.0,
            "pred_l2_store_bytes_per_lup": STORE,
            "pred_dram_load_compulsory_bytes_per_lup": DRAM_COMPULSORY, "pred_dram_load_bytes_per_lup": 44.0,
            "pred_dram_store_bytes_per_lup": STORE,
            "pred_l2_oversubscription": 0.5, "pred_l2_redundant_load_bytes_per_lup": 0.0,
            "pred_l2_redundant_store_bytes_per_lup": 0.0, "pred_dram_capacity_miss_bytes_per_lup": 0.0,
            "pred_dram_partial_store_read_bytes_per_lup": 0.0,
            "pred_x_overlap_bytes_per_lup": 0.0, "pred_y_overlap_bytes_per_lup": 0.0,
            "pred_z_overlap_bytes_per_lup": Z_OVERLAP, "pred_z_oversubscription": float(oz), "pred_z_hit_rate": 0.5,
            "pred_fp_lups_per_s": math.inf, "pred_l1_lups_per_s": 1e12, "pred_l2_lups_per_s": 1e11,
            "pred_dram_lups_per_s": 2e10, "pred_lups_per_s": 2e10, "pred_dram_resident_threads": 65536.0,
            "pred_registers": 32.0,
        })
    return out


def main() -> None:
    note = (f"synthetic, NOT a GPU measurement: volumes follow l1_load {TRUE_L1_LOAD} and z_layer {TRUE_Z_LAYER} "
            "(scripts/make_refit_example.py)")
    write_measurement_csv(OUT, {"kernel": "synthetic", "device_model": "A100-SXM4-40GB", "gpu_name": "synthetic",
                                "note": note}, rows())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
