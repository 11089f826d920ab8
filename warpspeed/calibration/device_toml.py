"""The device file of ``warpspeed calibrate``: the base device's file with the measured figures put in.

Every ``key = value`` line of the written file ends in a comment that names where the number
comes from: ``measured: <table>.csv, <rule>`` for a figure of
:func:`~warpspeed.calibration.own_figures.own_figures`, or ``from --base <device>: <the base
file's own comment>`` for a number the tables do not give. The header lists what was not measured
and why, and repeats the base file's source legend (its comments cite sources by tag). A
``[calibration]`` table records the base, the GPU, the folder of raw tables and the measured keys
(the device loader keeps such tables for the models and ignores this one).

Where a measured figure overrides a base number that others depend on, the dependants follow:
measured latencies drop the base's ``latencies_from`` (every model then takes the measured ones,
:attr:`warpspeed.hardware.device.Device.latencies`), a measured launch overhead
(``launch_overhead_us``) replaces ``launch_overhead_part``, a
measured clock becomes the power model's reference clock (``[device]`` ``reference_clock_mhz``),
and an effective L2 larger than a queried L2 size is capped at it.
"""

from __future__ import annotations

import json
import math
import tomllib
from typing import Any, Mapping

from warpspeed.calibration.own_figures import Measured, OwnFigures
from warpspeed.errors import DeviceError
from warpspeed.units import KILO

#: Alignment column of the comments (as in the shipped files).
COMMENT_COLUMN = 35
#: The figures that make the device's own pointer-chase latencies (then ``latencies_from`` goes).
LATENCY_FIGURES = ("l1.latency_ns", "l2.latency_ns", "device.dram_latency_ns")
#: Section of a figure key -> the scope of the ``[[memory]]`` table it sets.
LEVEL_SCOPES = {"l1": "cu", "l2": "device"}


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DeviceError(f"a device-file number is not finite: {value!r}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + "}"
    raise DeviceError(f"a device-file value of type {type(value).__name__} cannot be written")


def _split_comment(line: str) -> tuple[str, str]:
    """A line's code and its comment (text after a ``#`` outside a string), both stripped."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i].strip(), line[i + 1:].strip()
    return line.strip(), ""


def base_comments(text: str) -> dict[tuple[str, str], str]:
    """``(section, key) -> comment`` of a device file's text; sections are ``device``,
    ``memory<i>`` (the i-th ``[[memory]]`` table) and the other tables' names."""
    out: dict[tuple[str, str], str] = {}
    section, memory = "", -1
    for line in text.splitlines():
        code, comment = _split_comment(line)
        if code.startswith("[[") and code.endswith("]]"):
            memory += 1
            section = f"memory{memory}"
        elif code.startswith("[") and code.endswith("]"):
            section = code[1:-1].strip()
        elif "=" in code:
            out[(section, code.split("=", 1)[0].strip())] = comment
    return out


def header_lines(text: str) -> list[str]:
    """The comment lines that open a device file (its title and source legend)."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines


def _line(key: str, value: Any, comment: str) -> str:
    code = f"{key} = {_value(value)}"
    return f"{code:<{COMMENT_COLUMN - 1}} # {comment}" if comment else code


def _apply(data: dict, figures: OwnFigures) -> dict[tuple[str, str], Measured]:
    """Put the figures into the parsed base file ``data``; ``(section, key) -> figure`` set."""
    memory = data.get("memory", [])
    placed: dict[tuple[str, str], Measured] = {}

    def put(section: str, key: str, fig: Measured) -> None:
        if section.startswith("memory"):
            memory[int(section[len("memory"):])][key] = fig.value
        else:
            data.setdefault(section, {})[key] = fig.value
        placed[(section, key)] = fig

    for fig in figures.figures:
        table, _, key = fig.key.partition(".")
        if table in LEVEL_SCOPES:
            index = next((i for i, m in enumerate(memory) if m.get("scope") == LEVEL_SCOPES[table]), None)
            if index is None:
                raise DeviceError(f"the base file has no [[memory]] table of scope {LEVEL_SCOPES[table]!r} for {fig.key}")
            put(f"memory{index}", key, fig)
        elif table in ("interval", "power") and table not in data:
            continue  # the base has no such model table: the figure has nowhere to go
        else:
            put(table, key, fig)
    device = data.get("device")
    if isinstance(device, dict) and figures.get("device.launch_overhead_us") is not None:
        device.pop("launch_overhead_part", None)
    if isinstance(device, dict) and all(figures.get(k) is not None for k in LATENCY_FIGURES):
        device.pop("latencies_from", None)
    clock = figures.get("device.clock_ghz")
    if clock is not None and isinstance(device, dict) and "reference_clock_mhz" in device:
        put("device", "reference_clock_mhz", Measured("device.reference_clock_mhz", round(float(clock.value) * KILO, 1),
                                                      clock.table, "the clock_ghz above"))
    l2_size = figures.get("l2.bytes")
    if l2_size is not None:
        index = next(i for i, m in enumerate(memory) if m.get("scope") == "device")
        if memory[index].get("effective_bytes", 0) > l2_size.value and figures.get("l2.effective_bytes") is None:
            put(f"memory{index}", "effective_bytes",
                Measured("l2.effective_bytes", int(l2_size.value), l2_size.table,
                         "the base's effective L2 capped at the queried L2 size"))
    return placed


def device_file_text(base_name: str, base_text: str, figures: OwnFigures, name: str, written: str) -> str:
    """The device file for ``figures`` on top of the base file ``base_text`` (of device
    ``base_name``), named ``name``; ``written``: when and by what (one line, for the header)."""
    data = tomllib.loads(base_text)
    data.pop("calibration", None)  # a calibrated file given as the base: its record is not this one's
    if "device" not in data:
        raise DeviceError(f"the base file of {base_name!r} has no [device] table")
    comments = base_comments(base_text)
    placed = _apply(data, figures)
    data["device"]["name"] = name
    base_tag = f"from --base {base_name}"

    def comment(section: str, key: str) -> str:
        if (section, key) in placed:
            fig = placed[(section, key)]
            return f"measured: {fig.table}, {fig.how}"
        if section == "device" and key == "name":
            return f"the name given to warpspeed calibrate (GPU: {figures.gpu or 'not queried'})"
        original = comments.get((section, key), "")
        return f"{base_tag}: {original}" if original else base_tag

    out = [f"# {name}: device file written by {written}",
           f"# GPU: {figures.gpu or 'not queried'}; raw tables: {figures.folder}",
           "# Each number names where it comes from: 'measured: <table>.csv, <rule>' (this GPU's raw tables,",
           f"# fitted by warpspeed.calibration.own_figures) or '{base_tag}: <the base file's source>'."]
    if figures.missing:
        out.append(f"# Not measured here (taken {base_tag}):")
        out += [f"#   - {m.what}: {m.reason}" for m in figures.missing]
    out.append(f"# Not measured by warpspeed calibrate (always {base_tag}): FP lanes, register allocation, block "
               "limits per dimension, cache line and sector sizes, banks, the first level's family, the interval "
               "model's pipeline latencies and tensor rates, the power family, the overlap constants.")
    out += [f"# Note: {n}" for n in figures.notes]
    base_header = header_lines(base_text)
    if base_header:
        out.append(f"# The base file's header ({base_name}), whose source tags its numbers' comments cite:")
        out += ["#   " + line.lstrip("#").strip() for line in base_header]
    out.append("")
    memory_index = 0
    for section, table in data.items():
        if section == "memory":
            for level in table:
                out.append("[[memory]]")
                out += [_line(k, v, comment(f"memory{memory_index}", k)) for k, v in level.items()]
                out.append("")
                memory_index += 1
            continue
        if not isinstance(table, Mapping):
            continue
        out.append(f"[{section}]")
        out += [_line(k, v, comment(section, k)) for k, v in table.items()]
        out.append("")
    out.append("[calibration]")
    out.append(_line("base", base_name, "the device every number not measured comes from"))
    out.append(_line("gpu", figures.gpu, "the GPU the raw tables were measured on (CUDA device name)"))
    out.append(_line("tables", figures.folder, "the raw tables, one CSV per benchmark"))
    out.append(_line("measured", sorted(f.key for f in figures.figures), ""))
    out.append(_line("not_measured", [f"{m.what}: {m.reason}" for m in figures.missing], ""))
    return "\n".join(out) + "\n"
