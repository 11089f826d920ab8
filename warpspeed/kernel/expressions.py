"""Index expressions: the cell coordinates x, y, z, parsing, and the quasi-affine check.

An index expression is a sympy expression (or a string, or an int) over the cell coordinates
``x, y, z``: integer coefficients, plus ``floor(affine / c)`` and ``Mod(affine, c)`` with an
integer constant ``c``. Everything else is rejected with a
:class:`~warpspeed.errors.KernelError` that names the access.
"""

from __future__ import annotations

import numbers

import sympy

from warpspeed.errors import KernelError
from warpspeed.kernel.index_text import MAX_NESTING, parse_index_text

#: The cell coordinate symbols every address expression may use.
X, Y, Z = sympy.symbols("x y z", integer=True)
COORDINATES: tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol] = (X, Y, Z)
_COORD_NAMES = ("x", "y", "z")


def parse_index(expr: object, what: str) -> sympy.Expr:
    """Turn a user expression (sympy, int or string) into a sympy expression over x, y, z.

    Strings are read by the grammar of :mod:`warpspeed.kernel.index_text`, never evaluated."""
    if isinstance(expr, sympy.Basic):
        result = expr
    elif isinstance(expr, bool):
        raise KernelError(f"{what}: a boolean is not an index expression")
    elif isinstance(expr, numbers.Integral):
        result = sympy.Integer(int(expr))
    elif isinstance(expr, str):  # parsed by a grammar, never evaluated (warpspeed.kernel.index_text)
        result = parse_index_text(expr, what)
    else:
        raise KernelError(
            f"{what}: expected a sympy expression, an int or a string, got {type(expr).__name__}"
        )
    _check_depth(result, what)
    # Rename foreign symbols called x/y/z (e.g. sympy.Symbol('x') without integer=True).
    subs = {s: c for s in result.free_symbols for n, c in zip(_COORD_NAMES, COORDINATES)
            if getattr(s, "name", None) == n and s != c}
    return result.xreplace(subs) if subs else result


def _check_depth(expr: sympy.Basic, what: str) -> None:
    """Refuse an expression nested deeper than :data:`MAX_NESTING` (counted without recursion, so
    that a 10^4-deep tree is a one-line error, not a RecursionError in a later recursive walk)."""
    stack = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            raise KernelError(f"{what}: the index expression is nested more than {MAX_NESTING} levels deep; "
                              "allowed: affine expressions of x, y, z such as 'x + 4' or 'floor(x / 2) + 10 * y'")
        stack.extend((arg, depth + 1) for arg in node.args)


def check_quasi_affine(expr: sympy.Expr, what: str, inside_floor: bool = False) -> None:
    """Raise KernelError unless ``expr`` is (quasi-)affine in x, y, z.

    Allowed: integers, x/y/z, sums, products with at most one non-constant factor,
    ``floor(e / c)`` and ``Mod(e, c)`` for quasi-affine ``e`` and integer ``c``.
    Rational coefficients are allowed only inside ``floor``.
    """
    if isinstance(expr, (sympy.Indexed, sympy.IndexedBase)) or (
        isinstance(expr, sympy.Function) and not isinstance(expr, (sympy.floor, sympy.Mod))
        and isinstance(expr.func, sympy.core.function.UndefinedFunction)
    ):
        raise KernelError(
            f"{what}: indirect access {expr} — an index that depends on loaded data is outside "
            "the model; only affine expressions of x, y, z (with floor/Mod by constants) are allowed"
        )
    unknown = sorted(str(s) for s in expr.free_symbols if s not in COORDINATES)
    if unknown:
        raise KernelError(
            f"{what}: unknown symbol(s) {', '.join(unknown)} in {expr}; address expressions may "
            "only use the cell coordinates x, y, z (substitute sizes and strides as integers)"
        )
    if expr.is_Number:
        if not expr.is_Rational:
            raise KernelError(f"{what}: non-rational constant {expr} in {expr}")
        if not inside_floor and not expr.is_Integer:
            raise KernelError(
                f"{what}: fractional coefficient {expr}; outside floor() every coefficient must "
                "be an integer (write floor(x / 2) for integer division)"
            )
        return
    if expr.is_Symbol:
        return
    if isinstance(expr, sympy.Add):
        for arg in expr.args:
            check_quasi_affine(arg, what, inside_floor)
        return
    if isinstance(expr, sympy.Mul):
        variable = [a for a in expr.args if a.free_symbols]
        if len(variable) > 1:
            raise KernelError(
                f"{what}: {expr} is not affine (product of coordinates); only affine or "
                "quasi-affine expressions (floor/Mod by an integer constant) are allowed"
            )
        for arg in expr.args:
            check_quasi_affine(arg, what, inside_floor)
        return
    if isinstance(expr, sympy.floor):
        check_quasi_affine(expr.args[0], what, inside_floor=True)
        return
    if isinstance(expr, sympy.Mod):
        value, modulus = expr.args
        if not (modulus.is_Integer and modulus > 0):
            raise KernelError(f"{what}: Mod by {modulus} — the modulus must be a positive integer")
        check_quasi_affine(value, what, inside_floor)
        return
    raise KernelError(
        f"{what}: {expr} is not affine or quasi-affine ({type(expr).__name__} is not allowed); "
        "allowed are integer-coefficient sums of x, y, z and floor/Mod by integer constants"
    )
