"""Candidate launch configurations: block sizes and thread foldings (Ernst et al., JPDC 2023, 5.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from warpspeed.errors import LaunchError

Triple = tuple[int, int, int]

#: Folding factors of Ernst et al., JPDC 2023, 5.2: none, 2 in y, 2 in z.
PAPER_FOLDINGS: tuple[Triple, ...] = ((1, 1, 1), (1, 2, 1), (1, 1, 2))
#: Threads per block of the paper's stencil space (5.1) and the LBM space (5.1, registers).
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
    """All power-of-two blocks (x, y, z) with x*y*z == threads and z <= max_z (Ernst et al., JPDC 2023, 5.1)."""
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


#: Substrings of kernel names that mark LBM kernels, whose paper space uses 512 threads.
LBM_NAME_TAGS = ("lbm", "d3q", "allen")


def default_threads(kernel_name: str) -> int:
    """Threads per block of the paper's space for a kernel name: 512 for LBM kernels (their
    registers would spill at 1024, Ernst et al., JPDC 2023, 5.1), else 1024."""
    lbm = any(tag in kernel_name.lower() for tag in LBM_NAME_TAGS)
    return PAPER_LBM_THREADS if lbm else PAPER_STENCIL_THREADS
