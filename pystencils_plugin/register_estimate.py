"""Registers per thread without a compiler, learned from the counts ptxas gave for shipped kernels.

The shipped table (:mod:`pystencils_plugin.register_table`) holds ptxas' counts of 26 kernels
(the built-in workloads, their foldings, the 25-point stencil in float) on four architectures, and
with each kernel the features of its code that this estimate reads (:func:`code_features`):

* ``loads``: distinct elements a thread loads; ``stores``: distinct elements it stores;
* ``temporaries``: values pystencils names in the kernel body (its common subexpressions);
* ``element_bytes``: 8 for double, 4 for float.

What decides the count is how many values the compiler keeps live at once, and how far ptxas
trims them to let a full SM's threads reside. Three kinds of kernels behave differently (the shipped
counts show it):

* a *sum* (no temporaries, two loads or more per store: the stencils) consumes each loaded value
  once, into one accumulator per folded cell, so its loads can be issued late; ptxas keeps as many
  in flight as the registers of full occupancy allow and no more (:func:`register_budget`: 32 on an
  A100 or H100, 40 on an L40, 64 on Turing, the target CUDA 13 compiles sm_70 for): the 25-point
  stencil has 58 registers on sm_75 and 32 on sm_80, the 7-point one 20 and 22. Its count follows
  the loads more than their bytes (the 25-point stencil: 58 in double, 54 in float on sm_75), so
  sums of every element size are one kind, compared by loads (the nearest of the same element
  size first);
* a *copy* (no temporaries, a store per two loads or fewer: the 19-array copy) holds each loaded
  value until its store, one value (``element_bytes / 4`` registers) per load in flight; ptxas
  trims it to the budget too (56 registers on sm_75, 32 on sm_80), unless it needs many more: the
  folded copy (94-95 on sm_75 and sm_80) is left as it is. The line between them is learned from
  the table: a copy is trimmed when its estimate is below the least count a copy has there above
  its architecture's budget;
* an *update* with temporaries (lattice Boltzmann, Allen-Cahn) needs its loaded values at once
  (density and velocity from all of them), its count grows by about 3 registers per double loaded
  (68 for 19 loads, 156 for 54) and is never trimmed.

The estimate (:func:`estimate_from_table`) first finds what the kernel would take untrimmed. For a
sum or an update: among the shipped kernels of the same kind (element size, except for sums; a
store per two loads or more; temporaries; two temporaries per load or more), the two nearest by
:attr:`CodeFeatures.size` (loads for a sum, load registers ``loads x element_bytes / 4`` else),
interpolated linearly (never with a negative slope); where all of them have one size, the largest
of their counts (as the shape table takes the largest of disagreeing counts). For a copy: the count
of the nearest shipped copy that was not trimmed (above its budget), moved by one register per
load register. Then it trims sums and copies to the budget. Beyond the device facts of the budget
nothing is fitted: the table is the model.

Judged by leaving each of the 26 kernels out of the table in turn and estimating it from the other
25 (``benchmarks/register_estimate.py``; the table is in ``docs/registers.md``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: A distinct subscripted field access (``_data_src[ctr_0 + 1LL]``), and one on a left-hand side.
_ACCESS = re.compile(r"(_data_\w+\[[^\]]*\])")
_STORE = re.compile(r"(_data_\w+\[[^\]]*\])\s*=(?!=)")
#: A named temporary of the kernel body (not pystencils' constants ``__c_*`` or counters ``ctr_*``).
_TEMPORARY = re.compile(r"\bconst (?:double|float|int64_t|int32_t) (?!__c_|ctr_)\w+ =")
#: The element type of the first field pointer parameter.
_POINTER = re.compile(r"\b(double|float)\s*\*\s*RESTRICT\s+const\s+_data_")
#: Bytes of a pystencils field element by its C type.
ELEMENT_BYTES = {"double": 8, "float": 4}
#: Bytes of one 32-bit register.
REGISTER_BYTES = 4
#: The kinds' thresholds: a store per ``LBM_LOADS_PER_STORE`` loads or more makes an update that
#: needs its loads at once; ``MANY_TEMPORARIES_PER_LOAD`` temporaries per load or more a kernel of
#: long expressions.
LBM_LOADS_PER_STORE = 2
MANY_TEMPORARIES_PER_LOAD = 2
#: Compile targets with no device of their own in the database, as the device of their generation
#: with the resident threads (and warps) per SM of the target: CUDA 13 compiles sm_70 for sm_75,
#: whose SM holds 1024 threads, 32 warps, with the same 64 Ki registers allocated in units of 256
#: per warp (CUDA C++ Programming Guide, "Compute Capabilities", Table "Technical Specifications per
#: Compute Capability", column 7.5; CUDA Toolkit cuda_occupancy.h, cudaOccRegAllocationGranularity).
TARGET_AS_DEVICE = {"sm_75": ("V100-PCIe-32GB", 1024)}


@dataclass(frozen=True)
class CodeFeatures:
    """What the estimate reads from a kernel's code (counts per thread)."""

    loads: int
    stores: int
    temporaries: int
    element_bytes: int

    @property
    def load_registers(self) -> float:
        """Registers the loaded values take if all were live: ``loads x element_bytes / 4``."""
        return self.loads * self.element_bytes / REGISTER_BYTES

    @property
    def kind(self) -> tuple[int, bool, bool, bool]:
        """What the code is apart from how much it loads (kernels of one kind are compared); sums
        of every element size are one kind (their counts follow the loads, not their bytes)."""
        loads = max(self.loads, 1)
        return (0 if self.is_sum else self.element_bytes, self.stores_per_load, self.temporaries > 0,
                self.temporaries >= MANY_TEMPORARIES_PER_LOAD * loads)

    @property
    def size(self) -> float:
        """What kernels of one kind are interpolated by: the loads of a sum, else :attr:`load_registers`."""
        return float(self.loads) if self.is_sum else self.load_registers

    @property
    def stores_per_load(self) -> bool:
        """A store per two loads or fewer (lattice Boltzmann updates, copies)."""
        return LBM_LOADS_PER_STORE * self.stores >= max(self.loads, 1)

    @property
    def is_sum(self) -> bool:
        """No temporaries, two loads or more per store: each loaded value goes once into a sum."""
        return self.temporaries == 0 and not self.stores_per_load

    @property
    def is_copy(self) -> bool:
        """No temporaries, a store per two loads or fewer: each loaded value is held until its store."""
        return self.temporaries == 0 and self.stores_per_load

    def as_dict(self) -> dict[str, int]:
        return {"loads": self.loads, "stores": self.stores, "temporaries": self.temporaries,
                "element_bytes": self.element_bytes}

    @staticmethod
    def from_dict(data: object) -> "CodeFeatures | None":
        """The features of a table entry, or None when they are not four counts."""
        if not isinstance(data, Mapping):
            return None
        values = [data.get(k) for k in ("loads", "stores", "temporaries", "element_bytes")]
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            return None
        if values[3] not in ELEMENT_BYTES.values():
            return None
        return CodeFeatures(*values)  # type: ignore[arg-type]


def code_features(source: str, element_bytes: int | None = None) -> CodeFeatures:
    """The features of a kernel's CUDA source (pystencils' generated code); ``element_bytes``
    defaults to the type of its first field pointer (8 when there is none)."""
    accesses = set(_ACCESS.findall(source))
    stores = set(_STORE.findall(source))
    if element_bytes is None:
        match = _POINTER.search(source)
        element_bytes = ELEMENT_BYTES[match.group(1)] if match else ELEMENT_BYTES["double"]
    return CodeFeatures(loads=len(accesses - stores), stores=len(stores),
                        temporaries=len(_TEMPORARY.findall(source)), element_bytes=element_bytes)


@dataclass(frozen=True)
class Sample:
    """One shipped kernel: its shape digest, features, ptxas' count per architecture and, where
    ptxas compiled for another architecture (sm_70 for sm_75 on CUDA 13), that target."""

    shape: str
    features: CodeFeatures
    registers: Mapping[str, int]
    targets: Mapping[str, str] = field(default_factory=dict)


@lru_cache(maxsize=None)
def register_budget(target: str) -> int:
    """Registers per thread at which an SM of the compile ``target`` (``sm_80``) still holds its
    most threads: the largest count whose resident 256-thread blocks fill the SM (the occupancy
    rules of :func:`warpspeed.launch.geometry.occupancy`: 32 on sm_80 and sm_90, 40 on sm_89,
    64 on sm_75); :data:`MAX_BUDGET` (no trimming) for a target with no device in the database."""
    device = _target_device(target)
    if device is None:
        return MAX_BUDGET
    full = device.max_threads_per_sm // BUDGET_THREADS
    for registers in range(device.max_registers_per_thread, 0, -1):
        if _blocks(device, BUDGET_THREADS, registers) >= full:
            return registers
    return 0


#: The budget of a target with no device in the database: the most registers a thread may have
#: (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"), so nothing is trimmed.
MAX_BUDGET = 255
#: Threads per block at which :func:`register_budget` counts resident threads (a divisor of every
#: NVIDIA SM's resident threads, 1024 to 2048).
BUDGET_THREADS = 256


def _target_device(target: str) -> "Device | None":
    """The device whose SM is the compile target's: the judging device (:data:`JUDGING_DEVICES`),
    :data:`TARGET_AS_DEVICE`, else the first NVIDIA device of the database of that architecture;
    None when there is none."""
    from warpspeed.hardware.device import all_devices, load_device
    from warpspeed.sass.toolchain import cuda_arch

    if target in TARGET_AS_DEVICE:
        name, threads = TARGET_AS_DEVICE[target]
        device = load_device(name)
        return replace(device, max_threads_per_sm=threads, max_warps_per_sm=threads // device.warp_size)
    if target in JUDGING_DEVICES:
        return load_device(JUDGING_DEVICES[target])
    return next((d for d in all_devices() if d.vendor.lower() == "nvidia" and cuda_arch(d.architecture) == target), None)


def _blocks(device: "Device", threads: int, registers: int) -> int:
    """Resident blocks of ``threads`` per SM of ``device`` with ``registers`` per thread (0 where none fits)."""
    from warpspeed.errors import WarpspeedError
    from warpspeed.launch.geometry import make_launch, occupancy

    try:
        launch = make_launch((threads, 1, 1), (1, 1, 1), (threads, 1, 1))
        return occupancy(launch, device, max(1, min(registers, device.max_registers_per_thread))).blocks_per_sm
    except WarpspeedError:
        return 0


def compile_target(arch: str, samples: Iterable[Sample]) -> str:
    """The architecture ptxas compiled the ``samples``' counts of ``arch`` for (``arch`` itself
    unless a sample says otherwise)."""
    return next((s.targets[arch] for s in samples if arch in s.targets), arch)


def estimate_from_table(features: CodeFeatures, arch: str, samples: Iterable[Sample]) -> tuple[int, str] | None:
    """``(registers, detail)`` learned from the ``samples`` of the same kind that have a count for
    ``arch`` (module docstring): interpolated, then trimmed to :func:`register_budget` for a sum
    or a copy; None when there is no sample of that kind."""
    same = [s for s in samples if s.features.kind == features.kind and arch in s.registers]
    if not same:
        return None
    target = compile_target(arch, same)
    budget = register_budget(target)
    untrimmed, how = _untrimmed(features, arch, same, budget)
    if untrimmed <= budget or not (features.is_sum or features.is_copy):
        return untrimmed, how
    if features.is_sum:
        return budget, f"{how}, trimmed to the {budget} registers of full occupancy on {target} (a sum)"
    above = [s.registers[a] for s in same for a in s.registers
             if s.registers[a] > register_budget(compile_target(a, same))]
    if above and untrimmed >= min(above):
        return untrimmed, f"{how}; a copy as large as one the table holds above the budget, not trimmed"
    return budget, f"{how}, trimmed to the {budget} registers of full occupancy on {target} (a copy)"


def _untrimmed(features: CodeFeatures, arch: str, same: list[Sample], budget: int) -> tuple[int, str]:
    """The count the kernel would take untrimmed, from the ``same``-kind samples (the module
    docstring), and how it was found. A copy extrapolates from the nearest sample above the
    ``budget`` (one that was not trimmed) where there is one."""
    x = features.size
    if features.is_copy:
        untrimmed = [s for s in same if s.registers[arch] > budget] or same
        a = min(untrimmed, key=lambda s: (abs(s.features.size - x), -s.registers[arch], s.shape))
        value = a.registers[arch] + (x - a.features.size)  # one register per load register
        return max(1, int(math.floor(value + 0.5))), (
            f"the count of the nearest shipped copy ({len(same)} of them), moved by one register per load register")
    same = sorted(same, key=lambda s: (abs(s.features.size - x), s.features.element_bytes != features.element_bytes,
                                       -s.registers[arch], s.shape))
    a = same[0]
    others = [s for s in same[1:] if s.features.size != a.features.size]
    if not others:
        return a.registers[arch], f"the count of the nearest shipped kernel of the same kind ({len(same)} of them)"
    b = others[0]
    xa = a.features.size
    slope = max(0.0, (b.registers[arch] - a.registers[arch]) / (b.features.size - xa))
    value = a.registers[arch] + slope * (x - xa)
    return max(1, int(math.floor(value + 0.5))), (
        f"interpolated from the two nearest shipped kernels of the same kind ({len(same)} of them)")


def samples_without(samples: Sequence[Sample], shape: str) -> list[Sample]:
    """``samples`` without those of ``shape`` (leave one kernel out)."""
    return [s for s in samples if s.shape != shape]


#: The device whose occupancy judges an estimate, per architecture (one of each in the database).
JUDGING_DEVICES = {"sm_70": "V100-PCIe-32GB", "sm_80": "A100-SXM4-40GB", "sm_89": "L40", "sm_90": "H100-SXM5-80GB"}
#: Block sizes (threads) at which the occupancy of an estimate must equal ptxas' (the ranked spaces'
#: 1024-thread blocks and the 512 and 256 of kernels with more registers).
JUDGING_THREADS = (256, 512, 1024)
#: How close an estimate must be to count as close (registers per thread).
CLOSE_REGISTERS = 4


def resident_blocks(arch: str, registers: int) -> tuple[int, ...]:
    """Resident blocks per SM at each of :data:`JUDGING_THREADS` on the architecture's judging
    device with ``registers`` per thread (0 where the block does not fit)."""
    from warpspeed.hardware.device import load_device

    device = load_device(JUDGING_DEVICES[arch])
    return tuple(_blocks(device, threads, registers) for threads in JUDGING_THREADS)


@dataclass(frozen=True)
class LeftOut:
    """One kernel left out of the table: ptxas' count and the estimate from the others, per architecture."""

    sample: Sample
    estimates: Mapping[str, int]

    def close(self, arch: str) -> bool:
        return abs(self.estimates[arch] - self.sample.registers[arch]) <= CLOSE_REGISTERS

    def same_occupancy(self, arch: str) -> bool:
        return resident_blocks(arch, self.estimates[arch]) == resident_blocks(arch, self.sample.registers[arch])


def leave_one_kernel_out(samples: Sequence[Sample], fallback: Callable[[CodeFeatures], int]) -> list[LeftOut]:
    """Every sample estimated from the others (:func:`estimate_from_table`; ``fallback`` where no
    other sample is of its kind)."""
    out = []
    for s in samples:
        rest = samples_without(samples, s.shape)
        estimates = {}
        for arch in s.registers:
            found = estimate_from_table(s.features, arch, rest)
            estimates[arch] = found[0] if found is not None else fallback(s.features)
        out.append(LeftOut(s, estimates))
    return out


def fallback_registers(features: CodeFeatures) -> int:
    """The estimate where no shipped kernel is of the same kind: every loaded value live, plus
    ``FALLBACK_BASE_REGISTERS`` (indices, counters, the guard, addresses): an upper bound of the
    right order, as :func:`pystencils_plugin.registers.estimate_registers` without its pointers."""
    return int(FALLBACK_BASE_REGISTERS + math.ceil(features.load_registers))


#: Registers besides the loaded values in :func:`fallback_registers` (the base of
#: :data:`pystencils_plugin.registers.ESTIMATE_BASE_REGISTERS` and two 64-bit pointers).
FALLBACK_BASE_REGISTERS = 20


def loko_rows(samples: Sequence[Sample], names: Mapping[str, str]) -> list[list[str]]:
    """The leave-one-kernel-out table: per kernel (``names``: shape -> label, in table order) and
    architecture, ptxas' count / the estimate, marked where more than 4 off or the occupancy differs."""
    by_shape = {r.sample.shape: r for r in leave_one_kernel_out(samples, fallback_registers)}
    rows = []
    for shape, label in names.items():
        r = by_shape[shape]
        cells = []
        for arch in sorted(r.sample.registers):
            mark = ("" if r.close(arch) else " (far)") + ("" if r.same_occupancy(arch) else " (occ.)")
            cells.append(f"{r.sample.registers[arch]} / {r.estimates[arch]}{mark}")
        rows.append([label, *cells])
    return rows


def loko_summary(samples: Sequence[Sample]) -> dict[str, float]:
    """Shares (0-1) of the (kernel, architecture) pairs within :data:`CLOSE_REGISTERS`, with the
    same occupancy, with both, and of the kernels with both on every architecture."""
    results = leave_one_kernel_out(samples, fallback_registers)
    pairs = [(r, a) for r in results for a in r.sample.registers]
    both = [r.close(a) and r.same_occupancy(a) for r, a in pairs]
    return {"close": sum(r.close(a) for r, a in pairs) / len(pairs),
            "same_occupancy": sum(r.same_occupancy(a) for r, a in pairs) / len(pairs),
            "both": sum(both) / len(pairs),
            "kernels_all_archs": sum(all(r.close(a) and r.same_occupancy(a) for a in r.sample.registers)
                                     for r in results) / len(results),
            "pairs": len(pairs), "kernels": len(results)}


def loko_markdown(samples: Sequence[Sample], labels: Mapping[str, str]) -> str:
    """The leave-one-kernel-out table and its summary as Markdown (``docs/registers.md``'s
    generated block), kernels in the order of ``labels``."""
    archs = sorted({a for s in samples for a in s.registers})
    names = {shape: labels[shape] for shape in labels if any(s.shape == shape for s in samples)}
    lines = ["| kernel (left out) | " + " | ".join(f"{a}: ptxas / estimate" for a in archs) + " |",
             "|---|" + "---:|" * len(archs)]
    lines += ["| " + " | ".join(row) + " |" for row in loko_rows(samples, names)]
    s = loko_summary(samples)
    lines += ["", f"Of the {s['pairs']} (kernel, architecture) pairs, {100 * s['close']:.1f} % are within "
                  f"{CLOSE_REGISTERS} registers of ptxas, {100 * s['same_occupancy']:.1f} % give the same resident blocks "
                  f"per SM at {', '.join(map(str, JUDGING_THREADS))} threads per block, {100 * s['both']:.1f} % both; "
                  f"{100 * s['kernels_all_archs']:.1f} % of the {s['kernels']} kernels have both on every architecture."]
    return "\n".join(lines) + "\n"
