"""L1 load bandwidth per SM (CU) and cycle: the first-level model against gpu-cache's L1 plateau.

``gpu-cache`` (gpu-benches) runs one block of 256 threads per SM; every thread sums, element by
element, a buffer that all threads of the block re-read, so each warp-level load reads 32
consecutive elements. While the buffer fits the L1, the L1 sets the bandwidth. The measured L1
bytes per cycle and SM are the level bandwidth of the sweep (median over data sets of 1/8 to 1/2
of the nominal L1, :func:`warpspeed.measured.sustained.cache_step`) divided by SMs x clock of the
device measured as that part. The element size of each file is stated in its header
(``element_bytes``, from the benchmark source at the file's commit).

The model: element bytes / L1 cycles per lup (:func:`warpspeed.memory.l1.l1_cycles`) of one
contiguous load per thread in blocks of 256 threads. It tests the data pipe's width and the
load/store units' threads per cycle of each NVIDIA first-level family: 4-byte loads at 64 B per
cycle on GA102 and AD102 (16 threads per cycle), 8-byte loads at 128 B on GV100 (half a warp of
8 B per data wavefront). The 16 threads per cycle are documented (4 LD/ST units per SM partition
in the GA102 and Ada whitepapers); these measurements were the evidence for applying them, so the
comparison is a consistency check, not an independent prediction.

On AMD GPUs the benchmark loads ``float4`` (16 B per thread, ``element_bytes: 16`` in the MI100
and MI210 files). For CDNA the model's vector L1 (the banked rule,
:class:`~warpspeed.memory.l1_stages.BankedVectorL1`, or the documented-rates stages,
:class:`~warpspeed.memory.l1_stages.VectorL1Stages`) has no constant taken from these files: a
contiguous load is a coalesced run at the documented 64 B per clock (module
:mod:`warpspeed.memory.l1`), so :func:`cdna_l1_bandwidth_datasets` is an out-of-sample check of
that rate.
"""

from __future__ import annotations

from collections.abc import Callable

from warpspeed.errors import FitError
from warpspeed.hardware.device import Device, load_device
from warpspeed.kernel.description import Field, Kernel, load_linear
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_cells, compile_kernel
from warpspeed.memory.first_level import CdnaBankedL1, CdnaVectorL1, first_level
from warpspeed.memory.l1 import l1_cycles
from warpspeed.measured.public_data import load_size_sweep, public_parts, read_public_csv
from warpspeed.measured.sustained import cache_step
from warpspeed.validation.datasets import DatasetAccuracy, PointError, dataset as _dataset, device_of_part, source_of

#: Threads per block of gpu-cache (one block per SM).
CACHE_BLOCK_THREADS = 256
#: Header key of a gpu-cache file that gives the bytes each thread loads per element.
ELEMENT_BYTES_KEY = "element_bytes"
#: Stated bounds [%]: the model's 64 and 128 B per cycle against plateaus of 64.0 (A40, L40) and
#: 125-126 (V100, A100 80 GB, H100 PCIe) B per cycle; a family whose threads per cycle or data width
#: were wrong would be off by a factor of two.
L1_BANDWIDTH_MAPE_BOUND = 3.0
L1_BANDWIDTH_WORST_BOUND = 5.0
#: Stated bounds [%] for CDNA: the documented 64 B per clock and CU against plateaus of 59.8 (MI210)
#: and 50.4 (MI100) B per cycle; both GPUs stay below the documented peak, the MI100 by a fifth
#: (its plateau divided by the 1502 MHz peak clock; a lower sustained clock would explain part).
CDNA_L1_BANDWIDTH_MAPE_BOUND = 20.0
CDNA_L1_BANDWIDTH_WORST_BOUND = 30.0


def model_bytes_per_cycle(device_name: str, element_bytes: int) -> float:
    """L1 bytes per cycle and SM the model gives a contiguous load of ``element_bytes`` per thread."""
    elements = CACHE_BLOCK_THREADS
    kernel = Kernel("contiguous load", (Field("A", element_bytes, (elements,)),), (load_linear("A", "x"),),
                    (elements, 1, 1), dtype="float64" if element_bytes == 8 else "float32")
    launch = make_launch((CACHE_BLOCK_THREADS, 1, 1), (1, 1, 1), kernel.domain)
    result = l1_cycles(compile_kernel(kernel), block_cells(launch), load_device(device_name))
    return element_bytes / result.cycles_per_lup


def _plateau_point(part: str) -> tuple[PointError, str]:
    """Model and measured L1 bytes per cycle and SM (CU) of one gpu-cache file, and its source."""
    name = device_of_part(part)
    device = load_device(name)
    data = read_public_csv("gpu-cache", part)
    try:
        element_bytes = int(data.value(ELEMENT_BYTES_KEY))
    except ValueError:
        raise FitError(f"gpu-cache/{part}.csv: '# {ELEMENT_BYTES_KEY}:' must be an integer") from None
    step = cache_step(load_size_sweep("gpu-cache", part), "l1")
    measured = step.level_gb_s / (device.sms * device.clock_ghz)  # GB/s / (SMs x GHz) = B per cycle and SM
    point = PointError(f"{name}, {element_bytes} B loads", model_bytes_per_cycle(name, element_bytes), measured)
    return point, source_of(step.source)


def _plateau_points(select: Callable[[Device], bool]) -> tuple[list[PointError], list[tuple[str, str]]]:
    """The plateau point and source of every gpu-cache part whose device ``select`` accepts."""
    points, sources = [], []
    for part in public_parts("gpu-cache"):
        if not select(load_device(device_of_part(part))):
            continue
        point, source = _plateau_point(part)
        points.append(point)
        sources.append(source)
    return points, sources


def l1_bandwidth_datasets() -> tuple[DatasetAccuracy, ...]:
    """Bytes per cycle and SM of each NVIDIA part's gpu-cache L1 plateau against the model."""
    points, sources = _plateau_points(lambda device: device.vendor == "nvidia")
    return (_dataset("L1 bandwidth", "NVIDIA L1 load bandwidth per SM and cycle", "B/cycle", points, sources,
                     "L1 plateau = median bandwidth over data sets of 1/8 to 1/2 of the nominal L1, divided by "
                     "SMs x clock of the device file; model: one contiguous load per thread",
                     (L1_BANDWIDTH_MAPE_BOUND, L1_BANDWIDTH_WORST_BOUND)),)


def cdna_l1_bandwidth_datasets() -> tuple[DatasetAccuracy, ...]:
    """Bytes per cycle and CU of each CDNA part's gpu-cache vector L1 plateau (16 B loads)
    against the device's vector L1 (:mod:`warpspeed.memory.first_level`)."""
    points, sources = _plateau_points(lambda device: isinstance(first_level(device), (CdnaVectorL1, CdnaBankedL1)))
    return (_dataset("L1 bandwidth", "CDNA vector L1 load bandwidth per CU and cycle", "B/cycle", points, sources,
                     "vL1D plateau = median bandwidth over data sets of 1/8 to 1/2 of the nominal 16 KiB, divided "
                     "by CUs x peak clock of the device file; model: one contiguous 16 B load per thread, a coalesced "
                     "run at 64 B per clock (documented rate, no fitted constant)",
                     (CDNA_L1_BANDWIDTH_MAPE_BOUND, CDNA_L1_BANDWIDTH_WORST_BOUND)),)
