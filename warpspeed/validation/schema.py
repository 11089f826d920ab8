"""The measurement row: its columns, and the measured and predicted values that fill them.

One row per launch configuration: the configuration (:data:`warpspeed.launch.space.CONFIG_COLUMNS`),
grid and lattice updates, the run times, the raw Nsight Compute counters, the measured volumes
per lattice update, and the prediction of the same configuration. Units are in the column names
(``_s`` seconds, ``_hz`` hertz, ``_bytes`` bytes, ``_per_lup`` per lattice update).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field as dc_field
from typing import Any, Mapping, Sequence

from warpspeed.files.records import csv_record
from warpspeed.launch.space import CONFIG_COLUMNS, Config
from warpspeed.levels import LIMITERS
from warpspeed.validation.ncu import NCU_METRICS, NCU_SECTOR_BYTES
from warpspeed.validation.plan import MeasurementError

#: The measured and predicted metrics of a row: (name, measured column, predicted column, unit).
#: Shared with :mod:`warpspeed.validation.accuracy`.
COMPARED_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("l1_wavefronts", "meas_l1_wavefronts_per_lup", "pred_l1_wavefronts_per_lup", "wavefronts/lup"),
    ("l2_load", "meas_l2_load_bytes_per_lup", "pred_l2_load_bytes_per_lup", "B/lup"),
    ("l2_store", "meas_l2_store_bytes_per_lup", "pred_l2_store_bytes_per_lup", "B/lup"),
    ("dram_load", "meas_dram_load_bytes_per_lup", "pred_dram_load_bytes_per_lup", "B/lup"),
    ("dram_store", "meas_dram_store_bytes_per_lup", "pred_dram_store_bytes_per_lup", "B/lup"),
    ("performance", "meas_lups_per_s", "pred_lups_per_s", "lup/s"),
)

_DIMS = ("x", "y", "z")

#: Columns of the power soak (``warpspeed measure --power``): seconds and launches of the
#: back-to-back run (CUDA events), its rate, the medians of nvidia-smi's board power and SM clock
#: samples after settling, how many samples, and the energy per lattice update.
POWER_COLUMNS: tuple[str, ...] = (
    "power_seconds", "power_launches", "power_lups_per_s", "power_watts", "power_sm_clock_mhz",
    "power_samples", "meas_joules_per_lup",
)

#: Every CSV column, in file order.
CSV_COLUMNS: tuple[str, ...] = (
    "config", *CONFIG_COLUMNS, "grid_x", "grid_y", "grid_z", "lups", "error",
    # timing
    "time_median_s", "time_min_s", "time_max_s", "time_repeats", "meas_lups_per_s",
    # raw counters (Nsight Compute, totals of one launch)
    *NCU_METRICS.values(),
    # measured, converted
    "meas_l1_wavefronts_per_lup", "meas_l2_load_bytes_per_lup", "meas_l2_store_bytes_per_lup",
    "meas_dram_load_bytes_per_lup", "meas_dram_store_bytes_per_lup",
    "meas_l2_load_bytes", "meas_l2_store_bytes",
    # board power while the configuration ran back to back (nvidia-smi; --power)
    *POWER_COLUMNS,
    # predicted, per lup
    "pred_lups_per_s", "pred_limiter", "pred_fp_lups_per_s", "pred_l1_lups_per_s",
    "pred_l2_lups_per_s", "pred_dram_lups_per_s",
    "pred_l1_wavefronts_per_lup", "pred_l1_load_bytes_per_lup",
    "pred_l2_load_compulsory_bytes_per_lup", "pred_l2_load_bytes_per_lup", "pred_l2_store_bytes_per_lup",
    "pred_dram_load_compulsory_bytes_per_lup", "pred_dram_store_compulsory_bytes_per_lup",
    "pred_dram_load_bytes_per_lup", "pred_dram_store_bytes_per_lup",
    "pred_blocks_per_sm", "pred_dram_resident_threads", "pred_registers",
    "pred_l1_oversubscription", "pred_l2_oversubscription",
    "pred_l2_redundant_load_bytes_per_lup", "pred_l2_redundant_store_bytes_per_lup",
    "pred_dram_capacity_miss_bytes_per_lup", "pred_dram_partial_store_read_bytes_per_lup",
    *(f"pred_{d}_{q}" for d in _DIMS for q in ("overlap_bytes_per_lup", "hit_rate", "oversubscription")),
    # predicted, totals of one launch
    "pred_l1_wavefronts", "pred_l2_load_bytes", "pred_l2_store_bytes",
    "pred_dram_load_bytes", "pred_dram_store_bytes",
)


@dataclass(frozen=True)
class GpuInfo:
    """The GPU a measurement ran on. Clocks in MHz; 0 when unknown."""

    name: str
    driver: str = ""  # driver version (nvidia-smi), or the CUDA driver API version
    cuda_driver_api: str = ""  # e.g. "12.4" (cudaDriverGetVersion)
    compute_capability: str = ""
    sm_clock_mhz: float = 0.0  # current SM clock
    sm_clock_max_mhz: float = 0.0
    memory_clock_mhz: float = 0.0
    sms: int = 0

    def metadata(self) -> dict[str, str]:
        """The CSV comment-block entries (``gpu_name``, ``driver``, ``sm_clock_mhz``, ...)."""
        d = {k: str(v) for k, v in asdict(self).items()}
        d["gpu_name"] = d.pop("name")
        d["gpu_sms"] = d.pop("sms")
        return d


@dataclass(frozen=True)
class Timing:
    """Run times of the timed launches of one configuration, seconds."""

    samples_s: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.samples_s:
            raise MeasurementError("a timing needs at least one timed launch; got none")
        if any(not math.isfinite(t) or t <= 0 for t in self.samples_s):
            raise MeasurementError(f"launch times must be positive finite seconds, got {self.samples_s}")

    @property
    def median_s(self) -> float:
        return float(statistics.median(self.samples_s))

    @property
    def min_s(self) -> float:
        return float(min(self.samples_s))

    @property
    def max_s(self) -> float:
        return float(max(self.samples_s))

    @property
    def repeats(self) -> int:
        return len(self.samples_s)


@dataclass(frozen=True)
class Soak:
    """Back-to-back launches of one configuration: how many, and their GPU time in seconds."""

    launches: int
    seconds: float

    def __post_init__(self) -> None:
        if self.launches < 1 or not math.isfinite(self.seconds) or self.seconds <= 0:
            raise MeasurementError(f"a soak needs >= 1 launch and positive seconds, got {self.launches}, {self.seconds}")


class CampaignMetadata:
    """The kernel and device of a measurement campaign, read from its ``metadata`` (the CSV's
    comment block): the part :class:`MeasurementTable` and the column reader's table share."""

    metadata: Mapping[str, str]

    @property
    def kernel(self) -> str:
        return str(self.metadata.get("kernel", ""))

    @property
    def device(self) -> str:
        return str(self.metadata.get("device_model", ""))


@dataclass(frozen=True)
class MeasurementTable(CampaignMetadata):
    """A measurement campaign: metadata (the CSV's comment block) and one dict per row."""

    metadata: Mapping[str, str]
    rows: tuple[Mapping[str, Any], ...] = dc_field(default_factory=tuple)


def measured_columns(lups: int, timing: Timing | None, counters: Mapping[str, float] | None) -> dict[str, float]:
    """Measured values of one launch, raw and per lattice update (units in the column names)."""
    if lups <= 0:
        raise MeasurementError(f"lups per launch must be positive, got {lups}")
    nan = math.nan
    out: dict[str, float] = {}
    if timing is not None:
        out.update(time_median_s=timing.median_s, time_min_s=timing.min_s, time_max_s=timing.max_s,
                   time_repeats=timing.repeats, meas_lups_per_s=lups / timing.median_s)
    c = {col: (counters[m] if counters is not None and m in counters else nan) for m, col in NCU_METRICS.items()}
    out.update(c)
    out.update(
        meas_l1_wavefronts_per_lup=c["ncu_l1_wavefronts"] / lups,
        meas_l2_load_bytes=c["ncu_l2_read_sectors"] * NCU_SECTOR_BYTES,
        meas_l2_store_bytes=c["ncu_l2_write_sectors"] * NCU_SECTOR_BYTES,
        meas_l2_load_bytes_per_lup=c["ncu_l2_read_sectors"] * NCU_SECTOR_BYTES / lups,
        meas_l2_store_bytes_per_lup=c["ncu_l2_write_sectors"] * NCU_SECTOR_BYTES / lups,
        meas_dram_load_bytes_per_lup=c["ncu_dram_read_bytes"] / lups,
        meas_dram_store_bytes_per_lup=c["ncu_dram_write_bytes"] / lups,
    )
    return out


def power_columns(lups: int, soak: Soak, watts: float, sm_clock_mhz: float, samples: int) -> dict[str, float]:
    """The :data:`POWER_COLUMNS` of a soak of ``soak.launches`` launches of ``lups`` updates each
    and the median board power (W) and SM clock (MHz) sampled during it."""
    rate = soak.launches * lups / soak.seconds
    return {"power_seconds": soak.seconds, "power_launches": soak.launches, "power_lups_per_s": rate,
            "power_watts": watts, "power_sm_clock_mhz": sm_clock_mhz, "power_samples": samples,
            "meas_joules_per_lup": watts / rate}


def prediction_record(prediction: Any) -> dict[str, Any]:
    """The prediction's summary (:func:`warpspeed.summary.prediction_record`, ``predict --json``)
    plus the DRAM model terms the refit needs (``"dram_terms"``)."""
    from warpspeed.summary import prediction_record as summary_record

    d = summary_record(prediction)
    dram = prediction.dram
    d["dram_terms"] = {
        "l2_oversubscription": dram.l2_oversubscription,
        "l2_redundant_load_bytes_per_lup": dram.l2_redundant_load_bytes_per_lup,
        "l2_redundant_store_bytes_per_lup": dram.l2_redundant_store_bytes_per_lup,
        "capacity_miss_bytes_per_lup": dram.capacity_miss_bytes_per_lup,
        "partial_store_read_bytes_per_lup": dram.partial_store_read_bytes_per_lup,
    }
    return d


def _num(value: Any) -> float:
    """None (JSON's infinity for an unlimited limiter) -> inf; anything else -> float."""
    return math.inf if value is None else float(value)


def _layer_columns(layers: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for d in _DIMS:
        lc = layers.get(d, {})
        out[f"pred_{d}_overlap_bytes_per_lup"] = float(lc.get("overlap_bytes_per_lup", 0.0))
        out[f"pred_{d}_hit_rate"] = float(lc.get("hit_rate", math.nan))
        out[f"pred_{d}_oversubscription"] = float(lc.get("oversubscription", math.nan))
    return out


def _resident_threads(record: Mapping[str, Any]) -> float:
    """Threads with work resident at once, the input of the occupancy-dependent DRAM bandwidth
    (:mod:`warpspeed.memory.dram_bandwidth`): the record's bytes in flight over the bytes per thread;
    a record without them (or without DRAM bytes) gives the blocks of one wave x threads per block;
    NaN when the record lacks the wave or the block."""
    per_thread = record.get("dram_bytes_in_flight_per_thread")
    if isinstance(per_thread, (int, float)) and per_thread > 0 and "dram_bytes_in_flight" in record:
        return float(record["dram_bytes_in_flight"]) / float(per_thread)
    if "wave_blocks" not in record or "block" not in record:
        return math.nan
    return float(int(record["wave_blocks"]) * math.prod(int(b) for b in record["block"]))


def predicted_columns(record: Mapping[str, Any], lups: int) -> dict[str, Any]:
    """Predicted columns from a :func:`prediction_record` (per lup and launch totals); the rate,
    limiter and limits are the four-limiter roofline's (the record's ``roofline``; a record written
    before the summary had one holds them at its top level)."""
    r = record
    roof = r.get("roofline", r)
    lim = roof.get("limiters", {})
    terms = r.get("dram_terms", {})
    out: dict[str, Any] = {
        "pred_lups_per_s": _num(roof["lups_per_s"]), "pred_limiter": roof.get("limiter", ""),
        **{f"pred_{k}_lups_per_s": _num(lim.get(k)) for k in LIMITERS},
        "pred_l1_wavefronts_per_lup": float(r["l1_cycles_per_lup"]),
        "pred_l1_load_bytes_per_lup": float(r["l1_load_bytes_per_lup"]),
        "pred_l2_load_compulsory_bytes_per_lup": float(r["l2_load_compulsory_bytes_per_lup"]),
        "pred_l2_load_bytes_per_lup": float(r["l2_load_bytes_per_lup"]),
        "pred_l2_store_bytes_per_lup": float(r["l2_store_bytes_per_lup"]),
        "pred_dram_load_compulsory_bytes_per_lup": float(r["dram_load_compulsory_bytes_per_lup"]),
        "pred_dram_store_compulsory_bytes_per_lup": float(r["dram_store_compulsory_bytes_per_lup"]),
        "pred_dram_load_bytes_per_lup": float(r["dram_load_bytes_per_lup"]),
        "pred_dram_store_bytes_per_lup": float(r["dram_store_bytes_per_lup"]),
        "pred_blocks_per_sm": r.get("blocks_per_sm", ""),
        "pred_dram_resident_threads": _resident_threads(r),
        "pred_registers": float(r.get("registers", math.nan)),
        "pred_l1_oversubscription": float(r.get("l1_oversubscription", math.nan)),
        "pred_l2_oversubscription": float(terms.get("l2_oversubscription", math.nan)),
        "pred_l2_redundant_load_bytes_per_lup": float(terms.get("l2_redundant_load_bytes_per_lup", math.nan)),
        "pred_l2_redundant_store_bytes_per_lup": float(terms.get("l2_redundant_store_bytes_per_lup", math.nan)),
        "pred_dram_capacity_miss_bytes_per_lup": float(terms.get("capacity_miss_bytes_per_lup", math.nan)),
        "pred_dram_partial_store_read_bytes_per_lup": float(terms.get("partial_store_read_bytes_per_lup", math.nan)),
        **_layer_columns(r.get("layer_conditions", {})),
    }
    out.update(
        pred_l1_wavefronts=out["pred_l1_wavefronts_per_lup"] * lups,
        pred_l2_load_bytes=out["pred_l2_load_bytes_per_lup"] * lups,
        pred_l2_store_bytes=out["pred_l2_store_bytes_per_lup"] * lups,
        pred_dram_load_bytes=out["pred_dram_load_bytes_per_lup"] * lups,
        pred_dram_store_bytes=out["pred_dram_store_bytes_per_lup"] * lups,
    )
    return out


def assemble_row(config: Config, grid: Sequence[int], lups: int, timing: Timing | None,
                 counters: Mapping[str, float] | None, prediction: Mapping[str, Any] | None,
                 error: str = "", power: Mapping[str, float] | None = None) -> dict[str, Any]:
    """One CSV row: configuration, measured values and predictions side by side.

    ``prediction`` is a :func:`prediction_record`, ``power`` the :func:`power_columns` of a
    soak; missing parts (no ncu, failed prediction, no soak) become NaN cells, ``error`` says why.
    """
    row: dict[str, Any] = {c: math.nan for c in CSV_COLUMNS}
    row.update(config=config.label.replace(" ", "_"), error=error, lups=lups, pred_limiter="")
    row.update(csv_record(config))
    for i, d in enumerate(_DIMS):
        row[f"grid_{d}"] = int(grid[i]) if i < len(grid) else 1
    row.update(measured_columns(lups, timing, counters))
    if power is not None:
        row.update(power)
    if prediction is not None:
        row.update(predicted_columns(prediction, lups))
    return row
