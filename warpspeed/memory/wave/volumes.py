"""Results of the wave model: exact line counts per field and the volumes derived from them.

Both counters (:mod:`warpspeed.memory.wave.isl_counts`, :mod:`warpspeed.memory.wave.box_counts`)
return a :class:`FieldLineCounts`; :meth:`FieldWaveVolumes.from_counts` turns it into bytes per
lattice update, and :func:`wave_totals` sums the fields into a :class:`WaveVolumes`.

Footprints (Ernst et al. 2023, sections 4.4 and 4.4.2)
    Per field, ``L(T)`` is the union of the cache lines that a thread set ``T`` loads, ``S(T)``
    of those it stores, ``A(T) = L(T) ∪ S(T)`` (stores allocate in L2 like loads). ``W`` is the
    wave, ``P_d`` its previous-neighbour set along ``d``
    (:mod:`warpspeed.memory.wave.geometry`). Fields never alias, so footprints are per field and
    totals are sums.

    * Overlap: ``overlap_d = |L(W) ∩ A(P_d)|`` minus the lines already counted for earlier
      dimensions (x, then y, then z): the wave's load lines that the window touched, each line
      attributed to the shortest reuse distance that reaches it.
    * Layer volume: ``|A(P_d) ∪ L(W)|`` lines, the data the window touched plus the wave's
      loads, which must stay cached for the overlap to hit.
    * Band volume: ``|L(B)| + |S(B)|`` lines summed over the wave's x and y bands ``B``
      (:mod:`warpspeed.memory.wave.geometry`), the volume at which the x and y layer curve was
      fitted.
    * Oversubscription per curve, summed over all fields (the fields share the cache, so there
      is one ``o_d`` per dimension) and as the source of each curve defines it
      (:mod:`warpspeed.memory.capacity.terms`): ``o_x = o_y`` from the band volume
      (:func:`~warpspeed.memory.capacity.terms.band_oversubscription`), ``o_z`` = z layer
      volume / ``device.l2.effective_bytes``; and the L2 oversubscription of the wave's load
      plus store volume.

Granularity
    Every count is in lines of ``granularity_bytes``, by default ``device.l2.sector_bytes``
    (32 B on NVIDIA GPUs): the L2 fetches data from DRAM in 32 B sectors (section 4.4), and the
    reference implementation counts the volumes that enter its oversubscription factors at its
    DRAM fetch granularity too.

All ``*_bytes_per_lup`` values are divided by the number of valid cells (lattice updates) of
the wave; ``*_lines`` are exact integer counts of lines of the stated granularity.
"""

from __future__ import annotations

from dataclasses import dataclass

from warpspeed.errors import KernelError
from warpspeed.memory.capacity.terms import curve_oversubscriptions, l2_oversubscription
from warpspeed.memory.wave.geometry import PerDim


@dataclass(frozen=True)
class FieldLineCounts:
    """Exact line counts of one field's wave footprint (module docstring).

    Attributes:
        load, store: transfer lines loaded / stored by the wave (``|L(W)|``, ``|S(W)|``).
        overlap: per dimension, transfer lines of ``L(W)`` also touched by ``P_d`` and not
            already counted for an earlier dimension.
        layer: per dimension, transfer lines of ``A(P_d) ∪ L(W)`` (``load`` when ``P_d`` is
            empty).
        band: transfer lines of the bands, ``|L(B)| + |S(B)|`` summed over the bands (0 when
            the counter was not given them).
    """

    load: int
    store: int
    overlap: PerDim
    layer: PerDim
    band: int = 0


@dataclass(frozen=True)
class FieldWaveVolumes:
    """Wave-level footprint of one field.

    Attributes:
        field: field name.
        address_space: the address space used for this field (``"nd"`` or ``"linear"``).
        load_lines, store_lines: unique transfer lines (``granularity_bytes``) loaded / stored
            by the wave.
        compulsory_load_bytes_per_lup, compulsory_store_bytes_per_lup: those lines times the
            granularity, per valid cell of the wave.
        overlap_lines: per dimension, wave load lines also touched by ``P_d`` and not already
            counted for an earlier dimension (transfer lines).
        overlap_bytes_per_lup: ``overlap_lines`` times the granularity per lup.
        layer_lines: per dimension, lines of ``A(P_d) ∪ L(W)``.
        layer_volume_bytes: ``layer_lines`` times the granularity (bytes, not per lup).
        band_lines: lines of the bands (loads and stores of each band counted separately).
        band_volume_bytes: ``band_lines`` times the granularity (bytes).
    """

    field: str
    address_space: str
    load_lines: int
    store_lines: int
    compulsory_load_bytes_per_lup: float
    compulsory_store_bytes_per_lup: float
    overlap_lines: PerDim
    overlap_bytes_per_lup: PerDim
    layer_lines: PerDim
    layer_volume_bytes: PerDim
    band_lines: int = 0
    band_volume_bytes: float = 0.0

    @property
    def cached_bytes(self) -> PerDim:
        """Per dimension, the volume whose ratio to the L2 sets that dimension's curve's
        oversubscription: the band volume for x and y, the z layer volume for z (bytes)."""
        return PerDim(self.band_volume_bytes, self.band_volume_bytes, self.layer_volume_bytes.z)

    @classmethod
    def from_counts(cls, field: str, address_space: str, counts: FieldLineCounts, lups: int,
                    granularity_bytes: int) -> "FieldWaveVolumes":
        """Volumes from exact line counts: lines times ``granularity_bytes``, per lup or in bytes."""
        gran = granularity_bytes
        overlap, layer = counts.overlap, counts.layer
        return cls(
            field=field, address_space=address_space,
            load_lines=counts.load, store_lines=counts.store,
            compulsory_load_bytes_per_lup=counts.load * gran / lups,
            compulsory_store_bytes_per_lup=counts.store * gran / lups,
            overlap_lines=overlap,
            overlap_bytes_per_lup=PerDim(overlap.x * gran / lups, overlap.y * gran / lups, overlap.z * gran / lups),
            layer_lines=layer,
            layer_volume_bytes=PerDim(layer.x * gran, layer.y * gran, layer.z * gran),
            band_lines=counts.band,
            band_volume_bytes=float(counts.band * gran),
        )


@dataclass(frozen=True)
class WaveVolumes:
    """Wave-level DRAM footprint of a kernel and launch (sums over fields, see module docstring).

    Attributes:
        fields: per-field volumes, in the kernel's field order.
        lups: valid cells (lattice updates) of the wave.
        blocks: thread blocks of the wave; ``first_block`` its first linear block index.
        previous_lups: valid cells of each previous-neighbour set ``P_d`` (0 when empty).
        granularity_bytes: the line size every count is in.
        l2_effective_bytes: the cache capacity of the oversubscription factors.
        compulsory_load_bytes_per_lup, compulsory_store_bytes_per_lup: sums over fields.
        overlap_bytes_per_lup: per dimension, sum over fields.
        layer_volume_bytes: per dimension, sum over fields (bytes).
        band_volume_bytes: the bands' volume, sum over fields (bytes).
        oversubscription: per dimension, the oversubscription of that dimension's curve
            (:func:`warpspeed.memory.capacity.terms.curve_oversubscriptions`: from
            ``band_volume_bytes`` for x and y, ``layer_volume_bytes.z / l2_effective_bytes``
            for z).
        allocated_bytes: the wave's load plus store volume, sum over fields (bytes): what the
            wave allocates in the L2.
        l2_oversubscription: ``allocated_bytes / sqrt(l2_effective_bytes * 4 MiB)``
            (:func:`warpspeed.memory.capacity.terms.l2_oversubscription`).
    """

    fields: tuple[FieldWaveVolumes, ...]
    lups: int
    blocks: int
    first_block: int
    previous_lups: PerDim
    address_space: str
    granularity_bytes: int
    l2_effective_bytes: int
    compulsory_load_bytes_per_lup: float
    compulsory_store_bytes_per_lup: float
    overlap_bytes_per_lup: PerDim
    layer_volume_bytes: PerDim
    oversubscription: PerDim
    allocated_bytes: int
    l2_oversubscription: float
    band_volume_bytes: float = 0.0

    @property
    def cached_bytes(self) -> PerDim:
        """Per dimension, the volume that sets the curve's oversubscription (bytes):
        ``band_volume_bytes`` for x and y, ``layer_volume_bytes.z`` for z."""
        return PerDim(self.band_volume_bytes, self.band_volume_bytes, self.layer_volume_bytes.z)

    def field(self, name: str) -> FieldWaveVolumes:
        for f in self.fields:
            if f.field == name:
                return f
        raise KernelError(f"no field {name!r} in these wave volumes; fields: "
                          f"{', '.join(f.field for f in self.fields)}")


def wave_totals(fields: tuple[FieldWaveVolumes, ...], lups: int, blocks: int, first_block: int,
                previous_lups: PerDim, address_space: str, granularity_bytes: int,
                l2_effective_bytes: int) -> WaveVolumes:
    """The :class:`WaveVolumes` of per-field volumes: sums over fields and the
    oversubscription factors (:mod:`warpspeed.memory.capacity.terms`)."""
    layers = [f.layer_volume_bytes for f in fields]
    overlaps = [f.overlap_bytes_per_lup for f in fields]
    layer = PerDim(float(sum([v.x for v in layers])), float(sum([v.y for v in layers])),
                   float(sum([v.z for v in layers])))
    band = float(sum([f.band_volume_bytes for f in fields]))
    allocated = sum([(f.load_lines + f.store_lines) * granularity_bytes for f in fields])
    capacity = l2_effective_bytes
    return WaveVolumes(
        fields=fields, lups=lups, blocks=blocks, first_block=first_block,
        previous_lups=previous_lups, address_space=address_space,
        granularity_bytes=granularity_bytes, l2_effective_bytes=capacity,
        compulsory_load_bytes_per_lup=sum([f.compulsory_load_bytes_per_lup for f in fields]),
        compulsory_store_bytes_per_lup=sum([f.compulsory_store_bytes_per_lup for f in fields]),
        overlap_bytes_per_lup=PerDim(sum([v.x for v in overlaps]), sum([v.y for v in overlaps]),
                                     sum([v.z for v in overlaps])),
        layer_volume_bytes=layer,
        oversubscription=PerDim(*curve_oversubscriptions(band, layer.z, capacity)),
        allocated_bytes=allocated,
        l2_oversubscription=l2_oversubscription(allocated, capacity),
        band_volume_bytes=band,
    )
