"""The SASS instruction stream of a kernel on a device, with its memory instructions mapped to fields.

Global loads and stores are assigned to the kernel's fields by count: when the compiled kernel
has as many loads and stores as the stream derived from the description
(:mod:`warpspeed.sass.derived`), the k-th global load gets the field of the k-th derived load
(stores likewise; nvcc keeps the order of the generated code's loads and stores of one kernel
within each kind for straight-line stencil code, and the counts, not the order, are what the
per-field figures use). Otherwise the memory instructions keep ``field = None`` and the trace
reports ``mapping: "uniform"``.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from warpspeed.sass.compile import CompileError, compile_sass
from warpspeed.sass.parse import full_warp_stream, parse_listing
from warpspeed.sass.toolchain import cuda_arch, find_tool
from warpspeed.sass.derived import derived_stream
from warpspeed.sass.instructions import InstructionStream

#: Parsed streams kept in memory (one per kernel source and architecture).
CACHE_SIZE = 64

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel


def device_arch(device: "Device") -> str | None:
    """nvcc's ``-arch`` for ``device`` (by its name, else its architecture); None for AMD GPUs."""
    if device.vendor.lower() != "nvidia":
        return None
    for text in (device.name, device.architecture):
        try:
            return cuda_arch(text)
        except ValueError:
            continue
    return None


@lru_cache(maxsize=1)
def sass_available() -> bool:
    """Whether nvcc and cuobjdump are installed (looked up once per process)."""
    return find_tool("nvcc") is not None and find_tool("cuobjdump") is not None


@lru_cache(maxsize=CACHE_SIZE)
def _map_fields(stream: InstructionStream, kernel: "Kernel", fold: tuple[int, int, int]) -> InstructionStream:
    """``stream`` with each global memory instruction labelled with its field, in the order of the
    kernel description's accesses (unchanged when the counts differ)."""
    derived = derived_stream(kernel, fold)
    order = {kind: [i.field for i in derived.instructions if i.space == "global" and i.is_store == kind]
             for kind in (False, True)}
    mine = {kind: [k for k, i in enumerate(stream.instructions) if i.space == "global" and i.is_store == kind]
            for kind in (False, True)}
    if any(len(order[k]) != len(mine[k]) for k in (False, True)):
        return stream
    instructions = list(stream.instructions)
    for kind in (False, True):
        for k, name in zip(mine[kind], order[kind]):
            instructions[k] = replace(instructions[k], field=name)
    return replace(stream, instructions=tuple(instructions))


def sass_stream(kernel: "Kernel", device: "Device", fold: tuple[int, int, int]) -> InstructionStream | None:
    """The compiled kernel's full-warp stream, or None when the kernel carries no CUDA code, the
    device is not an NVIDIA GPU or nvcc/cuobjdump are missing. A failing compile raises
    :class:`~warpspeed.sass.compile.CompileError`."""
    code = kernel.code
    arch = device_arch(device)
    if code is None or code.language != "cuda" or arch is None or not sass_available():
        return None
    return _map_fields(_parsed_stream(code.source, arch, code.include_dirs), kernel, fold)


def instructions_origin(kernel: "Kernel", device: "Device") -> tuple[str, str]:
    """``(source, detail)``: where the instruction mix of ``kernel``'s trace on ``device`` comes from,
    without compiling anything. ``source`` is ``sass`` (nvcc + cuobjdump will compile the kernel's
    CUDA code) or ``derived`` (from the kernel description, :mod:`warpspeed.sass.derived`);
    ``detail`` says which compiler, or why not. A compile that fails later also falls back to
    ``derived``."""
    code = kernel.code
    arch = device_arch(device)
    if arch is None:
        return "derived", f"derived from the kernel description ({device.name} is not an NVIDIA GPU)"
    if code is None or code.language != "cuda":
        return "derived", "derived from the kernel description (the kernel carries no CUDA code)"
    if not sass_available():
        return "derived", ("derived from the kernel description (nvcc and cuobjdump not found; "
                           "pip install 'warpspeed[cuda]' compiles the kernel and reads its SASS)")
    return "sass", f"SASS of the kernel compiled by nvcc for {arch} (cuobjdump -sass)"


@lru_cache(maxsize=CACHE_SIZE)
def _parsed_stream(source: str, arch: str, include_dirs: tuple[str, ...]) -> InstructionStream:
    listing, compiler = compile_sass(source, arch, include_dirs)
    return full_warp_stream(parse_listing(listing), arch=arch, compiler=compiler)


__all__ = ["CompileError", "device_arch", "instructions_origin", "sass_available", "sass_stream"]
