"""A Kernel Tuner strategy that measures configurations in warpspeed's predicted order.

Kernel Tuner 1.5 takes a user-defined optimizer as its strategy: an ``OptAlg``
(``kernel_tuner.strategies.wrapper``) called with Kernel Tuner's cost function and search space,
wrapped in an ``OptAlgWrapper``. :class:`PredictedOrder` is such an optimizer:

    from kernel_tuner import tune_kernel
    from kernel_tuner.strategies.wrapper import OptAlgWrapper
    from warpspeed.tune import PredictedOrder

    order = PredictedOrder(my_kernel, "H100-SXM5-80GB")          # a warpspeed.Kernel, or a kernel name
    results, env = tune_kernel(..., tune_params=tune_params, strategy=OptAlgWrapper(order),
                               strategy_options={"max_fevals": 10})

It maps every configuration of the search space to a launch configuration (a
:class:`~warpspeed.tune.mapping.ParamMapping`: Kernel Tuner's ``block_size_x/y/z`` and
``fold_x/y/z`` by default), predicts each distinct one once, and measures the space best
predicted first (after the predicted best, the best predicted configuration of each other
folding within :data:`FOLD_EXPLORATION` of it). Configurations that share a block and folding and differ only in parameters the
mapping does not name keep Kernel Tuner's order among themselves; configurations that do not map
(or cannot be predicted) come last, in Kernel Tuner's order. It stops when Kernel Tuner's budget
(``max_fevals``, ``time_limit``) is spent or, with ``patience``, when the best measured time has
not improved for ``patience`` measurements in a row.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Sequence

from warpspeed.launch.space import Config
from warpspeed.rank import DEFAULT_SCORING, Ranking, Scoring
from warpspeed.tune.cache import TuneError
from warpspeed.tune.kt import kernel_tuner_modules
from warpspeed.tune.mapping import DEFAULT_MAPPING, ParamMapping
from warpspeed.tune.order import kernel_source, rank_configs

if TYPE_CHECKING:
    from warpspeed.hardware.device import Device
    from warpspeed.kernel.description import Kernel

#: Foldings the search tries early: after the predicted best, the best predicted configuration of
#: every other folding whose predicted rate is within this fraction of the predicted best is
#: measured next, before the rest in the predicted order. A folding changes the generated code
#: (registers, instruction mix, the order of the loads), where the model is least certain; the
#: blocks of one folding it orders better. The fraction was chosen on the stored H200 caches
#: (docs/tune.md, "How many runs until the best"): 0.05 tries no other folding on the D3Q19 copy,
#: whose folded code is 15 % faster than predicted; 0.1 to 0.15 reach 97 % of the best within two
#: measurements on every cache; 0.2 and more add runs on the stars.
FOLD_EXPLORATION = 0.1

#: Measurements in a row without a better time after which the default search stops. A choice:
#: on the stored H200 caches the search then stops after 7 to 11 measurements with 98 % to 100 %
#: of the best found (docs/tune.md, last column of the table).
DEFAULT_PATIENCE = 5

_OptAlg: Any = kernel_tuner_modules().wrapper.OptAlg


class PredictedOrder(_OptAlg):  # type: ignore[misc, valid-type]
    """A Kernel Tuner optimizer (``OptAlg``) that measures the search space in warpspeed's order.

    Args:
        kernel: a :class:`warpspeed.Kernel` (folding as a launch parameter) or a kernel name of
            the catalog (``star3d-r4``, ``d3q27-srt``: generated for each folding).
        device: a device name or :class:`~warpspeed.hardware.device.Device`.
        mapping: which tune parameters are the block and the folding.
        patience: stop after this many measurements without a better time (None: only the budget).
        explore_folds: try the best predicted configuration of each folding predicted within this
            fraction of the best right after the best (:data:`FOLD_EXPLORATION`; 0: none).
        scoring: the time model and objective of the prediction.
        domain, dtype: the domain (cells) and precision a kernel name is generated for.

    After a run, :attr:`ranking` holds the predictions and :attr:`model_seconds` what they cost.
    """

    def __init__(self, kernel: "Kernel | str", device: "Device | str", mapping: ParamMapping = DEFAULT_MAPPING,
                 patience: int | None = DEFAULT_PATIENCE, scoring: Scoring = DEFAULT_SCORING,
                 domain: Sequence[int] | None = None, dtype: str | None = None,
                 explore_folds: float = FOLD_EXPLORATION) -> None:
        super().__init__()
        from warpspeed.hardware.device import load_device

        self.costfunc_kwargs = {"scaling": False, "snap": False}
        self.device = load_device(device) if isinstance(device, str) else device
        self.kernel = kernel
        self.mapping = mapping
        self.patience = patience
        self.scoring = scoring
        self.domain = tuple(domain) if domain is not None else None
        self.dtype = dtype
        self.explore_folds = explore_folds
        self.ranking: Ranking | None = None
        self.model_seconds = math.nan
        self.stopped = ""

    def order(self, names: Sequence[str], configs: Sequence[tuple]) -> list[int]:
        """Indices of ``configs`` (value tuples of the parameters ``names``) in measuring order;
        sets :attr:`ranking` and :attr:`model_seconds`."""
        mapping = self.mapping.restricted_to(names)
        mapped = [mapping.config(dict(zip(names, c))) for c in configs]
        start = time.perf_counter()
        kernel_for = kernel_source(self.kernel, self.device, self.domain, self.dtype)
        self.ranking = rank_configs(kernel_for, self.device, (c for c in mapped if c is not None), self.scoring,
                                    self.kernel if isinstance(self.kernel, str) else "")
        self.model_seconds = time.perf_counter() - start
        if self.ranking.rows and not any(r.ok for r in self.ranking.rows):
            raise TuneError(f"no configuration of the search space could be predicted for {self.ranking.kernel} on "
                            f"{self.device.name}: {self.ranking.rows[0].error}")
        place = {config: i for i, config in enumerate(self.sequence())}
        last = len(place)
        return sorted(range(len(configs)), key=lambda i: (place.get(mapped[i], last) if mapped[i] else last, i))

    def sequence(self) -> list[Config]:
        """The predicted configurations in measuring order: the predicted best, the best predicted
        of each other folding within ``explore_folds`` of it (time objective only), then the rest
        in the predicted order."""
        rows = [r for r in self.ranking.rows if r.ok] if self.ranking is not None else []
        if not rows:
            return []
        first = [rows[0]]
        if self.explore_folds > 0 and self.scoring.objective == "time":
            floor = (1 - self.explore_folds) * rows[0].lups_per_s
            folds = {tuple(rows[0].config.fold)}
            for row in rows[1:]:
                if row.lups_per_s < floor:
                    break
                if tuple(row.config.fold) not in folds:
                    folds.add(tuple(row.config.fold))
                    first.append(row)
        chosen = {r.config for r in first}
        return [r.config for r in first] + [r.config for r in rows if r.config not in chosen]

    def __call__(self, func: Any, searchspace: Any) -> tuple[tuple, float]:
        """Measure ``searchspace`` in the predicted order through ``func`` (Kernel Tuner's cost
        function, which raises ``StopCriterionReached`` when the budget is spent)."""
        names = list(searchspace.tune_params.keys())
        configs = list(searchspace.list)
        best: tuple[tuple, float] | None = None
        since = 0
        self.stopped = "budget"
        for i in self.order(names, configs):
            cost = func(list(configs[i]))
            if best is None or cost < best[1]:
                best, since = (configs[i], cost), 0
            else:
                since += 1
            if self.patience is not None and since >= self.patience:
                self.stopped = "patience"
                return best
        self.stopped = "space"
        return best if best is not None else ((), math.inf)


def config_of(result: dict, names: Sequence[str], mapping: ParamMapping) -> Config | None:
    """The launch configuration of one Kernel Tuner result (its parameter values)."""
    return mapping.restricted_to(names).config({n: result.get(n) for n in names})
