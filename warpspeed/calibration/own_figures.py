"""The fitting half of ``warpspeed calibrate``: raw tables in, device figures out (no GPU needed).

Every figure is read off the raw tables (:mod:`warpspeed.measured.raw_tables`) by the same
rules that derived the shipped device files from the public gpu-benches tables (D. Ernst, GPU
microbenchmarks, https://github.com/te42kyfo/gpu-benches; Ernst, Holzer, Hager, Knorr, Wellein:
"Analytical Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel
and Distributed Computing, 2023); no rule is restated here:

``device-query``
    SMs, maximum SM clock, L2 size, shared memory, registers and thread limits as the CUDA runtime
    reports them, and the board power limit from nvidia-smi: taken as they are.
``gpu-stream``
    sustained DRAM bandwidth (:func:`~warpspeed.measured.sustained.summarize_stream`: the
    best mixed read/write kernel at the highest occupancy) and the achievable-DRAM curve
    (:func:`~warpspeed.measured.stream_curve.fit_stream_kernel` on the first kernel of
    :data:`~warpspeed.measured.device_figures.CURVE_KERNELS` the table has).
``gpu-l2-cache`` / ``gpu-cache``
    L2 bandwidth (level plateau) and effective L2 capacity, L1 capacity
    (:func:`~warpspeed.measured.sustained.cache_step`, capped at the nominal size by
    :func:`~warpspeed.measured.device_figures.capped_onset`).
``gpu-latency``
    L1, L2 and DRAM pointer-chase latencies (:func:`~warpspeed.measured.sustained.latency_levels`).
``gpu-small-kernels``
    the per-launch overhead ``k`` (:func:`~warpspeed.calibration.launch.fit_overhead`, the block
    dispatch time held at the value shared by every fitted GPU, ``fits/kernel-launch.toml``),
    written as ``[device] launch_overhead_us`` (:mod:`warpspeed.measured.launch_cost`), from tables of launches into a stream
    (the public tables); a table of CUDA-graph launches (what cupy can time without its own
    host overhead of about 5 us per launch) is reported in the notes only (:data:`STREAM_LAUNCHES`).
``gpu-strides`` and ``gpu-roofline``
    no device-file number is fitted from them: the NVIDIA L1 tag stage is a property of the
    level's family (:mod:`warpspeed.memory.l1_stages`), and board power is fitted into a power
    family by ``warpspeed power-fit``; the tables are kept for ``warpspeed validate --device`` and
    ``warpspeed power-fit``, and the figures report what they show (:attr:`OwnFigures.notes`).

What a table does not give (it is missing, failed, or its sweep does not reach the windows the
rules need) is listed in :attr:`OwnFigures.missing` with the reason; the device file takes those
numbers from the base device. A device-query value that is missing, not a number, zero or
negative is listed there too, one entry per value, so every number taken from the base is named.

Before a table is fitted it is checked (:func:`~warpspeed.measured.table_checks.table_problem`): a sweep the rules fit
(:data:`SWEEP_TABLES`) needs :data:`MIN_SWEEP_ROWS` rows at distinct points of its sweep
variable, and finite, positive measured values; no table may repeat a row; every table must come
from one GPU (the same ``gpu_uuid`` where the tables have one, as ``warpspeed calibrate`` writes
them, else the same GPU model in the ``part`` line: its first word after the vendor's, so tables
of an A100 40 GB and an A100 80 GB mix, an H200's and an L40's do not) of the base device's
vendor. With ``strict`` (``warpspeed calibrate --fit-only``: tables the user brings) a table that
fails is refused with one :class:`~warpspeed.errors.FitError`; after a measurement it is left
out, named in :attr:`OwnFigures.missing`, and its numbers come from the base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from warpspeed.measured.raw_tables import TABLES, RawTable, failure_of, read_table
from warpspeed.measured.table_checks import table_problem, tables_problem
from warpspeed.errors import FitError, WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.units import GIGA, KIB, KILO, MEGA, MIB, NANO

#: Device-query columns -> the device-file key each sets (``section.key``; ``l1``/``l2`` are the
#: first level's and the L2's ``[[memory]]`` tables).
QUERY_KEYS = {
    "sms": "device.sms", "l2_bytes": "l2.bytes", "shared_bytes_per_sm": "device.shared_bytes_per_sm",
    "shared_bytes_per_block": "device.shared_bytes_per_block", "registers_per_sm": "device.registers_per_sm",
    "max_threads_per_sm": "device.max_threads_per_sm", "max_threads_per_block": "device.max_threads_per_block",
    "max_blocks_per_sm": "device.max_blocks_per_sm", "warp_size": "device.warp_size",
    "power_limit_w": "device.power_limit_w",
}
#: Digits the device file keeps: bandwidths and latencies to 0.1, the curve exponent to 0.001
#: (as the shipped files), a launch overhead to 0.0001 us.
ROUND_GB_S, ROUND_NS, ROUND_SHARPNESS, ROUND_US = 1, 1, 3, 4


@dataclass(frozen=True)
class Measured:
    """One device-file number read off a raw table: ``key`` (``section.key``), value, the table
    file it came from and the rule that gave it."""

    key: str
    value: float | int
    table: str
    how: str


@dataclass(frozen=True)
class NotMeasured:
    """A group of figures the tables do not give, and why (the base device's numbers are kept)."""

    what: str
    reason: str


@dataclass(frozen=True)
class OwnFigures:
    """Everything the raw tables of one GPU give: the figures, what is missing and why, and notes
    on the tables that set no number (gpu-strides, gpu-roofline)."""

    gpu: str
    folder: str
    figures: tuple[Measured, ...]
    missing: tuple[NotMeasured, ...]
    notes: tuple[str, ...]

    def get(self, key: str) -> Measured | None:
        """The figure for device-file key ``key``, or None."""
        return next((f for f in self.figures if f.key == key), None)

    def value(self, key: str) -> float | int | None:
        f = self.get(key)
        return None if f is None else f.value


def _file(table: RawTable) -> str:
    return table.path.name


def _data_file(table: RawTable):
    from warpspeed.measured.public_data import parse_public_csv

    return parse_public_csv(table.text, table.name, table.path.stem)


def _query(table: RawTable, missing: list[NotMeasured]) -> list[Measured]:
    f = _data_file(table)
    out = []

    def usable(column: str) -> float | None:
        """The column's value when it is a finite number above zero; else None, and the value the
        base gives instead is named in ``missing``."""
        if column not in f.columns:
            missing.append(NotMeasured(column, f"{_file(table)} has no column {column}"))
            return None
        v = float(f.column(column)[0])
        if not (math.isfinite(v) and v > 0):
            missing.append(NotMeasured(column, f"{_file(table)} gives {v:g}, not a number above zero"))
            return None
        return v

    for column, key in QUERY_KEYS.items():
        v = usable(column)
        if v is not None:
            value = round(v, 1) if key == "device.power_limit_w" else int(round(v))
            out.append(Measured(key, value, _file(table), f"{column} as reported by the CUDA runtime"
                                if key != "device.power_limit_w" else "enforced power limit (nvidia-smi)"))
    mhz = usable("clock_max_mhz")
    if mhz is not None:
        out.append(Measured("device.clock_ghz", round(mhz / KILO, 3), _file(table),
                            "maximum SM clock as reported by the CUDA runtime"))
    warp = next((m.value for m in out if m.key == "device.warp_size"), None)
    threads = next((m.value for m in out if m.key == "device.max_threads_per_sm"), None)
    if warp and threads:
        out.append(Measured("device.max_warps_per_sm", int(threads // warp), _file(table),
                            "max_threads_per_sm / warp_size"))
    else:
        missing.append(NotMeasured("max_warps_per_sm", f"{_file(table)} gives no max_threads_per_sm and warp_size "
                                                       "to divide"))
    return out


def _stream(table: RawTable) -> list[Measured]:
    from warpspeed.measured.stream_curve import fit_stream_kernel
    from warpspeed.measured.device_figures import CURVE_KERNELS
    from warpspeed.measured.public_data import stream_sweep
    from warpspeed.measured.sustained import summarize_stream

    sweep = stream_sweep(_data_file(table))
    s = summarize_stream(sweep)
    out = [Measured("device.dram_bandwidth_gb_s", round(s.mixed_gb_s, ROUND_GB_S), _file(table),
                    f"stream {s.mixed_kernel} at {s.resident_threads} resident threads (best mixed read/write "
                    f"kernel at the highest occupancy); read-only {s.read_only_gb_s:.0f}, "
                    f"write-only {s.write_only_gb_s:.0f} GB/s")]
    kernel = next((k for k in CURVE_KERNELS if k in sweep.bandwidth_gb_s), None)
    if kernel is None:
        raise FitError(f"{_file(table)}: none of the curve kernels {', '.join(CURVE_KERNELS)}")
    fit = fit_stream_kernel(sweep, kernel)
    how = f"stream {kernel} fit of the achievable-DRAM curve, mean error {fit.mape_pct:.1f} % over {fit.points} rows"
    p = fit.params
    out += [Measured("device.dram_curve_peak_gb_s", round(p.peak_gb_s, ROUND_GB_S), _file(table), how),
            Measured("device.dram_curve_latency_ns", round(p.latency_ns, ROUND_NS), _file(table), how),
            Measured("device.dram_curve_sharpness", round(p.sharpness, ROUND_SHARPNESS), _file(table), how)]
    return out


def _l2(table: RawTable) -> list[Measured]:
    from warpspeed.measured.device_figures import capped_onset
    from warpspeed.measured.public_data import size_sweep
    from warpspeed.measured.sustained import cache_step

    step = cache_step(size_sweep(_data_file(table)), "l2")
    onset = capped_onset(step, MIB, "MiB", 2)
    return [Measured("l2.bandwidth_gb_s", round(step.level_gb_s, ROUND_GB_S), _file(table),
                     f"level bandwidth: median over data sets of {step.nominal_bytes / 8 / MIB:g} to "
                     f"{step.nominal_bytes / 2 / MIB:g} MiB (read-only, full occupancy)"),
            Measured("l2.effective_bytes", int(onset.value), _file(table),
                     f"90 % bandwidth onset: {onset.source.split(' (')[0]}")]


def _l1(table: RawTable) -> list[Measured]:
    from warpspeed.measured.device_figures import capped_onset
    from warpspeed.measured.public_data import size_sweep
    from warpspeed.measured.sustained import cache_step

    step = cache_step(size_sweep(_data_file(table)), "l1")
    onset = capped_onset(step, KIB, "KiB", 1)
    return [Measured("l1.bytes", int(onset.value), _file(table),
                     f"90 % bandwidth onset of the L1 sweep: {onset.source.split(' (')[0]}")]


def _latency(table: RawTable) -> list[Measured]:
    from warpspeed.measured.public_data import latency_sweep
    from warpspeed.measured.sustained import latency_levels

    sweep = latency_sweep(_data_file(table))
    lat = latency_levels(sweep)
    how = f"pointer chase, median of the level's window, cycles at {sweep.clock_ghz * KILO:.0f} MHz"
    return [Measured("l1.latency_ns", round(lat.l1_ns, ROUND_NS), _file(table), how),
            Measured("l2.latency_ns", round(lat.l2_ns, ROUND_NS), _file(table), how),
            Measured("device.dram_latency_ns", round(lat.dram_ns, ROUND_NS), _file(table), how)]


#: Launch methods whose overhead is the per-launch overhead of the model: launches into a stream,
#: as an application (and gpu-benches' gpu-small-kernels) makes them. Launches of a CUDA graph
#: cost less per kernel (on an H200: 0.55 us against 2.1 us), so a table measured with graphs
#: sets no ``launch_overhead_us`` (its overhead is reported in the notes).
STREAM_LAUNCHES = ("stream", None)


def _launch(table: RawTable, base: Device, figures: list[Measured], notes: list[str]) -> list[Measured]:
    from warpspeed.calibration.launch import PartDevice, fit_overhead, parse_rows
    from warpspeed.measured.launch_cost import launch_constants

    known = {f.key: f.value for f in figures}
    sms = int(known.get("device.sms", base.sms))
    clock_ghz = float(known.get("device.clock_ghz", base.clock_ghz))
    l2_gb_s = float(known.get("l2.bandwidth_gb_s", base.l2.bandwidth_gb_s))
    if "l2.latency_ns" in known:
        round_trip_s, whose = 2 * float(known["l2.latency_ns"]) * NANO, "the measured"
    else:
        l1, l2 = base.latencies.l1, base.latencies.l2
        round_trip_s, whose = 2 * (l1 + l2) / (base.clock_ghz * GIGA), f"{base.name}'s"
    rows = parse_rows(table.text, _file(table))
    shared = launch_constants().block_dispatch_s
    fit = fit_overhead(rows, PartDevice(sms, l2_gb_s, round_trip_s), shared)
    how = (f"per-launch overhead {fit.overhead_s * MEGA:.4f} us, fitted to {fit.rows} rows with the shared block "
           f"dispatch time {shared * GIGA:.2f} ns and {whose} L2 round trip (rms error {100 * fit.rms_rel_error:.1f} %)")
    method = table.value("launch_method")
    if method not in STREAM_LAUNCHES:
        notes.append(f"{_file(table)}: {how}, launched as a {method}: lower than the stream launches the "
                     "launch overhead stands for, so the launch cost is the base device's")
        raise _NotAFigure(f"launched as a {method}, not into a stream (see the note)")
    return [Measured("device.launch_overhead_us", round(fit.overhead_s * MEGA, ROUND_US), _file(table), how)]


class _NotAFigure(WarpspeedError):
    """A table that was read but gives no device-file number (the reason is the message)."""


def _strides_note(table: RawTable, base: Device) -> str:
    """What the first-level rows show: contiguous loads' bytes per cycle against the bank rule."""
    import csv

    lines = [ln for ln in table.text.splitlines() if ln.strip() and not ln.startswith("#")]
    rows = list(csv.DictReader(lines))
    contiguous = [float(r["bytes_per_cycle"]) for r in rows if r.get("kind") == "stride" and r.get("arg") == "1"
                  and r.get("precision") == "float" and r.get("bytes_per_cycle") not in (None, "", "nan")]
    rule = base.l1.banks * base.l1.bank_bytes
    text = f"{_file(table)}: {len(rows)} rows of first-level cycles per warp load"
    if contiguous:
        text += (f"; contiguous float loads move {contiguous[0]:.1f} B per cycle and SM, the bank rule of the "
                 f"file ({base.l1.banks} banks x {base.l1.bank_bytes} B) {rule} B")
    return text + ("; the tag stage is the first level's family's; `warpspeed validate --device` compares "
                   "every row with the model")


def _roofline_note(table: RawTable) -> str:
    f = _data_file(table)
    watts, clock = f.column("watts"), f.column("clock_mhz")
    its = f.column("its")
    return (f"{_file(table)}: {len(its)} runs, inner loop 0 to {int(np.nanmax(its))} FMAs, board power "
            f"{np.nanmin(watts):.0f} to {np.nanmax(watts):.0f} W, SM clock {np.nanmin(clock):.0f} to "
            f"{np.nanmax(clock):.0f} MHz; fit a power family with `warpspeed power-fit {_file(table)} "
            "--device <this file> --family <name>`")


#: Figure groups by table: what each gives (for :class:`NotMeasured`).
WHAT = {
    "device-query": "SMs, clock, L2 size, shared memory, registers, thread limits, power limit",
    "gpu-stream": "sustained DRAM bandwidth and the achievable-DRAM curve",
    "gpu-l2-cache": "L2 bandwidth and effective L2 capacity",
    "gpu-cache": "L1 capacity",
    "gpu-latency": "L1, L2 and DRAM latencies",
    "gpu-small-kernels": "per-launch overhead",
}


def own_figures(folder: str | Path, base: Device, gpu: str = "", strict: bool = False) -> OwnFigures:
    """Read every table of ``folder`` and fit the figures (see the module docstring); ``base``
    supplies what a rule needs and the tables do not give (the launch fit's L2 round trip, the
    bank rule of the strides note). ``strict``: a table that cannot be fitted well
    (:func:`~warpspeed.measured.table_checks.table_problem`) or tables of another GPU or vendor raise :class:`FitError` instead of
    being left out."""
    folder = Path(folder)
    if not folder.is_dir():
        raise WarpspeedError(f"no folder of raw tables at {str(folder)!r}; allowed: a folder holding "
                             f"{', '.join(t + '.csv' for t in TABLES)}")
    figures: list[Measured] = []
    missing: list[NotMeasured] = []
    notes: list[str] = []
    readers: dict[str, Callable[[RawTable], list[Measured]]] = {
        "device-query": lambda t: _query(t, missing), "gpu-stream": _stream, "gpu-l2-cache": _l2, "gpu-cache": _l1,
        "gpu-latency": _latency, "gpu-small-kernels": lambda t: _launch(t, base, figures, notes)}
    tables: dict[str, RawTable] = {}
    for name in TABLES:
        table = read_table(folder, name, require_checksum=False)
        if table is None:
            reason = failure_of(folder, name)
            why = f"measurement failed: {reason}" if reason else "no table (not measured, or it did not verify)"
            if name in WHAT:
                missing.append(NotMeasured(WHAT[name], f"{name}.csv: {why}"))
            continue
        tables[name] = table
    if not tables:
        raise WarpspeedError(f"{str(folder)!r} holds none of the raw tables {', '.join(t + '.csv' for t in TABLES)}")
    mixed = tables_problem(tables, base)
    if mixed is not None:
        raise FitError(f"{str(folder)!r}: {mixed}")
    for name, table in tables.items():
        problem = table_problem(table)
        if problem is not None:
            if strict:
                raise FitError(f"{table.path}: {problem}; fix or remove the table (its numbers then come from the "
                               f"base {base.name})")
            missing.append(NotMeasured(WHAT.get(name, name), f"{name}.csv: not fitted: {problem}"))
            continue
        try:
            if name in readers:
                figures.extend(readers[name](table))
            elif name == "gpu-strides":
                notes.append(_strides_note(table, base))
            else:
                notes.append(_roofline_note(table))
        except Exception as exc:  # noqa: BLE001 - one table that cannot be fitted must not stop the others
            what = WHAT.get(name, name)
            text = " ".join(str(exc).split())
            if isinstance(exc, _NotAFigure):
                missing.append(NotMeasured(what, f"{name}.csv: {text}"))
                continue
            text = text if isinstance(exc, WarpspeedError) else f"{type(exc).__name__}: {text}"
            missing.append(NotMeasured(what, f"{name}.csv: the fit failed: {text}"))
    if gpu == "":
        query = read_table(folder, "device-query", require_checksum=False)
        gpu = (query.value("part") or "") if query else ""
    return OwnFigures(gpu, str(folder), tuple(figures), tuple(missing), tuple(notes))
