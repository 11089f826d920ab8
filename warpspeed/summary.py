"""The summary of one prediction as typed data: what ``warpspeed predict`` shows and ``--json`` writes.

:func:`summarize` turns a :class:`~warpspeed.prediction.Prediction` into a
:class:`PredictionSummary`, whose fields are the keys of the JSON object (in order;
:func:`warpspeed.files.records.json_record` writes it) and which the command line renders as
tables. Volumes are bytes per lattice update (lup), rates lups per second, L1 in cycles per
lup; ``cached_bytes`` are bytes, bandwidths GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.files.jsonsafe import json_safe
from warpspeed.model_protocol import prediction_figures
from warpspeed.files.records import json_record
from warpspeed.levels import LevelDemand, gflops
from warpspeed.memory.wave.geometry import DIMENSIONS

if TYPE_CHECKING:
    from warpspeed.model_protocol import ModelEstimate
    from warpspeed.prediction import Prediction


@dataclass(frozen=True)
class FieldLayer:
    """One field in one dimension: overlap with the previous-neighbour set, the hits (overlap x the
    shared hit rate), and the field's share of the volume that sets the dimension's
    oversubscription (the band volume for x and y, the z layer volume for z)."""

    overlap_bytes_per_lup: float
    hit_bytes_per_lup: float
    cached_bytes: float


@dataclass(frozen=True)
class FieldSummary:
    """One field's L1 cycles and volumes at every level."""

    l1_cycles_per_lup: float
    l1_load_bytes_per_lup: float
    l2_load_compulsory_bytes_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    l1_alloc_bytes_per_block: float
    dram_load_compulsory_bytes_per_lup: float
    dram_layer_hit_bytes_per_lup: float
    dram_capacity_miss_bytes_per_lup: float
    dram_partial_store_read_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    layer_conditions: Mapping[str, FieldLayer]


@dataclass(frozen=True)
class WaveClassSummary:
    """One class of full waves: block-plane and block-row crossings inside each wave, its waves and
    the first block of the representative wave."""

    plane_crossings: int
    row_crossings: int | None
    waves: int
    first_block: int


@dataclass(frozen=True)
class Layer:
    """One dimension's layer condition over all fields."""

    overlap_bytes_per_lup: float
    hit_rate: float
    hit_bytes_per_lup: float
    cached_bytes: float
    oversubscription: float


@dataclass(frozen=True)
class Rate:
    """A rate (lups/s; None where infinite) and its limiter."""

    lups_per_s: float | None
    limiter: str


@dataclass(frozen=True)
class RooflineSummary:
    """The four-limiter roofline's figures: its rate and limiter, each level's limit alone (None
    where infinite) and the GFLOP/s at its rate."""

    lups_per_s: float | None
    limiter: str
    limiters: Mapping[str, float | None]
    gflops: float


@dataclass(frozen=True)
class PredictionSummary:
    """The flat summary of one prediction (the keys of ``warpspeed predict --json`` before the
    command adds the register source, the calibration and the models' figures). ``model``,
    ``lups_per_s``, ``limiter``, ``explanation``, ``limiters`` and ``gflops`` are the time model's
    (the rate ``warpspeed rank`` reports for the same configuration and model; ``limiters`` and
    ``limiter`` its own limits where it computes them, else the levels' limits); the roofline's
    figures are under ``roofline``."""

    kernel: str
    device: str
    block: tuple[int, int, int]
    fold: tuple[int, int, int]
    domain: tuple[int, ...]
    grid: tuple[int, int, int]
    blocks_per_sm: int
    occupancy_limiter: str
    registers: int
    registers_estimated: bool
    wave_blocks: int
    waves: int
    #: every level's demand, capacity and limit, from the FP pipes to DRAM (:mod:`warpspeed.levels`)
    levels: tuple[LevelDemand, ...]
    wave_average: str
    wave_classes: tuple[WaveClassSummary, ...]
    l1_cycles_per_lup: float
    l1_load_bytes_per_lup: float
    l1_alloc_bytes_per_block: float
    l1_oversubscription: float
    l2_load_compulsory_bytes_per_lup: float
    l2_load_bytes_per_lup: float
    l2_store_bytes_per_lup: float
    dram_load_compulsory_bytes_per_lup: float
    dram_store_compulsory_bytes_per_lup: float
    dram_load_bytes_per_lup: float
    dram_store_bytes_per_lup: float
    dram_layer_hit_bytes_per_lup: float
    dram_capacity_miss_bytes_per_lup: float
    dram_partial_store_read_bytes_per_lup: float
    l2_oversubscription: float
    dram_bandwidth_gb_s: float
    dram_sustained_bandwidth_gb_s: float
    dram_bytes_in_flight: float
    dram_bytes_in_flight_per_thread: float
    dram_bytes_in_flight_register_capped: bool
    layer_conditions: Mapping[str, Layer]
    capacity_curves: str
    #: The time model's rate, limiter, explanation and limits (None where infinite: no limiter binds)
    model: str
    lups_per_s: float | None
    limiter: str
    explanation: str
    limiters: Mapping[str, float | None]
    gflops: float
    roofline: RooflineSummary
    two_limiter: Rate
    fields: Mapping[str, FieldSummary]


def _field(prediction: "Prediction", name: str) -> FieldSummary:
    fp, dram, wave = prediction.footprint.per_field[name], prediction.dram.field(name), prediction.wave.field(name)
    return FieldSummary(
        l1_cycles_per_lup=prediction.l1.per_field[name],
        l1_load_bytes_per_lup=fp.l1_load_bytes_per_lup,
        l2_load_compulsory_bytes_per_lup=fp.l2_load_bytes_per_lup,
        l2_load_bytes_per_lup=prediction.l2_load_per_field[name],
        l2_store_bytes_per_lup=fp.l2_store_bytes_per_lup,
        l1_alloc_bytes_per_block=fp.l1_alloc_bytes_per_block,
        dram_load_compulsory_bytes_per_lup=dram.compulsory_load_bytes_per_lup,
        dram_layer_hit_bytes_per_lup=sum(dram.layer_hit_bytes_per_lup),
        dram_capacity_miss_bytes_per_lup=dram.capacity_miss_bytes_per_lup,
        dram_partial_store_read_bytes_per_lup=dram.partial_store_read_bytes_per_lup,
        dram_load_bytes_per_lup=dram.load_bytes_per_lup,
        dram_store_bytes_per_lup=dram.store_bytes_per_lup,
        layer_conditions={d: FieldLayer(wave.overlap_bytes_per_lup[d], dram.layer_hit_bytes_per_lup[d],
                                        wave.cached_bytes[d]) for d in DIMENSIONS},
    )


def summarize(prediction: "Prediction", estimate: "ModelEstimate | None" = None) -> PredictionSummary:
    """The summary of ``prediction`` (module docstring) with the time model's ``estimate`` (default:
    the prediction's own, :attr:`~warpspeed.prediction.Prediction.estimate`)."""
    p, info = prediction, prediction.launch
    time = estimate if estimate is not None else p.estimate
    figures = time.figures if time.figures is not None else prediction_figures(p)
    roof = p.roofline
    launch, occ, wave, dram, bw = info.launch, info.occupancy, p.wave, p.dram, p.dram_bandwidth
    return PredictionSummary(
        kernel=p.kernel_name, device=p.device_name, block=launch.block, fold=launch.fold, domain=launch.domain,
        grid=launch.grid, blocks_per_sm=occ.blocks_per_sm, occupancy_limiter=occ.limiter,
        registers=occ.registers_per_thread, registers_estimated=occ.registers_estimated,
        wave_blocks=info.wave.blocks, waves=info.wave.count, levels=tuple(p.levels), wave_average=wave.method,
        wave_classes=tuple(WaveClassSummary(c.wave_class.crossings, c.wave_class.row_crossings,
                                            c.wave_class.waves, c.wave_class.first_block) for c in wave.classes),
        l1_cycles_per_lup=p.l1.cycles_per_lup, l1_load_bytes_per_lup=p.footprint.l1_load_bytes_per_lup,
        l1_alloc_bytes_per_block=p.footprint.l1_alloc_bytes_per_block, l1_oversubscription=p.l1_oversubscription,
        l2_load_compulsory_bytes_per_lup=p.footprint.l2_load_bytes_per_lup,
        l2_load_bytes_per_lup=p.l2_load_bytes_per_lup, l2_store_bytes_per_lup=p.l2_store_bytes_per_lup,
        dram_load_compulsory_bytes_per_lup=dram.compulsory_load_bytes_per_lup,
        dram_store_compulsory_bytes_per_lup=wave.compulsory_store_bytes_per_lup,
        dram_load_bytes_per_lup=dram.load_bytes_per_lup, dram_store_bytes_per_lup=dram.store_bytes_per_lup,
        dram_layer_hit_bytes_per_lup=sum(dram.layer_hit_bytes_per_lup),
        dram_capacity_miss_bytes_per_lup=dram.capacity_miss_bytes_per_lup,
        dram_partial_store_read_bytes_per_lup=dram.partial_store_read_bytes_per_lup,
        l2_oversubscription=dram.l2_oversubscription, dram_bandwidth_gb_s=bw.achievable_gb_s,
        dram_sustained_bandwidth_gb_s=bw.sustained_gb_s, dram_bytes_in_flight=bw.bytes_in_flight,
        dram_bytes_in_flight_per_thread=bw.bytes_per_thread, dram_bytes_in_flight_register_capped=bw.register_capped,
        layer_conditions={d: Layer(wave.overlap_bytes_per_lup[d], dram.layer_hit_rate[d],
                                   dram.layer_hit_bytes_per_lup[d], wave.cached_bytes[d], wave.oversubscription[d])
                          for d in DIMENSIONS},
        capacity_curves=dram.curves_label or dram.curves_family,
        model=time.model, lups_per_s=json_safe(time.lups_per_s), limiter=figures.limiter,
        explanation=time.explanation, limiters={k: json_safe(v) for k, v in figures.limits.items()},
        gflops=gflops(time.lups_per_s, roof.flops_per_lup),
        roofline=RooflineSummary(json_safe(roof.lups_per_s), roof.limiter,
                                 {k: json_safe(v) for k, v in roof.limits.items()}, roof.gflops),
        two_limiter=Rate(json_safe(p.two_limiter.lups_per_s), p.two_limiter.limiter),
        fields={name: _field(p, name) for name in p.footprint.per_field},
    )


def prediction_record(prediction: "Prediction") -> dict[str, Any]:
    """The JSON object of ``prediction``'s summary (``warpspeed predict --json`` before the
    command's additions)."""
    return json_record(summarize(prediction))
