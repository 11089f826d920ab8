"""Which of ``warpspeed validate``'s datasets checked each built-in device.

A dataset checked a device when it names the device (``"A100-SXM4-40GB stream scale"``), when one
of its points is the device or one of the device's levels (FluidX3D's table: one point per part;
``"A100-PCIe-40GB L2"``), or when one of its stored
files measured that device (``gpu-strides/a100.txt``: the A100 40 GB;
:data:`warpspeed.calibration.constant_sources.FILE_STEMS`). A device no dataset names was checked
against nothing: its predictions rest on documents and borrowed constants
(``warpspeed devices --provenance``).
"""

from __future__ import annotations

import re
from typing import Sequence

from warpspeed.validation.datasets import DatasetAccuracy

_STEM = re.compile(r"([a-z0-9_-]+)\.(?:txt|csv)$")


def _source_devices(ds: DatasetAccuracy) -> set[str]:
    from warpspeed.calibration.constant_sources import FILE_STEMS

    out = set()
    for path, _ in ds.sources:
        match = _STEM.search(path)
        if match:
            stem = match.group(1).replace("-", "_").removesuffix("_float").removesuffix("gb")
            if stem in FILE_STEMS:
                out.add(FILE_STEMS[stem])
    return out


def checked_by_device(datasets: Sequence[DatasetAccuracy], devices: Sequence[str],
                      real_gpu_device: str | None = None) -> dict[str, tuple[str, ...]]:
    """Per device name, the ``group: name`` of every dataset that checked it (module docstring);
    ``real_gpu_device``: the device of validate's real-GPU section, which checked it too."""
    out: dict[str, list[str]] = {name: [] for name in devices}
    if real_gpu_device in out:
        out[real_gpu_device].append("Real GPU: timings, Nsight Compute volumes and board power (fits/data/)")
    for ds in datasets:
        named = {d for d in devices if d in ds.name or any(p.label == d or p.label.startswith(d + " ") for p in ds.points)}
        for device in sorted(named | (_source_devices(ds) & set(devices))):
            out[device].append(f"{ds.group}: {ds.name}")
    return {name: tuple(v) for name, v in out.items()}
