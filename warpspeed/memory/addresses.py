"""Exact evaluation of address expressions, and the threads and cells of a thread block.

:func:`compile_kernel` turns every access of a :class:`~warpspeed.kernel.Kernel` into a numpy
function of the cell coordinates that returns integer byte addresses. Integer division is
evaluated exactly (``floor_divide`` on int64, never through floating point), so the
block-level counters agree with brute-force enumeration bit for bit. Compile once per kernel
and reuse the result across launch configurations.

:func:`isl_expr` prints an expression in ISL's syntax for the wave-level sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from math import lcm
from typing import Callable

import numpy as np
import sympy

from warpspeed.errors import KernelError
from warpspeed.kernel.description import COORDINATES, Access, Field, Kernel, byte_address
from warpspeed.launch.geometry import Launch

Evaluator = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _denominator_lcm(expr: sympy.Expr) -> int:
    """LCM of the denominators of the rational coefficients at this level of ``expr``
    (nested floor/Mod terms are integers and are not looked into)."""
    dens = [1]
    for term in sympy.Add.make_args(expr):
        coeff, _ = term.as_coeff_Mul()
        if coeff.is_Rational:
            dens.append(int(coeff.q))
    return reduce(lcm, dens)


def _compile(expr: sympy.Expr) -> Callable[[dict], np.ndarray | int]:
    """A closure evaluating an integer-valued quasi-affine expression on int64 arrays."""
    if expr.is_Integer:
        value = int(expr)
        return lambda env: value
    if expr.is_Symbol:
        return lambda env: env[expr]
    if isinstance(expr, sympy.Add):
        parts = [_compile(a) for a in expr.args]
        return lambda env: sum((p(env) for p in parts[1:]), parts[0](env))
    if isinstance(expr, sympy.Mul):
        coeff, rest = expr.as_coeff_Mul()
        if not coeff.is_Integer:
            raise KernelError(f"non-integer coefficient {coeff} outside floor() in {expr}")
        inner = _compile(rest)
        c = int(coeff)
        return lambda env: c * inner(env)
    if isinstance(expr, sympy.floor):
        arg = expr.args[0]
        denom = _denominator_lcm(arg)
        numerator = sympy.expand(arg * denom)
        num = _compile(numerator)
        return lambda env: np.floor_divide(num(env), denom)
    if isinstance(expr, sympy.Mod):
        value, modulus = expr.args
        inner = _compile(value)
        m = int(modulus)
        return lambda env: np.mod(inner(env), m)
    raise KernelError(f"cannot evaluate {expr} ({type(expr).__name__}); only quasi-affine expressions are allowed")


def evaluator(expr: sympy.Expr) -> Evaluator:
    """A numpy function ``f(x, y, z) -> int64 array`` evaluating ``expr`` exactly."""
    compiled = _compile(sympy.sympify(expr))
    x, y, z = COORDINATES

    def evaluate(xs: np.ndarray, ys: np.ndarray, zs: np.ndarray) -> np.ndarray:
        result = compiled({x: xs, y: ys, z: zs})
        return np.broadcast_to(np.asarray(result, dtype=np.int64), np.shape(xs))

    return evaluate


def isl_expr(expr: sympy.Expr) -> str:
    """``expr`` in ISL syntax (integer coefficients, ``floor((...)/c)``, ``((...) mod c)``)."""
    if expr.is_Integer or expr.is_Symbol:
        return str(expr)
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(isl_expr(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        coeff, rest = expr.as_coeff_Mul()
        return f"({int(coeff)} * {isl_expr(rest)})"
    if isinstance(expr, sympy.floor):
        arg = expr.args[0]
        denom = _denominator_lcm(arg)
        return f"floor({isl_expr(sympy.expand(arg * denom))} / {denom})"
    if isinstance(expr, sympy.Mod):
        value, modulus = expr.args
        return f"({isl_expr(value)} mod {int(modulus)})"
    raise KernelError(f"cannot express {expr} in ISL syntax")


@dataclass(frozen=True)
class CompiledAccess:
    """An access with its field and its exact byte-address evaluator."""

    access: Access
    field: Field
    address_expr: sympy.Expr  # byte address
    address: Evaluator  # byte address as int64


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel with every access compiled; build once, reuse for every configuration."""

    kernel: Kernel
    accesses: tuple[CompiledAccess, ...]

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.kernel.fields)


def compile_kernel(kernel: Kernel) -> CompiledKernel:
    """Compile every access of ``kernel`` into exact numpy evaluators."""
    compiled = []
    for access in kernel.accesses:
        f = kernel.field(access.field)
        expr = sympy.expand(byte_address(f, access))
        compiled.append(CompiledAccess(
            access=access, field=f, address_expr=expr, address=evaluator(expr),
        ))
    return CompiledKernel(kernel=kernel, accesses=tuple(compiled))


@dataclass(frozen=True)
class BlockCells:
    """The cells one thread block updates, in warp-lane order.

    ``x, y, z`` and ``valid`` have shape ``(folds, threads)``: one row per fold offset
    ``j = (jx, jy, jz)`` (x fastest), one column per thread in linear thread order
    (``threadIdx.x`` fastest), so consecutive groups of ``warp_size`` columns are warps.
    ``valid`` is the kernel's guard: the cell lies inside the iteration domain.
    """

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    valid: np.ndarray

    @property
    def lups(self) -> int:
        """Cells the block updates (valid cells), i.e. lattice updates."""
        return int(self.valid.sum())


def middle_block(launch: Launch) -> tuple[int, int, int]:
    """Block index of the representative block in the middle of the grid."""
    return tuple(g // 2 for g in launch.grid)  # type: ignore[return-value]


def block_cells(launch: Launch, block_index: tuple[int, int, int] | None = None) -> BlockCells:
    """Cells of the block ``block_index`` (default: the middle block) per fold offset and thread."""
    bidx = middle_block(launch) if block_index is None else block_index
    bx, by, bz = launch.block
    tz, ty, tx = np.meshgrid(np.arange(bz), np.arange(by), np.arange(bx), indexing="ij")
    threads = [t.ravel() for t in (tx, ty, tz)]
    jz, jy, jx = np.meshgrid(*(np.arange(f) for f in reversed(launch.fold)), indexing="ij")
    folds = [j.ravel() for j in (jx, jy, jz)]
    coords = []
    for d in range(3):
        thread_global = bidx[d] * launch.block[d] + threads[d]
        coords.append(thread_global[None, :] * launch.fold[d] + folds[d][:, None])
    valid = np.ones(coords[0].shape, dtype=bool)
    for d in range(3):
        valid &= coords[d] < launch.domain[d]
    return BlockCells(x=coords[0].astype(np.int64), y=coords[1].astype(np.int64),
                      z=coords[2].astype(np.int64), valid=valid)


def block_addresses(compiled: CompiledKernel, cells: BlockCells) -> np.ndarray:
    """Byte addresses, shape ``(accesses, folds, threads)``, int64 (guard not applied)."""
    return np.stack([a.address(cells.x, cells.y, cells.z) for a in compiled.accesses])

