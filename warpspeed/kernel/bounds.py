"""Exact index ranges of quasi-affine expressions over a box of cells.

:func:`index_range` gives the smallest and largest value an index expression takes over the
cells ``0 <= x < nx, 0 <= y < ny, 0 <= z < nz``. The kernel description uses it to refuse
accesses that reach outside their field.

* Affine expressions ``c0 + cx x + cy y + cz z`` take their extremes at corners of the box:
  the minimum picks ``0`` or ``n - 1`` per coordinate by the sign of its coefficient.
* Quasi-affine expressions (``floor(e / c)``, ``Mod(e, c)``) are first bounded by interval
  arithmetic (exact for the affine part, conservative for the rest). Only when that bound
  leaves the allowed range is the exact range computed: such an expression ``f`` has a period
  ``L`` (the product of every divisor and modulus in it) with ``f(p + L e_i) = f(p) + L s_i``,
  so along each axis its minimum and maximum over the box lie among the first or the last
  ``L`` coordinates, and those candidates are evaluated exactly.
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping

import sympy

#: Most candidate cells :func:`index_range` evaluates exactly for one quasi-affine expression;
#: beyond it the interval-arithmetic bound (which may be wider than the true range) is kept.
#: 4096 = (2 x 32)^2: a period of 32 along two axes. Each evaluation is one sympy
#: substitution (~0.1 ms), so the exact path costs at most about half a second.
MAX_EXACT_CANDIDATES = 4096

Interval = tuple[sympy.Rational, sympy.Rational]


def _interval(expr: sympy.Expr, extents: Mapping[sympy.Symbol, int]) -> Interval:
    """A range containing every value of ``expr`` over the box (exact if ``expr`` is affine)."""
    lo = hi = sympy.Integer(0)
    for term, coeff in expr.as_coefficients_dict().items():
        if term == 1:
            t_lo = t_hi = sympy.Integer(1)
        elif term in extents:
            t_lo, t_hi = sympy.Integer(0), sympy.Integer(extents[term] - 1)
        elif isinstance(term, sympy.floor):
            a_lo, a_hi = _interval(term.args[0], extents)
            t_lo, t_hi = sympy.floor(a_lo), sympy.floor(a_hi)
        elif isinstance(term, sympy.Mod):
            value, modulus = term.args
            v_lo, v_hi = _interval(value, extents)
            wraps = sympy.floor(v_lo / modulus) != sympy.floor(v_hi / modulus)
            shift = modulus * sympy.floor(v_lo / modulus)
            t_lo, t_hi = (sympy.Integer(0), modulus - 1) if wraps else (v_lo - shift, v_hi - shift)
        else:  # pragma: no cover - the kernel description admits only the forms above
            raise ValueError(f"not a quasi-affine term: {term}")
        ends = (coeff * t_lo, coeff * t_hi)
        lo, hi = lo + min(ends), hi + max(ends)
    return lo, hi


def _is_affine(expr: sympy.Expr, extents: Mapping[sympy.Symbol, int]) -> bool:
    return all(term == 1 or term in extents for term in expr.as_coefficients_dict())


def _period(expr: sympy.Expr) -> int:
    """A common period of every floor/Mod term in ``expr`` (product of divisors and moduli)."""
    period = 1
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.floor):
            for _, coeff in node.args[0].as_coefficients_dict().items():
                period *= int(sympy.Rational(coeff).q)
        elif isinstance(node, sympy.Mod):
            period *= int(node.args[1])
    return period


def _exact_range(expr: sympy.Expr, extents: Mapping[sympy.Symbol, int], period: int) -> tuple[int, int]:
    symbols = [s for s in extents if s in expr.free_symbols]
    axes = []
    for symbol in symbols:
        n = extents[symbol]
        axes.append(range(n) if n <= 2 * period else sorted({*range(period), *range(n - period, n)}))
    values = [int(expr.xreplace(dict(zip(symbols, point)))) for point in itertools.product(*axes)]
    return min(values), max(values)


def index_range(expr: sympy.Expr, extents: Mapping[sympy.Symbol, int],
                allowed: tuple[int, int] | None = None) -> tuple[int, int]:
    """Smallest and largest value of ``expr`` over the box ``0 <= s < extents[s]`` (cells).

    With ``allowed`` = (lo, hi), a quasi-affine expression whose interval bound lies inside it
    is not evaluated exactly, and the (possibly wider) bound is returned: it is inside anyway.
    """
    lo, hi = _interval(expr, extents)
    if _is_affine(expr, extents) or (allowed is not None and allowed[0] <= lo and hi <= allowed[1]):
        return int(lo), int(hi)
    period = _period(expr)
    used = [n for s, n in extents.items() if s in expr.free_symbols]
    if math.prod(min(n, 2 * period) for n in used) > MAX_EXACT_CANDIDATES:
        return int(lo), int(hi)
    return _exact_range(expr, extents, period)
