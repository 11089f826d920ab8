"""Where every constant of a device file comes from: measured on the part, documented, or borrowed.

A device file (``warpspeed/hardware/devices/*.toml``) gives each number a source in the comment
beside it. This module reads those comments back and sorts each constant into one of four kinds,
so that a user can see at a glance what a prediction for a part rests on
(``warpspeed devices --provenance``, ``docs/provenance.md``):

``measured``
    the comment cites a measurement of this very part (a stored gpu-benches file of the part, its
    own Nsight Compute profiles under ``fits/data/<device>/``, or the calibrate tables);
``documented``
    the comment cites vendor documentation or a paper only (whitepaper, datasheet, programming
    guide, occupancy calculator, ISA manual);
``borrowed``
    the comment cites a measurement or fit of *another* part (the part is named);
``unsourced``
    the constant has no comment (a defect: every number must name its source).

The rules are textual and stated here once: a comment is *measured* when it names a stored file
of the part's own measurements (``<benchmark>/<stem>.txt`` with the part's stem from
:data:`warpspeed.measured.device_figures.MEASURED_AS`, or ``fits/data/<device>``), *borrowed* when it
names a measurement (``<benchmark>/<stem>.txt``, "measured on", "fitted", "reproduces", "pointer-chase")
together with a part whose chip differs from this device's, *documented* otherwise. The fitted
constants outside the device file (capacity curves, the first level's tag stage, the time models'
constants) are added from :func:`warpspeed.calibration.provenance.calibration`, and each constant
names the stored measurement of this part that checks it, where one exists (``checked``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from warpspeed.hardware.device import Device

#: The kinds of source, in the order the table shows them.
KINDS = ("measured", "documented", "borrowed", "unsourced")

#: A stored gpu-benches file named in a comment: ``gpu-stream/v100.txt``.
_BENCH_FILE = re.compile(r"\b(gpu-[a-z0-9-]+)/([a-z0-9_]+)\.txt")
#: Words that make a comment name a measurement rather than a document.
_MEASUREMENT_WORDS = re.compile(r"measured on|measurements? of|fitted|reproduces|pointer-chase|gpu-strides|"
                                r"gpu-benches|nsight compute|\bprofiles?\b", re.IGNORECASE)
#: A part name in free text: A100, H100, H200, V100, L40, L40S, A40, MI100, MI210, MI300X, RX 6900 XT, W6800.
_PART = re.compile(r"\b(?:RX ?\d{4} ?XT|W\d{4}|MI\d{3}X?|[AHLV]\d{2,3}S?)\b")

#: Which stored public benchmark checks which constant of a device file (table, key) -> benchmark
#: folder under ``fits/data/public/`` (:mod:`warpspeed.measured.device_figures` derives the figures
#: and ``tests/measured`` compares them with the files).
CHECKED_BY = {
    ("device", "dram_bandwidth_gb_s"): "gpu-stream",
    ("device", "dram_curve_peak_gb_s"): "gpu-stream",
    ("device", "dram_curve_latency_ns"): "gpu-stream",
    ("device", "dram_curve_sharpness"): "gpu-stream",
    ("L2", "bandwidth_gb_s"): "gpu-l2-cache",
    ("L2", "effective_bytes"): "gpu-l2-cache",
    ("L1", "bytes"): "gpu-cache",
    ("L1", "latency_ns"): "gpu-latency",
    ("L2", "latency_ns"): "gpu-latency",
    ("device", "dram_latency_ns"): "gpu-latency",
}


@dataclass(frozen=True)
class ConstantSource:
    """One constant of a device: the table it sits in (``device``, a memory level's name, a model's
    table, or ``fitted`` for constants outside the file), its key and value as written, the kind of
    source (:data:`KINDS`), the part it was measured or fitted on (empty for documents), the
    source as the file states it, and the stored measurement of this part that checks it."""

    table: str
    key: str
    value: str
    kind: str
    part: str
    source: str
    checked: str = ""


def short_name(device_name: str) -> str:
    """The chip-level name of a built-in device: ``A100-SXM4-40GB`` -> ``A100``, ``RX6900XT`` stays."""
    match = _PART.match(device_name)
    return match.group(0).replace(" ", "") if match else device_name


#: The stored gpu-benches files' stems (``gpu-stream/<stem>.txt``) -> the built-in device measured
#: (``gpu-strides/a100.txt``: the A100 40 GB, :data:`~warpspeed.calibration.provenance.NVIDIA_L1_FITTED_ON`;
#: ``gpu-strides/rdna2.txt``: the RX 6900 XT, :data:`~warpspeed.calibration.provenance.RDNA_L1_FITTED_ON`).
FILE_STEMS = {
    "v100": "V100-PCIe-32GB", "a100": "A100-SXM4-40GB", "a100_40": "A100-SXM4-40GB", "a100_80": "A100-SXM4-80GB",
    "h100_pcie": "H100-PCIe-80GB", "h200": "H200", "l40": "L40", "a40": "A40", "mi100": "MI100", "mi210": "MI210",
    "mi300x": "MI300X",
    "rx6900xt": "RX6900XT", "rdna2": "RX6900XT",
}


def classify(comment: str, device: Device) -> tuple[str, str]:
    """``(kind, part)`` of one device-file comment (module docstring): ``part`` is the device the
    measurement was taken on (this device's name when it is its own), empty for documents."""
    from warpspeed.hardware.device import device_names

    if not comment.strip():
        return "unsourced", ""
    lower = comment.lower()
    if f"fits/data/{device.name}" in comment or "calibrate" in lower and "measured" in lower:
        return "measured", device.name
    measured_on = [FILE_STEMS.get(stem, stem) for _, stem in _BENCH_FILE.findall(comment)]
    others = [p for p in measured_on if p != device.name]
    if "rule" in lower:  # a stated rule from another part's measurement (warpspeed.measured.device_figures)
        named = [n for n in device_names() if n != device.name and n in comment]
        others = named + others
    if others:
        return "borrowed", others[0]
    if measured_on:
        return "measured", device.name
    own_short = short_name(device.name)
    if _MEASUREMENT_WORDS.search(comment):
        parts = [p.replace(" ", "") for p in _PART.findall(comment)]
        foreign = [p for p in parts if p != own_short]
        if foreign:
            return "borrowed", foreign[0]
        if parts:
            return "measured", device.name
    if lower.startswith("measured") or "measured:" in lower:  # a published measurement of this part
        return "measured", device.name
    return "documented", ""


def device_file_text(device: Device) -> str:
    """The text of the file ``device`` was loaded from: a built-in device's packaged file, else its path."""
    from warpspeed.files.stored import package_file
    from warpspeed.hardware.device import _DEVICE_PACKAGE as DEVICE_PACKAGE

    path = Path(device.source)
    if path.is_file():
        return path.read_text(encoding="utf-8")
    return package_file(DEVICE_PACKAGE, path.name).read_text(encoding="utf-8")


def _comments(text: str) -> list[tuple[str, str, str, str]]:
    """``(table, key, value, comment)`` for every ``key = value  # comment`` line of a TOML text:
    ``table`` is the table's name, or the ``name`` of a ``[[memory]]`` level (read from its lines)."""
    rows: list[tuple[str, str, str, str]] = []
    table, pending = "", []  # a [[memory]] table's rows wait for its name
    above: list[str] = []  # the comment lines just above a key (its source when it has no inline comment)
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            above.append(line.lstrip("#").strip())
            continue
        before, above = " ".join(above), []
        header = re.fullmatch(r"\[\[?([A-Za-z0-9_.-]+)\]\]?", line)
        if header:
            rows.extend(pending)
            pending, table = [], header.group(1)
            continue
        match = re.fullmatch(r'([A-Za-z0-9_]+)\s*=\s*("[^"]*"|[^#]*?)\s*(?:#\s*(.*))?', line)
        if not match or not table:
            continue
        key, value, comment = match.group(1), match.group(2).strip(), match.group(3) or before
        if table == "memory":
            if key == "name":
                level = value.strip('"')
                pending = [(level, k, v, c) for (_, k, v, c) in pending]
                table = f"memory:{level}"
            else:
                pending.append(("memory", key, value, comment))
            continue
        name = table.split(":", 1)[1] if table.startswith("memory:") else table
        (pending if table.startswith("memory:") else rows).append((name, key, value, comment))
    rows.extend(pending)
    return rows


#: A comment that takes its source from the constant above it (the achievable-DRAM curve's three
#: constants are one fit).
SAME_AS_ABOVE = "of the same curve"

#: Keys that name things rather than give numbers (their provenance is the file's own).
_NAMES = {"name", "vendor", "architecture", "scope", "write"}


def _checked(device: Device, table: str, key: str) -> str:
    from warpspeed.measured.device_figures import MEASURED_AS
    from warpspeed.measured.public_data import public_parts

    bench = CHECKED_BY.get((table, key))
    if bench is None and table == device.l1.name and key in ("bytes", "latency_ns"):
        bench = CHECKED_BY[("L1", key)]
    if bench is None and table == device.l2.name and (table, key) != ("L2", "bytes"):
        bench = CHECKED_BY.get(("L2", key))
    stem = MEASURED_AS.get(device.name)
    if bench and stem and stem in public_parts(bench):
        return f"{bench}/{stem}"
    return ""


def device_constants(device: Device) -> tuple[ConstantSource, ...]:
    """Every numeric constant of ``device``'s file with its kind and source, then the fitted
    constants outside the file (:func:`warpspeed.calibration.provenance.calibration`)."""
    from warpspeed.calibration.provenance import calibration

    out: list[ConstantSource] = []
    for table, key, value, comment in _comments(device_file_text(device)):
        if key in _NAMES:
            continue
        kind, part = classify(comment, device)
        if SAME_AS_ABOVE in comment and out and out[-1].table == table:  # "the same curve": the row above's
            kind, part = out[-1].kind, out[-1].part
        out.append(ConstantSource(table, key, value, kind, part, comment, _checked(device, table, key)))
    for c in calibration(device).components:
        kind = "measured" if c.own else "documented" if c.documented else "borrowed"
        part = device.name if c.own else "" if c.documented else c.source
        via = f" ({c.family})" if c.family else ""
        out.append(ConstantSource("fitted", c.what, "", kind, part, f"{c.source}{via}"))
    return tuple(out)


def kind_counts(constants: tuple[ConstantSource, ...]) -> dict[str, int]:
    """How many constants of each kind (:data:`KINDS`)."""
    return {k: sum(1 for c in constants if c.kind == k) for k in KINDS}


#: Stored measurements beyond the gpu-benches files, per device: its own Nsight Compute profiles
#: and timings (``fits/data/<device>/``) and the published tables of Ernst et al. 2023.
OWN_DATASETS = {
    "H200": ("fits/data/H200: Nsight Compute profiles of the 25-point star (L2 -> L1 load, L2 store, DRAM "
             "volumes of three blocks), timings of 160 configurations and five more kernels, power soaks",),
    "A100-SXM4-40GB": ("the A100 figures of Ernst, Holzer, Hager, Knorr, Wellein, \"Analytical Performance "
                       "Estimation during Code Generation on Modern GPUs\", JPDC 173 (2023), Table 1 and sections 5.4-5.8 "
                       "(`warpspeed validate`)",),
}


def _stem_device(stem: str) -> str | None:
    """The built-in device a stored file ``fits/data/public/<benchmark>/<stem>.csv`` measured."""
    norm = stem.replace("-", "_").removesuffix("_float").removesuffix("gb")
    return FILE_STEMS.get(norm)


def device_checks(device: Device) -> tuple[str, ...]:
    """The stored measurements of ``device`` itself that the tests and ``warpspeed validate``
    compare it with: the gpu-benches sets (``benchmark/file``), FluidX3D's published D3Q19 row,
    and :data:`OWN_DATASETS`."""
    from warpspeed.files.stored import fits_file

    out = []
    public = fits_file("data", "public")
    for folder in sorted((p for p in public.iterdir() if p.is_dir()), key=lambda p: p.name):
        for f in sorted(folder.iterdir(), key=lambda p: p.name):
            if not f.name.endswith(".csv"):
                continue
            stem = f.name[: -len(".csv")]
            if folder.name == "fluidx3d":
                rows = [line.split(",")[0] for line in f.read_text(encoding="utf-8").splitlines()
                        if line and not line.startswith("#")]
                if device.name in rows[1:]:
                    out.append(f"fluidx3d/{stem} (published D3Q19 FP32 MLUP/s)")
            elif _stem_device(stem) == device.name:
                out.append(f"{folder.name}/{stem}")
    return tuple(out) + OWN_DATASETS.get(device.name, ())


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def provenance_markdown(devices: "list[Device]", heading: str = "#") -> str:
    """One Markdown section per device: the count of constants of each kind, what the device was
    checked against, and the table of every constant with its kind, part, source and check."""
    lines: list[str] = []
    for device in devices:
        constants = device_constants(device)
        counts = kind_counts(constants)
        checks = device_checks(device)
        lines += [f"{heading}# {device.name} ({device.vendor} {device.architecture})", "",
                  "Constants: " + ", ".join(f"{n} {k}" for k, n in counts.items()) + ".", "",
                  "Checked against: " + ("; ".join(checks) if checks else
                                         "no measurement of this part is stored (every figure is documented or borrowed)")
                  + ".", "",
                  "| table | constant | value | kind | part | source | checked against |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for c in constants:
            lines.append(f"| {c.table} | {c.key} | {_cell(c.value)} | {c.kind} | {c.part} | {_cell(c.source)} | "
                         f"{c.checked} |")
        lines.append("")
    return "\n".join(lines)


#: The page ``docs/provenance.md`` (``warpspeed devices --provenance --write-docs`` writes it).
PROVENANCE_DOC = "docs/provenance.md"

_PAGE_HEAD = """# Where each device's constants come from

Generated by `warpspeed devices --provenance --write-docs`; `tests/calibration/test_constant_sources.py`
checks that this page is current. For every built-in device, every constant of its device file
(`warpspeed/hardware/devices/<name>.toml`) and every group of fitted constants outside it (capacity
curves, the first level's tag stage, the time models' constants) is sorted by where it comes from:

- **measured**: measured on this very part (a stored gpu-benches file of the part, its own Nsight
  Compute profiles, a published measurement of the part);
- **documented**: vendor documentation or a paper (whitepaper, datasheet, programming guide,
  occupancy calculator, ISA manual), nothing fitted;
- **borrowed**: measured or fitted on another part, which the *part* column names;
- **unsourced**: no source given (none should be).

*Checked against* lists the stored measurements of the part itself that the tests and `warpspeed
validate` compare the device with; a constant's last column names the stored file that checks it.
A device with nothing stored is predicted from documents and borrowed constants only: treat its
figures as estimates of the error `docs/accuracy.md` ("What transfers") gives for its family.
The gpu-benches files are D. Ernst's GPU microbenchmarks (https://github.com/te42kyfo/gpu-benches,
GPL-3.0), stored as figures under `fits/data/public/`.
"""


def provenance_page(devices: "list[Device]") -> str:
    """The whole page :data:`PROVENANCE_DOC` for ``devices`` (NVIDIA parts first, then AMD)."""
    ordered = sorted(devices, key=lambda d: (d.vendor != "nvidia", d.name))
    return _PAGE_HEAD + "\n" + provenance_markdown(ordered) .rstrip("\n") + "\n"
