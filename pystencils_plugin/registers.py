"""Registers per thread of a pystencils GPU kernel: counted by ptxas, or estimated.

:func:`register_count` compiles the kernel's CUDA source standalone with
``nvcc -arch=sm_XX --resource-usage -cubin`` when ``nvcc`` is on ``PATH`` (or installed by
``pip install 'warpspeed[cuda]'``) and parses ptxas'
``Used N registers`` line (``registers_source='ptxas'``). Without nvcc, for HIP kernels, or
when the compile fails or times out, it takes the count ptxas gave for the same source when the
package was built, where the package ships one (``'shipped'``, :mod:`pystencils_plugin.register_table`:
the built-in workloads' kernels), else falls back to :func:`estimate_registers`
(``'estimate'``), and records why in ``detail``.

Without a count, the order is: the disk cache's count of this source; the shipped table's, of
this source and, for a source that differs from a shipped one only in its constants (the same
code on another domain, :mod:`pystencils_plugin.register_shape`), of that code (with nvcc: only
where the installed compiler counted the table, else it compiles); then the estimate
:mod:`pystencils_plugin.register_estimate` learns from the shipped counts (``docs/registers.md``
gives its error with each shipped kernel left out). :func:`estimate_registers`, the last resort
where the table holds no kernel of the same kind, assumes every loaded value live:
``ESTIMATE_BASE_REGISTERS`` + 2 per 64-bit pointer parameter + ``ceil(element_bytes / 4)`` per
distinct loaded element, clamped to ``[ESTIMATE_MIN_REGISTERS, MAX_REGISTERS_PER_THREAD]`` (34
instead of ptxas' 22 for the 7-point stencil, 70 instead of 32 for the 25-point one).

CUDA 13 dropped offline compilation for sm_70 (Volta): there the compile fails and the
estimate is used, with nvcc's message in ``detail``.

Counts are cached on disk, in the directory of the SASS listings
(:func:`warpspeed.sass.compile.cache_dir`: ``$WARPSPEED_CACHE_DIR``, else
``$XDG_CACHE_HOME/warpspeed``, else ``~/.cache/warpspeed``), as ``registers/<key>.json``, the key
being the SHA-256 of the standalone source, the target architecture, the compiler's version line
and pystencils' include directory. An entry is verified before it is used
(:mod:`warpspeed.files.cache_entry`: format, key, SHA-256, and a count of 1 to
``MAX_REGISTERS_PER_THREAD`` for the entry's own architecture); one that does not verify is a miss,
compiled again and replaced. A kernel is compiled once per compiler, and a later ranking of it
runs no compile (only ``nvcc --version`` and ``nvcc --list-gpu-arch`` once per process, to key the
entry). Compile failures are not cached. Several kernels missing from the cache (the foldings of a
ranking) are compiled concurrently (:func:`compile_register_counts`, :func:`prefetch_register_counts`).

The source is the kernel as generated, for its domain: pystencils bakes the field sizes and strides
into it, so that nvcc folds the neighbours' offsets into the loads' immediate offsets. A source with
fields of runtime size (``ps.fields("src, dst: double[3D]")``) would be the same for every domain,
but it is a different kernel: with runtime strides every neighbour needs its own address, and for
the 25-point stencil ptxas (CUDA 13.0) counts 48 / 40 registers (sm_80 / sm_90) instead of 32
unfolded, 88 / 72 instead of 32 folded 2 in y and 64 / 64 instead of 32 folded 2 in z, while the
domain's own source gives 32 on 128^3, 640 x 512 x 512 and 2048^3 alike
(``benchmarks/register_sources.py`` prints the comparison). The count of the domain's own source
is the right one, so a domain compiles once, the first time it is ranked.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from pystencils_plugin.register_estimate import code_features, estimate_from_table
from pystencils_plugin.register_shape import shape_digest
from pystencils_plugin.register_table import shipped_count, shipped_shape_count, shipped_table
from warpspeed.files.cache_entry import read_entry, write_entry
from warpspeed.sass.compile import cache_key, compiler_version, writable_cache_dir
from warpspeed.sass.toolchain import ARCHITECTURES, DEFAULT_ARCH, compile_target, cuda_arch, find_nvcc  # noqa: F401 (re-exported)
from warpspeed.sass.toolchain import TOOLCHAIN_ENV, toolchain_disabled


#: Seconds before an nvcc compile is abandoned (then the estimate is used).
DEFAULT_COMPILE_TIMEOUT_S = 60.0

#: Hardware limit of registers per thread on Volta..Hopper (CUDA C++ Programming Guide,
#: "Technical Specifications per Compute Capability": 255 32-bit registers per thread).
MAX_REGISTERS_PER_THREAD = 255

#: Estimate constants (assumptions documented in the module docstring).
ESTIMATE_BASE_REGISTERS = 16
ESTIMATE_MIN_REGISTERS = 16
REGISTER_BYTES = 4

_PTXAS_RE = re.compile(r"Used\s+(\d+)\s+registers")

#: Subdirectory of the cache directory (:func:`warpspeed.sass.compile.cache_dir`) with the counts.
REGISTER_CACHE = "registers"
#: What a cache key of the count of a shape (the code without its constants) starts with.
SHAPE_PREFIX = "shape:"
#: Format of a register-count entry; a change makes every older entry a miss.
REGISTER_FORMAT = "ptxas-registers-2"


@dataclass(frozen=True)
class RegisterCount:
    """Registers per thread.

    Attributes:
        registers: 32-bit registers per thread.
        source: ``'ptxas'`` (compiled here), ``'shipped'`` (ptxas' count shipped with the package,
            :mod:`pystencils_plugin.register_table`) or ``'estimate'``.
        detail: how it was obtained, or why the compile was not used.
    """

    registers: int
    source: str
    detail: str




def standalone_cuda_source(kernel_function: Any, source: str | None = None) -> str:
    """The kernel's CUDA source with the prelude pystencils' own JIT adds (headers from
    ``required_headers``, ``<cuda/std/cstdint>``, ``#define RESTRICT __restrict__``), so it
    compiles on its own with ``-I <pystencils include path>``."""
    headers = {"<cuda/std/cstdint>"} | set(getattr(kernel_function, "required_headers", set()))
    headers.discard('"pystencils_runtime/half.h"')
    prelude = "\n".join(f"#include {h}" for h in sorted(headers))
    code = source if source is not None else kernel_function.get_c_code()
    return f'{prelude}\n\n#define RESTRICT __restrict__\n\nextern "C" {code}\n'


def _pystencils_include() -> str | None:
    try:
        from pystencils.include import get_pystencils_include_path
    except ImportError:  # pragma: no cover
        return None
    return get_pystencils_include_path()


def _is_hip(kernel_function: Any) -> bool:
    target = getattr(kernel_function, "target", None)
    return target is not None and "HIP" in str(target).upper()


def _pointer_params(kernel_function: Any) -> int:
    count = 0
    for param in getattr(kernel_function, "parameters", ()):
        if "*" in str(getattr(param, "dtype", "")):
            count += 1
    return count


def estimate_registers(kernel_function: Any, per_thread_loads: int | None = None,
                       element_bytes: int = 8) -> int:
    """Estimated 32-bit registers per thread (formula in the module docstring).

    ``per_thread_loads`` is the number of distinct elements a thread loads (the extractor
    passes it); when omitted, the distinct ``_data_<field>[...]`` subscripts of the source
    on a right-hand side are counted.
    """
    if per_thread_loads is None:
        source = kernel_function.get_c_code()
        subscripts = re.findall(r"(_data_\w+\[[^\]]*\])", source)
        stores = set(re.findall(r"(_data_\w+\[[^\]]*\])\s*=(?!=)", source))
        per_thread_loads = len(set(subscripts) - stores)
    per_value = math.ceil(element_bytes / REGISTER_BYTES)
    raw = ESTIMATE_BASE_REGISTERS + 2 * _pointer_params(kernel_function) + per_value * per_thread_loads
    return max(ESTIMATE_MIN_REGISTERS, min(MAX_REGISTERS_PER_THREAD, raw))


def _compile(nvcc_path: str, source: str, arch: str, include: str | None, timeout_s: float) -> tuple[int | None, str]:
    """One nvcc run: ``(registers, "")`` or ``(None, why not)``."""
    with tempfile.TemporaryDirectory(prefix="warpspeed_regs_") as tmp:
        cu = os.path.join(tmp, "kernel.cu")
        with open(cu, "w", encoding="utf-8") as handle:
            handle.write(source)
        cmd = [nvcc_path, f"-arch={arch}", "--resource-usage", "-cubin", "-std=c++17", "-w",
               "-o", os.path.join(tmp, "kernel.cubin"), cu]
        if include:
            cmd[1:1] = ["-I", include]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return None, f"nvcc timed out after {timeout_s:g} s"
        except OSError as exc:
            return None, f"nvcc could not be run: {exc}"
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = " ".join(output.strip().splitlines()[-3:])[:300]
        return None, f"nvcc -arch={arch} failed (exit {proc.returncode}): {tail}"
    found = _PTXAS_RE.findall(output)
    if not found:
        return None, "ptxas printed no 'Used N registers' line"
    return max(int(n) for n in found), ""


@dataclass(frozen=True)
class _Plan:
    """How to count one source: the compiler, the target, the detail of a count, the cache entry."""

    nvcc: str
    arch: str
    detail: str
    include: str | None
    entry: Path | None  # None: the compiler cannot be identified or there is no cache, nothing is cached
    key: str | None = None
    shape_entry: Path | None = None  # the count of the same code on any domain (constants taken out)
    shape_key: str | None = None
    compiler: str = ""


def _plan(source: str, arch: str, nvcc: str | None, cache: Path | None) -> _Plan | str:
    """The :class:`_Plan` of ``source`` for ``arch``, or why it cannot be compiled."""
    nvcc_path = nvcc or find_nvcc()
    if nvcc_path is None:
        if toolchain_disabled():
            return f"nvcc not found: hidden by {TOOLCHAIN_ENV}={os.environ.get(TOOLCHAIN_ENV)}"
        return "nvcc not found on PATH or in the nvidia-cuda-nvcc wheel (pip install 'warpspeed[cuda]')"
    target, substitute = compile_target(nvcc_path, arch)
    detail = f"ptxas ({os.path.basename(nvcc_path)} -arch={target} --resource-usage)"
    if substitute:
        detail += f" for {arch}: {substitute}"
    include = _pystencils_include()
    entry = key = shape_entry = shape_key = None
    compiler = ""
    if os.path.isfile(nvcc_path):  # a compiler that cannot be found on disk is not identified
        compiler = compiler_version(nvcc_path)
        root = writable_cache_dir(cache)
        if root is not None:
            key = cache_key(source, target, compiler, include or "")
            entry = root / REGISTER_CACHE / f"{key}.json"
            shape_key = cache_key(SHAPE_PREFIX + shape_digest(source), target, compiler, include or "")
            shape_entry = root / REGISTER_CACHE / f"{shape_key}.json"
    return _Plan(nvcc_path, target, detail, include, entry, key, shape_entry, shape_key, compiler)


def _cached_entry(plan: _Plan, by_shape: bool = False) -> tuple[int, str | None] | None:
    """The count stored for ``plan`` (``by_shape``: for the same code on any domain) and the key of
    the source it was counted from (None where the entry does not say), None when there is none (or
    it cannot be read)."""
    entry, key = (plan.shape_entry, plan.shape_key) if by_shape else (plan.entry, plan.key)
    if entry is None or key is None:
        return None
    payload = read_entry(entry, REGISTER_FORMAT, key)
    if not isinstance(payload, dict) or payload.get("arch") != plan.arch:
        return None
    value = payload.get("registers")
    valid = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_REGISTERS_PER_THREAD
    if not valid:
        return None
    counted_from = payload.get("source_key")
    return value, counted_from if isinstance(counted_from, str) else None


def _cached(plan: _Plan, by_shape: bool = False) -> int | None:
    """The count stored for ``plan`` (``by_shape``: for the same code on any domain), None when
    there is none (or it cannot be read)."""
    found = _cached_entry(plan, by_shape)
    return None if found is None else found[0]


def _store(plan: _Plan, registers: int) -> None:
    """Keep ``registers`` for ``plan``; a cache that cannot be written costs a compile next time.
    The shape entry also keeps which source was counted, so that a count read back through the
    shape for that very source says so."""
    if plan.entry is not None and plan.key is not None:
        write_entry(plan.entry, REGISTER_FORMAT, plan.key, {"registers": registers, "arch": plan.arch})
    if plan.shape_entry is not None and plan.shape_key is not None:
        write_entry(plan.shape_entry, REGISTER_FORMAT, plan.shape_key,
                    {"registers": registers, "arch": plan.arch, "source_key": plan.key})


def compile_register_counts(sources: Sequence[str], arch: str = DEFAULT_ARCH,
                            timeout_s: float = DEFAULT_COMPILE_TIMEOUT_S, nvcc: str | None = None,
                            cache: Path | None = None) -> list[tuple[int | None, str]]:
    """:func:`compile_register_count` of several sources: counts found in the disk cache are read,
    the others compiled concurrently (one nvcc process per source, at most one per CPU core, each
    waited for by a thread), and stored in the cache."""
    plans = [_plan(source, arch, nvcc, cache) for source in sources]
    results: list[tuple[int | None, str] | None] = [None] * len(sources)
    missing = []
    for i, plan in enumerate(plans):
        if isinstance(plan, str):
            results[i] = (None, plan)
            continue
        hit = _cached(plan)
        if hit is not None:
            results[i] = (hit, plan.detail)
            if plan.shape_entry is not None and _cached(plan, by_shape=True) is None:
                _store(plan, hit)  # a shape entry that does not verify is replaced, as any entry
        else:
            missing.append(i)

    def compile_one(i: int) -> tuple[int | None, str]:
        plan = plans[i]
        assert isinstance(plan, _Plan)
        registers, why = _compile(plan.nvcc, sources[i], plan.arch, plan.include, timeout_s)
        if registers is None:
            return None, why
        _store(plan, registers)
        return registers, plan.detail

    if len(missing) == 1:
        results[missing[0]] = compile_one(missing[0])
    elif missing:
        with ThreadPoolExecutor(max_workers=min(len(missing), os.cpu_count() or 1)) as pool:
            for i, result in zip(missing, pool.map(compile_one, missing)):
                results[i] = result
    return results  # type: ignore[return-value]


def compile_register_count(source: str, arch: str = DEFAULT_ARCH,
                           timeout_s: float = DEFAULT_COMPILE_TIMEOUT_S,
                           nvcc: str | None = None, cache: Path | None = None) -> tuple[int | None, str]:
    """Compile ``source`` (a complete .cu file) with nvcc and return ``(registers, detail)``;
    ``registers`` is None when nvcc is missing or the compile fails (``detail`` says why).

    Counts are cached on disk (module docstring): a source compiled before for the same target
    by the same compiler is not compiled again."""
    return compile_register_counts([source], arch, timeout_s, nvcc, cache)[0]


def registers_cached(kernel_function: Any, arch: str = DEFAULT_ARCH, source: str | None = None) -> bool:
    """Whether :func:`register_count` of ``kernel_function`` runs no compile: its count is known
    without one (:func:`_known`), or there is nothing to compile (HIP, an unknown architecture, no
    nvcc)."""
    if _is_hip(kernel_function):
        return True
    try:
        sm = cuda_arch(arch)
    except ValueError:
        return True
    standalone = standalone_cuda_source(kernel_function, source)
    plan = _plan(standalone, sm, None, None)
    return isinstance(plan, str) or _known(standalone, sm, plan) is not None


def _known(standalone: str, sm: str, plan: _Plan | str) -> RegisterCount | None:
    """The count ptxas gave for this code without compiling it now, or None. With nvcc: the disk
    cache's count of this source; for a source the table does not ship, the disk cache's count of
    the same code on another domain (only its constants differ: :mod:`pystencils_plugin.register_shape`),
    then the table's count of that shape where the installed compiler counted it. Without nvcc
    (``plan`` is the reason): the table's count of the source, else of its shape."""
    if isinstance(plan, _Plan):
        hit = _cached(plan)
        if hit is not None:
            if plan.shape_entry is not None and _cached(plan, by_shape=True) is None:
                _store(plan, hit)  # a shape entry that does not verify is replaced, as any entry
            return RegisterCount(hit, "ptxas", plan.detail)
        if shipped_count(standalone, sm) is not None:
            return None  # this very source is shipped: the installed ptxas counts it once, as before
        by_shape = _cached_entry(plan, by_shape=True)
        if by_shape is not None:
            registers, counted_from = by_shape
            if counted_from is not None and counted_from == plan.key:
                return RegisterCount(registers, "ptxas", plan.detail)  # this very source was counted
            return RegisterCount(registers, "ptxas", f"{plan.detail}, of the same code on another domain "
                                                     "(only the constants differ; cached)")
        table = shipped_table()
        if table is None or table.compiler != plan.compiler:
            return None
        shipped = shipped_shape_count(standalone, sm)
        return None if shipped is None else RegisterCount(shipped[0], "shipped", shipped[1])
    return _shipped(standalone, sm, "")


def _shipped(standalone: str, sm: str, reason: str) -> RegisterCount | None:
    """The shipped table's count of this source, else of its shape, or None."""
    suffix = f"; {reason}" if reason else ""
    shipped = shipped_count(standalone, sm)
    if shipped is not None:
        return RegisterCount(registers=shipped[0], source="shipped", detail=shipped[1] + suffix)
    shipped = shipped_shape_count(standalone, sm)
    if shipped is not None:
        return RegisterCount(registers=shipped[0], source="shipped", detail=shipped[1] + suffix)
    return None


def prefetch_register_counts(kernel_functions: Sequence[Any], arch: str = DEFAULT_ARCH,
                             timeout_s: float = DEFAULT_COMPILE_TIMEOUT_S) -> None:
    """Count the registers of several CUDA kernels at once and keep the counts in the disk cache,
    so that the :func:`register_count` calls that follow read them: the kernels missing from the
    cache are compiled concurrently. Used before a ranking extracts the kernels of its foldings one
    by one; HIP kernels, unknown architectures and a cache directory that cannot be written are
    left to :func:`register_count`."""
    try:
        sm = cuda_arch(arch)
    except ValueError:
        return
    cuda = [k for k in kernel_functions if not _is_hip(k)]
    if len(cuda) < 2 or find_nvcc() is None:
        return  # a single kernel gains nothing over register_count itself
    if writable_cache_dir() is None:
        return
    compile_register_counts([standalone_cuda_source(k) for k in cuda], sm, timeout_s)


def register_count(kernel_function: Any, arch: str = DEFAULT_ARCH, *, compile: bool = True,
                   timeout_s: float = DEFAULT_COMPILE_TIMEOUT_S, source: str | None = None,
                   per_thread_loads: int | None = None, element_bytes: int = 8) -> RegisterCount:
    """Registers per thread of a pystencils GPU kernel: ptxas when possible, else the count shipped
    for the same source, else estimated.

    Args:
        kernel_function: a pystencils ``GpuKernel``.
        arch: ``sm_XX`` or an architecture/GPU name (see :func:`cuda_arch`).
        compile: False skips nvcc and returns the estimate.
        timeout_s: compile timeout in seconds.
        source: the kernel's source if already at hand (``get_c_code()``).
        per_thread_loads, element_bytes: inputs of the estimate (see :func:`estimate_registers`).
    """
    reason = "compile not requested"
    sm = None
    if _is_hip(kernel_function):
        reason = "HIP kernel: ptxas counts NVIDIA registers only"
    else:
        try:
            sm = cuda_arch(arch)
        except ValueError as exc:
            reason = str(exc)
    standalone = standalone_cuda_source(kernel_function, source) if sm is not None else None
    if compile and sm is not None and standalone is not None:
        plan = _plan(standalone, sm, None, None)
        known = _known(standalone, sm, plan)
        if known is not None:
            return known
        registers, detail = compile_register_count(standalone, sm, timeout_s)
        if registers is not None:
            return RegisterCount(registers=registers, source="ptxas", detail=detail)
        reason = detail
        shipped = _shipped(standalone, sm, reason)
        if shipped is not None:
            return shipped
    if sm is not None and standalone is not None:
        table = shipped_table()
        learned = None if table is None else estimate_from_table(code_features(standalone, element_bytes), sm,
                                                                 table.samples)
        if learned is not None:
            return RegisterCount(registers=max(1, min(MAX_REGISTERS_PER_THREAD, learned[0])), source="estimate",
                                 detail=f"estimated from ptxas' counts of the shipped kernels: {learned[1]}; {reason}")
    estimate = estimate_registers(kernel_function, per_thread_loads, element_bytes)
    return RegisterCount(registers=estimate, source="estimate",
                         detail=f"estimated (live loaded values + pointers + base); {reason}")
