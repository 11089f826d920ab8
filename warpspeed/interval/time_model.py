"""The AMALI interval model as a time model (:class:`~warpspeed.model_protocol.TimeModel`): it reads the
configuration's trace and the device's ``[interval]`` parameters
(:func:`~warpspeed.interval.params.interval_params`) and runs
:func:`~warpspeed.interval.cpi_stack.interval_model`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.model_protocol import (ModelAbout, ModelCommandLine, ModelEstimate, ModelOption, ModelTable,
                                      ModelTables, TableColumn, TimeModelBase, number_text)

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


class IntervalCommandLine(ModelCommandLine):
    """The interval model's ``--plot`` (the CPI stack as a stacked bar) and its CPI-stack table."""

    options = (ModelOption("--plot", "plot_path", output="plot", plot=True,
                           help="With --model interval: draw the CPI stack as a stacked bar (format from the "
                                "suffix)."),)
    options_error = "--plot draws the interval model's CPI stack: add --model interval"

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        path = values.get("plot_path")
        if path:
            from warpspeed.interval.plot import plot_cpi_stack

            launch = prediction.launch.launch
            plot_cpi_stack(estimate.details["cpi_stack"], path,
                           f"{prediction.kernel_name} on {prediction.device_name}, block {tuple(launch.block)}, "
                           f"fold {tuple(launch.fold)}")

    def tables(self, estimate: ModelEstimate) -> ModelTables:
        """Before the rate: the CPI stack in Nsight Compute names (SM cycles and share per stall
        reason), with the batches and the launch latency it was built from."""
        return ModelTables(before=(cpi_stack_table({"cycles": estimate.cycles, **estimate.details}),))


class IntervalModel(TimeModelBase):
    """Cycles as a CPI stack of Nsight Compute stall reasons. Its option ``--plot`` draws the stack;
    :meth:`estimate` takes the keyword options ``policy``, ``dram_writes`` and ``floor`` of
    :func:`~warpspeed.interval.cpi_stack.interval_model`."""

    name = "interval"
    about = ModelAbout(
        help="the AMALI interval model (a CPI stack of stall reasons; low at low occupancy)",
        reads_trace=True, style=("o", "tab:orange"))
    command_line = IntervalCommandLine()

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        from warpspeed.interval.cpi_stack import interval_model
        from warpspeed.interval.params import interval_params
        from warpspeed.trace.build import build_trace

        params = interval_params(prediction.device)
        result = interval_model(trace if trace is not None else build_trace(prediction), params, **options)
        return ModelEstimate(self.name, result.lups_per_s, result.seconds, result.cycles, result.explanation,
                             result.as_dict())

    def require_parameters(self, device: "Device") -> None:
        from warpspeed.interval.params import interval_params

        interval_params(device)


#: Columns of the CPI-stack table.
STACK_COLUMNS = (TableColumn("stall reason", justify="left"), TableColumn("cycles"), TableColumn("share"))


def cpi_stack_table(details: Mapping[str, Any]) -> ModelTable:
    """The CPI stack of ``details`` (the interval model's ``ModelEstimate.details`` with its
    ``cycles``) as a table: cycles and share per stall reason, then the total."""
    stack, total = details["cpi_stack"], details["cycles"]
    rows = [(name, f"{cycles:,.0f}", f"{100 * cycles / total:.1f} %") for name, cycles in stack.items()]
    rows.append(("total", f"{total:,.0f}", "100 %"))
    guard = details.get("guard_warps_per_batch", 0)
    mix = f" ({details['full_warps_per_batch']} full, {guard} guard-only)" if guard else ""
    notes = [f"{details['batches']} batches on the slowest SM, most of {details['warps_per_batch']} warps{mix}, "
             f"{number_text(details['batch_cycles'])} cycles each; launch latency "
             f"{number_text(details['launch_latency_cycles'])} cycles."]
    if details["bandwidth_floor_cycles"] > 0:
        notes.append(f"{number_text(details['bandwidth_floor_cycles'])} cycles raise the model to the bandwidth "
                     "bound (the roofline's time), counted under the binding level's stall.")
    return ModelTable("interval model (AMALI): CPI stack, SM cycles", STACK_COLUMNS, tuple(rows), tuple(notes))


#: The interval time model.
INTERVAL = IntervalModel()
