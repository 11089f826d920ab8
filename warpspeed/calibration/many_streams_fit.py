"""Fit a part's many-streams DRAM rate on its own multi-array copies.

A kernel that keeps many address streams in flight at once (a lattice-Boltzmann pull step loads
19 arrays and stores 19) sustains less DRAM bandwidth than one load and one store stream
(:mod:`warpspeed.memory.dram_bandwidth`: ``dram_many_streams_gb_s`` from
``dram_many_streams_count`` streams on). On the H200 the one-array copy of
``fits/data/H200/mech-stream.csv`` (2^27 doubles, one load and one store stream) reaches 3.6-3.8
TB/s at four and more resident blocks per SM, the copies of 4 to 38 arrays of
``fits/data/H200/mech-segments.csv`` (256 x 256 x 64 cells plus one ghost layer per array, 35 MB
each: 0.28-2.7 GB per copy, beyond the 60 MB L2) 2.5-3.3 TB/s in the same blocks; without a
many-streams rate the overlap model predicts those copies 10 % too fast at the median (MAPE 15.3 %).

The rate is the value at which the model, with every other constant as shipped, reproduces the
median of the copies (prediction / measurement = 1; :func:`fit_rate`, bisection); the stream count
is that of the smallest copy in the set (4 arrays: 4 load and 4 store streams). The set holds
every copy of four or more arrays of the two block families (tall: 1 cell deep, cubic: 2-4 cells
deep; 512 threads, 1-512 wide), both element sizes and both index patterns (the same cell in
every array, and the shifts of a D3Q19 pull step), at the registers ptxas gave each.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import statistics
from dataclasses import dataclass
from typing import Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.files.stored import stored_file
from warpspeed.hardware.device import Device, load_device
from warpspeed.kernel.description import Field, FlopCounts, Kernel, X, Y, Z, load, store
from warpspeed.units import GIGA

#: The part, its folder under ``fits/data/`` and the copies' file.
DEVICE, FOLDER, FILE = "H200", "H200", "mech-segments.csv"
#: Cells of the copies' domain (x, y, z) and ghost layers per side (the file's header).
DOMAIN, GHOST = (256, 256, 64), 1
#: Block families and index patterns of the file that the fit takes; fewer arrays than
#: :data:`MIN_ARRAYS` fit in the L2 or run for tens of microseconds (launch-dominated).
FAMILIES, SHIFTS, MIN_ARRAYS = ("tall", "cube"), ("none", "d3q19"), 4
#: Lower and upper end of the bisection [GB/s] relative to the part's sustained two-stream rate,
#: and its steps (the H200 bracket, 1767 GB/s wide, halved 16 times: 0.03 GB/s).
BRACKET, STEPS = (0.5, 1.0), 16

#: The pull shifts of D3Q19, one velocity per array (the file's ``d3q19`` pattern loads each array at
#: the cell minus its velocity; which array takes which velocity does not change a copy's volumes):
#: D3Q19 lattice of Qian, d'Humieres and Lallemand, Europhys. Lett. 17, 479 (1992).
D3Q19 = ((0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
         (1, 1, 0), (-1, 1, 0), (1, -1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1),
         (0, 1, 1), (0, -1, 1), (0, 1, -1), (0, -1, -1))


@dataclass(frozen=True)
class Copy:
    """One measured copy: block, arrays, element bytes, shifted (D3Q19) or not, ptxas registers,
    measured bandwidth of the bytes it copies [GB/s]."""

    block: tuple[int, int, int]
    arrays: int
    element_bytes: int
    shifted: bool
    registers: int
    gb_s: float


@dataclass(frozen=True)
class ManyStreamsFit:
    """The fitted rate [GB/s], its stream count, and the model's prediction / measurement per
    copy at that rate (and without any many-streams rate, for comparison)."""

    rate_gb_s: float
    streams: float
    ratios: tuple[float, ...]
    ratios_without: tuple[float, ...]


def copies() -> list[Copy]:
    """The copies the fit takes (module docstring)."""
    text = stored_file(FOLDER, FILE).read_text()
    rows = csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#"))
    out = []
    for r in rows:
        if r["family"] not in FAMILIES or r["shift"] not in SHIFTS or int(r["arrays"]) < MIN_ARRAYS:
            continue
        out.append(Copy((int(r["block_x"]), int(r["block_y"]), int(r["block_z"])), int(r["arrays"]),
                        int(r["element_bytes"]), r["shift"] == "d3q19", int(r["registers"]), float(r["gb_s"])))
    if not out:
        raise WarpspeedError(f"{FOLDER}/{FILE}: no copy of {MIN_ARRAYS} or more arrays")
    return out


def copy_kernel(c: Copy) -> Kernel:
    """The copy's description: dst_i[cell] = src_i[cell - shift_i] over :data:`DOMAIN`."""
    shape = tuple(n + 2 * GHOST for n in DOMAIN)
    if c.shifted and c.arrays > len(D3Q19):
        raise WarpspeedError(f"a D3Q19-shifted copy has at most {len(D3Q19)} arrays, got {c.arrays}")
    shifts = [D3Q19[i] if c.shifted else (0, 0, 0) for i in range(c.arrays)]
    fields = tuple(Field(f"src{i}", c.element_bytes, shape) for i in range(c.arrays)) + tuple(
        Field(f"dst{i}", c.element_bytes, shape) for i in range(c.arrays))
    loads = tuple(load(f"src{i}", X + GHOST - s[0], Y + GHOST - s[1], Z + GHOST - s[2]) for i, s in enumerate(shifts))
    stores = tuple(store(f"dst{i}", X + GHOST, Y + GHOST, Z + GHOST) for i in range(c.arrays))
    return Kernel("copy", fields, loads + stores, DOMAIN, flops=FlopCounts(),
                  dtype="float64" if c.element_bytes == 8 else "float32", registers=c.registers)


def ratios(device: Device, rows: Sequence[Copy]) -> tuple[float, ...]:
    """The default model's prediction / measurement of each copy on ``device``."""
    from warpspeed.predict import Predictor

    out = []
    for c in rows:
        p = Predictor(copy_kernel(c), device).predict(c.block)
        # each copied element is loaded once and stored once
        out.append(p.lups_per_s * 2 * c.arrays * c.element_bytes / (c.gb_s * GIGA))
    return tuple(out)


def fit_rate(device_name: str = DEVICE) -> ManyStreamsFit:
    """Bisect the many-streams rate until the median prediction / measurement of :func:`copies` is 1."""
    base = load_device(device_name)
    rows = copies()
    streams = 2.0 * min(c.arrays for c in rows)
    without = ratios(dataclasses.replace(base, dram_many_streams_gb_s=None, dram_many_streams_count=None,
                                         dram_few_streams_count=None), rows)
    lo, hi = (f * base.dram_bandwidth_gb_s for f in BRACKET)
    for _ in range(STEPS):
        mid = 0.5 * (lo + hi)
        at_mid = ratios(dataclasses.replace(base, dram_many_streams_gb_s=mid, dram_many_streams_count=streams), rows)
        if statistics.median(at_mid) > 1.0:
            hi = mid
        else:
            lo = mid
    rate = 0.5 * (lo + hi)
    final = ratios(dataclasses.replace(base, dram_many_streams_gb_s=rate, dram_many_streams_count=streams), rows)
    return ManyStreamsFit(rate, streams, final, without)
