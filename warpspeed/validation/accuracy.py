"""Prediction accuracy against measurements (Ernst et al., JPDC 2023, sections 5.4-5.8).

Input: the rows of a measurement CSV
(:func:`warpspeed.validation.measurement_csv.read_measurement_csv`), each with
measured (``meas_*``) and predicted (``pred_*``) columns. Output, as frozen dataclasses:

* per metric (L1 wavefronts, L2 -> L1 load, L1 -> L2 store, DRAM load, DRAM store,
  performance) the mean absolute percentage error
  ``MAPE = 100 / n * sum |predicted - measured| / measured`` over the rows where both values are
  finite and the measured value is positive (rows without ncu counters are skipped per metric);
* ranking quality: Spearman's rank correlation between predicted and measured performance
  (``scipy.stats.spearmanr``, ties as average ranks), the measured performance of the
  best-predicted configuration relative to the best measured one, and how many of the measured
  top-k (k = 5) are among the predicted top-k.

:func:`plot_accuracy` draws predicted against measured values per metric (small multiples, log
axes, colored by block shape as in Ernst et al. 2023, section 5.1;
:func:`warpspeed.plots.block_color`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from warpspeed.files.jsonsafe import json_safe
from warpspeed.plots import BLOCK_SHAPE_LEGEND, block_color, new_figure, save_figure
from warpspeed.validation.measurement_csv import read_measurement_csv
from warpspeed.validation.percent import AccuracyError, mape
from warpspeed.validation.schema import COMPARED_METRICS, MeasurementTable

#: Size of the top group compared between predicted and measured ranking (``--top`` changes it).
DEFAULT_TOP_K = 5

#: Human-readable names of the compared metrics.
METRIC_LABELS: dict[str, str] = {
    "l1_wavefronts": "L1 wavefronts",
    "l2_load": "L2→L1 load",
    "l2_store": "L1→L2 store",
    "dram_load": "DRAM load",
    "dram_store": "DRAM store",
    "performance": "performance",
}


@dataclass(frozen=True)
class MetricAccuracy:
    """Error of one metric over ``n`` rows. Percentages in percent (0-100+)."""

    metric: str
    label: str
    unit: str
    n: int
    mape_percent: float  # mean absolute percentage error; NaN when n == 0
    max_ape_percent: float  # worst row
    worst_config: str  # the row with the largest error


@dataclass(frozen=True)
class RankingQuality:
    """How well predicted performance ranks the configurations (``n`` rows with both values)."""

    n: int
    spearman: float  # Spearman's rho, -1..1
    spearman_p_value: float
    best_predicted: str  # configuration with the highest predicted performance
    best_measured: str  # configuration with the highest measured performance
    best_predicted_relative: float  # measured perf of best_predicted / measured perf of best_measured
    top_k: int
    top_k_overlap: int  # measured top-k configurations that are also in the predicted top-k


@dataclass(frozen=True)
class AccuracyReport:
    """Accuracy of one measurement table."""

    kernel: str
    device: str
    rows: int
    metrics: tuple[MetricAccuracy, ...]
    ranking: RankingQuality | None  # None with fewer than 2 rows having both performances

    def metric(self, name: str) -> MetricAccuracy:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise AccuracyError(f"no metric {name!r}; metrics: {', '.join(m.metric for m in self.metrics)}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN becomes None)."""
        return json_safe(asdict(self))


def _value(row: Mapping[str, Any], column: str) -> float:
    v = row.get(column, math.nan)
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def row_label(row: Mapping[str, Any]) -> str:
    """``BXxBYxBZ`` plus `` fold FXxFYxFZ`` when folded (as :attr:`Config.label`)."""
    block = "x".join(str(int(row[f"block_{d}"])) for d in "xyz")
    fold = tuple(int(row.get(f"fold_{d}", 1)) for d in "xyz")
    return block + ("" if fold == (1, 1, 1) else " fold " + "x".join(map(str, fold)))


def _pairs(rows: Sequence[Mapping[str, Any]], measured: str, predicted: str) -> list[tuple[str, float, float]]:
    out = []
    for row in rows:
        m, p = _value(row, measured), _value(row, predicted)
        if math.isfinite(m) and math.isfinite(p) and m > 0:
            out.append((row_label(row), p, m))
    return out


def metric_accuracy(rows: Sequence[Mapping[str, Any]], metric: str) -> MetricAccuracy:
    """MAPE of one of :data:`warpspeed.validation.schema.COMPARED_METRICS` over ``rows``."""
    spec = {name: (m, p, u) for name, m, p, u in COMPARED_METRICS}
    if metric not in spec:
        raise AccuracyError(f"unknown metric {metric!r}; metrics: {', '.join(spec)}")
    measured_col, predicted_col, unit = spec[metric]
    pairs = _pairs(rows, measured_col, predicted_col)
    if not pairs:
        return MetricAccuracy(metric, METRIC_LABELS[metric], unit, 0, math.nan, math.nan, "")
    apes = [100.0 * abs(p - m) / m for _, p, m in pairs]
    worst = max(range(len(pairs)), key=lambda i: apes[i])
    return MetricAccuracy(metric, METRIC_LABELS[metric], unit, len(pairs),
                          mape([p for _, p, _ in pairs], [m for _, _, m in pairs]), apes[worst], pairs[worst][0])


def _top(pairs: Sequence[tuple[str, float, float]], index: int, k: int) -> list[str]:
    """Labels of the k largest values (ties broken by label, so the result is deterministic)."""
    return [label for label, *_ in sorted(pairs, key=lambda t: (-t[index], t[0]))[:k]]


def ranking_quality(rows: Sequence[Mapping[str, Any]], top_k: int = DEFAULT_TOP_K) -> RankingQuality | None:
    """Spearman rho, best-predicted relative performance and top-k overlap (performance columns)."""
    from scipy.stats import spearmanr

    if top_k < 1:
        raise AccuracyError(f"top_k must be >= 1, got {top_k}")
    pairs = _pairs(rows, "meas_lups_per_s", "pred_lups_per_s")
    if len(pairs) < 2:
        return None
    labels = [lab for lab, *_ in pairs]
    if len(set(labels)) != len(labels):
        raise AccuracyError("ranking needs one row per configuration; duplicate configuration(s): "
                            f"{', '.join(sorted({lab for lab in labels if labels.count(lab) > 1}))}")
    predicted, measured_values = [p for _, p, _ in pairs], [m for _, _, m in pairs]
    if len(set(predicted)) == 1 or len(set(measured_values)) == 1:
        rho = p_value = math.nan  # a constant ranking has no rank correlation
    else:
        result = spearmanr(predicted, measured_values)
        rho, p_value = float(result.statistic), float(result.pvalue)
    measured = {lab: m for lab, _, m in pairs}
    best_pred = _top(pairs, 1, 1)[0]
    best_meas = _top(pairs, 2, 1)[0]
    k = min(top_k, len(pairs))
    overlap = len(set(_top(pairs, 1, k)) & set(_top(pairs, 2, k)))
    return RankingQuality(n=len(pairs), spearman=rho, spearman_p_value=p_value, best_predicted=best_pred,
                          best_measured=best_meas, best_predicted_relative=measured[best_pred] / measured[best_meas],
                          top_k=k, top_k_overlap=overlap)


def accuracy_report(rows: Sequence[Mapping[str, Any]], kernel: str = "", device: str = "",
                    top_k: int = DEFAULT_TOP_K) -> AccuracyReport:
    """Every metric's MAPE and the ranking quality of ``rows``."""
    ok = [r for r in rows if not str(r.get("error", "") or "").strip()]
    return AccuracyReport(kernel=kernel, device=device, rows=len(ok),
                          metrics=tuple(metric_accuracy(ok, name) for name, *_ in COMPARED_METRICS),
                          ranking=ranking_quality(ok, top_k))


def table_accuracy(table: MeasurementTable, top_k: int = DEFAULT_TOP_K) -> AccuracyReport:
    return accuracy_report(table.rows, table.kernel, table.device, top_k)


def load_accuracy(path: str | Path, top_k: int = DEFAULT_TOP_K) -> AccuracyReport:
    """:func:`accuracy_report` of a measurement CSV file."""
    return table_accuracy(read_measurement_csv(path), top_k)


def plot_accuracy(rows: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Predicted vs measured, one panel per metric (log axes, diagonal, block-shape colors).

    Metrics without any valid row get an empty panel saying so. The format follows the suffix
    (png, pdf, svg, ...). Returns the written path.
    """
    fig = accuracy_figure(rows, title)
    return save_figure(fig, path, ACCURACY_DPI)


#: Resolution of the accuracy figure (dots per inch) and the size of one panel (inches).
ACCURACY_DPI = 120
_PANEL_IN = (4.2, 4.0)
_PANEL_COLUMNS = 3
#: Margin around the data of a panel: the axes span [min / f, max * f].
_AXIS_MARGIN = 1.3
#: Glup/s per lup/s.
_GIGA = 1e-9


def _panel_points(rows: Sequence[Mapping[str, Any]], name: str, meas_col: str, pred_col: str) -> list[tuple]:
    scale = _GIGA if name == "performance" else 1.0
    out = []
    for r in rows:
        m, p = _value(r, meas_col), _value(r, pred_col)
        if math.isfinite(m) and math.isfinite(p) and m > 0 and p > 0:
            out.append((scale * m, scale * p, block_color(tuple(int(r[f"block_{d}"]) for d in "xyz"))))
    return out


def _draw_panel(ax: Any, ok: Sequence[Mapping[str, Any]], name: str, meas_col: str, pred_col: str, unit: str) -> None:
    ax.set_title(METRIC_LABELS[name])
    points = _panel_points(ok, name, meas_col, pred_col)
    if not points:
        ax.text(0.5, 0.5, "no measured data", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    shown_unit = "Glup/s" if name == "performance" else unit
    xs, ys, colors = zip(*points)
    ax.scatter(xs, ys, c=colors, s=22, edgecolors="black", linewidths=0.3)
    lo, hi = min(xs + ys) / _AXIS_MARGIN, max(xs + ys) * _AXIS_MARGIN
    ax.plot([lo, hi], [lo, hi], color="gray", linestyle="--", linewidth=1, label="predicted = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(f"measured, {shown_unit}")
    ax.set_ylabel(f"predicted, {shown_unit}")
    err = metric_accuracy(ok, name)
    ax.text(0.04, 0.94, f"MAPE {err.mape_percent:.1f} % (n={err.n})", transform=ax.transAxes, fontsize=8, va="top")


def accuracy_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> Any:
    """The figure of :func:`plot_accuracy` (a :class:`matplotlib.figure.Figure`, not shown anywhere)."""
    from matplotlib.patches import Patch

    ok = [r for r in rows if not str(r.get("error", "") or "").strip()]
    nrows = math.ceil(len(COMPARED_METRICS) / _PANEL_COLUMNS)
    fig = new_figure(_PANEL_IN[0] * _PANEL_COLUMNS, _PANEL_IN[1] * nrows)
    axes = fig.subplots(nrows, _PANEL_COLUMNS, squeeze=False)
    for ax, (name, meas_col, pred_col, unit) in zip(axes.flat, COMPARED_METRICS):
        _draw_panel(ax, ok, name, meas_col, pred_col, unit)
    for ax in list(axes.flat)[len(COMPARED_METRICS):]:
        ax.set_visible(False)
    handles = [Patch(color=c, label=lab) for c, lab in BLOCK_SHAPE_LEGEND]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, title="block shape (RGB = log2 x, y, z)")
    fig.suptitle(title or "predicted vs measured")
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    return fig
