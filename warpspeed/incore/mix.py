"""A thread's instruction mix per lattice update, from the kernel description.

What a thread of a generated stencil kernel issues when no compiled SASS is at hand (the counts of
:func:`warpspeed.trace.derived.derived_stream`, which reconstructs the same program as a stream):

* per spanned dimension (extent > 1) two special-register reads (``S2R`` of the thread and block
  index), one ``IMAD`` forming the index and one ``ISETP`` of the guard; one ``IMAD.WIDE`` per field
  for its base address; one ``EXIT`` -- once per thread, so a thread that updates F cells pays them
  once for F updates (folding's saving);
* every load of every cell, loads of one address in one thread merged
  (:func:`warpspeed.memory.addresses.merged_copies`); every store of every cell;
* the floating-point instructions of ``Kernel.flops`` per cell; a division is a reciprocal on the
  special-function unit and a multiply.

Constant offsets of the loads are folded into the instructions' immediates by nvcc (no integer
instruction per load). Register operands each instruction reads are its source operands by
definition (NVIDIA, "Parallel Thread Execution ISA", instruction ``fma``: three sources, ``add``
and ``mul``: two; ``ld``: one address, ``st``: address and value; ``mad`` of the index: three).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from warpspeed.kernel.description import Kernel

#: Special-register reads, index multiply-add and guard compare per spanned dimension.
S2R_PER_DIMENSION = 2
INDEX_IMAD_PER_DIMENSION = 1
GUARD_ISETP_PER_DIMENSION = 1
#: Base-address multiply-adds per field, and the exit instruction of a thread.
BASE_IMAD_PER_FIELD = 1
EXIT_PER_THREAD = 1
#: Register source operands by instruction (PTX ISA: fma 3, add/mul 2, ld 1 address, st 2, mad 3,
#: setp 2, the reciprocal 1).
FMA_OPERANDS = 3
ADD_MUL_OPERANDS = 2
RCP_OPERANDS = 1
LOAD_OPERANDS = 1
STORE_OPERANDS = 2
IMAD_OPERANDS = 3
ISETP_OPERANDS = 2


@dataclass(frozen=True)
class InstructionMix:
    """Thread instructions per lattice update by unit (a warp instruction is 32 of them).

    Attributes:
        fp: FP instructions of the kernel's precision (adds, multiplies, FMAs; a division's multiply).
        precision: the kernel's dtype (``float32``, ``float64``, ``float16``).
        integer: integer instructions (index, guard, base addresses).
        sfu: special-function instructions (a division's reciprocal).
        loads, stores: global memory instructions.
        other: issue-only instructions (special-register reads, exit).
        operand_reads: register source operands read.
        fp_chain: dependent FP instructions per cell (a generated stencil sums its terms in source
            order, so a cell's FP work is one chain).
        cells_per_thread: the folding's cells per thread (independent chains per thread).
        source: where the counts come from (``description``).
    """

    fp: float
    precision: str
    integer: float
    sfu: float
    loads: float
    stores: float
    other: float
    operand_reads: float
    fp_chain: float
    cells_per_thread: int
    source: str = "description"

    @property
    def total(self) -> float:
        """Every thread instruction per lattice update (the issue slots' demand x 32)."""
        return self.fp + self.integer + self.sfu + self.loads + self.stores + self.other

    @property
    def memory(self) -> float:
        """Load and store instructions per lattice update (the load/store units' demand)."""
        return self.loads + self.stores


def thread_loads(load_rows: np.ndarray, owner: np.ndarray) -> int:
    """Distinct loads a folded thread issues: entries ``(i, r)`` of the load accesses ``i`` and fold
    copies ``r`` whose merged owner is themselves (``owner`` of
    :func:`~warpspeed.memory.addresses.merged_copies`, ``(accesses, copies)``)."""
    own = owner == np.arange(owner.size).reshape(owner.shape)
    return int(own[load_rows].sum())


def description_mix(kernel: Kernel, cells_per_thread: int, loads_per_thread: int) -> InstructionMix:
    """The instruction mix of ``kernel`` with ``cells_per_thread`` cells per thread that issue
    ``loads_per_thread`` distinct loads (module docstring)."""
    f = max(1, int(cells_per_thread))
    dims = max(1, sum(1 for n in kernel.domain if n > 1))
    fields = len(kernel.fields)
    flops = kernel.flops
    integer_per_thread = dims * (INDEX_IMAD_PER_DIMENSION + GUARD_ISETP_PER_DIMENSION) + fields * BASE_IMAD_PER_FIELD
    int_operands = (dims * (INDEX_IMAD_PER_DIMENSION * IMAD_OPERANDS + GUARD_ISETP_PER_DIMENSION * ISETP_OPERANDS)
                    + fields * BASE_IMAD_PER_FIELD * IMAD_OPERANDS)
    other_per_thread = dims * S2R_PER_DIMENSION + EXIT_PER_THREAD
    stores = float(len(kernel.stores))
    loads = loads_per_thread / f
    fp = flops.fmas + flops.muls + flops.adds + flops.divs
    operands = (flops.fmas * FMA_OPERANDS + (flops.muls + flops.adds + flops.divs) * ADD_MUL_OPERANDS
                + flops.divs * RCP_OPERANDS + loads * LOAD_OPERANDS + stores * STORE_OPERANDS + int_operands / f)
    return InstructionMix(fp=float(fp), precision=kernel.dtype, integer=integer_per_thread / f, sfu=float(flops.divs),
                          loads=loads, stores=stores, other=other_per_thread / f, operand_reads=float(operands),
                          fp_chain=float(fp), cells_per_thread=f)
