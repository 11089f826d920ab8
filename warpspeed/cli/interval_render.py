"""Tables for ``warpspeed predict --model interval``: the CPI stack in Nsight Compute names."""

from __future__ import annotations

from warpspeed.cli.render import Column, fitted_table, fmt, print_fitted

STACK_COLUMNS = (Column("stall reason", justify="left"), Column("cycles"), Column("share"))


def print_cpi_stack(console, details: dict) -> None:
    """The CPI stack of ``details`` (the interval model's ``ModelEstimate.details``)."""
    stack, total = details["cpi_stack"], details["cycles"]
    rows = [[name, f"{cycles:,.0f}", f"{100 * cycles / total:.1f} %"] for name, cycles in stack.items()]
    rows.append(["total", f"{total:,.0f}", "100 %"])
    table, _ = fitted_table(console, STACK_COLUMNS, rows)
    guard = details.get("guard_warps_per_batch", 0)
    mix = f" ({details['full_warps_per_batch']} full, {guard} guard-only)" if guard else ""
    notes = [f"{details['batches']} batches on the slowest SM, most of {details['warps_per_batch']} warps{mix}, "
             f"{fmt(details['batch_cycles'])} cycles each; launch latency "
             f"{fmt(details['launch_latency_cycles'])} cycles."]
    if details["bandwidth_floor_cycles"] > 0:
        notes.append(f"{fmt(details['bandwidth_floor_cycles'])} cycles raise the model to the bandwidth bound "
                     "(the roofline's time), counted under the binding level's stall.")
    print_fitted(console, table, "interval model (AMALI): CPI stack, SM cycles", notes)
