"""Field geometry of a pystencils kernel: shapes and strides as integers.

pystencils fields with fixed sizes carry integer shapes and strides; fields with symbolic
sizes get them from the caller (``shapes=``, optionally ``layouts=``). Strides are in
elements; layouts are index positions from the contiguous (fastest) index to the slowest,
as in :class:`warpspeed.kernel.description.Field`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import sympy

from warpspeed.errors import UnsupportedKernelError
from warpspeed.kernel.description import Field


@dataclass(frozen=True)
class FieldGeometry:
    """Integer geometry of one pystencils field.

    Attributes:
        name: field name.
        shape: elements per index (ghost layers included), in pystencils' index order.
        strides: element strides per index.
        spatial_dims: number of spatial indices (the first ones).
        element_bytes: bytes per element.
        dtype: numpy dtype name (``'float64'``, ``'float32'``).
    """

    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    spatial_dims: int
    element_bytes: int
    dtype: str

    @property
    def layout(self) -> tuple[int, ...]:
        """Index positions from contiguous to slowest (ties: the size-1 index first)."""
        return tuple(sorted(range(len(self.strides)),
                            key=lambda i: (self.strides[i], self.shape[i] != 1, i)))


def as_int(value: Any) -> int | None:
    """``value`` as an int if it is an integer constant (Python, numpy or sympy), else None."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, sympy.Basic) and value.is_Integer:
        return int(value)
    return None


def field_geometry(pfield: Any, shapes: Mapping[str, Sequence[int]],
                   layouts: Mapping[str, Sequence[int]]) -> FieldGeometry:
    """The integer geometry of pystencils field ``pfield``; ``shapes``/``layouts`` (by field
    name) complete fields with symbolic sizes.

    Raises:
        UnsupportedKernelError: a size stays symbolic, or a given shape/layout does not fit.
    """
    name = pfield.name
    np_dtype = np.dtype(pfield.dtype.numpy_dtype)
    spatial = int(pfield.spatial_dimensions)
    index_dims = int(pfield.index_dimensions)
    ndim = spatial + index_dims
    shape = tuple(as_int(s) for s in pfield.shape)
    strides = tuple(as_int(s) for s in pfield.strides)
    if name in shapes:
        given = tuple(int(s) for s in shapes[name])
        if len(given) != ndim or any(s <= 0 for s in given):
            raise UnsupportedKernelError(
                f"shapes[{name!r}] = {given}: field {name!r} has {ndim} dimensions "
                f"({spatial} spatial + {index_dims} index); give that many positive sizes"
            )
        if None in strides or name in layouts:
            layout = _layout(pfield, ndim, layouts.get(name))
            strides = Field(name, int(np_dtype.itemsize), given, layout=layout).strides
        shape = given
    if None in shape or None in strides:
        raise UnsupportedKernelError(
            f"field {name!r} has a symbolic size ({pfield.shape}, strides {pfield.strides}): "
            "warpspeed needs fixed sizes — create the field with a fixed shape, e.g. "
            f"ps.fields('{name}: double[640,512,512]') or from a numpy array, or pass "
            f"shapes={{'{name}': (...)}} to extract_kernel"
        )
    return FieldGeometry(name=name, shape=shape, strides=strides, spatial_dims=spatial,  # type: ignore[arg-type]
                         element_bytes=int(np_dtype.itemsize), dtype=np_dtype.name)


def _layout(pfield: Any, ndim: int, given: Sequence[int] | None) -> tuple[int, ...]:
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
