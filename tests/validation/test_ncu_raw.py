"""Parsing real Nsight Compute output: the three raw pages ncu 2025.3.1 printed on an H200
(tests/data/ncu/README.md gives their provenance).

Every expected number is read off the files by hand (the cell in the file, its unit from the
units row); the per-update checks use the paper stencil's 640 x 512 x 512 = 167,772,160 lattice
updates per launch and the H200 measurement notes (L1 wavefronts per update 2.27 / 2.02 / 1.67).
"""

from __future__ import annotations

import math

import pytest

from warpspeed.validation.ncu import NCU_METRICS, NCU_SECTOR_BYTES
from warpspeed.validation.ncu_csv import counters_for_kernel, parse_ncu_csv, parse_ncu_number, unit_scale
from warpspeed.validation.plan import MeasurementError
from warpspeed.validation.schema import Timing, measured_columns
from tests.paths import DATA

RAW = DATA / "ncu"
LUPS = 640 * 512 * 512

#: Cells read by hand from the three files: (file, function name, block, grid, {metric: value in base units}).
H200_PROFILES = [
    ("ncu_star3d-r4_8x4x32_f1x1x2.csv", "ws_star3d_r4_b8x4x32_f1x1x2", (8, 4, 32), (80, 128, 8), {
        "l1tex__data_pipe_lsu_wavefronts.sum": 381_069_271,
        "lts__t_sectors_srcunit_tex_op_read.sum": 221_867_339,
        "lts__t_sectors_srcunit_tex_op_write.sum": 41_943_040,
        "dram__bytes_read.sum": 1_553_976_320,
        "dram__bytes_write.sum": 1_328_171_776,
        "gpc__cycles_elapsed.max": 3_351_358,
        "sm__cycles_elapsed.avg.per_second": 1_976_533_073.20,
        "gpu__time_duration.sum": 1_694_240e-9,  # "ns"
    }),
    ("ncu_star3d-r4_32x32x1_f1x1x1.csv", "ws_star3d_r4_b32x32x1_f1x1x1", (32, 32, 1), (20, 16, 512), {
        "l1tex__data_pipe_lsu_wavefronts.sum": 338_450_165,
        "lts__t_sectors_srcunit_tex_op_read.sum": 398_056_732,
        "lts__t_sectors_srcunit_tex_op_write.sum": 41_943_040,
        "dram__bytes_read.sum": 1_880_976_640,
        "dram__bytes_write.sum": 1_337_755_904,
        "gpc__cycles_elapsed.max": 3_212_331,
        "sm__cycles_elapsed.avg.per_second": 1_972_741_509.05,
        "gpu__time_duration.sum": 1_626_016e-9,
    }),
    ("ncu_star3d-r4_256x4x1_f1x2x1.csv", "ws_star3d_r4_b256x4x1_f1x2x1", (256, 4, 1), (3, 64, 512), {
        "l1tex__data_pipe_lsu_wavefronts.sum": 280_870_771,
        "lts__t_sectors_srcunit_tex_op_read.sum": 424_297_710,
        "lts__t_sectors_srcunit_tex_op_write.sum": 41_943_040,
        "dram__bytes_read.sum": 1_937_205_504,
        "dram__bytes_write.sum": 1_336_661_504,
        "gpc__cycles_elapsed.max": 2_941_521,
        "sm__cycles_elapsed.avg.per_second": 1_975_255_777.30,
        "gpu__time_duration.sum": 1_488_416e-9,
    }),
]


@pytest.mark.parametrize("name, function, block, grid, expected", H200_PROFILES, ids=[p[0] for p in H200_PROFILES])
def test_the_runners_metrics_from_real_raw_pages(name, function, block, grid, expected):
    """The metrics the runner asks for, in base units, from ncu's own output on an H200."""
    records = parse_ncu_csv((RAW / name).read_text(), tuple(NCU_METRICS))
    assert len(records) == 1
    r = records[0]
    assert (r["id"], r["kernel_name"], r["block_size"], r["grid_size"]) == (0, function, block, grid)
    assert r["problems"] == {}
    for metric, value in expected.items():
        assert r[metric] == pytest.approx(value, rel=1e-12), metric
    assert counters_for_kernel(records, function, tuple(NCU_METRICS)) == pytest.approx(expected, rel=1e-12)


def test_per_update_volumes_match_the_measurement_notes():
    """Converted to the row's per-update columns: L1 wavefronts per update 2.27 / 2.02 / 1.67 (the
    H200 notes), and exactly one 8-byte store per update to L2 (41,943,040 sectors x 32 B)."""
    per_lup = []
    for name, function, _, _, _ in H200_PROFILES:
        counters = counters_for_kernel(parse_ncu_csv((RAW / name).read_text(), tuple(NCU_METRICS)), function,
                                       tuple(NCU_METRICS))
        cols = measured_columns(LUPS, Timing((1.5e-3,)), counters)
        assert cols["meas_l2_store_bytes_per_lup"] == 8.0
        assert all(math.isfinite(v) for v in cols.values())
        per_lup.append(round(cols["meas_l1_wavefronts_per_lup"], 2))
    assert per_lup == [2.27, 2.02, 1.67]
    assert 41_943_040 * NCU_SECTOR_BYTES == 8 * LUPS


@pytest.mark.parametrize("metric, value", [
    ("launch__cluster_max_active", 0.0),  # unit "cluster"
    ("launch__sm_count", 132.0),  # "SM"
    ("launch__registers_per_thread", 32.0),  # "register/thread"
    ("launch__shared_mem_per_block", 1024.0),  # "byte/block", thousands separator
    ("profiler__replayer_passes", 1.0),  # "pass"
    ("launch__occupancy_cluster_pct", 0.0),  # "%"
    ("launch__thread_count", 83_886_080.0),  # "thread"
    ("launch__occupancy_limit_registers", 2.0),  # "block"
    ("sm__maximum_warps_avg_per_active_cycle", 64.0),  # "warp"
    ("launch__waves_per_multiprocessor", 310.30),  # no unit, decimals
    ("device__attribute_l2_cache_size", 62_914_560.0),  # no unit, thousands separators
])
def test_every_unit_of_the_raw_page_can_be_asked_for(metric, value):
    """Other columns of the same page, with the units the runner once failed on."""
    r = parse_ncu_csv((RAW / "ncu_star3d-r4_8x4x32_f1x1x2.csv").read_text(), [metric])[0]
    assert r[metric] == pytest.approx(value)
    assert r["problems"] == {}


def test_text_cells_are_read_only_when_asked_for():
    """``No-CC`` sits in a column the runner does not ask for: it is not read. Asked for, it is a
    problem of that launch naming the metric, and looking the counters up raises it."""
    text = (RAW / "ncu_star3d-r4_32x32x1_f1x1x1.csv").read_text()
    metric = "device__attribute_confidential_computing_mode"
    records = parse_ncu_csv(text, ["dram__bytes_read.sum", metric])
    assert records[0]["dram__bytes_read.sum"] == 1_880_976_640
    assert math.isnan(records[0][metric])
    assert "No-CC" in records[0]["problems"][metric]
    with pytest.raises(MeasurementError, match=f"{metric}.*No-CC"):
        counters_for_kernel(records, "ws_star3d_r4_b32x32x1_f1x1x1", ["dram__bytes_read.sum", metric])


def test_a_requested_metric_missing_from_the_page_is_named():
    text = (RAW / "ncu_star3d-r4_256x4x1_f1x2x1.csv").read_text()
    with pytest.raises(MeasurementError, match="no column for the requested metric.*lts__t_sectors_op_atom.sum"):
        parse_ncu_csv(text, ["dram__bytes_read.sum", "lts__t_sectors_op_atom.sum"])


def test_a_profile_of_another_kernel_is_named():
    records = parse_ncu_csv((RAW / "ncu_star3d-r4_256x4x1_f1x2x1.csv").read_text(), tuple(NCU_METRICS))
    with pytest.raises(MeasurementError, match="no launch of 'ws_star3d_r4_b8x4x32_f1x1x2'.*ws_star3d_r4_b256x4x1"):
        counters_for_kernel(records, "ws_star3d_r4_b8x4x32_f1x1x2", tuple(NCU_METRICS))


@pytest.mark.parametrize("unit, scale", [
    ("", 1.0), ("%", 1.0), ("ns", 1e-9), ("nsecond", 1e-9), ("us", 1e-6), ("usecond", 1e-6), ("ms", 1e-3),
    ("msecond", 1e-3), ("s", 1.0), ("second", 1.0), ("hz", 1.0), ("Mhz", 1e6), ("GHz", 1e9),
    ("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Kibyte", 1024.0),
    ("Msector", 1e6), ("cycle", 1.0), ("cycles", 1.0), ("cycle/nsecond", 1e9), ("cycle/second", 1.0),
    ("Gbyte/second", 1e9), ("byte/block", 1.0), ("register/thread", 1.0), ("warp", 1.0), ("block", 1.0),
    ("thread", 1.0), ("cluster", 1.0), ("pass", 1.0), ("SM", 1.0), ("inst/cycle", 1.0), ("Kwarp", 1e3),
])
def test_unit_scales(unit, scale):
    assert unit_scale(unit) == pytest.approx(scale)


@pytest.mark.parametrize("unit", ["furlong", "Xbyte", "mbyte", "byte/furlong", "msector"])
def test_unknown_units_are_not_guessed(unit):
    """A unit that is not understood is never read as a plain count (``mbyte`` could be milli)."""
    assert unit_scale(unit) is None


def test_an_unknown_unit_of_a_requested_metric_is_named():
    bad = '"ID","Kernel Name","dram__bytes_read.sum"\n"","","furlong"\n"0","k","1"\n'
    with pytest.raises(MeasurementError, match="dram__bytes_read.sum.*furlong"):
        parse_ncu_csv(bad, ["dram__bytes_read.sum"])


@pytest.mark.parametrize("text, value", [("1,694,240", 1_694_240.0), ("1,976,533,073.20", 1_976_533_073.2),
                                         ("310.30", 310.3), ("0", 0.0), ("1.5e3", 1500.0)])
def test_numbers_with_thousands_separators(text, value):
    assert parse_ncu_number(text) == value


def test_not_a_number():
    assert math.isnan(parse_ncu_number("n/a"))
    with pytest.raises(MeasurementError, match="PolicySpread"):
        parse_ncu_number("PolicySpread")


def test_no_table_reports_ncus_error_lines():
    out = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
    with pytest.raises(MeasurementError, match="no ncu CSV table.*ERR_NVGPUCTRPERM"):
        parse_ncu_csv(out, ["dram__bytes_read.sum"])
