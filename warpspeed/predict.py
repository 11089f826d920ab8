"""predict(kernel, device, block, fold) -> Prediction: every model stage in one call.

The result, :class:`~warpspeed.prediction.Prediction`, is plain data (:mod:`warpspeed.prediction`).

:class:`Predictor` holds what depends only on the kernel and the device (compiled address
evaluators, the ISL access maps, the capacity curves) so that a sweep over launch
configurations builds them once. Every stage is a pure function of its inputs.

Every level's demand is computed here, once per configuration; the time models
(:mod:`warpspeed.models`) only combine it. Stages (Ernst et al., JPDC 2023):

1. launch geometry and occupancy (:mod:`warpspeed.launch.geometry`);
2. block footprints: L2 -> L1 compulsory, L1 -> L2 store, no-reuse L1 load (4.3);
3. L1 capacity misses (4.5, :mod:`warpspeed.memory.capacity.terms`): L2 load = compulsory +
   m_L1(o_L1) x (L1 load volume - compulsory), with o_L1 the L1 allocation per block over the
   L1 capacity (:func:`~warpspeed.memory.capacity.terms.l1_oversubscription`);
4. the first level's demand in one pass over the block's warp instructions
   (:func:`warpspeed.memory.l1_misses.first_level_demand`): its cycles when every access hits
   (4.2, :mod:`warpspeed.memory.l1`) and its costs with the block's first-touch and capacity
   misses (data-stage wavefronts, L2 requests); the first touches
   (:mod:`warpspeed.memory.first_touch`) are found before the footprint, whose load sectors and
   lines they give;
5. wave footprints, layer conditions and DRAM volumes (4.4, 4.5, :mod:`warpspeed.memory.wave`,
   :mod:`warpspeed.memory.dram`) at the L2's layer capacity, averaged over the full waves of the
   grid (one representative wave per class of waves);
6. the sector coverage of the DRAM volume (:mod:`warpspeed.memory.sectors`: the sectors each
   field's block rows cover whole and in part) and the achievable DRAM bandwidth at the launch's
   bytes in flight and resident blocks (:mod:`warpspeed.memory.dram_bandwidth`);
7. every level's demand, capacity and limit as one list, from the FP pipes to DRAM
   (:func:`warpspeed.levels.level_demands`; the four-limiter roofline is its tightest limit), and
   the two-limiter comparison (2, :mod:`warpspeed.levels`).
"""

from __future__ import annotations

from os import PathLike
from typing import Sequence

import numpy as np

from warpspeed.errors import DeviceError, KernelError, WarpspeedError

from warpspeed.incore.limit import configuration_core_time, load_latency
from warpspeed.memory.addresses import CompiledKernel, block_cells, compile_kernel, merged_copies
from warpspeed.memory.capacity import CapacityCurves, curves_for_device
from warpspeed.memory.capacity.carveout import l1_reuse_capacity
from warpspeed.memory.capacity.terms import l1_oversubscription, l2_load_bytes_per_lup
from warpspeed.hardware.caches import DEFAULT_DISPATCH
from warpspeed.hardware.device import Device, load_device
from warpspeed.memory.dram import dram_volumes
from warpspeed.memory.footprint import BlockFootprint, block_footprint
from warpspeed.memory.first_touch import first_touches
from warpspeed.kernel.description import Kernel
from warpspeed.memory.l1 import l1_cycles
from warpspeed.memory.l1_misses import first_level_demand
from warpspeed.memory.levels import memory_side_dram, shader_array_compulsory
from warpspeed.launch.geometry import LaunchInfo, analyze_launch
from warpspeed.memory.dram_bandwidth import launch_dram_bandwidth
from warpspeed.memory.sectors import SectorCoverage, dram_sectors
from warpspeed.levels import level_demands, two_limiter
from warpspeed.memory.wave import WaveModel
from warpspeed.memory.warps import WarpPlan, address_period, block_warp_rows, warp_plan
from warpspeed.memo import BoundedMemo
from warpspeed.models import DEFAULT_TIME_MODEL, time_model
from warpspeed.prediction import Estimator, Prediction

#: Distinct sets of representative warp instructions a :class:`Predictor` keeps the derived values
#: of (:attr:`warpspeed.memory.warps.WarpRows.derived`; least recently used out): the 56 blocks of
#: 1024 threads of one folding of a 3-D stencil have 11-15.
REPRESENTATIVES_MEMO_SIZE = 256


class SharedModels:
    """What the predictors of one ranking share: one wave model (with its memo of wave volumes) per
    memory layout of the kernels, i.e. per (fields, accesses, domain) and address space. A code
    generator compiles one kernel per folding, which differ in their registers but not in their
    per-cell accesses, so the foldings' predictors share the wave volumes of equal covered cell
    boxes. They also share the kernels' compiled accesses and the device's capacity curves. Create
    one per ranking call (:func:`warpspeed.rank.rank_per_fold` does)."""

    def __init__(self) -> None:
        self._wave_models: dict[tuple, WaveModel] = {}
        self._compiled: dict[tuple, CompiledKernel] = {}
        self._curves: dict[Device, CapacityCurves] = {}

    def compiled(self, kernel: Kernel) -> CompiledKernel:
        """The kernel with its accesses compiled once per (fields, accesses) among the ranking's
        kernels (the foldings' kernels differ in their registers, not in their accesses)."""
        key = (kernel.fields, kernel.accesses)
        known = self._compiled.get(key)
        if known is None:
            known = self._compiled[key] = compile_kernel(kernel)
        return known if known.kernel is kernel else CompiledKernel(kernel, known.accesses)

    def curves(self, device: Device) -> CapacityCurves:
        """The device family's capacity curves, read once per device of the ranking."""
        if device not in self._curves:
            self._curves[device] = curves_for_device(device)
        return self._curves[device]

    def wave_model(self, compiled: CompiledKernel, address_space: str) -> WaveModel:
        kernel = compiled.kernel
        key = (kernel.fields, kernel.accesses, tuple(kernel.domain), address_space)
        if key not in self._wave_models:
            self._wave_models[key] = WaveModel(compiled, address_space=address_space)
        return self._wave_models[key]


class Predictor:
    """Predictions of one kernel on one device for any number of launch configurations.

    Builds the compiled kernel, the wave model and the capacity curves once. ``exact_waves``:
    average the DRAM volumes over every full wave (:mod:`warpspeed.memory.wave.exact`; up to one
    wave evaluation per full wave) instead of the representative classes (the default here and
    of ``warpspeed predict`` and ``rank``); ``exact_budget``: with ``exact_waves``, the most wave
    evaluations to spend, beyond which the classes are used (``Prediction.wave.method`` says
    which average was taken). ``shared``: the :class:`SharedModels` of a ranking whose predictors
    share wave volumes (default: this predictor's own).

    ``model``: the time model whose rate the predictions report (``Prediction.lups_per_s``): a
    name of :data:`warpspeed.models.MODELS` or a model object; default
    :data:`~warpspeed.models.DEFAULT_TIME_MODEL`, the command line's. ``l1_misses``: whether to
    compute the first level's costs with misses (``Prediction.l1_misses``; default: when the model
    reads them, ``ModelAbout.reads_l1_misses``): without them the pass over the warp instructions
    counts the cycles when every access hits only.

    The predictor keeps the wave volumes of the configurations it predicted (bounded,
    :data:`warpspeed.memory.wave.wave_model.MEMO_SIZE`): configurations that cover the same cell boxes
    per block with the same wave size share them.
    """

    def __init__(self, kernel: Kernel, device: Device | str, curves: CapacityCurves | None = None,
                 address_space: str = "nd", exact_waves: bool = False, exact_budget: int | None = None,
                 shared: SharedModels | None = None, l1_misses: bool | None = None,
                 model: str | Estimator | None = None) -> None:
        if not isinstance(kernel, Kernel):
            raise KernelError(f"a prediction needs a warpspeed Kernel (got {type(kernel).__name__}); "
                              "build one with warpspeed.Kernel")
        if not isinstance(device, (Device, str, PathLike)):
            raise DeviceError(f"a prediction needs a device (got {type(device).__name__}); give a Device, a "
                              "built-in device name or the path of a device file")
        self.exact_waves = exact_waves
        self.model = time_model(model or DEFAULT_TIME_MODEL) if model is None or isinstance(model, str) else model
        self.l1_misses = self.model.about.reads_l1_misses if l1_misses is None else l1_misses
        self.exact_budget = exact_budget
        self.kernel = kernel
        self.device = device if isinstance(device, Device) else load_device(device)
        self.compiled: CompiledKernel = shared.compiled(kernel) if shared is not None else compile_kernel(kernel)
        self.curves = (curves if curves is not None else
                       shared.curves(self.device) if shared is not None else curves_for_device(self.device))
        self.wave_model = (shared.wave_model(self.compiled, address_space) if shared is not None
                           else WaveModel(self.compiled, address_space=address_space))
        self.levels = self.device.levels
        self.levels_by_scope = {level.scope: level for level in self.levels}
        self._period = address_period(self.device)
        #: merged fold copies and the warp plan per tuple of fold offsets (a few foldings per predictor)
        self._plans: dict[tuple, tuple[np.ndarray, WarpPlan]] = {}
        #: the kernel's DRAM sector coverages by (field, kind, row cells)
        self._sectors: dict[tuple[str, str, int], SectorCoverage] = {}
        #: what the blocks' representative warp instructions share (WarpRows.derived), by representatives
        self._representatives: BoundedMemo[dict] = BoundedMemo(REPRESENTATIVES_MEMO_SIZE)
        #: the launches analyzed by the last prefetch, by (block, fold), each taken by its predict
        self._launches: dict[tuple, LaunchInfo] = {}

    def _plan(self, offsets: tuple[tuple[int, int, int], ...]) -> tuple[np.ndarray, WarpPlan]:
        if offsets not in self._plans:
            owner = merged_copies(self.compiled, offsets)
            self._plans[offsets] = owner, warp_plan(self.compiled, owner)
        return self._plans[offsets]

    def prefetch(self, configs: Sequence[tuple[Sequence[int] | int, Sequence[int] | int]]) -> None:
        """Prepare the predictions of the ``(block, fold)`` pairs ``configs`` that are cheaper
        together: the wave volumes of all their grids, counted in a few batches
        (:meth:`warpspeed.memory.wave.WaveModel.prefetch`; kept in the wave model's memo, where
        :meth:`predict` finds them). The predictions are the same with or without it; a
        configuration that cannot be launched is left to :meth:`predict` and its error."""
        self._launches = {}
        if self.exact_waves:
            return
        infos = []
        for block, fold in configs:
            try:
                info = analyze_launch(self.kernel, self.device, block, fold)
            except WarpspeedError:
                continue
            infos.append(info)
            try:
                self._launches[block, fold] = info  # for predict (a plain function of the pair)
            except TypeError:  # unhashable (lists): predict analyzes it again
                pass
        try:
            self.wave_model.prefetch(infos, self.device, self.exact_budget)
        except WarpspeedError:
            return  # each configuration's own prediction reports it

    def predict(self, block: Sequence[int] | int, fold: Sequence[int] | int = (1, 1, 1)) -> Prediction:
        kernel, device, curves = self.kernel, self.device, self.curves
        try:
            info = self._launches.pop((block, fold), None)  # analyzed by prefetch
        except TypeError:  # unhashable (lists)
            info = None
        if info is None:
            info = analyze_launch(kernel, device, block, fold)
        cells = block_cells(info.launch)
        owner, plan = self._plan(cells.offsets)
        warps = block_warp_rows(self.compiled, cells, owner, device.warp_size, self._period, plan,
                                self._representatives)
        # the loads' first touches (with misses): their distinct sectors give the footprint's too
        touches = first_touches(self.compiled, warps, device.l1.sector_bytes) if self.l1_misses else None
        fp = block_footprint(self.compiled, cells, device, warps=warps, touches=touches)

        o_l1 = l1_oversubscription(fp.l1_alloc_bytes_per_block,
                                   l1_reuse_capacity(device.l1, info.occupancy.blocks_per_sm))
        m_l1 = float(curves.l1_load.miss_rate(o_l1))
        if self.l1_misses:
            first = first_level_demand(self.compiled, warps, cells.lups, device, m_l1, fp.l1_alloc_bytes_per_block,
                                       touches)
            l1, misses = first.hits, first.misses
        else:
            l1, misses = l1_cycles(self.compiled, cells, device, warps=warps, load_bytes=fp.l1_alloc_bytes_per_block), None
        l2_per_field = {
            name: l2_load_bytes_per_lup(f.l2_load_bytes_per_lup, f.l1_load_bytes_per_lup, m_l1)
            for name, f in fp.per_field.items()
        }
        l2_load = sum(l2_per_field.values())

        wave = self.wave_model.grid_volumes(info, device, exact=self.exact_waves, exact_budget=self.exact_budget)
        stores = {n: f.l2_store_bytes_per_lup for n, f in fp.per_field.items()}
        l2_requests = self._shader_array(info, fp, l2_per_field, curves)
        dram_l2 = dram_volumes(wave, l2_requests, stores, device, curves)
        mall = self.levels_by_scope.get("memory_side")
        dram = memory_side_dram(wave, l2_requests, stores, device, curves, mall.bytes) if mall else dram_l2

        fp_instr = kernel.flops.instructions
        dram_bytes = dram.load_bytes_per_lup + dram.store_bytes_per_lup
        launch = info.launch
        # each element moved per lattice update is one concurrent DRAM address stream
        streams = dram_bytes / max(f.element_bytes for f in kernel.fields)
        # the idle threads of the blocks at the domain's edges hold no bytes in flight
        dram_bw = launch_dram_bandwidth(device, info.wave.blocks * launch.threads_per_block * launch.active_thread_share,
                                        dram_bytes,
                                        launch.cells_per_thread, info.occupancy.registers_per_thread,
                                        info.occupancy.blocks_per_sm, streams)
        sectors = dram_sectors(kernel, dram, launch.block[0] * launch.fold[0], self._sectors)
        l2_served = sum(l2_requests.values()) + fp.l2_store_bytes_per_lup
        core = configuration_core_time(kernel, device, info, self.compiled, owner,  # docs/incore.md
                                       load_latency(device, l2_load, dram.load_bytes_per_lup))
        levels = level_demands(
            device, kernel.dtype, fp_instructions_per_lup=fp_instr, l1_cycles_per_lup=l1.cycles_per_lup,
            first_load=l2_load, first_store=fp.l2_store_bytes_per_lup,
            gl1_load=sum(l2_requests.values()) if "shader_array" in self.levels_by_scope else None,
            l2_served=l2_served, l2_dram=dram_l2, dram=dram, dram_bandwidth_gb_s=dram_bw.achievable_gb_s,
            sectors=sectors,
            sm_cycles_per_lup=core.cycles_per_lup if core is not None and core.cycles_per_lup > 0 else None)
        two = two_limiter(device, kernel.dtype, fp_instr,
                          dram.compulsory_load_bytes_per_lup + wave.compulsory_store_bytes_per_lup)
        return Prediction(kernel=kernel, device=device, launch=info, l1=l1, footprint=fp,
                          l1_oversubscription=o_l1, l2_load_bytes_per_lup=l2_load, l2_load_per_field=l2_per_field,
                          wave=wave, dram=dram, two_limiter=two, dram_bandwidth=dram_bw,
                          levels=levels, l1_misses=misses, model=self.model)

    def _shader_array(self, info: LaunchInfo, fp: BlockFootprint, l2_per_field: dict[str, float],
                      curves: CapacityCurves) -> dict[str, float]:
        """The L2 requests per field behind a shader-array level (``l2_per_field`` without one,
        :mod:`warpspeed.memory.levels.traffic`)."""
        gl1 = self.levels_by_scope.get("shader_array")
        if gl1 is None:
            return l2_per_field
        shared = shader_array_compulsory(self.wave_model, info.launch, info.wave.first_block, info.wave.blocks,
                                         gl1.instances, gl1.dispatch or DEFAULT_DISPATCH, gl1.line_bytes)
        if shared is None:
            return l2_per_field
        compulsory, blocks = shared
        miss = float(curves.l1_load.miss_rate(l1_oversubscription(fp.l1_alloc_bytes_per_block * blocks, gl1.bytes)))
        return {n: l2_load_bytes_per_lup(compulsory[n], v, miss) for n, v in l2_per_field.items()}


def predict(kernel: Kernel, device: Device | str, block: Sequence[int] | int,
            fold: Sequence[int] | int = (1, 1, 1), curves: CapacityCurves | None = None,
            model: str | Estimator | None = None) -> Prediction:
    """One prediction (builds a :class:`Predictor`; reuse one for sweeps); ``model``: the time
    model whose rate it reports (default: warpspeed's default)."""
    return Predictor(kernel, device, curves, model=model).predict(block, fold)
