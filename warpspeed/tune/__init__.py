"""Tuning with Kernel Tuner in warpspeed's order: measure the configurations the model puts first.

* :mod:`warpspeed.tune.cache`: Kernel Tuner cache files, read and verified, and written.
* :mod:`warpspeed.tune.mapping`: which tune parameters are the block and the folding.
* :mod:`warpspeed.tune.order`: the model's order of a set of configurations.
* :mod:`warpspeed.tune.strategy`: :class:`~warpspeed.tune.strategy.PredictedOrder`, a Kernel
  Tuner strategy (a user-defined ``OptAlg``) measuring in that order.
* :mod:`warpspeed.tune.replay`: a cache replayed through Kernel Tuner's simulation mode, by
  warpspeed's order or one of Kernel Tuner's own strategies.
* :mod:`warpspeed.tune.gpu`: tuning a kernel on the local GPU (Kernel Tuner's cupy backend).
* :mod:`warpspeed.tune.result`: what a tuning run found, and how many runs it took.

Kernel Tuner is an optional dependency (``pip install "warpspeed[tune]"``); without it these
modules raise a one-line :class:`~warpspeed.tune.cache.TuneError`.
"""
