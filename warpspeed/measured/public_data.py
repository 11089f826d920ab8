"""Reader for the public microbenchmark measurements stored under ``fits/data/public/``.

The files hold figures measured with the open-source GPU microbenchmarks of Dominik Ernst
(https://github.com/te42kyfo/gpu-benches, GPL-3.0), the benchmarks behind Ernst, Holzer, Hager,
Knorr, Wellein: "Analytical Performance Estimation during Code Generation on Modern GPUs",
Journal of Parallel and Distributed Computing, 2023. Only the measured numbers are stored, one CSV
per benchmark and measured part (``<benchmark>/<part>.csv``), each opening with ``# key: value``
comment lines: ``source`` (repository, file, commit), ``part``, ``units`` and the benchmark's
own parameters. They install with the package as ``warpspeed.fits`` data.

Four benchmarks are stored:

* ``gpu-stream``: DRAM bandwidth of streaming kernels against the number of resident threads;
* ``gpu-l2-cache``: bandwidth against the total data set re-read by all SMs (L2 capacity);
* ``gpu-cache``: bandwidth against a buffer every SM re-reads on its own (L1 capacity);
* ``gpu-latency``: pointer-chase latency against the data set (L1, L2, DRAM latency).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.errors import FitError
from warpspeed.files.stored import Traversable, stored_file
from warpspeed.units import KIB, KILO

#: The stored benchmarks, each a folder of ``<part>.csv`` files.
BENCHMARKS = ("gpu-stream", "gpu-l2-cache", "gpu-cache", "gpu-latency")

_REQUIRED_KEYS = ("source", "part", "units")

#: Bytes one thread moves per stream kernel (streams x 8 B doubles), as the benchmark counts them.
#: ``triad`` is A = B x 1.2 + C (three streams); ``triad4`` the four-buffer triad A = B x D + C that
#: gpu-stream runs since its commit 6955551 (2024-12-17; the files measured with it name the column so).
STREAM_BYTES_PER_THREAD = {
    "init": 8, "read": 8, "scale": 16, "triad": 24, "stencil1d3pt": 16, "stencil1d5pt": 16,
    "triad4": 32,
}
#: Bytes of one element of a stream kernel (doubles): a kernel's concurrent streams are its bytes
#: per thread over this (warpspeed.memory.dram_bandwidth.sustained_for_streams).
STREAM_ELEMENT_BYTES = 8


def public_data_root() -> Traversable:
    """The folder holding one sub-folder per benchmark (installed as ``warpspeed.fits`` data)."""
    return stored_file("public")


@dataclass(frozen=True)
class DataFile:
    """One stored CSV: its ``# key: value`` header, column names and numeric rows."""

    benchmark: str
    part: str  # file stem, e.g. "h200"
    meta: tuple[tuple[str, str], ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]

    def value(self, key: str) -> str:
        """A header value; :class:`FitError` if the file lacks it."""
        for k, v in self.meta:
            if k == key:
                return v
        raise FitError(f"{self.benchmark}/{self.part}.csv has no '# {key}:' header line "
                       f"(it has: {', '.join(k for k, _ in self.meta)})")

    @property
    def source(self) -> str:
        """Where the figures come from: repository, file and commit."""
        return self.value("source")

    def column(self, name: str) -> np.ndarray:
        """One column as a float array; :class:`FitError` naming the columns if absent."""
        if name not in self.columns:
            raise FitError(f"{self.benchmark}/{self.part}.csv has no column {name!r} "
                           f"(columns: {', '.join(self.columns)})")
        j = self.columns.index(name)
        return np.array([r[j] for r in self.rows], dtype=float)


def public_parts(benchmark: str) -> tuple[str, ...]:
    """The measured parts stored for ``benchmark``, sorted."""
    folder = _benchmark_folder(benchmark)
    return tuple(sorted(f.name[:-4] for f in folder.iterdir() if f.name.endswith(".csv")))


def read_public_csv(benchmark: str, part: str) -> DataFile:
    """Parse ``<benchmark>/<part>.csv``; :class:`FitError` on a missing file or malformed line."""
    folder = _benchmark_folder(benchmark)
    path = folder / f"{part}.csv"
    if not path.is_file():
        raise FitError(f"no {benchmark} data for part {part!r}; stored parts: "
                       f"{', '.join(public_parts(benchmark))}")
    return parse_public_csv(path.read_text(), benchmark, part)


def parse_public_csv(text: str, benchmark: str, part: str) -> DataFile:
    """Parse the text of one stored CSV (comment header, one header row, numeric rows)."""
    meta: list[tuple[str, str]] = []
    columns: tuple[str, ...] = ()
    rows: list[tuple[float, ...]] = []
    where = f"{benchmark}/{part}.csv"
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if not sep:
                raise FitError(f"{where}:{number}: comment line is not '# key: value'")
            meta.append((key.strip(), value.strip()))
        elif not columns:
            columns = tuple(c.strip() for c in line.split(","))
        else:
            cells = line.split(",")
            if len(cells) != len(columns):
                raise FitError(f"{where}:{number}: {len(cells)} values, the header has {len(columns)}")
            try:
                rows.append(tuple(float(c) for c in cells))
            except ValueError:
                raise FitError(f"{where}:{number}: non-numeric value in {line!r}") from None
    keys = {k for k, _ in meta}
    missing = [k for k in _REQUIRED_KEYS if k not in keys]
    if missing:
        raise FitError(f"{where}: header lacks {', '.join(missing)} (every stored file names its "
                       "source, part and units)")
    if not rows:
        raise FitError(f"{where}: no data rows")
    return DataFile(benchmark, part, tuple(meta), columns, tuple(rows))


def _benchmark_folder(benchmark: str) -> Traversable:
    if benchmark not in BENCHMARKS:
        raise FitError(f"unknown benchmark {benchmark!r}; stored: {', '.join(BENCHMARKS)}")
    return public_data_root() / benchmark


# ---------------------------------------------------------------------------------------------
# typed views of the four benchmarks
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StreamSweep:
    """``gpu-stream``: bandwidth [GB/s] per kernel against resident threads on the device."""

    part: str
    source: str
    resident_threads: np.ndarray  # threads resident on the whole device, per row
    bandwidth_gb_s: dict[str, np.ndarray]  # kernel -> GB/s per row (known kernels only)

    def bytes_in_flight(self, kernel: str) -> np.ndarray:
        """Device-wide bytes one iteration of ``kernel`` moves: threads x bytes per thread [B]."""
        return self.resident_threads * STREAM_BYTES_PER_THREAD[kernel]


@dataclass(frozen=True)
class SizeSweep:
    """``gpu-l2-cache`` or ``gpu-cache``: bandwidth [GB/s] against the data set [B]."""

    part: str
    source: str
    data_set_bytes: np.ndarray
    bandwidth_gb_s: np.ndarray
    nominal_bytes: dict[str, float]  # "l1", "l2", "llc" -> vendor capacity [B] from the header


@dataclass(frozen=True)
class LatencySweep:
    """``gpu-latency``: load-to-use latency against the data set, in cycles and nanoseconds."""

    part: str
    source: str
    clock_ghz: float
    data_set_bytes: np.ndarray
    latency_cycles: np.ndarray
    nominal_bytes: dict[str, float]

    @property
    def latency_ns(self) -> np.ndarray:
        """Latency [ns] = cycles / clock [GHz]."""
        return self.latency_cycles / self.clock_ghz


def load_stream(part: str) -> StreamSweep:
    """The ``gpu-stream`` rows of ``part`` (kernels of unknown identity are left out)."""
    return stream_sweep(read_public_csv("gpu-stream", part))


def stream_sweep(f: DataFile) -> StreamSweep:
    """The typed view of a parsed ``gpu-stream`` table (stored or measured by ``warpspeed calibrate``)."""
    kernels = {k: f.column(k) for k in STREAM_BYTES_PER_THREAD if k in f.columns}
    return StreamSweep(f.part, f.source, f.column("resident_threads"), kernels)


def load_size_sweep(benchmark: str, part: str) -> SizeSweep:
    """The ``gpu-l2-cache`` or ``gpu-cache`` rows of ``part``, data sets in bytes."""
    if benchmark not in ("gpu-l2-cache", "gpu-cache"):
        raise FitError(f"{benchmark!r} is not a data-set sweep; use gpu-l2-cache or gpu-cache")
    return size_sweep(read_public_csv(benchmark, part))


def size_sweep(f: DataFile) -> SizeSweep:
    """The typed view of a parsed ``gpu-l2-cache`` or ``gpu-cache`` table, data sets in bytes."""
    return SizeSweep(f.part, f.source, f.column("data_set_kb") * KIB, f.column("bandwidth_gb_s"),
                     _nominal(f))


def load_latency(part: str) -> LatencySweep:
    """The ``gpu-latency`` rows of ``part``, data sets in bytes."""
    return latency_sweep(read_public_csv("gpu-latency", part))


def latency_sweep(f: DataFile) -> LatencySweep:
    """The typed view of a parsed ``gpu-latency`` table, data sets in bytes."""
    try:
        clock_ghz = float(f.value("clock_mhz")) / KILO
    except ValueError:
        raise FitError(f"{f.benchmark}/{f.part}.csv: clock_mhz is not a number") from None
    return LatencySweep(f.part, f.source, clock_ghz, f.column("data_set_kb") * KIB,
                        f.column("latency_cycles"), _nominal(f))


def _nominal(f: DataFile) -> dict[str, float]:
    prefix, suffix = "nominal_", "_kib"
    return {k[len(prefix):-len(suffix)]: float(v) * KIB
            for k, v in f.meta if k.startswith(prefix) and k.endswith(suffix)}
