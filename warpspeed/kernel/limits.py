"""The largest problem the model handles: cells of a domain, cells per thread, bytes of a field.

Every entry point checks these before any work (the command line when it parses its options,
study files when they are read, :class:`~warpspeed.kernel.description.Kernel` and
:class:`~warpspeed.kernel.description.Field` when they are built, the launch when a folding is
given), so a domain such as 10^9 x 10^9 x 10^9 is a one-line error instead of an overflow in
the address code or an allocation of petabytes.

The bounds:

* **Cells per axis**: at most :data:`MAX_AXIS_CELLS` = 2^31 - 1, the largest grid extent of a CUDA
  launch in x (CUDA C++ Programming Guide, "Compute Capabilities", table "Technical
  Specifications per Compute Capability": maximum x-dimension of a grid of thread blocks) and the
  largest signed 32-bit integer, the type generated GPU code commonly indexes cells with.
* **Cells of a domain**: at most :data:`MAX_DOMAIN_CELLS` = 2^34 (about 1.7 x 10^10). A
  double-precision kernel with one source and one destination field of that many cells needs
  256 GiB, more than the memory of every GPU in the device database (the largest, the MI300X,
  has 192 GB), so no kernel of one GPU updates more cells; the README's speed table predicts up
  to 2048^3 = 2^33 cells. A launch that still has more full waves than the wave stage lists
  (blocks of a few threads on a large domain) is refused per configuration
  (:data:`warpspeed.launch.geometry.MAX_WAVES`).
* **Cells per thread** (thread folding): at most :data:`MAX_CELLS_PER_THREAD` = 64 in all and per
  axis. The block stage enumerates every cell of a block for every access (threads x cells per
  thread), so memory grows with the folding: with 1024 threads and 64 cells per thread the
  D3Q15 kernel's block stage takes about 0.3 GB, with 1024 cells per thread 3.3 GB (measured with
  ``warpspeed predict --kernel d3q15-pull --fold 1,16,64``: 19 s, 3.3 GB on the 2-core reference
  machine). The configurations of Ernst et al. (JPDC 2023) fold by at most 2.
* **Bytes of a field**: at most :data:`MAX_FIELD_BYTES` = 2^48 (256 TiB, three orders of magnitude
  beyond the memory of any GPU). Byte addresses are computed in 64-bit integers; below 2^48 every
  address, and every product of an address with a count of blocks or waves, stays below 2^63.
"""

from __future__ import annotations

import math
import numbers
from typing import Sequence

from warpspeed.errors import KernelError, WarpspeedError

#: Largest extent of a domain along one axis, in cells (module docstring).
MAX_AXIS_CELLS = 2**31 - 1
#: Largest number of cells of a domain (module docstring).
MAX_DOMAIN_CELLS = 2**34
#: Largest number of cells one thread updates, in all and along one axis (module docstring).
MAX_CELLS_PER_THREAD = 64
#: Largest size of one field in bytes (module docstring).
MAX_FIELD_BYTES = 2**48


def _is_int(value: object) -> bool:
    """An integer (numpy integers count), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _ints(values: tuple) -> tuple:
    """Integers as Python ints (numpy's wrap around in products; Python's do not)."""
    return tuple(int(v) if _is_int(v) else v for v in values)


def check_domain(domain: Sequence[object], what: str = "domain",
                 error: type[WarpspeedError] = KernelError) -> tuple[int, ...]:
    """``domain`` (1 to 3 cell counts) as a tuple of ints, or ``error`` naming ``what``: every
    entry a positive integer of at most :data:`MAX_AXIS_CELLS`, their product at most
    :data:`MAX_DOMAIN_CELLS`."""
    values = _ints(tuple(domain))
    if not 1 <= len(values) <= 3 or not all(_is_int(v) and v > 0 for v in values):
        raise error(f"{what} is not 1 to 3 positive integers (got {values!r}); give the cells along x, y, z")
    if max(values) > MAX_AXIS_CELLS:  # type: ignore[type-var]
        raise error(f"{what} is too long along an axis (got {_shown(values)}); at most {MAX_AXIS_CELLS} "
                    "(2^31 - 1) cells per axis are allowed")
    cells = math.prod(values)  # type: ignore[arg-type]
    if cells > MAX_DOMAIN_CELLS:
        raise error(f"{what} has too many cells (got {_shown(values)} = {cells} cells); the model handles at most "
                    f"{MAX_DOMAIN_CELLS} (2^34) cells")
    return values  # type: ignore[return-value]


def check_fold(fold: Sequence[object], what: str = "fold", error: type[WarpspeedError] = KernelError) -> tuple[int, ...]:
    """``fold`` (1 to 3 cells per thread) as a tuple of ints, or ``error``: positive integers
    whose product is at most :data:`MAX_CELLS_PER_THREAD`."""
    values = _ints(tuple(fold))
    if not 1 <= len(values) <= 3 or not all(_is_int(v) and v > 0 for v in values):
        raise error(f"{what} is not 1 to 3 positive integers (got {values!r}); give the cells per thread "
                    "along x, y, z")
    cells = math.prod(values)  # type: ignore[arg-type]
    if cells > MAX_CELLS_PER_THREAD:
        raise error(f"{what} folds too many cells into one thread (got {_shown(values)} = {cells} cells per "
                    f"thread); at most {MAX_CELLS_PER_THREAD} are allowed")
    return values  # type: ignore[return-value]


def _shown(values: Sequence[object]) -> str:
    return "x".join(str(v) for v in values)
