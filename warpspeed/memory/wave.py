"""Wave-level DRAM volumes with implicit integer sets (paper 001, sections 4.4.1 and 4.4.2).

The L2 cache is shared by every thread of the device, so the DRAM traffic is estimated from the
*unique memory footprint of a wave*: the thread blocks that are resident at the same time
(:class:`warpspeed.launch.Wave`). Thread sets, address maps and footprints are ISL objects
(``islpy``), so the cost of a configuration does not grow with the domain or the wave size.

Thread and cell sets
    The representative wave is the linear block range ``first_block .. first_block + blocks - 1``
    of :class:`~warpspeed.launch.Wave`; blocks are numbered ``bx + gx * (by + gy * bz)`` (x
    fastest) over ``launch.grid = (gx, gy, gz)``. A linear range of blocks is a union of at
    most five boxes in block coordinates (partial first row, full rows up to the end of the
    first plane, full planes, full rows of the last plane, partial last row). A thread of block
    ``b`` with thread index ``t`` updates the cells ``(b * blockDim + t) * fold + j`` with
    ``0 <= t < blockDim`` and ``0 <= j < fold``; per dimension these cells are exactly the
    interval ``[b * blockDim * fold, (b + 1) * blockDim * fold)``, so a block box maps to one cell
    box. Each box is intersected with the valid domain ``0 <= cell < domain`` (the kernel's
    ``if (cell < N)`` guard), and the union of the boxes is an ``isl.Set`` of cells.

Address spaces (4.4.1)
    Every access becomes an ``isl.Map`` from cells ``[x, y, z]`` to cache lines.

    * ``"nd"`` (default): the field's N-D index tuple is kept; its contiguous index (the first
      entry of ``Field.layout``) is scaled to bytes, shifted by the field's base alignment and
      floor-divided by the line size: ``floor((alignment + element_bytes * i_contig) / line)``.
      The other indices stay as dimensions (slowest first). As the paper notes, a line that
      wraps around into the next row is counted once per row, and per-row alignment is not
      modelled. A field with any linear-index access uses the linear space for all its
      accesses (the two spaces cannot be mixed within one field).
    * ``"linear"``: the 1-D byte address ``floor(byte_address / line)``.

Granularities
    Transfer volumes (compulsory loads and stores, layer overlaps) are counted in units of
    ``granularity_bytes``, by default ``device.l2_sector_bytes`` (32 B on NVIDIA GPUs): the L2
    fetches data from DRAM in 32 B sectors (paper 001, 4.4: "can transfer data at the
    granularity of 32B cache line sectors"). Capacity quantities (the volume that must stay
    cached for a layer condition, the wave's allocated volume) are counted in units of
    ``allocation_bytes``, by default ``device.l2_line_bytes`` (128 B): the L2 allocates whole
    lines, and the oversubscription factor of 4.5, eq. (4), is defined on the allocation volume.

Footprints
    Per field, ``L(T)`` is the union of the images of a thread set ``T`` under the field's load
    maps, ``S(T)`` under its store maps, ``A(T) = L(T) ∪ S(T)`` (stores allocate in L2 like
    loads, 4.4). Fields never alias, so footprints are per field and totals are sums.

Previous-neighbour sets (4.4.2, DESIGN.md "Layer conditions")
    For dimension ``d`` with block-index stride ``R_x = 1``, ``R_y = gx``, ``R_z = gx * gy`` in
    launch order, the previous-neighbour set ``P_d`` is the set of blocks launched within one
    reuse distance along ``d`` before the wave: linear block indices
    ``max(0, first - R_d) .. first - 1``. So ``P_x`` is the block launched just before the wave,
    ``P_y`` the block row (``gx`` blocks) before it, ``P_z`` the block plane (``gx * gy`` blocks)
    before it. Every block of the wave whose neighbour one block back along ``d`` lies outside
    the wave finds that neighbour in ``P_d``, together with everything launched in between, which
    is the data that competes for the cache between the two uses (the layer condition). When the
    wave spans more than one row (plane), ``P_y`` (``P_z``) is the last row (plane) of the
    previous wave. ``P_d`` is empty when the grid has a single block along ``d`` (no block has a
    predecessor along ``d``) or when the wave starts at block 0. The windows are nested
    (``P_x ⊆ P_y ⊆ P_z``).

    * Overlap: ``overlap_d = |L(W) ∩ A(P_d)|`` minus the lines already counted for earlier
      dimensions (x, then y, then z): the wave's load lines that the window touched, each line
      attributed to the shortest reuse distance that reaches it.
    * Layer volume: ``|A(P_d) ∪ A(W)| = |A(P_d)| + |A(W)| - |A(P_d) ∩ A(W)|`` allocation lines,
      the data touched from the start of the window to the end of the wave, which must stay
      cached for the overlap to hit. The full intersection (not the incremental overlap) is
      subtracted, so this is exactly the union.
    * Oversubscription ``o_d`` = total layer volume over all fields / ``device.l2_effective_bytes``
      (the fields share the cache, so there is one ``o_d`` per dimension).

All ``*_bytes_per_lup`` values are divided by the number of valid cells (lattice updates) of
the wave; ``*_lines`` are exact integer counts of lines of the stated granularity.

Evaluation
    Images are first formed in byte coordinates (the access maps carry no floor division, so a
    footprint is a union of boxes in the N-D space) and then divided into lines of each
    granularity, so both granularities share one image. Cardinalities use ``count_val`` on
    ``isl.Set``. A configuration of the 25-point stencil takes some 30-60 ms in the N-D space,
    independent of the domain size (``benchmarks/bench_wave.py``). The linear space is exact
    too but much slower for kernels with many accesses (seconds for the 25-point stencil), as
    paper 001 (4.4.1) warns; its overlaps are computed from cardinalities of unions only, since
    ISL intersections and differences of its line sets are slower still.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Literal

import islpy as isl

from warpspeed.memory.addresses import CompiledAccess, CompiledKernel, isl_expr
from warpspeed.memory.boxmaps import field_box_maps
from warpspeed.hardware.device import Device
from warpspeed.errors import DeviceError, KernelError, LaunchError
from warpspeed.launch.geometry import Launch, LaunchInfo
from warpspeed.memory.wave_boxes import FieldStacks, box_field_counts, field_stacks

AddressSpace = Literal["nd", "linear"]

#: The address spaces of paper 001, 4.4.1: N-D index tuples or 1-D byte addresses.
ADDRESS_SPACES: tuple[str, ...] = ("nd", "linear")

#: Dimensions of the previous-neighbour sets, in the order overlaps are attributed.
DIMENSIONS: tuple[str, str, str] = ("x", "y", "z")

#: The ISL names of the cell coordinates (must match the symbols of warpspeed.kernel.description).
_CELL_TUPLE = "[x, y, z]"

Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # inclusive (lo, hi) per dim


@dataclass(frozen=True)
class PerDim:
    """One value per dimension x, y, z (of a previous-neighbour set)."""

    x: float
    y: float
    z: float

    def __getitem__(self, dim: str) -> float:
        if dim not in DIMENSIONS:
            raise KeyError(f"dimension {dim!r}; allowed: x, y, z")
        return getattr(self, dim)

    def __iter__(self) -> Iterator[float]:
        return iter((self.x, self.y, self.z))

    def items(self) -> tuple[tuple[str, float], ...]:
        return tuple(zip(DIMENSIONS, (self.x, self.y, self.z)))


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
        layer_lines: per dimension, allocation lines of ``A(P_d) ∪ A(W)``.
        layer_volume_bytes: ``layer_lines`` times the allocation granularity (bytes, not per lup).
        allocated_lines: allocation lines of ``A(W)``.
        allocated_bytes: ``allocated_lines`` times the allocation granularity (bytes).
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
    allocated_lines: int
    allocated_bytes: int


@dataclass(frozen=True)
class WaveVolumes:
    """Wave-level DRAM footprint of a kernel and launch (sums over fields, see module docstring).

    Attributes:
        fields: per-field volumes, in the kernel's field order.
        lups: valid cells (lattice updates) of the wave.
        blocks: thread blocks of the wave; ``first_block`` its first linear block index.
        previous_lups: valid cells of each previous-neighbour set ``P_d`` (0 when empty).
        granularity_bytes: transfer granularity used for loads, stores and overlaps.
        allocation_bytes: allocation granularity used for layer and allocated volumes.
        l2_effective_bytes: the cache capacity the oversubscription factors divide by.
        compulsory_load_bytes_per_lup, compulsory_store_bytes_per_lup: sums over fields.
        overlap_bytes_per_lup: per dimension, sum over fields.
        layer_volume_bytes: per dimension, sum over fields (bytes).
        oversubscription: per dimension, ``layer_volume_bytes / l2_effective_bytes``.
        allocated_bytes: the wave's allocation volume, sum over fields (bytes).
        l2_oversubscription: ``allocated_bytes / l2_effective_bytes``.
    """

    fields: tuple[FieldWaveVolumes, ...]
    lups: int
    blocks: int
    first_block: int
    previous_lups: PerDim
    address_space: str
    granularity_bytes: int
    allocation_bytes: int
    l2_effective_bytes: int
    compulsory_load_bytes_per_lup: float
    compulsory_store_bytes_per_lup: float
    overlap_bytes_per_lup: PerDim
    layer_volume_bytes: PerDim
    oversubscription: PerDim
    allocated_bytes: int
    l2_oversubscription: float

    def field(self, name: str) -> FieldWaveVolumes:
        for f in self.fields:
            if f.field == name:
                return f
        raise KernelError(f"no field {name!r} in these wave volumes; fields: "
                          f"{', '.join(f.field for f in self.fields)}")


# --------------------------------------------------------------------------------------------
# block ranges and boxes


def linear_range_boxes(first: int, last: int, grid: tuple[int, int, int]) -> list[Box]:
    """Boxes (inclusive block-index ranges per dimension) whose union is exactly the blocks with
    linear index ``first .. last`` (x fastest); at most five disjoint boxes."""
    gx, gy, gz = grid
    if first > last:
        return []
    if not 0 <= first <= last < gx * gy * gz:
        raise LaunchError(f"block range {first}..{last} lies outside the grid {grid}")
    sx, sy, sz = first % gx, (first // gx) % gy, first // (gx * gy)
    ex, ey, ez = last % gx, (last // gx) % gy, last // (gx * gy)
    boxes: list[Box] = []

    def add(x0: int, x1: int, y0: int, y1: int, z0: int, z1: int) -> None:
        if x0 <= x1 and y0 <= y1 and z0 <= z1:
            boxes.append(((x0, x1), (y0, y1), (z0, z1)))

    if sz == ez and sy == ey:
        add(sx, ex, sy, sy, sz, sz)
    elif sz == ez:
        add(sx, gx - 1, sy, sy, sz, sz)
        add(0, gx - 1, sy + 1, ey - 1, sz, sz)
        add(0, ex, ey, ey, sz, sz)
    else:
        add(sx, gx - 1, sy, sy, sz, sz)
        add(0, gx - 1, sy + 1, gy - 1, sz, sz)
        add(0, gx - 1, 0, gy - 1, sz + 1, ez - 1)
        add(0, gx - 1, 0, ey - 1, ez, ez)
        add(0, ex, ey, ey, ez, ez)
    return boxes


def cell_boxes(launch: Launch, block_boxes: list[Box]) -> list[Box]:
    """The valid cells of block boxes: block ``b`` covers cells ``[b*C, (b+1)*C)`` with
    ``C = blockDim * fold``, clipped to ``0 <= cell < domain`` (inclusive bounds)."""
    extent = launch.cells_per_block
    result: list[Box] = []
    for box in block_boxes:
        cells = tuple(
            (lo * c, min((hi + 1) * c, n) - 1)
            for (lo, hi), c, n in zip(box, extent, launch.domain)
        )
        if all(lo <= hi for lo, hi in cells):
            result.append(cells)  # type: ignore[arg-type]
    return result


def previous_block_ranges(launch: Launch, first_block: int) -> dict[str, tuple[int, int] | None]:
    """Linear block ranges of the previous-neighbour sets ``P_x, P_y, P_z`` (module docstring);
    ``None`` where the set is empty."""
    gx, gy, _ = launch.grid
    strides = {"x": 1, "y": gx, "z": gx * gy}
    result: dict[str, tuple[int, int] | None] = {}
    for d, axis in zip(DIMENSIONS, range(3)):
        if launch.grid[axis] == 1 or first_block == 0:
            result[d] = None
        else:
            result[d] = (max(0, first_block - strides[d]), first_block - 1)
    return result


def _box_cells(boxes: list[Box]) -> int:
    total = 0
    for box in boxes:
        n = 1
        for lo, hi in box:
            n *= hi - lo + 1
        total += n
    return total


def _isl_cell_set(boxes: list[Box], ctx: isl.Context) -> isl.Set:
    if not boxes:
        return isl.Set.read_from_str(ctx, "{ " + _CELL_TUPLE + " : false }")
    pieces = [
        f"{_CELL_TUPLE} : {x0} <= x <= {x1} and {y0} <= y <= {y1} and {z0} <= z <= {z1}"
        for (x0, x1), (y0, y1), (z0, z1) in boxes
    ]
    return isl.Set.read_from_str(ctx, "{ " + "; ".join(pieces) + " }")


# --------------------------------------------------------------------------------------------
# access maps


def _access_target(access: CompiledAccess, linear: bool) -> str:
    """The ISL tuple of byte coordinates an access maps a cell to (before the line division)."""
    field = access.field
    if linear:
        return f"[{isl_expr(access.address_expr)}]"
    index = access.access.index
    contiguous = field.layout[0]  # type: ignore[index]
    others = [isl_expr(index[p]) for p in reversed(field.layout[1:])]  # type: ignore[index]
    byte = f"{field.alignment_bytes} + {field.element_bytes} * {isl_expr(index[contiguous])}"
    return "[" + ", ".join(others + [byte]) + "]"


@dataclass(frozen=True)
class FieldMaps:
    """A field's accesses as ISL maps: cells -> byte coordinates (the union of its load maps and
    of its store maps; the last coordinate is a byte address, the others N-D indices)."""

    field: str
    address_space: str
    loads: isl.Map | None
    stores: isl.Map | None
    rank: int  # number of output coordinates


def _union_map(targets: list[str], ctx: isl.Context) -> isl.Map | None:
    if not targets:
        return None
    unique = list(dict.fromkeys(targets))
    text = "{ " + "; ".join(f"{_CELL_TUPLE} -> {t}" for t in unique) + " }"
    return isl.Map.read_from_str(ctx, text).coalesce()


def _line_map(rank: int, line_bytes: int, ctx: isl.Context) -> isl.Map:
    """Byte coordinates -> line coordinates: floor-divide the last (byte) coordinate."""
    names = [f"i{k}" for k in range(rank)]
    out = names[:-1] + [f"floor({names[-1]} / {line_bytes})"]
    return isl.Map.read_from_str(ctx, "{ [" + ", ".join(names) + "] -> [" + ", ".join(out) + "] }")


class WaveModel:
    """Per-access ISL maps of a compiled kernel, reusable across launch configurations.

    The maps take cells to byte coordinates (N-D indices with the contiguous index as a byte
    address, or the 1-D byte address); footprints are formed at byte level and then divided into
    lines of each granularity, which keeps the sets simple (a union of boxes at byte level) and
    lets both granularities share one image. Build once per kernel and address space (the maps
    do not depend on the launch or the device); ``volumes(info, device)`` evaluates one launch
    configuration, at a cost that depends on the number of accesses and boxes, not on the
    domain or wave size. No state outside this object.
    """

    def __init__(self, compiled: CompiledKernel, address_space: AddressSpace = "nd", fast: bool = True) -> None:
        """``fast``: count box-preserving fields with :mod:`warpspeed.memory.wave_boxes` instead of ISL
        (same integers, 5-20x faster); ``False`` forces ISL for every field."""
        if address_space not in ADDRESS_SPACES:
            raise KernelError(
                f"address_space {address_space!r} is unknown; allowed: {', '.join(ADDRESS_SPACES)}"
            )
        self.compiled = compiled
        self.address_space = address_space
        self._ctx = isl.Context()
        maps = []
        for field in compiled.kernel.fields:
            accesses = [a for a in compiled.accesses if a.field.name == field.name]
            linear = address_space == "linear" or any(a.access.linear for a in accesses)
            loads = [_access_target(a, linear) for a in accesses if not a.access.is_store]
            stores = [_access_target(a, linear) for a in accesses if a.access.is_store]
            maps.append(FieldMaps(
                field=field.name, address_space="linear" if linear else "nd",
                loads=_union_map(loads, self._ctx), stores=_union_map(stores, self._ctx),
                rank=1 if linear else field.ndim,
            ))
        self.field_maps: tuple[FieldMaps, ...] = tuple(maps)
        self._line_maps: dict[tuple[int, int], isl.Map] = {}
        self._fast = fast and address_space == "nd"
        self._stacks: dict[tuple[str, int], FieldStacks | None] = {}

    @property
    def fast_fields(self) -> tuple[str, ...]:
        """Fields whose footprints are counted as box unions (:mod:`warpspeed.memory.wave_boxes`) for
        lines at least as large as an element."""
        kernel = self.compiled.kernel
        return tuple(fm.field for fm in self.field_maps
                     if self._field_stacks(fm, kernel.field(fm.field).element_bytes) is not None)

    def _field_stacks(self, fm: FieldMaps, line_bytes: int) -> FieldStacks | None:
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
            self._line_maps[key] = _line_map(rank, line_bytes, self._ctx)
        return self._line_maps[key]

    def volumes(self, info: LaunchInfo, device: Device, granularity_bytes: int | None = None,
                allocation_bytes: int | None = None) -> WaveVolumes:
        """Wave-level volumes of the launch ``info`` on ``device``.

        Args:
            info: launch geometry and representative wave (from ``analyze_launch``).
            device: supplies ``l2_effective_bytes`` and the default granularities.
            granularity_bytes: transfer line size in bytes (default ``device.l2_sector_bytes``,
                the DRAM fetch granularity).
            allocation_bytes: allocation line size in bytes for the capacity volumes (default
                ``device.l2_line_bytes``).
        """
        launch = info.launch
        if tuple(launch.domain) != tuple(self.compiled.kernel.domain):
            raise LaunchError(
                f"launch domain {launch.domain} differs from the kernel's domain "
                f"{self.compiled.kernel.domain}; analyze the launch for this kernel"
            )
        gran = device.l2_sector_bytes if granularity_bytes is None else granularity_bytes
        alloc = device.l2_line_bytes if allocation_bytes is None else allocation_bytes
        _check_granularity(gran, "granularity_bytes")
        _check_granularity(alloc, "allocation_bytes")
        wave = info.wave
        first, last = wave.first_block, wave.first_block + wave.blocks - 1
        wave_boxes = cell_boxes(launch, linear_range_boxes(first, last, launch.grid))
        lups = _box_cells(wave_boxes)
        prev_boxes: dict[str, list[Box]] = {}
        for d, rng in previous_block_ranges(launch, first).items():
            prev_boxes[d] = [] if rng is None else cell_boxes(launch, linear_range_boxes(*rng, launch.grid))
        isl_sets: list[tuple[isl.Set, dict[str, isl.Set | None]]] = []  # built only if a field needs ISL

        fields = []
        for fm in self.field_maps:
            transfer, allocation = self._field_stacks(fm, gran), self._field_stacks(fm, alloc)
            counts = None
            if transfer is not None and allocation is not None:
                counts = box_field_counts(transfer, allocation, wave_boxes, prev_boxes)
            if counts is not None:
                fields.append(_from_counts(fm.field, counts, lups, gran, alloc))
                continue
            if not isl_sets:
                isl_sets.append((_isl_cell_set(wave_boxes, self._ctx),
                                 {d: (_isl_cell_set(b, self._ctx) if b else None) for d, b in prev_boxes.items()}))
            wave_set, prev_sets = isl_sets[0]
            fields.append(_field_volumes(
                fm, self.line_map(fm.rank, gran), self.line_map(fm.rank, alloc),
                wave_set, prev_sets, lups, gran, alloc))
        layer = PerDim(*(float(sum(f.layer_volume_bytes[d] for f in fields)) for d in DIMENSIONS))
        capacity = device.l2_effective_bytes
        allocated = sum(f.allocated_bytes for f in fields)
        return WaveVolumes(
            fields=tuple(fields), lups=lups, blocks=wave.blocks, first_block=first,
            previous_lups=PerDim(*(_box_cells(prev_boxes[d]) for d in DIMENSIONS)),
            address_space=self.address_space, granularity_bytes=gran, allocation_bytes=alloc,
            l2_effective_bytes=capacity,
            compulsory_load_bytes_per_lup=sum(f.compulsory_load_bytes_per_lup for f in fields),
            compulsory_store_bytes_per_lup=sum(f.compulsory_store_bytes_per_lup for f in fields),
            overlap_bytes_per_lup=PerDim(*(sum(f.overlap_bytes_per_lup[d] for f in fields)
                                           for d in DIMENSIONS)),
            layer_volume_bytes=layer,
            oversubscription=PerDim(*(v / capacity for v in layer)),
            allocated_bytes=allocated,
            l2_oversubscription=allocated / capacity,
        )


def _check_granularity(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise DeviceError(f"{what} must be a positive integer number of bytes, got {value!r}")


def _image(cells: isl.Set | None, m: isl.Map | None) -> isl.Set | None:
    if m is None or cells is None:
        return None
    return cells.apply(m).coalesce()


def _union(a: isl.Set | None, b: isl.Set | None) -> isl.Set | None:
    if a is None:
        return b
    if b is None:
        return a
    return a.union(b).coalesce()


def _count(s: isl.Set | None) -> int:
    return 0 if s is None else int(s.count_val().to_python())


def _overlaps_by_intersection(bytes_load_w: isl.Set | None, bytes_all_p: dict[str, isl.Set | None],
                              transfer: isl.Map) -> dict[str, int]:
    """``overlap_d = |L ∩ T_d|`` minus the lines already counted for an earlier dimension, by
    set operations on line sets (``L``: the wave's load lines, ``T_d``: the lines ``P_d``
    touched). Fast in the N-D address space."""
    overlap: dict[str, int] = {}
    load_w = _image(bytes_load_w, transfer)
    covered: isl.Set | None = None
    for d in DIMENSIONS:
        touched = _image(bytes_all_p[d], transfer)
        if load_w is None or touched is None:
            overlap[d] = 0
            continue
        shared = load_w.intersect(touched).coalesce()
        new = shared if covered is None else shared.subtract(covered)
        overlap[d] = _count(new)
        covered = _union(covered, shared)
    return overlap


def _overlaps_by_union(bytes_load_w: isl.Set | None, bytes_all_p: dict[str, isl.Set | None],
                       transfer: isl.Map, loads: int) -> dict[str, int]:
    """The same overlaps from cardinalities of unions only, for the linear address space, where
    intersections and differences of line sets (with the floor division's existential
    variables) are very slow in ISL. With ``U_d = T_x ∪ ... ∪ T_d``:
    ``overlap_d = |L ∩ U_d| - |L ∩ U_{d-1}|`` and ``|L ∩ U| = |L| + |U| - |L ∪ U|``; unions are
    formed on byte sets before the line division (the image of a union is the union of the
    images)."""
    overlap: dict[str, int] = {}
    reached = 0  # |L ∩ U_{d-1}|
    union_bytes: isl.Set | None = None  # byte coordinates of U_d
    for d in DIMENSIONS:
        if bytes_all_p[d] is None or bytes_load_w is None:
            overlap[d] = 0
            continue
        union_bytes = _union(union_bytes, bytes_all_p[d])
        u = _count(_image(union_bytes, transfer))
        l_or_u = _count(_image(_union(bytes_load_w, union_bytes), transfer))
        l_and_u = loads + u - l_or_u
        overlap[d] = l_and_u - reached
        reached = l_and_u
    return overlap


def _field_volumes(fm: FieldMaps, transfer: isl.Map, allocation: isl.Map, wave: isl.Set,
                   prev: dict[str, isl.Set | None], lups: int, gran: int,
                   alloc: int) -> FieldWaveVolumes:
    """Counts for one field; ``transfer``/``allocation`` divide byte coordinates into lines."""
    bytes_load_w = _image(wave, fm.loads)
    bytes_store_w = _image(wave, fm.stores)
    bytes_all_w = _union(bytes_load_w, bytes_store_w)
    bytes_all_p = {d: _union(_image(prev[d], fm.loads), _image(prev[d], fm.stores)) for d in DIMENSIONS}
    loads = _count(_image(bytes_load_w, transfer))
    stores = _count(_image(bytes_store_w, transfer))
    if fm.address_space == "nd":
        overlap = _overlaps_by_intersection(bytes_load_w, bytes_all_p, transfer)
    else:
        overlap = _overlaps_by_union(bytes_load_w, bytes_all_p, transfer, loads)
    allocated = _count(_image(bytes_all_w, allocation))
    layer: dict[str, int] = {}
    for d in DIMENSIONS:
        if bytes_all_p[d] is None:
            layer[d] = allocated
        else:
            layer[d] = _count(_image(_union(bytes_all_w, bytes_all_p[d]), allocation))
    return FieldWaveVolumes(
        field=fm.field, address_space=fm.address_space,
        load_lines=loads, store_lines=stores,
        compulsory_load_bytes_per_lup=loads * gran / lups,
        compulsory_store_bytes_per_lup=stores * gran / lups,
        overlap_lines=PerDim(overlap["x"], overlap["y"], overlap["z"]),
        overlap_bytes_per_lup=PerDim(*(overlap[d] * gran / lups for d in DIMENSIONS)),
        layer_lines=PerDim(layer["x"], layer["y"], layer["z"]),
        layer_volume_bytes=PerDim(*(layer[d] * alloc for d in DIMENSIONS)),
        allocated_lines=allocated, allocated_bytes=allocated * alloc,
    )


def _from_counts(field: str, counts: dict, lups: int, gran: int, alloc: int) -> FieldWaveVolumes:
    """FieldWaveVolumes from the line counts of the box fast path (same units as ISL's)."""
    overlap, layer = counts["overlap"], counts["layer"]
    return FieldWaveVolumes(
        field=field, address_space="nd",
        load_lines=counts["load"], store_lines=counts["store"],
        compulsory_load_bytes_per_lup=counts["load"] * gran / lups,
        compulsory_store_bytes_per_lup=counts["store"] * gran / lups,
        overlap_lines=PerDim(overlap["x"], overlap["y"], overlap["z"]),
        overlap_bytes_per_lup=PerDim(*(overlap[d] * gran / lups for d in DIMENSIONS)),
        layer_lines=PerDim(layer["x"], layer["y"], layer["z"]),
        layer_volume_bytes=PerDim(*(layer[d] * alloc for d in DIMENSIONS)),
        allocated_lines=counts["allocated"], allocated_bytes=counts["allocated"] * alloc,
    )


def wave_volumes(compiled: CompiledKernel, info: LaunchInfo, device: Device,
                 address_space: AddressSpace = "nd", granularity_bytes: int | None = None,
                 allocation_bytes: int | None = None) -> WaveVolumes:
    """Wave-level DRAM volumes of one launch configuration (builds a :class:`WaveModel`).

    To evaluate many configurations of the same kernel, build one ``WaveModel(compiled,
    address_space)`` and call its ``volumes`` method instead, which reuses the ISL maps.
    ``granularity_bytes`` defaults to ``device.l2_sector_bytes`` (32 B DRAM fetch granularity),
    ``allocation_bytes`` to ``device.l2_line_bytes``.
    """
    return WaveModel(compiled, address_space).volumes(info, device, granularity_bytes, allocation_bytes)
