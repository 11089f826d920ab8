"""Issue and completion latency of one instruction type from a dependent-chain micro-benchmark.

Cornelis, Lemeire: "The Pipeline Performance Model: A Generic Executable Performance Model for
GPUs", PDP 2019, section III.B: W warps each run N dependent instructions; the time follows
Eq. 1, ``t = N Lambda + (W - 1) lambda`` while W < Lambda / lambda (latency-bound) and
``t = Lambda + (N W - 1) lambda`` beyond (throughput-bound). Hence

- Lambda = t(1) / N (one warp: every instruction waits for the previous one);
- lambda = (t(W2) - t(W1)) / (N (W2 - W1)) for the two largest warp counts, both
  throughput-bound (each extra warp adds N instructions one lambda apart).
"""

from __future__ import annotations

from typing import Sequence

from warpspeed.errors import WarpspeedError


def latencies_from_times(warps: Sequence[int], cycles: Sequence[float], chain: int) -> tuple[float, float]:
    """``(issue, completion)`` = (lambda, Lambda) in cycles from times ``cycles`` measured at
    ``warps`` warps (W = 1 among them) each running ``chain`` dependent instructions."""
    table = dict(zip(warps, cycles))
    if len(table) != len(warps) or 1 not in table or len(table) < 3 or chain < 1:
        raise WarpspeedError("latency extraction needs distinct warp counts including 1 and at least two "
                             "more, and a chain of at least one instruction")
    w2, w1 = sorted(table)[-1], sorted(table)[-2]
    return (table[w2] - table[w1]) / (chain * (w2 - w1)), table[1] / chain
