"""Exact evaluation of address expressions, and the threads and cells of a thread block.

:func:`compile_kernel` turns every access of a :class:`~warpspeed.kernel.Kernel` into a numpy
function of the cell coordinates that returns integer byte addresses. Integer division is
evaluated exactly (``floor_divide`` on int64, never through floating point), so the
block-level counters agree with brute-force enumeration bit for bit. Compile once per kernel
and reuse the result across launch configurations.

:func:`instruction_lanes` gives the lanes on which each (access, fold copy) issues a memory
instruction. A thread that updates several cells (thread folding) runs one copy of the update
per cell; loads of a read-only field whose address is the same in two copies (for a star stencil
folded along y, the neighbour ``y + 1`` of the first cell is the centre of the second) are one
load in the compiled code: the fields a kernel only reads are ``const __restrict__`` pointers,
so the compiler merges the identical loads. Loads of a field the kernel also stores, and stores,
are never merged (a store between two loads may change the value).

:func:`isl_expr` prints an expression in ISL's syntax for the wave-level sets.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from functools import cached_property, reduce
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
    compiled = _compile(sympy.sympify(expr, strict=True))  # strict: a string is refused, never parsed
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
    """An access with its field and its exact byte-address evaluator.

    ``linear`` holds the integer coefficients of x, y, z and ``constant`` the constant term when
    the byte address is affine (bytes per cell, bytes); ``linear`` is ``None`` for quasi-affine
    addresses (floor, Mod).
    """

    access: Access
    field: Field
    address_expr: sympy.Expr  # byte address
    address: Evaluator  # byte address as int64
    linear: tuple[int, int, int] | None = None
    constant: int = 0


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel with every access compiled; build once, reuse for every configuration."""

    kernel: Kernel
    accesses: tuple[CompiledAccess, ...]

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.kernel.fields)

    @cached_property
    def field_accesses(self) -> tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]:
        """``(field name, load indices, store indices)`` for every field of the kernel, in field
        order: the accesses of each field split by direction, found once per kernel."""
        out = []
        for name in self.field_names:
            idx = [i for i, a in enumerate(self.accesses) if a.field.name == name]
            out.append((name, tuple(i for i in idx if not self.accesses[i].access.is_store),
                        tuple(i for i in idx if self.accesses[i].access.is_store)))
        return tuple(out)

    @cached_property
    def load_mask(self) -> tuple[np.ndarray, tuple[int, ...]]:
        """``(is_load, loads)``: True for every load access ``(n,)`` bool, and the loads' indices."""
        is_load = np.array([not a.access.is_store for a in self.accesses], dtype=bool)
        return is_load, tuple(np.flatnonzero(is_load).tolist())

    @cached_property
    def field_ids(self) -> tuple[np.ndarray, int]:
        """``(field_id, fields)``: each access's field as an index in order of first access
        ``(n,)`` int64, and the number of fields accessed."""
        fields = {name: k for k, name in enumerate(dict.fromkeys(a.field.name for a in self.accesses))}
        return np.array([fields[a.field.name] for a in self.accesses], dtype=np.int64), len(fields)

    @cached_property
    def affine(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(index, linear, constant)``: the accesses with affine addresses, their coefficients of
        x, y, z ``(n, 3)`` and constants ``(n,)`` (bytes), for :func:`block_addresses`."""
        index = [i for i, a in enumerate(self.accesses) if a.linear is not None]
        linear = np.array([self.accesses[i].linear for i in index], dtype=np.int64).reshape(-1, 3)
        constant = np.array([self.accesses[i].constant for i in index], dtype=np.int64)
        return np.array(index, dtype=np.int64), linear, constant


def _affine_parts(expr: sympy.Expr) -> tuple[tuple[int, int, int] | None, int]:
    """Integer coefficients of x, y, z and the constant of an affine ``expr``; ``(None, 0)`` otherwise."""
    terms = expr.as_coefficients_dict()  # an expanded sum: its terms without coefficients
    if all(coeff.is_Integer and (term == 1 or term in COORDINATES) for term, coeff in terms.items()):
        return (tuple(int(terms.get(c, 0)) for c in COORDINATES),  # type: ignore[return-value]
                int(terms.get(sympy.S.One, 0)))
    if not expr.is_polynomial(*COORDINATES):
        return None, 0
    poly = sympy.Poly(expr, *COORDINATES)
    if poly.total_degree() > 1 or not all(c.is_Integer for c in poly.coeffs()):
        return None, 0
    linear = tuple(int(poly.coeff_monomial(c)) for c in COORDINATES)
    return linear, int(poly.coeff_monomial(1))  # type: ignore[return-value]


def compile_kernel(kernel: Kernel) -> CompiledKernel:
    """Compile every access of ``kernel`` into exact numpy evaluators."""
    compiled = []
    for access in kernel.accesses:
        f = kernel.field(access.field)
        expr = sympy.expand(byte_address(f, access))
        linear, constant = _affine_parts(expr)
        compiled.append(CompiledAccess(
            access=access, field=f, address_expr=expr, address=evaluator(expr),
            linear=linear, constant=constant,
        ))
    return CompiledKernel(kernel=kernel, accesses=tuple(compiled))


@dataclass(frozen=True)
class BlockCells:
    """The cells one thread block updates, in warp-lane order.

    ``x, y, z`` and ``valid`` have shape ``(folds, threads)``: one row per fold offset
    ``j = (jx, jy, jz)`` (x fastest), one column per thread in linear thread order
    (``threadIdx.x`` fastest), so consecutive groups of ``warp_size`` columns are warps.
    ``valid`` is the kernel's guard: the cell lies inside the iteration domain.
    ``offsets`` lists the fold offsets ``j`` of the rows.
    """

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    valid: np.ndarray
    offsets: tuple[tuple[int, int, int], ...] = ((0, 0, 0),)

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
    threads = _index_grid(tuple(launch.block))  # thread x, y, z in linear thread order (x fastest)
    folds = _index_grid(tuple(launch.fold))  # fold offsets, x fastest
    coords = []
    for d in range(3):
        thread_global = bidx[d] * launch.block[d] + threads[d]
        coords.append(thread_global[None, :] * launch.fold[d] + folds[d][:, None])
    valid = coords[0] < launch.domain[0]
    for d in (1, 2):
        valid &= coords[d] < launch.domain[d]
    offsets = tuple((int(a), int(b), int(c)) for a, b, c in zip(*folds))
    return BlockCells(x=coords[0], y=coords[1], z=coords[2], valid=valid, offsets=offsets)


def _index_grid(extent: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The x, y and z indices of every point of a ``extent`` box in linear order (x fastest), int64."""
    ex, ey, _ = extent
    linear = np.arange(math.prod(extent), dtype=np.int64)
    return linear % ex, linear // ex % ey, linear // (ex * ey)


def block_addresses(compiled: CompiledKernel, cells: BlockCells) -> np.ndarray:
    """Byte addresses, shape ``(accesses, folds, threads)``, int64 (guard not applied). Affine
    addresses are evaluated together, in integer arithmetic."""
    out = np.empty((len(compiled.accesses), *cells.x.shape), dtype=np.int64)
    index, linear, constant = compiled.affine
    if index.size:
        x, y, z = (c.reshape(1, -1) for c in (cells.x, cells.y, cells.z))
        values = linear[:, 0:1] * x + linear[:, 1:2] * y + (linear[:, 2:3] * z + constant[:, None])
        out[index] = values.reshape(index.size, *cells.x.shape)
    for i, a in enumerate(compiled.accesses):
        if a.linear is None:
            out[i] = a.address(cells.x, cells.y, cells.z)
    return out


def _copy_key(acc: CompiledAccess, offset: tuple[int, int, int]) -> tuple:
    """Identity of the address ``acc`` loads in the fold copy ``offset``, for every thread.

    Copies with equal keys load the same address in every thread: the field, the coefficients
    of the cell coordinates and the constant term after shifting by the fold offset agree.
    Quasi-affine addresses compare as expanded sympy expressions (structural equality, like a
    compiler's common-subexpression elimination).
    """
    if acc.linear is not None:
        shifted = acc.constant + sum(c * j for c, j in zip(acc.linear, offset))
        return acc.field.name, acc.linear, shifted
    shift = {sym: sym + j for sym, j in zip(COORDINATES, offset)}
    return acc.field.name, sympy.expand(acc.address_expr.xreplace(shift))


def merged_copies(compiled: CompiledKernel, offsets: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """For every (access, fold copy), the flat index ``access * folds + copy`` of the instruction
    that performs it: itself, or the first earlier load of the same address in the thread.

    Only loads of read-only fields merge (see the module docstring). Program order is copy by
    copy, accesses in kernel order within a copy. Returns an int64 array ``(accesses, folds)``.
    """
    n_acc, n_fold = len(compiled.accesses), len(offsets)
    stored = {a.field.name for a in compiled.accesses if a.access.is_store}
    owner = np.arange(n_acc * n_fold, dtype=np.int64).reshape(n_acc, n_fold)
    first: dict[tuple, int] = {}
    for r, offset in enumerate(offsets):
        for i, acc in enumerate(compiled.accesses):
            if acc.access.is_store or acc.field.name in stored:
                continue
            key = _copy_key(acc, offset)
            owner[i, r] = first.setdefault(key, int(owner[i, r]))
    return owner


def instruction_lanes(compiled: CompiledKernel, cells: BlockCells, owner: np.ndarray | None = None) -> np.ndarray:
    """Lanes on which each (access, fold copy) issues a memory instruction.

    Returns a bool array ``(accesses, folds, threads)``: the guard ``cells.valid``, except that a
    load merged into an earlier identical load (:func:`merged_copies`) issues nothing and the
    earlier one issues on every lane where either copy's cell is valid. ``owner`` may pass
    :func:`merged_copies` of ``cells.offsets`` (it depends on the fold copies only).
    """
    n_acc, n_fold = len(compiled.accesses), len(cells.offsets)
    owner = merged_copies(compiled, cells.offsets) if owner is None else owner
    lanes = np.zeros((n_acc * n_fold, cells.valid.shape[-1]), dtype=bool)
    for r in range(n_fold):  # the instructions that serve copy r issue on its valid lanes
        rows = owner[:, r]
        lanes[rows] |= cells.valid[r]
    return lanes.reshape(n_acc, n_fold, -1)
