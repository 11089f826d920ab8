"""The provenance view: every constant sorted by where it comes from, and docs/provenance.md current."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from warpspeed.calibration.constant_sources import (
    PROVENANCE_DOC,
    classify,
    device_checks,
    device_constants,
    provenance_page,
)
from warpspeed.cli.main import main
from warpspeed.hardware.device import all_devices, load_device

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("device, comment, expected", [
    # the V100's own gpu-stream file: measured on the part
    ("V100-PCIe-32GB", "sustained: v100 stream triad [GPU-BENCHES] gpu-stream/v100.txt @ a7dc559", ("measured", "V100-PCIe-32GB")),
    # the L40S takes the L40's file (same AD102 chip): borrowed, and the part is named
    ("L40S", "sustained: l40 stream triad [GPU-BENCHES] gpu-stream/l40.txt @ 71a3611", ("borrowed", "L40")),
    # AMALI's A100 latency assumed for another part
    ("H200", "cycles: [AMALI] Table 2 (measured on the A100; assumed for this GPU)", ("borrowed", "A100")),
    # a stated rule from another built-in part's measurement
    ("W6800", "sustained, estimate by rule: vendor peak 512 GB/s x RX6900XT sustained/peak 456.0/512", ("borrowed", "RX6900XT")),
    # a published measurement of the part itself (the paper measured its V100)
    ("V100-PCIe-32GB", "measured: [ERNST23] Table 1", ("measured", "V100-PCIe-32GB")),
    ("V100-PCIe-32GB", "[CUDA-CC]", ("documented", "")),
    ("V100-PCIe-32GB", "", ("unsourced", "")),
])
def test_classify_by_the_comment(device, comment, expected):
    assert classify(comment, load_device(device)) == expected


def test_no_built_in_constant_is_unsourced():
    for device in all_devices():
        missing = [f"{c.table}.{c.key}" for c in device_constants(device) if c.kind == "unsourced"]
        assert not missing, f"{device.name}: {missing}"


def test_what_each_device_is_checked_against():
    # the stored files of fits/data/public/ (listed by hand): the V100 has gpu-cache, its whole pointer chase
    # and the rows around its L1, gpu-stream and the later gpu-stream run with the four-buffer triad, the
    # W6800 has nothing of its own; the A100 80 GB and the H100 PCIe have gpu-cache, gpu-l2-cache,
    # gpu-latency, the rows around their L1 (gpu-latency-l1) and gpu-stream (and the A100 80 GB
    # gpu-small-kernels and the four-buffer triad run), and both are a row of FluidX3D's published table
    assert device_checks(load_device("V100-PCIe-32GB")) == (
        "gpu-cache/v100", "gpu-latency/v100", "gpu-latency-l1/v100", "gpu-stream/v100", "gpu-stream-triad4/v100")
    fluidx3d = "fluidx3d/d3q19 (published D3Q19 FP32 MLUP/s)"
    assert device_checks(load_device("A100-SXM4-80GB")) == (
        fluidx3d, "gpu-cache/a100-80gb", "gpu-l2-cache/a100-80gb", "gpu-latency/a100-80gb", "gpu-latency-l1/a100-80gb",
        "gpu-small-kernels/a100-80", "gpu-stream/a100-80gb", "gpu-stream-triad4/a100-80gb")
    assert device_checks(load_device("H100-PCIe-80GB")) == (
        fluidx3d, "gpu-cache/h100-pcie", "gpu-l2-cache/h100-pcie", "gpu-latency/h100-pcie", "gpu-latency-l1/h100-pcie",
        "gpu-stream/h100-pcie")
    assert device_checks(load_device("W6800")) == ()
    assert any(c.startswith("fits/data/H200") for c in device_checks(load_device("H200")))


def test_borrowed_fits_name_their_part():
    constants = {(c.table, c.key): c for c in device_constants(load_device("V100-PCIe-32GB"))}
    tag = constants[("fitted", "L1 tag stage")]
    assert (tag.kind, tag.part) == ("borrowed", "A100-SXM4-40GB")  # fitted on gpu-strides/a100
    assert constants[("L1", "bytes")].checked == "gpu-cache/v100"
    # the pointer-chase latencies of its file are checked by the stored gpu-latency/v100 rows, as the RX 6900 XT's
    # first level (its L0)
    assert constants[("L1", "latency_ns")].checked == constants[("L2", "latency_ns")].checked == "gpu-latency/v100"
    assert constants[("device", "dram_latency_ns")].checked == "gpu-latency/v100"
    rdna = {(c.table, c.key): c for c in device_constants(load_device("RX6900XT"))}
    assert rdna[("L0", "latency_ns")].checked == "gpu-latency/rx6900xt"


def test_the_page_in_docs_is_current():
    page = (ROOT / PROVENANCE_DOC).read_text(encoding="utf-8")
    assert page == provenance_page(all_devices()), \
        "docs/provenance.md is stale: run `warpspeed devices --provenance --write-docs` in the repository root"
    for device in all_devices():
        if device.vendor == "nvidia":
            assert f"## {device.name} (" in page


def test_cli_prints_one_device():
    result = CliRunner().invoke(main, ["devices", "--provenance", "--device", "V100"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("## V100-PCIe-32GB")
    assert ("Checked against: gpu-cache/v100; gpu-latency/v100; gpu-latency-l1/v100; gpu-stream/v100; "
            "gpu-stream-triad4/v100." in result.output)
    bad = CliRunner().invoke(main, ["devices", "--write-docs"])
    assert bad.exit_code == 2
