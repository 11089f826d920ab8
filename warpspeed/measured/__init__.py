"""Stored measurements and the figures read off them.

Below the models: nothing here imports a model, the predictor, validation or calibration, so
the predictor, the models, the validation reports and the fits all read the same figures.

* :mod:`~warpspeed.measured.public_data`: the reader of the stored public microbenchmark
  measurements (``fits/data/public/``; the data path itself is :mod:`warpspeed.files.stored`);
* :mod:`~warpspeed.measured.sustained`: the sustained figures read off those measurements (cache
  plateaus and onsets, latency levels, stream summaries);
* :mod:`~warpspeed.measured.stream_curve`: the achievable-DRAM-bandwidth curve
  (:mod:`warpspeed.hardware.dram_curve`) read off one stream kernel's sweep;
* :mod:`~warpspeed.measured.device_figures`: each built-in device file's figures derived from the
  measurements, and the rule for devices without them;
* :mod:`~warpspeed.measured.raw_tables`: the raw tables ``warpspeed calibrate`` measures a GPU
  into, in the layout of the public tables.
"""
