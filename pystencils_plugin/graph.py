"""The pipeline model's operations from the typed AST of a pystencils 2.x GPU kernel.

Walks the kernel body like :mod:`pystencils_plugin.walker` and emits one
:class:`warpspeed.pipeline.graph.Operation` per source-level instruction (Cornelis, Lemeire:
"The Pipeline Performance Model: A Generic Executable Performance Model for GPUs", PDP 2019,
section III.C). pystencils' canonical form declares every symbol once, so symbol def-use gives
the data dependences:

======================================  =====================================================
AST construct                           operation
======================================  =====================================================
declaration of a counter ``ctr_k``      one ``index`` (int) operation
integer declaration using counters      one ``index`` operation reading them
comparison of the bounds guard          one ``compare`` operation per comparison, read by
                                        nothing (the guard has no edges into the body)
field read (``PsMemAcc``/``PsBufferAcc``) ``load`` reading the index operations of its
                                        address; the same address read twice is one load
``PsAdd``/``PsSub``, ``PsMul``,         ``add``, ``mul``, ``div`` of the expression's
``PsDiv`` (floating point)              precision; an addition of an unfused product is one
                                        ``fma`` (the extractor's contraction rule, so the
                                        counts equal ``Kernel.flops``)
``fma`` call; other calls (``sqrt``...) ``fma``; ``sfu``
``PsNeg``, ``PsCast``, constants        no operation (operand modifiers, folded constants)
assignment to a field                   ``store`` reading the value and the address
constant-bound loop                     its body once per iteration (unrolled)
======================================  =====================================================

Folded kernels need nothing special: pystencils emits the assignments once per folded cell.
The list is attached to the kernel's code record (``KernelCode.operations``) by
:func:`pystencils_plugin.extract.extract_kernel`, so the core never imports this plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field as dc_field
from typing import Any

from pystencils.backend.ast import expressions as _ex
from pystencils.backend.ast import structural as _st

from pystencils_plugin.indices import CTR_RE, _symbol_field_property, is_float, node_name
from pystencils_plugin.walker import _FMA_NAMES
from warpspeed.errors import UnsupportedKernelError
from warpspeed.pipeline.graph import Operation, check_operations

#: pystencils' relational expression classes (the guard's comparisons).
_RELATIONS = tuple(getattr(_ex, n) for n in ("PsLt", "PsLe", "PsGt", "PsGe", "PsEq", "PsNe") if hasattr(_ex, n))
#: Width in bits -> the dtype names warpspeed uses.
_PRECISION_BY_WIDTH = {64: "float64", 32: "float32", 16: "float16"}
#: What a load label keeps of the address: strides and the data-pointer prefix dropped.
_STRIDE_TERM = re.compile(r"\s*\*\s*_stride_\w+")
#: pystencils prints a typed constant as ``[1: int64]``; a label keeps the number.
_TYPED_CONSTANT = re.compile(r"\[(-?[\d.]+): \w+\]")


@dataclass(frozen=True)
class _Product:
    """An unfused floating-point product not emitted yet (an enclosing addition may fuse it)."""

    inputs: tuple[int, ...]
    precision: str | None


def _precision(expr: Any) -> str | None:
    width = getattr(getattr(expr, "dtype", None), "width", None)
    return _PRECISION_BY_WIDTH.get(width)


def _const_int(expr: Any, what: str) -> int:
    value = getattr(getattr(expr, "constant", None), "value", None)
    if value is None:
        raise UnsupportedKernelError(f"pipeline graph: {what} is not an integer constant ({expr})")
    return int(value)


@dataclass
class GraphBuilder:
    """Builds the operation list of one kernel body (see the module docstring)."""

    ops: list[Operation] = dc_field(default_factory=list)
    symbols: dict[str, int | None] = dc_field(default_factory=dict)
    loads: dict[tuple[str, str], int] = dc_field(default_factory=dict)

    def emit(self, kind: str, inputs: Any = (), precision: str | None = None, field: str | None = None,
             label: str = "") -> int:
        refs = tuple(sorted({i for i in inputs if i is not None}))
        self.ops.append(Operation(kind, refs, precision, field, label or kind))
        return len(self.ops) - 1

    # ---- integers: index arithmetic and the guard ---------------------------------------------
    def refs(self, expr: Any) -> set[int]:
        """The operations whose results the integer expression ``expr`` reads."""
        if isinstance(expr, _ex.PsSymbolExpr):
            ref = self.symbols.get(expr.symbol.name)
            return set() if ref is None else {ref}
        found: set[int] = set()
        for child in getattr(expr, "children", ()):
            found |= self.refs(child)
        return found

    def integer(self, name: str, rhs: Any) -> None:
        refs = self.refs(rhs)
        self.symbols[name] = self.emit("index", refs, label=name) if refs else None

    def guard(self, condition: Any) -> None:
        if isinstance(condition, _RELATIONS):
            self.emit("compare", self.refs(condition), label=f"guard {condition}")
            return
        for child in getattr(condition, "children", ()):
            self.guard(child)

    # ---- values --------------------------------------------------------------------------------
    def materialize(self, value: int | _Product | None) -> int | None:
        if isinstance(value, _Product):
            return self.emit("mul", value.inputs, value.precision, label="mul")
        return value

    def load(self, expr: Any) -> int:
        pointer = expr.pointer if isinstance(expr, _ex.PsMemAcc) else getattr(expr, "base_pointer", None)
        prop = _symbol_field_property(getattr(pointer, "symbol", None), "ptr")
        if prop is None or prop[0] is None:
            raise UnsupportedKernelError(f"pipeline graph: memory access {expr} belongs to no field")
        name = prop[0].name
        address = expr.offset if isinstance(expr, _ex.PsMemAcc) else expr.index
        key = (name, str(address))
        if key not in self.loads:
            address_text = _TYPED_CONSTANT.sub(r"\1", _STRIDE_TERM.sub("", key[1]))
            label = f"load {name}[{address_text}]"
            self.loads[key] = self.emit("load", self.refs(address if not isinstance(address, (list, tuple))
                                                          else _Children(address)), field=name, label=label)
        return self.loads[key]

    def value(self, expr: Any) -> int | _Product | None:
        """The operation producing ``expr`` (None for constants and parameters; a pending product
        for an unfused floating-point multiplication)."""
        match expr:
            case _ex.PsMemAcc() | _ex.PsBufferAcc():
                return self.load(expr)
            case _ex.PsConstantExpr() | _ex.PsLiteralExpr():
                return None
            case _ex.PsSymbolExpr():
                return self.symbols.get(expr.symbol.name)
            case _ex.PsAdd() | _ex.PsSub() if is_float(expr):
                a, b = self.value(expr.operand1), self.value(expr.operand2)
                if isinstance(a, _Product) or isinstance(b, _Product):
                    product, other = (a, b) if isinstance(a, _Product) else (b, a)
                    return self.emit("fma", (*product.inputs, self.materialize(other)), _precision(expr), label="fma")
                return self.emit("add", (a, b), _precision(expr), label="add")
            case _ex.PsMul() if is_float(expr):
                a = self.materialize(self.value(expr.operand1))
                b = self.materialize(self.value(expr.operand2))
                return _Product(tuple(i for i in (a, b) if i is not None), _precision(expr))
            case _ex.PsDiv() if is_float(expr):
                a = self.materialize(self.value(expr.operand1))
                b = self.materialize(self.value(expr.operand2))
                return self.emit("div", (a, b), _precision(expr), label="div")
            case _ex.PsCall():
                fname = str(getattr(expr.function, "name", expr.function))
                args = [self.materialize(self.value(a)) for a in expr.args]
                if fname in _FMA_NAMES:
                    return self.emit("fma", args, _precision(expr), label=fname)
                return self.emit("sfu", args, _precision(expr), label=fname)
            case _ex.PsNeg() | _ex.PsCast():
                return self.materialize(self.value(expr.children[0]))
            case _:
                inputs = [self.materialize(self.value(c)) for c in getattr(expr, "children", ())]
                if any(i is not None for i in inputs):
                    kind = "other" if is_float(expr) else "index"
                    return self.emit(kind, inputs, label=node_name(expr))
                return None

    # ---- statements ----------------------------------------------------------------------------
    def top(self, body: Any) -> None:
        for stmt in body.statements:
            match stmt:
                case _st.PsDeclaration() if CTR_RE.match(stmt.lhs.symbol.name):
                    name = stmt.lhs.symbol.name
                    self.symbols[name] = self.emit("index", label=f"{name} = block index x block size + thread index")
                case _st.PsDeclaration():
                    if is_float(stmt.lhs):
                        self.symbols[stmt.lhs.symbol.name] = None  # a hoisted constant, folded
                    else:
                        self.integer(stmt.lhs.symbol.name, stmt.rhs)
                case _st.PsConditional():
                    self.guard(stmt.condition)
                    self.statement(stmt.branch_true)
                case _st.PsComment() | _st.PsPragma():
                    pass
                case _:
                    raise UnsupportedKernelError(f"pipeline graph: AST node {node_name(stmt)} at the top level")

    def statement(self, node: Any) -> None:
        match node:
            case _st.PsBlock():
                for stmt in node.statements:
                    self.statement(stmt)
            case _st.PsDeclaration():
                name = node.lhs.symbol.name
                if is_float(node.lhs) or any(True for _ in _memory_reads(node.rhs)):
                    self.symbols[name] = self.materialize(self.value(node.rhs))
                else:
                    self.integer(name, node.rhs)
            case _st.PsAssignment() if isinstance(node.lhs, (_ex.PsMemAcc, _ex.PsBufferAcc)):
                value = self.materialize(self.value(node.rhs))
                lhs = node.lhs
                pointer = lhs.pointer if isinstance(lhs, _ex.PsMemAcc) else getattr(lhs, "base_pointer", None)
                prop = _symbol_field_property(getattr(pointer, "symbol", None), "ptr")
                name = prop[0].name if prop and prop[0] is not None else None
                address = lhs.offset if isinstance(lhs, _ex.PsMemAcc) else _Children(lhs.index)
                self.emit("store", (value, *self.refs(address)), field=name, label=f"store {name}")
            case _st.PsLoop():
                counter = node.counter.symbol.name
                start = _const_int(node.start, f"start of loop {counter}")
                stop = _const_int(node.stop, f"stop of loop {counter}")
                step = _const_int(node.step, f"step of loop {counter}")
                for _ in range(start, stop, step):
                    self.symbols[counter] = None
                    self.statement(node.body)
            case _st.PsComment() | _st.PsPragma():
                pass
            case _:
                raise UnsupportedKernelError(f"pipeline graph: AST node {node_name(node)} in the kernel body")


@dataclass(frozen=True)
class _Children:
    """A tuple of index expressions seen as one expression (for :meth:`GraphBuilder.refs`)."""

    children: tuple[Any, ...]

    def __init__(self, items: Any) -> None:
        object.__setattr__(self, "children", tuple(items))


def _memory_reads(expr: Any):
    if isinstance(expr, (_ex.PsMemAcc, _ex.PsBufferAcc)):
        yield expr
    for child in getattr(expr, "children", ()):
        yield from _memory_reads(child)


def kernel_operations(kernel_function: Any) -> tuple[Operation, ...]:
    """The operations of one thread of a pystencils GPU kernel (``ps.create_kernel`` result), in
    program order. Raises :class:`~warpspeed.errors.UnsupportedKernelError` for constructs the
    graph does not model."""
    body = getattr(kernel_function, "body", None)
    if not isinstance(body, _st.PsBlock):
        raise UnsupportedKernelError(f"pipeline graph: expected a pystencils kernel with a typed AST body, "
                                     f"got {type(kernel_function).__name__}")
    builder = GraphBuilder()
    builder.top(body)
    return check_operations(tuple(builder.ops))
