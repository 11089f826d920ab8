"""``warpspeed predict``: one launch configuration, volumes per level and field, the limiters."""

from __future__ import annotations

import click

from warpspeed.calibration import calibration
from warpspeed.cli.common import (
    block_option,
    block_or_default,
    clock_check,
    clock_option,
    curves_option,
    dtype_option,
    model_option,
    kernel_options,
    registers_text,
    setup_kernel_and_device,
)
from warpspeed.cli.options import ModelChoice, WaveAveraging, model_options, model_values
from warpspeed.cli.parse import FOLD
from warpspeed.cli.render import Column, console as make_console, even_lines, fitted_table, fmt, glups, print_fitted
from warpspeed.errors import LaunchError
from warpspeed.files.jsonsafe import json_text
from warpspeed.units import MEGA, MIB


VOLUME_COLUMNS = (Column("field", justify="left"), Column("L1\ncyc/lup"), Column("L1\nload"),
                  Column("L2→L1\nload"), Column("L1→L2\nstore"), Column("DRAM\nload"), Column("DRAM\nstore"))
LAYER_COLUMNS = (Column("dim"), Column("overlap\nB/lup"), Column("hit\nrate"), Column("hits\nB/lup"),
                 Column("cached\nMiB"), Column("oversub-\nscription"))
LIMIT_COLUMNS = (Column("FP"), Column("L1"), Column("L2"), Column("DRAM"), Column("limiter"), Column("roofline"),
                 Column("two-limiter"))
LEVEL_COLUMNS = (Column("level", justify="left"), Column("shared by", justify="left"), Column("load"),
                 Column("store"), Column("limit\nGlup/s"))
#: What the cache-level table's limit column means.
LEVEL_NOTE = ("limit: what the bandwidth of the level's inner neighbour traffic allows (the first level: its "
              "cycles); not modelled: the device file gives no bandwidth for the level.")
#: How the DRAM volumes were averaged over the waves, as the table output says it.
WAVE_AVERAGES = {"exact": "average over every full wave (--exact-waves)",
                 "classes": "representative wave classes (--exact-waves for every wave)"}
#: What the two-limiter column of the roofline table means.
TWO_LIMITER_NOTE = ("two-limiter: the classic roofline, the smaller of the FP peak and DRAM bandwidth over the "
                    "compulsory DRAM volume (no cache effects), its limiter in parentheses.")


@click.command()
@kernel_options
@dtype_option
@block_option
@click.option("--fold", type=FOLD, default="1,1,1", show_default=True,
              help="Cells per thread (thread folding) x,y,z; at most 64 in all.")
@click.option("--address-space", type=click.Choice(["nd", "linear"]), default="nd", show_default=True,
              help="Wave-level address space: N-D index tuples (fast) or 1-D byte addresses (exact "
                   "about row wrap-around and alignment, slower).")
@curves_option
@click.option("--classes", is_flag=True,
              help="Average the DRAM volumes over the representative wave classes, as `rank` does (the default).")
@click.option("--exact-waves", is_flag=True,
              help="Average the DRAM volumes over every full wave of the grid, as `rank --exact-waves` does "
                   "(slower on grids with many distinct waves).")
@model_option
@clock_option
@model_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def predict(kernel_name: str, domain: tuple[int, ...] | None, device_name: str, dtype: str | None,
            block: tuple[int, ...] | None, fold: tuple[int, ...], address_space: str, curves_path: str | None, classes: bool,
            exact_waves: bool, model: str, clock_mhz: float | None, as_json: bool, **own: object) -> None:
    """Predict one launch configuration: the time model's rate, volumes per level and field, the four limiters.

    The roofline table also shows the two-limiter prediction: the classic roofline of FP peak
    and DRAM bandwidth with the compulsory DRAM volume only (no cache effects)."""
    # every option is checked before any work
    averaging = WaveAveraging(classes, exact_waves)
    choice = ModelChoice(model, model_values(own))

    from warpspeed.memory.capacity import load_curves
    from warpspeed.models import estimate_energy, shared_trace
    from warpspeed.predict import Predictor
    from warpspeed.files.records import json_record
    from warpspeed.sass.stream import instructions_origin
    from warpspeed.summary import summarize

    curves = load_curves(path=curves_path) if curves_path else None
    resolved, device = setup_kernel_and_device(kernel_name, domain, device_name, fold, dtype,
                                               check=clock_check(clock_mhz))
    block = block_or_default(block, resolved, device)
    predictor = Predictor(resolved.kernel, device, curves=curves, address_space=address_space,
                          exact_waves=averaging.exact,
                          model=choice.time_model)
    try:
        p = predictor.predict(block, fold)
    except LaunchError as exc:
        if resolved.registers_source != "estimate":
            raise
        raise LaunchError(f"{exc} (the {resolved.kernel.registers} registers per thread are an estimate; "
                          "ptxas counts them when nvcc is installed: pip install 'warpspeed[cuda]')") from None
    power = "power" in device.tables
    trace = shared_trace(p, model, "energy" if power else "time")
    estimate = (p.estimate if trace is None and not choice.estimate_options
                else choice.time_model.estimate(p, trace, **choice.estimate_options))
    summary = summarize(p, estimate)
    d = json_record(summary)
    d["registers_source"] = resolved.registers_source
    d["registers_detail"] = resolved.registers_detail
    mix_source, mix_detail = instructions_origin(resolved.kernel, device)
    d["instructions"] = {"source": mix_source, "detail": mix_detail}
    trust = calibration(device, curves)
    d["calibration"] = trust.as_dict()
    # the model's own figures, beside (for the roofline: with) the summary's block of the same name
    d[model] = {**d.get(model, {}), "cycles": estimate.cycles, "seconds": estimate.seconds,
                "lups_per_s": estimate.lups_per_s, **estimate.details}
    energy = None
    if power:
        energy = estimate_energy(p, estimate, clock_mhz=clock_mhz, trace=trace)
        d["power"] = dict(energy.details)
    choice.time_model.command_line.write_outputs(p, estimate, choice.values)
    if as_json:
        click.echo(json_text(d, indent=2))
        return
    _print_prediction(summary, resolved.registers_source, trust.line(), curves, estimate, energy,
                      f"registers: {resolved.registers_detail}" if resolved.registers_detail else "",
                      f"instruction mix (power, interval and pipeline models): {mix_detail}")


def _print_prediction(s, registers_source: str, calibration_line: str, curves, estimate, energy,
                      registers_line: str = "", instructions_line: str = "") -> None:
    """The tables of one prediction (``s``: its :class:`~warpspeed.summary.PredictionSummary`)."""
    from warpspeed.cli.model_render import render_after, render_before

    console = make_console()
    console.print(f"[bold]{s.kernel}[/] on [bold]{s.device}[/]: block {tuple(s.block)}, fold "
                  f"{tuple(s.fold)}, domain {tuple(s.domain)}, grid {tuple(s.grid)}")
    console.print(_rate_line(estimate), highlight=False)
    console.print(f"occupancy: {s.blocks_per_sm} blocks/SM (limited by {s.occupancy_limiter}); "
                  f"{registers_text(s.registers, registers_source)}; "
                  f"wave {s.wave_blocks} blocks, {s.waves} waves "
                  f"(DRAM volumes: {WAVE_AVERAGES[s.wave_average]})")
    console.print(f"DRAM bandwidth: {s.dram_bandwidth_gb_s:.0f} GB/s achievable with "
                  f"{s.dram_bytes_in_flight / MIB:.2f} MiB in flight "
                  f"({s.dram_bytes_in_flight_per_thread:.0f} B per thread"
                  f"{', register-capped' if s.dram_bytes_in_flight_register_capped else ''}); "
                  f"sustained {s.dram_sustained_bandwidth_gb_s:.0f} GB/s at full occupancy")
    console.print(calibration_line, highlight=False)
    for line in (registers_line, instructions_line):
        if line:
            console.print(even_lines(line, console.width), highlight=False, markup=False)
    if curves is not None:
        console.print(f"capacity curves: {curves.label} (--curves; family {curves.family})")
    volumes = [[name, fmt(f.l1_cycles_per_lup, 3), fmt(f.l1_load_bytes_per_lup), fmt(f.l2_load_bytes_per_lup),
                fmt(f.l2_store_bytes_per_lup), fmt(f.dram_load_bytes_per_lup), fmt(f.dram_store_bytes_per_lup)]
               for name, f in [*s.fields.items(), ("total", s)]]
    table, _ = fitted_table(console, VOLUME_COLUMNS, volumes)
    print_fitted(console, table, "data volumes, bytes per lattice update")
    console.print(f"compulsory: L2→L1 {fmt(s.l2_load_compulsory_bytes_per_lup)} B/lup, "
                  f"DRAM load {fmt(s.dram_load_compulsory_bytes_per_lup)} B/lup; "
                  f"L1 oversubscription {fmt(s.l1_oversubscription)}")
    layers = [[dim, fmt(lc.overlap_bytes_per_lup), fmt(lc.hit_rate), fmt(lc.hit_bytes_per_lup),
               fmt(lc.cached_bytes / MIB), fmt(lc.oversubscription)] for dim, lc in s.layer_conditions.items()]
    table, _ = fitted_table(console, LAYER_COLUMNS, layers)
    print_fitted(console, table, "layer conditions (reuse from the previous neighbour thread sets)")
    roof = s.roofline
    ls = roof.limiters
    limits = [[glups(ls["fp"]), glups(ls["l1"]), glups(ls["l2"]), glups(ls["dram"]), roof.limiter,
               glups(roof.lups_per_s), f"{glups(s.two_limiter.lups_per_s)} ({s.two_limiter.limiter})"]]
    table, _ = fitted_table(console, LIMIT_COLUMNS, limits)
    print_fitted(console, table, "four-limiter roofline, Glup/s", [TWO_LIMITER_NOTE])
    caches = [lv for lv in s.levels if lv.capacity_bytes is not None]
    if len(caches) > 2:  # further levels than the first and the L2 (docs/amd.md)
        levels = [[lv.name, lv.scope, fmt(lv.load_bytes_per_lup), fmt(lv.store_bytes_per_lup),
                   glups(lv.lups_per_s) if lv.lups_per_s is not None else "not modelled"]
                  for lv in caches]
        table, _ = fitted_table(console, LEVEL_COLUMNS, levels)
        print_fitted(console, table, "cache levels: bytes per lup each loads from and stores to the next level",
                     [LEVEL_NOTE])
    if s.gflops:
        console.print(f"{s.gflops:.0f} GFLOP/s predicted ({s.model} model)")
    render_before(console, estimate)
    console.print(_rate_line(estimate), highlight=False)
    render_after(console, estimate)
    if energy is not None:
        pw = energy.details
        console.print(f"power: {pw['watts']:.0f} W at {pw['clock_mhz']:.0f} MHz"
                      f"{' (throttled to the ' + format(pw['power_limit_w'], '.0f') + ' W limit)' if pw['throttled'] else ''}, "
                      f"{pw['lups_per_joule'] / MEGA:.1f} Mlup/J ({pw['energy_per_lup_j'] * 1e12:.0f} pJ/lup; "
                      f"{100 * pw['floor_share']:.0f} % static, idle and constant)")


def _rate_line(estimate) -> str:
    """The time model's rate, cycles and what dominates its time: the line ``predict`` leads and
    ends with."""
    return (f"{estimate.model} model: {glups(estimate.lups_per_s)} Glup/s, {estimate.cycles:.0f} cycles, "
            f"dominated by {estimate.explanation}")
