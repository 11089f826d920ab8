"""Board power and SM clock sampled with nvidia-smi while a configuration runs back to back.

:class:`PowerSampler` starts ``nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm
--format=csv,noheader,nounits -lms 100 -i <gpu>`` (NVIDIA System Management Interface
documentation, ``--query-gpu`` and ``-lms``), runs the work, stops nvidia-smi and summarises the
samples taken while the work ran, after a settling time (the board's power reading averages over
its own window, and the clock ramps up). :func:`parse_power_samples` and :func:`summarize_power`
are pure and tested offline; the subprocess factory and the clock are injectable.
"""

from __future__ import annotations

import datetime as _dt
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from warpspeed.validation.plan import MeasurementError

#: Milliseconds between two nvidia-smi samples (``-lms``): 100 ms gives about 40 samples in a
#: 4 s soak. A choice; the board's own power averaging window is longer (see ``settle_s``).
DEFAULT_INTERVAL_MS = 100
#: Seconds of back-to-back launches per configuration (``--power-seconds``): the H200 readings
#: of 2026-11-26 are medians over 4.5 s; 5 s with 1 s settling keeps about 4 s of samples.
DEFAULT_SOAK_S = 5.0
#: Seconds at the start of a soak whose samples are dropped: nvidia-smi's ``power.draw`` is an
#: average over the last second on recent drivers (nvidia-smi documentation, ``power.draw`` and
#: ``power.draw.average``), so the first second still mixes in the idle board.
DEFAULT_SETTLE_S = 1.0
#: Seconds nvidia-smi is given to exit after SIGINT before it is terminated.
_STOP_WAIT_S = 5.0
#: nvidia-smi's timestamp format (``2026/11/26 06:57:01.123``, local time).
SMI_TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S.%f"

T = TypeVar("T")


def power_query(device_id: int = 0, interval_ms: int = DEFAULT_INTERVAL_MS, smi: str = "nvidia-smi") -> list[str]:
    """The nvidia-smi command line that prints one ``timestamp, watts, MHz`` line every ``interval_ms``."""
    if device_id < 0 or interval_ms < 1:
        raise MeasurementError(f"nvidia-smi needs a device index >= 0 and an interval >= 1 ms, "
                               f"got {device_id} and {interval_ms}")
    return [smi, "--query-gpu=timestamp,power.draw,clocks.sm", "--format=csv,noheader,nounits",
            "-lms", str(interval_ms), "-i", str(device_id)]


@dataclass(frozen=True)
class PowerSample:
    """One nvidia-smi line: time (seconds since the epoch), board power (W), SM clock (MHz)."""

    time_s: float
    watts: float
    sm_clock_mhz: float


@dataclass(frozen=True)
class PowerReading:
    """The medians of the samples taken while the work ran (after settling): board watts, SM MHz."""

    watts: float
    sm_clock_mhz: float
    samples: int
    window_s: float  # seconds between the first and the last sample used


def parse_power_samples(text: str) -> list[PowerSample]:
    """The samples of :func:`power_query` output. Lines that are not three comma-separated values
    with a timestamp and two numbers (``[N/A]``, ``[Not Supported]``, messages) are skipped."""
    samples = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            stamp = _dt.datetime.strptime(parts[0], SMI_TIMESTAMP_FORMAT).timestamp()
            samples.append(PowerSample(stamp, float(parts[1]), float(parts[2])))
        except ValueError:
            continue
    return samples


def summarize_power(samples: Sequence[PowerSample], start_s: float, end_s: float,
                    settle_s: float = DEFAULT_SETTLE_S) -> PowerReading:
    """Medians of the samples with ``start_s + settle_s <= time <= end_s`` (seconds since the epoch).

    Raises :class:`MeasurementError` when no sample falls in that window.
    """
    used = [s for s in samples if start_s + settle_s <= s.time_s <= end_s]
    if not used:
        raise MeasurementError(f"nvidia-smi gave no power sample between {settle_s:g} s after the start of the "
                               f"{end_s - start_s:.1f} s run and its end ({len(samples)} samples in all); "
                               "run longer (--power-seconds) or check that nvidia-smi reports power.draw")
    return PowerReading(watts=float(statistics.median(s.watts for s in used)),
                        sm_clock_mhz=float(statistics.median(s.sm_clock_mhz for s in used)),
                        samples=len(used), window_s=used[-1].time_s - used[0].time_s)


class PowerSampler:
    """Samples board power and SM clock with nvidia-smi while some work runs.

    ``popen`` starts the sampler (:class:`subprocess.Popen`; a test passes a fake executable's
    command with ``smi``), ``clock`` is the wall clock in seconds since the epoch (the clock of
    nvidia-smi's timestamps).
    """

    def __init__(self, device_id: int = 0, interval_ms: int = DEFAULT_INTERVAL_MS, settle_s: float = DEFAULT_SETTLE_S,
                 smi: str = "nvidia-smi", popen: Callable[..., Any] = subprocess.Popen,
                 clock: Callable[[], float] = time.time) -> None:
        self._command = power_query(device_id, interval_ms, smi)
        self._settle = settle_s
        self._popen = popen
        self._clock = clock

    @property
    def command(self) -> list[str]:
        return list(self._command)

    def sample_during(self, work: Callable[[], T]) -> tuple[T, PowerReading]:
        """Run ``work()`` while nvidia-smi samples; its result and the reading of its run."""
        try:
            proc = self._popen(self._command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            raise MeasurementError(f"cannot start nvidia-smi for power sampling ({exc})") from None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        try:
            start = self._clock()
            result = work()
            end = self._clock()
        finally:
            _stop(proc)
            reader.join(timeout=_STOP_WAIT_S)
        try:
            return result, summarize_power(parse_power_samples("".join(lines)), start, end, self._settle)
        except MeasurementError as exc:
            said = (proc.stderr.read() if proc.stderr is not None else "").strip()
            raise MeasurementError(f"{exc}; nvidia-smi said: {said[-300:]}" if said else str(exc)) from None


def _stop(proc: Any) -> None:
    """Stop nvidia-smi: SIGINT (its loop ends as on Ctrl-C, writing what it buffered), then terminate."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=_STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
