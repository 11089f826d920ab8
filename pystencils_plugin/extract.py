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

Folded kernels: a thread of a kernel folded by ``f`` along an axis updates ``f`` consecutive
cells with ``f`` shifted copies of the update rule. warpspeed maps threads to cells itself
(``cell = thread * f + j``), so the extracted :class:`warpspeed.Kernel` is the per-cell
kernel: the thread's access multiset is divided by the shift polynomial
``1 + t + ... + t^(f-1)`` along every folded axis (exact polynomial division; a kernel whose
accesses are not ``f`` shifted copies of one access set is rejected), and the folding
factors are reported separately in :attr:`ExtractedKernel.fold`.

Distinct addresses: pystencils reads a field element once per occurrence in the update rule
(lbmpy rules read some PDFs two or three times). Field pointers are ``const __restrict__``, so
nvcc loads each distinct element once per thread; the extracted kernel therefore holds one
load per distinct (field, index) and one store per distinct stored element, in order of first
occurrence.

Constructs outside warpspeed's model raise :class:`warpspeed.errors.UnsupportedKernelError`
naming the construct: indirect (data-dependent) indices, data-dependent branches, loops that
cannot be unrolled, reductions, memory accesses through non-field pointers, unknown AST nodes,
and symbolic field sizes (unless ``shapes=`` gives them).

Works with pystencils 2.0 (tested); the pystencils 2.1 differences known to the author are
guarded (``Kernel.name`` vs the deprecated ``function_name``; field/buffer symbol properties
looked up by duck typing; lowered or unlowered buffer accesses); 2.1 needs Python >= 3.12 and
is untested here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field as dc_field
from math import prod
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import sympy

from warpspeed.errors import KernelError, UnsupportedKernelError
from warpspeed.kernel.description import COORDINATES, Access, Field, FlopCounts, Kernel, load, store

try:  # pystencils is an optional dependency of warpspeed
    from pystencils.backend.ast import expressions as _ex
    from pystencils.backend.ast import structural as _st
except ImportError as _exc:  # pragma: no cover - exercised only without pystencils
    raise ImportError(
        "pystencils_plugin needs pystencils >= 2.0 (pip install 'warpspeed[pystencils]')"
    ) from _exc

try:  # iteration-axis nodes exist in pystencils 2.0's AST module; guard for other versions
    from pystencils.backend.ast import axes as _axes
except ImportError:  # pragma: no cover
    _axes = None

#: Register source labels of :attr:`ExtractedKernel.registers_source`.
REGISTER_SOURCES = ("ptxas", "estimate", "given")

#: Maximum number of iterations of a constant-bound loop inside the kernel body that the
#: extractor unrolls; longer loops are rejected (they would make the per-cell access list
#: huge and are not what pystencils emits for stencil sweeps).
MAX_UNROLLED_ITERATIONS = 1024

#: Names of the CUDA/HIP built-in index variables as pystencils prints them.
_GPU_INDEX_RE = re.compile(r"^(blockIdx|blockDim|threadIdx)\.([xyz])$")
_CTR_RE = re.compile(r"^ctr_(\d+)$")
_SIZE_RE = re.compile(r"^_size_(.+)_(\d+)$")
_STRIDE_RE = re.compile(r"^_stride_(.+)_(\d+)$")
_AXES = "xyz"

#: Math functions that compile to one FP instruction of the kind named (or to nothing).
_FMA_NAMES = {"fma", "fmaf", "__fma_rn"}


@dataclass(frozen=True)
class ExtractedKernel:
    """Result of :func:`extract_kernel`.

    Attributes:
        kernel: the per-cell warpspeed kernel (accesses in cell coordinates x, y, z; flops
            per cell; registers per thread).
        fold: thread-folding factors ``(fx, fy, fz)``: cells per thread along each axis.
        registers_source: ``'ptxas'`` (compiled with nvcc), ``'estimate'`` (see
            :mod:`pystencils_plugin.registers`) or ``'given'`` (passed by the caller).
        source: the kernel's CUDA/HIP source (``kernel.get_c_code()``).
        registers_detail: why that register source was used (e.g. the reason a compile
            failed), for reports.
        special_functions: calls to math functions other than FMA per cell (``sqrt``,
            ``exp``, ...), as sorted ``(name, count)`` pairs; they are not in ``flops``.
        thread_axes: for each pystencils spatial dimension (``ctr_0, ctr_1, ...``) the
            warpspeed axis (``'x'``, ``'y'``, ``'z'``) that drives it.
    """

    kernel: Kernel
    fold: tuple[int, int, int]
    registers_source: str
    source: str
    registers_detail: str = ""
    special_functions: tuple[tuple[str, float], ...] = ()
    thread_axes: tuple[str, ...] = dc_field(default=())

    def __post_init__(self) -> None:
        if self.registers_source not in REGISTER_SOURCES:
            raise KernelError(
                f"registers_source {self.registers_source!r} unknown; allowed: {', '.join(REGISTER_SOURCES)}"
            )


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------

def _node_name(node: object) -> str:
    return type(node).__name__


def _is_float(expr: Any) -> bool:
    """Whether a typed expression has a floating-point type."""
    dtype = getattr(expr, "dtype", None)
    if dtype is None:
        return False
    try:
        from pystencils.types import PsIeeeFloatType
    except ImportError:  # pragma: no cover
        return "float" in type(dtype).__name__.lower()
    return isinstance(dtype, PsIeeeFloatType)


def _kernel_fields(kernel_function: Any) -> dict[str, Any]:
    """The pystencils fields of the kernel by name (2.0: ``get_fields``; fallbacks for 2.1)."""
    fields: Iterable[Any] = ()
    getter = getattr(kernel_function, "get_fields", None)
    if callable(getter):
        fields = getter()
    else:  # pragma: no cover - newer API without get_fields
        collected = []
        for param in getattr(kernel_function, "parameters", ()):
            collected.extend(getattr(param, "fields", ()))
        fields = collected
    return {f.name: f for f in fields}


def _kernel_name(kernel_function: Any) -> str:
    name = getattr(kernel_function, "name", None)
    return str(name) if name else "kernel"


def _symbol_field_property(symbol: Any, kind: str) -> tuple[Any, int | None] | None:
    """``(field_or_buffer, coordinate)`` of a FieldShape/FieldStride/base-pointer property."""
    for prop in getattr(symbol, "properties", ()):
        pname = type(prop).__name__
        if kind == "shape" and pname in ("FieldShape", "BufferShape"):
            return getattr(prop, "field", getattr(prop, "buffer", None)), getattr(prop, "coordinate", None)
        if kind == "stride" and pname in ("FieldStride", "BufferStrides", "BufferStride"):
            return getattr(prop, "field", getattr(prop, "buffer", None)), getattr(prop, "coordinate", None)
        if kind == "ptr" and pname in ("FieldBasePtr", "BufferBasePtr"):
            return getattr(prop, "field", getattr(prop, "buffer", None)), None
    return None


# --------------------------------------------------------------------------------------------
# Field geometry (shapes and strides as integers)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _FieldGeometry:
    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # elements
    spatial_dims: int
    element_bytes: int
    dtype: str


def _as_int(value: Any) -> int | None:
    try:
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, sympy.Basic) and value.is_Integer:
            return int(value)
    except TypeError:  # pragma: no cover
        return None
    return None


def _field_geometry(pfield: Any, shapes: Mapping[str, Sequence[int]],
                    layouts: Mapping[str, Sequence[int]]) -> _FieldGeometry:
    name = pfield.name
    np_dtype = np.dtype(pfield.dtype.numpy_dtype)
    spatial = int(pfield.spatial_dimensions)
    index_dims = int(pfield.index_dimensions)
    ndim = spatial + index_dims
    shape = tuple(_as_int(s) for s in pfield.shape)
    strides = tuple(_as_int(s) for s in pfield.strides)
    if name in shapes:
        given = tuple(int(s) for s in shapes[name])
        if len(given) != ndim or any(s <= 0 for s in given):
            raise UnsupportedKernelError(
                f"shapes[{name!r}] = {given}: field {name!r} has {ndim} dimensions "
                f"({spatial} spatial + {index_dims} index); give that many positive sizes"
            )
        if None in strides or name in layouts:
            layout = _override_layout(pfield, ndim, layouts.get(name))
            strides = _strides_from_layout(given, layout)
        shape = given
    if None in shape or None in strides:
        raise UnsupportedKernelError(
            f"field {name!r} has a symbolic size ({pfield.shape}, strides {pfield.strides}): "
            "warpspeed needs fixed sizes — create the field with a fixed shape, e.g. "
            f"ps.fields('{name}: double[640,512,512]') or from a numpy array, or pass "
            f"shapes={{'{name}': (...)}} to extract_kernel"
        )
    return _FieldGeometry(name=name, shape=shape, strides=strides, spatial_dims=spatial,  # type: ignore[arg-type]
                          element_bytes=int(np_dtype.itemsize), dtype=np_dtype.name)


def _override_layout(pfield: Any, ndim: int, given: Sequence[int] | None) -> tuple[int, ...]:
    """Index positions fastest first: the caller's, or pystencils' spatial layout with the
    index (component) dimensions slowest (pystencils' ``fzyx`` convention for GPU fields)."""
    if given is not None:
        layout = tuple(int(i) for i in given)
        if sorted(layout) != list(range(ndim)):
            raise UnsupportedKernelError(
                f"layouts[{pfield.name!r}] = {layout} must be a permutation of 0..{ndim - 1} "
                "(index positions from contiguous to slowest)"
            )
        return layout
    spatial_slow_to_fast = tuple(int(i) for i in pfield.layout)[: pfield.spatial_dimensions]
    fast_first = tuple(reversed(spatial_slow_to_fast))
    return fast_first + tuple(range(pfield.spatial_dimensions, ndim))


def _strides_from_layout(shape: Sequence[int], layout: Sequence[int]) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for position in layout:
        strides[position] = step
        step *= shape[position]
    return tuple(strides)


def _layout_from_strides(strides: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """Index positions from contiguous to slowest (ties: the size-1 index first)."""
    return tuple(sorted(range(len(strides)), key=lambda i: (strides[i], shape[i] != 1, i)))


# --------------------------------------------------------------------------------------------
# The AST walker
# --------------------------------------------------------------------------------------------

_DATA = object()  # marker: a symbol whose value depends on loaded data


@dataclass
class _RawAccess:
    field: str
    kind: str
    index: tuple[sympy.Expr, ...]  # in first-cell coordinates of the thread


@dataclass
class _Walker:
    kernel_name: str
    fields: Mapping[str, Any]
    shapes: Mapping[str, Sequence[int]]
    layouts: Mapping[str, Sequence[int]]
    contract_fma: bool
    geometry: dict[str, _FieldGeometry] = dc_field(default_factory=dict)
    env: dict[str, Any] = dc_field(default_factory=dict)  # symbol name -> sympy expr or _DATA
    accesses: list[_RawAccess] = dc_field(default_factory=list)
    flops: Counter = dc_field(default_factory=Counter)
    specials: Counter = dc_field(default_factory=Counter)
    counters: dict[int, tuple[int, int, int]] = dc_field(default_factory=dict)  # k -> (offset, fold, axis)

    # ---- errors --------------------------------------------------------------------------
    def unsupported(self, construct: str, detail: str = "") -> UnsupportedKernelError:
        msg = (f"kernel {self.kernel_name!r}: {construct} is outside warpspeed's model"
               + (f" ({detail})" if detail else "")
               + "; supported are straight-line stencil updates: field accesses with affine "
                 "indices of the loop counters, one bounds guard, constant-bound loops")
        return UnsupportedKernelError(msg)

    # ---- geometry ------------------------------------------------------------------------
    def field_geometry(self, name: str) -> _FieldGeometry:
        if name not in self.geometry:
            if name not in self.fields:
                raise self.unsupported(f"memory access through pointer of unknown field {name!r}")
            self.geometry[name] = _field_geometry(self.fields[name], self.shapes, self.layouts)
        return self.geometry[name]

    def size_or_stride(self, symbol: Any) -> int | None:
        """Integer value of a ``_size_f_i`` / ``_stride_f_i`` symbol, or None if not one."""
        for kind, regex in (("shape", _SIZE_RE), ("stride", _STRIDE_RE)):
            prop = _symbol_field_property(symbol, kind)
            if prop is not None and prop[0] is not None and prop[1] is not None:
                fname, coord = prop[0].name, int(prop[1])
            else:
                m = regex.match(symbol.name)
                if not m:
                    continue
                fname, coord = m.group(1), int(m.group(2))
            geom = self.field_geometry(fname)
            values = geom.shape if kind == "shape" else geom.strides
            if coord >= len(values):
                raise self.unsupported(f"{kind} symbol {symbol.name} beyond the field's {len(values)} dimensions")
            return values[coord]
        return None

    # ---- integer (index) expressions -------------------------------------------------------
    def int_expr(self, expr: Any, what: str) -> sympy.Expr:
        """An integer-valued AST expression as sympy (counters stay symbols ``ctr_k``)."""
        match expr:
            case _ex.PsConstantExpr():
                value = expr.constant.value
                if isinstance(value, (float, np.floating)):
                    if float(value).is_integer():
                        return sympy.Integer(int(value))
                    raise self.unsupported(f"floating-point constant {value} in {what}")
                return sympy.Integer(int(value))
            case _ex.PsSymbolExpr():
                symbol = expr.symbol
                name = symbol.name
                if _CTR_RE.match(name) and name not in self.env:
                    return sympy.Symbol(name, integer=True)
                if name in self.env:
                    value = self.env[name]
                    if value is _DATA:
                        raise self.unsupported(
                            f"indirect or data-dependent index in {what}",
                            f"symbol {name} holds a value loaded from memory or computed in "
                            "floating point; only affine functions of the loop counters are allowed",
                        )
                    return value
                fixed = self.size_or_stride(symbol)
                if fixed is not None:
                    return sympy.Integer(fixed)
                raise self.unsupported(
                    f"index depending on the runtime parameter {name} in {what}",
                    "indices may only use loop counters, field sizes and strides",
                )
            case _ex.PsLiteralExpr():
                text = str(getattr(expr.literal, "text", expr.literal))
                m = _GPU_INDEX_RE.match(text)
                if not m:
                    raise self.unsupported(f"literal {text!r} in {what}")
                return sympy.Symbol(f"{m.group(1)}_{m.group(2)}", integer=True, nonnegative=True)
            case _ex.PsCast():
                if _is_float(expr.operand):
                    raise self.unsupported(
                        f"indirect or data-dependent index in {what}",
                        "a floating-point value is converted to an integer index",
                    )
                return self.int_expr(expr.operand, what)
            case _ex.PsAdd():
                return self.int_expr(expr.operand1, what) + self.int_expr(expr.operand2, what)
            case _ex.PsSub():
                return self.int_expr(expr.operand1, what) - self.int_expr(expr.operand2, what)
            case _ex.PsMul():
                return self.int_expr(expr.operand1, what) * self.int_expr(expr.operand2, what)
            case _ex.PsNeg():
                return -self.int_expr(expr.operand, what)
            case _ex.PsIntDiv():
                return sympy.floor(self.int_expr(expr.operand1, what) / self.int_expr(expr.operand2, what))
            case _ex.PsRem():
                return sympy.Mod(self.int_expr(expr.operand1, what), self.int_expr(expr.operand2, what))
            case _ex.PsMemAcc() | _ex.PsBufferAcc() | _ex.PsSubscript():
                raise self.unsupported(
                    f"indirect access in {what}",
                    "the index is itself loaded from memory; only affine indices are allowed",
                )
            case _:
                raise self.unsupported(f"AST node {_node_name(expr)} in {what}")

    # ---- counters and guard ----------------------------------------------------------------
    def declare_counter(self, k: int, rhs: Any) -> None:
        expr = sympy.expand(self.int_expr(rhs, f"declaration of ctr_{k}"))
        syms = {s.name: s for s in expr.free_symbols}
        axes_used = sorted({n.split("_")[1] for n in syms if n.startswith(("threadIdx_", "blockIdx_", "blockDim_"))})
        others = sorted(n for n in syms if not n.startswith(("threadIdx_", "blockIdx_", "blockDim_")))
        if others or len(axes_used) != 1:
            raise self.unsupported(
                f"thread index mapping of ctr_{k} = {expr}",
                "each counter must be offset + fold * (blockIdx.a * blockDim.a + threadIdx.a) "
                "for one axis a (pystencils' Linear3D GPU indexing)",
            )
        a = axes_used[0]
        t = sympy.Symbol("T", integer=True)
        bi = sympy.Symbol(f"blockIdx_{a}", integer=True, nonnegative=True)
        bd = sympy.Symbol(f"blockDim_{a}", integer=True, nonnegative=True)
        ti = sympy.Symbol(f"threadIdx_{a}", integer=True, nonnegative=True)
        in_t = sympy.expand(expr.subs(ti, t - bi * bd))
        poly = sympy.Poly(in_t, t) if in_t.free_symbols <= {t} else None
        if poly is None or poly.degree() != 1:
            raise self.unsupported(
                f"thread index mapping of ctr_{k} = {expr}",
                "expected offset + fold * (blockIdx.a * blockDim.a + threadIdx.a)",
            )
        fold_c, offset_c = poly.all_coeffs()
        if not (fold_c.is_Integer and offset_c.is_Integer and fold_c > 0):
            raise self.unsupported(f"thread index mapping of ctr_{k} = {expr}", "non-integer fold or offset")
        axis = _AXES.index(a)
        if any(v[2] == axis for v in self.counters.values()):
            raise self.unsupported(f"two counters driven by threadIdx.{a}")
        self.counters[k] = (int(offset_c), int(fold_c), axis)

    def parse_guard(self, cond: Any) -> dict[int, int]:
        """``{k: bound}`` from ``ctr_k < bound && ...``."""
        bounds: dict[int, int] = {}

        def visit(node: Any) -> None:
            match node:
                case _ex.PsAnd():
                    visit(node.operand1)
                    visit(node.operand2)
                case _ex.PsLt(_ex.PsSymbolExpr(), _):
                    m = _CTR_RE.match(node.operand1.symbol.name)
                    bound = sympy.expand(self.int_expr(node.operand2, "the guard"))
                    if not m or not bound.is_Integer:
                        raise self.unsupported(f"guard condition {node}",
                                               "expected ctr_k < constant, as emitted by the Linear3D GPU indexing scheme")
                    bounds[int(m.group(1))] = int(bound)
                case _:
                    raise self.unsupported(
                        f"guard condition {_node_name(node)}",
                        "the guard must be a conjunction of ctr_k < bound (data-dependent "
                        "conditions are not modelled)",
                    )

        visit(cond)
        return bounds

    def counter_subs(self) -> dict[sympy.Symbol, sympy.Expr]:
        return {sympy.Symbol(f"ctr_{k}", integer=True): off + COORDINATES[axis]
                for k, (off, _, axis) in self.counters.items()}

    # ---- memory accesses ---------------------------------------------------------------------
    def mem_access(self, node: Any, kind: str) -> None:
        pointer = node.pointer if isinstance(node, _ex.PsMemAcc) else getattr(node, "base_pointer", None)
        if not isinstance(pointer, _ex.PsSymbolExpr):
            raise self.unsupported(f"memory access through a computed pointer ({_node_name(pointer)})")
        prop = _symbol_field_property(pointer.symbol, "ptr")
        if prop is None or prop[0] is None:
            raise self.unsupported(
                f"{kind} through pointer {pointer.symbol.name} that belongs to no field",
                "pystencils emits such pointers for reductions and other non-field buffers",
            )
        fname = prop[0].name
        geom = self.field_geometry(fname)
        what = f"{kind} of field {fname!r}"
        if isinstance(node, _ex.PsMemAcc):
            linear = self.int_expr(node.offset, what)
            index = self.decompose(geom, linear, what)
        else:  # unlowered PsBufferAcc: one index per buffer dimension
            index = tuple(sympy.expand(self.int_expr(i, what)) for i in node.index)
            index = tuple(sympy.expand(i.xreplace(self.counter_subs())) for i in index[: len(geom.shape)])
        self.accesses.append(_RawAccess(field=fname, kind=kind, index=index))

    def decompose(self, geom: _FieldGeometry, linear: sympy.Expr, what: str) -> tuple[sympy.Expr, ...]:
        """Split a linear element index ``sum_k ctr_k * stride_k + C`` into an N-D index.

        The counter coefficients must be the spatial strides; the constant ``C`` is split into
        per-dimension offsets: spatial offsets in the balanced range ``[-n//2, n - 1 - n//2]``,
        component indices in ``[0, n)`` (digits of a mixed-radix number, slowest stride
        first; unique because each range has exactly ``n`` values).
        """
        linear = sympy.expand(linear)
        index: list[sympy.Expr] = []
        remaining = linear
        for k in range(geom.spatial_dims):
            ctr = sympy.Symbol(f"ctr_{k}", integer=True)
            if k not in self.counters:
                raise self.unsupported(f"{what} uses spatial dimension {k} with no counter ctr_{k}")
            coeff = remaining.coeff(ctr)
            if coeff != geom.strides[k]:
                raise self.unsupported(
                    f"{what}: index {linear}",
                    f"the coefficient of ctr_{k} is {coeff}, not the field's stride {geom.strides[k]} "
                    "(transposed or scaled accesses are not modelled)",
                )
            remaining = sympy.expand(remaining - coeff * ctr)
        if not remaining.is_Integer:
            raise self.unsupported(f"{what}: index {linear}", f"non-constant remainder {remaining}")
        const = int(remaining)
        ndim = len(geom.shape)
        low = [-(geom.shape[d] // 2) if d < geom.spatial_dims else 0 for d in range(ndim)]
        digits = [0] * ndim
        order = sorted(range(ndim), key=lambda d: (-geom.strides[d], d))
        for pos, d in enumerate(order):
            rest_low = sum(low[e] * geom.strides[e] for e in order[pos + 1:])
            digits[d] = (const - rest_low) // geom.strides[d] if geom.strides[d] else 0
            const -= digits[d] * geom.strides[d]
        if const != 0 or any(not (low[d] <= digits[d] < low[d] + geom.shape[d]) for d in range(ndim)):
            raise self.unsupported(f"{what}: index {linear}", "constant offset does not decompose into the field's dimensions")
        subs = self.counter_subs()
        for d in range(ndim):
            if d < geom.spatial_dims:
                index.append(sympy.expand(sympy.Symbol(f"ctr_{d}", integer=True).xreplace(subs) + digits[d]))
            else:
                index.append(sympy.Integer(digits[d]))
        return tuple(index)

    # ---- floating-point expressions ----------------------------------------------------------
    def data_expr(self, expr: Any) -> bool:
        """Walk a value expression: record loads, count flops. Returns whether ``expr`` is an
        unfused floating-point multiplication (for FMA contraction by the parent)."""
        match expr:
            case _ex.PsMemAcc() | _ex.PsBufferAcc():
                self.mem_access(expr, "load")
                return False
            case _ex.PsConstantExpr() | _ex.PsLiteralExpr():
                return False
            case _ex.PsSymbolExpr():
                return False
            case _ex.PsTernary():
                self.data_expr(expr.condition)
                cond_loads = len(self.accesses)
                self.data_expr(expr.case_then)
                self.data_expr(expr.case_else)
                if len(self.accesses) > cond_loads:
                    raise self.unsupported(
                        "data-dependent memory access (a ternary / Piecewise whose branches load memory)",
                        "which branch runs depends on the data or position, so the per-cell access set is not fixed",
                    )
                return False
            case _ex.PsCall():
                fname = str(getattr(expr.function, "name", expr.function))
                for arg in expr.args:
                    self.data_expr(arg)
                if fname in _FMA_NAMES:
                    self.flops["fmas"] += 1
                elif fname.startswith("atomic"):
                    raise self.unsupported(f"atomic operation {fname}", "reductions are not modelled")
                else:
                    self.specials[fname] += 1
                return False
            case _ex.PsAdd() | _ex.PsSub():
                fused1 = self.data_expr(expr.operand1)
                fused2 = self.data_expr(expr.operand2)
                if _is_float(expr):
                    if self.contract_fma and (fused1 or fused2):
                        self.flops["muls"] -= 1
                        self.flops["fmas"] += 1
                    else:
                        self.flops["adds"] += 1
                return False
            case _ex.PsMul():
                self.data_expr(expr.operand1)
                self.data_expr(expr.operand2)
                if _is_float(expr):
                    self.flops["muls"] += 1
                    return True
                return False
            case _ex.PsDiv():
                self.data_expr(expr.operand1)
                self.data_expr(expr.operand2)
                if _is_float(expr):
                    self.flops["divs"] += 1
                return False
            case _ex.PsNeg():
                # A negation becomes an operand modifier of the consuming FADD/FFMA/FMUL.
                self.data_expr(expr.operand)
                return False
            case _ex.PsCast():
                self.data_expr(expr.operand)
                return False
            case _:
                if isinstance(expr, _ex.PsExpression) and not isinstance(expr, (_ex.PsLookup, _ex.PsAddressOf)):
                    # relational / logical / bitwise operators: no FP instructions counted
                    for child in expr.children:
                        self.data_expr(child)
                    return False
                raise self.unsupported(f"AST node {_node_name(expr)}")

    # ---- statements ----------------------------------------------------------------------------
    def declare(self, node: Any) -> None:
        lhs = node.lhs
        if not isinstance(lhs, _ex.PsSymbolExpr):
            raise self.unsupported(f"declaration of {_node_name(lhs)}")
        name = lhs.symbol.name
        if _is_float(lhs) or _contains_mem(node.rhs):
            self.data_expr(node.rhs)
            self.env[name] = _DATA
        else:
            try:
                self.env[name] = sympy.expand(self.int_expr(node.rhs, f"declaration of {name}"))
            except UnsupportedKernelError:
                # an integer computed from data: fine unless used as an index
                self.data_expr(node.rhs)
                self.env[name] = _DATA

    def body_statement(self, node: Any) -> None:
        match node:
            case _st.PsDeclaration():
                self.declare(node)
            case _st.PsAssignment():
                lhs = node.lhs
                if isinstance(lhs, (_ex.PsMemAcc, _ex.PsBufferAcc)):
                    self.data_expr(node.rhs)
                    self.mem_access(lhs, "store")
                elif isinstance(lhs, _ex.PsSymbolExpr):
                    raise self.unsupported(
                        f"re-assignment of the local variable {lhs.symbol.name}",
                        "accumulating into a variable (a reduction) makes the kernel's result depend on "
                        "other threads; pystencils emits it for reduction assignments",
                    )
                else:
                    raise self.unsupported(f"assignment to {_node_name(lhs)}")
            case _st.PsBlock():
                for stmt in node.statements:
                    self.body_statement(stmt)
            case _st.PsConditional():
                raise self.unsupported(
                    "conditional branch inside the kernel body",
                    "data- or position-dependent control flow (e.g. flag fields, boundary handling)",
                )
            case _st.PsLoop():
                self.unroll(node)
            case _st.PsComment() | _st.PsPragma():
                pass
            case _st.PsStatement():
                raise self.unsupported(
                    "expression statement (a function call for its side effect, e.g. an atomic "
                    "reduction write-back)",
                )
            case _:
                raise self.unsupported(f"AST node {_node_name(node)}")

    def unroll(self, loop: Any) -> None:
        name = loop.counter.symbol.name
        try:
            start = sympy.expand(self.int_expr(loop.start, f"start of loop {name}"))
            stop = sympy.expand(self.int_expr(loop.stop, f"stop of loop {name}"))
            step = sympy.expand(self.int_expr(loop.step, f"step of loop {name}"))
        except UnsupportedKernelError as exc:
            raise self.unsupported(f"loop over {name} with non-constant bounds", str(exc)) from None
        if not (start.is_Integer and stop.is_Integer and step.is_Integer and step > 0):
            raise self.unsupported(
                f"loop over {name} that cannot be unrolled",
                f"bounds {start}..{stop} step {step} are not integer constants "
                "(grid-strided loops and runtime trip counts are not modelled)",
            )
        iterations = range(int(start), int(stop), int(step))
        if len(iterations) > MAX_UNROLLED_ITERATIONS:
            raise self.unsupported(
                f"loop over {name} with {len(iterations)} iterations",
                f"at most {MAX_UNROLLED_ITERATIONS} iterations are unrolled",
            )
        saved = self.env.get(name)
        for value in iterations:
            self.env[name] = sympy.Integer(value)
            self.body_statement(loop.body)
        if saved is None:
            self.env.pop(name, None)
        else:
            self.env[name] = saved


def _contains_mem(expr: Any) -> bool:
    if isinstance(expr, (_ex.PsMemAcc, _ex.PsBufferAcc)):
        return True
    return any(_contains_mem(c) for c in expr.children)


# --------------------------------------------------------------------------------------------
# Folding: exact division of the thread's access multiset by the copy shifts
# --------------------------------------------------------------------------------------------

def _shift(access: tuple[str, str, tuple[sympy.Expr, ...]], axis: int, j: int
           ) -> tuple[str, str, tuple[sympy.Expr, ...]]:
    coord = COORDINATES[axis]
    return access[0], access[1], tuple(sympy.expand(e.xreplace({coord: coord + j})) for e in access[2])


def _axis_position(access: tuple[str, str, tuple[sympy.Expr, ...]], axis: int) -> int | None:
    coord = COORDINATES[axis]
    for e in access[2]:
        if e.coeff(coord) != 0:
            return int(e.subs({c: 0 for c in COORDINATES}))
    return None


def _unfold(items: list[tuple[str, str, tuple[sympy.Expr, ...]]], fold: Sequence[int],
            kernel_name: str) -> list[tuple[str, str, tuple[sympy.Expr, ...]]]:
    """Per-cell access multiset from a thread's (first-cell coordinates) access multiset."""
    current = Counter(items)
    for axis, k in enumerate(fold):
        if k == 1:
            continue
        result: Counter = Counter()
        pending = Counter(current)
        while pending:
            candidates = [a for a in pending if pending[a] > 0]
            if not candidates:
                break
            positions = {a: _axis_position(a, axis) for a in candidates}
            fixed = [a for a in candidates if positions[a] is None]
            if fixed:
                a = fixed[0]
                if pending[a] % k:
                    raise UnsupportedKernelError(
                        f"kernel {kernel_name!r}: folded by {k} along {_AXES[axis]}, but "
                        f"{pending[a]} accesses {a[0]}{list(a[2])} do not split into {k} copies"
                    )
                result[a] += pending[a] // k
                del pending[a]
                continue
            a = min(candidates, key=lambda c: (positions[c], str(c)))
            for j in range(k):
                shifted = _shift(a, axis, j)
                if pending.get(shifted, 0) <= 0:
                    raise UnsupportedKernelError(
                        f"kernel {kernel_name!r}: folded by {k} along {_AXES[axis]}, but the "
                        f"{a[1]} {a[0]}{list(a[2])} has no copy shifted by {j} cell(s); a folded "
                        "kernel must consist of k shifted copies of one update rule "
                        "(use pystencils_plugin.create_folded_kernel)"
                    )
                pending[shifted] -= 1
                if pending[shifted] == 0:
                    del pending[shifted]
            result[a] += 1
        current = result
    # keep first-occurrence program order of the thread's list
    ordered: list[tuple[str, str, tuple[sympy.Expr, ...]]] = []
    remaining = Counter(current)
    for item in items:
        if remaining.get(item, 0) > 0:
            ordered.append(item)
            remaining[item] -= 1
    return ordered


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------

def extract_kernel(kernel_function: Any, name: str | None = None, registers: int | None = None, *,
                   shapes: Mapping[str, Sequence[int]] | None = None,
                   layouts: Mapping[str, Sequence[int]] | None = None,
                   alignment_bytes: int | None = None,
                   arch: str = "sm_80",
                   compile_registers: bool = True,
                   contract_fma: bool = True) -> ExtractedKernel:
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

    Returns:
        :class:`ExtractedKernel` with the per-cell kernel (flops per cell, i.e. per thread
        divided by the folding factors) and the folding factors.

    Raises:
        UnsupportedKernelError: for constructs outside the model (the message names it).
    """
    from pystencils_plugin.registers import register_count  # local: registers imports extract

    body = getattr(kernel_function, "body", None)
    if body is None or not isinstance(body, _st.PsBlock):
        raise UnsupportedKernelError(
            f"expected a pystencils 2.x kernel with a typed AST body (ps.create_kernel result), "
            f"got {type(kernel_function).__name__}"
        )
    kname = name or _kernel_name(kernel_function)
    target = getattr(kernel_function, "target", None)
    if target is not None and not getattr(target, "is_gpu", lambda: True)():
        raise UnsupportedKernelError(
            f"kernel {kname!r} targets {target}; warpspeed models GPU kernels — create it with "
            "ps.CreateKernelConfig(target=ps.Target.CUDA) or Target.HIP"
        )
    walker = _Walker(kernel_name=kname, fields=_kernel_fields(kernel_function), shapes=dict(shapes or {}),
                     layouts=dict(layouts or {}), contract_fma=contract_fma)

    bounds: dict[int, int] | None = None
    for stmt in body.statements:
        match stmt:
            case _st.PsDeclaration(_ex.PsSymbolExpr(), _) if _CTR_RE.match(stmt.lhs.symbol.name):
                walker.declare_counter(int(_CTR_RE.match(stmt.lhs.symbol.name).group(1)), stmt.rhs)
            case _st.PsDeclaration():
                if _contains_mem(stmt.rhs):
                    raise walker.unsupported(f"memory access before the guard in the declaration of {stmt.lhs}")
                if _is_float(stmt.lhs) and not _is_const_decl(stmt):
                    raise walker.unsupported(
                        f"reduction (mutable accumulator {stmt.lhs.symbol.name} declared before the guard)",
                        "pystencils' *ReductionAssignment combines values of many cells",
                    )
                # hoisted constants (e.g. 1.0 / 3.0): folded by the compiler, no flops per cell
                walker.env[stmt.lhs.symbol.name] = _DATA if _is_float(stmt.lhs) else _try_int(walker, stmt)
            case _st.PsConditional() if bounds is None:
                if stmt.branch_false is not None:
                    raise walker.unsupported("guard with an else branch")
                bounds = walker.parse_guard(stmt.condition)
                walker.body_statement(stmt.branch_true)
            case _st.PsComment() | _st.PsPragma():
                pass
            case _st.PsBlock() | _st.PsStatement() if bounds is not None:
                raise walker.unsupported(
                    "code after the guard (a reduction write-back)",
                    "reductions (pystencils' *ReductionAssignment) are not modelled",
                )
            case _st.PsLoop():
                raise walker.unsupported(
                    f"loop over {stmt.counter.symbol.name} around the kernel body",
                    "grid-strided GPU indexing is not modelled; use the default Linear3D scheme",
                )
            case _:
                if _axes is not None and isinstance(stmt, _axes.PsIterationAxis | _axes.PsAxesCube):
                    raise walker.unsupported(f"iteration-axis node {_node_name(stmt)} (unlowered kernel)")
                raise walker.unsupported(f"AST node {_node_name(stmt)} at the top level of the kernel")
    if bounds is None:
        raise walker.unsupported("kernel without a bounds guard", "expected if (ctr_k < bound && ...)")
    if not walker.counters:
        raise walker.unsupported("kernel without ctr_k counter declarations")
    if set(bounds) != set(walker.counters):
        raise walker.unsupported(
            f"guard over counters {sorted(bounds)} but declarations of {sorted(walker.counters)}",
            "every counter needs an upper bound in the guard",
        )
    if not walker.accesses:
        raise walker.unsupported("kernel without field accesses")

    # domain and folding per warpspeed axis
    domain = [1, 1, 1]
    fold = [1, 1, 1]
    for k, (offset, f, axis) in walker.counters.items():
        extent = bounds[k] - offset
        if extent <= 0:
            raise walker.unsupported(f"empty iteration space along ctr_{k} ({offset} .. {bounds[k]})")
        if extent % f:
            raise UnsupportedKernelError(
                f"kernel {kname!r}: iteration extent {extent} along {_AXES[axis]} is not a multiple "
                f"of the folding factor {f}; the guard checks only the first of the {f} cells of a "
                "thread, so the last thread would update cells outside the domain — choose a "
                "domain whose extent is a multiple of the fold"
            )
        domain[axis] = extent
        fold[axis] = f
    used_axes = {axis for (_, _, axis) in walker.counters.values()}
    if used_axes != set(range(len(used_axes))):
        raise walker.unsupported(f"counters driven by threadIdx axes {sorted(_AXES[a] for a in used_axes)}",
                                 "expected x, (x, y) or (x, y, z)")

    items = [(a.field, a.kind, a.index) for a in walker.accesses]
    per_cell = _unfold(items, fold, kname) if prod(fold) > 1 else items
    seen: set = set()
    accesses: list[Access] = []
    for fname, kind, index in per_cell:
        key = (fname, kind, index)
        if key in seen:
            continue
        seen.add(key)
        accesses.append(load(fname, *index) if kind == "load" else store(fname, *index))

    order = list(dict.fromkeys(a.field for a in accesses))
    wfields = []
    for fname in order:
        geom = walker.geometry[fname]
        kwargs = {} if alignment_bytes is None else {"alignment_bytes": int(alignment_bytes)}
        wfields.append(Field(fname, geom.element_bytes, geom.shape,
                             layout=_layout_from_strides(geom.strides, geom.shape), **kwargs))

    cells = prod(fold)
    flops = FlopCounts(adds=walker.flops["adds"] / cells, muls=walker.flops["muls"] / cells,
                       fmas=walker.flops["fmas"] / cells, divs=walker.flops["divs"] / cells)
    stored = [walker.geometry[a.field].dtype for a in accesses if a.is_store]
    float_types = [t for t in stored + [g.dtype for g in walker.geometry.values()] if t.startswith("float")]
    dtype = float_types[0] if float_types else "float64"

    source = kernel_function.get_c_code()
    if registers is not None:
        reg, reg_source, detail = int(registers), "given", "registers passed by the caller"
    else:
        distinct_loads = len({(a.field, a.index) for a in walker.accesses if a.kind == "load"})
        element_bytes = max(g.element_bytes for g in walker.geometry.values())
        counted = register_count(kernel_function, arch=arch, compile=compile_registers, source=source,
                                 per_thread_loads=distinct_loads, element_bytes=element_bytes)
        reg, reg_source, detail = counted.registers, counted.source, counted.detail

    kernel = Kernel(name=kname, fields=tuple(wfields), accesses=tuple(accesses),
                    domain=tuple(domain), flops=flops, dtype=dtype, registers=reg)  # type: ignore[arg-type]
    ndims = len(walker.counters)
    thread_axes = tuple(_AXES[walker.counters[k][2]] for k in range(ndims) if k in walker.counters)
    specials = tuple(sorted((n, c / cells) for n, c in walker.specials.items()))
    return ExtractedKernel(kernel=kernel, fold=tuple(fold), registers_source=reg_source,  # type: ignore[arg-type]
                           source=source, registers_detail=detail, special_functions=specials,
                           thread_axes=thread_axes)


def _is_const_decl(stmt: Any) -> bool:
    dtype = getattr(stmt.lhs.symbol, "dtype", None)
    return bool(getattr(dtype, "const", False))


def _try_int(walker: _Walker, stmt: Any) -> Any:
    try:
        return sympy.expand(walker.int_expr(stmt.rhs, f"declaration of {stmt.lhs.symbol.name}"))
    except UnsupportedKernelError:
        return _DATA
