"""Registers per thread without a compiler, learned from the counts ptxas gave for shipped kernels.

The shipped table (:mod:`pystencils_plugin.register_table`) holds ptxas' counts of 26 kernels
(the built-in workloads, their foldings, the 25-point stencil in float) on four architectures, and
with each kernel the features of its code that this estimate reads (:func:`code_features`):

* ``loads``: distinct elements a thread loads; ``stores``: distinct elements it stores;
* ``temporaries``: values pystencils names in the kernel body (its common subexpressions);
* ``element_bytes``: 8 for double, 4 for float.

What decides the count is how many values the compiler keeps live at once. Two kinds of kernels
behave differently (the shipped counts show it): a stencil (few stores per load) streams its loads
into one sum, and its count grows slowly with the loads (17 registers for 5 loads, 32-40 for 25-42);
a lattice Boltzmann update (a store per load) needs every loaded value at once, and its count grows
by about 3 registers per double loaded (68 for 19 loads, 156 for 54). Kernels with many
temporaries per load (the Allen-Cahn update) are a third kind. So the estimate is a nearest-neighbour
interpolation (:func:`estimate_from_table`): among the shipped kernels of the same kind (element
size; a store per two loads or more; temporaries; two temporaries per load or more), it takes the
two whose load registers (``loads x element_bytes / 4``) are nearest and interpolates linearly
between them (never with a negative slope), or takes the only one there is. Nothing is fitted
beyond that: the table is the model.

Judged by leaving each of the 26 kernels out of the table in turn and estimating it from the other
25 (``benchmarks/register_estimate.py``; the table is in ``docs/registers.md``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

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
        """What the code is apart from how much it loads (kernels of one kind are compared)."""
        loads = max(self.loads, 1)
        return (self.element_bytes, LBM_LOADS_PER_STORE * self.stores >= loads, self.temporaries > 0,
                self.temporaries >= MANY_TEMPORARIES_PER_LOAD * loads)

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
    """One shipped kernel: its shape digest, features and ptxas' count per architecture."""

    shape: str
    features: CodeFeatures
    registers: Mapping[str, int]


def estimate_from_table(features: CodeFeatures, arch: str, samples: Iterable[Sample]) -> tuple[int, str] | None:
    """``(registers, detail)`` interpolated from the ``samples`` of the same kind that have a count
    for ``arch`` (module docstring); None when there is none of that kind."""
    same = [s for s in samples if s.features.kind == features.kind and arch in s.registers]
    if not same:
        return None
    x = features.load_registers
    same.sort(key=lambda s: (abs(s.features.load_registers - x), s.registers[arch], s.shape))
    a = same[0]
    others = [s for s in same[1:] if s.features.load_registers != a.features.load_registers]
    if not others:
        return a.registers[arch], f"the count of the nearest shipped kernel of the same kind ({len(same)} of them)"
    b = others[0]
    xa, xb = a.features.load_registers, b.features.load_registers
    slope = max(0.0, (b.registers[arch] - a.registers[arch]) / (xb - xa))
    value = a.registers[arch] + slope * (x - xa)
    return int(math.floor(value + 0.5)), (f"interpolated from the two nearest shipped kernels of the same kind "
                                          f"({len(same)} of them) by load registers")


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
    from warpspeed.errors import WarpspeedError
    from warpspeed.hardware.device import load_device
    from warpspeed.launch.geometry import make_launch, occupancy

    device = load_device(JUDGING_DEVICES[arch])
    out = []
    for threads in JUDGING_THREADS:
        try:
            launch = make_launch((threads, 1, 1), (1, 1, 1), (threads, 1, 1))
            out.append(occupancy(launch, device, max(1, min(registers, device.max_registers_per_thread))).blocks_per_sm)
        except WarpspeedError:
            out.append(0)
    return tuple(out)


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
