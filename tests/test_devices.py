"""The built-in device database (warpspeed/devices/*.toml) and the device loader's errors.

Numbers checked here are re-derived by hand from vendor peak figures or from the papers, never
copied from the loader's output: each check names where its reference number comes from.
"""

from __future__ import annotations

import re
from dataclasses import fields
from importlib import resources

import pytest

from warpspeed.hardware.device import Device, device_names, load_device, load_device_file
from warpspeed.errors import DeviceError, WarpspeedError

REQUIRED = [
    "A100-SXM4-40GB", "V100-PCIe-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H100-PCIe-80GB",
    "H200", "L40S", "MI100", "MI210", "MI300X", "RX5500XT", "W6800", "RX6900XT",
]
NVIDIA = ["V100-PCIe-32GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB",
          "H100-PCIe-80GB", "H200", "L40S"]
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
               if f.name not in ("name", "vendor", "architecture", "source", "fp16_lanes_per_sm")]
    assert checked >= len(numeric)  # every required numeric field was looked at


# ---------------------------------------------------------------------------------------------
# (b) hand-derived consistency checks
# ---------------------------------------------------------------------------------------------

def test_a100_fp64_peak_matches_whitepaper():
    # 108 SMs x 32 FP64 lanes x 2 flop x 1.41 GHz = 9.746 TFLOPS; A100 whitepaper: 9.7 TFLOPS.
    for name in ("A100-SXM4-40GB", "A100-SXM4-80GB"):
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
    ("RX5500XT", "fp32_lanes_per_sm", 5.20),  # paper 004 Table 2: 5.20 TFLOPS (22 CUs x 64 x 2 x 1.845)
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
    # 32 banks x 4 B = 128 B per cycle (CUDA C++ Programming Guide, "Shared Memory"; paper 001 4.2).
    assert load_device(name).l1_bytes_per_cycle == 16 * 8


@pytest.mark.parametrize("name, nominal_mib", [
    ("A100-SXM4-40GB", 40), ("A100-SXM4-80GB", 40),
    ("H100-SXM5-80GB", 50), ("H100-PCIe-80GB", 50), ("H200", 50),
])
def test_split_l2_effective_is_half(name, nominal_mib):
    # Paper 001 sec. 3: the split L2 duplicates lines, the effective capacity is half the nominal.
    dev = load_device(name)
    assert dev.l2_bytes == nominal_mib * MiB
    assert dev.l2_effective_bytes * 2 == dev.l2_bytes


@pytest.mark.parametrize("name", ["V100-PCIe-32GB", "L40S", *AMD])
def test_unsplit_l2_effective_is_nominal(name):
    dev = load_device(name)
    assert dev.l2_effective_bytes == dev.l2_bytes


def test_v100_and_a100_use_paper_001_table_1():
    # Paper 001 Table 1: V100 80 SMs, 1.38 GHz, 128 kB L1, 6 MB L2, DRAM 800, L2 2500 GB/s;
    # A100 108 SMs, 1.41 GHz, 192 kB L1, 40 MB L2, DRAM 1400, L2 5000 GB/s.
    v = load_device("V100-PCIe-32GB")
    assert (v.sms, v.clock_ghz, v.l1_bytes, v.l2_bytes) == (80, 1.38, 128 * 1024, 6 * MiB)
    assert (v.dram_bandwidth_gb_s, v.l2_bandwidth_gb_s) == (800.0, 2500.0)
    a = load_device("A100-SXM4-40GB")
    assert (a.sms, a.clock_ghz, a.l1_bytes, a.l2_bytes) == (108, 1.41, 192 * 1024, 40 * MiB)
    assert (a.dram_bandwidth_gb_s, a.l2_bandwidth_gb_s) == (1400.0, 5000.0)


def test_navisim_configurations():
    # Paper 004 Table 1: RX 5500 XT 11 DCUs (22 CUs), 1845 MHz, 224 GB/s; W6800 30 DCUs (60 CUs),
    # 2320 MHz, 512 GB/s; Table 2: L0 16 KB, L2 1 MB (RX 5500 XT); wave32, 128 B lines (sec. 2).
    rx = load_device("RX5500XT")
    assert (rx.sms, rx.clock_ghz, rx.dram_bandwidth_gb_s) == (22, 1.845, 224.0)
    assert (rx.l1_bytes, rx.l2_bytes) == (16 * 1024, 1 * MiB)
    w = load_device("W6800")
    assert (w.sms, w.clock_ghz, w.dram_bandwidth_gb_s) == (60, 2.32, 512.0)
    for dev in (rx, w, load_device("RX6900XT")):
        assert dev.warp_size == 32 and dev.l1_line_bytes == 128 and dev.l2_line_bytes == 128


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
    return _text("A100-SXM4-40GB")


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
    path = _write(tmp_path, _template() + "l3_bytes = 1024\n")
    with pytest.raises(DeviceError, match=r"unknown key\(s\) l3_bytes") as info:
        load_device_file(path)
    assert "allowed:" in str(info.value)


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


def test_device_error_is_a_warpspeed_error():
    assert issubclass(DeviceError, WarpspeedError)
