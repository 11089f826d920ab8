"""Candidate launch configurations: block sizes and thread foldings.

The candidate space is the one of Ernst, Holzer, Hager, Knorr, Wellein: "Analytical
Performance Estimation during Code Generation on Modern GPUs", Journal of Parallel and
Distributed Computing, 2023, section 5.1: every power-of-two block with a fixed number of
threads, times a few thread foldings. :func:`configuration_space` restricts it to what a
kernel's domain can use: no block or folding along an axis of extent 1 (2-D kernels get 2-D
configurations), and no block extent of which more than half would lie outside the domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from warpspeed.errors import LaunchError
from warpspeed.files.records import csv_columns, recorded
from warpspeed.launch.geometry import make_launch, occupancy

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel

Triple = tuple[int, int, int]

#: Names of the three axes of blocks and foldings.
AXES = ("x", "y", "z")
#: Folding factors of the article's section 5.2 (module docstring): none, 2 in y, 2 in z.
PAPER_FOLDINGS: tuple[Triple, ...] = ((1, 1, 1), (1, 2, 1), (1, 1, 2))
#: Threads per block of the article's stencil space (5.1); kernels whose registers do not fit
#: 1024 threads get fewer (:func:`default_threads`).
PAPER_STENCIL_THREADS = 1024
#: Width (x, threads) of the default block of a single configuration (:func:`default_block`): one
#: warp of 32 threads along the contiguous axis, 128 B of floats or 256 B of doubles per warp load.
DEFAULT_BLOCK_X = 32
#: Height (y, threads) of the default block of a 3-D domain (:func:`default_block`): 32 x 8 x 4 is
#: the block the command line has always shown for 1024 threads.
DEFAULT_BLOCK_Y = 8
#: Largest z extent of a block in the candidate space: the NVIDIA limit (CUDA C++ Programming
#: Guide, "Compute Capabilities": maximum z-dimension of a block), also allowed on AMD GPUs.
MAX_BLOCK_Z = 64


@dataclass(frozen=True)
class Config:
    """One launch configuration: threads per block and cells per thread (x, y, z).

    Its record: JSON ``block`` and ``fold`` (lists), CSV :data:`CONFIG_COLUMNS`."""

    block: Triple = recorded(axes=AXES, identity=True, cell=int)
    fold: Triple = recorded(default=(1, 1, 1), axes=AXES, identity=True, cell=int)

    @property
    def label(self) -> str:
        b = "x".join(map(str, self.block))
        f = "" if self.fold == (1, 1, 1) else " fold " + "x".join(map(str, self.fold))
        return b + f


#: CSV columns of a launch configuration: threads per block and cells per thread (folding) along
#: x, y, z (``block_x`` ... ``fold_z``).
CONFIG_COLUMNS: tuple[str, ...] = csv_columns(Config)


def block_sizes(threads: int = PAPER_STENCIL_THREADS, max_z: int = MAX_BLOCK_Z) -> list[Triple]:
    """All power-of-two blocks (x, y, z) with x*y*z == threads and z <= max_z (section 5.1 of
    the article cited in the module docstring)."""
    if threads <= 0 or threads & (threads - 1):
        raise LaunchError(f"threads per block must be a positive power of two, got {threads}")
    n = int(math.log2(threads))
    out = []
    for ez in range(n + 1):
        for ey in range(n + 1 - ez):
            ex = n - ey - ez
            if 2**ez <= max_z:
                out.append((2**ex, 2**ey, 2**ez))
    return sorted(out)


def _useful_extent(extent: int) -> int:
    """Largest block extent along an axis of ``extent`` cells: ``2 * extent`` keeps at least
    half of the block's threads along the axis on a cell (for a power-of-two ``extent`` the
    block twice as wide is kept, so the article's 640 x 512 x 512 space stays complete); an
    axis of extent 1 allows only 1."""
    return 1 if extent == 1 else 2 * extent


def _domain_triple(domain: Sequence[int]) -> Triple:
    dom = tuple(domain) + (1,) * (3 - len(tuple(domain)))
    if len(dom) != 3 or any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in dom):
        raise LaunchError(f"domain must be 1 to 3 positive integers (cells), got {tuple(domain)!r}")
    return dom  # type: ignore[return-value]


def _block_fits(block: Sequence[int], domain: Triple) -> bool:
    return all(b <= _useful_extent(n) for b, n in zip(block, domain))


def useful_foldings(foldings: Sequence[Triple], domain: Sequence[int]) -> list[Triple]:
    """The foldings of ``foldings`` that ``domain`` (cells) can use: none above 1 along an axis of
    extent 1 (a 2-D domain gets no z folding)."""
    dom = _domain_triple(domain)
    return [tuple(f) for f in foldings if _fold_fits(f, dom)]  # type: ignore[misc]


def _fold_fits(fold: Sequence[int], domain: Triple) -> bool:
    return all(f == 1 or n > 1 for f, n in zip(fold, domain))


def fits_domain(config: Config, domain: Sequence[int]) -> bool:
    """Whether ``config`` is useful on ``domain`` (cells): no block extent or folding above 1
    along an axis of extent 1, and no block extent above twice the domain extent (more than
    half of such a block's threads along that axis would have no cell)."""
    dom = _domain_triple(domain)
    return _block_fits(config.block, dom) and _fold_fits(config.fold, dom)


def domain_space(domain: Sequence[int], threads: int = PAPER_STENCIL_THREADS,
                 foldings: Sequence[Triple] = PAPER_FOLDINGS, max_z: int = MAX_BLOCK_Z) -> list[Config]:
    """The candidate space for an iteration ``domain`` (cells, x, y[, z]): every power-of-two
    block of ``threads`` threads (z <= ``max_z``) x every folding that :func:`fits_domain`
    (a 2-D domain gets only z = 1 blocks and foldings). Order as in :func:`paper_space`.

    Raises LaunchError when no block fits the domain; foldings the domain cannot use are left
    out (the result is empty when none is left).
    """
    dom = _domain_triple(domain)
    blocks = [b for b in block_sizes(threads, max_z) if _block_fits(b, dom)]
    if not blocks:
        limits = "x".join(str(_useful_extent(n)) for n in dom)
        raise LaunchError(
            f"no block of {threads} threads fits the domain {dom}: block extents may be at most {limits} "
            "(twice the domain; 1 along an axis of extent 1); use fewer threads per block"
        )
    return [Config(b, tuple(f)) for b in blocks for f in foldings if _fold_fits(f, dom)]  # type: ignore[arg-type]


def configuration_space(kernel: Kernel, threads: int = PAPER_STENCIL_THREADS,
                        foldings: Sequence[Triple] = PAPER_FOLDINGS, max_z: int = MAX_BLOCK_Z) -> list[Config]:
    """The candidate space for ``kernel``: :func:`domain_space` of its domain. 2-D kernels
    (domain z extent 1) get z = 1 blocks and foldings only. Every command ranks this space
    unless the user names the blocks explicitly."""
    return domain_space(kernel.domain, threads, foldings, max_z)


def paper_space(threads: int = PAPER_STENCIL_THREADS, foldings: Sequence[Triple] = PAPER_FOLDINGS,
                max_z: int = MAX_BLOCK_Z) -> list[Config]:
    """The paper's candidate space: every power-of-two block of ``threads`` x every folding,
    whatever the kernel (see :func:`configuration_space` for the space a kernel can use)."""
    return [Config(b, f) for b in block_sizes(threads, max_z) for f in foldings]


def default_threads(kernel: "Kernel", device: "Device") -> int:
    """Threads per block of the paper's space for ``kernel`` on ``device``.

    1024 threads (Ernst et al. 2023, section 5.1) when a block of 1024 fits the register file with the
    kernel's registers per thread (warpspeed's 32-register assumption when the kernel has no
    count), else the largest power of two that fits: the paper uses 512 for its LBM kernel
    because its registers would not fit 1024 threads. Example: 80 registers on an A100 take
    80 x 1024 = 81920 > 65536 registers for 1024 threads, so 512.

    Raises:
        LaunchError: not even one warp fits.
    """
    threads = min(PAPER_STENCIL_THREADS, device.max_threads_per_block)
    while threads >= device.warp_size:
        try:
            occupancy(make_launch((threads, 1, 1), 1, kernel.domain), device, kernel.registers)
            return threads
        except LaunchError:
            threads //= 2
    raise LaunchError(f"kernel {kernel.name!r} with {kernel.registers} registers per thread fits no block "
                      f"of at least one warp ({device.warp_size} threads) on {device.name}")


def default_block(kernel: "Kernel", device: "Device") -> Triple:
    """The block of a single configuration when none is given (``warpspeed predict``, ``trace``, ``dvfs``).

    :func:`default_threads` threads (1024, or the most whose registers fit the register file),
    :data:`DEFAULT_BLOCK_X` wide; on a 3-D domain :data:`DEFAULT_BLOCK_Y` high and the rest in z, on a
    2-D domain the rest in y, on a 1-D domain all in x. Examples: a 3-D stencil with 32 registers
    32 x 8 x 4; with 68 registers on an A100 (512 threads) 32 x 8 x 2; a 2-D stencil 32 x 32 x 1.
    Extents beyond the domain are kept (the domain check of the launch reports them)."""
    threads = default_threads(kernel, device)
    domain = _domain_triple(kernel.domain)
    if domain[1] == 1 and domain[2] == 1:
        return (threads, 1, 1)
    x = min(DEFAULT_BLOCK_X, threads)
    rest = threads // x
    if domain[2] == 1:
        return (x, rest, 1)
    y = min(DEFAULT_BLOCK_Y, rest)
    return (x, y, rest // y)
