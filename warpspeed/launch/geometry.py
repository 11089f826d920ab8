"""Launch geometry: grid, occupancy (blocks per SM) and the device-wide wave.

Occupancy follows the CUDA occupancy calculator's rules (``cudaOccupancy.h``): registers are
allocated per warp in units of ``register_alloc_unit`` and the register file is split across
``register_partitions`` SM sub-partitions, each holding whole warps; shared memory is allocated
in units of ``shared_alloc_unit_bytes``; the resident blocks per SM are the minimum of the
block, warp, thread, register and shared-memory limits.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from warpspeed.hardware.device import Device
from warpspeed.errors import LaunchError
from warpspeed.kernel.limits import check_fold

#: Most waves of a grid the model predicts: the wave stage lists up to one entry per full wave of
#: a period of the grid (:mod:`warpspeed.memory.wave.classes`), about 110 bytes each, so 2^22
#: waves take about 0.5 GB. Only blocks of a few threads on domains of billions of cells have
#: more (2^34 cells in blocks of one thread on the 22 compute units of an RX 5500 XT: 4.9 x 10^7
#: waves, 5.5 GB and 38 s measured on the 2-core reference machine).
MAX_WAVES = 2**22

if TYPE_CHECKING:
    from warpspeed.kernel.description import Kernel

#: Registers per thread assumed when the kernel does not say: the largest count that still
#: allows full thread occupancy on NVIDIA GPUs since Volta (65536 registers / 2048 threads).
#: Source: CUDA C++ Programming Guide, compute capability tables (7.x-9.0).
DEFAULT_REGISTERS_PER_THREAD = 32


def _triple(values: Sequence[int] | int, what: str) -> tuple[int, int, int]:
    """``values`` (an integer or 1 to 3 of them; numpy integers count) as three Python ints."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = (values,)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise LaunchError(f"{what} must be 1 to 3 integers (x[, y[, z]]), got {values!r}")
    vals = tuple(values)
    if not 1 <= len(vals) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 entries (x[, y[, z]]), got {vals!r}")
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in vals):
        raise LaunchError(f"{what} must be integers, got {vals!r}")
    vals = tuple(int(v) for v in vals) + (1,) * (3 - len(vals))
    if any(v <= 0 for v in vals):
        raise LaunchError(f"{what} entries must be positive, got {vals!r}")
    return vals  # type: ignore[return-value]


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM and which resource limits it (all counts per SM)."""

    blocks_per_sm: int
    limiter: str  # "blocks", "warps", "threads", "registers", "shared"
    limits: dict[str, int]  # blocks per SM each resource alone would allow
    registers_per_thread: int
    registers_estimated: bool  # True when DEFAULT_REGISTERS_PER_THREAD was used
    warps_per_block: int

    @property
    def warps_per_sm(self) -> int:
        return self.warps_per_block * self.blocks_per_sm


@dataclass(frozen=True)
class Launch:
    """A launch configuration: thread block, thread folding and the resulting grid.

    Attributes:
        block: threads per block (x, y, z).
        fold: cells per thread along (x, y, z) ("thread folding").
        domain: iteration space in cells (x, y, z).
        grid: blocks per dimension, ``ceil(domain / (block * fold))``.
    """

    block: tuple[int, int, int]
    fold: tuple[int, int, int]
    domain: tuple[int, int, int]
    grid: tuple[int, int, int]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def cells_per_thread(self) -> int:
        return self.fold[0] * self.fold[1] * self.fold[2]

    @property
    def cells_per_block(self) -> tuple[int, int, int]:
        """Extent of the cells one block covers, per dimension."""
        return tuple(b * f for b, f in zip(self.block, self.fold))  # type: ignore[return-value]

    @property
    def total_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def active_thread_share(self) -> float:
        """The share of the grid's threads that have a cell of the domain, ``prod_d ceil(domain_d /
        fold_d) / (grid_d block_d)``: the blocks at the domain's upper edges are partly idle where the
        domain is no multiple of the cells a block covers (640 cells in blocks of 512: 640 / 1024).
        An idle thread leaves at its bounds check and holds no memory access in flight."""
        share = 1.0
        for n, f, g, b in zip(self.domain, self.fold, self.grid, self.block):
            share *= -(-n // f) / (g * b)
        return share

    @property
    def cells(self) -> int:
        return self.domain[0] * self.domain[1] * self.domain[2]

    @property
    def mean_cells_per_block(self) -> float:
        """Lattice updates per block of the grid on average, ``cells / total_blocks``: fewer than
        ``threads_per_block x cells_per_thread`` where the blocks at the domain's edges are partly idle."""
        return self.cells / self.total_blocks


def make_launch(block: Sequence[int] | int, fold: Sequence[int] | int, domain: Sequence[int]) -> Launch:
    """Build a :class:`Launch`; raise LaunchError on non-positive or malformed entries, and on a
    folding beyond :data:`warpspeed.kernel.limits.MAX_CELLS_PER_THREAD` cells per thread."""
    b = _triple(block, "block")
    f = check_fold(_triple(fold, "fold"), "fold", LaunchError)
    d = _triple(tuple(domain), "domain")
    grid = tuple(math.ceil(n / (bb * ff)) for n, bb, ff in zip(d, b, f))
    return Launch(block=b, fold=f, domain=d, grid=grid)  # type: ignore[arg-type]


def occupancy(launch: Launch, device: Device, registers: int | None = None,
              shared_bytes_per_block: int = 0) -> Occupancy:
    """Resident blocks per SM of ``launch`` on ``device`` (CUDA occupancy-calculator rules).

    Raises LaunchError when no block fits: too many threads per block, a block extent beyond
    the device's per-dimension limit, too many registers per thread, registers or shared
    memory that fit no single block.
    """
    threads = launch.threads_per_block
    if threads > device.max_threads_per_block:
        raise LaunchError(
            f"block {launch.block} has {threads} threads; {device.name} allows at most "
            f"{device.max_threads_per_block} per block"
        )
    for axis, extent, limit in zip("xyz", launch.block, device.max_block_dims):
        if extent > limit:
            limits = ", ".join(f"{a} <= {m}" for a, m in zip("xyz", device.max_block_dims))
            raise LaunchError(
                f"block {launch.block}: {axis} extent {extent} exceeds the {device.name} limit ({limits})"
            )
    estimated = registers is None
    regs = DEFAULT_REGISTERS_PER_THREAD if registers is None else registers
    if regs <= 0 or regs > device.max_registers_per_thread:
        raise LaunchError(
            f"{regs} registers per thread: {device.name} allows 1 to {device.max_registers_per_thread}"
        )
    warps = math.ceil(threads / device.warp_size)
    regs_per_warp = math.ceil(regs * device.warp_size / device.register_alloc_unit) * device.register_alloc_unit
    regs_per_partition = device.registers_per_sm // device.register_partitions
    warps_by_regs = (regs_per_partition // regs_per_warp) * device.register_partitions
    limits = {
        "blocks": device.max_blocks_per_sm,
        "warps": device.max_warps_per_sm // warps,
        "threads": device.max_threads_per_sm // threads,
        "registers": warps_by_regs // warps,
    }
    if shared_bytes_per_block:
        if shared_bytes_per_block > device.shared_bytes_per_block:
            raise LaunchError(
                f"{shared_bytes_per_block} B shared memory per block; {device.name} allows at most "
                f"{device.shared_bytes_per_block} B"
            )
        unit = device.shared_alloc_unit_bytes
        shared = math.ceil(shared_bytes_per_block / unit) * unit
        limits["shared"] = device.shared_bytes_per_sm // shared
    if limits["registers"] == 0:
        raise LaunchError(
            f"{regs} registers x {threads} threads do not fit one block into the register file of "
            f"{device.name} ({device.registers_per_sm} registers per SM); use smaller blocks or fewer registers"
        )
    limiter = min(limits, key=lambda k: limits[k])
    blocks = limits[limiter]
    if blocks == 0:
        raise LaunchError(f"block {launch.block} cannot run on {device.name}: the {limiter} limit allows no block")
    return Occupancy(blocks_per_sm=blocks, limiter=limiter, limits=limits, registers_per_thread=regs,
                     registers_estimated=estimated, warps_per_block=warps)


@dataclass(frozen=True)
class Wave:
    """The blocks resident at once device-wide, launched in x-then-y-then-z block order.

    Attributes:
        blocks: blocks in one wave (blocks per SM x SMs, at most the whole grid).
        count: number of waves of the grid (``ceil(total blocks / blocks)``).
        first_block: linear index of the representative wave's first block (middle of the grid).
    """

    blocks: int
    count: int
    first_block: int


def wave(launch: Launch, blocks_per_sm: int, device: Device) -> Wave:
    """The representative wave in the middle of the grid."""
    per_wave = min(blocks_per_sm * device.sms, launch.total_blocks)
    count = math.ceil(launch.total_blocks / per_wave)
    middle = count // 2
    first = min(middle * per_wave, launch.total_blocks - per_wave)
    return Wave(blocks=per_wave, count=count, first_block=first)


@dataclass(frozen=True)
class LaunchInfo:
    """Launch geometry and occupancy together, as the predictors and reports use them."""

    launch: Launch
    occupancy: Occupancy
    wave: Wave


def analyze_launch(kernel: Kernel, device: Device, block: Sequence[int] | int,
                   fold: Sequence[int] | int = (1, 1, 1)) -> LaunchInfo:
    """Grid, occupancy and wave of ``kernel`` launched with ``block`` and ``fold`` on ``device``;
    LaunchError for a grid of more than :data:`MAX_WAVES` waves."""
    launch = make_launch(block, fold, kernel.domain)
    occ = occupancy(launch, device, kernel.registers, kernel.shared_bytes_per_block)
    w = wave(launch, occ.blocks_per_sm, device)
    if w.count > MAX_WAVES:
        raise LaunchError(f"block {launch.block} gives too many waves on {device.name} (got {w.count} waves of "
                          f"{w.blocks} blocks over the domain {launch.domain}); the model averages at most "
                          f"{MAX_WAVES} (2^22): use larger blocks or a smaller domain")
    return LaunchInfo(launch=launch, occupancy=occ, wave=w)
