"""Wave volumes averaged over the full waves of the grid.

:meth:`warpspeed.memory.wave.WaveModel.grid_volumes` evaluates one representative wave per class
(:mod:`warpspeed.memory.wave.classes`, or with ``exact=True`` one wave per class of equal waves,
:mod:`warpspeed.memory.wave.exact`); :class:`GridWaveVolumes` holds them with their weights and
averages them:

* per-lattice-update volumes (compulsory loads and stores, overlaps) are weighted by the
  class's lattice updates, ``waves x lups of the representative``: the average is the total
  volume of the waves over their total lattice updates;
* per-wave quantities (layer and band volumes, oversubscription factors) are weighted by the
  number of waves of the class.

The DRAM model (:func:`warpspeed.memory.dram.dram_volumes`) takes these averages as it takes
the volumes of one wave (:attr:`GridWaveVolumes.fields` has the per-field attributes it reads).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Sequence

from warpspeed.errors import KernelError
from warpspeed.memory.wave.classes import WaveClass
from warpspeed.memory.wave.geometry import DIMENSIONS, PerDim
from warpspeed.memory.wave.volumes import FieldWaveVolumes, WaveVolumes


@dataclass(frozen=True)
class WaveClassVolumes:
    """One class of waves and the volumes of its representative wave."""

    wave_class: WaveClass
    volumes: WaveVolumes

    @property
    def lup_weight(self) -> float:
        """Lattice updates of the class: waves x lups of the representative."""
        return float(self.wave_class.waves * self.volumes.lups)


def weighted_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    """``sum(w * v) / sum(w)`` (0 when the weights sum to 0)."""
    total = float(sum(weights))
    return float(sum(w * v for w, v in zip(weights, values)) / total) if total else 0.0


@dataclass(frozen=True)
class AveragedFieldVolumes:
    """One field's wave volumes averaged over the grid (module docstring for the weights)."""

    field: str
    compulsory_load_bytes_per_lup: float
    compulsory_store_bytes_per_lup: float
    overlap_bytes_per_lup: PerDim
    layer_volume_bytes: PerDim
    band_volume_bytes: float = 0.0

    @property
    def cached_bytes(self) -> PerDim:
        """Per dimension, the field's share of the volume that sets the curve's
        oversubscription (:attr:`warpspeed.memory.wave.FieldWaveVolumes.cached_bytes`)."""
        return PerDim(self.band_volume_bytes, self.band_volume_bytes, self.layer_volume_bytes.z)


@dataclass(frozen=True)
class GridWaveVolumes:
    """The classes of full waves of a grid with their representative volumes, and averages.

    ``method``: ``"exact"`` when the classes hold waves of equal counts (the averages are those
    over every full wave), ``"classes"`` for the representative classes."""

    classes: tuple[WaveClassVolumes, ...]
    method: str = "classes"

    def __post_init__(self) -> None:
        if not self.classes:
            raise KernelError("a grid has at least one class of full waves")

    @cached_property
    def waves(self) -> int:
        """Full waves of the grid (the sum of the class weights)."""
        return sum(c.wave_class.waves for c in self.classes)

    def _per_lup(self, get: Callable[[WaveVolumes], float]) -> float:
        return weighted_mean([get(c.volumes) for c in self.classes], [c.lup_weight for c in self.classes])

    def _per_wave(self, get: Callable[[WaveVolumes], float]) -> float:
        return weighted_mean([get(c.volumes) for c in self.classes], [c.wave_class.waves for c in self.classes])

    @cached_property
    def compulsory_load_bytes_per_lup(self) -> float:
        return self._per_lup(lambda v: v.compulsory_load_bytes_per_lup)

    @cached_property
    def compulsory_store_bytes_per_lup(self) -> float:
        return self._per_lup(lambda v: v.compulsory_store_bytes_per_lup)

    @cached_property
    def overlap_bytes_per_lup(self) -> PerDim:
        return PerDim(*(self._per_lup(lambda v, d=d: v.overlap_bytes_per_lup[d]) for d in DIMENSIONS))

    @cached_property
    def layer_volume_bytes(self) -> PerDim:
        return PerDim(*(self._per_wave(lambda v, d=d: v.layer_volume_bytes[d]) for d in DIMENSIONS))

    @cached_property
    def band_volume_bytes(self) -> float:
        return self._per_wave(lambda v: v.band_volume_bytes)

    @cached_property
    def cached_bytes(self) -> PerDim:
        """Per dimension, the volume that sets the curve's oversubscription
        (:attr:`warpspeed.memory.wave.WaveVolumes.cached_bytes`), averaged per wave."""
        return PerDim(*(self._per_wave(lambda v, d=d: v.cached_bytes[d]) for d in DIMENSIONS))

    @cached_property
    def oversubscription(self) -> PerDim:
        return PerDim(*(self._per_wave(lambda v, d=d: v.oversubscription[d]) for d in DIMENSIONS))

    @cached_property
    def l2_oversubscription(self) -> float:
        return self._per_wave(lambda v: v.l2_oversubscription)

    @cached_property
    def fields(self) -> tuple[AveragedFieldVolumes, ...]:
        """Every field's averaged volumes, in the kernel's field order."""
        return tuple(self.field(f.field) for f in self.classes[0].volumes.fields)

    def field(self, name: str) -> AveragedFieldVolumes:
        """One field's averaged volumes (computed once: a grid's volumes are shared by the
        configurations that cover the same cells)."""
        known = self.__dict__.setdefault("_fields", {})
        if name not in known:
            known[name] = self._field(name)
        return known[name]

    def _field(self, name: str) -> AveragedFieldVolumes:
        per_lup = [c.lup_weight for c in self.classes]
        per_wave = [c.wave_class.waves for c in self.classes]
        fields: list[FieldWaveVolumes] = [c.volumes.field(name) for c in self.classes]
        return AveragedFieldVolumes(
            field=name,
            compulsory_load_bytes_per_lup=weighted_mean([f.compulsory_load_bytes_per_lup for f in fields], per_lup),
            compulsory_store_bytes_per_lup=weighted_mean([f.compulsory_store_bytes_per_lup for f in fields], per_lup),
            overlap_bytes_per_lup=PerDim(*(weighted_mean([f.overlap_bytes_per_lup[d] for f in fields], per_lup)
                                           for d in DIMENSIONS)),
            layer_volume_bytes=PerDim(*(weighted_mean([f.layer_volume_bytes[d] for f in fields], per_wave)
                                        for d in DIMENSIONS)),
            band_volume_bytes=weighted_mean([f.band_volume_bytes for f in fields], per_wave),
        )
