"""The overlap model (warpspeed.overlap): a DRAM-bound copy by hand from the device file, the
smooth maximum, and its constants per device."""

from __future__ import annotations

import dataclasses
import math
import tomllib

import pytest

from warpspeed import Field, Kernel, load, store
from warpspeed.errors import DeviceError
from warpspeed.hardware.device import load_device, load_device_file
from warpspeed.kernel.description import X, Y
from warpspeed.models import estimate_time
from warpspeed.overlap import overlap_model, overlap_params
from warpspeed.overlap.combine import smooth_max
from warpspeed.overlap.params import CORE_OVERLAP_EXPONENT, MISS_REQUESTS_PER_CYCLE, OVERLAP_EXPONENT
from warpspeed.predict import Predictor
from tests.paths import ROOT

DEVICES = ROOT / "warpspeed" / "hardware" / "devices"
N = 1 << 24


def _toml(name: str) -> dict:
    return tomllib.loads((DEVICES / f"{name}.toml").read_text())


def test_smooth_maximum_by_hand():
    assert smooth_max(3.0, 4.0, 2.0) == pytest.approx(5.0)
    assert smooth_max(1.0, 1.0, 1.0) == pytest.approx(2.0)
    assert smooth_max(0.0, 2.0, 3.5) == 2.0 and smooth_max(0.0, 0.0, 3.5) == 0.0
    assert smooth_max(1e300, 1e300, 3.5) == pytest.approx(1e300 * 2 ** (1 / 3.5))  # no overflow


def test_copy_on_the_a100_by_hand(a100):
    """dst[x] = src[x] in doubles, blocks of 256 threads. Per warp: the load touches 256 aligned
    bytes for the first time, two lines, every lane misses: max(2 bank wavefronts, 0 + 2 lines) =
    2; the store 2 wavefronts: 4 / 32 = 0.125 cycles per lup; requests 2 + 2 lines per warp, 0.125
    per lup at the request rate. Wave end: 8 blocks of 256 threads per SM (2048 threads), the
    A100's latencies 37 + 224 + 290 = 551 cycles (no pointer chase of its own: the Ampere latency
    file's, AMALI Table 2) over 2048 lups. Rows of
    2 KiB from 256-byte aligned arrays: no partly covered sector. 8 resident blocks per SM: the
    DRAM curve's smooth minimum of its peak B and bytes in flight / latency with the exponent
    sharpened 8 / 2 times, 16 B in flight per thread (one load and one store) x 2048 threads x
    108 SMs. Block dispatch 81.68 ns per block and SM over 256 lups x
    108 SMs; launch overhead of the A100 (kernel-launch.toml) over the 2^24 lups."""
    fields = (Field("src", 8, (N,)), Field("dst", 8, (N,)))
    p = Predictor(Kernel("copy", fields, (load("src", X), store("dst", X)), (N, 1, 1)), a100).predict((256, 1, 1))
    r = overlap_model(p, overlap_params(a100))
    table = _toml("A100-SXM4-40GB")
    dev = table["device"]
    launch = tomllib.loads((ROOT / "fits" / "kernel-launch.toml").read_text())
    ampere = tomllib.loads((DEVICES.parent / "latencies" / "ampere.toml").read_text())["memory"]
    drain = ampere["l1_latency_cycles"] + ampere["l2_latency_cycles"] + ampere["dram_latency_cycles"]
    assert drain == 37 + 224 + 290
    assert r.l1_data_wavefronts_per_lup == pytest.approx(4 / 32)
    assert r.l1_requests_per_lup == pytest.approx(4 / 32)
    assert r.drain_cycles_per_lup == pytest.approx(drain / 2048)
    assert r.dram_sector_cost == 1.0
    l1 = (4 / 32 / MISS_REQUESTS_PER_CYCLE + drain / 2048) / (dev["sms"] * dev["clock_ghz"] * 1e9)
    in_flight = 16 * 2048 * dev["sms"]
    peak, sharpness = dev["dram_curve_peak_gb_s"], dev["dram_curve_sharpness"] * 8 / 2
    x = in_flight / (dev["dram_curve_latency_ns"] * 1e-9) / 1e9 / peak
    bandwidth = peak / (1 + x ** -sharpness) ** (1 / sharpness)
    assert r.dram_bandwidth_gb_s == pytest.approx(bandwidth)
    dram = 16 / (bandwidth * 1e9)
    l2_table = next(level for level in table["memory"] if level["scope"] == "device")
    l2 = 16 / (l2_table["bandwidth_gb_s"] * 1e9)
    dispatch = launch["block_dispatch_ns"] * 1e-9 / (256 * dev["sms"])
    overhead = launch["parts"][dev["launch_overhead_part"]]["overhead_us"] * 1e-6 / N
    memory = (l1 ** OVERLAP_EXPONENT + dram ** OVERLAP_EXPONENT) ** (1 / OVERLAP_EXPONENT)
    sm = (9 / 128 + drain / 2048) / (dev["sms"] * dev["clock_ghz"] * 1e9)
    body = max((memory ** CORE_OVERLAP_EXPONENT + sm ** CORE_OVERLAP_EXPONENT) ** (1 / CORE_OVERLAP_EXPONENT), l2,
               dispatch)
    assert r.lups_per_s == pytest.approx(1 / (body + overhead), rel=1e-9)
    assert r.limiter == "dram" and r.dram_load_bytes_per_lup == pytest.approx(8) and r.l2_load_bytes_per_lup == 8
    e = estimate_time("overlap", p)
    assert e.lups_per_s == r.lups_per_s and e.details["limits"]["dram"] == pytest.approx(1 / dram)


def test_a_misaligned_copy_pays_its_partly_covered_sectors(a100):
    """The same copy with one ghost cell in front of each array (dst[x + 1] = src[x + 1]) in
    blocks 4 wide: each block row covers 32 B from 8 B into a sector, two partly covered sectors
    per row of each array: loads cost 2 x 32 / 32 = 2 sector transfers per byte, stores
    2 x 2 x 32 / 32 = 4; blocks 256 wide: 2 KiB rows from 8 B in, 63 full and 2 partial
    sectors. The factor applies to the 8 + 8 B the copy moves; the capacity curve's partial-store
    reads of the narrow blocks (the same sectors, about 1 % of the volume) are not counted again."""
    fields = (Field("src", 8, (N + 2,)), Field("dst", 8, (N + 2,)))
    kernel = Kernel("copy1", fields, (load("src", X + 1), store("dst", X + 1)), (N, 1, 1))
    params = overlap_params(a100)
    narrow = overlap_model(Predictor(kernel, a100).predict((4, 1, 1)), params)
    assert narrow.dram_sector_cost == pytest.approx((8 * 2 + 8 * 4) / 16, rel=0.02)
    wide = overlap_model(Predictor(kernel, a100).predict((256, 1, 1)), params)
    assert wide.dram_sector_cost == pytest.approx((8 * (63 + 2) / 64 + 8 * (63 + 4) / 64) / 16, rel=0.005)
    off = overlap_model(Predictor(kernel, a100).predict((4, 1, 1)),
                        dataclasses.replace(params, partial_sector_load_cost=1.0, partial_sector_store_cost=1.0))
    assert off.dram_sector_cost == 1.0
    assert off.seconds_per_lup["dram"] * narrow.dram_sector_cost == pytest.approx(narrow.seconds_per_lup["dram"], rel=0.02)
    assert narrow.limiter == "dispatch"  # blocks of 4 threads: one block per 81.7 ns and SM binds


def test_constants_per_device():
    h200, mi100 = load_device("H200"), load_device("MI100")
    # no pointer chase of the MI100: the MI210's DRAM latency at the MI100's clock
    chase, clock = _toml("MI210")["device"]["dram_latency_ns"], _toml("MI100")["device"]["clock_ghz"]
    assert overlap_params(mi100).drain_cycles == pytest.approx(chase * clock)
    assert "miss-stage request rate" not in overlap_params(mi100).fitted
    assert "miss-stage request rate" in overlap_params(h200).fitted


@pytest.mark.parametrize("table, message", [
    ("overlap_exponent = -1", "overlap_exponent is out of range (got -1); allowed: a number from 1 to 100"),
    ("core_exponent = 0.5", "core_exponent is out of range (got 0.5); allowed: a number from 1 to 100"),
    ("exponent = 3", "unknown key(s) exponent; allowed: overlap_exponent"),
    ("latencies_from = \"H100-PCIe-80GB\"", "[overlap] latencies_from: a device fact, read from [device] only; move it "
                                             "to the [device] table"),
])
def test_bad_overlap_tables_are_one_line_errors(tmp_path, table, message):
    """A value out of range, an unknown key or a device fact is refused when the device loads."""
    text = (DEVICES / "V100-PCIe-32GB.toml").read_text() + f"\n[overlap]\n{table}\n"
    path = tmp_path / "d.toml"
    path.write_text(text)
    with pytest.raises(DeviceError) as err:
        overlap_params(load_device_file(path))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_device_file_may_give_the_core_exponent(tmp_path):
    text = (DEVICES / "V100-PCIe-32GB.toml").read_text() + "\n[overlap]\ncore_exponent = 2.5\n"
    path = tmp_path / "d.toml"
    path.write_text(text)
    assert overlap_params(load_device_file(path)).core_exponent == 2.5
    assert overlap_params(load_device("V100-PCIe-32GB")).core_exponent == CORE_OVERLAP_EXPONENT


def test_every_builtin_device_has_the_constants():
    from warpspeed.hardware.device import all_devices

    for device in all_devices():
        params = overlap_params(device)
        assert math.isfinite(params.drain_cycles) and params.drain_cycles > 0, device.name


def test_the_idle_threads_of_edge_blocks_update_nothing(a100):
    """The copy of 640 doubles per row (x) in 256-thread blocks: three blocks per row, the third with
    128 working threads, so a block updates 640 / 3 cells on average. The wave-end latency (551
    cycles, as above) over 8 resident blocks x 640 / 3 lups, the dispatch (81.68 ns per block and
    SM) over 640 / 3 lups x 108 SMs; with 768 cells per row (whole blocks) 8 x 256 and 256."""
    launch = tomllib.loads((ROOT / "fits" / "kernel-launch.toml").read_text())
    dev = _toml("A100-SXM4-40GB")["device"]
    params = overlap_params(a100)
    for width, per_block in ((640, 640 / 3), (768, 256)):
        fields = (Field("src", 8, (width, 256)), Field("dst", 8, (width, 256)))
        kernel = Kernel("copy2d", fields, (load("src", X, Y), store("dst", X, Y)), (width, 256, 1))
        r = overlap_model(Predictor(kernel, a100).predict((256, 1, 1)), params)
        assert r.drain_cycles_per_lup == pytest.approx((37 + 224 + 290) / (8 * per_block))
        assert r.dispatch_seconds_per_lup == pytest.approx(launch["block_dispatch_ns"] * 1e-9 / (per_block * dev["sms"]))
