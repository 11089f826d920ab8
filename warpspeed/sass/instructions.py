"""Warp instructions as the trace records them, and the functional unit of each opcode.

An :class:`Instruction` is one SASS-like instruction of the representative warp: opcode,
modifiers, destination and source registers, predicate, functional unit, memory space and bytes
per thread. The functional-unit classes follow the opcode families of NVIDIA's "CUDA Binary
Utilities" documentation, section "Instruction Set Reference" (the tables of the Volta, Turing,
Ampere, Ada and Hopper instruction sets), grouped by the unit that executes them:

========  ==============================================================================
fu        opcodes
========  ==============================================================================
fp32      FADD FMUL FFMA FSETP FMNMX FSEL FCHK HADD2 HMUL2 HFMA2 FSWZADD
fp64      DADD DMUL DFMA DSETP DMNMX
int       IMAD IADD3 IMNMX LEA LOP3 SHF SHL SHR ISETP IABS POPC FLO SEL MOV PRMT I2F F2I F2F ...
sfu       MUFU (reciprocal, square root, exponential, logarithm, sine, cosine)
tensor    HMMA IMMA DMMA BMMA; Hopper's warpgroup MMAs HGMMA IGMMA QGMMA BGMMA
global    LDG STG LD ST ATOM ATOMG RED LDGSTS
shared    LDS STS LDSM ATOMS
mio       LDC S2R S2UR CS2R BAR SHFL VOTE MEMBAR ULDC
control   BRA EXIT RET CALL BSSY BSYNC NOP WARPSYNC YIELD JMP
========  ==============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

#: Opcode -> functional unit (see the module docstring for the source). Opcodes not listed
#: fall back to :data:`DEFAULT_FU`; uniform-datapath opcodes (U*) to ``int``.
FU_BY_OPCODE: dict[str, str] = {
    **dict.fromkeys(("FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL", "FCHK", "HADD2", "HMUL2", "HFMA2",
                     "FSWZADD", "FSET"), "fp32"),
    **dict.fromkeys(("DADD", "DMUL", "DFMA", "DSETP", "DMNMX"), "fp64"),
    **dict.fromkeys(("IMAD", "IADD3", "IMNMX", "LEA", "LOP3", "SHF", "SHL", "SHR", "ISETP", "IABS", "POPC",
                     "FLO", "SEL", "MOV", "PRMT", "I2F", "F2I", "F2F", "I2I", "IMUL", "IADD", "LOP", "P2R",
                     "R2P", "PLOP3", "CS2R", "BMSK", "BREV", "IDP", "F2FP"), "int"),
    "MUFU": "sfu",
    **dict.fromkeys(("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"), "tensor"),
    **dict.fromkeys(("LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "LDGSTS", "LDL", "STL"), "global"),
    **dict.fromkeys(("LDS", "STS", "LDSM", "ATOMS"), "shared"),
    **dict.fromkeys(("LDC", "S2R", "S2UR", "BAR", "SHFL", "VOTE", "MEMBAR", "ULDC", "DEPBAR", "ERRBAR"), "mio"),
    **dict.fromkeys(("BRA", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "NOP", "WARPSYNC", "YIELD", "JMP",
                     "BPT", "KILL"), "control"),
}
#: Hopper's warpgroup MMAs (``wgmma.mma_async`` in PTX): the four warps of a warpgroup issue the
#: instruction together and share its m x n x k multiply-adds (NVIDIA, "Parallel Thread Execution
#: ISA", section "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions": a
#: warpgroup is four contiguous warps; the shapes are m64nNk*). SASS spellings checked with
#: cuobjdump of nvcc 13.0 for sm_90a: HGMMA (f16, bf16, tf32), IGMMA (s8/u8), QGMMA (e4m3/e5m2),
#: BGMMA (b1).
WARPGROUP_MMA_OPCODES = frozenset(("HGMMA", "IGMMA", "QGMMA", "BGMMA"))
#: Warps of a warpgroup.
WARPGROUP_WARPS = 4


def mma_fmas_per_warp(opcode: str, shape: tuple[int, int, int]) -> float:
    """Multiply-adds one warp's MMA instruction performs: m n k of its shape, shared by the four
    warps of a warpgroup for Hopper's warpgroup MMAs (:data:`WARPGROUP_MMA_OPCODES`)."""
    m, n, k = shape
    return m * n * k / (WARPGROUP_WARPS if opcode in WARPGROUP_MMA_OPCODES else 1)


#: Functional units, in the order mixes are reported.
FUNCTIONAL_UNITS: tuple[str, ...] = ("fp32", "fp64", "int", "sfu", "tensor", "global", "shared", "mio", "control")
#: Unit of an opcode the table does not know.
DEFAULT_FU = "int"
#: Memory spaces by opcode (``local`` for LDL/STL, ``const`` for LDC).
SPACE_BY_OPCODE: dict[str, str] = {
    **dict.fromkeys(("LDG", "STG", "LD", "ST", "ATOM", "ATOMG", "RED", "LDGSTS"), "global"),
    **dict.fromkeys(("LDS", "STS", "LDSM", "ATOMS"), "shared"),
    **dict.fromkeys(("LDL", "STL"), "local"),
    "LDC": "const", "ULDC": "const",
}
#: Opcodes that write memory (the rest of the memory opcodes read it).
STORE_OPCODES = frozenset(("STG", "ST", "STS", "STL", "RED"))


def functional_unit(opcode: str) -> str:
    """The functional unit of ``opcode`` (without modifiers), per :data:`FU_BY_OPCODE`."""
    if opcode in FU_BY_OPCODE:
        return FU_BY_OPCODE[opcode]
    if opcode.startswith("U"):  # uniform datapath (UIADD3, UMOV, ...)
        return "int"
    return DEFAULT_FU


@dataclass(frozen=True, kw_only=True)
class Instruction:
    """One warp instruction. ``bytes``: per thread, memory instructions only; ``tensor_shape``:
    (m, n, k) of an MMA's shape modifier; ``fu`` and ``space`` follow from the opcode
    (:data:`FU_BY_OPCODE`, :data:`SPACE_BY_OPCODE`) unless given. The fields are the trace's
    record of the instruction, in its key order (``instructions.stream``)."""

    pc: int = 0
    opcode: str
    modifiers: tuple[str, ...] = ()
    dst: tuple[str, ...] = ()
    src: tuple[str, ...] = ()
    predicate: str | None = None
    fu: str = ""
    #: memory space (``global``, ``shared``, ``local``, ``const``) or None; "" until derived
    space: str | None = ""
    bytes: int = 0
    const_operands: int = 0
    field: str | None = None
    tensor_shape: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        if not self.fu:
            object.__setattr__(self, "fu", functional_unit(self.opcode))
        if self.space == "":
            object.__setattr__(self, "space", SPACE_BY_OPCODE.get(self.opcode))

    @property
    def is_store(self) -> bool:
        return self.opcode in STORE_OPCODES


@dataclass(frozen=True)
class InstructionStream:
    """The representative warp's instructions in program order.

    ``source``: ``"sass"`` (disassembled from the compiled kernel) or ``"derived"`` (from the
    kernel description, :mod:`warpspeed.sass.derived`); ``guard_exit_instructions``: the
    instructions a warp whose threads all fail the guard issues (the prefix up to the exit).
    """

    source: str
    instructions: tuple[Instruction, ...]
    guard_exit_instructions: int
    arch: str | None = None
    compiler: str | None = None

    def __hash__(self) -> int:  # computed once: streams key the caches of every consumer
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((self.source, self.instructions, self.guard_exit_instructions, self.arch, self.compiler))

    @property
    def full_path_instructions(self) -> int:
        return len(self.instructions)

    @cached_property
    def _mix(self) -> dict[str, int]:
        counts = dict.fromkeys(FUNCTIONAL_UNITS, 0)
        for ins in self.instructions:
            counts[ins.fu] = counts.get(ins.fu, 0) + 1
        return counts

    @cached_property
    def _opcodes(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for ins in self.instructions:
            counts[ins.opcode] = counts.get(ins.opcode, 0) + 1
        return counts

    @cached_property
    def _memory(self) -> dict[tuple[str | None, bool], int]:
        counts: dict[tuple[str | None, bool], int] = {}
        for i in self.instructions:
            if i.space == "global":
                counts[(i.field, i.is_store)] = counts.get((i.field, i.is_store), 0) + 1
        return counts

    def mix(self) -> dict[str, int]:
        """Instructions per functional unit over the full path."""
        return dict(self._mix)

    def opcode_counts(self) -> dict[str, int]:
        return dict(self._opcodes)

    def memory_instructions(self, field_name: str, stores: bool) -> int:
        """Global memory instructions of ``field_name`` (loads or stores) per thread."""
        return self._memory.get((field_name, stores), 0)
