"""The ``warpspeed`` command group: it registers the commands, each in its own module.

Rendering lives in the command modules; the library never prints.
"""

from __future__ import annotations

import io
import os
import sys
import traceback
import warnings

import click

from warpspeed.cli.paths import OUTPUTS_META_KEY
from warpspeed.cli.render import Column, console, fitted_table, print_fitted
from warpspeed.errors import CacheWarning, WarpspeedError
from warpspeed.files.jsonsafe import json_text
from warpspeed.files.output import describe_os_error
from warpspeed.hardware.device import Device, all_devices
from warpspeed.units import KIB, MIB

#: Exit status for bad input and files that cannot be written.
EXIT_USAGE = 2


def _raised_writing_stdout(exc: OSError) -> bool:
    """Whether ``exc`` was raised while a command printed: inside :func:`click.echo` or a rich
    console (the commands print only through these)."""
    return any(frame.f_code is click.echo.__code__ or frame.f_globals.get("__name__", "").startswith("rich.")
               for frame, _ in traceback.walk_tb(exc.__traceback__))


def _silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # a test runner's buffer
        pass


def _write_failure(exc: OSError, ctx: click.Context) -> str:
    """One line for an OSError while a command ran: the file it names, standard output, or the
    command's output files (recorded by :class:`warpspeed.cli.paths.OutputFile`)."""
    if exc.filename is not None:
        return describe_os_error(exc)
    if _raised_writing_stdout(exc):
        _silence_stdout()
        return describe_os_error(exc, "standard output")
    outputs = ctx.meta.get(OUTPUTS_META_KEY, [])
    return describe_os_error(exc, " or ".join(repr(p) for p in outputs) if outputs else None)


def _one_line(text: str) -> str:
    """``text`` on one line (click's and the model's messages may hold line breaks)."""
    return " ".join(text.split())


def usage_message(exc: click.ClickException) -> str:
    """The one ``error:`` line of a click usage error (bad or missing option, unknown command,
    value out of range, missing file): click's message, and where the allowed values are listed."""
    message = _one_line(exc.format_message()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (allowed: see '{ctx.command_path} --help')"
    return f"error: {message}"


#: What the commands print that an ASCII terminal cannot show (``∞``, ``−``, ``·``) becomes ``?``
#: there instead of a UnicodeEncodeError; JSON is ASCII already (``\u`` escapes).
_UNENCODABLE = "replace"


def _prepare_streams() -> None:
    """Refuse a closed standard output (the result would be lost: exit status 2, not 0), and let
    standard output and error print what their encoding cannot hold as ``?``."""
    if sys.stdout is None:
        raise WarpspeedError("standard output is closed; the result would be lost: run the command with its "
                             "output open (redirect it to a file or to /dev/null to discard it)")
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if stream is not None and encoding not in ("utf8", "utf16", "utf32") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors=_UNENCODABLE)
            except (ValueError, OSError, io.UnsupportedOperation):  # a stream already written in another way
                pass


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # type: ignore[no-untyped-def]
    """warpspeed's own warnings as one ``warning:`` line on standard error; others as Python shows them."""
    if issubclass(category, CacheWarning):
        click.echo(f"warning: {_one_line(str(message))}", err=True)
    else:
        _PYTHON_SHOWWARNING(message, category, filename, lineno, file, line)


_PYTHON_SHOWWARNING = warnings.showwarning


class _Group(click.Group):
    """Turn every bad input into a one-line ``error:`` message and exit code 2, never a
    traceback: WarpspeedError, click's usage errors (printed by click itself as a usage block of
    several lines), and a file or standard output that cannot be written."""

    def make_context(self, info_name, args, parent=None, **extra):  # type: ignore[override]
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # `warpspeed` alone prints the help, as click does
        except click.ClickException as exc:
            click.echo(usage_message(exc), err=True)
            sys.exit(EXIT_USAGE)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return self._invoke(ctx)

    def _invoke(self, ctx: click.Context):  # type: ignore[no-untyped-def]
        try:
            _prepare_streams()
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.ClickException as exc:
            click.echo(usage_message(exc), err=True)
            sys.exit(EXIT_USAGE)
        except WarpspeedError as exc:
            click.echo(f"error: {_one_line(str(exc))}", err=True)
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            click.echo(f"error: {_write_failure(exc, ctx)}", err=True)
            sys.exit(EXIT_USAGE)


@click.group(cls=_Group)
@click.version_option(package_name="warpspeed")
def main() -> None:
    """warpspeed: predict GPU kernel performance from address expressions, before compiling."""


#: Columns of the device table: priority 0 always, then L2 (1), L1 (2), architecture and FP16 (3)
#: while they fit the terminal.
DEVICE_COLUMNS = (
    Column("device", justify="left"), Column("arch", justify="left", priority=3), Column("SMs/\nCUs"),
    Column("GHz"), Column("L1\nKiB", priority=2), Column("L2 MiB\n(eff.)", priority=1),
    Column("L2\nGB/s", priority=1), Column("DRAM\nGB/s"), Column("FP64\nTFLOP/s"), Column("FP32\nTFLOP/s"),
    Column("FP16\nTFLOP/s", priority=3),
)


def _mib(nbytes: int) -> str:
    """MiB, whole where whole, else to one decimal."""
    mib = nbytes / MIB
    return f"{mib:.0f}" if mib == round(mib) else f"{mib:.1f}"


def _tflops(device: Device, lanes: int) -> str:
    """Peak TFLOP/s: SMs x clock x results per clock and SM x 2 (an FMA is two flops)."""
    return f"{device.sms * device.clock_ghz * lanes * 2 / 1000:.1f}"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the database as JSON.")
@click.option("--wide", is_flag=True, help="Show every column even if the table is wider than the terminal.")
@click.option("--provenance", is_flag=True,
              help="For every constant of each device: measured on that part, documented, or borrowed from "
                   "another part, with its source, and what the device was checked against (Markdown).")
@click.option("--device", "device_names_", multiple=True,
              help="With --provenance: only this device (built-in name or device-file path; repeatable).")
@click.option("--write-docs", is_flag=True,
              help="With --provenance: write the page of every built-in device to docs/provenance.md "
                   "(relative to the current directory: run it in the repository root).")
def devices(as_json: bool, wide: bool, provenance: bool, device_names_: tuple[str, ...], write_docs: bool) -> None:
    """The built-in device database."""
    if (device_names_ or write_docs) and not provenance:
        raise click.UsageError("--device and --write-docs go with --provenance")
    if provenance:
        from warpspeed.cli.provenance import show_provenance
        from warpspeed.hardware.device import load_device

        chosen = [load_device(n) for n in device_names_] if device_names_ and not write_docs else all_devices()
        show_provenance(chosen, as_json, write_docs)
        return
    devs = all_devices()
    if as_json:
        from dataclasses import asdict

        click.echo(json_text([asdict(d) for d in devs], indent=2))
        return
    rows = [[d.name, d.architecture, str(d.sms), f"{d.clock_ghz:.2f}", f"{d.l1.bytes / KIB:.0f}",
             f"{d.l2.bytes / MIB:.0f} ({_mib(d.l2.effective_bytes)})", f"{d.l2.bandwidth_gb_s:.0f}",
             f"{d.dram_bandwidth_gb_s:.0f}", _tflops(d, d.fp64_lanes_per_sm), _tflops(d, d.fp32_lanes_per_sm),
             _tflops(d, d.fp16_lanes_per_sm)] for d in devs]
    out = console()
    table, dropped = fitted_table(out, DEVICE_COLUMNS, rows, wide)
    caption = ["Peak TFLOP/s = SMs x GHz x results per clock and SM x 2 (an FMA is two flops).",
               "L2 and DRAM GB/s and the effective L2 are what the hardware sustains at full occupancy "
               "(microbenchmark measurements, or a rule from the nearest measured device); predictions "
               "lower the DRAM bandwidth for launches with few bytes in flight."]
    if dropped:
        caption.append(f"Left out to fit the terminal: {', '.join(c.name for c in dropped)} (--wide shows them).")
    print_fitted(out, table, "Built-in devices; every number's source is in warpspeed/hardware/devices/*.toml",
                 caption)


def _register_commands() -> None:
    """Add the commands of the command modules to the group."""
    from warpspeed.cli.calibrate import COMMANDS as CALIBRATE_COMMANDS
    from warpspeed.cli.compare import compare
    from warpspeed.cli.fit import fit
    from warpspeed.cli.power import COMMANDS as POWER_COMMANDS
    from warpspeed.cli.predict import predict
    from warpspeed.cli.rank import rank
    from warpspeed.cli.scan import scan_domain
    from warpspeed.cli.trace import trace
    from warpspeed.cli.tune import tune
    from warpspeed.cli.study import COMMANDS as STUDY_COMMANDS
    from warpspeed.cli.validate import COMMANDS as VALIDATE_COMMANDS
    from warpspeed.cli.validate_public import validate

    for command in (predict, rank, compare, tune, trace, scan_domain, fit, *VALIDATE_COMMANDS, validate, *STUDY_COMMANDS, *POWER_COMMANDS,
                    *CALIBRATE_COMMANDS):
        main.add_command(command)


_register_commands()
