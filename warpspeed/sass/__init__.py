"""Instructions from SASS: compile with nvcc, disassemble with cuobjdump, parse, cache."""

from warpspeed.sass.compile import CompileError, compile_sass
from warpspeed.sass.parse import SassError, full_warp_stream, mma_shape, parse_listing
from warpspeed.sass.stream import device_arch, sass_available, sass_stream

__all__ = ["CompileError", "SassError", "compile_sass", "device_arch", "full_warp_stream", "mma_shape",
           "parse_listing", "sass_available", "sass_stream"]
