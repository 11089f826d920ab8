"""Built-in kernels: the stencils of Ernst et al. (JPDC 2023) and streaming patterns, as :class:`Kernel` objects.

These describe the memory accesses pystencils generates for the same update rules (fields
allocated with ghost layers, x contiguous, base pointer at the first ghost cell), so they can
be used without pystencils installed. With the pystencils plugin installed, the kernel catalog
(:mod:`warpspeed.kernel.catalog`) resolves the ``star*`` names to the code pystencils
generates instead, with its own register count.

Reference: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code Generation on
Modern GPUs", Journal of Parallel and Distributed Computing, 2023.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from warpspeed.errors import KernelError

if TYPE_CHECKING:  # the builders import the description (and sympy) when they build a kernel
    from warpspeed.kernel.description import Kernel

#: Ernst et al. (JPDC 2023), section 5.2: the 3D 25-point range-4 star stencil on a 640 x 512 x 512 grid.
PAPER_STENCIL_DOMAIN = (640, 512, 512)
PAPER_STENCIL_RADIUS = 4

#: Lattice velocities of D3Q15 (rest, 6 face neighbours, 8 corners).
D3Q15_VELOCITIES: tuple[tuple[int, int, int], ...] = (
    (0, 0, 0),
    (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
    (1, 1, 1), (-1, 1, 1), (1, -1, 1), (-1, -1, 1), (1, 1, -1), (-1, 1, -1), (1, -1, -1), (-1, -1, -1),
)


def _domain(domain: Sequence[int], dims: int) -> tuple[int, int, int]:
    d = tuple(domain)
    if len(d) == 2 and dims == 2:
        d = (d[0], d[1], 1)
    if len(d) != 3 or any((not isinstance(n, int)) or n <= 0 for n in d):
        raise KernelError(f"domain must be {dims} positive integers, got {tuple(domain)!r}")
    if dims == 2 and d[2] != 1:
        raise KernelError(f"a 2-D kernel needs nz = 1, got domain {d}")
    return d  # type: ignore[return-value]


def star_stencil(dims: int = 3, radius: int = PAPER_STENCIL_RADIUS,
                 domain: Sequence[int] = PAPER_STENCIL_DOMAIN, element_bytes: int = 8,
                 registers: int | None = None) -> Kernel:
    """A ``dims``-D star stencil of range ``radius``: dst[c] = sum_k w_k src[c + k].

    ``2 * dims * radius + 1`` loads of ``src`` and one store to ``dst``; both fields have
    ``radius`` ghost layers on every side. Flops: one multiply and one FMA per further point.
    """
    if dims not in (2, 3):
        raise KernelError(f"star stencil dims must be 2 or 3, got {dims}")
    if not isinstance(radius, int) or radius < 1:
        raise KernelError(f"stencil radius must be a positive integer, got {radius!r}")
    from warpspeed.kernel.description import X, Y, Z, Field, FlopCounts, Kernel, load, store

    d = _domain(domain, dims)
    g = radius
    shape = tuple(n + 2 * g for n in d[:dims])
    src = Field("src", element_bytes, shape)
    dst = Field("dst", element_bytes, shape)
    coords = (X + g, Y + g, Z + g)[:dims]
    loads = [load("src", *coords)]
    for axis in range(dims):
        for offset in [o for r in range(1, radius + 1) for o in (-r, r)]:
            idx = list(coords)
            idx[axis] = idx[axis] + offset
            loads.append(load("src", *idx))
    points = len(loads)
    dtype = {8: "float64", 4: "float32", 2: "float16"}.get(element_bytes)
    if dtype is None:
        raise KernelError(f"element_bytes must be 2, 4 or 8, got {element_bytes}")
    return Kernel(
        name=f"star{dims}d_r{radius}_{points}pt",
        fields=(src, dst),
        accesses=tuple(loads) + (store("dst", *coords),),
        domain=d,
        flops=FlopCounts(muls=1, fmas=points - 1),
        dtype=dtype,
        registers=registers,
    )


def copy_kernel(domain: Sequence[int] = (256, 256, 256), element_bytes: int = 8) -> Kernel:
    """Streaming copy dst[c] = src[c] (no ghost layers): the minimum-traffic kernel."""
    from warpspeed.kernel.description import X, Y, Z, Field, Kernel, load, store

    d = _domain(domain, 3)
    src = Field("src", element_bytes, d)
    dst = Field("dst", element_bytes, d)
    return Kernel(name="copy", fields=(src, dst),
                  accesses=(load("src", X, Y, Z), store("dst", X, Y, Z)), domain=d,
                  dtype={8: "float64", 4: "float32"}.get(element_bytes, "float64"))


def lbm_pull(velocities: Sequence[tuple[int, int, int]] = D3Q15_VELOCITIES,
             domain: Sequence[int] = (256, 256, 256), element_bytes: int = 8,
             name: str = "d3q15_pull") -> Kernel:
    """The memory pattern of a pull-scheme LBM stream step: dst[c, q] = src[c - e_q, q].

    Fields have one ghost layer and layout ``fzyx`` (component slowest), as pystencils and
    lbmpy generate for GPUs. Flops are left at zero: this is the access pattern only.
    """
    from warpspeed.kernel.description import X, Y, Z, Field, FlopCounts, Kernel, load, store

    d = _domain(domain, 3)
    q = len(velocities)
    shape = (d[0] + 2, d[1] + 2, d[2] + 2, q)
    src = Field("src", element_bytes, shape, layout="fzyx")
    dst = Field("dst", element_bytes, shape, layout="fzyx")
    loads = tuple(load("src", X + 1 - ex, Y + 1 - ey, Z + 1 - ez, i)
                  for i, (ex, ey, ez) in enumerate(velocities))
    stores = tuple(store("dst", X + 1, Y + 1, Z + 1, i) for i in range(q))
    return Kernel(name=name, fields=(src, dst), accesses=loads + stores, domain=d,
                  dtype={8: "float64", 4: "float32"}.get(element_bytes, "float64"))


BUILTIN_KERNELS = {
    "star3d-r4": "3D 25-point range-4 star stencil (Ernst et al., JPDC 2023, 5.2)",
    "star3d-r1": "3D 7-point star stencil",
    "star2d-r1": "2D 5-point star stencil",
    "copy": "streaming copy",
    "d3q15-pull": "D3Q15 pull-scheme streaming pattern",
}


#: Precision names accepted for ``dtype`` -> bytes per element.
DTYPE_BYTES = {"double": 8, "float": 4, "float64": 8, "float32": 4}


def element_bytes_of(dtype: str | None) -> int:
    """Bytes per element of precision ``dtype`` (``"double"``/``"float"``; None: double)."""
    if dtype is None:
        return DTYPE_BYTES["double"]
    if dtype not in DTYPE_BYTES:
        raise KernelError(f"dtype {dtype!r} not supported; use 'double' or 'float'")
    return DTYPE_BYTES[dtype]


def builtin_kernel(name: str, domain: Sequence[int] | None = None, element_bytes: int = 8) -> Kernel:
    """A built-in kernel by name (see :data:`BUILTIN_KERNELS`) on ``domain`` (or its default),
    with ``element_bytes`` per element (8: double, 4: float)."""
    if name == "star3d-r4":
        return star_stencil(3, 4, domain or PAPER_STENCIL_DOMAIN, element_bytes)
    if name == "star3d-r1":
        return star_stencil(3, 1, domain or (256, 256, 256), element_bytes)
    if name == "star2d-r1":
        return star_stencil(2, 1, domain or (4096, 4096), element_bytes)
    if name == "copy":
        return copy_kernel(domain or (256, 256, 256), element_bytes)
    if name == "d3q15-pull":
        return lbm_pull(domain=domain or (256, 256, 256), element_bytes=element_bytes)
    raise KernelError(f"unknown kernel {name!r}; built-in kernels: {', '.join(BUILTIN_KERNELS)}")
