"""The model's order of a set of launch configurations: predict each, best first.

A tuning space holds whatever configurations a user or a cache lists, not the ranking's
power-of-two space, so :func:`rank_configs` predicts exactly the configurations asked for, each
with the kernel generated for its folding (a kernel name of the catalog: pystencils generates one
kernel per folding) or with one given kernel (a :class:`warpspeed.Kernel` described with the
Python API: the folding is a launch parameter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from warpspeed.errors import WarpspeedError
from warpspeed.launch.space import Config
from warpspeed.rank import DEFAULT_SCORING, RankRow, Ranking, Scoring, predict_configs, sort_rows

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel

Triple = tuple[int, int, int]
#: The kernel of one folding.
KernelFor = Callable[[Triple], "Kernel"]


def kernel_source(kernel: "Kernel | str", device: "Device", domain: Sequence[int] | None = None,
                  dtype: str | None = None) -> KernelFor:
    """The kernel of each folding: a catalog name resolved per folding (cached), or one kernel."""
    if isinstance(kernel, str):
        from warpspeed.kernel.catalog import require_kernel
        from warpspeed.launch.folded import FoldedKernels

        require_kernel(kernel)
        return FoldedKernels(kernel, tuple(domain) if domain is not None else None, device, dtype).kernel
    return lambda fold: kernel


def rank_configs(kernel_for: KernelFor, device: "Device", configs: Iterable[Config],
                 scoring: Scoring = DEFAULT_SCORING, name: str = "") -> Ranking:
    """Predict ``configs`` (each once) and sort them best first; a configuration or a folding
    that cannot be predicted becomes an error row, listed last."""
    from warpspeed.predict import SharedModels

    groups: dict[Triple, list[Config]] = {}
    for config in dict.fromkeys(configs):
        groups.setdefault(tuple(config.fold), []).append(config)  # type: ignore[arg-type]
    rows: list[RankRow] = []
    shared = SharedModels()
    for fold, group in groups.items():
        try:
            kernel = kernel_for(fold)
        except WarpspeedError as exc:
            rows.extend(RankRow.failed(c, str(exc)) for c in group)
            continue
        name = name or kernel.name
        rows.extend(predict_configs(kernel, device, group, executor=None, scoring=scoring, shared=shared))
    return Ranking(kernel=name, device=device.name, rows=sort_rows(rows, scoring.objective))

