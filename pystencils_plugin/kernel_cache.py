"""Extracted workload kernels kept on disk, so that a ranking of a workload seen before skips
pystencils' code generation and the extraction (about 0.4 s for the three foldings of the 25-point
stencil, most of a warm ``warpspeed rank``).

An entry is the :class:`~pystencils_plugin.extracted.ExtractedKernel` of one (workload, domain,
precision, folding, target, register architecture) as plain JSON data (:func:`to_data`: fields,
accesses with their index expressions as text, flop counts, registers, the source and the
pipeline operations), in a verified entry (:mod:`warpspeed.files.cache_entry`: format, key,
SHA-256) in the directory of the compile cache (:func:`warpspeed.sass.compile.cache_dir`:
``$WARPSPEED_CACHE_DIR``, else ``$XDG_CACHE_HOME/warpspeed``, else ``~/.cache/warpspeed``), under
``kernels/<key>.json``. Reading an entry parses data and rebuilds the kernel through its checked
constructors (index expressions through the grammar of :mod:`warpspeed.kernel.index_text`): no
code in an entry is ever run. The key also holds the versions of Python, sympy, pystencils and
(for its workloads) lbmpy, the version of the nvcc that counted the registers (or that there was
none) and a digest of the plugin's and the kernel description's source files, so an entry is
never read by code that would generate something else. Only kernels whose register count is the
one the toolchain gives are kept: a failed compile, whose count fell back to the estimate, is
tried again next time. An entry that does not verify or cannot be rebuilt is a miss: the kernel
is generated again and the entry replaced. Entries are written atomically; a cache directory that
cannot be written means running without it (one :class:`~warpspeed.errors.CacheWarning`).
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pystencils_plugin.workload_names import LBMPY_WORKLOADS
from warpspeed.errors import WarpspeedError
from warpspeed.files.cache_entry import read_entry, write_entry
from warpspeed.kernel.catalog import generator_version
from warpspeed.sass.compile import cache_key, writable_cache_dir

if TYPE_CHECKING:
    from pystencils_plugin.extracted import ExtractedKernel

#: Sub-directory of the cache directory with the extracted kernels.
SUBDIR = "kernels"
#: Format of an entry; a change makes every older entry a miss.
FORMAT = "extracted-kernel-json-2"


def generator_versions(name: str) -> tuple[str, ...]:
    """The versions of what derives and generates workload ``name``: sympy and pystencils, and
    lbmpy for the workloads it derives (:func:`warpspeed.kernel.catalog.generator_version`: from
    the installed distributions, so that a kernel read back from the cache imports none of them)."""
    packages = ("sympy", "pystencils", *(("lbmpy",) if name in LBMPY_WORKLOADS else ()))
    return tuple(f"{package}={generator_version(package)}" for package in packages)


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """SHA-256 of the plugin's modules and of the kernel description (what an entry's contents
    come from), read once per process."""
    import warpspeed.kernel.description as description

    h = hashlib.sha256()
    paths = sorted(Path(__file__).parent.glob("*.py")) + [Path(description.__file__)]
    for path in paths:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def entry_key(name: str, domain: tuple[int, ...] | None, dtype: str, fold: tuple[int, int, int], hip: bool,
              arch: str, toolchain: str) -> str:
    """The name of the entry of one extracted kernel (see the module docstring); ``toolchain``
    names what counted the registers (the compiler's version line, or that there is none)."""
    return cache_key(FORMAT, sys.version, *generator_versions(name), _code_digest(), name, repr(domain), dtype, repr(fold),
                     "hip" if hip else "cuda", arch, toolchain)


def _index_text(expr: Any) -> str:
    """An index expression as text that :func:`warpspeed.kernel.expressions.parse_index` reads back
    to the same expression; a ValueError when it would not (the kernel is then not stored)."""
    from warpspeed.kernel.expressions import parse_index

    text = str(expr)
    try:
        same = parse_index(text, "cached index") == expr
    except WarpspeedError:
        same = False
    if not same:
        raise ValueError(f"index {text!r} does not read back as itself")
    return text


def to_data(extracted: "ExtractedKernel") -> dict[str, Any]:
    """``extracted`` as plain JSON data (strings, numbers, lists, objects), read back by :func:`from_data`."""
    k = extracted.kernel
    code = k.code
    return {
        "name": k.name,
        "fields": [{"name": f.name, "element_bytes": f.element_bytes, "shape": list(f.shape),
                    "layout": list(f.layout),  # type: ignore[arg-type]  # a tuple once the field is built
                    "alignment_bytes": f.alignment_bytes} for f in k.fields],
        "accesses": [{"field": a.field, "index": [_index_text(e) for e in a.index], "kind": a.kind,
                      "linear": a.linear} for a in k.accesses],
        "domain": list(k.domain),
        "flops": [k.flops.adds, k.flops.muls, k.flops.fmas, k.flops.divs],
        "dtype": k.dtype, "registers": k.registers, "shared_bytes_per_block": k.shared_bytes_per_block,
        "code": None if code is None else {
            "language": code.language, "source": code.source, "generator": code.generator,
            "generator_version": code.generator_version, "include_dirs": list(code.include_dirs),
            "operations": [[op.kind, list(op.inputs), op.precision, op.field, op.label] for op in code.operations]},
        "fold": list(extracted.fold), "registers_source": extracted.registers_source, "source": extracted.source,
        "registers_detail": extracted.registers_detail,
        "special_functions": [[name, count] for name, count in extracted.special_functions],
        "thread_axes": list(extracted.thread_axes),
    }


def _strings(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise TypeError("expected a list of strings")
    return tuple(values)


def _ints(values: Any) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise TypeError("expected a list of integers")
    return tuple(values)


def from_data(data: Any) -> "ExtractedKernel":
    """The :class:`~pystencils_plugin.extracted.ExtractedKernel` of :func:`to_data`'s data, rebuilt
    through the checked constructors (indices parsed by the index grammar, never evaluated);
    TypeError, KeyError, ValueError or a WarpspeedError when the data is not such a kernel."""
    from pystencils_plugin.extracted import ExtractedKernel
    from warpspeed.kernel.description import Access, Field, FlopCounts, Kernel, KernelCode
    from warpspeed.kernel.expressions import parse_index
    from warpspeed.pipeline.graph import Operation, check_operations

    if not isinstance(data, dict):
        raise TypeError("an entry's payload is an object")
    fields = tuple(Field(name=f["name"], element_bytes=f["element_bytes"], shape=_ints(f["shape"]),
                         layout=_ints(f["layout"]), alignment_bytes=f["alignment_bytes"]) for f in data["fields"])
    accesses = []
    for a in data["accesses"]:
        if a["kind"] not in ("load", "store") or not isinstance(a["linear"], bool) or not isinstance(a["field"], str):
            raise ValueError("not an access")
        index = tuple(parse_index(text, f"cached {a['kind']} of {a['field']!r}") for text in _strings(a["index"]))
        accesses.append(Access(field=a["field"], index=index, kind=a["kind"], linear=a["linear"]))
    code = data["code"]
    if code is not None:
        operations = tuple(Operation(kind=kind, inputs=_ints(inputs), precision=precision, field=field, label=label)
                           for kind, inputs, precision, field, label in code["operations"])
        code = KernelCode(language=code["language"], source=code["source"], generator=code["generator"],
                          generator_version=code["generator_version"], include_dirs=_strings(code["include_dirs"]),
                          operations=check_operations(operations) if operations else ())
    flops = data["flops"]
    if not isinstance(flops, list) or len(flops) != 4:
        raise TypeError("flops are four numbers")
    kernel = Kernel(name=data["name"], fields=fields, accesses=tuple(accesses), domain=_ints(data["domain"]),
                    flops=FlopCounts(*flops), dtype=data["dtype"], registers=data["registers"],
                    shared_bytes_per_block=data["shared_bytes_per_block"], code=code)
    specials = tuple((name, count) for name, count in data["special_functions"])
    if not all(isinstance(n, str) and isinstance(c, (int, float)) and not isinstance(c, bool) for n, c in specials):
        raise TypeError("special functions are (name, count) pairs")
    fold = _ints(data["fold"])
    if len(fold) != 3 or min(fold) < 1:
        raise ValueError("a folding is three positive integers")
    for text in (data["source"], data["registers_detail"]):
        if not isinstance(text, str):
            raise TypeError("expected a string")
    return ExtractedKernel(kernel=kernel, fold=fold,  # type: ignore[arg-type]
                           registers_source=data["registers_source"], source=data["source"], registers_detail=data["registers_detail"],
                           special_functions=specials, thread_axes=_strings(data["thread_axes"]))


def _path(key: str) -> Path | None:
    """Where the entry ``key`` lives; None without a usable cache directory."""
    root = writable_cache_dir()
    return None if root is None else root / SUBDIR / f"{key}.json"


def load(key: str) -> "ExtractedKernel | None":
    """The entry ``key``, or ``None`` when there is none or it does not verify (module docstring)."""
    path = _path(key)
    payload = None if path is None else read_entry(path, FORMAT, key)
    if payload is None:
        return None
    try:
        return from_data(payload)
    except (WarpspeedError, TypeError, KeyError, ValueError, IndexError, RecursionError):
        return None


def store(key: str, extracted: "ExtractedKernel") -> None:
    """Write the entry ``key`` atomically; a kernel whose data does not read back as itself, or a
    cache that cannot be written, is skipped."""
    path = _path(key)
    if path is None:
        return
    try:
        data = to_data(extracted)
        if from_data(data) != extracted:
            return
    except (WarpspeedError, TypeError, KeyError, ValueError):
        return
    write_entry(path, FORMAT, key, data)
