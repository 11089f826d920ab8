"""Latency L and initiation interval II of every instruction of the representative warp.

Cao et al., "AMALI", ISCA 2025, sections 4.4, 4.5 and 4.7, with GCoM (Lee et al., ISCA 2022) for
what AMALI takes from it:

- compute (int, fp32, fp64, sfu): L = the unit's latency; II = warp size / lanes per sub-core
  (eq 14);
- tensor (HMMA, IMMA, DMMA, BMMA; Hopper's warpgroup HGMMA, IGMMA, QGMMA, BGMMA): II = the
  warp's multiply-adds (m n k of the shape; a quarter of it for a warpgroup MMA, whose four
  warps share it, each on its own sub-core's tensor core) / the tensor core's multiply-adds per
  clock for the input type (eq 25), L = II (eq 26). Input types (:func:`tensor_type`): ``f16``
  (F16, BF16), ``tf32``, ``f64``, ``i8`` (S8, U8), ``i4`` (S4, U4), ``fp8`` (E4M3, E5M2), ``b1``;
- global and local loads: L = L1 + m1 L2 + m1 m2 DRAM (the additive average memory access time),
  II = the L1 wavefronts of the instruction (at least 1);
- global stores: L = L1 + L2 (write-through L1), II = wavefronts;
- shared memory: L = the shared load / store latency, II = 1 (bank conflicts ignored, as GCoM);
- anything else: L = II = 1.

Memory figures (wavefronts omega, L2 read sectors r, write sectors w, miss rates m1, m2) come from
the trace's per-field memory entry of the instruction's field, or from the totals when the
instruction has no field (``mapping: "uniform"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from warpspeed.errors import WarpspeedError
from warpspeed.interval.params import IntervalParams
from warpspeed.trace.document import FieldMemory, TotalMemory, TraceMemory
from warpspeed.sass.instructions import Instruction, mma_fmas_per_warp

#: Classes of producers, by which a stall is attributed (section 4.3 of the model's docs).
LONG, SHORT, WAIT = "long_scoreboard", "short_scoreboard", "wait"
#: Compute units with a throughput limit (structural stalls, eq 10).
COMPUTE_UNITS = ("int", "fp32", "fp64", "sfu", "tensor")


@dataclass(frozen=True)
class Cost:
    """One instruction as the model sees it. ``omega`` L1 wavefronts, ``reads``/``writes`` L2
    sectors (32 B) per warp instruction, ``dram_reads`` / ``dram_writes`` the DRAM sectors."""

    latency: float
    ii: float
    unit: str  # a COMPUTE_UNITS entry, "l1" for global memory, "other"
    producer: str  # LONG, SHORT or WAIT: the stall class of an instruction waiting on this one
    omega: float = 0.0
    reads: float = 0.0
    writes: float = 0.0
    dram_reads: float = 0.0
    dram_writes: float = 0.0


#: Input-type modifiers of the integer and 8-bit floating-point MMAs.
_INT8, _INT4, _FP8 = frozenset(("S8", "U8")), frozenset(("S4", "U4")), frozenset(("E4M3", "E5M2"))


def tensor_type(opcode: str, modifiers: tuple[str, ...]) -> str:
    """The input type of an MMA, which selects the tensor core's throughput: ``f64`` (DMMA),
    ``b1`` (BMMA, BGMMA), ``i4``/``i8`` (IMMA, IGMMA by their S4/U4, S8/U8 modifiers), ``fp8``
    (QGMMA), ``tf32`` (HMMA, HGMMA with TF32), else ``f16`` (F16 and BF16 inputs)."""
    mods = set(modifiers)
    if opcode == "DMMA":
        return "f64"
    if opcode in ("BMMA", "BGMMA"):
        return "b1"
    if opcode in ("IMMA", "IGMMA"):
        return "i4" if mods & _INT4 else "i8"
    if opcode == "QGMMA" or mods & _FP8:
        return "fp8"
    if "TF32" in mods:
        return "tf32"
    return "f16"


def tensor_ii(fmas: float, fma_per_clock: float) -> float:
    """Initiation interval of an MMA: its multiply-adds over the tensor core's per clock (eq 25)."""
    return fmas / fma_per_clock


def instruction_cost(ins: Instruction, memory: TraceMemory, params: IntervalParams, dram_store_ratio: float) -> Cost:
    """The :class:`Cost` of the trace instruction ``ins`` (``memory``: the trace's memory figures)."""
    fu, space = ins.fu, ins.space
    if fu in ("int", "fp32", "fp64", "sfu"):
        lanes_per_sub_core = params.lanes_per_sm[fu] / params.sub_cores
        return Cost(params.latency[fu], params.warp_size / lanes_per_sub_core, fu, WAIT)
    if fu == "tensor":
        shape = ins.tensor_shape
        kind = tensor_type(ins.opcode, tuple(ins.modifiers))
        rate = params.tensor_fma_per_clock.get(kind)
        if not shape:
            raise WarpspeedError(f"{ins.opcode} without a shape modifier: its multiply-adds are unknown")
        if not rate:
            known = ", ".join(sorted(params.tensor_fma_per_clock)) or "none"
            raise WarpspeedError(f"no tensor-core throughput for {kind} inputs ({ins.opcode}) on {params.device}; "
                                 f"it has: {known}")
        ii = tensor_ii(mma_fmas_per_warp(ins.opcode, tuple(shape)), rate)
        return Cost(ii, ii, "tensor", WAIT)
    if space in ("global", "local"):
        entry: FieldMemory | TotalMemory = memory.fields.get(ins.field or "", memory.totals)
        omega = max(1.0, entry.l1_wavefronts_per_instruction)
        m1, m2 = entry.l1_miss_rate, entry.l2_miss_rate
        if ins.opcode in ("STG", "ST", "STL", "RED"):
            w = entry.l2_store_sectors_per_store
            return Cost(params.l1_latency + params.l2_latency, omega, "l1", LONG, omega=omega, writes=w,
                        dram_writes=w * dram_store_ratio)
        r = entry.l2_load_sectors_per_load
        latency = params.l1_latency + m1 * params.l2_latency + m1 * m2 * params.dram_latency
        return Cost(latency, omega, "l1", LONG, omega=omega, reads=r, dram_reads=r * m2)
    if space == "shared":
        stores = ins.opcode in ("STS",)
        return Cost(params.shared_store_latency if stores else params.shared_load_latency, 1.0, "other", SHORT)
    if fu == "mio":
        return Cost(1.0, 1.0, "other", SHORT)
    return Cost(1.0, 1.0, "other", WAIT)


def dram_store_ratio(memory: TraceMemory) -> float:
    """DRAM store bytes per L1 -> L2 store byte (the share of the stores that reach DRAM)."""
    t = memory.totals
    return min(1.0, t.dram_store_bytes_per_lup / t.l2_store_bytes_per_lup) if t.l2_store_bytes_per_lup > 0 else 0.0
