"""Predictors per thread folding: one kernel name means the binary generated for each folding.

:func:`warpspeed.kernel.catalog.resolve` returns, for a pystencils workload, the kernel
generated with the given folding and its own register count (the folding is still a launch
parameter of the prediction); for a built-in kernel the same kernel for every folding. Studies
and the measurement runner predict every configuration through :class:`FoldingPredictors`, so a
row's prediction describes the binary that runs for its folding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from warpspeed.launch.folded import FoldedKernels
from warpspeed.launch.space import Config

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel
    from warpspeed.predict import Predictor
    from warpspeed.prediction import Prediction


class FoldingPredictors:
    """Predictions of kernel ``name`` on ``domain`` and ``device``, one resolved kernel per folding
    (:class:`~warpspeed.launch.folded.FoldedKernels`: resolved once, a failure cached and raised
    for every configuration of its folding). Foldings whose resolved kernels are equal (built-in
    kernels) share one Predictor.
    """

    def __init__(self, name: str, domain: Sequence[int] | None, device: "Device", dtype: str | None = None) -> None:
        self.kernels = FoldedKernels(name, domain, device, dtype)
        self.device = device
        self._predictors: list[tuple["Kernel", "Predictor"]] = []

    def kernel(self, fold: Sequence[int]) -> "Kernel":
        """The kernel generated for ``fold`` (cached; a cached failure is raised again)."""
        return self.kernels.kernel(fold)

    def predictor(self, fold: Sequence[int]) -> "Predictor":
        """The Predictor of the kernel generated for ``fold``."""
        from warpspeed.predict import Predictor

        kernel = self.kernel(fold)
        for known, predictor in self._predictors:
            if known is kernel or known == kernel:
                return predictor
        predictor = Predictor(kernel, self.device)
        self._predictors.append((kernel, predictor))
        return predictor

    def predict(self, config: Config) -> "Prediction":
        """The prediction of ``config`` with the kernel generated for its folding."""
        return self.predictor(config.fold).predict(config.block, config.fold)
