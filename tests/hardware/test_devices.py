"""The built-in device database (warpspeed/devices/*.toml) and the device loader's errors.

Numbers checked here are re-derived by hand from vendor peak figures or from the papers, never
copied from the loader's output: each check names where its reference number comes from.
"""

from __future__ import annotations

import re
from dataclasses import fields
from importlib import resources

import pytest

from warpspeed.hardware.device import OPTIONAL_FIELDS, Device, device_names, load_device, load_device_file
from warpspeed.errors import DeviceError

REQUIRED = [
    "A100-SXM4-40GB", "A100-PCIe-40GB", "V100-PCIe-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
    "H100-PCIe-80GB", "H200", "L40S", "MI100", "MI210", "MI300X", "RX5500XT", "W6800", "RX6900XT", "A40", "L40",
]
NVIDIA = ["V100-PCIe-32GB", "A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
          "H100-PCIe-80GB", "H200", "L40S", "A40", "L40"]
AMD = ["MI100", "MI210", "MI300X", "RX5500XT", "W6800", "RX6900XT"]
MiB = 2**20


def _text(name: str) -> str:
    return (resources.files("warpspeed.hardware.devices") / f"{name}.toml").read_text()


def _peak_tflops(dev: Device, lanes: int) -> float:
    # results per clock per SM x SMs x 2 flop (an FMA) x clock
    return lanes * dev.sms * 2 * dev.clock_ghz / 1e3


# ---------------------------------------------------------------------------------------------
# (a) every required device is built in and loads
# ---------------------------------------------------------------------------------------------

def test_device_names_lists_all_required():
    names = device_names()
    missing = sorted(set(REQUIRED) - set(names))
    assert not missing, f"built-in devices missing: {missing}"


@pytest.mark.parametrize("name", REQUIRED)
def test_required_device_loads(name):
    dev = load_device(name)
    assert isinstance(dev, Device)
    assert dev.name == name  # the `name` key equals the file stem
    assert dev.vendor == ("nvidia" if name in NVIDIA else "amd")
    assert dev.source == f"{name}.toml"


def test_lookup_is_case_insensitive():
    assert load_device("mi300x").name == "MI300X"
    assert load_device("h100-sxm5-80gb").name == "H100-SXM5-80GB"


@pytest.mark.parametrize("name", REQUIRED)
def test_every_value_carries_a_source_comment(name):
    """Each number has a trailing comment; every [TAG] cited is defined in the Sources header."""
    text = _text(name)
    assert "# Sources:" in text
    header, _, body = text.partition("[device]")
    defined = set(re.findall(r"^#\s+\[([A-Z][A-Z0-9-]*)\]", header, flags=re.M))
    assert defined, "no source tags defined in the header"
    checked = 0
    for line in body.splitlines():
        if not re.match(r"^\s*[a-z0-9_]+\s*=\s*[-+0-9.]", line):
            continue  # not a numeric key (name, vendor, architecture are strings)
        checked += 1
        value, sep, comment = line.partition("#")
        assert sep and comment.strip(), f"{name}: no source comment on {value.strip()!r}"
        for tag in re.findall(r"\[([A-Z][A-Z0-9-]*)[\] ]", comment):
            assert tag in defined, f"{name}: tag [{tag}] used but not defined in the Sources header"
        if "estimate" in comment:
            # an estimate must say how it was derived (a formula or what it is assumed equal to)
            assert re.search(r"\bx\b|assum|/", comment), f"{name}: unexplained estimate {line!r}"
    numeric = [f.name for f in fields(Device)
               if f.name not in ("name", "vendor", "architecture", "source", *OPTIONAL_FIELDS)]
    assert checked >= len(numeric)  # every required numeric field was looked at


# ---------------------------------------------------------------------------------------------
# (b) hand-derived consistency checks
# ---------------------------------------------------------------------------------------------

def test_a100_fp64_peak_matches_whitepaper():
    # 108 SMs x 32 FP64 lanes x 2 flop x 1.41 GHz = 9.746 TFLOPS; A100 whitepaper: 9.7 TFLOPS.
    for name in ("A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB"):
        assert _peak_tflops(load_device(name), load_device(name).fp64_lanes_per_sm) == \
            pytest.approx(9.7, rel=0.02)


def test_v100_fp64_peak_matches_datasheet():
    # 80 SMs x 32 lanes x 2 flop x 1.38 GHz = 7.07 TFLOPS; V100 PCIe datasheet: 7 TFLOPS.
    dev = load_device("V100-PCIe-32GB")
    assert _peak_tflops(dev, dev.fp64_lanes_per_sm) == pytest.approx(7.0, rel=0.02)
    # FP32: 80 x 64 x 2 x 1.38 = 14.1 TFLOPS; datasheet: 14 TFLOPS.
    assert _peak_tflops(dev, dev.fp32_lanes_per_sm) == pytest.approx(14.0, rel=0.02)


def test_h100_fp64_peaks_match_datasheet():
    # SXM: 132 x 64 x 2 x 1.98 GHz = 33.45 TFLOPS; datasheet: 34 TFLOPS (-1.6 %).
    sxm = load_device("H100-SXM5-80GB")
    assert _peak_tflops(sxm, sxm.fp64_lanes_per_sm) == pytest.approx(34.0, rel=0.02)
    # PCIe: 114 x 64 x 2 x 1.755 GHz = 25.6 TFLOPS; datasheet: 26 TFLOPS (-1.5 %).
    pcie = load_device("H100-PCIe-80GB")
    assert _peak_tflops(pcie, pcie.fp64_lanes_per_sm) == pytest.approx(26.0, rel=0.02)
    # H200 has the H100 SXM compute: datasheet 34 TFLOPS FP64 as well.
    h200 = load_device("H200")
    assert _peak_tflops(h200, h200.fp64_lanes_per_sm) == pytest.approx(34.0, rel=0.02)


def test_l40s_fp32_peak_matches_datasheet():
    # 142 SMs x 128 lanes x 2 flop x 2.52 GHz = 91.6 TFLOPS; L40S datasheet: 91.6 TFLOPS.
    dev = load_device("L40S")
    assert _peak_tflops(dev, dev.fp32_lanes_per_sm) == pytest.approx(91.6, rel=0.02)


@pytest.mark.parametrize("name, lanes_attr, tflops", [
    ("MI100", "fp64_lanes_per_sm", 11.5),   # datasheet FP64 vector: 120 x 32 x 2 x 1.502 GHz
    ("MI100", "fp32_lanes_per_sm", 23.1),   # datasheet FP32 vector: 120 x 64 x 2 x 1.502 GHz
    ("MI210", "fp64_lanes_per_sm", 22.6),   # datasheet FP64 vector: 104 x 64 x 2 x 1.7 GHz
    ("MI300X", "fp64_lanes_per_sm", 81.7),  # datasheet FP64 vector: 304 x 64 x 2 x 2.1 GHz
    ("RX5500XT", "fp32_lanes_per_sm", 5.20),  # Bao et al. (NaviSim, PACT 2022) Table 2: 5.20 TFLOPS (22 CUs x 64 x 2 x 1.845)
    ("W6800", "fp32_lanes_per_sm", 17.83),  # AMD spec: 60 CUs x 64 x 2 x 2.32 GHz
    ("RX6900XT", "fp32_lanes_per_sm", 23.04),  # AMD spec: 80 CUs x 64 x 2 x 2.25 GHz
])
def test_amd_peaks_match_vendor_figures(name, lanes_attr, tflops):
    dev = load_device(name)
    assert _peak_tflops(dev, getattr(dev, lanes_attr)) == pytest.approx(tflops, rel=0.02)


@pytest.mark.parametrize("name", REQUIRED)
def test_warps_times_warp_size_is_threads_per_sm(name):
    # CUDA table: 64 warps x 32 = 2048 threads (8.9: 48 x 32 = 1536); AMD: waves per SIMD x SIMDs x
    # wave size, e.g. MI100 10 x 4 x 64 = 2560, W6800 16 x 2 x 32 = 1024.
    dev = load_device(name)
    assert dev.max_warps_per_sm * dev.warp_size == dev.max_threads_per_sm


@pytest.mark.parametrize("name", NVIDIA)
def test_nvidia_l1_is_128_bytes_per_cycle(name):
    # 32 banks x 4 B = 128 B per cycle (CUDA C++ Programming Guide, "Shared Memory"; Ernst et al. 2023, 4.2).
    assert load_device(name).l1.bytes_per_cycle == 16 * 8


@pytest.mark.parametrize("name", ["A100-SXM4-40GB", "A100-PCIe-40GB", "A100-SXM4-80GB"])
def test_ampere_split_l2_effective_is_half(name):
    # Ernst et al. 2023 sec. 3: the split L2 duplicates lines, the effective capacity is half the
    # nominal 40 MiB; the Ampere capacity curves are fitted against it.
    dev = load_device(name)
    assert dev.l2.bytes == 40 * MiB and dev.l2.effective_bytes == 20 * MiB


@pytest.mark.parametrize("name, low_kib, high_kib", [
    # gpu-l2-cache/h200.txt: 44032 kB still at 9105 GB/s (> 90 % of the ~9.9 TB/s plateau),
    # 48128 kB at 7542 GB/s: the onset lies between these rows; H100 SXM5 has the H200's GH100 L2
    ("H200", 44032, 48128), ("H100-SXM5-80GB", 44032, 48128),
    # gpu-l2-cache/h100_pcie.txt: 36352 kB still at 6473 GB/s (> 90 % of the ~6.9 TB/s plateau,
    # 6.2 TB/s), 39936 kB at 3344 GB/s
    ("H100-PCIe-80GB", 36352, 39936),
])
def test_hopper_effective_l2_is_the_measured_onset(name, low_kib, high_kib):
    dev = load_device(name)
    assert dev.l2.bytes == 50 * MiB
    assert low_kib * 1024 < dev.l2.effective_bytes < high_kib * 1024
    assert dev.l2.effective_bytes > dev.l2.bytes // 2  # not the half assumed before measurements


@pytest.mark.parametrize("name", ["V100-PCIe-32GB", "A40", "MI100", "MI300X", "RX5500XT", "W6800", "RX6900XT"])
def test_unsplit_l2_effective_is_nominal(name):
    dev = load_device(name)
    assert dev.l2.effective_bytes == dev.l2.bytes


def test_v100_and_a100_agree_with_the_published_table():
    # Ernst et al. 2023 Table 1: V100 80 SMs, 1.38 GHz, 128 kB L1, 6 MB L2, DRAM 800, L2 2500 GB/s;
    # A100 108 SMs, 1.41 GHz, 192 kB L1, 40 MB L2, DRAM 1400, L2 5000 GB/s. The files take the
    # stored microbenchmark rows instead (V100 triad 814, A100 scale 1381 at 1024 threads per
    # block, A100 80 GB L2 sweep ~5.4 TB/s), within 2 % (DRAM) and 9 % (L2) of the table;
    # the V100 L2 bandwidth has no stored sweep and stays the table's.
    v = load_device("V100-PCIe-32GB")
    assert (v.sms, v.clock_ghz, v.l2.bytes) == (80, 1.38, 6 * MiB)
    assert v.l1.bytes <= 128 * 1024
    assert v.dram_bandwidth_gb_s == 814.0 and v.l2.bandwidth_gb_s == 2500.0
    assert v.dram_bandwidth_gb_s == pytest.approx(800, rel=0.02)
    a = load_device("A100-SXM4-40GB")
    assert (a.sms, a.clock_ghz, a.l1.bytes, a.l2.bytes) == (108, 1.41, 192 * 1024, 40 * MiB)
    assert a.dram_bandwidth_gb_s == 1381.0
    assert a.dram_bandwidth_gb_s == pytest.approx(1400, rel=0.02)
    assert a.l2.bandwidth_gb_s == pytest.approx(5000, rel=0.09)


def test_navisim_configurations():
    # Paper 004 Table 1: RX 5500 XT 11 DCUs (22 CUs), 1845 MHz, 224 GB/s; W6800 30 DCUs (60 CUs),
    # 2320 MHz, 512 GB/s; Table 2: L0 16 KB, L2 1 MB (RX 5500 XT); wave32, 128 B lines (sec. 2).
    # DRAM: those vendor peaks x the RX 6900 XT's sustained/peak ratio, 456 GB/s (stream scale
    # at 1024 threads per block, gpu-stream/RX6900XT.txt) / 512 GB/s: 199.5 and 456.0 GB/s.
    rx = load_device("RX5500XT")
    assert (rx.sms, rx.clock_ghz) == (22, 1.845)
    assert rx.dram_bandwidth_gb_s == pytest.approx(224 * 456 / 512, abs=0.05)
    assert (rx.l1.bytes, rx.l2.bytes) == (16 * 1024, 1 * MiB)
    w = load_device("W6800")
    assert (w.sms, w.clock_ghz) == (60, 2.32)
    assert w.dram_bandwidth_gb_s == pytest.approx(512 * 456 / 512, abs=0.05)
    for dev in (rx, w, load_device("RX6900XT")):
        assert dev.warp_size == 32 and dev.l1.line_bytes == 128 and dev.l2.line_bytes == 128


@pytest.mark.parametrize("name, vgprs_per_wave, waves_per_simd", [
    # LLVM AMDGPUBaseInfo: gfx90a-class has 512 VGPRs per SIMD lane and at most 8 waves per SIMD,
    # so 512 / 8 = 64 VGPRs per wave is the largest allocation that still gives full occupancy.
    ("MI210", 64, 8), ("MI300X", 64, 8),
    # gfx10.3 (wave32): 1024 VGPRs per SIMD lane, at most 16 waves -> 64 VGPRs per wave.
    ("W6800", 64, 16), ("RX6900XT", 64, 16),
])
def test_amd_register_file_gives_documented_full_occupancy(name, vgprs_per_wave, waves_per_simd):
    dev = load_device(name)
    per_simd = dev.registers_per_sm // dev.register_partitions
    assert per_simd // (vgprs_per_wave * dev.warp_size) == waves_per_simd
    assert dev.max_warps_per_sm == waves_per_simd * dev.register_partitions
    # the largest wave (max registers per thread) still fits one SIMD
    assert dev.max_registers_per_thread * dev.warp_size <= per_simd


# ---------------------------------------------------------------------------------------------
# (c) errors: a user's device file that is wrong, or an unknown name
# ---------------------------------------------------------------------------------------------

def _write(tmp_path, text, name="user.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _template() -> str:
    """The A100's [device] table and its [[memory]] tables (the model tables left out)."""
    return _text("A100-SXM4-40GB").partition("\n[interval]")[0] + "\n"


def _with_device_key(text: str, line: str) -> str:
    """``text`` with ``line`` added to its [device] table (after ``sms``)."""
    return re.sub(r"(?m)^(sms = .*\n)", lambda m: m.group(1) + line + "\n", text, count=1)


def test_user_file_loads(tmp_path):
    path = _write(tmp_path, _template().replace('name = "A100-SXM4-40GB"', 'name = "MyGPU"'))
    dev = load_device(str(path))
    assert dev.name == "MyGPU" and dev.source == str(path)


def test_missing_key(tmp_path):
    text = re.sub(r"^sms = .*\n", "", _template(), flags=re.M)
    path = _write(tmp_path, text)
    with pytest.raises(DeviceError, match=r"missing key\(s\) sms"):
        load_device(path)


def test_unknown_key(tmp_path):
    path = _write(tmp_path, _with_device_key(_template(), "l3_bytes = 1024"))
    with pytest.raises(DeviceError, match=r"unknown key\(s\) l3_bytes") as info:
        load_device_file(path)
    assert "allowed:" in str(info.value)
    # a key of a level in a level's table: named with the level
    path = _write(tmp_path, _template() + "l3_bytes = 1024\n")
    with pytest.raises(DeviceError, match=r"\[\[memory\]\] L2: unknown key\(s\) l3_bytes; allowed for scope device"):
        load_device_file(path)


def test_flat_cache_key_points_to_the_memory_tables(tmp_path):
    """A cache key of the [device] table (the layout before the [[memory]] list) is named with where it goes."""
    path = _write(tmp_path, _with_device_key(_template(), "l2_bandwidth_gb_s = 5000.0"))
    with pytest.raises(DeviceError, match=r"l2_bandwidth_gb_s: the caches are \[\[memory\]\] tables"):
        load_device_file(path)


def test_negative_value(tmp_path):
    text = re.sub(r"^sms = \d+", "sms = -108", _template(), flags=re.M)
    path = _write(tmp_path, text)
    with pytest.raises(DeviceError, match=r"sms must be positive, got -108"):
        load_device(path)


def test_invalid_toml(tmp_path):
    path = _write(tmp_path, "[device\nname = \"broken\"\n")
    with pytest.raises(DeviceError, match=r"not valid TOML"):
        load_device(path)


def test_unknown_device_name():
    with pytest.raises(DeviceError, match=r"unknown device 'NoSuchGPU'") as info:
        load_device("NoSuchGPU")
    # the message lists what is available
    assert "A100-SXM4-40GB" in str(info.value) and "MI300X" in str(info.value)


def test_missing_file_path(tmp_path):
    with pytest.raises(DeviceError, match=r"does not exist"):
        load_device(tmp_path / "absent.toml")


def test_bad_device_file_is_one_line_error_in_the_cli(tmp_path):
    # A DeviceError reaches the command group as a WarpspeedError: "error: ..." and exit code 2.
    from click.testing import CliRunner

    from warpspeed.cli.main import main

    path = _write(tmp_path, re.sub(r"^sms = \d+", "sms = 108.5", _template(), flags=re.M))
    result = CliRunner().invoke(main, ["predict", "--kernel", "copy", "--domain", "64,64,64", "--device", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == "error: device 'A100-SXM4-40GB': sms must be an integer, got 108.5"
    assert "wave" not in result.output and "Traceback" not in result.output


#: Every device key that counts something (SMs, threads, registers, bytes, lanes): an integer.
INTEGER_KEYS = [
    "sms", "warp_size", "registers_per_sm", "register_alloc_unit", "register_partitions", "max_registers_per_thread",
    "max_threads_per_block", "max_block_dim_x", "max_block_dim_y", "max_block_dim_z", "max_threads_per_sm",
    "max_warps_per_sm", "max_blocks_per_sm", "shared_bytes_per_sm", "shared_bytes_per_block",
    "shared_alloc_unit_bytes", "fp32_lanes_per_sm", "fp64_lanes_per_sm", "fp16_lanes_per_sm",
]


#: ... and every key of a memory level that counts something.
LEVEL_INTEGER_KEYS = ["bytes", "banks", "bank_bytes", "line_bytes", "sector_bytes", "effective_bytes"]


@pytest.mark.parametrize("key", LEVEL_INTEGER_KEYS)
def test_level_integer_keys_refuse_fractions(tmp_path, key):
    text = re.sub(rf"^({key} = )(\d+)", lambda m: f"{m.group(1)}{m.group(2)}.5", _template(), flags=re.M)
    assert f"\n{key} = " in text and ".5" in text.split(f"\n{key} = ")[1].split("#")[0]
    with pytest.raises(DeviceError, match=rf"\[\[memory\]\] L[12]: {key} must be a positive integer, got \d+\.5"):
        load_device(_write(tmp_path, text))


@pytest.mark.parametrize("key", INTEGER_KEYS)
def test_integer_keys_refuse_fractions(tmp_path, key):
    text = re.sub(rf"^({key} = )(\d+)", lambda m: f"{m.group(1)}{m.group(2)}.5", _template(), flags=re.M)
    assert f"{key} = " in text and ".5" in text.split(f"{key} = ")[1].split("#")[0]
    with pytest.raises(DeviceError, match=rf"{key} must be an integer, got \d+\.5"):
        load_device(_write(tmp_path, text))


@pytest.mark.parametrize("key", ["sms", "max_block_dim_z"])
def test_integer_keys_refuse_whole_floats(tmp_path, key):
    # TOML 108.0 is a float: still not a count.
    text = re.sub(rf"^({key} = )(\d+)", lambda m: f"{m.group(1)}{m.group(2)}.0", _template(), flags=re.M)
    with pytest.raises(DeviceError, match=rf"{key} must be an integer"):
        load_device(_write(tmp_path, text))


def test_rates_may_be_written_as_integers(tmp_path):
    text = re.sub(r"^clock_ghz = [0-9.]+", "clock_ghz = 2", _template(), flags=re.M)
    text = re.sub(r"^dram_bandwidth_gb_s = [0-9.]+", "dram_bandwidth_gb_s = 1400", text, flags=re.M)
    dev = load_device(_write(tmp_path, text))
    assert (dev.clock_ghz, dev.dram_bandwidth_gb_s) == (2, 1400)


def test_every_built_in_integer_key_is_an_integer():
    for name in REQUIRED:
        dev = load_device(name)
        for key in INTEGER_KEYS:
            value = getattr(dev, key)
            assert isinstance(value, int) and not isinstance(value, bool), (name, key, value)
        for level in (dev.l1, dev.l2):
            for key in LEVEL_INTEGER_KEYS:
                value = getattr(level, key)
                assert value is None or isinstance(value, int) and not isinstance(value, bool), (name, key, value)


# ---------------------------------------------------------------------------------------------
# per-dimension block limits
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NVIDIA)
def test_nvidia_block_limits(name):
    # CUDA C++ Programming Guide, "Compute Capabilities": x, y <= 1024, z <= 64 for 7.0-9.0.
    assert load_device(name).max_block_dims == (1024, 1024, 64)


@pytest.mark.parametrize("name", AMD)
def test_amd_block_limits(name):
    # HIP: 1024 threads in each dimension (hipDeviceProp_t::maxThreadsDim), 1024 in total.
    dev = load_device(name)
    assert dev.max_block_dims == (1024, 1024, 1024) and dev.max_threads_per_block == 1024


def test_block_limit_above_threads_per_block_is_refused(tmp_path):
    text = re.sub(r"^max_block_dim_z = \d+", "max_block_dim_z = 2048", _template(), flags=re.M)
    with pytest.raises(DeviceError, match=r"max_block_dim_z \(2048\) exceeds max_threads_per_block \(1024\)"):
        load_device(_write(tmp_path, text))


# ---------------------------------------------------------------------------------------------
# FP16: an explicit, sourced rate per device (no silent fallback)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REQUIRED)
def test_fp16_rate_is_in_every_file_with_a_source(name):
    line = next(ln for ln in _text(name).splitlines() if ln.startswith("fp16_lanes_per_sm"))
    assert "#" in line and line.partition("#")[2].strip()


def test_fp16_rate_is_required(tmp_path):
    text = re.sub(r"^fp16_lanes_per_sm = .*\n", "", _template(), flags=re.M)
    with pytest.raises(DeviceError, match=r"missing key\(s\) fp16_lanes_per_sm"):
        load_device(_write(tmp_path, text))


@pytest.mark.parametrize("name, tflops", [
    ("A100-SXM4-40GB", 78.0),   # A100 whitepaper Table 3: 78 TFLOPS FP16 non-tensor
    ("H100-SXM5-80GB", 133.8),  # CUDA throughput table: 256 FP16 results/clock/SM x 132 x 2 x 1.98 GHz
    ("RX6900XT", 46.08),        # AMD spec: 46.08 TFLOPS peak FP16
])
def test_fp16_peaks_match_vendor_figures(name, tflops):
    dev = load_device(name)
    assert _peak_tflops(dev, dev.fp16_lanes_per_sm) == pytest.approx(tflops, rel=0.02)


def test_a100_pcie_is_the_sxm4_chip_with_a_250_w_limit():
    # NVIDIA A100 PCIe product brief (PB-10137-001) and A100 datasheet, 40GB PCIe column: 108 SMs,
    # 1410 MHz boost, 40 GB HBM2 at 1555 GB/s, 250 W; the SXM4 module: the same, at 400 W.
    pcie, sxm = load_device("A100-PCIe-40GB"), load_device("A100-SXM4-40GB")
    assert (pcie.sms, pcie.clock_ghz, pcie.l2.bytes) == (108, 1.41, 40 * MiB)
    assert (pcie.power_limit_w, sxm.power_limit_w) == (250, 400)
    # same HBM2 peak, so the same sustained figure: gpu-stream/a100_40.txt scale at full occupancy,
    # 1381 GB/s = 88.8 % of 1555 GB/s
    assert pcie.dram_bandwidth_gb_s == sxm.dram_bandwidth_gb_s == 1381.0
    assert pcie.dram_bandwidth_gb_s / 1555 == pytest.approx(0.888, abs=0.001)
