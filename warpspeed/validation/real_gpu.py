"""The time models against a real GPU: the 25-point star stencil timed and profiled on an H200.

``fits/data/H200/`` holds the rates of the 160 launch configurations of the evaluation workload of
Ernst et al. (JPDC 2023) that an NVIDIA H200 runs (168 minus 8 that pystencils trims on this
domain), three Nsight Compute profiles and two board-power soaks (its README gives the machine
and the software). :func:`real_gpu_accuracy` predicts every configuration with every time model
and compares:

* the rates: mean absolute percentage error (MAPE), prediction / measurement (median, range),
  Spearman's rank correlation, and the measured rate of the configuration each model ranks first
  as a share of the best measured rate;
* per profile, the L1 data-stage wavefronts, L2 -> L1 load and DRAM load per lattice update:
  the roofline's volumes (which the interval and pipeline models share) and the overlap model's
  own;
* board power: the power model at the default time model's rate and the soak's SM clock.

The kernels are the ones ``warpspeed rank`` ranks: pystencils' code for each folding, registers
counted by ``ptxas`` where nvcc is installed.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import stored_file
from warpspeed.files.text import read_text
from warpspeed.units import GIGA, SECTOR_BYTES

#: The device, the kernel and the folder of the measurements.
DEVICE = "H200"
KERNEL = "star3d-r4"
FOLDER = "H200"
TIMING_FILE = "star3d-r4.timing.csv"
POWER_FILE = "power.csv"
#: The profiled configurations: (block, fold) -> raw ncu file.
PROFILES: dict[tuple[tuple[int, int, int], tuple[int, int, int]], str] = {
    ((8, 4, 32), (1, 1, 2)): "ncu_star3d-r4_8x4x32_f1x1x2.csv",
    ((32, 32, 1), (1, 1, 1)): "ncu_star3d-r4_32x32x1_f1x1x1.csv",
    ((256, 4, 1), (1, 2, 1)): "ncu_star3d-r4_256x4x1_f1x2x1.csv",
}
#: Counters read from the profiles, and the volumes per lattice update they give.
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts.sum"
L2_READ_SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum"
DRAM_READ_BYTES = "dram__bytes_read.sum"
PROFILE_METRICS = (WAVEFRONTS, L2_READ_SECTORS, DRAM_READ_BYTES)
#: The volumes compared per profile: name, unit.
VOLUMES = (("L1 data-stage wavefronts", "per lup"), ("L2 -> L1 load", "B/lup"), ("DRAM load", "B/lup"))

Config = tuple[tuple[int, int, int], tuple[int, int, int]]


def _triple(text: str) -> tuple[int, int, int]:
    values = tuple(int(v) for v in text.split(","))
    if len(values) != 3:
        raise WarpspeedError(f"{FOLDER}/{TIMING_FILE}: {text!r} is not three integers")
    return values  # type: ignore[return-value]


def _rows(name: str) -> list[dict[str, str]]:
    text = read_text(stored_file(FOLDER, name), "stored measurement")
    return list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))


def measured_rates() -> dict[Config, float]:
    """Lattice updates per second of each timed configuration (the batched time's rate)."""
    return {(_triple(r["block"]), _triple(r["fold"])): float(r["lups_per_s"]) for r in _rows(TIMING_FILE)}


def lattice_updates() -> int:
    """Lattice updates of one launch (the timing file's ``lups``, the same for every row)."""
    values = {int(r["lups"]) for r in _rows(TIMING_FILE)}
    if len(values) != 1:
        raise WarpspeedError(f"{FOLDER}/{TIMING_FILE}: rows disagree on the lattice updates per launch")
    return values.pop()


def measured_volumes() -> dict[Config, tuple[float, float, float]]:
    """Per profiled configuration: L1 data-stage wavefronts, L2 -> L1 load bytes and DRAM load bytes
    per lattice update (the counters' sums over the launch's lattice updates)."""
    from warpspeed.validation.ncu_csv import parse_ncu_csv

    lups = lattice_updates()
    out = {}
    for config, name in PROFILES.items():
        records = parse_ncu_csv(read_text(stored_file(FOLDER, name), "stored Nsight Compute output"), PROFILE_METRICS)
        r = records[-1]
        out[config] = (r[WAVEFRONTS] / lups, r[L2_READ_SECTORS] * SECTOR_BYTES / lups, r[DRAM_READ_BYTES] / lups)
    return out


@dataclass(frozen=True)
class Soak:
    """Board power while one configuration ran back to back: measured watts, rate and SM clock."""

    config: Config
    lups_per_s: float
    watts: float
    clock_mhz: float


def soaks() -> tuple[Soak, ...]:
    """The stored board-power soaks."""
    out = []
    for r in _rows(POWER_FILE):
        block = (int(r["block_x"]), int(r["block_y"]), int(r["block_z"]))
        fold = (int(r["fold_x"]), int(r["fold_y"]), int(r["fold_z"]))
        out.append(Soak((block, fold), float(r["lups_per_s"]), float(r["board_w"]), float(r["sm_clock_mhz"])))
    return tuple(out)


@dataclass(frozen=True)
class ModelAccuracy:
    """One time model against the timed configurations.

    ``points``: (configuration, predicted, measured) rates in lups/s; ``best_predicted``: the
    configuration the model ranks first; ``best_share``: its measured rate over the best measured
    rate.
    """

    model: str
    points: tuple[tuple[Config, float, float], ...]

    @property
    def ratios(self) -> list[float]:
        return [p / m for _, p, m in self.points]

    @property
    def mape_percent(self) -> float:
        return 100.0 * sum(abs(r - 1.0) for r in self.ratios) / len(self.points)

    @property
    def median_ratio(self) -> float:
        r = sorted(self.ratios)
        n = len(r)
        return r[n // 2] if n % 2 else 0.5 * (r[n // 2 - 1] + r[n // 2])

    @property
    def spearman(self) -> float:
        from scipy.stats import spearmanr

        return float(spearmanr([p for _, p, _ in self.points], [m for _, _, m in self.points])[0])

    @property
    def _first(self) -> tuple[Config, float, float]:
        """The point the model ranks first; equal rates go by block, then fold (as ``rank``)."""
        return min(self.points, key=lambda t: (-t[1], t[0][0], t[0][1]))

    @property
    def best_predicted(self) -> Config:
        return self._first[0]

    @property
    def best_share(self) -> float:
        return self._first[2] / max(m for _, _, m in self.points)


@dataclass(frozen=True)
class VolumeCheck:
    """One profiled configuration's volumes: measured, the roofline's and the default time
    model's (``overlap``: those of :data:`warpspeed.models.DEFAULT_TIME_MODEL`'s details;
    :data:`VOLUMES` order)."""

    config: Config
    measured: tuple[float, float, float]
    roofline: tuple[float, float, float]
    overlap: tuple[float, float, float]


@dataclass(frozen=True)
class PowerCheck:
    """A soak against the power model at the default time model's rate and the soak's clock."""

    soak: Soak
    predicted_w: float
    predicted_lups_per_s: float


#: What the default time model must reach on these measurements (``warpspeed validate`` exits with
#: status 1 otherwise): MAPE at most 10 %, Spearman at least 0.95, the configuration it ranks first
#: at least 97 % of the best measured rate; the overlap model's volumes and the board power within
#: 10 % of the profiles and the soaks.
CRITERIA = {"mape_percent": 10.0, "spearman": 0.95, "best_share": 0.97, "volume_percent": 10.0,
            "power_percent": 10.0}


@dataclass(frozen=True)
class RealGpuAccuracy:
    """Every time model, the volumes and the board power against the H200 measurements."""

    device: str
    kernel: str
    registers: str
    models: tuple[ModelAccuracy, ...]
    volumes: tuple[VolumeCheck, ...]
    power: tuple[PowerCheck, ...]

    def model(self, name: str) -> ModelAccuracy:
        for m in self.models:
            if m.model == name:
                return m
        raise WarpspeedError(f"model {name!r} was not compared; compared: {', '.join(m.model for m in self.models)}")

    @property
    def within_criteria(self) -> bool:
        """Whether the default time model, its volumes and the power meet :data:`CRITERIA`."""
        from warpspeed.models import DEFAULT_TIME_MODEL

        m = self.model(DEFAULT_TIME_MODEL)
        volumes = all(abs(o / meas - 1.0) * 100 <= CRITERIA["volume_percent"]
                      for v in self.volumes for o, meas in zip(v.overlap, v.measured))
        power = all(abs(c.predicted_w / c.soak.watts - 1.0) * 100 <= CRITERIA["power_percent"] for c in self.power)
        return (m.mape_percent <= CRITERIA["mape_percent"] and m.spearman >= CRITERIA["spearman"]
                and m.best_share >= CRITERIA["best_share"] and volumes and power)


def real_gpu_accuracy(models: Sequence[str] | None = None, device_name: str = DEVICE) -> RealGpuAccuracy:
    """Predict the timed configurations with ``models`` (default: every time model) and compare
    (module docstring). Needs the pystencils plugin (the kernels are pystencils' code).
    ``device_name``: the device file the predictions use (default: the built-in H200; a
    calibrated file of the same card, ``fits/data/H200/calibrate/``, for instance)."""
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.catalog import resolve
    from warpspeed.models import DEFAULT_TIME_MODEL, TIME_MODELS, estimate_energy, estimate_time
    from warpspeed.predict import Predictor

    names = tuple(models) if models is not None else TIME_MODELS
    device = load_device(device_name)
    rates = measured_rates()
    folds = sorted({fold for _, fold in rates})
    resolved = {fold: resolve(KERNEL, None, fold=fold, device=device) for fold in folds}
    predictors = {fold: Predictor(r.kernel, device) for fold, r in resolved.items()}
    predictions = {config: predictors[config[1]].predict(*config) for config in rates}
    estimates = {m: {c: estimate_time(m, p) for c, p in predictions.items()} for m in names}
    accuracies = tuple(ModelAccuracy(m, tuple((c, estimates[m][c].lups_per_s, rates[c]) for c in rates))
                       for m in names)

    volumes = []
    for config, measured in measured_volumes().items():
        p = predictions[config]
        overlap = estimate_time(DEFAULT_TIME_MODEL, p).details
        volumes.append(VolumeCheck(
            config, measured,
            (p.l1.data_pipe_wavefronts_per_lup, p.l2_load_bytes_per_lup, p.dram.load_bytes_per_lup),
            (overlap["l1_data_wavefronts_per_lup"], overlap["l2_load_bytes_per_lup"],
             overlap["dram_load_bytes_per_lup"])))

    power = []
    for soak in soaks():
        p = predictions[soak.config] if soak.config in predictions else predictors[soak.config[1]].predict(*soak.config)
        energy = estimate_energy(p, estimate_time(DEFAULT_TIME_MODEL, p), clock_mhz=soak.clock_mhz)
        power.append(PowerCheck(soak, energy.watts, energy.lups_per_s))
    sources = sorted({r.registers_source for r in resolved.values()})
    return RealGpuAccuracy(device.name, KERNEL, "/".join(sources), accuracies, tuple(volumes), tuple(power))


def _config_text(config: Config) -> str:
    (bx, by, bz), (fx, fy, fz) = config
    fold = "" if (fx, fy, fz) == (1, 1, 1) else f" fold {fx}x{fy}x{fz}"
    return f"{bx}x{by}x{bz}{fold}"


def _percent(predicted: float, measured: float) -> str:
    return f"{100.0 * (predicted / measured - 1.0):+.1f} %" if measured and math.isfinite(predicted) else "-"


def real_gpu_markdown(acc: RealGpuAccuracy) -> str:
    """The "Real GPU" section of ``docs/accuracy.md``."""
    from warpspeed.models import DEFAULT_TIME_MODEL

    n = len(acc.models[0].points) if acc.models else 0
    best = max(acc.models[0].points, key=lambda t: t[2]) if acc.models else None
    lines = [
        "## Real GPU: the 25-point stencil on an NVIDIA H200",
        "",
        f"The paper's evaluation workload ({acc.kernel}, 640x512x512, double; blocks of 1024 threads x the "
        f"foldings none, 2 in y, 2 in z) timed on an H200: {n} configurations, three Nsight Compute profiles "
        "and two board-power soaks (`fits/data/H200/`, whose README gives the machine and the software). "
        f"Registers: {acc.registers}. "
        + (f"Best measured: {_config_text(best[0])}, {best[2] / GIGA:.1f} Glup/s. " if best else "")
        + f"The default time model is `{DEFAULT_TIME_MODEL}`. The overlap model's exponent and request rate "
        "were fitted on these timings, and the H200's L2 capacity of the layer conditions on two of the "
        "profiles (`warpspeed/overlap/params.py`, the H200 device file), so its figures here are in-sample; "
        "the roofline, interval and pipeline models have no constant fitted on them.",
        "",
        "| model | MAPE | prediction / measurement: median (range) | Spearman | best predicted | its measured share of the best |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for m in acc.models:
        r = m.ratios
        lines.append(f"| {m.model} | {m.mape_percent:.1f} % | {m.median_ratio:.2f} ({min(r):.2f}-{max(r):.2f}) | "
                     f"{m.spearman:.3f} | {_config_text(m.best_predicted)} | {100 * m.best_share:.1f} % |")
    lines += ["", "Volumes per lattice update against the profiles (the interval and pipeline models use the "
              "roofline's):", "",
              "| configuration | quantity | measured | roofline | overlap |", "|---|---|---:|---:|---:|"]
    for v in acc.volumes:
        for k, (name, unit) in enumerate(VOLUMES):
            lines.append(f"| {_config_text(v.config)} | {name} ({unit}) | {v.measured[k]:.2f} | "
                         f"{v.roofline[k]:.2f} ({_percent(v.roofline[k], v.measured[k])}) | "
                         f"{v.overlap[k]:.2f} ({_percent(v.overlap[k], v.measured[k])}) |")
    if acc.power:
        lines += ["", f"Board power against the soaks (the power model at the `{DEFAULT_TIME_MODEL}` model's rate and "
                  "the soak's SM clock):", "",
                  "| configuration | SM clock | measured | predicted | error |", "|---|---:|---:|---:|---:|"]
        for c in acc.power:
            lines.append(f"| {_config_text(c.soak.config)} | {c.soak.clock_mhz:.0f} MHz | {c.soak.watts:.0f} W | "
                         f"{c.predicted_w:.0f} W | {_percent(c.predicted_w, c.soak.watts)} |")
    return "\n".join(lines) + "\n"


def real_gpu_rows(acc: RealGpuAccuracy) -> list[list[str]]:
    """Rows (model, MAPE %, median ratio, Spearman, best predicted, its share of the best) of the
    terminal table of ``warpspeed validate``."""
    return [[m.model, f"{m.mape_percent:.1f}", f"{m.median_ratio:.2f}", f"{m.spearman:.3f}",
             _config_text(m.best_predicted), f"{100 * m.best_share:.1f} %"] for m in acc.models]


def real_gpu_caption(acc: RealGpuAccuracy) -> str:
    """One paragraph under the terminal table: the volumes and the power of the default model."""
    parts = []
    for v in acc.volumes:
        errors = ", ".join(f"{name.split()[0]} {_percent(o, m)}" for (name, _), o, m in zip(VOLUMES, v.overlap, v.measured))
        parts.append(f"{_config_text(v.config)}: {errors}")
    power = "; ".join(f"{_config_text(c.soak.config)} {c.predicted_w:.0f} W against {c.soak.watts:.0f} W"
                      for c in acc.power)
    verdict = "meets" if acc.within_criteria else "MISSES"
    return (f"Volumes of the overlap model against the profiles: {'; '.join(parts)}. Board power: {power}. "
            f"The default model {verdict} the criteria (MAPE <= {CRITERIA['mape_percent']:g} %, Spearman >= "
            f"{CRITERIA['spearman']:g}, best >= {100 * CRITERIA['best_share']:g} %, volumes and power within "
            f"{CRITERIA['volume_percent']:g} %). Data: fits/data/H200/ (docs/accuracy.md).")


def real_gpu_document(acc: RealGpuAccuracy) -> dict:
    """The comparison as JSON (``warpspeed validate --json``'s ``real_gpu``)."""
    def config(c: Config) -> dict:
        return {"block": list(c[0]), "fold": list(c[1])}

    return {
        "device": acc.device, "kernel": acc.kernel, "registers": acc.registers,
        "within_criteria": acc.within_criteria, "criteria": dict(CRITERIA),
        "models": [{"model": m.model, "mape_percent": m.mape_percent, "median_ratio": m.median_ratio,
                    "min_ratio": min(m.ratios), "max_ratio": max(m.ratios), "spearman": m.spearman,
                    "best_predicted": config(m.best_predicted), "best_share": m.best_share,
                    "points": [{**config(c), "predicted_lups_per_s": p, "measured_lups_per_s": meas}
                               for c, p, meas in m.points]} for m in acc.models],
        "volumes": [{**config(v.config), **{key: {"measured": v.measured[k], "roofline": v.roofline[k],
                                                   "overlap": v.overlap[k]}
                                             for k, key in enumerate(("l1_wavefronts_per_lup", "l2_load_bytes_per_lup",
                                                                      "dram_load_bytes_per_lup"))}}
                    for v in acc.volumes],
        "power": [{**config(c.soak.config), "clock_mhz": c.soak.clock_mhz, "measured_w": c.soak.watts,
                   "predicted_w": c.predicted_w} for c in acc.power],
    }
