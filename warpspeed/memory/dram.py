"""DRAM load and store volumes from wave footprints and capacity curves.

Model: Ernst, Holzer, Hager, Knorr, Wellein: "Analytical Performance Estimation during Code
Generation on Modern GPUs", Journal of Parallel and Distributed Computing, 2023, sections 4.4
and 4.5 (section numbers below refer to it).

Per field ``f`` (bytes per lattice update; all rates dimensionless):

``load_f = compulsory_load_f - sum_d overlap_f,d * h_d(o_d) + capacity_miss_f + partial_store_read_f``

* ``compulsory_load_f``: unique sectors the wave loads (4.4, 4.4.1; :mod:`warpspeed.memory.wave`).
* Layer hits (4.4.2): ``overlap_f,d`` is the part of the wave's load footprint that the
  previous-neighbour set ``P_d`` touched (attributed to the nearest dimension first), and
  ``h_d = 1 - m_d`` with ``m_d`` the ``x_layer``/``y_layer``/``z_layer`` curve at the layer
  oversubscription of the curve's source (one ``o_d`` for all fields: they share the L2;
  :func:`warpspeed.memory.capacity.terms.curve_oversubscriptions`): for z
  ``o_z = |A(P_z) ∪ L(W)| * line / L2``, for x and y the wave's band volume over the L2,
  bounded to [0.01, 10] (the y curve of the reference code as of 2022, which the x overlaps
  share).
* Capacity misses of redundant L2 loads (4.5, eqs. (2), (5)): the redundant volume at the L2
  is what the L1s request beyond the wave's unique footprint,
  ``V_red,f = max(0, l2_load_f - compulsory_load_f)``, where ``l2_load_f`` is the block-level
  L2 -> L1 load volume (4.3) per lup. The miss rate is ``m_l2_load(o_L2)`` with
  ``o_L2 = V_wave / sqrt(L2 * 4 MiB)``, ``V_wave`` the wave's load plus store volume
  (``WaveVolumes.l2_oversubscription``; the definition the curve was fitted with,
  :func:`warpspeed.memory.capacity.terms.l2_oversubscription`), because the repeated requests
  of one wave's blocks compete with the data the whole wave allocates.
* Partial-store reads (4.4, 5.6): stores allocate in the L2; a sector written by more than one
  store transaction is partially written after each, and if it is evicted in between, the L2
  reads the unwritten part from DRAM. The redundant store volume is
  ``V_red_store,f = max(0, l2_store_f - compulsory_store_f)`` with ``l2_store_f`` the
  block-level L1 -> L2 store volume per lup (write-through, 4.3); it is charged to DRAM loads
  (and written back, below) with the miss rate ``m_l2_store(o_L2)`` (same ``o_L2`` as above).

``store_f = compulsory_store_f + partial_store_read_f``: the L2 is write-back, so every stored
sector of the wave is written to DRAM once (4.4), and a partially written sector that is evicted
before it is complete is written once more: the L2 fills it from DRAM (the read above) and
writes it back, and the later stores to it start a new sector that is written again when
complete. The reference implementation of the article charges the evicted partial stores to
both directions in every version (te42kyfo/warpspeed, predict_metrics.py, DerivedMetrics:
``memStoreV2 = memStoreV1 + memStoreEvicts`` and ``memLoadV3 = memLoadV2 + memStoreEvicts``,
commits c214074 of 2022 and 2ad0722 of 2025), and the article's store curve (figure 18, the
``l2_store`` curve here) is the hit rate of the redundant stores derived from the *measured
DRAM store* volume, ``(V_L2,store - V_DRAM,store) / (V_L2,store - V_DRAM,store,compulsory)``
(the authors' figure notebook, pystencils_notebooks/figures.ipynb, commit 313215d), so the
curve's misses are write-backs by construction.

Totals are the sums over fields (fields never alias). ``max(0, ·)`` is applied per field, so the
total redundant volume is the sum of the per-field clipped values. :func:`field_dram_volumes`
holds these equations for one field; :func:`dram_volumes` applies them to every field of a wave.

Grid average: the waves of a grid differ (a wave that crosses a block-plane boundary has a
larger footprint per lup than one inside a plane), so the predictor passes
:class:`~warpspeed.memory.wave.GridWaveVolumes`, the volumes averaged over the classes of full
waves (:mod:`warpspeed.memory.wave.classes`, :mod:`warpspeed.memory.wave.average`):
compulsory volumes and overlaps weighted by lattice updates, oversubscription factors by
waves. The equations are applied once, to these averages, so every DRAM volume is a function of
the reported averages (the refit, :mod:`warpspeed.validation.refit`, re-evaluates it from
them); applying the curves to each class and averaging the results instead changes the DRAM
volume of the paper's 168 stencil configurations by at most 3.0e-3 relative (8 x 128 x 1 with
2y folding, whose classes differ in their band oversubscription). The exact average
over every full wave (``Predictor(exact_waves=True)``, :mod:`warpspeed.memory.wave.exact`)
changes it by at most 0.38 % and the predicted lup/s by at most 0.22 % on the same space.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Mapping

from warpspeed.errors import KernelError
from warpspeed.hardware.device import Device
from warpspeed.memory.capacity.curves import CapacityCurves
from warpspeed.memory.capacity.files import curves_for_device
from warpspeed.memory.capacity.terms import redundant_bytes_per_lup
from warpspeed.memory.wave import DIMENSIONS, GridWaveVolumes, PerDim, WaveVolumes


@dataclass(frozen=True)
class FieldDramVolumes:
    """DRAM volume components of one field, bytes per lup.

    ``load_bytes_per_lup = compulsory_load - sum(layer_hit) + capacity_miss + partial_store_read``,
    ``store_bytes_per_lup = compulsory_store + partial_store_read`` (the evicted partial
    sectors are written back). ``l2_redundant_load_bytes_per_lup`` and
    ``l2_redundant_store_bytes_per_lup`` are the redundant volumes the two miss rates were
    applied to.
    """

    field: str
    compulsory_load_bytes_per_lup: float
    layer_hit_bytes_per_lup: PerDim
    l2_redundant_load_bytes_per_lup: float
    capacity_miss_bytes_per_lup: float
    l2_redundant_store_bytes_per_lup: float
    partial_store_read_bytes_per_lup: float
    load_bytes_per_lup: float
    store_bytes_per_lup: float

    @property
    def total_bytes_per_lup(self) -> float:
        return self.load_bytes_per_lup + self.store_bytes_per_lup


@dataclass(frozen=True)
class DramVolumes:
    """DRAM volumes per field and in total (bytes per lup), with the rates that produced them.

    Attributes:
        fields: per-field components, in the kernel's field order.
        layer_hit_rate: ``h_d(o_d)`` per dimension.
        layer_oversubscription: ``o_d`` per dimension (from the wave volumes).
        l2_oversubscription: ``o_L2`` (wave allocated volume / L2 effective capacity).
        l2_load_miss_rate, l2_store_miss_rate: ``m_l2_load(o_L2)``, ``m_l2_store(o_L2)``.
        curves_family: the family of the capacity curves used.
        curves_label: how the curves are named in output: the family for the packaged file,
            else the file they were read from (:attr:`CapacityCurves.label`).
        The volume properties are sums over ``fields`` of the :class:`FieldDramVolumes` components.
    """

    fields: tuple[FieldDramVolumes, ...]
    layer_hit_rate: PerDim
    layer_oversubscription: PerDim
    l2_oversubscription: float
    l2_load_miss_rate: float
    l2_store_miss_rate: float
    curves_family: str
    curves_label: str = ""

    def _total(self, attr: str) -> float:
        return float(sum(getattr(f, attr) for f in self.fields))

    @property
    def compulsory_load_bytes_per_lup(self) -> float:
        return self._total("compulsory_load_bytes_per_lup")

    @property
    def layer_hit_bytes_per_lup(self) -> PerDim:
        return PerDim(*(sum(f.layer_hit_bytes_per_lup[d] for f in self.fields) for d in DIMENSIONS))

    @property
    def l2_redundant_load_bytes_per_lup(self) -> float:
        return self._total("l2_redundant_load_bytes_per_lup")

    @property
    def capacity_miss_bytes_per_lup(self) -> float:
        return self._total("capacity_miss_bytes_per_lup")

    @property
    def l2_redundant_store_bytes_per_lup(self) -> float:
        return self._total("l2_redundant_store_bytes_per_lup")

    @property
    def partial_store_read_bytes_per_lup(self) -> float:
        return self._total("partial_store_read_bytes_per_lup")

    @property
    def load_bytes_per_lup(self) -> float:
        return self._total("load_bytes_per_lup")

    @property
    def store_bytes_per_lup(self) -> float:
        return self._total("store_bytes_per_lup")

    @property
    def total_bytes_per_lup(self) -> float:
        """DRAM load plus store volume per lup."""
        return self.load_bytes_per_lup + self.store_bytes_per_lup

    def field(self, name: str) -> FieldDramVolumes:
        for f in self.fields:
            if f.field == name:
                return f
        raise KernelError(f"no field {name!r} in these DRAM volumes; fields: "
                          f"{', '.join(f.field for f in self.fields)}")


def _per_field(values: Mapping[str, float], names: list[str], what: str) -> dict[str, float]:
    if not isinstance(values, Mapping):
        raise KernelError(f"{what} must map every field name to bytes per lup, got "
                          f"{type(values).__name__}")
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise KernelError(f"{what}: unknown field(s) {', '.join(unknown)}; fields: {', '.join(names)}")
    missing = [n for n in names if n not in values]
    if missing:
        raise KernelError(f"{what}: missing field(s) {', '.join(missing)}; give every field "
                          "(0 for a field without such accesses)")
    result = {}
    for n in names:
        v = values[n]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise KernelError(f"{what}[{n!r}] = {v!r}: must be a finite number >= 0 (bytes per lup)")
        result[n] = float(v)
    return result


@dataclass(frozen=True)
class DramRates:
    """The rates the DRAM volumes of one launch use (dimensionless).

    Attributes:
        layer_hit_rate: ``h_d(o_d)`` per dimension.
        l2_load_miss_rate: ``m_l2_load(o_L2)``; l2_store_miss_rate: ``m_l2_store(o_L2)``.
    """

    layer_hit_rate: PerDim
    l2_load_miss_rate: float
    l2_store_miss_rate: float


def dram_rates(curves: CapacityCurves, layer_oversubscription: PerDim, l2_oversubscription: float) -> DramRates:
    """Layer hit rates and L2 miss rates from the curves at the given oversubscription factors."""
    return DramRates(
        layer_hit_rate=PerDim(*(float(curves.layer(d).hit_rate(layer_oversubscription[d])) for d in DIMENSIONS)),
        l2_load_miss_rate=float(curves.l2_load.miss_rate(l2_oversubscription)),
        l2_store_miss_rate=float(curves.l2_store.miss_rate(l2_oversubscription)),
    )


def field_dram_volumes(field: str, compulsory_load_bytes_per_lup: float, compulsory_store_bytes_per_lup: float,
                       overlap_bytes_per_lup: PerDim, l2_load_bytes_per_lup: float,
                       l2_store_bytes_per_lup: float, rates: DramRates) -> FieldDramVolumes:
    """The DRAM volume equations of one field (module docstring), bytes per lup.

    Args:
        field: the field's name (a label only).
        compulsory_load_bytes_per_lup, compulsory_store_bytes_per_lup: the wave's compulsory
            volumes.
        overlap_bytes_per_lup: per dimension, the wave's load volume that ``P_d`` touched.
        l2_load_bytes_per_lup: block-level L2 -> L1 load volume (with L1 capacity misses).
        l2_store_bytes_per_lup: block-level L1 -> L2 store volume.
        rates: the layer hit rates and L2 miss rates.
    """
    hits = PerDim(*(overlap_bytes_per_lup[d] * rates.layer_hit_rate[d] for d in DIMENSIONS))
    red_load = redundant_bytes_per_lup(l2_load_bytes_per_lup, compulsory_load_bytes_per_lup)
    red_store = redundant_bytes_per_lup(l2_store_bytes_per_lup, compulsory_store_bytes_per_lup)
    capacity = rates.l2_load_miss_rate * red_load
    partial = rates.l2_store_miss_rate * red_store
    return FieldDramVolumes(
        field=field,
        compulsory_load_bytes_per_lup=compulsory_load_bytes_per_lup,
        layer_hit_bytes_per_lup=hits,
        l2_redundant_load_bytes_per_lup=red_load,
        capacity_miss_bytes_per_lup=capacity,
        l2_redundant_store_bytes_per_lup=red_store,
        partial_store_read_bytes_per_lup=partial,
        load_bytes_per_lup=compulsory_load_bytes_per_lup - sum(hits) + capacity + partial,
        store_bytes_per_lup=compulsory_store_bytes_per_lup + partial,
    )


def dram_volumes(wave: WaveVolumes | GridWaveVolumes, l2_load_bytes_per_lup: Mapping[str, float],
                 l2_store_bytes_per_lup: Mapping[str, float], device: Device,
                 curves: CapacityCurves | None = None) -> DramVolumes:
    """DRAM load and store volumes per lup (module docstring for the model).

    Args:
        wave: wave-level footprint of one wave (:func:`warpspeed.memory.wave.wave_volumes`) or
            averaged over the waves of the grid (:meth:`warpspeed.memory.wave.WaveModel.grid_volumes`).
        l2_load_bytes_per_lup: per field, the block-level L2 -> L1 load volume (bytes per lup).
        l2_store_bytes_per_lup: per field, the block-level L1 -> L2 store volume (bytes per lup).
        device: selects the default curves (its family's ``fits/`` file).
        curves: capacity curves to use instead of the device family's.
    """
    names = [f.field for f in wave.fields]
    l2_load = _per_field(l2_load_bytes_per_lup, names, "l2_load_bytes_per_lup")
    l2_store = _per_field(l2_store_bytes_per_lup, names, "l2_store_bytes_per_lup")
    used = curves_for_device(device) if curves is None else curves
    layers, l2_over = wave.oversubscription, wave.l2_oversubscription
    rates = dram_rates(used, layers, l2_over)
    fields = tuple(
        field_dram_volumes(fw.field, fw.compulsory_load_bytes_per_lup, fw.compulsory_store_bytes_per_lup,
                           fw.overlap_bytes_per_lup, l2_load[fw.field], l2_store[fw.field], rates)
        for fw in wave.fields
    )
    return DramVolumes(
        fields=fields,
        layer_hit_rate=rates.layer_hit_rate,
        layer_oversubscription=layers,
        l2_oversubscription=l2_over,
        l2_load_miss_rate=rates.l2_load_miss_rate,
        l2_store_miss_rate=rates.l2_store_miss_rate,
        curves_family=used.family,
        curves_label=used.label,
    )

