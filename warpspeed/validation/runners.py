"""Running planned launches on a GPU: the runner protocol, the cupy runner, the GPU's identity.

Only :class:`CupyRunner` touches a GPU; cupy is imported lazily, and without cupy or a visible
GPU it raises :class:`~warpspeed.validation.plan.MeasurementError`.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import subprocess
import time
from typing import Any, Callable, Iterator, Protocol, Sequence

from warpspeed.calibration.microbench.event_timing import event_seconds
from warpspeed.errors import WarpspeedError
from warpspeed.units import KILO
from warpspeed.validation.plan import FieldAllocation, LaunchPlan, MeasurementError
from warpspeed.validation.schema import GpuInfo, Soak, Timing

#: Value given to every scalar (non-field) kernel parameter such as lbmpy's ``omega``: scalars
#: do not change memory accesses, and 1.0 keeps every number finite.
DEFAULT_SCALAR_VALUE = 1.0

#: The nvidia-smi query :func:`parse_nvidia_smi` reads.
NVIDIA_SMI_QUERY = ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem",
                    "--format=csv,noheader,nounits"]

#: Seconds of launches enqueued at once during a soak; the host keeps at most two such batches
#: in flight, so the GPU never waits for the host and the queue stays short.
SOAK_BATCH_S = 0.05


class GpuRunner(Protocol):
    """Something that times planned launches on a GPU."""

    def info(self) -> GpuInfo: ...

    def time(self, plan: LaunchPlan, gpu_kernel: Any, warmup: int, repeats: int) -> Timing: ...

    def soak(self, plan: LaunchPlan, gpu_kernel: Any, seconds: float) -> Soak: ...


class Profiler(Protocol):
    """Something that returns the Nsight Compute counters of one launch of each plan, per
    function name, or the error of that plan."""

    def profile_many(self, plans: Sequence[LaunchPlan]) -> "dict[str, dict[str, float] | MeasurementError]": ...

    def version(self) -> str: ...


def back_to_back(cp: Any, launch: Callable[[], None], seconds: float) -> tuple[int, float]:
    """Launch ``launch`` back to back for about ``seconds`` of host time, enqueueing
    :data:`SOAK_BATCH_S` worth of launches at a time with at most two such batches in flight:
    the launches and their GPU time between two CUDA events (s)."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    launch()
    start.record()
    launch()
    end.record()
    end.synchronize()
    batch = max(1, math.ceil(SOAK_BATCH_S * KILO / max(cp.cuda.get_elapsed_time(start, end), 1e-3)))
    launches, previous = 0, None
    begin = cp.cuda.Event()
    begin.record()
    host_start = time.perf_counter()
    while time.perf_counter() - host_start < seconds:
        for _ in range(batch):
            launch()
        launches += batch
        mark = cp.cuda.Event()
        mark.record()
        if previous is not None:
            previous.synchronize()
        previous = mark
    finish = cp.cuda.Event()
    finish.record()
    finish.synchronize()
    return launches, cp.cuda.get_elapsed_time(begin, finish) / KILO


def parse_nvidia_smi(text: str) -> dict[str, str]:
    """Parse the output of :data:`NVIDIA_SMI_QUERY` (first GPU line)."""
    keys = ("name", "driver", "sm_clock_mhz", "sm_clock_max_mhz", "memory_clock_mhz")
    for line in text.splitlines():
        if line.strip():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != len(keys):
                raise MeasurementError(f"nvidia-smi line {line!r} has {len(parts)} values; expected {len(keys)}")
            return dict(zip(keys, parts))
    raise MeasurementError("nvidia-smi printed no GPU line")


def _import_cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415 - lazily: only GPU machines have it
    except ImportError as exc:
        raise MeasurementError(f"measuring needs cupy and an NVIDIA GPU: cupy cannot be imported ({exc}); "
                               "install cupy-cuda12x (or the package for your CUDA version) on a GPU machine") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # cupy raises CUDARuntimeError when no driver/GPU is present
        raise MeasurementError(f"measuring needs an NVIDIA GPU: cupy found none ({exc})") from None
    if count < 1:
        raise MeasurementError("measuring needs an NVIDIA GPU: cupy reports 0 devices")
    return cupy


def _allocate(cp: Any, fields: Sequence[FieldAllocation]) -> dict[str, Any]:
    arrays: dict[str, Any] = {}
    for f in fields:
        buf = cp.ones(f.buffer_elements, dtype=f.dtype)
        item = buf.dtype.itemsize
        arrays[f.name] = cp.lib.stride_tricks.as_strided(buf, shape=f.shape, strides=tuple(s * item for s in f.strides))
    return arrays


@contextlib.contextmanager
def _gpu_errors(plan: LaunchPlan, doing: str) -> Iterator[None]:
    """Turn cupy's and pystencils' exceptions (a compile error, a launch that needs more registers
    than the block allows) into a :class:`MeasurementError` naming the configuration."""
    try:
        yield
    except WarpspeedError:
        raise
    except Exception as exc:  # cupy's CompileException, CUDARuntimeError, CUDADriverError, ...
        raise MeasurementError(f"{doing} {plan.function_name} failed: {type(exc).__name__}: {exc}") from None


class CupyRunner:
    """Times launches with cupy and CUDA events on GPU ``device_id``.

    The field arrays of the last plan are kept and reused by the next plan with the same fields
    (every configuration of a kernel and domain has the same ones), so a campaign allocates and
    fills them once. Raises :class:`MeasurementError` on construction when cupy or a GPU is missing.
    """

    def __init__(self, device_id: int = 0, run: Callable[..., Any] = subprocess.run) -> None:
        self._cp = _import_cupy()
        self._device_id = device_id
        self._run = run
        self._fields: tuple[FieldAllocation, ...] | None = None
        self._arrays: dict[str, Any] = {}

    @property
    def device_id(self) -> int:
        """The CUDA device index launches run on."""
        return self._device_id

    def _smi(self) -> dict[str, str]:
        if not shutil.which(NVIDIA_SMI_QUERY[0]):
            return {}
        done = self._run(NVIDIA_SMI_QUERY + ["-i", str(self._device_id)], capture_output=True, text=True)
        return parse_nvidia_smi(done.stdout) if done.returncode == 0 else {}

    def info(self) -> GpuInfo:
        cp = self._cp
        props = cp.cuda.runtime.getDeviceProperties(self._device_id)
        name = props.get("name", b"")
        name = name.decode() if isinstance(name, bytes) else str(name)
        api = cp.cuda.runtime.driverGetVersion()
        smi = self._smi()

        def mhz(key: str, prop: str) -> float:
            try:
                return float(smi[key])
            except (KeyError, ValueError):
                return float(props.get(prop, 0)) / KILO

        return GpuInfo(name=smi.get("name", name), driver=smi.get("driver", ""),
                       cuda_driver_api=f"{api // 1000}.{api % 1000 // 10}",
                       compute_capability=f"{props.get('major', '')}.{props.get('minor', '')}",
                       sm_clock_mhz=mhz("sm_clock_mhz", "clockRate"),
                       sm_clock_max_mhz=mhz("sm_clock_max_mhz", "clockRate"),
                       memory_clock_mhz=mhz("memory_clock_mhz", "memoryClockRate"),
                       sms=int(props.get("multiProcessorCount", 0)))

    def _prepare(self, plan: LaunchPlan, gpu_kernel: Any) -> Callable[[], None]:
        cp = self._cp
        with _gpu_errors(plan, "compiling"), cp.cuda.Device(self._device_id):
            wrapper = gpu_kernel.compile()
            wrapper.launch_config.trim_block_size(plan.block)
            block, grid = wrapper.launch_config.evaluate()
            if (tuple(block), tuple(grid)) != (plan.block, plan.grid):
                raise MeasurementError(f"pystencils would launch block {tuple(block)}, grid {tuple(grid)}; "
                                       f"planned block {plan.block}, grid {plan.grid}")
            if plan.fields != self._fields:
                self._fields, self._arrays = None, {}  # release the previous plan's arrays first
                self._arrays = _allocate(cp, plan.fields)
                self._fields = plan.fields
            args = {**self._arrays, **{name: DEFAULT_SCALAR_VALUE for name in plan.scalars}}
        return lambda: wrapper(**args)

    def launch(self, plan: LaunchPlan, gpu_kernel: Any, count: int = 1) -> None:
        """Run ``count`` launches (the ncu child)."""
        call = self._prepare(plan, gpu_kernel)
        device = self._cp.cuda.Device(self._device_id)
        with _gpu_errors(plan, "running"), device:
            for _ in range(count):
                call()
            device.synchronize()

    def time(self, plan: LaunchPlan, gpu_kernel: Any, warmup: int, repeats: int) -> Timing:
        cp = self._cp
        call = self._prepare(plan, gpu_kernel)
        with _gpu_errors(plan, "timing"), cp.cuda.Device(self._device_id):
            samples = event_seconds(cp, call, warmup, repeats)
        return Timing(tuple(samples))

    def soak(self, plan: LaunchPlan, gpu_kernel: Any, seconds: float) -> Soak:
        """Launch ``plan`` back to back for about ``seconds`` (for power sampling); the launches
        and their GPU time between two CUDA events."""
        if not seconds > 0:
            raise MeasurementError(f"a soak needs a positive duration, got {seconds} s")
        cp = self._cp
        call = self._prepare(plan, gpu_kernel)
        with _gpu_errors(plan, "running back to back"), cp.cuda.Device(self._device_id):
            launches, elapsed = back_to_back(cp, call, seconds)
        return Soak(launches, elapsed)
