"""The four-limiter roofline as a time model (:mod:`~warpspeed.roofline.time_model`): the tightest
of the levels' limits that every prediction carries (:mod:`warpspeed.levels`), an ordinary entry
of the registry (:mod:`warpspeed.models`) beside the other time models."""
