"""Helpers shared by the command modules (:mod:`warpspeed.cli.main`, :mod:`warpspeed.cli.validate`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import click

from warpspeed.cli.parse import CLOCK_MHZ, DOMAIN, parse_domain
from warpspeed.hardware.clock import check_clock_mhz
from warpspeed.hardware.device import Device, load_device
from warpspeed.kernel.builtin import BUILTIN_KERNELS
from warpspeed.kernel.catalog import ResolvedKernel, require_kernel, resolve
from warpspeed.kernel.limits import MAX_DOMAIN_CELLS

if TYPE_CHECKING:
    from warpspeed.launch.folded import FoldedSpace

DEFAULT_DEVICE = "A100-SXM4-40GB"
DEFAULT_KERNEL = "star3d-r4"


#: The pystencils workloads (``pystencils_plugin.workloads.WORKLOADS``), named in ``--help`` without
#: importing pystencils (tests/cli checks that the two lists agree).
PYSTENCILS_KERNELS = ("star3d-r4", "star3d-r1", "star2d-r1", "box3d-r1", "copy19-pull", "d3q19-srt", "d3q27-srt",
                      "allen-cahn")


def kernel_options(f):
    f = click.option("--kernel", "kernel_name", default=DEFAULT_KERNEL, show_default=True,
                     help="Kernel: " + ", ".join(dict.fromkeys([*BUILTIN_KERNELS, *PYSTENCILS_KERNELS])) + "; the "
                          "star*, box3d-r1, copy19-pull and LBM kernels are the code pystencils generates (lbmpy "
                          "for the LBM kernels).")(f)
    f = click.option("--domain", type=DOMAIN, default=None,
                     help=f"Iteration domain nx,ny[,nz] in cells (default: the kernel's); at most "
                          f"{MAX_DOMAIN_CELLS} (2^34) cells.")(f)
    f = click.option("--device", "device_name", default=DEFAULT_DEVICE, show_default=True,
                     help="Built-in device name or path to a device TOML file.")(f)
    return f


def block_option(f):
    """``--block x,y,z``: the threads per block of a single configuration (default: :func:`default_block`)."""
    from warpspeed.cli.parse import BLOCK

    return click.option("--block", type=BLOCK, default=None,
                        help="Threads per block x,y,z (default: 32,8,4 on a 3-D domain, 32,32,1 on a 2-D one; "
                             "512 threads instead of 1024 (32,8,2 or 32,16,1) where the kernel's registers do not "
                             "fit 1024, and so on).")(f)


def block_or_default(block: tuple[int, ...] | None, resolved: ResolvedKernel, device: Device) -> tuple[int, ...]:
    """``block`` as given, else the default block of the kernel on the device
    (:func:`warpspeed.launch.space.default_block`)."""
    from warpspeed.launch.space import default_block

    return block if block is not None else default_block(resolved.kernel, device)


def dtype_option(f):
    """``--dtype float|double``: the precision of the kernel (default: double)."""
    return click.option("--dtype", type=click.Choice(["double", "float"]), default=None,
                        help="Floating-point precision of the kernel's fields (default: double).")(f)


def setup_kernel_and_device(kernel_name: str, domain: tuple[int, ...] | str | None, device_name: str,
                            fold: tuple[int, ...] = (1, 1, 1), dtype: str | None = None,
                            check: Callable[[Device], None] | None = None) -> tuple[ResolvedKernel, Device]:
    """The device, and the kernel the catalog resolves ``kernel_name`` to for ``fold`` on it.

    ``domain``: cells, or their text as ``--domain`` takes it. ``check(device)``: the command's
    checks that need the device (a clock's range, a model's parameters), run before the kernel is
    built."""
    domain = parse_domain(domain) if isinstance(domain, str) else domain
    require_kernel(kernel_name)
    device = load_device(device_name)
    if check is not None:
        check(device)
    return resolve(kernel_name, domain, fold=fold, device=device, dtype=dtype), device


def clock_check(clock_mhz: float | None) -> Callable[[Device], None]:
    """The check of ``--clock-mhz`` against a device: inside its clock range, and the device has
    power-model parameters (the clock is the power model's)."""
    def check(device: Device) -> None:
        if clock_mhz is None:
            return
        if "power" not in device.tables:
            raise click.UsageError(f"--clock-mhz sets the power model's clock; {device.name} has no power parameters")
        check_clock_mhz(device, clock_mhz, "--clock-mhz")

    return check


def registers_text(registers: int, source: str) -> str:
    """One wording for register counts in every command: ``registers: 68 per thread (ptxas)``;
    the source is ``ptxas``, ``estimate``, ``given`` or ``assumed``."""
    return f"registers: {registers} per thread ({source})"



def model_option(f):
    """``--model``: the time model (:data:`warpspeed.models.TIME_MODELS`; default:
    :data:`warpspeed.models.DEFAULT_TIME_MODEL`); the help lists each model's own
    (:attr:`warpspeed.model_protocol.ModelAbout.help`)."""
    from warpspeed.models import DEFAULT_TIME_MODEL, TIME_MODELS

    return click.option("--model", type=click.Choice(list(TIME_MODELS)), default=DEFAULT_TIME_MODEL, show_default=True,
                        help=f"Time model. {models_help()} `warpspeed compare` shows them side by side.")(f)


def models_help() -> str:
    """Every time model's one-line help (:attr:`warpspeed.model_protocol.ModelAbout.help`) after its
    name, in the registry's order, one sentence each."""
    from warpspeed.models import MODELS
    from warpspeed.validation.figures import load_figures, model_help

    figures = load_figures()

    def sentence(name: str, text: str) -> str:
        measured = model_help(name, figures)
        return f"{name}: {text}" + (f"; {measured}." if measured else ".")

    return " ".join(sentence(name, model.about.help) for name, model in MODELS.items())


def curves_option(f):
    """``--curves FILE``: capacity curves instead of the device family's."""
    return click.option("--curves", "curves_path", type=click.Path(dir_okay=False), default=None,
                        help="Capacity-curve file (fits/*.toml) instead of the device family's.")(f)


def clock_option(f):
    """``--clock-mhz``: the SM clock for the power model (default: the device's)."""
    return click.option("--clock-mhz", type=CLOCK_MHZ, default=None,
                        help="SM clock in MHz for the power model (default: the device's clock); from a tenth "
                             "of the device's maximum clock to the maximum.")(f)


def rank_space(kernel_name: str, domain: tuple[int, ...] | str | None, device_name: str, dtype: str | None,
               threads: int | None, check: Callable[[Device], None] | None = None) -> "FoldedSpace":
    """The configuration space of ``rank`` and ``compare`` from their options
    (:func:`warpspeed.launch.folded.folded_space`); ``check``: a check of the loaded device that
    runs before any kernel is generated."""
    from warpspeed.launch.folded import folded_space

    dom = parse_domain(domain) if isinstance(domain, str) else domain
    device = load_device(device_name)
    if check is not None:
        check(device)
    return folded_space(kernel_name, dom, device, dtype, threads)
