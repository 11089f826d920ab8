"""The roofline: the four limiters and the two-limiter comparison (:mod:`~warpspeed.roofline.limits`,
below the prediction that records them) and the roofline as a time model
(:mod:`~warpspeed.roofline.time_model`, beside the other time models)."""
