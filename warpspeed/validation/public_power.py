"""Power: the fitted power families against the gpu-roofline runs they were fitted to.

For every stored run (``fits/data/public/gpu-roofline/<part>.csv``) the built-in family of the
part's device predicts the board power at the run's clock and measured rate
(:func:`warpspeed.power.calibrate.design` with the family's energies and voltage floor). These are
in-sample errors: they say how well the model's form fits the runs, the same check
``warpspeed power-fit`` reports.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from warpspeed.hardware.device import load_device
from warpspeed.power import power_params
from warpspeed.power.calibrate import WARP_LANES, design, read_runs
from warpspeed.power.params import BASE_CATEGORY
from warpspeed.validation.public import DatasetAccuracy, PointError, _dataset, source_of

#: Calibration files and the device each was measured on.
POWER_PARTS = (("a100-40", "A100-SXM4-40GB"), ("a40", "A40"), ("l40", "L40"))
#: Stated bounds [%]: the MAPE of a three-number fit to one kernel's runs, and every run within 10 %.
POWER_MAPE_BOUND = 5.0
POWER_WORST_BOUND = 10.0


def power_datasets() -> tuple[DatasetAccuracy, ...]:
    """One dataset per calibration file: predicted against measured board power per run."""
    out = []
    for part, device_name in POWER_PARTS:
        path = resources.files("warpspeed.fits") / "data" / "public" / "gpu-roofline" / f"{part}.csv"
        text = path.read_text()
        runs = read_runs(path)
        device = load_device(device_name)
        p = power_params(device)
        first, add = p.static_w[BASE_CATEGORY]
        theta = np.array([p.core_j["fp32"], p.dram_sector_j, first + (WARP_LANES - 1) * add, p.constant_w])
        watts = design(device, runs, p.v_min_rel) @ theta
        points = [PointError(f"{r.its} FMAs, {r.clock_mhz:.0f} MHz, run {i}", float(w), r.watts)
                  for i, (r, w) in enumerate(zip(runs, watts))]
        out.append(_dataset("Power", f"board power, {device_name} ({p.family})", "W", points,
                            [source_of(text.splitlines()[0])],
                            "every run of every GPU of the node, at its measured clock and rate",
                            (POWER_MAPE_BOUND, POWER_WORST_BOUND)))
    return tuple(out)
