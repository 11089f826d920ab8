"""Kernel description: fields, memory accesses as address expressions, operation counts.

This is the whole interface a code generator needs to fill in. Coordinates are the *cell*
coordinates ``x, y, z`` of the iteration space (the lattice cell a thread updates); the
estimator maps threads to cells itself (``cell = thread * fold + j``). An access is either

* an N-D index tuple into the field's array (ghost layers included, so an interior cell of a
  field with 4 ghost layers is ``(x + 4, y + 4, z + 4)``), or
* a single linear element index into the field's flat array.

Expressions may be sympy expressions or strings; they must be affine or quasi-affine in
``x, y, z``: integer coefficients, plus ``floor(affine / c)`` and ``Mod(affine, c)`` with an
integer constant ``c`` (see :mod:`warpspeed.kernel.expressions`). Indirect accesses (an
index that is itself loaded from memory), non-affine terms, and accesses that reach outside
their field for some cell of the domain are rejected with a
:class:`~warpspeed.errors.KernelError`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field as dc_field
from typing import Literal, Sequence

import sympy

from warpspeed.errors import KernelError
from warpspeed.kernel.bounds import index_range
from warpspeed.kernel.limits import MAX_FIELD_BYTES, check_domain
# X, Y, Z are re-exported: kernels are written with them next to Field, load and store.
from warpspeed.kernel.expressions import COORDINATES, X, Y, Z, check_quasi_affine, parse_index  # noqa: F401

#: Floating-point element sizes (bytes) of the dtypes the FP limiter knows.
DTYPE_BYTES: dict[str, int] = {"float64": 8, "float32": 4, "float16": 2}

#: pystencils' layout names for fields with a trailing component index ``f``.
#: A layout is the tuple of index positions ordered from fastest-varying to slowest.
NAMED_LAYOUTS: dict[str, str] = {
    "fzyx": "component slowest, x contiguous (pystencils' default for GPU fields)",
    "zyxf": "component contiguous (array of structures)",
}

AccessKind = Literal["load", "store"]

#: Bytes one element may have: the sizes a GPU load or store instruction moves (PTX ``ld``/``st``
#: of .b8, .b16, .b32, .b64 and the 128-bit vector forms: PTX ISA, "Data Movement and Conversion
#: Instructions: ld"), each naturally aligned.
ELEMENT_SIZES: tuple[int, ...] = (1, 2, 4, 8, 16)

#: Default base alignment of a field: cudaMalloc/hipMalloc return pointers aligned to at least
#: 256 bytes (CUDA C++ Programming Guide, "Device Memory Accesses").
DEVICE_MALLOC_ALIGNMENT_BYTES = 256


def _is_int(value: object) -> bool:
    """Whether ``value`` is an integer (numpy integers included), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _as_tuple(values: object) -> tuple:
    """``values`` as a tuple when it is a sequence of values (not a string), else ``()``."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        return ()
    return tuple(values)  # type: ignore[call-overload]


def _resolve_layout(layout: object, ndim: int, name: str) -> tuple[int, ...]:
    if layout is None:
        return tuple(range(ndim))
    if isinstance(layout, str):
        if layout not in NAMED_LAYOUTS:
            raise KernelError(
                f"field {name!r}: unknown layout {layout!r}; use a tuple of index positions "
                f"(fastest first) or one of {', '.join(NAMED_LAYOUTS)}"
            )
        spatial = tuple(range(ndim - 1)) if ndim >= 2 else ()
        if layout == "fzyx":
            # Without a component index the layout is plain x-fastest.
            return tuple(range(ndim))
        return (ndim - 1,) + spatial  # zyxf: the component index is contiguous
    result = _as_tuple(layout)
    if not all(_is_int(i) for i in result) or sorted(result) != list(range(ndim)):
        raise KernelError(
            f"field {name!r}: layout {result} must be a permutation of 0..{ndim - 1} "
            "(index positions ordered from contiguous to slowest)"
        )
    return tuple(int(i) for i in result)


@dataclass(frozen=True)
class Field:
    """A data array the kernel reads or writes.

    Attributes:
        name: unique name within the kernel.
        element_bytes: size of one element in bytes (8 for double).
        shape: array extent per index, ghost layers included, in index order.
        layout: index positions ordered from the contiguous (fastest-varying) index to the
            slowest; ``None`` means the first index is contiguous. ``"fzyx"`` and ``"zyxf"``
            name pystencils' layouts for fields whose last index is a component index.
        alignment_bytes: alignment of the array's base address in bytes. As in Ernst et al. (JPDC 2023),
            the unknown base pointer is replaced by this value, so element 0 lies at byte
            address ``alignment_bytes``.
    """

    name: str
    element_bytes: int
    shape: tuple[int, ...]
    layout: tuple[int, ...] | str | None = None
    alignment_bytes: int = DEVICE_MALLOC_ALIGNMENT_BYTES

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise KernelError(f"field name {self.name!r} must be a Python identifier")
        if not _is_int(self.element_bytes) or self.element_bytes <= 0:
            raise KernelError(
                f"field {self.name!r}: element_bytes must be a positive integer, got {self.element_bytes!r}"
            )
        if self.element_bytes not in ELEMENT_SIZES:
            raise KernelError(
                f"field {self.name!r}: element_bytes is not the size of a load (got {self.element_bytes}); "
                f"allowed: {', '.join(map(str, ELEMENT_SIZES))}"
            )
        shape = _as_tuple(self.shape)
        if not shape or any((not _is_int(s)) or s <= 0 for s in shape):
            raise KernelError(
                f"field {self.name!r}: shape must be a non-empty tuple of positive integers, got {self.shape!r}"
            )
        shape = tuple(int(s) for s in shape)  # numpy integers wrap around in the size's product
        object.__setattr__(self, "element_bytes", int(self.element_bytes))
        if math.prod(shape) * self.element_bytes > MAX_FIELD_BYTES:
            raise KernelError(
                f"field {self.name!r} is too large (got shape {shape} = {math.prod(shape) * self.element_bytes} "
                f"bytes); at most {MAX_FIELD_BYTES} (2^48) bytes are allowed"
            )
        shape = tuple(int(s) for s in shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "layout", _resolve_layout(self.layout, len(shape), self.name))
        if not _is_int(self.alignment_bytes) or self.alignment_bytes < 0:
            raise KernelError(
                f"field {self.name!r}: alignment_bytes must be a non-negative integer, got {self.alignment_bytes!r}"
            )
        if self.alignment_bytes % self.element_bytes or self.alignment_bytes > MAX_FIELD_BYTES:
            raise KernelError(
                f"field {self.name!r}: alignment_bytes does not align its elements (got {self.alignment_bytes}); "
                f"allowed: a multiple of element_bytes ({self.element_bytes}) up to {MAX_FIELD_BYTES}"
            )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides per index (index order), from the layout and the shape."""
        strides = [0] * self.ndim
        step = 1
        for position in self.layout:  # type: ignore[union-attr]
            strides[position] = step
            step *= self.shape[position]
        return tuple(strides)


@dataclass(frozen=True)
class Access:
    """One memory instruction per cell: a load or a store of one element of a field.

    ``index`` is a tuple (N-D index into the field) or a single expression (linear element
    index); after construction it is always a tuple of sympy expressions and ``linear`` says
    which form it is.
    """

    field: str
    index: tuple[sympy.Expr, ...]
    kind: AccessKind = "load"
    linear: bool = False

    @property
    def is_store(self) -> bool:
        return self.kind == "store"


def load(field: str, *index: object) -> Access:
    """A load of ``field`` at an N-D index (several arguments) or linear index (one argument
    given as ``linear=...`` via :func:`load_linear`)."""
    return _make_access(field, index, "load", linear=False)


def store(field: str, *index: object) -> Access:
    """A store to ``field`` at an N-D index."""
    return _make_access(field, index, "store", linear=False)


def load_linear(field: str, index: object) -> Access:
    """A load of ``field`` at a linear element index."""
    return _make_access(field, (index,), "load", linear=True)


def store_linear(field: str, index: object) -> Access:
    """A store to ``field`` at a linear element index."""
    return _make_access(field, (index,), "store", linear=True)


def _make_access(field: str, index: Sequence[object], kind: str, linear: bool) -> Access:
    if kind not in ("load", "store"):
        raise KernelError(f"access kind {kind!r} is not allowed; use 'load' or 'store'")
    if not index:
        raise KernelError(f"access to {field!r}: an index needs at least one expression")
    what = f"{kind} of {field!r}"
    parsed = tuple(parse_index(e, what) for e in index)
    for e in parsed:
        check_quasi_affine(e, what)
    return Access(field=field, index=parsed, kind=kind, linear=linear)  # type: ignore[arg-type]


#: Most floating-point operations of one kind per lattice update: far above any stencil or LBM
#: kernel (the D3Q27 collision has a few hundred) and far below where an FP time would overflow.
MAX_FLOPS_PER_LUP = 1e12


@dataclass(frozen=True)
class FlopCounts:
    """Floating-point operations per lattice update (per cell).

    An FMA counts as one FP instruction and two flops; the FP limiter uses instructions.
    """

    adds: float = 0
    muls: float = 0
    fmas: float = 0
    divs: float = 0

    def __post_init__(self) -> None:
        for name in ("adds", "muls", "fmas", "divs"):
            value = getattr(self, name)
            number = isinstance(value, numbers.Real) and not isinstance(value, bool)  # numpy numbers count
            if number and not isinstance(value, (int, float)):
                value = int(value) if isinstance(value, numbers.Integral) else float(value)
                object.__setattr__(self, name, value)
            if not number or not 0 <= value <= MAX_FLOPS_PER_LUP:  # NaN fails too; a huge int is not converted
                shown = repr(value) if len(repr(value)) <= 40 else f"a number of {len(str(value))} digits"
                raise KernelError(f"flop count {name} is not a finite non-negative number (got {shown}); allowed: "
                                  f"operations per lattice update from 0 to {MAX_FLOPS_PER_LUP:g}, such as 0, 2 or 0.5")

    @property
    def instructions(self) -> float:
        """FP instructions per lup (add, mul, FMA and division each count once)."""
        return self.adds + self.muls + self.fmas + self.divs

    @property
    def flops(self) -> float:
        """Floating-point operations per lup (an FMA is two)."""
        return self.adds + self.muls + 2 * self.fmas + self.divs


@dataclass(frozen=True)
class KernelCode:
    """The kernel's source as its code generator emitted it (used to compile it for SASS).

    ``language``: ``"cuda"`` or ``"hip"``; ``include_dirs``: directories the source's headers
    need; ``generator`` / ``generator_version``: e.g. ``"pystencils"``, ``"2.0"``;
    ``operations``: one thread's source-level operations for the pipeline model
    (:class:`warpspeed.pipeline.graph.Operation` records in program order; empty when the
    generator supplies none).
    """

    language: str
    source: str
    generator: str | None = None
    generator_version: str | None = None
    include_dirs: tuple[str, ...] = ()
    operations: tuple = ()


@dataclass(frozen=True)
class Kernel:
    """A GPU kernel as warpspeed sees it.

    Attributes:
        name: label used in reports.
        fields: the arrays; they never alias.
        accesses: memory instructions per cell, in program order.
        domain: the iteration space ``(nx, ny, nz)`` in cells; the kernel's guard
            ``if (x < nx && y < ny && z < nz)`` masks cells outside it. 2-D kernels use nz = 1.
        flops: floating-point operations per cell.
        dtype: floating-point type of the arithmetic (``float64``, ``float32``, ``float16``).
        registers: registers per thread, if known (``None``: the launch uses an estimate).
        shared_bytes_per_block: static shared memory per block in bytes.
        code: the generated source, if the generator supplies it (not part of equality).
    """

    name: str
    fields: tuple[Field, ...]
    accesses: tuple[Access, ...]
    domain: tuple[int, int, int]
    flops: FlopCounts = dc_field(default_factory=FlopCounts)
    dtype: str = "float64"
    registers: int | None = None
    shared_bytes_per_block: int = 0
    code: KernelCode | None = dc_field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise KernelError(f"kernel name is not a non-empty string (got {self.name!r}); give a label such as '7pt'")
        fields = _as_tuple(self.fields)
        accesses = _as_tuple(self.accesses)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "accesses", accesses)
        if not fields or not all(isinstance(f, Field) for f in fields):
            raise KernelError(f"kernel {self.name!r}: fields must be a sequence of Field objects (got {self.fields!r})")
        if not accesses:
            raise KernelError(f"kernel {self.name!r} has no memory accesses; nothing to estimate")
        names = [f.name for f in fields]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise KernelError(f"kernel {self.name!r}: duplicate field name(s) {', '.join(duplicates)}")
        by_name = {f.name: f for f in fields}
        for access in accesses:
            if not isinstance(access, Access):
                raise KernelError(
                    f"kernel {self.name!r}: accesses must be Access objects (use warpspeed.load/store), "
                    f"got {type(access).__name__}"
                )
            if access.field not in by_name:
                raise KernelError(
                    f"kernel {self.name!r}: access to unknown field {access.field!r}; "
                    f"known fields: {', '.join(names) or '(none)'}"
                )
            f = by_name[access.field]
            if not access.linear and len(access.index) != f.ndim:
                raise KernelError(
                    f"kernel {self.name!r}: {access.kind} of {f.name!r} has {len(access.index)} "
                    f"indices but the field has {f.ndim} dimensions (or use a linear index)"
                )
        domain = _as_tuple(self.domain)
        if len(domain) == 2:
            domain = (domain[0], domain[1], 1)
        if len(domain) != 3 or any((not _is_int(n)) or n <= 0 for n in domain):
            raise KernelError(
                f"kernel {self.name!r}: domain must be 2 or 3 positive integers (cells), got {self.domain!r}"
            )
        domain = check_domain(tuple(int(n) for n in domain), f"kernel {self.name!r}: domain")
        object.__setattr__(self, "domain", domain)
        if self.dtype not in DTYPE_BYTES:
            raise KernelError(
                f"kernel {self.name!r}: dtype {self.dtype!r} unknown; allowed: {', '.join(DTYPE_BYTES)}"
            )
        if self.registers is not None and (not _is_int(self.registers) or self.registers <= 0):
            raise KernelError(
                f"kernel {self.name!r}: registers must be a positive integer or None, got {self.registers!r}"
            )
        if not _is_int(self.shared_bytes_per_block) or self.shared_bytes_per_block < 0:
            raise KernelError(f"kernel {self.name!r}: shared_bytes_per_block must be a non-negative integer")
        if not isinstance(self.flops, FlopCounts):
            raise KernelError(f"kernel {self.name!r}: flops must be a FlopCounts")
        for access in accesses:
            _check_inside(self.name, by_name[access.field], access, domain)  # type: ignore[arg-type]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KernelError(f"kernel {self.name!r} has no field {name!r}")

    @property
    def loads(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if not a.is_store)

    @property
    def stores(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.is_store)


def _check_inside(kernel: str, field: Field, access: Access, domain: tuple[int, int, int]) -> None:
    """Raise KernelError if ``access`` reaches outside ``field`` for some cell of ``domain``."""
    extents = dict(zip(COORDINATES, domain))
    limits = (math.prod(field.shape),) if access.linear else field.shape
    for position, (expr, size) in enumerate(zip(access.index, limits)):
        lo, hi = index_range(expr, extents, allowed=(0, size - 1))
        if lo < 0 or hi >= size:
            indices = ", ".join(map(str, access.index))
            where = "its linear index" if access.linear else f"its index {position}, {expr},"
            allowed = "has elements" if access.linear else "allows indices"
            raise KernelError(
                f"kernel {kernel!r}: {access.kind} of {field.name!r} at ({indices}) is outside the field: "
                f"{where} spans {lo}..{hi} over the domain {domain}, but the field {allowed} "
                f"0..{size - 1} (shape {field.shape})"
            )


def linear_index(field: Field, access: Access) -> sympy.Expr:
    """The access as a linear element index into the field (strides from the layout)."""
    if access.linear:
        return access.index[0]
    return sympy.Add(*(e * s for e, s in zip(access.index, field.strides)))


def byte_address(field: Field, access: Access) -> sympy.Expr:
    """The byte address of the access: alignment + element_bytes * linear index."""
    return field.alignment_bytes + field.element_bytes * linear_index(field, access)
