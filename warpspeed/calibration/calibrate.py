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
import re
from dataclasses import dataclass, replace
from pathlib import Path

from warpspeed.calibration.device_toml import device_file_text
from warpspeed.calibration.own_figures import OwnFigures, own_figures
from warpspeed.measured.raw_tables import write_whole
from warpspeed.errors import DeviceError, WarpspeedError
from warpspeed.files.names import MAX_NAME_LENGTH, NAME_RULE, is_name
from warpspeed.hardware.device import Device, device_from_text, device_text, load_device


@dataclass(frozen=True)
class Calibrated:
    """What :func:`write_device_file` wrote: the device, its file and the figures."""

    device: Device
    path: Path
    figures: OwnFigures


#: The device name when neither the output file nor the GPU gives one.
FALLBACK_NAME = "calibrated"


def as_name(text: str) -> str:
    """``text`` made a name (:mod:`warpspeed.files.names`): every run of characters a name may not
    hold becomes ``-``, leading and trailing ``-``/``.`` go, ``..`` becomes ``.``, and the result is
    cut to the longest name (``"my gpu"`` -> ``"my-gpu"``); ``""`` when nothing is left."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    while ".." in name:
        name = name.replace("..", ".")
    return name[:MAX_NAME_LENGTH].strip("-._")


def default_name(out: Path, gpu: str) -> str:
    """The device name: the output file's stem made a name (``mygpu.toml`` -> ``mygpu``,
    ``my gpu.toml`` -> ``my-gpu``), else the GPU's, else :data:`FALLBACK_NAME`."""
    stem = out.name[:-len(".toml")] if out.name.endswith(".toml") else out.name
    return as_name(stem) or as_name(gpu) or FALLBACK_NAME


def check_device_name(name: str | None) -> None:
    """Refuse (one line) a ``--name`` that is not a name, before any fit or measurement."""
    if name is not None and not is_name(name):
        raise WarpspeedError(f"device name {name!r} is not a name; allowed: {NAME_RULE}")


def write_device_file(folder: str | Path, base: str, out: str | Path, name: str | None = None,
                      written: str | None = None, strict: bool = False) -> Calibrated:
    """Fit the raw tables of ``folder`` and write the device file ``out`` on top of ``base`` (a
    built-in device name, prefix or family, or a device-file path); ``name``: the device's name
    (default: :func:`default_name`); ``strict``: refuse a table that cannot be fitted well
    (:func:`~warpspeed.calibration.own_figures.own_figures`) instead of leaving it out."""
    out = Path(out)
    check_device_name(name)
    base_device = load_device(base, "--base")
    folder = Path(folder)
    figures = own_figures(folder, base_device, strict=strict)
    if folder.resolve().parent == out.resolve().parent:  # beside the device file: name it as such
        figures = replace(figures, folder=folder.name)
    name = name or default_name(out, figures.gpu)
    check_device_name(name)
    stamp = written or (f"`warpspeed calibrate` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    text = device_file_text(base_device.name, device_text(base), figures, name, stamp)
    try:
        device = device_from_text(text, str(out))
    except DeviceError as exc:
        raise WarpspeedError(f"the calibrated device file would not load, so it is not written: {exc}") from None
    write_whole(out, text)
    return Calibrated(device, out, figures)
