"""The GPU side of the calibration benchmarks: cupy RawModules of :mod:`.sources`, timed with CUDA events.

cupy is imported when a :class:`CupyRunner` is made (:func:`require_cupy` says in one line what is
missing), so the rest of warpspeed, the fitting half included, runs without it. Board power and
SM clock come from ``nvidia-smi`` (``--query-gpu``, the GPU picked by its PCI bus id), sampled
while a roofline run is held; without ``nvidia-smi`` the roofline benchmark is skipped.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from typing import Any

import numpy as np

from warpspeed.calibration.microbench import sources
from warpspeed.calibration.microbench.suite import GpuInfo, RooflineRun
from warpspeed.errors import WarpspeedError
from warpspeed.units import GIGA, KILO, MEGA, MIB

#: Timed repetitions of a measurement (the best is kept: the others are disturbed) and untimed warm-ups.
REPEATS = 3
WARMUP = 1
#: Elements of each stream array (2^28 doubles = 2 GiB), at most a quarter of the free memory for all three.
STREAM_ELEMENTS = 2**28
#: Windows a stream array is cut into (consecutive launches stream different windows, each far
#: larger than any L2), elements per resident thread of a window, and the smallest window.
STREAM_WINDOWS = 5
STREAM_ELEMENTS_PER_THREAD = 1024
STREAM_MIN_WINDOW = 2**22
#: Shared memory kept free per block when two blocks share an SM (the runtime reserves 1 KiB per
#: block on compute capability 8.0 and later: CUDA C++ Programming Guide, "Shared Memory").
STREAM_PAD_RESERVE = 2048
#: Launches of one window between the timing events (each a separate launch, as in a stencil code).
STREAM_BATCH = 1
#: Bytes the L2 benchmark reads per launch: at least this, and at least 4 x the data set.
L2_BYTES_PER_LAUNCH = 2**30
#: Doubles each block of the L2 benchmark reads (512 KiB).
L2_CHUNK = 2**16
#: Bytes each block of the L1 benchmark reads per launch.
L1_BYTES_PER_BLOCK = 2**25
#: Pointer-chase steps timed, and the largest data set (in pointers) given a warm-up pass: 2^20 x 64 B
#: = 64 MiB, beyond every L2 window of the fit (C/2 of a 128 MiB L2).
CHASE_STEPS = 2**14
CHASE_WARM_MAX = 2**20
#: Bytes between two pointers of the chase (one 8 B pointer per 64 B).
CHASE_SPACING = 64
#: SM cycles the clock kernel spins (about 10 ms at 2 GHz).
SPIN_CYCLES = 2 * 10**7
#: Launches per timed batch (one CUDA graph) of the small-kernel benchmark, and the elements of its
#: buffers (the largest element count of the sweep).
LAUNCH_BATCH = 200
LAUNCH_ELEMENTS_MAX = 2**19
#: Roofline launches queued between two checks of the clock and of nvidia-smi.
HELD_QUEUE = 8
#: Iterations of the strides kernel's loop.
STRIDES_ITERATIONS = 256
#: Elements per roofline array (2^26 floats = 256 MiB each).
ROOFLINE_ELEMENTS = 2**26
#: nvidia-smi samples per held roofline run, and the time one call may take.
SMI_SAMPLES = 3
SMI_TIMEOUT_S = 10.0
#: Message when cupy or a GPU is missing.
NEEDS = "warpspeed calibrate needs an NVIDIA GPU and cupy (pip install cupy-cuda12x or cupy-cuda13x)"


def require_cupy() -> Any:
    """The cupy module with a usable GPU; :class:`WarpspeedError` (one line) when there is none."""
    try:
        import cupy  # noqa: PLC0415 - imported on use: the package must run without it
    except Exception as exc:  # noqa: BLE001 - any import failure (missing, broken CUDA libraries)
        raise WarpspeedError(f"{NEEDS}; cupy cannot be imported ({type(exc).__name__})") from None
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise WarpspeedError(f"{NEEDS}; no GPU is visible")
    except WarpspeedError:
        raise
    except Exception as exc:  # noqa: BLE001 - no driver, no device
        raise WarpspeedError(f"{NEEDS}; no GPU is usable ({' '.join(str(exc).split())[:120]})") from None
    return cupy


class CupyRunner:
    """:class:`~warpspeed.calibration.microbench.suite.Runner` on the current cupy device."""

    def __init__(self, device: int = 0, graphs: bool = True) -> None:
        self.cp = require_cupy()
        self.device = self.cp.cuda.Device(device)
        self.device.use()
        self._modules: dict[str, Any] = {}
        self._buffers: dict[str, Any] = {}
        self._graphs = graphs
        self._window = 0
        self._info: GpuInfo | None = None

    # --- helpers ---------------------------------------------------------------------------------

    def _kernel(self, module: str, name: str):
        if module not in self._modules:
            self._modules[module] = self.cp.RawModule(code=sources.SOURCES[module], options=("-std=c++14",))
        return self._modules[module].get_function(name)

    def _time(self, launch, repeats: int = REPEATS, warmup: int = WARMUP) -> float:
        """Least seconds of ``launch()`` over ``repeats`` timed calls (CUDA events)."""
        from warpspeed.calibration.microbench.event_timing import event_seconds

        return min(event_seconds(self.cp, launch, warmup, repeats))

    def _free_bytes(self) -> int:
        free, _ = self.cp.cuda.runtime.memGetInfo()
        return int(free)

    def _release(self) -> None:
        self._buffers.clear()
        self.cp.get_default_memory_pool().free_all_blocks()

    def _smi(self, fields: str) -> list[str] | None:
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return None
        try:
            done = subprocess.run([exe, f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i",
                                   self.device.pci_bus_id], capture_output=True, text=True, timeout=SMI_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0 or not done.stdout.strip():
            return None
        return [v.strip() for v in done.stdout.strip().splitlines()[0].split(",")]

    # --- the Runner protocol -----------------------------------------------------------------------

    def device_info(self) -> GpuInfo:
        if self._info is not None:
            return self._info
        rt = self.cp.cuda.runtime
        dev = self.device.id
        props = rt.getDeviceProperties(dev)

        def attr(name: str, default: float = 0) -> float:
            code = getattr(rt, f"cudaDevAttr{name}", None)
            try:
                return rt.deviceGetAttribute(code, dev) if code is not None else default
            except Exception:  # noqa: BLE001 - an attribute this runtime does not know
                return default

        name = props.get("name", b"")
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        uuid = props.get("uuid", b"")
        uuid = uuid.hex() if isinstance(uuid, (bytes, bytearray)) else str(uuid)
        limit = self._smi("enforced.power.limit")
        try:
            power = float(limit[0]) if limit else math.nan
        except ValueError:
            power = math.nan
        _, total = rt.memGetInfo()
        self._info = GpuInfo(
            name=" ".join(name.split()) or "unknown NVIDIA GPU", uuid=uuid or self.device.pci_bus_id,
            compute_capability=f"{props.get('major', 0)}.{props.get('minor', 0)}",
            sms=int(attr("MultiProcessorCount")), clock_max_mhz=attr("ClockRate") / KILO,
            l2_bytes=int(attr("L2CacheSize")), shared_bytes_per_sm=int(attr("MaxSharedMemoryPerMultiprocessor")),
            shared_bytes_per_block=int(attr("MaxSharedMemoryPerBlockOptin")),
            registers_per_sm=int(attr("MaxRegistersPerMultiprocessor")),
            max_threads_per_sm=int(attr("MaxThreadsPerMultiProcessor")),
            max_threads_per_block=int(attr("MaxThreadsPerBlock")),
            max_blocks_per_sm=int(attr("MaxBlocksPerMultiprocessor")), warp_size=int(attr("WarpSize", 32)),
            memory_bytes=int(total), power_limit_w=power)
        if self._info.sms < 1 or self._info.max_threads_per_block < 32:
            raise WarpspeedError(f"the CUDA runtime reports no usable SM count for {self._info.name}")
        return self._info

    def stream(self, kernel: str, threads_per_block: int, blocks: int) -> float:
        cp = self.cp
        if "stream" not in self._buffers:
            self._release()
            n = min(STREAM_ELEMENTS, self._free_bytes() // (4 * 3 * 8))
            self._buffers["stream"] = [cp.ones(n, dtype=cp.float64) for _ in range(3)]
            self._window = 0
        a, b, c = self._buffers["stream"]
        # each launch streams its own window of the arrays, never the one before: no L2 reuse
        resident = blocks * threads_per_block
        width = int(min(a.size // STREAM_WINDOWS, max(resident * STREAM_ELEMENTS_PER_THREAD, STREAM_MIN_WINDOW)))
        s = np.float64(0.5)
        f = self._kernel("stream", f"stream_{kernel}")
        pad = self._stream_pad(f)
        if not pad:
            raise WarpspeedError("the stream kernels cannot ask for the shared memory that keeps two blocks per SM")
        grid = ((width + threads_per_block - 1) // threads_per_block,)

        def launch() -> None:
            self._window = (self._window + 1) % STREAM_WINDOWS
            lo, hi = self._window * width, (self._window + 1) * width
            w = np.int64(width)
            args = {"init": (a[lo:hi], w, s), "read": (a[lo:hi], c, w, s), "scale": (a[lo:hi], b[lo:hi], w, s),
                    "triad": (a[lo:hi], b[lo:hi], c[lo:hi], w, s), "stencil1d3pt": (a[lo:hi], b[lo:hi], w, s)}[kernel]
            for _ in range(STREAM_BATCH):
                f(grid, (threads_per_block,), args, shared_mem=pad)

        seconds = self._time(launch) / STREAM_BATCH
        from warpspeed.measured.public_data import STREAM_BYTES_PER_THREAD

        return width * STREAM_BYTES_PER_THREAD[kernel] / seconds / GIGA

    def _stream_pad(self, f) -> int:
        """Dynamic shared memory per block that lets two blocks, not three, share an SM (0: the
        kernel cannot ask for that much)."""
        info = self.device_info()
        pad = info.shared_bytes_per_sm // 2 - STREAM_PAD_RESERVE
        if pad <= info.shared_bytes_per_sm // 3 or pad > info.shared_bytes_per_block:
            return 0
        try:
            f.max_dynamic_shared_size_bytes = pad
        except Exception:  # noqa: BLE001 - no opt-in on this GPU or cupy
            return 0
        return pad

    def l2_read(self, data_set_bytes: int) -> float:
        cp = self.cp
        if "l2" not in self._buffers:
            self._release()
            largest = max(self.device_info().l2_bytes, MIB) * 8 // 8 + L2_CHUNK  # doubles of 8 x the L2, and a chunk
            self._buffers["l2"] = cp.ones(min(largest, self._free_bytes() // 16), dtype=cp.float64)
            self._buffers["l2_out"] = cp.zeros(1, dtype=cp.float64)
        a = self._buffers["l2"]
        granule = 4 * sources.L2_BLOCK_THREADS
        n = max(granule, min(data_set_bytes // 8, a.size) // granule * granule)
        chunk = min(L2_CHUNK, n)
        n = n // chunk * chunk  # whole chunks: the data set is n doubles
        total = max(L2_BYTES_PER_LAUNCH, 4 * n * 8)
        blocks = max(1, total // (chunk * 8))
        f = self._kernel("l2_read", "l2_read")
        seconds = self._time(lambda: f((int(blocks),), (sources.L2_BLOCK_THREADS,),
                                       (a, self._buffers["l2_out"], np.int64(n), np.int64(chunk))))
        return blocks * chunk * 8 / seconds / GIGA

    def l1_read(self, buffer_bytes: int) -> float:
        cp = self.cp
        n = max(sources.L1_BLOCK_THREADS, buffer_bytes // 4)
        if "l1" not in self._buffers or self._buffers["l1"].size < n:
            self._buffers["l1"] = cp.ones(max(n, 2**20), dtype=cp.float32)
            self._buffers["l1_out"] = cp.zeros(1, dtype=cp.float32)
        repeats = max(1, L1_BYTES_PER_BLOCK // (n * 4))
        sms = self.device_info().sms
        f = self._kernel("l1_read", "l1_read")
        seconds = self._time(lambda: f((sms,), (sources.L1_BLOCK_THREADS,),
                                       (self._buffers["l1"], self._buffers["l1_out"], np.int32(n), np.int32(repeats))))
        return sms * repeats * n * 4 / seconds / GIGA

    def pointer_chase(self, data_set_bytes: int) -> float:
        cp = self.cp
        slots = max(2, data_set_bytes // CHASE_SPACING)
        stride = CHASE_SPACING // 8
        order = np.random.default_rng(slots).permutation(slots)
        nxt = np.zeros(slots * stride, dtype=np.uint64)
        nxt[order * stride] = np.roll(order, -1) * stride  # one cycle through every slot (element indices)
        self._buffers.pop("chase", None)
        chain = cp.asarray(nxt)
        chain *= 8  # element index -> byte offset -> address
        chain += chain.data.ptr
        self._buffers["chase"] = chain
        state = cp.asarray(np.array([chain.data.ptr, 0], dtype=np.uint64))
        # one pass over a data set a cache can hold brings it in; larger ones are chased cold
        warm = slots if slots <= CHASE_WARM_MAX else 0
        f = self._kernel("chase", "chase")
        f((1,), (1,), (state, np.int64(warm), np.int64(CHASE_STEPS)))
        best = math.inf
        for _ in range(REPEATS - 1):
            f((1,), (1,), (state, np.int64(0), np.int64(CHASE_STEPS)))
            best = min(best, float(state[1].get()) / CHASE_STEPS)
        del self._buffers["chase"]
        return best

    def sm_clock_mhz(self) -> float:
        out = self.cp.zeros(1, dtype=self.cp.uint64)
        f = self._kernel("chase", "spin")
        seconds = self._time(lambda: f((1,), (1,), (out, np.int64(SPIN_CYCLES))))
        return float(out[0].get()) / seconds / MEGA

    def launch_method(self) -> str:
        return "cuda-graph" if self._graphs else "stream"

    def launches(self, elements: int, block_threads: int) -> float:
        cp = self.cp
        if "scale" not in self._buffers or self._buffers["scale"][0].size < elements:
            self._buffers["scale"] = [cp.ones(max(elements, LAUNCH_ELEMENTS_MAX), dtype=cp.float64) for _ in range(2)]
        a, b = self._buffers["scale"]
        f = self._kernel("scale", "scale")
        grid = (elements // block_threads + 1,)
        args = (a, b, np.int64(elements))

        def batch():
            for _ in range(LAUNCH_BATCH):
                f(grid, (block_threads,), args)

        if self._graphs:
            try:
                stream = cp.cuda.Stream(non_blocking=True)
                with stream:
                    stream.begin_capture()
                    batch()
                    graph = stream.end_capture()
                seconds = self._time_on(stream, lambda: graph.launch(stream))
                return seconds / LAUNCH_BATCH
            except Exception:  # noqa: BLE001 - no graph capture in this cupy or driver: plain launches
                self._graphs = False
        return self._time(batch) / LAUNCH_BATCH

    def _time_on(self, stream, launch) -> float:
        cp = self.cp
        launch()
        best = math.inf
        for _ in range(REPEATS):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            launch()
            stop.record(stream)
            stop.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(start, stop) * 1e-3)
        return best

    def _held_samples(self, launch, hold_s: float) -> list[list[float]]:
        """Launch ``launch()`` back to back for ``hold_s`` seconds while nvidia-smi samples board power,
        SM clock and temperature in the background (from a third of the hold on): the samples."""
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return []
        command = [exe, "--query-gpu=power.draw,clocks.sm,temperature.gpu", "--format=csv,noheader,nounits",
                   "-i", self.device.pci_bus_id]
        samples: list[list[float]] = []
        running = None
        t0 = time.monotonic()
        while time.monotonic() - t0 < hold_s or running is not None:
            for _ in range(HELD_QUEUE):
                launch()
            self.cp.cuda.Stream.null.synchronize()  # a short queue: the samples see this run
            elapsed = time.monotonic() - t0
            if running is None and elapsed > hold_s / 3 and elapsed < hold_s and len(samples) < SMI_SAMPLES:
                running = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if running is not None and (running.poll() is not None or elapsed > hold_s + SMI_TIMEOUT_S):
                if running.poll() is None:
                    running.kill()
                out, _ = running.communicate()
                running = None
                try:
                    samples.append([float(v) for v in out.strip().splitlines()[0].split(",")])
                except (ValueError, IndexError):
                    pass
        return samples

    def strides(self, precision: str, kind: str, arg: int, pitch: int) -> float:
        cp = self.cp
        dtype = cp.float32 if precision == "float" else cp.float64
        if kind == "stride":
            block, extent = (sources.STRIDES_BLOCK_THREADS, 1, 1), 64 * arg
        else:
            block, extent = (arg, sources.STRIDES_BLOCK_THREADS // arg, 1), 64 + 33 * pitch
        size = extent + sources.STRIDES_OFFSET * sources.STRIDES_LOADS + 64
        key = f"strides_{precision}"
        if key not in self._buffers or self._buffers[key].size < size:
            self._buffers[key] = cp.ones(max(size, 2**18), dtype=dtype)
            self._buffers[key + "_out"] = cp.zeros(1, dtype=dtype)
        cycles = cp.zeros(1, dtype=cp.int64)
        f = self._kernel("strides", f"strides_{precision}")
        args = (self._buffers[key], self._buffers[key + "_out"], cycles, np.int32(0 if kind == "stride" else 1),
                np.int32(arg), np.int32(pitch), np.int32(STRIDES_ITERATIONS), np.int32(0))
        best = math.inf
        for i in range(REPEATS + WARMUP):
            f((1,), block, args)
            if i >= WARMUP:
                best = min(best, float(cycles[0].get()))
        loads = STRIDES_ITERATIONS * sources.STRIDES_LOADS * sources.STRIDES_BLOCK_THREADS / 32
        return best / loads

    def roofline(self, its: int, hold_s: float) -> RooflineRun | None:
        if shutil.which("nvidia-smi") is None:
            return None
        cp = self.cp
        if "roofline" not in self._buffers:
            self._release()
            n = min(ROOFLINE_ELEMENTS, self._free_bytes() // 16)
            self._buffers["roofline"] = [cp.ones(n, dtype=cp.float32), cp.ones(n, dtype=cp.float32),
                                         cp.zeros(1, dtype=cp.float32)]
        a, b, out = self._buffers["roofline"]
        info = self.device_info()
        grid = (info.sms * max(1, info.max_threads_per_sm // sources.ROOFLINE_BLOCK_THREADS),)
        f = self._kernel("roofline", "roofline")
        args = (a, b, out, np.int64(a.size), np.int32(its))
        seconds = self._time(lambda: f(grid, (sources.ROOFLINE_BLOCK_THREADS,), args), repeats=1)
        samples = self._held_samples(lambda: f(grid, (sources.ROOFLINE_BLOCK_THREADS,), args), hold_s)
        if not samples:
            return None
        watts, clock, temp = (float(np.median([s[i] for s in samples])) for i in range(3))
        pairs = a.size
        return RooflineRun(gb_s=pairs * 8 / seconds / GIGA, gflop_s=pairs * (2 * its + 2) / seconds / GIGA,
                           clock_mhz=clock, watts=watts, temp_c=temp)

