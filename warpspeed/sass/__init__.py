"""Instructions from SASS: compile with nvcc, disassemble with cuobjdump, parse, cache.

The names below are imported on first use, so that a module of this package (the compile
cache, which the register counts share) loads without the others.
"""

from importlib import import_module

#: Where each public name is defined; imported on first use (PEP 562).
_EXPORTS = {
    "CompileError": "warpspeed.sass.compile",
    "compile_sass": "warpspeed.sass.compile",
    "SassError": "warpspeed.sass.parse",
    "full_warp_stream": "warpspeed.sass.parse",
    "mma_shape": "warpspeed.sass.parse",
    "parse_listing": "warpspeed.sass.parse",
    "device_arch": "warpspeed.sass.stream",
    "sass_available": "warpspeed.sass.stream",
    "sass_stream": "warpspeed.sass.stream",
}

__all__ = ["CompileError", "SassError", "compile_sass", "device_arch", "full_warp_stream", "mma_shape",
           "parse_listing", "sass_available", "sass_stream"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
