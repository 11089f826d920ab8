"""A device against a user's own measurements: the raw tables of ``warpspeed calibrate``.

``warpspeed validate --device mygpu.toml`` compares what the model predicts on that device with
the tables in ``mygpu.calibration/`` (or another folder of tables in the same layout, such as the
public gpu-benches tables): one dataset per table that the device has a prediction for.

DRAM (``gpu-stream``)
    every row of the mixed read/write kernels (those a stencil's traffic resembles): :func:`~warpspeed.memory.dram_bandwidth.launch_dram_bandwidth` at
    the row's resident threads and the kernel's bytes per thread, against the measured GB/s;
L2 (``gpu-l2-cache``)
    the device's L2 bandwidth against the measured plateau, its effective capacity against the
    measured 90 % onset (:func:`~warpspeed.measured.sustained.cache_step`);
latency (``gpu-latency``)
    the device's L1, L2 and DRAM latencies against the measured levels;
launch (``gpu-small-kernels``)
    the launch model of :mod:`warpspeed.calibration.launch` with the device's launch overhead against
    each row's time per launch (rows up to the fitted volume);
L1 (``gpu-strides``)
    :func:`~warpspeed.validation.strides.predict_row` against each row's cycles.

Bounds: the public datasets' bounds where the comparison is the same
(:mod:`warpspeed.validation.public`); the L2 bandwidth and the latencies of a calibrated file
agree with its own tables to the stated calibration tolerance (:data:`CALIBRATION_TOLERANCE_PCT`).
"""

from __future__ import annotations

from pathlib import Path

from warpspeed.measured.raw_tables import RawTable, read_table
from warpspeed.measured.table_checks import table_problem
from warpspeed.errors import WarpspeedError
from warpspeed.hardware.device import Device
from warpspeed.units import GIGA, MEGA, MIB
from warpspeed.validation.datasets import DatasetAccuracy, PointError, dataset

#: The tolerance ``warpspeed calibrate`` states for its figures against the tables they come from [%].
CALIBRATION_TOLERANCE_PCT = 3.0
#: The launch model reproduces the fitted parts' rows within these (fits/kernel-launch.toml:
#: rms 2.7 to 3.7 %, worst 7.9 to 21 %).
LAUNCH_MAPE_BOUND, LAUNCH_WORST_BOUND = 8.0, 30.0


def _where(table: RawTable) -> tuple[tuple[str, str], ...]:
    return ((table.path.name, table.value("gpu_uuid") or "no GPU id"),)


def _stream(device: Device, table: RawTable) -> DatasetAccuracy:
    from warpspeed.measured.public_data import STREAM_BYTES_PER_THREAD, STREAM_ELEMENT_BYTES, parse_public_csv, stream_sweep
    from warpspeed.memory.dram_bandwidth import launch_dram_bandwidth
    from warpspeed.validation.public import (STREAM_OTHER_MAPE_BOUND, STREAM_OTHER_WORST_BOUND,
                                             STREAM_REGISTERS_PER_THREAD)

    sweep = stream_sweep(parse_public_csv(table.text, table.name, table.path.stem))
    from warpspeed.measured.sustained import MIXED_KERNELS

    points = []
    for kernel, measured in ((k, v) for k, v in sweep.bandwidth_gb_s.items() if k in MIXED_KERNELS):
        for threads, gb_s in zip(sweep.resident_threads, measured):
            bw = launch_dram_bandwidth(device, int(threads), STREAM_BYTES_PER_THREAD[kernel], 1,
                                       STREAM_REGISTERS_PER_THREAD, STREAM_BYTES_PER_THREAD[kernel] / STREAM_ELEMENT_BYTES)
            points.append(PointError(f"{kernel}, {int(threads)} threads", bw.achievable_gb_s, float(gb_s)))
    return dataset("DRAM", f"{device.name}: stream kernels by occupancy", "GB/s", points, _where(table),
                   f"{len(sweep.resident_threads)} occupancies, mixed read/write kernels",
                   (STREAM_OTHER_MAPE_BOUND, STREAM_OTHER_WORST_BOUND))


def _l2(device: Device, table: RawTable) -> tuple[DatasetAccuracy, ...]:
    from warpspeed.measured.public_data import parse_public_csv, size_sweep
    from warpspeed.measured.sustained import cache_step
    from warpspeed.validation.public import L2_CAPACITY_MAPE_BOUND, L2_CAPACITY_WORST_BOUND

    step = cache_step(size_sweep(parse_public_csv(table.text, table.name, table.path.stem)), "l2")
    tol = (CALIBRATION_TOLERANCE_PCT, CALIBRATION_TOLERANCE_PCT)
    return (dataset("L2", f"{device.name}: L2 bandwidth vs measured plateau", "GB/s",
                    [PointError(device.name, device.l2.bandwidth_gb_s, step.level_gb_s)], _where(table),
                    "plateau = median bandwidth over data sets of 1/8 to 1/2 of the nominal L2", tol),
            dataset("L2", f"{device.name}: effective L2 vs measured onset", "MiB",
                    [PointError(device.name, device.l2.effective_bytes / MIB, step.onset_bytes / MIB)],
                    _where(table), "onset = data set where the bandwidth last falls through 90 % of the plateau",
                    (L2_CAPACITY_MAPE_BOUND, L2_CAPACITY_WORST_BOUND)))


def _latency(device: Device, table: RawTable) -> DatasetAccuracy | None:
    from warpspeed.measured.public_data import latency_sweep, parse_public_csv
    from warpspeed.measured.sustained import latency_levels

    levels = latency_levels(latency_sweep(parse_public_csv(table.text, table.name, table.path.stem)))
    pairs = (("L1", device.l1.latency_ns, levels.l1_ns), ("L2", device.l2.latency_ns, levels.l2_ns),
             ("DRAM", device.dram_latency_ns, levels.dram_ns))
    points = [PointError(name, model, measured) for name, model, measured in pairs if model is not None]
    if not points:
        return None
    tol = (CALIBRATION_TOLERANCE_PCT, CALIBRATION_TOLERANCE_PCT)
    return dataset("Latency", f"{device.name}: pointer-chase latency per level", "ns", points, _where(table),
                   "median of each level's window of the pointer chase", tol)


def _launch(device: Device, table: RawTable) -> DatasetAccuracy:
    from warpspeed.calibration.launch import MAX_FIT_BYTES, PartDevice, launch_seconds, parse_rows
    from warpspeed.interval.params import interval_params

    method = table.value("launch_method")
    if method not in ("stream", None):
        raise WarpspeedError(f"launched as a {method}: the model's launch overhead is that of launches into a stream")
    params = interval_params(device)
    hz = device.clock_ghz * GIGA
    dev = PartDevice(device.sms, device.l2.bandwidth_gb_s, 2 * (params.l1_latency + params.l2_latency) / hz)
    rows = [r for r in parse_rows(table.text, table.path.name) if r.volume <= MAX_FIT_BYTES]
    points = [PointError(f"{r.elements} elements, {r.block_threads} threads",
                         launch_seconds(r, dev, params.block_dispatch_cycles / hz, params.kll_k / hz) * MEGA,
                         r.seconds * MEGA) for r in rows]
    return dataset("Launch", f"{device.name}: time per launch of small kernels", "us", points, _where(table),
                   f"rows up to {MAX_FIT_BYTES // MIB} MiB; launches: {table.value('launch_method', 'not stated')}",
                   (LAUNCH_MAPE_BOUND, LAUNCH_WORST_BOUND))


def _strides(device: Device, table: RawTable) -> DatasetAccuracy:
    from warpspeed.validation.public import STRIDES_CYCLES_MAPE_BOUND, STRIDES_CYCLES_WORST_BOUND
    from warpspeed.validation.strides import predict_row, read_strides_csv

    rows = read_strides_csv(table.path)
    points = [PointError(f"{r.precision} {r.kind} {r.arg}", predict_row(r, device).cycles, r.cycles) for r in rows]
    return dataset("L1", f"{device.name}: cycles per warp load (strides, blocks)", "cycles", points, _where(table),
                   f"{len(rows)} rows, one block of 1024 threads", (STRIDES_CYCLES_MAPE_BOUND, STRIDES_CYCLES_WORST_BOUND))


def own_datasets(device: Device, folder: str | Path) -> tuple[tuple[DatasetAccuracy, ...], tuple[str, ...]]:
    """The datasets ``device`` has predictions for among the tables of ``folder``, and a note per
    table that gives none (absent, not verified, or the device has no such figure). A table that
    cannot be compared well (a NaN, zero or negative measurement, too few or repeated rows:
    :func:`warpspeed.measured.table_checks.table_problem`) is refused with one line."""
    folder = Path(folder)
    if not folder.is_dir():
        raise WarpspeedError(f"no folder of measurements at {str(folder)!r}; allowed: the folder of raw tables "
                             "warpspeed calibrate writes (or --tables DIR)")
    out: list[DatasetAccuracy] = []
    notes: list[str] = []
    steps = (("gpu-stream", lambda t: (_stream(device, t),)), ("gpu-l2-cache", lambda t: _l2(device, t)),
             ("gpu-latency", lambda t: (_latency(device, t),)), ("gpu-small-kernels", lambda t: (_launch(device, t),)),
             ("gpu-strides", lambda t: (_strides(device, t),)))
    for name, compare in steps:
        table = read_table(folder, name, require_checksum=False)
        if table is None:
            notes.append(f"{name}: no table that verifies in {folder}")
            continue
        problem = table_problem(table)
        if problem is not None:  # a NaN or zero would print as nan % in the report
            raise WarpspeedError(f"{table.path}: {problem}; fix or remove the table")
        try:
            found = [d for d in compare(table) if d is not None]
        except ImportError as exc:
            notes.append(f"{name}: not compared, a package the model needs is missing ({exc.name})")
            continue
        except WarpspeedError as exc:
            notes.append(f"{name}: not compared: {' '.join(str(exc).split())}")
            continue
        if not found:
            notes.append(f"{name}: {device.name} has no figure to compare")
        out.extend(found)
    return tuple(out), tuple(notes)
