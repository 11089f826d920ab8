"""Power-model parameters: the device's ``[power]`` table, its family's energy file and the priors.

A device file's ``[power]`` table names the family file (``family``); the board power limit and
the reference clock at which the family's energies hold are device facts (``[device]``
``power_limit_w`` and ``reference_clock_mhz``). The table may set the board's constant power
(``constant_w``) and DRAM sector energy (``dram_sector_j``) where the family's do not fit the
board (another board limit, another memory technology). A family file
(``warpspeed/power/families/<family>.toml``) holds, each with its provenance:

- ``[dynamic]``: ``fp32_lane_j``, the energy of one lane of an FP32 fused multiply-add, which
  scales every core component by the ratios of :data:`PRIORS_FILE` (instruction issue, integer,
  integer multiply, FP32, FP64, special function, tensor multiply-add, register-file access);
  ``l1_sector_j``, ``l2_sector_j``, ``dram_sector_j``: a 32 B sector at each level (L2 with the
  network on chip);
- ``[static]``: ``first_lane_w`` and ``add_lane_w``, the chip-wide static power of
  ``reference_sms`` active SMs running integer and FP32 instructions with one active lane per
  warp and for each further lane (AccelWattch's eqs 4 and 5; ``model = "linear"`` or
  ``"half_warp"``); ``idle_sm_w`` per SM without blocks; ``constant_w``. Kernels that use other
  units get the static power of their category (:func:`static_category`) by AccelWattch's Volta
  ratios between the categories (the ``volta-gv100`` family);
- ``[clock]``: ``v_min_rel``, the lowest supply voltage relative to the reference (voltage
  follows the clock down to it), or ``vf_table``, a measured voltage-frequency table of
  ``[MHz, voltage relative to the reference]`` pairs in increasing clock order, which replaces
  the rule; ``v_min_status``: ``fitted`` (the runs determine the floor), ``given`` (a published
  value or table) or ``assumed`` (the runs do not determine it: ``v_min_rel`` is the middle of
  the plausible range, :func:`assumed_floor`, the floor of point predictions at other clocks); an assumed floor has ``v_min_range = [low, high]``, the plausible
  floors (:data:`PLAUSIBLE_V_MIN`), over which clock optima are reported as ranges
  (:mod:`warpspeed.power.dvfs`);
- ``[provenance]``: where the numbers come from (``status``: artifact, derived, calibrated,
  scaled-prior, transferred: :mod:`warpspeed.power.transfer`) and, for calibrated files, the data
  and the fit's errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from warpspeed.errors import WarpspeedError
from warpspeed.files.names import check_name
from warpspeed.files.stored import package_file, package_files
from warpspeed.files.toml import read_toml, table_number

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device

#: Package holding the family files and the priors.
FAMILY_PACKAGE = "warpspeed.power.families"
#: Core-energy ratios to an FP32 FMA lane, with their sources.
PRIORS_FILE = "priors.toml"
#: The family whose static categories (AccelWattch's artifact, Volta) give the ratios between categories.
CATEGORY_FAMILY = "volta-gv100"
#: Core components, in the order of the priors file and the breakdown.
CORE_COMPONENTS = ("issue", "int", "int_mul", "fp32", "fp64", "sfu", "tensor_fma", "register_access")
#: Keys of each family-file table.
DYNAMIC_KEYS = ("fp32_lane_j", "dram_sector_j", "l2_sector_j", "l1_sector_j")
STATIC_KEYS = ("first_lane_w", "add_lane_w", "idle_sm_w", "constant_w", "reference_sms")
#: Static models (eq 4: linear in the active lanes; eq 5: per half-warp).
STATIC_MODELS = ("linear", "half_warp")
#: The category the families' ``[static]`` first/add lane values are given for.
BASE_CATEGORY = "int_fp"
#: How a family's voltage floor is known (see the module docstring).
V_MIN_STATUSES = ("fitted", "given", "assumed")
#: Plausible voltage floors relative to the reference clock's voltage when no measurement fixes
#: the floor. Low end: NVIDIA boards at their lowest clock (210-300 MHz) run at 0.62-0.67 of their
#: highest load voltage (W. Zaitsev (W1zzard), TechPowerUp reviews, "Clock Profiles" tables:
#: Zotac GeForce RTX 3060 Ti Twin Edge, 2020: 0.668 V idle against 1.081 V load; Zotac GeForce
#: GTX 1660 Ti, 2019: 0.656 V against 1.050 V; NVIDIA GeForce RTX 2060 Founders Edition, 2019:
#: 0.718 V against 1.068 V), rounded down to 0.60; high end 0.90: assumed (the same tables show
#: loaded boards at 0.81 of their highest voltage at the bottom of their boost range).
PLAUSIBLE_V_MIN = (0.60, 0.90)


def assumed_floor(span=PLAUSIBLE_V_MIN) -> float:
    """The voltage floor a point prediction uses where no measurement fixes it: the middle of the
    plausible ``span`` (relative to the reference voltage), so that a single number never lies
    outside the range the optimum is reported over."""
    low, high = span
    return round((float(low) + float(high)) / 2, 6)


#: Static categories of AccelWattch (its artifact's names, see the ``volta-gv100`` family).
STATIC_CATEGORIES = ("int_add", "int_mul", "int", "int_fp", "int_fp_dp", "int_fp_sfu", "int_fp_tex",
                     "int_fp_tensor", "light", "geomean")


class PowerParameterError(WarpspeedError):
    """A device without (valid) power-model parameters."""


@dataclass(frozen=True)
class PowerParams:
    """A device's power model. Energies in joules, powers in watts, clocks in MHz.

    ``core_j``: energy per activity of each core component (:data:`CORE_COMPONENTS`; per warp
    instruction for ``issue``, per lane operation, tensor multiply-add or 32-bit register access
    for the others); ``static_w``: (first lane, each further lane) chip-wide static power of all
    the device's SMs, per static category; ``idle_sm_w`` per idle SM."""

    device: str
    family: str
    sms: int
    reference_clock_mhz: float
    power_limit_w: float
    core_j: Mapping[str, float]
    dram_sector_j: float
    l2_sector_j: float
    l1_sector_j: float
    static_w: Mapping[str, tuple[float, float]]
    static_model: str
    idle_sm_w: float
    constant_w: float
    v_min_rel: float
    provenance: Mapping[str, Any]
    vf_table: tuple[tuple[float, float], ...] = ()
    v_min_status: str = "given"
    v_min_range: tuple[float, float] | None = None

    @property
    def v_min_bounds(self) -> tuple[float, float]:
        """The voltage floors to report clock optima over: ``v_min_range`` where the floor is
        assumed, else ``v_min_rel`` alone."""
        return self.v_min_range if self.v_min_range is not None else (self.v_min_rel, self.v_min_rel)


def _number(table: Mapping, key: str, where: str, positive: bool = False) -> float:
    return table_number(table, key, where, PowerParameterError, positive)


def load_family(name: str, path: str | Path | None = None) -> dict:
    """The family file ``name`` (built in) or the file at ``path``."""
    if path is not None:
        return read_toml(Path(path), "power family file", PowerParameterError)
    return _builtin(check_name(name, "power family", PowerParameterError))


@lru_cache(maxsize=None)
def _builtin(name: str) -> dict:
    """A built-in family (or the priors) file, read once (the package's files do not change
    while it runs)."""
    resource = package_file(FAMILY_PACKAGE, f"{name}.toml")
    if not resource.is_file():
        known = [p.name[:-5] for p in package_files(FAMILY_PACKAGE, ".toml") if p.name != PRIORS_FILE]
        raise PowerParameterError(f"unknown power family {name!r}; built-in families: {', '.join(known)}")
    return read_toml(resource, "power family file", PowerParameterError)


def core_ratios() -> dict[str, float]:
    """Energy per activity of each core component relative to one FP32 FMA lane (:data:`PRIORS_FILE`)."""
    table = _builtin(PRIORS_FILE[:-5]).get("core_ratios", {})
    return {c: _number(table, c, f"{PRIORS_FILE} [core_ratios]") for c in CORE_COMPONENTS}


def category_ratios() -> dict[str, tuple[float, float]]:
    """Per static category, (first lane, further lane) relative to :data:`BASE_CATEGORY`'s, from
    AccelWattch's Volta values (the ``volta-gv100`` family's ``[static_categories]``)."""
    table = _builtin(CATEGORY_FAMILY).get("static_categories", {})
    where = f"power family {CATEGORY_FAMILY!r} [static_categories]"
    values = {}
    for c in STATIC_CATEGORIES:
        row = table.get(c)
        if not isinstance(row, Mapping):
            raise PowerParameterError(f"{where}: missing category {c!r}")
        values[c] = (_number(row, "first_lane_w", f"{where}.{c}"), _number(row, "add_lane_w", f"{where}.{c}"))
    base_first, base_add = values[BASE_CATEGORY]
    return {c: (first / base_first, add / base_add if base_add else 0.0) for c, (first, add) in values.items()}


def _board(device: "Device", key: str) -> float:
    """The device's ``[device]`` ``key`` (its power limit or reference clock, checked when the device
    was loaded), which the power model needs: else a one-line error."""
    value = getattr(device, key)
    if value is None:
        raise PowerParameterError(f"device {device.name!r} has a [power] table but no {key} in [device]; the power "
                                  "model needs the board's power limit (W) and reference clock (MHz) there")
    return float(value)


def params_from(device: "Device", table: Mapping, family: Mapping, family_name: str) -> PowerParams:
    """Combine a device's ``[power]`` table, its board figures (``[device]`` ``power_limit_w`` and
    ``reference_clock_mhz``) and a family document."""
    where = f"power family {family_name!r}"
    dyn, static, clock = family.get("dynamic", {}), family.get("static", {}), family.get("clock", {})
    model = static.get("model", "linear")
    if model not in STATIC_MODELS:
        raise PowerParameterError(f"{where}: static model must be one of {', '.join(STATIC_MODELS)}, got {model!r}")
    energies = {k: _number(dyn, k, where) for k in DYNAMIC_KEYS}
    fixed = {k: _number(static, k, where, positive=(k == "reference_sms")) for k in STATIC_KEYS}
    scale = device.sms / fixed["reference_sms"]  # chip-wide static of this device's SMs
    first, add = fixed["first_lane_w"] * scale, fixed["add_lane_w"] * scale
    # the table's keys and ranges were checked when the device was loaded (device_table.toml beside this module)
    constant = float(table["constant_w"]) if "constant_w" in table else fixed["constant_w"]
    if "dram_sector_j" in table:
        energies["dram_sector_j"] = float(table["dram_sector_j"])
    return PowerParams(
        device=device.name, family=family_name, sms=device.sms,
        reference_clock_mhz=_board(device, "reference_clock_mhz"), power_limit_w=_board(device, "power_limit_w"),
        core_j={c: r * energies["fp32_lane_j"] for c, r in core_ratios().items()},
        dram_sector_j=energies["dram_sector_j"], l2_sector_j=energies["l2_sector_j"],
        l1_sector_j=energies["l1_sector_j"],
        static_w={c: (first * rf, add * ra) for c, (rf, ra) in category_ratios().items()}, static_model=model,
        idle_sm_w=fixed["idle_sm_w"], constant_w=constant,
        v_min_rel=_number(clock, "v_min_rel", where), provenance=dict(family.get("provenance", {})),
        vf_table=_vf_table(clock.get("vf_table", ()), where), **_v_min_fields(clock, where))


def _v_min_fields(clock: Mapping, where: str) -> dict:
    """``v_min_status`` and ``v_min_range`` of a ``[clock]`` table (a one-line error if invalid)."""
    status = clock.get("v_min_status", "given")
    if status not in V_MIN_STATUSES:
        raise PowerParameterError(f"{where}: [clock] v_min_status must be one of {', '.join(V_MIN_STATUSES)}, "
                                  f"got {status!r}")
    rows = clock.get("v_min_range")
    if status != "assumed":
        if rows is not None:
            raise PowerParameterError(f"{where}: [clock] v_min_range is only for v_min_status = \"assumed\"")
        return {"v_min_status": status, "v_min_range": None}
    ok = (isinstance(rows, list) and len(rows) == 2
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1 for v in rows)
          and rows[0] <= rows[1])
    if not ok:
        raise PowerParameterError(f"{where}: an assumed voltage floor needs [clock] v_min_range = [low, high] with "
                                  f"0 < low <= high <= 1, got {rows!r}")
    return {"v_min_status": status, "v_min_range": (float(rows[0]), float(rows[1]))}


def _vf_table(rows: Any, where: str) -> tuple[tuple[float, float], ...]:
    """A ``[clock] vf_table``: pairs of positive numbers, clocks increasing, else a one-line error."""
    table = []
    for row in rows if isinstance(rows, list) else [rows] if rows else []:
        ok = (isinstance(row, list) and len(row) == 2
              and all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in row))
        if not ok:
            raise PowerParameterError(f"{where}: [clock] vf_table rows must be [MHz, relative voltage] pairs of "
                                      f"positive numbers, got {row!r}")
        table.append((float(row[0]), float(row[1])))
    if any(b[0] <= a[0] for a, b in zip(table, table[1:])):
        raise PowerParameterError(f"{where}: [clock] vf_table clocks must increase")
    return tuple(table)


def power_params(device: "Device", family_path: str | Path | None = None) -> PowerParams:
    """The power parameters of ``device`` (``family_path``: a family file instead of the built-in)."""
    table = device.tables.get("power")
    if not table:
        raise PowerParameterError(
            f"no power-model parameters for {device.name} (its device file has no [power] table); devices with "
            f"them: {', '.join(devices_with_power())}")
    if not isinstance(table, dict):
        raise PowerParameterError(f"device {device.name!r}: [power] is not a table (got an array of tables); "
                                  "write it as one [power] table")
    name = table.get("family")
    if not isinstance(name, str):
        raise PowerParameterError(f"device {device.name!r}: [power] family must name a family file")
    return params_from(device, table, load_family(name, family_path), name)


@lru_cache(maxsize=1)
def devices_with_power() -> tuple[str, ...]:
    """Built-in devices whose files have a ``[power]`` table."""
    from warpspeed.hardware.device import all_devices

    return tuple(d.name for d in all_devices() if "power" in d.tables)
