"""``warpspeed calibrate``'s fit: a folder of raw tables and a base device in, a device file out.

:func:`write_device_file` runs :func:`~warpspeed.calibration.own_figures.own_figures` on the
folder, puts the figures into the base device's file
(:func:`~warpspeed.calibration.device_toml.device_file_text`), loads the result as any device file
is loaded (so a figure outside the device ranges is refused here, with the file left unwritten) and
writes it whole. No GPU is needed; the measuring half
(:mod:`warpspeed.calibration.microbench`) fills the folder.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, replace
from pathlib import Path

from warpspeed.calibration.device_toml import device_file_text
from warpspeed.calibration.own_figures import OwnFigures, own_figures
from warpspeed.measured.raw_tables import write_whole
from warpspeed.errors import DeviceError, WarpspeedError
from warpspeed.files.names import NAME_RULE, is_name
from warpspeed.hardware.device import Device, device_from_text, device_text, load_device


@dataclass(frozen=True)
class Calibrated:
    """What :func:`write_device_file` wrote: the device, its file and the figures."""

    device: Device
    path: Path
    figures: OwnFigures


def default_name(out: Path, gpu: str) -> str:
    """The device name: the output file's stem (``mygpu.toml`` -> ``mygpu``)."""
    stem = out.name[:-len(".toml")] if out.name.endswith(".toml") else out.name
    return stem or (gpu.replace(" ", "-") if gpu else "calibrated")


def write_device_file(folder: str | Path, base: str, out: str | Path, name: str | None = None,
                      written: str | None = None) -> Calibrated:
    """Fit the raw tables of ``folder`` and write the device file ``out`` on top of ``base`` (a
    built-in device name or a device-file path); ``name``: the device's name (default: the
    output file's stem)."""
    out = Path(out)
    base_device = load_device(base)
    folder = Path(folder)
    figures = own_figures(folder, base_device)
    if folder.resolve().parent == out.resolve().parent:  # beside the device file: name it as such
        figures = replace(figures, folder=folder.name)
    name = name or default_name(out, figures.gpu)
    if not is_name(name):
        raise WarpspeedError(f"device name {name!r} is not a name; allowed: {NAME_RULE}")
    stamp = written or (f"`warpspeed calibrate` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    text = device_file_text(base_device.name, device_text(base), figures, name, stamp)
    try:
        device = device_from_text(text, str(out))
    except DeviceError as exc:
        raise WarpspeedError(f"the calibrated device file would not load, so it is not written: {exc}") from None
    write_whole(out, text)
    return Calibrated(device, out, figures)
