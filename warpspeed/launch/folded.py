"""One kernel name over its thread foldings: the configuration space every command predicts.

A code generator compiles one kernel per folding (pystencils: the folded loop body, its own
register count); a built-in kernel is the same kernel for every folding, the folding a launch
parameter. :class:`FoldedKernels` resolves a name through the kernel catalog
(:func:`warpspeed.kernel.catalog.resolve`) once per folding, on first use, and remembers a
failure as well as a kernel. :func:`folded_space` is the space ``rank`` and ``compare`` sweep:
the paper's foldings that the kernel's domain can use, each with its resolved kernel, times every
power-of-two block of a thread count (:func:`warpspeed.launch.space.configuration_space`). A
folding whose factor does not divide the domain's extent along its axis (a generated folded
kernel's guard tests only a thread's first cell, :class:`~warpspeed.errors.FoldingError`) is left
out of the space with its reason (:func:`resolve_foldings`), so that a domain of 101 cells along y
is ranked without the folding by 2 in y instead of not at all.
Studies and the measurement runner predict arbitrary configurations through
:class:`warpspeed.studies.predictors.FoldingPredictors`, which resolves through the same
:class:`FoldedKernels`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypeVar

from warpspeed.errors import FoldingError, LaunchError, WarpspeedError
from warpspeed.kernel import catalog
from warpspeed.kernel.catalog import ResolvedKernel
from warpspeed.launch.space import MAX_BLOCK_Z, PAPER_FOLDINGS, Config, configuration_space, default_threads, useful_foldings

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel

Triple = tuple[int, int, int]
T = TypeVar("T")


def left_out_line(fold: Sequence[int], reason: str) -> str:
    """The line that says a folding was left out of a space, and why."""
    return f"fold {'x'.join(map(str, fold))} left out: {reason}"


def resolve_foldings(resolve: Callable[[Triple], T], domain_of: Callable[[T], Sequence[int]],
                     foldings: Sequence[Triple] = PAPER_FOLDINGS) -> tuple[dict[Triple, T], dict[Triple, str]]:
    """The default space's kernels: the first of ``foldings`` resolved (any error propagates) to
    learn the domain (``domain_of`` its result), then ``resolve`` of each folding that domain can use
    (:func:`~warpspeed.launch.space.useful_foldings`), and the foldings left out with their
    reasons: those that raise :class:`~warpspeed.errors.FoldingError` (the domain's extent is not a
    multiple of the factor). Every other error propagates."""
    first = resolve(foldings[0])
    resolved: dict[Triple, T] = {}
    left_out: dict[Triple, str] = {}
    for fold in useful_foldings(foldings, domain_of(first)):
        try:
            resolved[fold] = first if fold == foldings[0] else resolve(fold)
        except FoldingError as exc:
            left_out[fold] = str(exc)
    return resolved, left_out


class FoldedKernels:
    """The kernels that ``name`` resolves to on ``domain`` (cells; None: the kernel's default) and
    ``device``, one per folding, each resolved on first use and cached; a failure to resolve is
    cached too and raised again for every configuration with that folding."""

    def __init__(self, name: str, domain: Sequence[int] | None, device: "Device", dtype: str | None = None) -> None:
        self.name = name
        self.domain = tuple(domain) if domain is not None else None
        self.device = device
        self.dtype = dtype
        self._resolved: dict[Triple, ResolvedKernel | WarpspeedError] = {}

    def resolved(self, fold: Sequence[int]) -> ResolvedKernel:
        """The kernel generated for ``fold`` with where its registers come from."""
        key: Triple = tuple(fold)  # type: ignore[assignment]
        if key not in self._resolved:
            try:
                self._resolved[key] = catalog.resolve(self.name, self.domain, fold=key, device=self.device, dtype=self.dtype)
            except WarpspeedError as exc:
                self._resolved[key] = exc
        found = self._resolved[key]
        if isinstance(found, WarpspeedError):
            raise found
        return found

    def kernel(self, fold: Sequence[int]) -> "Kernel":
        """The kernel generated for ``fold``."""
        return self.resolved(fold).kernel


@dataclass(frozen=True)
class FoldedSpace:
    """A configuration space over foldings: the ``device``, the kernel resolved for each folding
    (``resolved``), and every power-of-two block of ``threads`` threads per block (None: each
    kernel's default on the device, :func:`~warpspeed.launch.space.default_threads`);
    ``left_out``: the foldings the domain cannot be folded by, each with the reason."""

    device: "Device"
    resolved: Mapping[Triple, ResolvedKernel]
    threads: int | None = None
    left_out: Mapping[Triple, str] = field(default_factory=dict)

    @property
    def kernels(self) -> dict[Triple, "Kernel"]:
        """The kernel of each folding."""
        return {fold: r.kernel for fold, r in self.resolved.items()}

    def blocks(self, kernel: "Kernel") -> list[Triple]:
        """The candidate blocks of ``kernel``: every power-of-two block of the space's thread count
        (z at most :data:`~warpspeed.launch.space.MAX_BLOCK_Z`) that its domain can use."""
        threads = self.threads or default_threads(kernel, self.device)
        return [c.block for c in configuration_space(kernel, threads, [(1, 1, 1)], MAX_BLOCK_Z)]

    def configs(self) -> list[Config]:
        """Every configuration of the space, folding by folding."""
        return [Config(block, fold) for fold, r in self.resolved.items() for block in self.blocks(r.kernel)]

    def left_out_lines(self) -> list[str]:
        """One line per folding left out, with the reason (``fold 1x2x1 left out: ...``)."""
        return [left_out_line(fold, why) for fold, why in self.left_out.items()]

    def left_out_records(self) -> list[dict]:
        """The foldings left out as JSON records: ``fold`` and ``reason``."""
        return [{"fold": list(fold), "reason": why} for fold, why in self.left_out.items()]


def folded_space(name: str, domain: Sequence[int] | None, device: "Device", dtype: str | None = None,
                 threads: int | None = None, foldings: Sequence[Triple] = PAPER_FOLDINGS) -> FoldedSpace:
    """The space of ``rank`` and ``compare``: the ``foldings`` that the kernel's domain can use
    (:func:`resolve_foldings`: the first is resolved to learn the domain), each with its own
    resolved kernel, times the blocks of ``threads`` threads; a folding the domain's extent is not
    a multiple of is left out (:attr:`FoldedSpace.left_out`). A one-line
    error for an unknown kernel name or a thread count that is not a power of two the device allows."""
    catalog.require_kernel(name)
    if threads is not None and (threads < 1 or threads & (threads - 1) or threads > device.max_threads_per_block):
        raise LaunchError(f"threads per block must be a positive power of two, got {threads}; allowed on "
                          f"{device.name}: 1, 2, 4, ..., {device.max_threads_per_block}")
    kernels = FoldedKernels(name, domain, device, dtype)
    resolved, left_out = resolve_foldings(kernels.resolved, lambda r: r.kernel.domain, foldings)
    return FoldedSpace(device, resolved, threads, left_out)
