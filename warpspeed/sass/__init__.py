"""Instructions of a kernel: the warp instruction records (:mod:`~warpspeed.sass.instructions`), from
SASS (compile with nvcc, disassemble with cuobjdump, parse, cache) or derived from the kernel
description (:mod:`~warpspeed.sass.derived`).

The names below are imported on first use (PEP 562), so that a module of this package (the
compile cache, which the register counts share) loads without the others.
"""

from __future__ import annotations

from warpspeed.lazy import lazy_exports


def _compile():
    from warpspeed.sass import compile

    return compile


def _parse():
    from warpspeed.sass import parse

    return parse


def _stream():
    from warpspeed.sass import stream

    return stream


__getattr__, __dir__, __all__ = lazy_exports(globals(), {
    _compile: ("CompileError", "compile_sass"),
    _parse: ("SassError", "full_warp_stream", "mma_shape", "parse_listing"),
    _stream: ("device_arch", "sass_available", "sass_stream"),
})
