"""Candidate launch configurations: block sizes and thread foldings (paper 001, 5.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from warpspeed.errors import LaunchError
from warpspeed.launch.geometry import make_launch, occupancy

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel

Triple = tuple[int, int, int]

#: Folding factors of paper 001, 5.2: none, 2 in y, 2 in z.
PAPER_FOLDINGS: tuple[Triple, ...] = ((1, 1, 1), (1, 2, 1), (1, 1, 2))
#: Threads per block of the paper's stencil space (5.1) and of its LBM space (5.1: fewer
#: threads because the LBM kernel's registers do not fit 1024 threads).
PAPER_STENCIL_THREADS = 1024
PAPER_LBM_THREADS = 512
#: Largest z extent of a block on NVIDIA GPUs (CUDA C++ Programming Guide, max block dim z).
MAX_BLOCK_Z = 64


@dataclass(frozen=True)
class Config:
    """One launch configuration: threads per block and cells per thread (x, y, z)."""

    block: Triple
    fold: Triple = (1, 1, 1)

    @property
    def label(self) -> str:
        b = "x".join(map(str, self.block))
        f = "" if self.fold == (1, 1, 1) else " fold " + "x".join(map(str, self.fold))
        return b + f


def block_sizes(threads: int = PAPER_STENCIL_THREADS, max_z: int = MAX_BLOCK_Z) -> list[Triple]:
    """All power-of-two blocks (x, y, z) with x*y*z == threads and z <= max_z (paper 001, 5.1)."""
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


def paper_space(threads: int = PAPER_STENCIL_THREADS, foldings: Sequence[Triple] = PAPER_FOLDINGS,
                max_z: int = MAX_BLOCK_Z) -> list[Config]:
    """The paper's candidate space: every power-of-two block of ``threads`` x every folding."""
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
