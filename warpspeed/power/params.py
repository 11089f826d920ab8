"""Power-model parameters: the device's ``[power]`` table and its family's energy file.

A device file's ``[power]`` table names the family file (``family``), the board power limit and
the reference clock at which the family's energies hold. A family file
(``warpspeed/power/families/<family>.toml``) holds, each with its provenance:

- ``[dynamic]``: ``lane_op_j`` (one lane of any compute instruction, issue and register access
  included), ``dram_sector_j``, ``l2_sector_j``, ``l1_sector_j`` (a 32 B sector at each level);
- ``[static]``: ``first_lane_w`` and ``add_lane_w`` (chip-wide static power of the active SMs for
  one active lane per warp and for each further lane, AccelWattch's linear model, eq 4),
  ``idle_sm_w`` per SM without blocks, ``constant_w`` (board power that depends on nothing);
- ``[clock]``: ``v_min_rel``, the lowest supply voltage relative to the reference (voltage
  follows the clock down to it);
- ``[provenance]``: where the numbers come from (``status``: paper, derived, calibrated,
  scaled-prior) and, for calibrated files, the data and the fit's errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.toml import read_toml, table_number

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Package holding the family files.
FAMILY_PACKAGE = "warpspeed.power.families"
#: Keys of each family-file table.
DYNAMIC_KEYS = ("lane_op_j", "dram_sector_j", "l2_sector_j", "l1_sector_j")
STATIC_KEYS = ("first_lane_w", "add_lane_w", "idle_sm_w", "constant_w")


class PowerParameterError(WarpspeedError):
    """A device without (valid) power-model parameters."""


@dataclass(frozen=True)
class PowerParams:
    """A device's power model. Energies in joules, powers in watts, clocks in MHz."""

    device: str
    family: str
    sms: int
    reference_clock_mhz: float
    power_limit_w: float
    lane_op_j: float
    dram_sector_j: float
    l2_sector_j: float
    l1_sector_j: float
    first_lane_w: float
    add_lane_w: float
    idle_sm_w: float
    constant_w: float
    v_min_rel: float
    provenance: Mapping[str, Any]


def _number(table: Mapping, key: str, where: str, positive: bool = False) -> float:
    return table_number(table, key, where, PowerParameterError, positive)


def load_family(name: str, path: str | Path | None = None) -> dict:
    """The family file ``name`` (built in) or the file at ``path``."""
    if path is not None:
        return read_toml(Path(path), "power family file", PowerParameterError)
    return _builtin_family(name)


@lru_cache(maxsize=None)
def _builtin_family(name: str) -> dict:
    """A built-in family file, read once (the package's files do not change while it runs)."""
    resource = resources.files(FAMILY_PACKAGE) / f"{name}.toml"
    if not resource.is_file():
        known = sorted(p.name[:-5] for p in resources.files(FAMILY_PACKAGE).iterdir() if p.name.endswith(".toml"))
        raise PowerParameterError(f"unknown power family {name!r}; built-in families: {', '.join(known)}")
    return read_toml(resource, "power family file", PowerParameterError)


def params_from(device: "Device", table: Mapping, family: Mapping, family_name: str) -> PowerParams:
    """Combine a device's ``[power]`` table and a family document."""
    where = f"power family {family_name!r}"
    dyn, static, clock = family.get("dynamic", {}), family.get("static", {}), family.get("clock", {})
    return PowerParams(
        device=device.name, family=family_name, sms=device.sms,
        reference_clock_mhz=_number(table, "reference_clock_mhz", f"device {device.name!r} [power]", True),
        power_limit_w=_number(table, "power_limit_w", f"device {device.name!r} [power]", True),
        **{k: _number(dyn, k, where) for k in DYNAMIC_KEYS},
        **{k: _number(static, k, where) for k in STATIC_KEYS},
        v_min_rel=_number(clock, "v_min_rel", where), provenance=dict(family.get("provenance", {})))


def power_params(device: "Device", family_path: str | Path | None = None) -> PowerParams:
    """The power parameters of ``device`` (``family_path``: a family file instead of the built-in)."""
    table = device.tables.get("power")
    if not table:
        raise PowerParameterError(
            f"no power-model parameters for {device.name} (its device file has no [power] table); devices with "
            "them: A100, A40, L40, L40S")
    name = table.get("family")
    if not isinstance(name, str):
        raise PowerParameterError(f"device {device.name!r}: [power] family must name a family file")
    return params_from(device, table, load_family(name, family_path), name)
