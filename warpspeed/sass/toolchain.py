"""Finding NVIDIA's compiler tools: on ``PATH``, else in the pip wheels of the ``cuda`` extra.

``pip install 'warpspeed[cuda]'`` installs nvcc, ptxas and cuobjdump as NVIDIA's Python wheels
(``nvidia-cuda-nvcc``, ``nvidia-cuda-cuobjdump``); they live inside the ``nvidia`` namespace
package: ``nvidia/cu13/bin`` for CUDA 13 wheels, ``nvidia/cuda_nvcc/bin`` and
``nvidia/cuda_cuobjdump/bin`` for CUDA 12 ones. ``WARPSPEED_CUDA_TOOLCHAIN=off`` hides them all
(:data:`TOOLCHAIN_ENV`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

#: Directories of the CUDA wheels' executables inside the ``nvidia`` namespace package.
WHEEL_BIN_DIRS = ("cu13/bin", "cuda_nvcc/bin", "cuda_cuobjdump/bin")


#: Environment variable that hides the CUDA tools: ``WARPSPEED_CUDA_TOOLCHAIN=off`` makes every
#: lookup answer "not installed", whatever ``PATH`` and the wheels hold, so that a machine with the
#: toolkit runs as one without it does (CI's no-toolchain leg; comparing the two answers).
TOOLCHAIN_ENV = "WARPSPEED_CUDA_TOOLCHAIN"
#: Values of :data:`TOOLCHAIN_ENV` that hide the tools (any other value, or none, finds them).
TOOLCHAIN_OFF = ("off", "0", "no", "none", "false")


def toolchain_disabled() -> bool:
    """Whether :data:`TOOLCHAIN_ENV` hides the CUDA tools."""
    return os.environ.get(TOOLCHAIN_ENV, "").strip().lower() in TOOLCHAIN_OFF


def find_tool(name: str) -> str | None:
    """The executable ``name`` (``"nvcc"``, ``"cuobjdump"``) on ``PATH``, else the one the CUDA
    wheels installed, else None (always None when ``WARPSPEED_CUDA_TOOLCHAIN=off``)."""
    if toolchain_disabled():
        return None
    on_path = shutil.which(name)
    if on_path is not None:
        return on_path
    try:
        import nvidia  # namespace package of NVIDIA's toolkit wheels
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for relative in WHEEL_BIN_DIRS:
            candidate = os.path.join(root, relative, name)
            if os.access(candidate, os.X_OK):
                return candidate
    return None


def find_nvcc() -> str | None:
    """nvcc on ``PATH``, else the one installed by ``pip install 'warpspeed[cuda]'``, else None."""
    return find_tool("nvcc")


#: Architecture names and GPU names -> nvcc ``-arch`` value (compute capability:
#: CUDA C++ Programming Guide, "Compute Capabilities" table).
ARCHITECTURES: dict[str, str] = {
    "volta": "sm_70", "v100": "sm_70",
    "turing": "sm_75", "t4": "sm_75",
    "ampere": "sm_80", "a100": "sm_80",
    "ga102": "sm_86", "a40": "sm_86", "rtx3090": "sm_86",
    "ada": "sm_89", "l40": "sm_89", "l40s": "sm_89", "rtx4090": "sm_89",
    "hopper": "sm_90", "h100": "sm_90", "h200": "sm_90", "gh200": "sm_90",
    "blackwell": "sm_100", "b200": "sm_100",
}
DEFAULT_ARCH = "sm_80"
_ARCH_RE = re.compile(r"^(sm|compute)_(\d+)[a-z]?$")


def cuda_arch(device: str) -> str:
    """nvcc ``-arch`` for an architecture or GPU name (``'ampere'``, ``'A100-SXM4-40GB'``)
    or an explicit ``'sm_80'``. Unknown names raise ValueError listing the known ones."""
    text = device.strip().lower()
    if _ARCH_RE.match(text):
        return "sm_" + _ARCH_RE.match(text).group(2)  # type: ignore[union-attr]
    if text in ARCHITECTURES:
        return ARCHITECTURES[text]
    compact = re.sub(r"[^a-z0-9]", "", text)
    for key in sorted(ARCHITECTURES, key=len, reverse=True):
        if compact.startswith(key) or key in compact.split():
            return ARCHITECTURES[key]
    raise ValueError(
        f"unknown GPU architecture {device!r}; use sm_XX or one of {', '.join(sorted(ARCHITECTURES))}"
    )


#: Seconds ``nvcc --list-gpu-arch`` may take.
LIST_ARCH_TIMEOUT_S = 30.0
_LISTED_RE = re.compile(r"compute_(\d+)")


@lru_cache(maxsize=8)
def supported_capabilities(nvcc: str) -> tuple[int, ...]:
    """Compute capabilities (75, 80, ...) that ``nvcc`` compiles for, from ``nvcc --list-gpu-arch``;
    empty when it cannot say (an older nvcc without the option)."""
    try:
        proc = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True,
                              timeout=LIST_ARCH_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if proc.returncode != 0:
        return ()
    return tuple(sorted({int(n) for n in _LISTED_RE.findall(proc.stdout)}))


def compile_target(nvcc: str, arch: str) -> tuple[str, str]:
    """``(target, note)``: the ``-arch`` to compile for ``arch`` (``"sm_70"``) with ``nvcc``.

    ``arch`` itself when nvcc supports it (or cannot list what it supports). Otherwise the lowest
    architecture it supports of the same major compute capability, with a note saying so: CUDA 13
    dropped sm_70 (Volta), and sm_75 (Turing) is the nearest architecture of the same generation,
    with the same register file and instruction set family. Unchanged when there is none."""
    match = _ARCH_RE.match(arch)
    listed = supported_capabilities(nvcc)
    if match is None or not listed:
        return arch, ""
    wanted = int(match.group(2))
    if wanted in listed:
        return arch, ""
    same_major = [cc for cc in listed if cc // 10 == wanted // 10 and cc > wanted]
    if not same_major:
        return arch, ""
    target = f"sm_{same_major[0]}"
    return target, f"this nvcc has no {arch}; compiled for {target}, the nearest of the same generation"
