"""Kernel descriptions: fields, accesses (address expressions in the cell coordinates x, y, z),
operation counts, and the built-in kernels.

The names below come from :mod:`warpspeed.kernel.description` and are imported on first use
(PEP 562), so that importing another module of this package (the catalog, the built-in kernels'
names) does not import sympy.
"""

from __future__ import annotations

__all__ = [
    "COORDINATES", "Access", "Field", "FlopCounts", "Kernel", "X", "Y", "Z", "byte_address",
    "linear_index", "load", "load_linear", "store", "store_linear",
]


def __getattr__(name: str):
    if name in __all__:
        from warpspeed.kernel import description

        value = getattr(description, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'warpspeed.kernel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
