"""Walk the typed AST of a pystencils 2.x GPU kernel: loads, stores and flops per thread.

:class:`KernelWalker` extends :class:`pystencils_plugin.indices.IndexWalker` with the value
side of the kernel: it records one load per field element read and one store per element
written (index in the thread's first-cell coordinates), counts floating-point operations
(``a * b + c`` in one expression as one FMA when ``contract_fma``, as nvcc contracts by
default with ``--fmad=true``), unrolls constant-bound loops, and rejects constructs outside
warpspeed's model (data-dependent branches and accesses, reductions, unknown nodes) with
:class:`warpspeed.errors.UnsupportedKernelError`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field as dc_field
from typing import Any

import sympy

from pystencils.backend.ast import expressions as _ex
from pystencils.backend.ast import structural as _st
from pystencils_plugin.indices import CTR_RE, DATA, IndexWalker, is_float, node_name
from warpspeed.errors import UnsupportedKernelError

try:  # iteration-axis nodes exist in pystencils 2.0's AST module; guard for other versions
    from pystencils.backend.ast import axes as _axes
except ImportError:  # pragma: no cover
    _axes = None

#: Maximum number of iterations of a constant-bound loop inside the kernel body that the
#: extractor unrolls; longer loops are rejected (they would make the per-cell access list
#: huge and are not what pystencils emits for stencil sweeps).
MAX_UNROLLED_ITERATIONS = 1024

#: Math functions that compile to one FMA instruction.
_FMA_NAMES = {"fma", "fmaf", "__fma_rn"}


@dataclass
class KernelWalker(IndexWalker):
    """An :class:`IndexWalker` that also walks values and statements (flops, special calls)."""

    contract_fma: bool = True
    flops: Counter = dc_field(default_factory=Counter)
    specials: Counter = dc_field(default_factory=Counter)

    # ---- the kernel's top level: counters, hoisted constants, the guard ------------------------
    def walk_kernel(self, body: Any) -> dict[int, int]:
        """Walk the kernel body's top-level statements; return the guard's ``{k: bound}``."""
        bounds: dict[int, int] | None = None
        for stmt in body.statements:
            match stmt:
                case _st.PsDeclaration(_ex.PsSymbolExpr(), _) if CTR_RE.match(stmt.lhs.symbol.name):
                    self.declare_counter(int(CTR_RE.match(stmt.lhs.symbol.name).group(1)), stmt.rhs)
                case _st.PsDeclaration():
                    self.declare_before_guard(stmt)
                case _st.PsConditional() if bounds is None:
                    if stmt.branch_false is not None:
                        raise self.unsupported("guard with an else branch")
                    bounds = self.parse_guard(stmt.condition)
                    self.body_statement(stmt.branch_true)
                case _st.PsComment() | _st.PsPragma():
                    pass
                case _st.PsBlock() | _st.PsStatement() if bounds is not None:
                    raise self.unsupported(
                        "code after the guard (a reduction write-back)",
                        "reductions (pystencils' *ReductionAssignment) are not modelled",
                    )
                case _st.PsLoop():
                    raise self.unsupported(
                        f"loop over {stmt.counter.symbol.name} around the kernel body",
                        "grid-strided GPU indexing is not modelled; use the default Linear3D scheme",
                    )
                case _:
                    if _axes is not None and isinstance(stmt, _axes.PsIterationAxis | _axes.PsAxesCube):
                        raise self.unsupported(f"iteration-axis node {node_name(stmt)} (unlowered kernel)")
                    raise self.unsupported(f"AST node {node_name(stmt)} at the top level of the kernel")
        if bounds is None:
            raise self.unsupported("kernel without a bounds guard", "expected if (ctr_k < bound && ...)")
        return bounds

    def declare_before_guard(self, stmt: Any) -> None:
        """A declaration ahead of the guard: a hoisted constant (e.g. ``1.0 / 3.0``, folded by
        the compiler: no flops per cell) or an integer; loads and accumulators are rejected."""
        if _contains_mem(stmt.rhs):
            raise self.unsupported(f"memory access before the guard in the declaration of {stmt.lhs}")
        name = stmt.lhs.symbol.name
        if is_float(stmt.lhs):
            if not _is_const_decl(stmt):
                raise self.unsupported(
                    f"reduction (mutable accumulator {name} declared before the guard)",
                    "pystencils' *ReductionAssignment combines values of many cells",
                )
            self.env[name] = DATA
            return
        try:
            self.env[name] = sympy.expand(self.int_expr(stmt.rhs, f"declaration of {name}"))
        except UnsupportedKernelError:
            self.env[name] = DATA

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
                if is_float(expr):
                    if self.contract_fma and (fused1 or fused2):
                        self.flops["muls"] -= 1
                        self.flops["fmas"] += 1
                    else:
                        self.flops["adds"] += 1
                return False
            case _ex.PsMul():
                self.data_expr(expr.operand1)
                self.data_expr(expr.operand2)
                if is_float(expr):
                    self.flops["muls"] += 1
                    return True
                return False
            case _ex.PsDiv():
                self.data_expr(expr.operand1)
                self.data_expr(expr.operand2)
                if is_float(expr):
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
                raise self.unsupported(f"AST node {node_name(expr)}")

    # ---- statements ----------------------------------------------------------------------------
    def declare(self, node: Any) -> None:
        lhs = node.lhs
        if not isinstance(lhs, _ex.PsSymbolExpr):
            raise self.unsupported(f"declaration of {node_name(lhs)}")
        name = lhs.symbol.name
        if is_float(lhs) or _contains_mem(node.rhs):
            self.data_expr(node.rhs)
            self.env[name] = DATA
        else:
            try:
                self.env[name] = sympy.expand(self.int_expr(node.rhs, f"declaration of {name}"))
            except UnsupportedKernelError:
                # an integer computed from data: fine unless used as an index
                self.data_expr(node.rhs)
                self.env[name] = DATA

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
                    raise self.unsupported(f"assignment to {node_name(lhs)}")
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
                raise self.unsupported(f"AST node {node_name(node)}")

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


def _is_const_decl(stmt: Any) -> bool:
    dtype = getattr(stmt.lhs.symbol, "dtype", None)
    return bool(getattr(dtype, "const", False))
