"""The measuring half of ``warpspeed calibrate``: CUDA microbenchmarks and their sweeps.

* :mod:`~warpspeed.calibration.microbench.sources`: the CUDA C sources;
* :mod:`~warpspeed.calibration.microbench.suite`: the sweeps, the tables they write, resume, budget
  and failures, against any *runner* (one measured point per call);
* :mod:`~warpspeed.calibration.microbench.cupy_runner`: the runner on a GPU (cupy, imported on use).
"""
