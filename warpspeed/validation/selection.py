"""Choosing the configurations of a measurement campaign: an explicit list, a random sample, and
what is left of an interrupted campaign.

Pure functions, tested offline. ``--configs 8x4x32:1x1x2,32x32x1`` names configurations
(block, then optionally ``:`` and the folding); ``--sample N --seed S`` takes a reproducible
random subset (:class:`random.Random` seeded with ``S``, kept in the campaign's order).
"""

from __future__ import annotations

import random
import re
from typing import Collection, Sequence

from warpspeed.launch.space import Config
from warpspeed.validation.plan import MeasurementError

#: Seed of ``--sample`` unless ``--seed`` names another.
DEFAULT_SEED = 0

_TRIPLE = re.compile(r"(\d+)x(\d+)x(\d+)")


def _triple(text: str, what: str, entry: str) -> tuple[int, int, int]:
    m = _TRIPLE.fullmatch(text.strip())
    if not m or any(int(v) < 1 for v in m.groups()):
        raise MeasurementError(f"configuration {entry!r}: {what} {text.strip()!r} is not three positive integers "
                               "joined by 'x' (e.g. 8x4x32)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def parse_config_list(text: str) -> list[Config]:
    """Configurations from ``BLOCK[:FOLD],...`` with ``BLOCK`` and ``FOLD`` as ``AxBxC``
    (``8x4x32:1x1x2,32x32x1:1x1x1``; no ``:FOLD`` means 1x1x1). Duplicates are dropped, the
    order kept. Raises :class:`MeasurementError` naming the entry that is not of this form."""
    entries = [e.strip() for e in text.split(",")]
    if not text.strip() or any(not e for e in entries):
        raise MeasurementError(f"configuration list {text!r} has an empty entry; expected BLOCK[:FOLD],... "
                               "such as 8x4x32:1x1x2,32x32x1")
    out: list[Config] = []
    for entry in entries:
        block, sep, fold = entry.partition(":")
        config = Config(_triple(block, "block", entry), _triple(fold, "fold", entry) if sep else (1, 1, 1))
        if config not in out:
            out.append(config)
    return out


def sample_configs(configs: Sequence[Config], n: int, seed: int = DEFAULT_SEED) -> list[Config]:
    """``n`` configurations drawn at random without repetition (the same for the same ``seed``),
    in the order of ``configs``. Raises :class:`MeasurementError` when ``n`` is not in 1..len."""
    if not 1 <= n <= len(configs):
        raise MeasurementError(f"a sample of {n} configurations needs 1 <= N <= {len(configs)} "
                               "(the configurations to choose from)")
    chosen = sorted(random.Random(seed).sample(range(len(configs)), n))
    return [configs[i] for i in chosen]


def remaining_configs(configs: Sequence[Config], done: Collection[Config]) -> list[Config]:
    """The configurations of ``configs`` not in ``done`` (measured without error), in order."""
    finished = set(done)
    return [c for c in configs if c not in finished]
