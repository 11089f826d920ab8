"""The in-core time as the predictor's component ``sm``: every combiner sees it."""

import pytest

from warpspeed.power.benchmark import roofline_benchmark
from warpspeed.predict import predict


def test_gpu_roofline_on_ga102_is_bound_by_register_reads():
    """gpu-roofline, 256 FMAs per element pair, A40. Per update (two pairs): 512 FFMA x 3 reads, 4 FADD x
    2, 4 loads x 1, and once per thread 2 x (IMAD 3 + ISETP 2) + 2 IMAD.WIDE x 3 = 1564 register reads;
    at 4 schedulers x 32 lanes x 1.95 reads per cycle, plus the wait for the DRAM loads, 551 cycles
    (the ampere latency file) over 1536 resident threads, and 84 SMs at 1.74 GHz (whitepaper, datasheet)."""
    p = predict(roofline_benchmark(256), "A40", (256, 1, 1))
    expected = 84 * 1.74e9 / (1564 / (4 * 32 * 1.95) + 551 / 1536)
    assert p.roofline.limits["sm"] == pytest.approx(expected, rel=1e-9)
    assert p.limiter == "sm"
    # the published plateau (gpu-benches gpu-roofline alex_a40.txt: 22.1 TFLOP/s at 1665 MHz) within 10 %
    gflops = p.lups_per_s * 1028 / 1e9
    assert gflops == pytest.approx(22085 * 1740 / 1665, rel=0.10)


def test_a100_keeps_its_fp_limit():
    """GA100 (16 FP32 lanes per partition): the FP lanes bind: 516 FP instructions per update over 64
    lanes, plus the wait for the DRAM loads, 551 cycles (the ampere latency file) over 2048 resident
    threads."""
    p = predict(roofline_benchmark(256), "A100-SXM4-40GB", (256, 1, 1))
    sm_hz = 108 * 1.41e9
    assert sm_hz / p.roofline.limits["fp"] == pytest.approx(516 / 64, rel=1e-6)
    assert sm_hz / p.roofline.limits["sm"] == pytest.approx(516 / 64 + 551 / 2048, rel=1e-6)


def test_a100_fp_plateau_is_the_fp_pipes_plus_the_load_wait():
    """gpu-benches gpu-roofline alex_a100_40.txt, 512 FMAs per element pair at 1410 MHz: the measured
    rate is 16.44 SM cycles per update; the FP pipes alone give 1028 / 64 = 16.06 (2.3 % fast), with the
    DRAM latency over the resident threads (551 / 2048 = 0.27) 16.33 (0.7 %)."""
    p = predict(roofline_benchmark(512), "A100-SXM4-40GB", (256, 1, 1))
    cycles = 108 * 1.41e9 / p.roofline.limits["sm"]
    assert cycles == pytest.approx(1028 / 64 + 551 / 2048, rel=1e-6)
    assert cycles == pytest.approx(16.44, rel=0.01)
    assert 1028 / 64 < 16.44 * 0.98


def test_amd_prediction_has_no_sm_component():
    p = predict(roofline_benchmark(16), "MI210", (256, 1, 1))
    assert "sm" not in p.roofline.limits
