"""Helpers shared by the command modules (:mod:`warpspeed.cli.main`, :mod:`warpspeed.cli.validate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

import click

from warpspeed.hardware.device import Device, load_device
from warpspeed.kernel.builtin import BUILTIN_KERNELS
from warpspeed.kernel.catalog import ResolvedKernel, require_kernel, resolve

if TYPE_CHECKING:
    from warpspeed.kernel.description import Kernel

DEFAULT_DEVICE = "A100-SXM4-40GB"
DEFAULT_KERNEL = "star3d-r4"


def parse_triple(text: str, what: str) -> tuple[int, ...]:
    """``"32,8,4"`` or ``"32x8x4"`` -> (32, 8, 4); 1 to 3 integers (the model checks their values)."""
    try:
        values = tuple(int(v) for v in text.replace("x", ",").split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"{what} must be integers like 32,8,4 (got {text!r})") from None
    if not 1 <= len(values) <= 3:
        raise click.BadParameter(f"{what} takes 1 to 3 integers like 32,8,4 (got {text!r})")
    return values


def kernel_options(f):
    f = click.option("--kernel", "kernel_name", default=DEFAULT_KERNEL, show_default=True,
                     help="Kernel: " + ", ".join(BUILTIN_KERNELS) + "; with warpspeed[pystencils] also "
                          "d3q19-srt, d3q27-srt, allen-cahn, and the star* kernels are then the code "
                          "pystencils generates (lbmpy for the LBM kernels).")(f)
    f = click.option("--domain", default=None, help="Iteration domain nx,ny[,nz] in cells (default: the kernel's).")(f)
    f = click.option("--device", "device_name", default=DEFAULT_DEVICE, show_default=True,
                     help="Built-in device name or path to a device TOML file.")(f)
    return f


def dtype_option(f):
    """``--dtype float|double``: the precision of the kernel (default: double)."""
    return click.option("--dtype", type=click.Choice(["double", "float"]), default=None,
                        help="Floating-point precision of the kernel's fields (default: double).")(f)


def setup_kernel_and_device(kernel_name: str, domain: str | None, device_name: str,
                            fold: tuple[int, ...] = (1, 1, 1), dtype: str | None = None
                            ) -> tuple[ResolvedKernel, Device]:
    """The device, and the kernel the catalog resolves ``kernel_name`` to for ``fold`` on it."""
    dom = parse_triple(domain, "--domain") if domain else None
    device = load_device(device_name)
    return resolve(kernel_name, dom, fold=fold, device=device, dtype=dtype), device


def registers_text(registers: int, source: str) -> str:
    """One wording for register counts in every command: ``registers: 68 per thread (ptxas)``;
    the source is ``ptxas``, ``estimate``, ``given`` or ``assumed``."""
    return f"registers: {registers} per thread ({source})"



def model_option(f):
    """``--model roofline|interval|pipeline``: the time model (default: the roofline)."""
    from warpspeed.models import TIME_MODELS

    return click.option("--model", type=click.Choice(list(TIME_MODELS)), default="roofline", show_default=True,
                        help="Time model: the four-limiter roofline, the AMALI interval model (a CPI stack "
                             "of stall reasons) or the pipeline model (an instruction graph simulated on "
                             "the SMs). Against public measurements (docs/accuracy.md) the roofline and the "
                             "pipeline model are within 2-16 % MAPE on streaming, gpu-roofline and FluidX3D "
                             "D3Q19 kernels but 38-168 % too fast on launch-bound small kernels (no launch "
                             "cost); the interval model is within 16-32 % there, 5-24 % elsewhere, too slow "
                             "at low occupancy. `warpspeed compare` shows all three side by side.")(f)


def curves_option(f):
    """``--curves FILE``: capacity curves instead of the device family's."""
    return click.option("--curves", "curves_path", type=click.Path(dir_okay=False), default=None,
                        help="Capacity-curve file (fits/*.toml) instead of the device family's.")(f)


def clock_option(f):
    """``--clock-mhz``: the SM clock for the power model (default: the device's)."""
    return click.option("--clock-mhz", type=click.FloatRange(min=0, min_open=True), default=None,
                        help="SM clock in MHz for the power model (default: the device's base clock).")(f)


@dataclass(frozen=True)
class RankSpace:
    """What ``rank`` and ``compare`` sweep: the device, the kernel the catalog resolves for each
    useful folding, and ``blocks(kernel)``: the candidate blocks of a kernel."""

    device: Device
    resolved: Mapping[tuple[int, int, int], ResolvedKernel]
    kernels: Mapping[tuple[int, int, int], Kernel]
    blocks: Callable[[Kernel], list[tuple[int, int, int]]]


def rank_space(kernel_name: str, domain: str | None, device_name: str, dtype: str | None,
               threads: int | None) -> RankSpace:
    """The configuration space of ``rank``: the paper's foldings the kernel's domain can use, each
    with its own resolved kernel, times every block of ``threads`` threads (default: the kernel's
    default thread count on the device)."""
    from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, configuration_space, default_threads, useful_foldings

    require_kernel(kernel_name)
    device = load_device(device_name)
    dom = parse_triple(domain, "--domain") if domain else None
    first = resolve(kernel_name, dom, fold=PAPER_FOLDINGS[0], device=device, dtype=dtype).kernel
    folds = useful_foldings(PAPER_FOLDINGS, first.domain)
    resolved = {f: resolve(kernel_name, dom, fold=f, device=device, dtype=dtype) for f in folds}
    kernels = {f: r.kernel for f, r in resolved.items()}

    def blocks(kernel: Kernel) -> list[tuple[int, int, int]]:
        space = configuration_space(kernel, threads or default_threads(kernel, device), [(1, 1, 1)], MAX_BLOCK_Z)
        return [c.block for c in space]

    return RankSpace(device, resolved, kernels, blocks)
