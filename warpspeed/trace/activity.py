"""What one thread's instructions do, counted per component of the power model.

AccelWattch (Kandiah, Peverelle, Khairy, Pan, Manjunath, Rogers, Aamodt, Hardavellas:
"AccelWattch: A Power Modeling Framework for Modern GPUs", MICRO 2021, Table 1) charges dynamic
energy per access of each GPU component. Counted here per thread over the representative warp's
full path (:class:`~warpspeed.sass.instructions.InstructionStream`):

- ``issue``: instructions (each warp instruction is fetched, decoded, scheduled and issued once;
  AccelWattch's instruction buffer, L1i, scheduler and pipeline components, merged);
- ``int``, ``int_mul``: integer-unit instructions, multiplies (IMAD, IMUL, LEA, and their
  uniform-datapath forms) apart, as AccelWattch separates the integer multiplier;
- ``fp32``, ``fp64``, ``sfu``: instructions on those units;
- ``tensor_fmas``: multiply-adds of the tensor-core instructions, per thread (m n k / 32 per MMA,
  a quarter of that for Hopper's warpgroup MMAs, whose m n k four warps share);
- ``register_accesses``: 32-bit register-file reads and writes: one per register operand, two for
  the operands of FP64 instructions, the address pair of a global access and data of bytes / 4
  registers for memory instructions (the zero and true registers, predicates and uniform
  registers are not in the register file).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from warpspeed.sass.instructions import InstructionStream, mma_fmas_per_warp
from warpspeed.units import WARP_LANES

#: Integer opcodes that use the multiplier (AccelWattch's int mul/mad component).
#: Streams whose activity is kept (a few kernels and foldings per process).
CACHE_SIZE = 64
INT_MUL_OPCODES = frozenset(("IMAD", "IMUL", "LEA", "UIMAD", "ULEA"))
#: 32-bit registers per FP64 operand.
FP64_REGISTERS = 2
#: 32-bit registers holding a 64-bit global address.
ADDRESS_REGISTERS = 2
#: Bytes per 32-bit register.
REGISTER_BYTES = 4
#: Operands that are not register-file accesses: zero/true registers; predicates and uniform
#: registers by their prefixes.
_NOT_RF = frozenset(("RZ", "PT", "URZ", "UPT"))


@dataclass(frozen=True)
class ThreadActivity:
    """Per thread: instructions issued, lane operations per unit, tensor multiply-adds and 32-bit
    register-file accesses (see the module docstring)."""

    issue: float
    int: float
    int_mul: float
    fp32: float
    fp64: float
    sfu: float
    tensor_fmas: float
    register_accesses: float


def _in_register_file(operand: str) -> bool:
    return operand not in _NOT_RF and operand.startswith("R")


def _register_accesses(ins) -> int:
    regs = [r for r in (*ins.dst, *ins.src) if _in_register_file(r)]
    if ins.space in ("global", "shared", "local"):
        data = max(1, ins.bytes // REGISTER_BYTES) if ins.bytes else 0
        address = ADDRESS_REGISTERS if ins.space == "global" and regs else (1 if regs else 0)
        return data + address
    return len(regs) * (FP64_REGISTERS if ins.fu == "fp64" else 1)


@lru_cache(maxsize=CACHE_SIZE)
def thread_activity(stream: InstructionStream) -> ThreadActivity:
    """The per-thread counts of ``stream``'s full path (memoised: streams are shared by the
    configurations of a kernel)."""
    counts = dict.fromkeys(("int", "int_mul", "fp32", "fp64", "sfu"), 0)
    tensor = 0.0
    rf = 0
    for ins in stream.instructions:
        if ins.fu == "int":
            counts["int_mul" if ins.opcode in INT_MUL_OPCODES else "int"] += 1
        elif ins.fu in counts:
            counts[ins.fu] += 1
        elif ins.fu == "tensor" and ins.tensor_shape:
            tensor += mma_fmas_per_warp(ins.opcode, ins.tensor_shape) / WARP_LANES
        rf += _register_accesses(ins)
    return ThreadActivity(issue=float(len(stream.instructions)), tensor_fmas=tensor, register_accesses=float(rf),
                          **{k: float(v) for k, v in counts.items()})
