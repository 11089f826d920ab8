"""The sustained figures read off the stored microbenchmark sweeps: cache plateaus and onsets,
latency levels, stream summaries (:mod:`warpspeed.calibration.sustained`, which defines them).

The figures are calibration, not prediction; this module keeps the path the accuracy report
(``docs/accuracy.md``) names for them.
"""

from warpspeed.calibration.sustained import (
    CacheStep,
    LatencyLevels,
    MeasuredPart,
    StreamSummary,
    cache_step,
    latency_levels,
    measured_part,
    measured_parts,
    stream_summary,
)

__all__ = ["CacheStep", "LatencyLevels", "MeasuredPart", "StreamSummary", "cache_step", "latency_levels",
           "measured_part", "measured_parts", "stream_summary"]
