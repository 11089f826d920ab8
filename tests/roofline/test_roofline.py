"""Four-limiter roofline: hand-computed limits on the A100 of Ernst, Holzer, Hager, Knorr, Wellein,
JPDC 2023, Table 1 (108 SMs, 1.41 GHz, 32 FP64 lanes/SM, L2 5000 GB/s, DRAM 1400 GB/s), one case per
limiter. The built-in file holds the stored microbenchmark figures instead; the table's bandwidths
are set here so that every expected number is the table's."""

import dataclasses
import math

import pytest

from warpspeed.levels import four_limiter, two_limiter
from warpspeed.summary import prediction_record


@pytest.fixture(scope="module")
def a100(a100):
    """The A100 with the bandwidths of Ernst et al. 2023, Table 1."""
    return dataclasses.replace(a100.with_level("device", bandwidth_gb_s=5000.0), dram_bandwidth_gb_s=1400.0)

FP_CAPACITY = 108 * 1.41e9 * 32  # FP64 instructions per second
L1_CAPACITY = 108 * 1.41e9  # wavefronts per second


@pytest.mark.parametrize("fp, l1, l2, dram, limiter, expected", [
    (1000, 1.0, 16, 16, "fp", FP_CAPACITY / 1000),      # 4.87e9 vs L1 1.5e11, L2 3.1e11, DRAM 8.75e10
    (0, 10.0, 16, 16, "l1", L1_CAPACITY / 10),          # 1.52e10 vs L2 3.1e11, DRAM 8.75e10
    (0, 0.5, 200, 16, "l2", 5000e9 / 200),              # 2.5e10 vs L1 3.0e11, DRAM 8.75e10
    (0, 0.5, 16, 100, "dram", 1400e9 / 100),            # 1.4e10 vs L1 3.0e11, L2 3.1e11
])
def test_each_limiter(a100, fp, l1, l2, dram, limiter, expected):
    r = four_limiter(a100, "float64", fp, 2 * fp, l1, l2, dram)
    assert r.limiter == limiter
    assert r.lups_per_s == pytest.approx(expected)
    assert r.limits["l1"] == pytest.approx(L1_CAPACITY / l1)
    assert r.limits["l2"] == pytest.approx(5000e9 / l2)
    assert r.limits["dram"] == pytest.approx(1400e9 / dram)


def test_no_fp_work_is_unlimited(a100):
    r = four_limiter(a100, "float64", 0, 0, 1.0, 16, 16)
    assert math.isinf(r.fp_lups_per_s)
    assert r.gflops == 0


def test_gflops(a100):
    # 25-point stencil: 25 FP instructions, 49 flops; DRAM-bound at 16 B/lup -> 8.75e10 lups/s
    r = four_limiter(a100, "float64", 25, 49, 0.5, 16, 16)
    assert r.limiter == "dram"
    assert r.gflops == pytest.approx(1400e9 / 16 * 49 / 1e9)


def test_float32_uses_fp32_lanes(a100):
    r = four_limiter(a100, "float32", 1000, 1000, 0.1, 1, 1)
    assert r.fp_lups_per_s == pytest.approx(108 * 1.41e9 * 64 / 1000)


def test_dram_limit_uses_the_bandwidth_given(a100):
    # an achievable 700 GB/s (half the table's 1400) halves the DRAM limit: 700e9 / 100 B
    r = four_limiter(a100, "float64", 0, 0, 0.5, 16, 100, dram_bandwidth_gb_s=700.0)
    assert r.limits["dram"] == pytest.approx(7e9) and r.dram_bandwidth_gb_s == 700.0
    assert four_limiter(a100, "float64", 0, 0, 0.5, 16, 100).dram_bandwidth_gb_s == 1400.0


def test_two_limiter(a100):
    t = two_limiter(a100, "float64", 25, 16)
    assert t.limiter == "dram"
    assert t.lups_per_s == pytest.approx(1400e9 / 16)


def test_float16_uses_the_devices_fp16_rate(a100):
    # A100 whitepaper Table 3: 78 TFLOPS FP16 (non-tensor) = 108 SMs x 256 results per clock x
    # 2 flop x 1.41 GHz; with 7 FP instructions per lup: 108 x 1.41e9 x 256 / 7 = 5.569e12 lup/s.
    r = four_limiter(a100, "float16", 7, 13, 0, 0, 0)
    assert r.fp_lups_per_s == pytest.approx(5.569e12, rel=1e-3)


@pytest.mark.parametrize("device, lanes, clock_ghz, sms", [
    ("A100-SXM4-40GB", 256, 1.41, 108),  # A100 whitepaper: 78 TFLOPS FP16 non-tensor
    ("MI100", 128, 1.502, 120),          # packed FP16 vector math, 2 x the 64 FP32 lanes per CU
])
def test_float16_kernel_fp_limit(device, lanes, clock_ghz, sms):
    from warpspeed.hardware.device import load_device
    from warpspeed.kernel.builtin import star_stencil
    from warpspeed.predict import Predictor

    # 7-point stencil in half precision: 1 multiply + 6 FMAs = 7 FP instructions per lup.
    kernel = star_stencil(3, 1, (64, 64, 64), element_bytes=2)
    assert kernel.dtype == "float16"
    prediction = Predictor(kernel, load_device(device)).predict((64, 4, 4))
    assert prediction_record(prediction)["limiters"]["fp"] == pytest.approx(sms * clock_ghz * 1e9 * lanes / 7)
