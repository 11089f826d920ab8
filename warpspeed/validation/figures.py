"""The headline accuracy figures: one generated file that every copy of them is rendered from.

``warpspeed validate --write-docs`` computes the comparison of the time models with the H200's
timings (:mod:`warpspeed.validation.real_gpu`), with the five more kernels timed there
(:mod:`warpspeed.validation.kernel_transfer`) and with the public whole-kernel microbenchmarks
(:mod:`warpspeed.validation.public_models`), and writes

* ``docs/accuracy.md`` (the whole page, :mod:`warpspeed.validation.public_report`);
* the figures quoted elsewhere, as data: ``warpspeed/validation/accuracy_figures.json``
  (:func:`figures_document`, installed with the package);
* the README's accuracy table and per-kernel sentence, between ``<!-- generated: NAME -->`` and
  ``<!-- end generated -->`` markers (:func:`update_readme`).

Each time model's ``--help`` appends the sentence :func:`model_help` renders from the installed
file, so the README, ``docs/``, ``--help`` and ``validate`` print one set of numbers; the test
suite regenerates the file and fails when any copy differs.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping, Sequence

from warpspeed.files.stored import package_file
from warpspeed.models import BASELINE_MODEL, DEFAULT_TIME_MODEL, TIME_MODELS

#: Format of the figures file; a change makes an older file unreadable (no figures shown).
FORMAT = "warpspeed-accuracy-figures-1"
#: Where the file lives: package and name (in the source tree ``warpspeed/validation/``).
PACKAGE = "warpspeed.validation"
FILE_NAME = "accuracy_figures.json"
#: The file's path relative to the repository root (what ``--write-docs`` writes).
REPO_PATH = "warpspeed/validation/accuracy_figures.json"
#: The pages (relative to the repository root) with generated blocks.
README_PATH = "README.md"
GENERATED_PAGES = (README_PATH, "docs/compare.md")
BLOCK_RE = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)

#: Public whole-kernel datasets by kind: the prefix of the dataset's name after ``model: ``.
PUBLIC_KINDS = {"stream": "gpu-stream", "roofline": "gpu-roofline", "small": "gpu-small-kernels",
                "fluidx3d": "FluidX3D"}
#: The kinds of public whole kernels as ``docs/compare.md``'s table names them.
COMPARE_KINDS = {"stream": "streaming, DRAM-bound, all occupancies",
                 "roofline": "compute-heavy streaming (0 to 256 FMAs per 8 B)",
                 "small": "small kernels, launch-bound (4 Ki to 256 Mi elements)",
                 "fluidx3d": "lattice Boltzmann (D3Q19, FP32)"}
#: What the README's table adds to the default model's name.
DEFAULT_LABEL = " (default)"


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def figures_document(datasets: Sequence[Any], real: Any, kernels: Any) -> dict:
    """The headline figures as JSON data: per time model its figures on the H200's timings, per
    kernel of the transfer study its errors, per model and kind of public whole-kernel dataset the
    range of the MAPE over devices. ``real``/``kernels`` may be ``None`` (not run)."""
    doc: dict[str, Any] = {"format": FORMAT}
    if real is not None:
        doc["real_gpu"] = {
            "kernel": real.kernel, "device": real.device, "registers": real.registers,
            "points": len(real.models[0].points),
            "models": {m.model: {"mape_percent": round(m.mape_percent, 1), "median_ratio": round(m.median_ratio, 2),
                                 "spearman": round(m.spearman, 3), "best_share_percent": round(100 * m.best_share, 1)}
                       for m in real.models}}
    if kernels is not None:
        doc["kernels"] = {k.name: {"points": len(k.points), "mape_percent": round(k.mape_percent, 1),
                                   "in_sample_mape_percent": round(k.in_sample_percent, 1),
                                   "left_out_mape_percent": round(k.left_out_percent, 1)}
                          for k in kernels.kernels}
    public: dict[str, dict[str, list[float]]] = {}
    for ds in datasets:
        if ds.group != "Time models":
            continue
        model, what = ds.name.split(": ", 1)
        for kind, prefix in PUBLIC_KINDS.items():
            if what.startswith(prefix) and _finite(ds.mape_percent) is not None:
                public.setdefault(model, {}).setdefault(kind, []).append(round(ds.mape_percent, 1))
    doc["public_models"] = {m: {k: [min(v), max(v)] for k, v in kinds.items()} for m, kinds in public.items()}
    table: dict[str, dict[str, float]] = {}
    for ds in datasets:
        if ds.group == "Time models" and _finite(ds.mape_percent) is not None:
            model, what = ds.name.split(": ", 1)
            table.setdefault(what, {})[model] = round(ds.mape_percent, 1)
    doc["public_datasets"] = table
    return doc


def figures_text(doc: Mapping[str, Any]) -> str:
    """The file's text (in the order computed, two-space indent, one final newline)."""
    return json.dumps(doc, indent=2) + "\n"


def load_figures() -> dict | None:
    """The installed figures, or ``None`` when the file is missing, unreadable or of another format
    (the help then quotes no figure rather than a wrong one)."""
    try:
        doc = json.loads(package_file(PACKAGE, FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError, ModuleNotFoundError):
        return None
    return doc if isinstance(doc, dict) and doc.get("format") == FORMAT else None


def _range(values: Sequence[float]) -> str:
    lo, hi = values
    return f"{lo:.1f} %" if lo == hi else f"{lo:.1f}-{hi:.1f} %"


def model_help(model: str, doc: Mapping[str, Any] | None) -> str:
    """The figures of ``model`` as one clause for its ``--help`` (empty without figures)."""
    if not doc:
        return ""
    parts = []
    real = doc.get("real_gpu", {})
    m = real.get("models", {}).get(model)
    if m:
        parts.append(f"on the {real['points']} configurations of the {real['kernel']} stencil timed on an "
                     f"{real['device']} {m['mape_percent']:.1f} % MAPE (prediction/measurement {m['median_ratio']:.2f} "
                     f"at the median, Spearman {m['spearman']:.3f})")
    if model == DEFAULT_TIME_MODEL and doc.get("kernels"):
        others = [k for name, k in doc["kernels"].items() if name != real.get("kernel")]
        if others:
            lo = min(k["left_out_mape_percent"] for k in others)
            hi = max(k["left_out_mape_percent"] for k in others)
            parts.append(f"{lo:.1f}-{hi:.1f} % on {len(others)} more kernels with its constants fitted on the others")
    public = doc.get("public_models", {}).get(model, {})
    names = {"stream": "streaming kernels", "roofline": "the gpu-roofline sweep", "small": "launch-bound small kernels",
             "fluidx3d": "FluidX3D's D3Q19 rates"}
    pub = [f"{_range(public[k])} on {names[k]}" for k in PUBLIC_KINDS if k in public]
    if pub:
        parts.append("against public microbenchmarks " + ", ".join(pub))
    return "; ".join(parts) + " (docs/accuracy.md)" if parts else ""


def readme_blocks(doc: Mapping[str, Any]) -> dict[str, str]:
    """The README's generated blocks by name: ``accuracy-lead`` (the introduction's sentence),
    ``accuracy-real-gpu`` (the table of every time model
    on the H200's timings) and ``accuracy-kernels`` (the left-out error per kernel)."""
    blocks = {}
    real = doc.get("real_gpu")
    models = real["models"] if real else {}
    if DEFAULT_TIME_MODEL in models and BASELINE_MODEL in models:
        o, r = models[DEFAULT_TIME_MODEL], models[BASELINE_MODEL]
        blocks["accuracy-lead"] = (
            f"measured on an NVIDIA {real['device']} on the paper's own workload it is within {o['mape_percent']:.1f} % "
            f"(MAPE) of the {real['points']} timed configurations, where the paper's four-limiter roofline is "
            f"{r['median_ratio']:.2f}x too fast at the median ({r['mape_percent']:.1f} % MAPE); the roofline stays "
            f"available as `--model {BASELINE_MODEL}`.\n")
    if models:
        lines = ["| model | MAPE | prediction / measurement, median | Spearman | best predicted runs at |",
                 "| --- | ---: | ---: | ---: | ---: |"]
        for i, (model, m) in enumerate(models.items()):
            share = f"{m['best_share_percent']:.1f} %" + (" of the best measured" if i == 0 else "")
            label = model + (DEFAULT_LABEL if model == DEFAULT_TIME_MODEL else "")
            lines.append(f"| {label} | {m['mape_percent']:.1f} % | {m['median_ratio']:.2f} | {m['spearman']:.3f} | "
                         f"{share} |")
        blocks["accuracy-real-gpu"] = "\n".join(lines) + "\n"
    if DEFAULT_TIME_MODEL in models:
        o = models[DEFAULT_TIME_MODEL]
        others = [f"the {model} model {m['median_ratio']:.2f}x, too {'fast' if m['median_ratio'] > 1 else 'slow'} at "
                  f"the median ({m['mape_percent']:.1f} %, Spearman {m['spearman']:.3f})"
                  for model, m in models.items() if model != DEFAULT_TIME_MODEL]
        blocks["compare-real-gpu"] = (
            f"The paper's space of the 25-point stencil was timed on an NVIDIA {real['device']} (`docs/accuracy.md`, "
            f"\"Real GPU\"): the {DEFAULT_TIME_MODEL} model is within {o['mape_percent']:.1f} % MAPE (Spearman "
            f"{o['spearman']:.3f}, its best configuration runs at {o['best_share_percent']:.1f} % of the best measured), "
            + ", ".join(others[:-1]) + (" and " if len(others) > 1 else "") + (others[-1] if others else "") +
            f". The {DEFAULT_TIME_MODEL} model's two fitted constants were fitted on these timings and five more "
            "kernels timed on the same GPU; each kernel's error with it left out of the fit is in "
            "`docs/accuracy.md`.\n")
    table = doc.get("public_datasets")
    if table:
        models = TIME_MODELS
        lines = ["| kind of kernel | dataset | " + " | ".join(models) + " |",
                 "| --- | --- | " + " | ".join("---:" for _ in models) + " |"]
        seen = set()
        for what, by_model in table.items():
            kind = next((k for k, prefix in PUBLIC_KINDS.items() if what.startswith(prefix)), "")
            label = "" if kind in seen else COMPARE_KINDS.get(kind, "")
            seen.add(kind)
            cells = " | ".join(f"{by_model[m]:.1f}" if m in by_model else "—" for m in models)
            lines.append(f"| {label} | {what} | {cells} |")
        blocks["compare-public"] = "\n".join(lines) + "\n"
    kernels = doc.get("kernels")
    if kernels:
        parts = [f"{k['left_out_mape_percent']:.1f} % ({name})" for name, k in kernels.items()]
        blocks["accuracy-kernels"] = ("Each kernel's MAPE with the constants fitted on the other five: "
                                      + ", ".join(parts[:-1]) + f" and {parts[-1]}.\n")
    return blocks


def update_readme(text: str, doc: Mapping[str, Any]) -> str:
    """``text`` with every generated block it marks replaced by :func:`readme_blocks`' (a block
    whose name has no figures is left as it is)."""
    blocks = readme_blocks(doc)

    def replace(match: re.Match) -> str:
        body = blocks.get(match.group("name"), match.group("body"))
        return match.group(1) + body + match.group(4)

    return BLOCK_RE.sub(replace, text)
