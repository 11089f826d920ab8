"""The instruction stream derived from a kernel description, when no compiled SASS is at hand.

What a thread of a generated stencil kernel executes, reconstructed from the description (labelled
``source: "derived"`` in the trace; SASS replaces it when the kernel's code can be compiled):

1. index computation: per dimension the domain spans (extent > 1), ``S2R`` of the thread and the
   block index and one ``IMAD`` combining them (``index = blockIdx * blockDim + threadIdx``);
2. the guard: one ``ISETP`` per such dimension and a predicated ``EXIT`` (a warp whose threads all
   fail the guard issues exactly this prefix);
3. one ``IMAD.WIDE`` per field forming its base address from the kernel parameter in the
   constant bank;
4. every load of every fold copy, loads of the same address in one thread merged as
   :func:`warpspeed.memory.addresses.merged_copies` merges them (nvcc hoists a thread's loads
   ahead of its arithmetic);
5. the floating-point operations of ``Kernel.flops`` times the cells per thread, as a chain: the
   first operation reads two loaded values, each further one the previous result and the next
   loaded value (round robin). A division is a reciprocal on the SFU (``MUFU.RCP64H`` /
   ``MUFU.RCP``) followed by a multiply;
6. the stores, reading the last result; ``EXIT``.

Integer work beyond the index and address arithmetic (nvcc folds constant offsets into the
load's immediate) is not modelled. Counts per thread are rounded to whole instructions.
"""

from __future__ import annotations

from functools import lru_cache

from warpspeed.kernel.description import Kernel
from warpspeed.memory.addresses import compile_kernel, merged_copies
from warpspeed.sass.instructions import Instruction, InstructionStream

#: Opcodes by precision: add, multiply, fused multiply-add, reciprocal (CUDA Binary Utilities,
#: Instruction Set Reference).
_FP_OPCODES = {
    "float64": ("DADD", "DMUL", "DFMA", ("MUFU", ("RCP64H",))),
    "float32": ("FADD", "FMUL", "FFMA", ("MUFU", ("RCP",))),
    "float16": ("HADD2", "HMUL2", "HFMA2", ("MUFU", ("RCP", "F16"))),
}
#: Load/store width modifiers by element bytes (``LDG.E.64`` for doubles).
_WIDTH_MODIFIER = {1: ("U8",), 2: ("U16",), 4: (), 8: ("64",), 16: ("128",)}
#: Memoised streams (kernel descriptions are hashable).
CACHE_SIZE = 64


def _fold_offsets(fold: tuple[int, int, int]) -> tuple[tuple[int, int, int], ...]:
    return tuple((jx, jy, jz) for jz in range(fold[2]) for jy in range(fold[1]) for jx in range(fold[0]))


@lru_cache(maxsize=CACHE_SIZE)
def derived_stream(kernel: Kernel, fold: tuple[int, int, int]) -> InstructionStream:
    """The derived instruction stream of one thread of ``kernel`` folded by ``fold`` (see the
    module docstring for the reconstruction)."""
    program: list[Instruction] = []

    def emit(opcode: str, modifiers: tuple[str, ...] = (), dst: tuple[str, ...] = (), src: tuple[str, ...] = (),
             **extra) -> None:
        program.append(Instruction(opcode=opcode, modifiers=modifiers, dst=dst, src=src, pc=16 * len(program), **extra))

    dims = [d for d in range(3) if kernel.domain[d] > 1] or [0]
    index_regs = []
    for d in dims:
        tid, cta, idx = f"R{3 * d}", f"R{3 * d + 1}", f"R{3 * d + 2}"
        emit("S2R", dst=(tid,), src=(f"SR_TID.{'XYZ'[d]}",))
        emit("S2R", dst=(cta,), src=(f"SR_CTAID.{'XYZ'[d]}",))
        emit("IMAD", dst=(idx,), src=(cta, tid), const_operands=1)
        index_regs.append(idx)
    for i, reg in enumerate(index_regs):
        emit("ISETP", ("GE", "AND"), dst=("P0",), src=(reg, *(("P0",) if i else ())), const_operands=1)
    emit("EXIT", predicate="P0")
    guard = len(program)

    base = {}
    for n, f in enumerate(kernel.fields):
        base[f.name] = f"R{10 + 2 * n}"
        emit("IMAD", ("WIDE",), dst=(base[f.name],), src=tuple(index_regs), const_operands=1)

    offsets = _fold_offsets(fold)
    compiled = compile_kernel(kernel)
    owner = merged_copies(compiled, offsets)
    next_reg = 10 + 2 * len(kernel.fields)
    loaded: list[str] = []
    for r in range(len(offsets)):
        for i, acc in enumerate(compiled.accesses):
            if acc.access.is_store or owner[i, r] != i * len(offsets) + r:
                continue
            reg = f"R{next_reg}"
            next_reg += 2
            loaded.append(reg)
            emit("LDG", ("E", *_WIDTH_MODIFIER.get(acc.field.element_bytes, ())), dst=(reg,),
                 src=(base[acc.field.name],), bytes=acc.field.element_bytes, field=acc.field.name)

    add, mul, fma, (rcp, rcp_mods) = _FP_OPCODES.get(kernel.dtype, _FP_OPCODES["float64"])
    cells = len(offsets)
    ops = ([fma] * round(kernel.flops.fmas * cells) + [mul] * round(kernel.flops.muls * cells)
           + [add] * round(kernel.flops.adds * cells) + ["div"] * round(kernel.flops.divs * cells))
    result = loaded[0] if loaded else "RZ"
    for j, op in enumerate(ops):
        operand = loaded[(j + 1) % len(loaded)] if loaded else "RZ"
        dst = f"R{next_reg}"
        next_reg += 2
        if op == "div":
            emit(rcp, rcp_mods, dst=(dst,), src=(operand,))
            emit(mul, dst=(dst,), src=(result, dst))
        else:
            emit(op, dst=(dst,), src=(result, operand) + ((operand,) if op == fma else ()))
        result = dst

    for _ in range(cells):
        for acc in compiled.accesses:
            if acc.access.is_store:
                emit("STG", ("E", *_WIDTH_MODIFIER.get(acc.field.element_bytes, ())),
                     src=(base[acc.field.name], result), bytes=acc.field.element_bytes, field=acc.field.name)
    emit("EXIT")
    return InstructionStream(source="derived", instructions=tuple(program), guard_exit_instructions=guard)
