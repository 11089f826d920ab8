"""Percentage errors of predictions against measurements, shared by every accuracy report."""

from __future__ import annotations

import math
from typing import Sequence

from warpspeed.errors import WarpspeedError


class AccuracyError(WarpspeedError):
    """The rows cannot be compared (missing columns, too few valid rows)."""


def mape(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Mean absolute percentage error in percent: ``100 / n * sum |p - m| / m`` (m > 0)."""
    if len(predicted) != len(measured):
        raise AccuracyError(f"mape: {len(predicted)} predicted but {len(measured)} measured values")
    if not predicted:
        return math.nan
    if any(m <= 0 for m in measured):
        raise AccuracyError("mape: measured values must be positive")
    return 100.0 * sum(abs(p - m) / m for p, m in zip(predicted, measured)) / len(measured)
