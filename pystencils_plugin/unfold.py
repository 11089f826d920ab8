"""Per-cell accesses of a folded kernel: divide the thread's accesses by the copy shifts.

A thread of a kernel folded by ``f`` along an axis updates ``f`` consecutive cells with ``f``
shifted copies of the update rule. warpspeed maps threads to cells itself
(``cell = thread * f + j``), so the per-cell kernel is the thread's access multiset divided
by the shift polynomial ``1 + t + ... + t^(f-1)`` along every folded axis (exact polynomial
division). A kernel whose accesses are not ``f`` shifted copies of one access set is rejected
with :class:`warpspeed.errors.UnsupportedKernelError`.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Sequence

import sympy

from warpspeed.errors import UnsupportedKernelError
from warpspeed.kernel.description import COORDINATES

_AXES = "xyz"

#: One access: (field name, ``'load'``/``'store'``, N-D index in cell coordinates).
AccessItem = tuple[str, str, tuple[sympy.Expr, ...]]


def _shift(access: AccessItem, axis: int, j: int) -> AccessItem:
    coord = COORDINATES[axis]
    return access[0], access[1], tuple(sympy.expand(e.xreplace({coord: coord + j})) for e in access[2])


def _axis_position(access: AccessItem, axis: int) -> int | None:
    coord = COORDINATES[axis]
    for e in access[2]:
        if e.coeff(coord) != 0:
            return int(e.subs({c: 0 for c in COORDINATES}))
    return None


class _FoldError(Exception):
    """Why an access multiset is no folding (the caller names the kernel)."""


def _divide_axis(current: Counter, axis: int, k: int) -> Counter:
    """The multiset whose ``k`` copies shifted by ``0..k-1`` along ``axis`` are ``current``.

    Greedy from the lowest position along ``axis`` (ties by the access's text): the lowest access
    still pending cannot be a shifted copy of another, so it is an access of the result and its
    ``k`` shifted copies are removed. Positions and texts are computed once per access."""
    result: Counter = Counter()
    pending = Counter({a: n for a, n in current.items() if n > 0})
    positions = {a: _axis_position(a, axis) for a in pending}
    for a in [a for a in pending if positions[a] is None]:
        # an access that does not move along this axis: all k copies coincide
        if pending[a] % k:
            raise _FoldError(f"folded by {k} along {_AXES[axis]}, but "
                             f"{pending[a]} accesses {a[0]}{list(a[2])} do not split into {k} copies")
        result[a] += pending.pop(a) // k
    for a in sorted(pending, key=lambda c: (positions[c], str(c))):
        while pending.get(a, 0) > 0:
            for j in range(k):
                shifted = _shift(a, axis, j)
                if pending.get(shifted, 0) <= 0:
                    raise _FoldError(f"folded by {k} along {_AXES[axis]}, but the "
                                     f"{a[1]} {a[0]}{list(a[2])} has no copy shifted by {j} cell(s); a folded "
                                     "kernel must consist of k shifted copies of one update rule "
                                     "(use pystencils_plugin.create_folded_kernel)")
                pending[shifted] -= 1
                if pending[shifted] == 0:
                    del pending[shifted]
            result[a] += 1
    return result


#: Unfolded access lists kept (keyed by the thread's accesses and the folding, which do not
#: depend on the domain for stencils: a ranking on a new domain reuses them).
UNFOLD_CACHE_SIZE = 64


def unfold(items: list[AccessItem], fold: Sequence[int], kernel_name: str) -> list[AccessItem]:
    """Per-cell access multiset from a thread's (first-cell coordinates) access multiset, in
    the thread's program order of first occurrence."""
    try:
        return list(_unfold(tuple(items), tuple(fold)))
    except _FoldError as exc:
        raise UnsupportedKernelError(f"kernel {kernel_name!r}: {exc}") from None


@lru_cache(maxsize=UNFOLD_CACHE_SIZE)
def _unfold(items: tuple[AccessItem, ...], fold: tuple[int, ...]) -> tuple[AccessItem, ...]:
    current = Counter(items)
    for axis, k in enumerate(fold):
        if k > 1:
            current = _divide_axis(current, axis, k)
    ordered: list[AccessItem] = []
    remaining = Counter(current)
    for item in items:
        if remaining.get(item, 0) > 0:
            ordered.append(item)
            remaining[item] -= 1
    return tuple(ordered)
