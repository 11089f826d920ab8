"""Index expressions of a pystencils 2.x typed AST: counters, guard, field accesses.

:class:`IndexWalker` evaluates integer-valued AST expressions as sympy (loop counters
``ctr_k`` stay symbols), reads the thread -> cell mapping from the counter declarations
``ctr_k = offset + f * (blockIdx.a * blockDim.a + threadIdx.a)``, the iteration bounds from
the guard ``if (ctr_k < bound && ...)``, and turns every memory access into an N-D index
into its field (in warpspeed cell coordinates ``x, y, z`` of the thread's first cell).
:class:`pystencils_plugin.walker.KernelWalker` adds the value expressions and statements.

Anything else in an index (a value loaded from memory, a runtime parameter, a float) raises
:class:`warpspeed.errors.UnsupportedKernelError` naming the construct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field as dc_field
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from pystencils.backend.ast import expressions as _ex
from pystencils_plugin.geometry import FieldGeometry, field_geometry
from warpspeed.errors import UnsupportedKernelError
from warpspeed.kernel.description import COORDINATES

#: Names of the CUDA/HIP built-in index variables as pystencils prints them.
_GPU_INDEX_RE = re.compile(r"^(blockIdx|blockDim|threadIdx)\.([xyz])$")
CTR_RE = re.compile(r"^ctr_(\d+)$")
_SIZE_RE = re.compile(r"^_size_(.+)_(\d+)$")
_STRIDE_RE = re.compile(r"^_stride_(.+)_(\d+)$")
AXES = "xyz"

#: Marker value of a symbol whose value depends on loaded data (not usable in an index).
DATA = object()


def node_name(node: object) -> str:
    """The AST node's class name, for messages."""
    return type(node).__name__


def is_float(expr: Any) -> bool:
    """Whether a typed expression has a floating-point type."""
    dtype = getattr(expr, "dtype", None)
    if dtype is None:
        return False
    from pystencils.types import PsIeeeFloatType

    return isinstance(dtype, PsIeeeFloatType)


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


@dataclass
class RawAccess:
    """One memory access of a thread: field, ``'load'``/``'store'``, N-D index in first-cell
    coordinates of the thread."""

    field: str
    kind: str
    index: tuple[sympy.Expr, ...]


@dataclass
class IndexWalker:
    """State of one kernel walk: field geometry, symbol values, counters and accesses found."""

    kernel_name: str
    fields: Mapping[str, Any]
    shapes: Mapping[str, Sequence[int]]
    layouts: Mapping[str, Sequence[int]]
    geometry: dict[str, FieldGeometry] = dc_field(default_factory=dict)
    env: dict[str, Any] = dc_field(default_factory=dict)  # symbol name -> sympy expr or DATA
    accesses: list[RawAccess] = dc_field(default_factory=list)
    counters: dict[int, tuple[int, int, int]] = dc_field(default_factory=dict)  # k -> (offset, fold, axis)

    # ---- errors --------------------------------------------------------------------------
    def unsupported(self, construct: str, detail: str = "") -> UnsupportedKernelError:
        msg = (f"kernel {self.kernel_name!r}: {construct} is outside warpspeed's model"
               + (f" ({detail})" if detail else "")
               + "; supported are straight-line stencil updates: field accesses with affine "
                 "indices of the loop counters, one bounds guard, constant-bound loops")
        return UnsupportedKernelError(msg)

    # ---- geometry ------------------------------------------------------------------------
    def field_geometry(self, name: str) -> FieldGeometry:
        if name not in self.geometry:
            if name not in self.fields:
                raise self.unsupported(f"memory access through pointer of unknown field {name!r}")
            self.geometry[name] = field_geometry(self.fields[name], self.shapes, self.layouts)
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
                if CTR_RE.match(name) and name not in self.env:
                    return sympy.Symbol(name, integer=True)
                if name in self.env:
                    value = self.env[name]
                    if value is DATA:
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
                if is_float(expr.operand):
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
                raise self.unsupported(f"AST node {node_name(expr)} in {what}")

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
        axis = AXES.index(a)
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
                    m = CTR_RE.match(node.operand1.symbol.name)
                    bound = sympy.expand(self.int_expr(node.operand2, "the guard"))
                    if not m or not bound.is_Integer:
                        raise self.unsupported(f"guard condition {node}",
                                               "expected ctr_k < constant, as emitted by the Linear3D GPU indexing scheme")
                    bounds[int(m.group(1))] = int(bound)
                case _:
                    raise self.unsupported(
                        f"guard condition {node_name(node)}",
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
            raise self.unsupported(f"memory access through a computed pointer ({node_name(pointer)})")
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
        self.accesses.append(RawAccess(field=fname, kind=kind, index=index))

    def decompose(self, geom: FieldGeometry, linear: sympy.Expr, what: str) -> tuple[sympy.Expr, ...]:
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

