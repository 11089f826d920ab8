"""Register counts shipped with the package: ptxas' counts of the built-in workloads' kernels.

Without nvcc (a plain ``pip install warpspeed`` on a machine without the CUDA toolkit) the
register count of a kernel would fall back to the estimate of :mod:`pystencils_plugin.registers`,
which is far off for some kernels (70 instead of 32 registers for the 25-point stencil) and moves
configurations in and out of a ranking. So the package ships the counts ptxas gave for the
kernels the built-in workloads generate at their default domains (and the domains the
documentation uses), for each NVIDIA architecture of the device database, in
``pystencils_plugin/data/ptxas_registers.json``. An entry is keyed by the SHA-256 of the
standalone CUDA source ptxas compiled (:func:`~pystencils_plugin.registers.standalone_cuda_source`),
so it is found only for exactly that code: another domain, precision, folding or pystencils
version generates another source and misses, and then the estimate is used, as before.

With nvcc installed, ptxas counts every kernel itself and the table is not read; the test
``tests/plugin/test_register_table.py`` recompiles the shipped sources with the installed nvcc and checks
every count (it runs where nvcc exists, and CI has nvcc).

The file holds data only (JSON: digests, architectures, integers) and is verified when read: an
entry that is not a positive count of at most 255 is ignored, and a file that cannot be read is
no table. ``scripts/ship_register_counts.py`` regenerates it (it needs nvcc).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from pystencils_plugin.register_estimate import CodeFeatures, Sample  # noqa: F401 (Sample: the samples' type)
from warpspeed.files.stored import package_file

#: Format tag of the shipped file; another tag is no table.
FORMAT = "ptxas-registers-1"
#: The shipped file, inside the package.
TABLE_RESOURCE = ("pystencils_plugin", "data", "ptxas_registers.json")
#: Largest register count ptxas can give (255 per thread, CUDA C++ Programming Guide, "Technical
#: Specifications per Compute Capability").
MAX_REGISTERS = 255


@dataclass(frozen=True)
class ShippedTable:
    """The shipped counts.

    Attributes:
        compiler: nvcc's version line of the compiler that counted them.
        counts: source digest -> architecture (``sm_80``) -> registers per thread.
        targets: source digest -> architecture -> the ``-arch`` it was compiled for, where the
            compiler had not that architecture (sm_70 on CUDA 13: sm_75).
        digest: SHA-256 of the file, naming this table in cache keys.
        shapes: shape digest (:func:`pystencils_plugin.register_shape.shape_digest`: the source
            without its constants) -> architecture -> registers per thread; where entries of one
            shape disagree, the largest count (the occupancy it allows is then never too high).
    """

    compiler: str
    counts: Mapping[str, Mapping[str, int]]
    targets: Mapping[str, Mapping[str, str]]
    digest: str
    shapes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    features: Mapping[str, CodeFeatures] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)  # shape -> "workload dtype fold x", for reports
    #: shape -> architecture -> the ``-arch`` its count was compiled for, where another
    shape_targets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def samples(self) -> tuple[Sample, ...]:
        """One :class:`~pystencils_plugin.register_estimate.Sample` per shape with features: what
        the estimate without a compiler learns from."""
        return tuple(Sample(shape, f, self.shapes[shape], self.shape_targets.get(shape, {}))
                     for shape, f in sorted(self.features.items()) if shape in self.shapes)

    def lookup(self, source: str, arch: str) -> tuple[int, str] | None:
        """``(registers, detail)`` of the standalone CUDA ``source`` for ``arch`` (``sm_80``), or None."""
        key = source_digest(source)
        registers = self.counts.get(key, {}).get(arch)
        if registers is None:
            return None
        target = self.targets.get(key, {}).get(arch, arch)
        compiled = f"-arch={target}" + (f" for {arch}" if target != arch else "")
        return registers, (f"ptxas ({compiled}) of {self.compiler}, counted when the package was built and "
                           "shipped with it (pystencils_plugin/data/ptxas_registers.json)")


    def lookup_shape(self, source: str, arch: str) -> tuple[int, str] | None:
        """``(registers, detail)`` shipped for the same code as ``source`` on another domain (the
        source differs from a shipped one only in its constants), or None."""
        from pystencils_plugin.register_shape import shape_digest

        registers = self.shapes.get(shape_digest(source), {}).get(arch)
        if registers is None:
            return None
        return registers, (f"ptxas' count of the same code on another domain (only the constants differ; "
                           f"{self.compiler}, shipped in pystencils_plugin/data/ptxas_registers.json)")


def source_digest(source: str) -> str:
    """SHA-256 (hex) of a standalone CUDA source: the key of its entry."""
    return hashlib.sha256(source.encode()).hexdigest()


def _valid_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_REGISTERS


def parse_table(text: str) -> ShippedTable | None:
    """The table in ``text`` (the JSON of the shipped file), or None when it is not one; entries
    with an invalid count are left out."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("kernels"), list):
        return None
    counts: dict[str, dict[str, int]] = {}
    targets: dict[str, dict[str, str]] = {}
    shapes: dict[str, dict[str, int]] = {}
    features: dict[str, CodeFeatures] = {}
    labels: dict[str, str] = {}
    shape_targets: dict[str, dict[str, str]] = {}
    for entry in doc["kernels"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("digest"), str):
            continue
        registers = entry.get("registers")
        if not isinstance(registers, dict):
            continue
        good = {str(a): n for a, n in registers.items() if _valid_count(n)}
        if good:
            counts.setdefault(entry["digest"], {}).update(good)
            shape = entry.get("shape")
            found = CodeFeatures.from_dict(entry.get("features"))
            if isinstance(shape, str) and found is not None:
                features.setdefault(shape, found)
                fold = entry.get("fold")
                fold_text = "x".join(map(str, fold)) if isinstance(fold, list) else "?"
                labels.setdefault(shape, f"{entry.get('workload', '?')} {entry.get('dtype', '?')} fold {fold_text}")
            if isinstance(shape, str):
                by_arch = shapes.setdefault(shape, {})
                for arch, n in good.items():
                    by_arch[arch] = max(n, by_arch.get(arch, 0))
        compiled_for = entry.get("compiled_for")
        if isinstance(compiled_for, dict):
            found_targets = {str(a): t for a, t in compiled_for.items() if isinstance(t, str)}
            targets.setdefault(entry["digest"], {}).update(found_targets)
            if isinstance(entry.get("shape"), str):
                shape_targets.setdefault(entry["shape"], {}).update(found_targets)
    return ShippedTable(compiler=str(doc.get("compiler", "unknown nvcc")), counts=counts, targets=targets,
                        digest=hashlib.sha256(text.encode()).hexdigest(), shapes=shapes,
                        features=features, labels=labels, shape_targets=shape_targets)


@lru_cache(maxsize=1)
def shipped_table() -> ShippedTable | None:
    """The table shipped with the package (read once per process), None when it is missing."""
    try:
        text = package_file(*TABLE_RESOURCE).read_text(encoding="utf-8")
    except (OSError, ModuleNotFoundError):
        return None
    return parse_table(text)


def shipped_count(source: str, arch: str) -> tuple[int, str] | None:
    """``(registers, detail)`` shipped for the standalone ``source`` on ``arch``, or None."""
    table = shipped_table()
    return None if table is None else table.lookup(source, arch)


def shipped_shape_count(source: str, arch: str) -> tuple[int, str] | None:
    """``(registers, detail)`` shipped for the same code as ``source`` on another domain, or None."""
    table = shipped_table()
    return None if table is None else table.lookup_shape(source, arch)


def table_digest() -> str:
    """What names the shipped table in cache keys (``none`` without one)."""
    table = shipped_table()
    return "none" if table is None else table.digest
