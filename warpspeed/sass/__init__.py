"""Instructions from SASS: compile with nvcc, disassemble with cuobjdump, parse, cache.

The names below are imported on first use (PEP 562), so that a module of this package (the
compile cache, which the register counts share) loads without the others.
"""

from __future__ import annotations

_COMPILE_NAMES = frozenset(("CompileError", "compile_sass"))
_PARSE_NAMES = frozenset(("SassError", "full_warp_stream", "mma_shape", "parse_listing"))
_STREAM_NAMES = frozenset(("device_arch", "sass_available", "sass_stream"))

__all__ = sorted(_COMPILE_NAMES | _PARSE_NAMES | _STREAM_NAMES)


def __getattr__(name: str):
    if name in _COMPILE_NAMES:
        from warpspeed.sass import compile as module
    elif name in _PARSE_NAMES:
        from warpspeed.sass import parse as module
    elif name in _STREAM_NAMES:
        from warpspeed.sass import stream as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
