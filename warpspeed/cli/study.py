"""The ``warpspeed study STUDY.toml`` command (registered by :mod:`warpspeed.cli.main` via :data:`COMMANDS`).

Runs a study (see :mod:`warpspeed.studies.study`) serially, on a local process pool (``--jobs N``) or
on a Dask cluster (``--dask tcp://host:8786``). Before it starts it says on standard error how many
configurations it will evaluate and, while it runs, shows a progress bar of the rows finished there
(both only when standard error is a terminal; the summary line on standard output always gives the
count). Ctrl-C stops it with
a valid partial output; running the same command again resumes where it stopped. Bad input
(:class:`~warpspeed.errors.WarpspeedError`) is reported by the command group as one line. When
the study names an ``objective``, the best configuration of every (kernel, device, domain) is
printed as a table of the requested models' figures.
"""

from __future__ import annotations

import sys
from concurrent.futures import Executor
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from warpspeed.cli.parse import JOBS
from warpspeed.cli.paths import InputTextFile, OutputFile
from warpspeed.cli.render import Column, console as make_console, fitted_table, glups, print_fitted
from warpspeed.errors import WarpspeedError
from warpspeed.files.output import check_output_path
from warpspeed.models import ENERGY_OBJECTIVE, TIME_MODELS
from warpspeed.studies.models import MODEL_COLUMNS, best_rows
from warpspeed.studies.spec import PARQUET_SUFFIXES, StudySpec, format_for, load_study, require_not_study_file
from warpspeed.studies.storage import iter_stored_rows
from warpspeed.studies.study import DEFAULT_IN_FLIGHT_PER_CPU, check_study, run_study
from warpspeed.units import GIGA

#: Exit status after Ctrl-C (128 + SIGINT), the shell convention.
EXIT_INTERRUPTED = 130
#: Suffixes --output takes: CSV, or Parquet (warpspeed.studies.spec.format_for).
OUTPUT_SUFFIXES = (".csv", *PARQUET_SUFFIXES)


class _Bar:
    """Progress callback drawing a rich bar on stderr (nothing when stderr is not a terminal)."""

    def __init__(self, console: Console, label: str) -> None:
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True,
                                  disable=not console.is_terminal)
        self._label = label
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=total, completed=done)
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()


def _executor(jobs: int | None, dask: str | None) -> tuple[Executor | None, Any, int | None]:
    """(executor, Dask client or None, chunks in flight) for the options; the caller shuts both down."""
    if jobs is not None and dask is not None:
        raise click.UsageError("--jobs and --dask are exclusive (the Dask cluster has its own workers)")
    if dask is not None:
        try:
            from distributed import Client
        except ImportError:
            raise WarpspeedError("--dask needs dask.distributed (pip install warpspeed[distributed])") from None
        try:
            client = Client(dask)
        except (OSError, ValueError, TypeError) as exc:  # unreachable, or not an address
            raise WarpspeedError(f"cannot connect to the Dask scheduler at {dask}: {exc}") from None
        threads = sum(client.nthreads().values()) or 1
        return client.get_executor(), client, DEFAULT_IN_FLIGHT_PER_CPU * threads
    if jobs is not None and jobs > 1:
        from warpspeed.rank import process_pool

        return process_pool(jobs), None, DEFAULT_IN_FLIGHT_PER_CPU * jobs
    return None, None, None


def _number(text: str, scale: float = 1.0) -> str:
    return "" if text == "" else f"{float(text) * scale:.2f}"


def _best_columns(models: Sequence[str]) -> list[tuple[Column, Any]]:
    """The best table's columns (kernel, device, domain, configuration, then each model's
    figures) with the function giving each cell from a stored row."""
    def triple(prefix: str) -> Any:
        return lambda r: "x".join(r[f"{prefix}_{d}"] for d in "xyz")

    def rate(column: str) -> Any:
        return lambda r: "" if r[column] == "" else glups(float(r[column]))

    columns: list[tuple[Column, Any]] = [
        (Column("kernel", justify="left"), lambda r: r["kernel"]),
        (Column("device", justify="left"), lambda r: r["device"]),
        (Column("domain"), triple("domain")), (Column("block"), triple("block")), (Column("fold"), triple("fold")),
        (Column("roofline\nGlup/s"), rate("lups_per_s")), (Column("limiter", justify="left"), lambda r: r["limiter"]),
    ]
    for model in TIME_MODELS:
        if model in models and MODEL_COLUMNS[model]:  # the models with columns beyond the ranking row
            columns += [(Column(f"{model}\nGlup/s"), rate(f"{model}_lups_per_s")),
                        (Column(f"{model}\nexplanation", justify="left", priority=1, wraps=True),
                         lambda r, m=model: r[f"{m}_explanation"])]
    if ENERGY_OBJECTIVE in models:
        columns += [(Column("power\nW"), lambda r: _number(r["energy_watts"])),
                    (Column("energy\nnJ/lup"), lambda r: _number(r["energy_joules_per_lup"], GIGA))]
    return columns


def render_best(spec: StudySpec, rows: Iterable[Mapping[str, str]]) -> None:
    """Print the best row of every (kernel, device, domain) by the study's objective."""
    assert spec.objective is not None
    best = best_rows(rows, spec.objective)
    if not best:
        click.echo(f"no configuration could be predicted: nothing to rank by {spec.objective}.")
        return
    columns = _best_columns(spec.models)
    console = make_console()
    table, dropped = fitted_table(console, [c for c, _ in columns], [[get(r) for _, get in columns] for r in best])
    order = "lowest energy per lup" if spec.objective == "energy" else f"highest {spec.objective} rate"
    caption = [f"Left out for width: {', '.join(c.name for c in dropped)}." if dropped else ""]
    print_fitted(console, table, f"Best configuration per kernel, device and domain ({order})", caption)


@click.command()
@click.argument("study_file", type=InputTextFile("study file"))
@click.option("--jobs", type=JOBS, default=None, help="Local worker processes (default and 1: serial).")
@click.option("--dask", "dask_address", default=None, metavar="SCHEDULER_ADDRESS",
              help="Run on a Dask cluster, e.g. tcp://host:8786.")
@click.option("--no-resume", is_flag=True,
              help="Start over: ignore the journal and output of an earlier run instead of resuming.")
@click.option("--output", "--out", "output", default=None, type=OutputFile("study output"),
              help="Write here instead of the study file's output (format from the suffix: .csv, .parquet or .pq).")
def study(study_file: str, jobs: int | None, dask_address: str | None, no_resume: bool, output: str | None) -> None:
    """Run a study (kernels x devices x domains x configurations) described by STUDY_FILE (TOML).

    Rows stream to the output in study order (memory independent of the study's size); the output
    appears whole when the study completes. Rerunning an interrupted study resumes from its journal.
    """
    spec = load_study(study_file)
    if output is not None:
        if Path(output).suffix.lower() not in OUTPUT_SUFFIXES:
            raise WarpspeedError(f"--output has no study format suffix (got {output!r}); allowed: "
                                 f"{', '.join(OUTPUT_SUFFIXES)} (CSV or Parquet)")
        spec = replace(spec, output=Path(output), format=format_for(Path(output)))
        require_not_study_file(spec.output, study_file)
    else:  # the study file's output: missing directories are created, as the journal does
        check_output_path(spec.output, "study output", create_parents=True)
    total = check_study(spec)
    executor, client, in_flight = _executor(jobs, dask_address)
    err_console = Console(stderr=True)
    if err_console.is_terminal:  # the count and the bar are for a person watching; logs get the summary
        err_console.print(f"study: {total} configurations ({len(set(spec.kernels))} kernel(s) x "
                          f"{len(set(spec.devices))} device(s) x {len(set(spec.domains))} domain(s) x blocks x "
                          f"foldings) into {spec.output}", markup=False, highlight=False)
    bar = _Bar(err_console, f"study {spec.output.name}")
    try:
        result = run_study(spec, executor=executor, progress=bar, resume=not no_resume, max_in_flight=in_flight)
    except KeyboardInterrupt:
        bar.close()
        click.secho(f"interrupted: no output written; finished rows are in the journal {spec.journal_path}; "
                    "run the same command again to resume.", fg="yellow", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        bar.close()
        if client is not None:
            executor.shutdown(wait=False)  # type: ignore[union-attr]
            client.close()
        elif executor is not None:
            executor.shutdown(cancel_futures=True)
    refreshed = f", {result.refreshed} recomputed for the models now asked for" if result.refreshed else ""
    click.echo(f"{result.rows} rows in {result.output} ({result.computed} computed, {result.resumed} resumed"
               f"{f', {result.dropped} stale rows dropped' if result.dropped else ''}{refreshed}).")
    if result.failed and result.failed == result.rows:
        raise WarpspeedError(f"no configuration of the study could be predicted (got {result.failed} error rows); "
                             f"see the 'error' column of {result.output}")
    if result.failed:
        click.secho(f"{result.failed} configuration(s) could not be predicted: see the 'error' column.",
                    fg="yellow")
    if spec.objective is not None:
        render_best(spec, iter_stored_rows(spec))


COMMANDS = [study]
