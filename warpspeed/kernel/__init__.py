"""Kernel descriptions: fields, accesses (address expressions in the cell coordinates x, y, z),
operation counts, and the built-in kernels."""

from warpspeed.kernel.description import (
    COORDINATES,
    Access,
    Field,
    FlopCounts,
    Kernel,
    X,
    Y,
    Z,
    byte_address,
    linear_index,
    load,
    load_linear,
    store,
    store_linear,
)

__all__ = [
    "COORDINATES", "Access", "Field", "FlopCounts", "Kernel", "X", "Y", "Z", "byte_address",
    "linear_index", "load", "load_linear", "store", "store_linear",
]
