"""Calibration: the stored measurements, the figures read off them, and every fit of a constant.

Prediction (:mod:`warpspeed.predict` and the models) reads documented hardware numbers (the
device files) and a few fitted constants (``fits/*.toml``, the first level's pipeline in its
``[[memory]]`` table, the ``[interval]``, ``[power]`` and ``[overlap]`` tables). This package is where those constants come from and where
each device's borrow is reported; nothing here runs during a prediction except the report of
where the constants were fitted (:func:`calibration`).

* :mod:`~warpspeed.calibration.provenance`: per device and component, the part a constant was
  fitted on (the ``calibration:`` line of ``predict`` and ``rank``);
* :mod:`~warpspeed.calibration.public_data`: the reader of the stored public microbenchmark
  measurements (``fits/data/public/``; the data path itself is :mod:`warpspeed.files.stored`);
* :mod:`~warpspeed.calibration.sustained` and :mod:`~warpspeed.calibration.device_figures`: the
  sustained figures read off those measurements, and each device file's derived numbers;
* the fits: :mod:`~warpspeed.calibration.bandwidth` (the achievable-DRAM-bandwidth curve),
  :mod:`~warpspeed.calibration.capacity` (one capacity curve, ``warpspeed fit``),
  :mod:`~warpspeed.calibration.launch` (the launch cost of the interval model),
  :mod:`~warpspeed.calibration.power` (a power family, ``warpspeed power-fit``),
  :mod:`~warpspeed.calibration.pipeline` (an instruction's issue and completion latency) and
  :mod:`~warpspeed.calibration.refit` (the DRAM-volume curves from measured counters);
* ``warpspeed calibrate``: :mod:`~warpspeed.calibration.microbench` measures a GPU into raw tables
  (:mod:`~warpspeed.calibration.raw_tables`), :mod:`~warpspeed.calibration.own_figures` fits its
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
