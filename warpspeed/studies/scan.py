"""The layer-condition scan of Ernst et al., JPDC 2023, 5.7: constant cell count, square xy plane swept.

For each plane edge ``n`` the domain is ``n x n x nz`` with ``nz = round(cells / n^2)``; the
DRAM volume per lup is predicted for blocks of increasing depth. Small planes satisfy the
layer condition: the volume approaches the kernel's minimum (:func:`minimum_bytes_per_lup`,
16 B/lup for a double-precision stencil reading one field and writing another); large planes
rise to a plateau that depends on the block (wave) depth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from warpspeed.hardware.device import Device
from warpspeed.errors import WarpspeedError
from warpspeed.kernel.description import COORDINATES, Kernel
from warpspeed.predict import Predictor

Triple = tuple[int, int, int]

#: Blocks of 1024 threads with 1, 2, 4, 8, 16 and 32 layers of depth (Ernst et al., JPDC 2023, 5.7 uses
#: wave shapes 1/2/4/8/16/32 layers deep).
SCAN_BLOCKS: tuple[Triple, ...] = ((256, 4, 1), (128, 4, 2), (64, 4, 4), (32, 4, 8), (32, 2, 16), (16, 2, 32))
#: Cells of the paper's stencil grid (640 x 512 x 512), kept constant over the scan.
SCAN_CELLS = 640 * 512 * 512


@dataclass(frozen=True)
class ScanPoint:
    """DRAM volumes (bytes per lup) for one plane edge and one block."""

    plane: int
    domain: Triple
    block: Triple
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    dram_compulsory_bytes_per_lup: float
    z_oversubscription: float
    dram_minimum_bytes_per_lup: float = math.nan  # minimum_bytes_per_lup of the kernel

    @property
    def dram_bytes_per_lup(self) -> float:
        return self.dram_load_bytes_per_lup + self.dram_store_bytes_per_lup


def minimum_bytes_per_lup(kernel: Kernel) -> float:
    """The least DRAM traffic per lattice update, bytes: every loaded field element read once and
    every stored one written once, i.e. the element bytes summed over the loaded and the stored
    components of each field.

    A component is what an N-D access selects besides the cell: the index entries that do not
    depend on the cell coordinates (the distribution index of a lattice-Boltzmann field); a
    field accessed only at neighbouring cells has one. A linear access counts as one component.
    """
    cell = set(COORDINATES)
    total = 0
    for kind in ("load", "store"):
        components: dict[str, set[tuple]] = {}
        for access in kernel.accesses:
            if access.kind != kind:
                continue
            fixed = () if access.linear else tuple(e for e in access.index if not e.free_symbols & cell)
            components.setdefault(access.field, set()).add(fixed)
        total += sum(kernel.field(name).element_bytes * len(parts) for name, parts in components.items())
    return float(total)


def scan_domain(make_kernel: Callable[[Triple], Kernel], device: Device, planes: Sequence[int],
                blocks: Sequence[Triple] = SCAN_BLOCKS, cells: int = SCAN_CELLS,
                progress: Callable[[int], None] | None = None) -> list[ScanPoint]:
    """Predict DRAM volumes over square planes ``planes`` at constant ``cells``.

    ``make_kernel(domain)`` builds the kernel for a domain (fields sized to it); ``progress(done)``
    is called with the number of (plane, block) points predicted so far.
    """
    points = []
    for n in planes:
        if n <= 0:
            raise WarpspeedError(f"plane edge must be positive, got {n}")
        nz = max(1, round(cells / (n * n)))
        domain = (n, n, nz)
        kernel = make_kernel(domain)
        predictor = Predictor(kernel, device)
        minimum = minimum_bytes_per_lup(kernel)
        for block in blocks:
            p = predictor.predict(block)
            points.append(ScanPoint(
                plane=n, domain=domain, block=tuple(block),  # type: ignore[arg-type]
                dram_load_bytes_per_lup=p.dram.load_bytes_per_lup,
                dram_store_bytes_per_lup=p.dram.store_bytes_per_lup,
                dram_compulsory_bytes_per_lup=p.wave.compulsory_load_bytes_per_lup + p.wave.compulsory_store_bytes_per_lup,
                z_oversubscription=p.wave.oversubscription.z,
                dram_minimum_bytes_per_lup=minimum,
            ))
            if progress is not None:
                progress(len(points))
    return points
