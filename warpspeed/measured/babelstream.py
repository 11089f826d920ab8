"""Reader for the BabelStream runs stored under ``fits/data/public/babelstream/``.

BabelStream (T. Deakin, J. Price, M. Martineau, S. McIntosh-Smith, "GPU-STREAM v2.0: Benchmarking the
Achievable Memory Bandwidth of Many-Core Processors Across Diverse Parallel Programming Models", ISC
High Performance 2016 Workshops, LNCS 9945; https://github.com/UoB-HPC/BabelStream) times five kernels
over three large arrays and prints the best bandwidth of each. One stored file holds one run of one
part: a ``# key: value`` header (``source``, ``part``, ``peak_gb_s``, ``units``: MB/s) and one row with
a column per kernel, as printed. The kernels' concurrent DRAM streams are :data:`KERNEL_STREAMS`.

The files complement gpu-benches' ``gpu-stream`` (:mod:`warpspeed.measured.public_data`) for parts it
has not measured; ``mul`` is gpu-stream's ``scale`` and ``triad`` its ``triad``.
"""

from __future__ import annotations

from dataclasses import dataclass

from warpspeed.errors import FitError
from warpspeed.files.stored import stored_file
from warpspeed.measured.public_data import parse_public_csv

#: The folder of the stored runs under ``fits/data/public/``.
BABELSTREAM_FOLDER = "babelstream"

#: Concurrent DRAM streams of each BabelStream kernel: copy c = a and mul b = s c read one array and
#: write one; add c = a + b and triad a = b + s c read two and write one; dot reads two.
KERNEL_STREAMS = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}

#: BabelStream prints MBytes/sec (1e6 B/s); the models use GB/s (1e9 B/s).
MB_PER_GB = 1000.0


@dataclass(frozen=True)
class BabelStreamRun:
    """One stored run: the best bandwidth of each kernel [GB/s], the part's vendor peak [GB/s], the source."""

    part: str
    bandwidth_gb_s: dict[str, float]
    peak_gb_s: float
    source: str


def load_babelstream(part: str) -> BabelStreamRun:
    """The stored run ``babelstream/<part>.csv``; :class:`FitError` if it is missing or malformed."""
    path = stored_file("public", BABELSTREAM_FOLDER, f"{part}.csv")
    if not path.is_file():
        raise FitError(f"no BabelStream run stored for part {part!r} (fits/data/public/{BABELSTREAM_FOLDER}/)")
    f = parse_public_csv(path.read_text(), BABELSTREAM_FOLDER, part)
    unknown = [c for c in f.columns if c not in KERNEL_STREAMS]
    if unknown or len(f.rows) != 1:
        raise FitError(f"{BABELSTREAM_FOLDER}/{part}.csv: expected one row of the kernels "
                       f"{', '.join(KERNEL_STREAMS)}; got columns {', '.join(f.columns)} and {len(f.rows)} rows")
    try:
        peak = float(f.value("peak_gb_s").split()[0])
    except ValueError:
        raise FitError(f"{BABELSTREAM_FOLDER}/{part}.csv: '# peak_gb_s:' does not start with a number") from None
    bandwidth = {c: float(f.column(c)[0]) / MB_PER_GB for c in f.columns}
    return BabelStreamRun(part, bandwidth, peak, f.source)
