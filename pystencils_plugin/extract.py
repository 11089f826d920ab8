"""Turn a pystencils 2.x GPU kernel into a :class:`warpspeed.Kernel`.

:func:`extract_kernel` walks the typed AST of a kernel created with
``ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.CUDA))`` (or
``Target.HIP``) and reads off everything warpspeed needs:

* the thread -> cell mapping from the counter declarations
  ``ctr_k = offset + f * (blockIdx.a * blockDim.a + threadIdx.a)`` (``f > 1`` for a kernel
  folded by :func:`pystencils_plugin.folding.create_folded_kernel`),
* the iteration space (domain, in cells) from the guard ``if (ctr_k < bound && ...)``,
* one load per distinct element read and one store per distinct element written per cell,
  as N-D index tuples into the fields (ghost layers included, index order of the pystencils
  field, layout derived from the field's strides),
* floating-point operation counts per cell.

Conventions (see ``warpspeed.kernel.description``): the warpspeed cell coordinate ``x`` is the iteration
coordinate driven by ``threadIdx.x`` (pystencils maps the spatial dimension with the smallest
stride there; for ``fzyx`` fields that is index 0), ``y`` by ``threadIdx.y`` and ``z`` by
``threadIdx.z``; cell ``(0, 0, 0)`` is the first cell the kernel updates, i.e.
``ctr_k = offset_k + x`` for the counter driven by ``threadIdx.x``.

Folded kernels: the extracted :class:`warpspeed.Kernel` is the per-cell kernel (see
:mod:`pystencils_plugin.unfold`); the folding factors are reported separately in
:attr:`ExtractedKernel.fold`.

Distinct addresses: pystencils reads a field element once per occurrence in the update rule
(lbmpy rules read some PDFs two or three times). Field pointers are ``const __restrict__``, so
nvcc loads each distinct element once per thread; the extracted kernel therefore holds one
load per distinct (field, index) and one store per distinct stored element, in order of first
occurrence.

Constructs outside warpspeed's model raise :class:`warpspeed.errors.UnsupportedKernelError`
naming the construct: indirect (data-dependent) indices, data-dependent branches, loops that
cannot be unrolled, reductions, memory accesses through non-field pointers, unknown AST nodes,
and symbolic field sizes (unless ``shapes=`` gives them).

Modules: :mod:`pystencils_plugin.geometry` (field shapes and strides),
:mod:`pystencils_plugin.indices` and :mod:`pystencils_plugin.walker` (the AST walk),
:mod:`pystencils_plugin.unfold` (folded kernels); this module puts the pieces together.

Works with pystencils 2.0 and 2.1 (``Kernel.name`` and field/buffer symbol properties are
looked up by duck typing; lowered and unlowered buffer accesses are both read).
"""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import Any, Iterable, Mapping, Sequence

try:  # pystencils is an optional dependency of warpspeed
    from pystencils.backend.ast import structural as _st
except ImportError as _exc:  # pragma: no cover - exercised only without pystencils
    raise ImportError(
        "pystencils_plugin needs pystencils >= 2.0 (pip install 'warpspeed[pystencils]')"
    ) from _exc

from pystencils_plugin.extracted import REGISTER_SOURCES, ExtractedKernel  # noqa: F401 (re-exported)
from pystencils_plugin.geometry import FieldGeometry
from pystencils_plugin.indices import AXES
from pystencils_plugin.registers import register_count, standalone_cuda_source
from pystencils_plugin.unfold import AccessItem, unfold
from pystencils_plugin.walker import KernelWalker
from warpspeed.errors import UnsupportedKernelError, WarpspeedError
from warpspeed.kernel.catalog import installed_version
from warpspeed.kernel.description import Access, Field, FlopCounts, Kernel, KernelCode, load, store

#: Floating-point type assumed when a kernel touches no floating-point field.
DEFAULT_DTYPE = "float64"


def extract_kernel(kernel_function: Any, name: str | None = None, registers: int | None = None, *,
                   shapes: Mapping[str, Sequence[int]] | None = None,
                   layouts: Mapping[str, Sequence[int]] | None = None,
                   alignment_bytes: int | None = None,
                   arch: str = "sm_80",
                   compile_registers: bool = True,
                   contract_fma: bool = True,
                   source: str | None = None) -> ExtractedKernel:
    """Extract the per-cell warpspeed kernel from a pystencils 2.x GPU kernel.

    Args:
        kernel_function: the result of ``ps.create_kernel(..., CreateKernelConfig(target=
            Target.CUDA or Target.HIP))`` (a ``GpuKernel``).
        name: label of the warpspeed kernel (default: the pystencils function name).
        registers: registers per thread if known (``registers_source='given'``); otherwise
            counted with ptxas (``'ptxas'``) when ``compile_registers`` and ``nvcc`` is on PATH,
            else estimated (``'estimate'``), see :func:`pystencils_plugin.registers.register_count`.
        shapes: full array shapes (elements per index, ghost layers included) for fields
            created with symbolic sizes, by field name.
        layouts: for fields in ``shapes`` with symbolic strides: index positions from the
            contiguous to the slowest (default: pystencils' spatial layout, component
            dimensions slowest, i.e. ``fzyx``).
        alignment_bytes: base-pointer alignment of every field in bytes (default: warpspeed's
            256 B cudaMalloc alignment).
        arch: GPU architecture for the register count (``sm_80``, or a name such as
            ``'ampere'``/``'A100'``, see :func:`pystencils_plugin.registers.cuda_arch`).
        compile_registers: set False to skip the nvcc compile and use the estimate.
        contract_fma: count ``a * b + c`` inside one expression as one FMA, as nvcc does by
            default (``--fmad=true``); False counts every multiplication and addition.
        source: the kernel's source if already at hand (``kernel_function.get_c_code()``, which
            prints the whole kernel again).

    Returns:
        :class:`ExtractedKernel` with the per-cell kernel (flops per cell, i.e. per thread
        divided by the folding factors) and the folding factors.

    Raises:
        UnsupportedKernelError: for constructs outside the model (the message names it).
    """
    kname = name or _kernel_name(kernel_function)
    body_block = _kernel_body(kernel_function, kname)
    walker = KernelWalker(kernel_name=kname, fields=_kernel_fields(kernel_function), shapes=dict(shapes or {}),
                          layouts=dict(layouts or {}), contract_fma=contract_fma)
    bounds = walker.walk_kernel(body_block)
    domain, fold = _iteration_space(walker, bounds)
    items = [(a.field, a.kind, a.index) for a in walker.accesses]
    accesses = _distinct_accesses(unfold(items, fold, kname) if prod(fold) > 1 else items)
    cells = prod(fold)
    source = kernel_function.get_c_code() if source is None else source
    if registers is not None:
        reg, reg_source, detail = int(registers), "given", "registers passed by the caller"
    else:
        distinct_loads = len({(a.field, a.index) for a in walker.accesses if a.kind == "load"})
        element_bytes = max(g.element_bytes for g in walker.geometry.values())
        counted = register_count(kernel_function, arch=arch, compile=compile_registers, source=source,
                                 per_thread_loads=distinct_loads, element_bytes=element_bytes)
        reg, reg_source, detail = counted.registers, counted.source, counted.detail
    kernel = Kernel(name=kname, fields=_fields(accesses, walker.geometry, alignment_bytes),
                    accesses=tuple(accesses), domain=domain, flops=_flops_per_cell(walker, cells),
                    dtype=_dtype(accesses, walker.geometry), registers=reg,
                    code=_kernel_code(kernel_function, source))
    thread_axes = tuple(AXES[walker.counters[k][2]] for k in range(len(walker.counters)) if k in walker.counters)
    specials = tuple(sorted((n, c / cells) for n, c in walker.specials.items()))
    return ExtractedKernel(kernel=kernel, fold=fold, registers_source=reg_source, source=source,
                           registers_detail=detail, special_functions=specials, thread_axes=thread_axes)


def _kernel_code(kernel_function: Any, source: str) -> KernelCode:
    """The generated source with what compiling it needs: for CUDA the standalone file
    (:func:`~pystencils_plugin.registers.standalone_cuda_source`) and pystencils' include directory."""
    try:
        from pystencils.include import get_pystencils_include_path

        include: tuple[str, ...] = (get_pystencils_include_path(),)
    except ImportError:  # pragma: no cover - every supported pystencils has it
        include = ()
    hip = "HIP" in str(getattr(kernel_function, "target", "")).upper()
    return KernelCode(language="hip" if hip else "cuda",
                      source=source if hip else standalone_cuda_source(kernel_function, source), generator="pystencils",
                      generator_version=_pystencils_version(), include_dirs=include,
                      operations=pipeline_operations(kernel_function))


def pipeline_operations(kernel_function: Any) -> tuple:
    """The pipeline model's operations of the kernel (:mod:`pystencils_plugin.graph`), or none
    when its graph builder does not model a construct (the model then derives the graph from the
    kernel description)."""
    from pystencils_plugin.graph import kernel_operations

    try:
        return kernel_operations(kernel_function)
    except (WarpspeedError, AttributeError, TypeError, ValueError):
        # an AST shape the graph builder does not know must not stop the extraction: the graph is optional
        return ()


@lru_cache(maxsize=1)
def _pystencils_version() -> str | None:
    """The installed pystencils' version (None when it runs from a source tree)."""
    return installed_version("pystencils")


def _kernel_name(kernel_function: Any) -> str:
    name = getattr(kernel_function, "name", None)
    return str(name) if name else "kernel"


def _kernel_body(kernel_function: Any, kname: str) -> Any:
    """The typed AST body of a pystencils GPU kernel; other objects are rejected."""
    body = getattr(kernel_function, "body", None)
    if body is None or not isinstance(body, _st.PsBlock):
        raise UnsupportedKernelError(
            f"expected a pystencils 2.x kernel with a typed AST body (ps.create_kernel result), "
            f"got {type(kernel_function).__name__}"
        )
    target = getattr(kernel_function, "target", None)
    if target is not None and not getattr(target, "is_gpu", lambda: True)():
        raise UnsupportedKernelError(
            f"kernel {kname!r} targets {target}; warpspeed models GPU kernels — create it with "
            "ps.CreateKernelConfig(target=ps.Target.CUDA) or Target.HIP"
        )
    return body


def _kernel_fields(kernel_function: Any) -> dict[str, Any]:
    """The pystencils fields of the kernel by name (``get_fields``, else the parameters' fields)."""
    fields: Iterable[Any] = ()
    getter = getattr(kernel_function, "get_fields", None)
    if callable(getter):
        fields = getter()
    else:  # pragma: no cover - API without get_fields
        collected = []
        for param in getattr(kernel_function, "parameters", ()):
            collected.extend(getattr(param, "fields", ()))
        fields = collected
    return {f.name: f for f in fields}


def _iteration_space(walker: KernelWalker, bounds: dict[int, int]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Domain (cells) and folding factors per warpspeed axis, from the counters and the guard."""
    if not walker.counters:
        raise walker.unsupported("kernel without ctr_k counter declarations")
    if set(bounds) != set(walker.counters):
        raise walker.unsupported(
            f"guard over counters {sorted(bounds)} but declarations of {sorted(walker.counters)}",
            "every counter needs an upper bound in the guard",
        )
    if not walker.accesses:
        raise walker.unsupported("kernel without field accesses")
    domain = [1, 1, 1]
    fold = [1, 1, 1]
    for k, (offset, f, axis) in walker.counters.items():
        extent = bounds[k] - offset
        if extent <= 0:
            raise walker.unsupported(f"empty iteration space along ctr_{k} ({offset} .. {bounds[k]})")
        if extent % f:
            raise UnsupportedKernelError(
                f"kernel {walker.kernel_name!r}: iteration extent {extent} along {AXES[axis]} is not a multiple "
                f"of the folding factor {f}; the guard checks only the first of the {f} cells of a "
                "thread, so the last thread would update cells outside the domain — choose a "
                "domain whose extent is a multiple of the fold"
            )
        domain[axis] = extent
        fold[axis] = f
    used_axes = {axis for (_, _, axis) in walker.counters.values()}
    if used_axes != set(range(len(used_axes))):
        raise walker.unsupported(f"counters driven by threadIdx axes {sorted(AXES[a] for a in used_axes)}",
                                 "expected x, (x, y) or (x, y, z)")
    return tuple(domain), tuple(fold)  # type: ignore[return-value]


def _distinct_accesses(items: Sequence[AccessItem]) -> list[Access]:
    """One load per distinct loaded element, one store per distinct stored one, in order."""
    seen: set = set()
    accesses: list[Access] = []
    for fname, kind, index in items:
        if (fname, kind, index) in seen:
            continue
        seen.add((fname, kind, index))
        accesses.append(load(fname, *index) if kind == "load" else store(fname, *index))
    return accesses


def _fields(accesses: Sequence[Access], geometry: Mapping[str, FieldGeometry],
            alignment_bytes: int | None) -> tuple[Field, ...]:
    """warpspeed fields in order of first access."""
    kwargs = {} if alignment_bytes is None else {"alignment_bytes": int(alignment_bytes)}
    order = dict.fromkeys(a.field for a in accesses)
    return tuple(Field(name, geometry[name].element_bytes, geometry[name].shape,
                       layout=geometry[name].layout, **kwargs) for name in order)


def _flops_per_cell(walker: KernelWalker, cells: int) -> FlopCounts:
    f = walker.flops
    return FlopCounts(adds=f["adds"] / cells, muls=f["muls"] / cells, fmas=f["fmas"] / cells,
                      divs=f["divs"] / cells)


def _dtype(accesses: Sequence[Access], geometry: Mapping[str, FieldGeometry]) -> str:
    """The kernel's floating-point type: that of the first stored field, else of any field."""
    stored = [geometry[a.field].dtype for a in accesses if a.is_store]
    float_types = [t for t in stored + [g.dtype for g in geometry.values()] if t.startswith("float")]
    return float_types[0] if float_types else DEFAULT_DTYPE
