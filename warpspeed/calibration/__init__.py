"""Calibration: every fit of a constant, and where each constant was fitted.

Prediction (:mod:`warpspeed.predict` and the models) reads documented hardware numbers (the
device files) and a few fitted constants (``fits/*.toml``, the first level's pipeline in its
``[[memory]]`` table, the ``[interval]``, ``[power]`` and ``[overlap]`` tables). This package is where those constants come from and where
each device's borrow is reported; nothing here runs during a prediction except the report of
where the constants were fitted (:func:`calibration`). The stored measurements and the figures
read off them are :mod:`warpspeed.measured`, below the models; this package imports the models.
Validation reports on these fits and imports them; nothing here imports validation.

* :mod:`~warpspeed.calibration.provenance`: per device and component, the part a constant was
  fitted on (the ``calibration:`` line of ``predict`` and ``rank``);
* the fits: :mod:`~warpspeed.calibration.capacity` (one capacity curve, ``warpspeed fit``),
  :mod:`~warpspeed.calibration.launch` (the launch cost of the interval model),
  :mod:`~warpspeed.calibration.overlap_fit` (the overlap model's two fitted constants),
  :mod:`~warpspeed.calibration.power` (a power family, ``warpspeed power-fit``),
  :mod:`~warpspeed.calibration.pipeline` (an instruction's issue and completion latency); the
  refit of the capacity curves on measured counters, judged on held-out rows by the accuracy
  report, is :mod:`warpspeed.validation.refit`;
* ``warpspeed calibrate``: :mod:`~warpspeed.calibration.microbench` measures a GPU into raw tables
  (:mod:`warpspeed.measured.raw_tables`), :mod:`~warpspeed.calibration.own_figures` fits its
  figures from them, :mod:`~warpspeed.calibration.device_toml` and
  :mod:`~warpspeed.calibration.calibrate` write its device file.
"""

from warpspeed.calibration.provenance import (
    MEASURED_ON_ANOTHER_PART,
    NVIDIA_L1_FITTED_ON,
    POWER_SOAKS_ON,
    RDNA_L1_FITTED_ON,
    Calibration,
    Component,
    calibration,
)

__all__ = ["MEASURED_ON_ANOTHER_PART", "NVIDIA_L1_FITTED_ON", "POWER_SOAKS_ON", "RDNA_L1_FITTED_ON",
           "Calibration", "Component", "calibration"]
