"""Rank launch configurations of pystencils kernels: ``rank(assignments, device) -> Ranking``.

Each folding is real code: for every folding factor the assignments are folded and compiled
by pystencils (:func:`~pystencils_plugin.folding.create_folded_kernel`) for the device's
platform (CUDA for NVIDIA, HIP for AMD), the kernel is extracted (registers from ptxas when
``nvcc`` is available for an NVIDIA device, otherwise the count shipped for the same code or the
documented estimate), and all block
sizes are predicted for it. A workload name is generated exactly as the kernel catalog does
(:func:`pystencils_plugin.catalog.extract_for`), so ``warpspeed rank``, studies and this
function predict the same kernel. The best row comes back as a :class:`BestConfig` whose
:meth:`~BestConfig.create_kernel` generates the folded kernel with the ranked block size as
its launch block; :func:`create_kernel` does both steps at once.
"""

from __future__ import annotations

import html
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from pystencils_plugin.arguments import check_rank_arguments
from pystencils_plugin.catalog import arch_for, cached_assignments, extract_for, target_for
from pystencils_plugin.extracted import ExtractedKernel
from pystencils_plugin.registers import prefetch_register_counts, registers_cached
from pystencils_plugin.workload_names import WORKLOADS
from warpspeed.errors import KernelError, WarpspeedError
from warpspeed.hardware.device import Device, load_device
from warpspeed.kernel.description import Kernel
from warpspeed.launch.folded import left_out_line, resolve_foldings
from warpspeed.launch.space import (MAX_BLOCK_Z, PAPER_FOLDINGS, configuration_space, default_threads,
                                    useful_foldings)
from warpspeed.memory.capacity import CapacityCurves
from warpspeed.models import DEFAULT_TIME_MODEL
from warpspeed.rank import RankRow, Ranking, Scoring, rank_per_fold
from warpspeed.units import GIGA

Triple = tuple[int, int, int]

#: Device a ranking is made for when none is given.
DEFAULT_DEVICE = "A100-SXM4-40GB"


@dataclass(frozen=True)
class BestConfig:
    """The best-ranked configuration, ready to generate with pystencils.

    Attributes:
        block_size: threads per block (x, y, z); set as ``CreateKernelConfig.gpu.default_block_size``.
        fold: thread folding (cells per thread along x, y, z).
        row: the ranking's row of this configuration.
        assignments: the update rule (None when the ranking was made from a warpspeed kernel).
        target: the pystencils target the ranking generated code for (CUDA or HIP).
    """

    block_size: Triple
    fold: Triple
    row: RankRow
    assignments: Any = None
    target: Any = None

    def create_kernel(self, config: Any = None, **config_kwargs: Any) -> Any:
        """The folded pystencils kernel whose launch configuration uses this block size.

        ``config`` (a ``ps.CreateKernelConfig``) and ``config_kwargs`` are further code
        generator options; the iteration slice and the default block size are set here.
        ``kernel.get_launch_configuration().default_block_size`` reads the block size back.
        """
        if self.assignments is None:
            raise WarpspeedError("this ranking was made from a warpspeed.Kernel; there are no assignments to generate")
        from pystencils_plugin.folding import create_folded_kernel

        config_kwargs.setdefault("target", self.target)
        return create_folded_kernel(self.assignments, fold=self.fold, block_size=self.block_size, config=config,
                                    **config_kwargs)

    def gpu_options(self) -> dict[str, Triple]:
        """Options for ``CreateKernelConfig.gpu``: ``{"default_block_size": block_size}``."""
        return {"default_block_size": self.block_size}


#: Rows a ranking shows in a notebook (``_repr_html_``) and in its text summary.
SHOWN_ROWS = 10


@dataclass(frozen=True)
class PystencilsRanking:
    """A :class:`warpspeed.rank.Ranking` plus the extracted kernel of each folding.

    In a notebook it shows as a table of its best rows (``_repr_html_``); :meth:`to_dataframe`
    gives every row as a pandas DataFrame (the columns of ``warpspeed rank --csv``), :meth:`plot`
    a bar chart (a matplotlib Figure of its own, no pyplot state), ``str()`` a short summary.

    Attributes:
        ranking: the rows, best first.
        kernels: the extracted kernel of each folding (empty for a ranking of a warpspeed.Kernel).
        assignments, target: what :meth:`best` generates code from.
        model, objective: the time model and the objective the rows are ordered by.
        left_out: the default space's foldings that the domain's extent is not a multiple of, each
            with the reason (:class:`warpspeed.errors.FoldingError`).
    """

    ranking: Ranking
    kernels: dict[Triple, ExtractedKernel]
    assignments: Any = None
    target: Any = None
    model: str = DEFAULT_TIME_MODEL
    objective: str = "time"
    left_out: dict[Triple, str] = field(default_factory=dict)

    @property
    def rows(self) -> tuple[RankRow, ...]:
        return self.ranking.rows

    def __len__(self) -> int:
        return len(self.ranking.rows)

    def best(self) -> BestConfig:
        row = self.ranking.best()
        return BestConfig(block_size=row.config.block, fold=row.config.fold, row=row,
                          assignments=self.assignments, target=self.target)

    def registers_note(self) -> str:
        """Registers per thread of each folding and where they come from (ptxas, shipped, estimate)."""
        if not self.kernels:
            return "registers: those of the given kernel"
        return "registers per thread: " + ", ".join(
            f"fold {'x'.join(map(str, f))}: {k.kernel.registers} ({k.registers_source})" for f, k in self.kernels.items())

    def __str__(self) -> str:
        ok = [r for r in self.rows if r.ok]
        head = (f"{self.ranking.kernel} on {self.ranking.device}: {len(self.rows)} configurations "
                f"({self.model} model, {self.objective} objective)")
        if not ok:
            return head + "; none could be predicted"
        best = ok[0]
        why = best.explanation
        return (f"{head}; best block {best.config.block}, fold {best.config.fold}: "
                f"{best.lups_per_s / GIGA:.1f} Glup/s ({why}); {self.registers_note()}{self._left_out_note()}")

    def _left_out_note(self) -> str:
        """The foldings left out of the default space, each with its reason; empty without any."""
        return "".join(f"; {left_out_line(fold, why)}" for fold, why in self.left_out.items())

    def _repr_html_(self) -> str:
        """The best :data:`SHOWN_ROWS` rows as an HTML table (Jupyter calls this)."""
        cells = ["#", "block", "fold", "Glup/s", "dominated by",
                 "blocks/SM", "registers", "DRAM B/lup"]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cells)
        body = []
        for i, r in enumerate(self.rows[:SHOWN_ROWS], 1):
            if not r.ok:
                values = [str(i), r.config.label, "", "—", f"error: {r.error}", "", "", ""]
            else:
                why = r.explanation
                values = [str(i), "x".join(map(str, r.config.block)), "x".join(map(str, r.config.fold)),
                          f"{r.lups_per_s / GIGA:.2f}", why, str(r.blocks_per_sm), str(r.registers),
                          f"{r.dram_load_bytes_per_lup + r.dram_store_bytes_per_lup:.1f}"]
            body.append("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in values) + "</tr>")
        caption = (f"{self.ranking.kernel} on {self.ranking.device}: best {min(SHOWN_ROWS, len(self))} of "
                   f"{len(self)} configurations by the {self.model} model ({self.objective} objective)")
        return (f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table><p>{html.escape(self.registers_note())}</p>")

    def to_dataframe(self) -> Any:
        """Every row, best first, as a ``pandas.DataFrame``: a ``rank`` column and the columns of
        ``warpspeed rank --csv`` (:data:`warpspeed.rank.RANK_COLUMNS`). Needs pandas."""
        try:
            import pandas as pd
        except ImportError:
            raise WarpspeedError("to_dataframe needs pandas (pip install pandas)") from None
        from warpspeed.files.records import csv_record
        from warpspeed.rank import RANK_COLUMNS

        records = [{"rank": i, **csv_record(r)} for i, r in enumerate(self.rows, 1)]
        return pd.DataFrame.from_records(records, columns=["rank", *RANK_COLUMNS])

    def plot(self, top: int | None = 30, path: str | None = None) -> Any:
        """A bar chart of the best ``top`` rows (None: all), colored by block shape and hatched by
        limiter, as a matplotlib ``Figure`` (shown inline by Jupyter); ``path`` also writes it
        (format from the suffix)."""
        from pystencils_plugin.arguments import check_plot_path, check_top
        from warpspeed.plots import plot_ranking, ranking_figure

        top = check_top(top)
        out = check_plot_path(path)
        if out is not None:
            plot_ranking(self.ranking, out, top)
        return ranking_figure(self.ranking, top)


def _per_fold_kernels(source: Any, dev: Device, domain: Sequence[int] | None, foldings: Sequence[Triple] | None,
                      target: Any, dtype: str | None) -> tuple[dict[Triple, ExtractedKernel], Any, dict[Triple, str]]:
    """The extracted kernel of every folding, the assignments they were generated from and the
    foldings left out with their reasons (``foldings`` None: the paper's foldings along the axes the
    kernel has, less those the domain's extent is not a multiple of; given ``foldings`` are all
    generated or the error is raised)."""
    if isinstance(source, str):
        if source not in WORKLOADS:
            raise KernelError(f"unknown workload {source!r}; workloads: {', '.join(WORKLOADS)}")
        if target is not None and target != target_for(dev):
            raise KernelError(f"workload {source!r} on {dev.name} is generated for {target_for(dev)}, not {target}")
        dom = tuple(domain) if domain is not None else None

        def generate(fold: Triple) -> ExtractedKernel:
            return extract_for(source, dom, fold=fold, device=dev, dtype=dtype)
        assignments = cached_assignments(source, dom, dtype or "double")
    else:
        if dtype is not None:
            raise KernelError("dtype applies to workload names; the fields of given assignments fix their precision")

        functions: dict[Triple, tuple[Any, str]] = {}
        arch, requested = arch_for(dev), foldings

        from pystencils_plugin.extract import extract_kernel
        from pystencils_plugin.folding import create_folded_kernel

        def function(fold: Triple) -> Any:
            if fold not in functions:
                kernel_function = create_folded_kernel(source, fold=fold, target=target)
                functions[fold] = kernel_function, kernel_function.get_c_code()
            return functions[fold][0]

        def generate(fold: Triple) -> ExtractedKernel:
            kernel_function = function(fold)
            code = functions[fold][1]
            if not registers_cached(kernel_function, arch, code):
                _prefetch(function, fold, requested, arch)
            return extract_kernel(kernel_function, arch=arch, source=code)
        assignments = source
    left_out: dict[Triple, str] = {}
    if foldings is None:
        kernels, left_out = resolve_foldings(generate, lambda extracted: extracted.kernel.domain)
    else:
        kernels = {f: generate(f) for f in foldings}
    if isinstance(source, str):
        return kernels, assignments, left_out
    first = next(iter(kernels.values())).kernel
    if domain is not None and tuple(domain) != tuple(first.domain)[: len(domain)]:
        raise KernelError(f"domain {tuple(domain)} differs from the domain the fields fix, {first.domain}")
    return kernels, assignments, left_out


def _prefetch(function: Callable[[Triple], Any], fold: Triple, foldings: Sequence[Triple] | None,
              arch: str) -> None:
    """Count the registers of every folding to be generated together, concurrently, when one of them
    is not in the disk cache (:func:`pystencils_plugin.registers.prefetch_register_counts`): the given
    ``foldings``, or ``fold`` and the paper's foldings that the rule can be folded by."""
    kernels = []
    for f in dict.fromkeys(foldings if foldings is not None else (fold, *PAPER_FOLDINGS)):
        try:
            kernels.append(function(f))  # type: ignore[arg-type]
        except WarpspeedError:
            continue
    prefetch_register_counts(kernels, arch)


def rank(source: Any, device: Device | str = DEFAULT_DEVICE, domain: Sequence[int] | None = None,
         blocks: Sequence[Triple] | None = None, foldings: Sequence[Triple] | None = None,
         threads: int | None = None, executor: Executor | None | str = "auto",
         target: Any = None, progress: Callable[[int], None] | None = None,
         dtype: str | None = None, curves: CapacityCurves | None = None,
         model: str = DEFAULT_TIME_MODEL, objective: str = "time") -> PystencilsRanking:
    """Rank blocks x foldings for a pystencils update rule, workload name, or warpspeed kernel.

    Args:
        source: a list of ``ps.Assignment`` / an ``AssignmentCollection`` (fields with fixed
            shapes), a workload name of :data:`pystencils_plugin.workloads.WORKLOADS`, or a
            :class:`warpspeed.Kernel` (then foldings are launch parameters only).
        device: device name or :class:`~warpspeed.hardware.device.Device`.
        domain: iteration domain for a workload name (default: the workload's); for assignments
            and kernels the fields fix it, and a different ``domain`` is an error.
        blocks: candidate blocks (default: powers of two with ``threads`` threads, z <= 64).
        foldings: folding factors (default: the paper's none, 2 in y, 2 in z, along the axes the
            kernel has: a 2-D rule gets none and 2 in y, a 1-D rule none).
        threads: threads per block of the default space (default per folding:
            :func:`warpspeed.launch.space.default_threads` of its kernel).
        executor: as :func:`warpspeed.rank.predict_configs`.
        target: ``ps.Target.CUDA`` or ``ps.Target.HIP`` (default: HIP for AMD devices, else CUDA).
        dtype: ``'double'`` (default) or ``'float'`` for a workload name.
        curves: capacity curves instead of the device family's.
        model: the time model (:data:`warpspeed.models.TIME_MODELS`: ``overlap``, the default,
            ``roofline``, ``interval``, ``pipeline``).
        objective: ``time`` (lattice updates per second), ``energy`` (per joule) or ``edp``.
    """
    scoring = Scoring(model, objective)  # checks both names before any work
    check_rank_arguments(device, domain, blocks, foldings, threads, executor, progress, dtype, curves)
    dev = device if isinstance(device, Device) else load_device(device)
    folds = None if foldings is None else [tuple(f) + (1,) * (3 - len(f)) for f in foldings]
    target = target if target is not None or isinstance(source, str) else target_for(dev)
    if isinstance(source, Kernel):
        if domain is not None and tuple(domain) != tuple(source.domain)[: len(domain)]:
            raise KernelError(f"domain {tuple(domain)} differs from the kernel's domain {source.domain}")
        extracted: dict[Triple, ExtractedKernel] = {}
        per_fold = {f: source for f in (folds if folds is not None else useful_foldings(PAPER_FOLDINGS, source.domain))}
        assignments, left_out = None, {}
    else:
        extracted, assignments, left_out = _per_fold_kernels(source, dev, domain, folds,  # type: ignore[arg-type]
                                                             target, dtype)
        per_fold = {f: k.kernel for f, k in extracted.items()}

    def candidates(kernel: Kernel) -> list[Triple]:
        if blocks is not None:
            return [tuple(b) + (1,) * (3 - len(b)) for b in blocks]  # type: ignore[misc]
        space = configuration_space(kernel, threads or default_threads(kernel, dev), [(1, 1, 1)], MAX_BLOCK_Z)
        return [c.block for c in space]

    ranking = rank_per_fold(per_fold, dev, candidates, executor, progress, curves, scoring)  # type: ignore[arg-type]
    return PystencilsRanking(ranking=ranking, kernels=extracted, assignments=assignments,
                             target=target if target is not None else target_for(dev), model=model,
                             objective=objective, left_out=left_out)


def create_kernel(assignments: Any, config: Any = None, device: Device | str = DEFAULT_DEVICE,
                  **rank_kwargs: Any) -> Any:
    """Rank ``assignments`` on ``device`` and return the best-configured pystencils kernel.

    The kernel is folded as the best row says and its launch configuration uses the best
    block size (``get_launch_configuration().default_block_size``). ``config`` (a
    ``ps.CreateKernelConfig``) carries further code generator options; ``rank_kwargs`` go to
    :func:`rank` (``blocks``, ``foldings``, ``threads``, ``executor``, ``target``).
    """
    if config is not None and "target" not in rank_kwargs and config.is_option_set("target"):
        rank_kwargs["target"] = config.get_option("target")
    best = rank(assignments, device, **rank_kwargs).best()
    return best.create_kernel(config)


__all__ = ["BestConfig", "PystencilsRanking", "create_kernel", "default_threads", "rank"]
