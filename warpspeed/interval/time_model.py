"""The AMALI interval model as a time model (:class:`~warpspeed.estimate.TimeModel`): it reads the
configuration's trace and the device's ``[interval]`` parameters
(:func:`~warpspeed.interval.params.interval_params`) and runs
:func:`~warpspeed.interval.model.interval_model`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.estimate import ModelEstimate, ModelOption, TimeModelBase

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.prediction import Prediction
    from warpspeed.trace.document import Trace


class IntervalModel(TimeModelBase):
    """Cycles as a CPI stack of Nsight Compute stall reasons. Its option ``--plot`` draws the stack;
    :meth:`estimate` takes the keyword options ``policy``, ``dram_writes`` and ``floor`` of
    :func:`~warpspeed.interval.model.interval_model`."""

    name = "interval"
    reads_trace = True
    style = ("o", "tab:orange")
    options = (ModelOption("--plot", "plot_path", output="plot", plot=True,
                           help="With --model interval: draw the CPI stack as a stacked bar (format from the "
                                "suffix)."),)
    options_error = "--plot draws the interval model's CPI stack: add --model interval"

    def estimate(self, prediction: "Prediction", trace: "Trace | None" = None, **options: Any) -> ModelEstimate:
        from warpspeed.interval.model import interval_model
        from warpspeed.interval.params import interval_params
        from warpspeed.trace.build import build_trace

        params = interval_params(prediction.device)
        result = interval_model(trace if trace is not None else build_trace(prediction), params, **options)
        return ModelEstimate(self.name, result.lups_per_s, result.seconds, result.cycles, result.explanation,
                             result.as_dict())

    def require_parameters(self, device: "Device") -> None:
        from warpspeed.interval.params import interval_params

        interval_params(device)

    def write_outputs(self, prediction: "Prediction", estimate: ModelEstimate, values: Mapping[str, Any]) -> None:
        path = values.get("plot_path")
        if path:
            from warpspeed.interval.plot import plot_cpi_stack

            launch = prediction.launch.launch
            plot_cpi_stack(estimate.details["cpi_stack"], path,
                           f"{prediction.kernel_name} on {prediction.device_name}, block {tuple(launch.block)}, "
                           f"fold {tuple(launch.fold)}")


#: The interval time model.
INTERVAL = IntervalModel()
