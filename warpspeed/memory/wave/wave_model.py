"""The wave model: per-field access maps of a kernel, evaluated for one launch configuration.

:class:`WaveModel` builds a kernel's access maps once and, for each launch, takes the cells of
the wave and of its previous-neighbour sets (:mod:`warpspeed.memory.wave.geometry`), counts
every field's lines with the box fast path (:mod:`warpspeed.memory.wave.box_counts`) where the
field's accesses are box-preserving and with ISL (:mod:`warpspeed.memory.wave.isl_counts`)
otherwise, and turns the counts into volumes (:mod:`warpspeed.memory.wave.volumes`). Both
counters give the same integers. :meth:`WaveModel.volumes` evaluates one wave (by default the
launch's representative wave); :meth:`WaveModel.grid_volumes` every class of waves of the grid
(:mod:`warpspeed.memory.wave.classes`), the input of the grid average of the DRAM volumes.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Literal, Sequence

import islpy as isl
import numpy as np

from warpspeed.errors import DeviceError, KernelError, LaunchError
from warpspeed.hardware.device import Device
from warpspeed.launch.geometry import Launch, LaunchInfo
from warpspeed.memory.wave.average import GridWaveVolumes, WaveClassVolumes
from warpspeed.memory.addresses import CompiledKernel
from warpspeed.memory.wave.box_counts import FieldStacks, box_counts_many, box_field_counts, field_stacks
from warpspeed.memory.wave.boxmaps import field_box_maps
from warpspeed.memory.wave.classes import wave_classes
from warpspeed.memory.wave.exact import ShiftInvariance, exact_wave_classes
from warpspeed.memory.wave.geometry import (DIMENSIONS, Box, WaveCellArrays, WaveCells, box_cells,
                                            launch_range_cells, wave_cell_arrays)
from warpspeed.memory.wave.isl_counts import (FieldLayout, FieldMaps, field_layouts, field_maps, isl_cell_set,
                                              isl_field_counts, line_map)
from warpspeed.memory.wave.volumes import FieldLineCounts, FieldWaveVolumes, WaveVolumes, wave_totals
from warpspeed.memo import BoundedMemo

AddressSpace = Literal["nd", "linear"]

#: Wave evaluations and grid averages a :class:`WaveModel` keeps (least recently used out). The
#: 168 configurations of the paper space need some 120 grid averages and 300 wave evaluations.
MEMO_SIZE = 2048

#: The address spaces of Ernst et al. 2023, section 4.4.1: N-D index tuples or 1-D byte addresses.
ADDRESS_SPACES: tuple[str, ...] = ("nd", "linear")


class WaveModel:
    """Per-access maps of a compiled kernel, reusable across launch configurations.

    Build once per kernel and address space (the maps do not depend on the launch or the
    device); ``volumes(info, device)`` evaluates one launch configuration, at a cost that
    depends on the number of accesses and boxes, not on the domain or wave size. No state
    outside this object.
    """

    def __init__(self, compiled: CompiledKernel, address_space: AddressSpace = "nd", fast: bool = True,
                 memo_size: int = MEMO_SIZE) -> None:
        """``fast``: count box-preserving fields with :mod:`warpspeed.memory.wave.box_counts`
        instead of ISL (same integers, 5-20x faster); ``False`` forces ISL for every field.
        ``memo_size``: how many wave evaluations and grid averages to keep (see :data:`MEMO_SIZE`)."""
        if address_space not in ADDRESS_SPACES:
            raise KernelError(
                f"address_space {address_space!r} is unknown; allowed: {', '.join(ADDRESS_SPACES)}"
            )
        self.compiled = compiled
        self.address_space = address_space
        self._ctx = isl.Context()
        #: per field: its name, address space and number of target coordinates (the ISL maps of
        #: :attr:`field_maps` are built only when a field needs ISL)
        self.layouts: tuple[FieldLayout, ...] = field_layouts(compiled, address_space == "linear")
        self._line_maps: dict[tuple[int, int], isl.Map] = {}
        self._fast = fast and address_space == "nd"
        self._stacks: dict[tuple[str, int], FieldStacks | None] = {}
        self._waves: BoundedMemo[WaveVolumes] = BoundedMemo(memo_size)
        self._grids: BoundedMemo[GridWaveVolumes] = BoundedMemo(memo_size)

    @cached_property
    def field_maps(self) -> tuple[FieldMaps, ...]:
        """Every field's accesses as ISL maps (built on first use: the box fast path does not need them)."""
        return field_maps(self.compiled, self.address_space == "linear", self._ctx)

    def _isl_maps(self, field: str) -> FieldMaps:
        return next(fm for fm in self.field_maps if fm.field == field)

    @property
    def fast_fields(self) -> tuple[str, ...]:
        """Fields whose footprints are counted as box unions (:mod:`warpspeed.memory.wave.box_counts`)
        for lines at least as large as an element."""
        kernel = self.compiled.kernel
        return tuple(fm.field for fm in self.layouts
                     if self._field_stacks(fm, kernel.field(fm.field).element_bytes) is not None)

    def _field_stacks(self, fm: FieldLayout, line_bytes: int) -> FieldStacks | None:
        """The field's accesses as box maps at ``line_bytes``; None when not box-preserving."""
        if not self._fast or fm.address_space != "nd":
            return None
        key = (fm.field, line_bytes)
        if key not in self._stacks:
            accesses = [a for a in self.compiled.accesses if a.field.name == fm.field]
            loads = field_box_maps([a for a in accesses if not a.access.is_store], line_bytes)
            stores = field_box_maps([a for a in accesses if a.access.is_store], line_bytes)
            self._stacks[key] = None if loads is None or stores is None else field_stacks(loads, stores, fm.rank)
        return self._stacks[key]

    def line_map(self, rank: int, line_bytes: int) -> isl.Map:
        """The (cached) map dividing the byte coordinate of a rank-``rank`` tuple into lines."""
        key = (rank, line_bytes)
        if key not in self._line_maps:
            self._line_maps[key] = line_map(rank, line_bytes, self._ctx)
        return self._line_maps[key]

    def volumes(self, info: LaunchInfo, device: Device, granularity_bytes: int | None = None,
                first_block: int | None = None) -> WaveVolumes:
        """Wave-level volumes of one wave of the launch ``info`` on ``device``.

        Args:
            info: launch geometry and representative wave (from ``analyze_launch``).
            device: supplies the L2's layer capacity (``layer_capacity``) and the default granularity.
            granularity_bytes: line size in bytes of every count (default
                ``device.l2.sector_bytes``, the DRAM fetch granularity).
            first_block: first block of the wave (default ``info.wave.first_block``); the wave
                has ``info.wave.blocks`` blocks.
        """
        launch = info.launch
        self._check_domain(launch)
        gran = device.l2.sector_bytes if granularity_bytes is None else granularity_bytes
        _check_granularity(gran, "granularity_bytes")
        first = info.wave.first_block if first_block is None else first_block
        return self._volumes_many(launch, info.wave.blocks, (first,), gran, device.l2.layer_capacity)[0]

    def _check_domain(self, launch: Launch) -> None:
        if tuple(launch.domain) != tuple(self.compiled.kernel.domain):
            raise LaunchError(
                f"launch domain {launch.domain} differs from the kernel's domain "
                f"{self.compiled.kernel.domain}; analyze the launch for this kernel"
            )

    def _volumes_many(self, launch: Launch, blocks: int, firsts: Sequence[int], gran: int,
                      l2_effective_bytes: int) -> list[WaveVolumes]:
        """The volumes of the waves of ``blocks`` blocks starting at each of ``firsts``
        (:meth:`_waves_many` of one launch)."""
        return self._waves_many([(launch, blocks, first) for first in firsts], gran, l2_effective_bytes)

    def _waves_many(self, waves: Sequence[tuple[Launch, int, int]], gran: int,
                    l2_effective_bytes: int) -> list[WaveVolumes]:
        """The volumes of each wave ``(launch, blocks, first block)`` of ``waves``: kept ones from
        the memo, the others counted together (:func:`~warpspeed.memory.wave.box_counts.box_counts_many`:
        every box-preserving field of every wave in few batches)."""
        # what a wave's volumes depend on: the covered cells (domain, grid, cells per block), the
        # wave's blocks, the line size and the cache capacity of the oversubscription factors
        keys = [(tuple(launch.domain), tuple(launch.grid), tuple(launch.cells_per_block), blocks, gran,
                 l2_effective_bytes, first) for launch, blocks, first in waves]
        found = [self._waves.find(key) for key in keys]
        missing: dict[tuple, int] = {}  # each missing wave once, by key
        for i, f in enumerate(found):
            if f is None:
                missing.setdefault(keys[i], i)
        if not missing:
            return found  # type: ignore[return-value]
        pending = list(missing.values())
        arrays = dict(zip(pending, wave_cell_arrays([(waves[i][0], waves[i][2], waves[i][1]) for i in pending])))
        stacks = [(fm, self._field_stacks(fm, gran)) for fm in self.layouts]
        requests, where = [], []
        for i in pending:
            a = arrays[i]  # the wave's cell boxes, shared by its fields
            for fm, field_stacks in stacks:
                if field_stacks is not None:
                    requests.append((field_stacks, a.wave, a.previous, a.bands))
                    where.append((i, fm.field))
        counted = dict(zip(where, box_counts_many(requests)))
        computed: dict[tuple, WaveVolumes] = {}
        for key, i in missing.items():
            c = arrays[i]
            others = _OtherCounts(self, c, gran)
            fields = tuple(
                FieldWaveVolumes.from_counts(fm.field, fm.address_space, counted.get((i, fm.field)) or others(fm),
                                             c.lups, gran)
                for fm in self.layouts
            )
            computed[key] = self._waves.add(key, wave_totals(
                fields, lups=c.lups, blocks=waves[i][1], first_block=waves[i][2], previous_lups=c.previous_lups,
                address_space=self.address_space, granularity_bytes=gran, l2_effective_bytes=l2_effective_bytes))
        return [computed[key] if f is None else f for key, f in zip(keys, found)]

    def shift_invariance(self, granularity_bytes: int) -> ShiftInvariance:
        """Which shifts of the cells move every field's lines rigidly (so that footprint counts
        do not change; :mod:`warpspeed.memory.wave.exact`): every access must be box-preserving
        and read z (for shifts by block planes), respectively y (for shifts by block rows), only
        as ``coordinate + c`` in a non-contiguous index."""
        planes: bool = True
        spread: int | None = 0
        for fm in self.layouts:
            stacks = self._field_stacks(fm, granularity_bytes)
            if stacks is None:
                return ShiftInvariance(planes=False, row_spread_cells=None)
            maps = stacks.both  # a shift axis has scale = line = 1; constants read no dimension
            rigid = (maps.scale == 1) & (maps.line == 1)
            planes = planes and not np.any((maps.dims == 2) & ~rigid)
            if spread is not None and np.any((maps.dims == 1) & ~rigid):
                spread = None
            elif spread is not None:
                reads_y = (maps.dims == 1) & rigid
                offsets = np.concatenate((maps.offset[reads_y], maps.offset_hi[reads_y]))
                if offsets.size:
                    spread = max(spread, int(offsets.max() - offsets.min()))
        return ShiftInvariance(planes=planes, row_spread_cells=spread)

    def plane_shift_invariant(self, granularity_bytes: int) -> bool:
        """True when a shift of the cells by whole block planes leaves every count unchanged
        (:meth:`shift_invariance`)."""
        return self.shift_invariance(granularity_bytes).planes

    def grid_volumes(self, info: LaunchInfo, device: Device, granularity_bytes: int | None = None,
                     exact: bool = False, exact_budget: int | None = None) -> GridWaveVolumes:
        """The volumes of every class of full waves of the grid, with the class weights: by
        default the representative classes of :mod:`warpspeed.memory.wave.classes` (one wave
        evaluation per class, at most three); with ``exact`` the classes of equal waves of
        :mod:`warpspeed.memory.wave.exact`, whose averages are those over every full wave (one
        evaluation per distinct wave, up to one per full wave). ``exact_budget``: the most wave
        evaluations the exact average may take; a grid with more distinct waves gets the
        representative classes (``GridWaveVolumes.method`` says which)."""
        launch = info.launch
        self._check_domain(launch)
        gran = device.l2.sector_bytes if granularity_bytes is None else granularity_bytes
        _check_granularity(gran, "granularity_bytes")
        key = _grid_key(info, gran, device.l2.layer_capacity, exact, exact_budget)
        return self._grids.get(key, lambda: self._grid_volumes(info, device, granularity_bytes, exact, exact_budget))

    def prefetch(self, infos: Sequence[LaunchInfo], device: Device, exact_budget: int | None = None) -> None:
        """Evaluate the representative classes of the grids of ``infos`` (what :meth:`grid_volumes`
        returns without ``exact``) together and keep them: the waves of all the grids are counted in
        a few batches (:func:`~warpspeed.memory.wave.box_counts.box_counts_many`) instead of one per
        grid, with the same integers. ``exact_budget``: the one the later calls pass (it is part of
        the memo's key). Grids already kept are skipped; at most the memo's size are kept."""
        gran, capacity = device.l2.sector_bytes, device.l2.layer_capacity
        pending: dict[tuple, tuple[LaunchInfo, tuple]] = {}
        for info in infos:
            self._check_domain(info.launch)
            key = _grid_key(info, gran, capacity, False, exact_budget)
            if key not in self._grids and key not in pending:
                pending[key] = (info, wave_classes(info.launch.grid, info.wave.blocks))
            if len(pending) == self._grids.size:
                break
        if not pending:
            return
        waves = [(info.launch, info.wave.blocks, c.first_block) for info, classes in pending.values() for c in classes]
        volumes = iter(self._waves_many(waves, gran, capacity))
        for key, (info, classes) in pending.items():
            self._grids.add(key, GridWaveVolumes(tuple(WaveClassVolumes(c, next(volumes)) for c in classes), "classes"))

    def _grid_volumes(self, info: LaunchInfo, device: Device, granularity_bytes: int | None, exact: bool,
                      exact_budget: int | None) -> GridWaveVolumes:
        classes, method = wave_classes(info.launch.grid, info.wave.blocks), "classes"
        if exact:
            gran = device.l2.sector_bytes if granularity_bytes is None else granularity_bytes
            _check_granularity(gran, "granularity_bytes")
            distinct = exact_wave_classes(info.launch, info.wave.blocks, self.shift_invariance(gran))
            if exact_budget is None or len(distinct) <= exact_budget:
                classes, method = distinct, "exact"
        gran = device.l2.sector_bytes if granularity_bytes is None else granularity_bytes
        volumes = self._volumes_many(info.launch, info.wave.blocks, [c.first_block for c in classes], gran,
                                     device.l2.layer_capacity)
        return GridWaveVolumes(tuple(WaveClassVolumes(c, v) for c, v in zip(classes, volumes)), method)

    def group_load_lines(self, launch: Launch, ranges: Sequence[tuple[int, int]],
                         line_bytes: int) -> tuple[dict[str, int], int] | None:
        """Distinct lines of ``line_bytes`` each field loads for the blocks of the inclusive
        linear block ranges ``ranges`` together, and the group's lattice updates; None when a
        field's accesses are not box maps (the exact box unions need them)."""
        _check_granularity(line_bytes, "line_bytes")
        cells = launch_range_cells(launch, ranges)
        lines = {}
        for fm in self.layouts:
            stacks = self._field_stacks(fm, line_bytes)
            counts = None if stacks is None else box_field_counts(stacks, cells, {})
            if counts is None:
                return None
            lines[fm.field] = counts.load
        return lines, box_cells(cells)

    def _counts(self, fm: FieldLayout, cells: WaveCells, isl_sets: "_IslCells", gran: int) -> FieldLineCounts:
        """One field's line counts (with its band lines): box unions when possible (the wave and the
        bands on one grid, else each on its own), else ISL."""
        stacks = self._field_stacks(fm, gran)
        if stacks is not None:
            counts = box_field_counts(stacks, cells.wave, cells.previous, cells.bands)
            if counts is not None:
                return counts
        band = sum(self._band_lines(fm, cells, isl_sets, i, gran) for i in range(len(cells.bands)))
        if stacks is not None:
            counts = box_field_counts(stacks, cells.wave, cells.previous)
            if counts is not None:
                return replace(counts, band=band)
        return replace(isl_field_counts(self._isl_maps(fm.field), self.line_map(fm.rank, gran), isl_sets.wave,
                                        isl_sets.previous),
                       band=band)

    def _band_lines(self, fm: FieldLayout, cells: WaveCells, isl_sets: "_IslCells", index: int, gran: int) -> int:
        """``|L(B)| + |S(B)|`` of band ``index``: the lines one field loads plus the lines it
        stores for the band's cells, each counted on its own as the y curve's source counts
        its sets (:mod:`warpspeed.memory.wave.geometry`)."""
        no_previous: dict[str, list[Box]] = {}
        stacks = self._field_stacks(fm, gran)
        counts = None if stacks is None else box_field_counts(stacks, cells.bands[index], no_previous)
        if counts is None:
            counts = isl_field_counts(self._isl_maps(fm.field), self.line_map(fm.rank, gran), isl_sets.band(index),
                                      {d: None for d in DIMENSIONS})
        return counts.load + counts.store


class _OtherCounts:
    """The line counts of the fields of one wave that the batched box counter did not count (accesses
    that are not box maps, or a compressed grid that would be too large): :meth:`WaveModel._counts`
    on the wave's cells (its arrays as lists), built on first use and shared by the wave's fields with
    their ISL sets."""

    def __init__(self, model: WaveModel, arrays: WaveCellArrays, gran: int) -> None:
        self._model, self._arrays, self._gran = model, arrays, gran
        self._cells: tuple[WaveCells, _IslCells] | None = None

    def __call__(self, fm: FieldLayout) -> FieldLineCounts:
        if self._cells is None:
            cells = self._arrays.as_lists()
            self._cells = cells, _IslCells(cells, self._model._ctx)
        return self._model._counts(fm, *self._cells, self._gran)


class _IslCells:
    """The ISL cell sets of a :class:`WaveCells`, built on first use (only fields the box fast
    path cannot count need them)."""

    def __init__(self, cells: WaveCells, ctx: isl.Context) -> None:
        self._cells, self._ctx = cells, ctx
        self._wave: isl.Set | None = None
        self._previous: dict[str, isl.Set | None] | None = None
        self._bands: dict[int, isl.Set] = {}

    def band(self, index: int) -> isl.Set:
        """The ISL cell set of band ``index`` (built on first use)."""
        if index not in self._bands:
            self._bands[index] = isl_cell_set(self._cells.bands[index], self._ctx)
        return self._bands[index]

    @property
    def wave(self) -> isl.Set:
        if self._wave is None:
            self._wave = isl_cell_set(self._cells.wave, self._ctx)
        return self._wave

    @property
    def previous(self) -> dict[str, isl.Set | None]:
        if self._previous is None:
            self._previous = {d: (isl_cell_set(b, self._ctx) if b else None)
                              for d, b in self._cells.previous.items()}
        return self._previous


def _grid_key(info: LaunchInfo, gran: int, capacity: int, exact: bool, exact_budget: int | None) -> tuple:
    """What the grid volumes of a launch depend on (the memo's key of :meth:`WaveModel.grid_volumes`)."""
    launch = info.launch
    return (tuple(launch.domain), tuple(launch.grid), tuple(launch.cells_per_block), info.wave.blocks, gran,
            capacity, exact, exact_budget)


def _check_granularity(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise DeviceError(f"{what} must be a positive integer number of bytes, got {value!r}")


def wave_volumes(compiled: CompiledKernel, info: LaunchInfo, device: Device,
                 address_space: AddressSpace = "nd", granularity_bytes: int | None = None) -> WaveVolumes:
    """Wave-level DRAM volumes of the representative wave of one launch configuration (builds a
    :class:`WaveModel`).

    To evaluate many configurations of the same kernel, build one ``WaveModel(compiled,
    address_space)`` and call its ``volumes`` or ``grid_volumes`` method instead, which reuses
    the access maps. ``granularity_bytes`` defaults to ``device.l2.sector_bytes`` (32 B DRAM
    fetch granularity).
    """
    return WaveModel(compiled, address_space).volumes(info, device, granularity_bytes)
