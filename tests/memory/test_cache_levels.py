"""Cache levels as data and the traffic of the levels beyond the first and the L2 (AMD).

Numbers are derived by hand in the docstrings or counted by brute force over every thread of
the blocks involved (the enumeration helpers of test_wave)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.memory.wave.test_wave import encode, enumerate_cells, line_rows
from warpspeed.errors import DeviceError
from warpspeed.summary import prediction_record
from warpspeed.hardware.device import load_device
from warpspeed.kernel.builtin import copy_kernel, star_stencil
from warpspeed.kernel.description import X, Field, FlopCounts, Kernel, load, store
from warpspeed.launch.geometry import analyze_launch
from warpspeed.memory.addresses import compile_kernel
from warpspeed.memory.levels import shader_array_compulsory, shader_array_ranges
from warpspeed.memory.wave import WaveModel
from warpspeed.predict import Predictor
from tests.paths import ROOT

LINE = 128


def test_nvidia_levels_are_the_base_fields():
    a100 = load_device("A100-SXM4-40GB")
    levels = a100.levels
    assert [(lv.name, lv.scope) for lv in levels] == [("L1", "cu"), ("L2", "device")]
    assert (levels[0].bytes, levels[0].instances, levels[1].bytes) == (a100.l1.bytes, a100.sms, a100.l2.bytes)
    assert levels[1].bandwidth_gb_s == a100.l2.bandwidth_gb_s


@pytest.mark.parametrize("device, names", [
    ("W6800", ["L0", "GL1", "L2", "MALL"]), ("RX6900XT", ["L0", "GL1", "L2", "MALL"]),
    ("RX5500XT", ["L0", "GL1", "L2"]), ("MI300X", ["L1", "L2", "MALL"]), ("MI210", ["L1", "L2"]),
])
def test_amd_hierarchies(device, names):
    """RDNA: L0 per CU, graphics L1 per shader array (8 on Navi 21, 2 on Navi 14), L2, and on RDNA 2
    the 128 MiB Infinity Cache; CDNA 3: vector L1, L2, 256 MiB Infinity Cache; CDNA 2: L1, L2."""
    levels = load_device(device).levels
    assert [lv.name for lv in levels] == names
    gl1 = next((lv for lv in levels if lv.scope == "shader_array"), None)
    if gl1 is not None:
        assert gl1.bytes == 128 * 1024 and gl1.instances == (2 if device == "RX5500XT" else 8)
        assert gl1.dispatch == "round_robin" and gl1.write == "evict"
    mall = next((lv for lv in levels if lv.scope == "memory_side"), None)
    if mall is not None:
        assert mall.bytes == (256 if device == "MI300X" else 128) * 2**20


W6800_FILE = ROOT / "warpspeed" / "hardware" / "devices" / "W6800.toml"


@pytest.mark.parametrize("table, message", [
    ('name = "X"\nscope = "memory_side"\nbytes = 1\nline_bytes = 128\nsector_bytes = 128\nwrite = "back"\n'
     'instances = 1\ncolour = 1', "unknown key"),
    ('name = "X"\nscope = "cu"\nbytes = 1\nline_bytes = 128\nsector_bytes = 128\nwrite = "through"\nbanks = 32\n'
     'bank_bytes = 4', "needs exactly one level with scope 'cu'"),
    ('name = "X"\nscope = "memory_side"\nbytes = 0\nline_bytes = 128\nsector_bytes = 128\nwrite = "back"\n'
     'instances = 1', "bytes must be a positive integer"),
    ('name = "X"\nscope = "memory_side"\nbytes = 1\nline_bytes = 128\nsector_bytes = 128\nwrite = "later"\n'
     'instances = 1', "write must be one of through, evict, back"),
    ('name = "X"\nscope = "shader_array"\nbytes = 1\nline_bytes = 128\nsector_bytes = 128\nwrite = "evict"\n'
     'instances = 2\ndispatch = "random"', "dispatch must be one of round_robin, contiguous"),
    ('name = "X"\nscope = "device"\nbytes = 1\nline_bytes = 128\nsector_bytes = 128\nwrite = "back"\n'
     'effective_bytes = 1\nbandwidth_gb_s = 1.0', "needs exactly one level with scope 'device'"),
])
def test_bad_memory_tables_name_the_key(tmp_path, table, message):
    """A further ``[[memory]]`` table appended to the W6800 file (after its Infinity Cache)."""
    path = tmp_path / "dev.toml"
    path.write_text(W6800_FILE.read_text() + f"\n[[memory]]\n{table}\n")
    with pytest.raises(DeviceError, match=message):
        load_device(str(path))


def test_memory_levels_out_of_order(tmp_path):
    """A shader-array level after the A100's L2."""
    text = (W6800_FILE.parent / "A100-SXM4-40GB.toml").read_text()
    path = tmp_path / "dev.toml"
    path.write_text(text + '\n[[memory]]\nname = "X"\nscope = "shader_array"\nbytes = 1\nline_bytes = 128\n'
                    'sector_bytes = 128\nwrite = "evict"\ninstances = 2\n')
    with pytest.raises(DeviceError, match="from the SIMDs outwards"):
        load_device(str(path))


def test_shader_array_ranges_by_hand():
    """8 blocks from block 10 on 2 arrays: round robin gives array 0 blocks 10, 12, 14, 16; contiguous
    gives array 0 blocks 10-13 and array 1 blocks 14-17."""
    assert shader_array_ranges(10, 8, 2, "round_robin") == [(10, 10), (12, 12), (14, 14), (16, 16)]
    assert shader_array_ranges(10, 8, 2, "contiguous") == [(10, 13)]
    assert shader_array_ranges(10, 8, 2, "contiguous", array=1) == [(14, 17)]


def _three_point(cells: int) -> Kernel:
    src, dst = Field("src", 8, (cells + 2,)), Field("dst", 8, (cells,))
    return Kernel(name="three_point", fields=(src, dst), domain=(cells, 1, 1),
                  accesses=(load("src", X), load("src", X + 1), load("src", X + 2), store("dst", X)),
                  flops=FlopCounts(adds=2), dtype="float64")


@pytest.mark.parametrize("dispatch, expected", [("contiguous", 10.0), ("round_robin", 12.0)])
def test_shader_array_sharing_by_hand(dispatch, expected):
    """1-D three-point double stencil on 128 cells, 4 blocks of 32 threads on 2 shader arrays.
    Cell x reads src[x .. x + 2], bytes 8x .. 8x + 23, 128 B lines. Contiguous: array 0 holds
    blocks 0 and 1 (x 0..63: bytes 0..527, lines 0..4): 5 lines for 64 updates, 10 B/lup. Round
    robin: blocks 0 and 2, x 0..31 (bytes 0..271, lines 0..2) and x 64..95 (bytes 512..783, lines
    4..6): 6 lines, 12 B/lup. The first level's own compulsory volume is per block: 3 lines for 32
    updates, 12 B/lup, so contiguous dispatch saves the halo lines the two blocks share."""
    kernel = _three_point(128)
    device = load_device("W6800")
    info = analyze_launch(kernel, device, (32, 1, 1))
    assert info.launch.grid == (4, 1, 1)
    got, blocks = shader_array_compulsory(WaveModel(compile_kernel(kernel)), info.launch, 0, 4, 2, dispatch, LINE)
    assert blocks == 2 and got["src"] == pytest.approx(expected) and got["dst"] == 0


@pytest.mark.parametrize("dispatch", ["round_robin", "contiguous"])
@pytest.mark.parametrize("block", [(16, 4, 2), (8, 8, 1)])
def test_shader_array_footprint_against_enumeration(dispatch, block):
    """The lines the blocks of one shader array load together, against the union over every
    thread's addresses of those blocks (7-point stencil, a wave of 24 blocks on 3 arrays)."""
    kernel = star_stencil(3, 1, (40, 24, 12))
    device = load_device("W6800")
    launch = analyze_launch(kernel, device, block).launch
    model = WaveModel(compile_kernel(kernel))
    first = 5
    ranges = shader_array_ranges(first, 24, 3, dispatch)
    lines, lups = model.group_load_lines(launch, ranges, LINE)
    cells = np.concatenate([enumerate_cells(launch, a, b - a + 1) for a, b in ranges])
    assert lups == len(cells)
    for field in kernel.fields:
        (rows,) = encode(line_rows(kernel, field, cells, ("load",), "nd", LINE))
        assert lines[field.name] == len(np.unique(rows))


def test_levels_of_a_prediction():
    """W6800, 7-point stencil: L0 loads what the four-limiter model's first level requests; the
    graphics L1 requests at most that (it shares lines between blocks and keeps some of the
    rest); the L2's traffic is the wave model's misses; behind the Infinity Cache DRAM sees at
    most the L2's misses; the L2 limit is its bandwidth over the graphics L1's loads and the
    stores; the shader array and Infinity Cache have no bandwidth in the file: not modelled."""
    device = load_device("W6800")
    p = Predictor(star_stencil(3, 1, (256, 128, 64)), device).predict((32, 4, 2))
    levels = {lv.name: lv for lv in p.cache_levels}
    assert list(levels) == ["L0", "GL1", "L2", "MALL"]
    assert levels["L0"].load_bytes_per_lup == pytest.approx(p.l2_load_bytes_per_lup)
    assert levels["GL1"].load_bytes_per_lup <= levels["L0"].load_bytes_per_lup
    assert levels["GL1"].store_bytes_per_lup == levels["L0"].store_bytes_per_lup  # write-evict: stores go on
    assert levels["MALL"].load_bytes_per_lup <= levels["L2"].load_bytes_per_lup
    assert levels["MALL"].load_bytes_per_lup == pytest.approx(p.dram.load_bytes_per_lup)
    served = levels["GL1"].load_bytes_per_lup + levels["L0"].store_bytes_per_lup
    assert p.roofline.l2_lups_per_s == pytest.approx(device.l2.bandwidth_gb_s * 1e9 / served)
    assert levels["GL1"].lups_per_s is None and levels["MALL"].lups_per_s is None
    assert set(p.roofline.limits) == {"fp", "l1", "l2", "dram"}
    assert [lv["name"] for lv in prediction_record(p)["levels"]][:3] == ["FP", "L0", "GL1"]


def test_first_level_lines_against_nvidia_sectors_by_hand():
    """2-D 5-point double stencil, block 32 x 4, rows 128 B-aligned (field base at 120 B, so that the
    first interior cell starts a line, and rows of 256 doubles). The L0 fetches whole 128 B lines:
    the 4 rows of the block touch lines -1..2 (x from -1 to 32: 4 lines each), the rows above and
    below 2 lines each: 20 lines x 128 B / 128 updates = 20 B/lup. The A100 fetches 32 B sectors:
    10 per block row (bytes -8..263) and 8 per halo row: 56 x 32 / 128 = 14 B/lup."""
    kernel = star_stencil(2, 1, (254, 16))
    kernel = dataclasses.replace(kernel, fields=tuple(dataclasses.replace(f, alignment_bytes=120)
                                                      for f in kernel.fields))
    rdna = Predictor(kernel, load_device("W6800")).predict((32, 4, 1))
    nvidia = Predictor(kernel, load_device("A100-SXM4-40GB")).predict((32, 4, 1))
    assert rdna.footprint.per_field["src"].l2_load_bytes_per_lup == pytest.approx(20.0)
    assert nvidia.footprint.per_field["src"].l2_load_bytes_per_lup == pytest.approx(14.0)


@pytest.mark.parametrize("device_name", ["RX5500XT", "W6800"])
def test_double_copy_on_rdna_by_hand(device_name):
    """A double copy reads and writes 8 B per update once, with no reuse: every level, the Infinity
    Cache included, moves 8 B + 8 B per update, so the L2 limit is the L2 bandwidth / 16 B and the DRAM
    limit the sustained DRAM bandwidth / 16 B (W6800: 456 GB/s -> 28.5 Glup/s; RX 5500 XT: 199.5 GB/s
    -> 12.47 Glup/s; full occupancy, where the occupancy curve reaches the sustained bandwidth to
    within 0.1 %)."""
    device = load_device(device_name)
    p = Predictor(copy_kernel((512, 512, 256)), device).predict((256, 1, 1))
    for level in p.cache_levels:
        assert (level.load_bytes_per_lup, level.store_bytes_per_lup) == pytest.approx((8.0, 8.0)), level.name
    assert p.roofline.l2_lups_per_s == pytest.approx(device.l2.bandwidth_gb_s * 1e9 / 16)
    assert p.roofline.limits["dram"] == pytest.approx(device.dram_bandwidth_gb_s * 1e9 / 16, rel=1e-3)


def _store_kernel(element_bytes: int, stride: int, offset: int) -> Kernel:
    """Reads ``a[x]`` and writes ``b[stride * x + offset]`` (1-D, base of both fields 128 B-aligned)."""
    cells = 4096
    a = Field("a", element_bytes=element_bytes, shape=(cells,), alignment_bytes=128)
    b = Field("b", element_bytes=element_bytes, shape=(stride * cells + offset,), alignment_bytes=128)
    return Kernel(name="store", fields=(a, b), accesses=(load("a", X), store("b", stride * X + offset)),
                  domain=(cells, 1, 1), flops=FlopCounts())


@pytest.mark.parametrize("device_name", ["W6800", "RX6900XT", "RX5500XT"])
@pytest.mark.parametrize("element_bytes, stride, offset, expected", [
    # wave32, one store instruction; the L0 writes 64 B byte-masked requests:
    (4, 1, 0, 4.0),    # bytes 0..127: 2 requests x 64 B / 32 updates
    (8, 1, 0, 8.0),    # bytes 0..255: 4 x 64 / 32
    (4, 1, 1, 6.0),    # bytes 4..131: requests at 0, 64, 128 -> 3 x 64 / 32
    (8, 1, 1, 10.0),   # bytes 8..263: requests at 0..256 -> 5 x 64 / 32
    (4, 2, 0, 8.0),    # every other float, bytes 0..251: 4 x 64 / 32
    (4, 16, 0, 64.0),  # one float per 64 B: 32 requests x 64 / 32
])
def test_rdna_stores_at_their_write_granularity_by_hand(device_name, element_bytes, stride, offset, expected):
    p = Predictor(_store_kernel(element_bytes, stride, offset), load_device(device_name)).predict((256, 1, 1))
    assert p.footprint.per_field["b"].l2_store_bytes_per_lup == pytest.approx(expected)
    assert p.cache_levels[0].store_bytes_per_lup == pytest.approx(expected)


def test_nvidia_stores_stay_at_32_byte_sectors():
    """The same misaligned float store on an A100: bytes 4..131 in 32 B sectors 0..4 -> 5 x 32 / 32."""
    p = Predictor(_store_kernel(4, 1, 1), load_device("A100-SXM4-40GB")).predict((256, 1, 1))
    assert p.footprint.per_field["b"].l2_store_bytes_per_lup == pytest.approx(5.0)


def test_store_granule_must_divide_the_line():
    w6800 = load_device("W6800")
    memory = tuple(dataclasses.replace(level, store_granule_bytes=96) if level.scope == "cu" else level
                   for level in w6800.memory)
    with pytest.raises(DeviceError, match="store_granule_bytes"):
        dataclasses.replace(w6800, memory=memory)
