"""Instruction facts: one table per SM family, read by the interval and pipeline models."""

import pytest

from warpspeed.hardware.device import load_device
from warpspeed.hardware.instruction_facts import (InstructionFactsError, families, family_of, instruction_facts,
                                                  load_family)
from warpspeed.interval.params import interval_params
from warpspeed.pipeline.latency import load_latencies


@pytest.mark.parametrize("device, family", [("A100-SXM4-40GB", "ampere"), ("A40", "ampere-ga102"), ("H200", "hopper"),
                                            ("L40", "ada"), ("V100-PCIe-32GB", "volta")])
def test_family_of_a_device(device, family):
    """The chip's file where one exists (GA102), else the architecture's."""
    assert family_of(load_device(device)) == family


def test_amd_parts_have_no_nvidia_facts():
    assert family_of(load_device("MI210")) is None
    with pytest.raises(InstructionFactsError, match="no instruction facts"):
        instruction_facts(load_device("MI210"))


def test_ga102_partition_from_the_whitepaper():
    """GA102 (whitepaper SM figure): 4 LD/ST units per partition = 16 per SM, FP32 and INT32 sharing a
    datapath; GA100: 8 per partition = 32, separate datapaths. Ada inherits GA102's partition."""
    ga100, ga102, ada = load_family("ampere"), load_family("ampere-ga102"), load_family("ada")
    assert (ga100.lsu_lanes_per_sm, ga100.fp32_int_shared) == (32, False)
    assert (ga102.lsu_lanes_per_sm, ga102.fp32_int_shared) == (16, True)
    assert (ada.lsu_lanes_per_sm, ada.fp32_int_shared) == (16, True)
    assert ga102.units == ga100.units == ada.units  # latencies: the A100's, assumed


@pytest.mark.parametrize("name", ["A100-SXM4-40GB", "H200", "L40"])
def test_interval_reads_the_amali_values_from_the_facts(name):
    """AMALI (ISCA 2025) Table 2, A100: single issue, INT 64 and SFU 16 lanes per SM, INT/FP32/FP64
    latency 4, SFU 23, shared load 23 and store 19 cycles, now written once in ampere.toml."""
    p = interval_params(load_device(name))
    assert p.issue_rate == 1
    assert (p.lanes_per_sm["int"], p.lanes_per_sm["sfu"]) == (64, 16)
    assert dict(p.latency) == {"int": 4, "fp32": 4, "fp64": 4, "sfu": 23}
    assert (p.shared_load_latency, p.shared_store_latency) == (23, 19)


def test_an_interval_key_overrides_the_fact(tmp_path):
    """A device's own measurement in [interval] replaces the family's value."""
    from warpspeed.hardware.devices import __file__ as devices_init
    from pathlib import Path
    text = (Path(devices_init).parent / "H200.toml").read_text().replace("mshrs = 0", "mshrs = 0\nfp64_latency = 8", 1)
    path = tmp_path / "H200x.toml"
    path.write_text(text)
    assert interval_params(load_device(str(path))).latency["fp64"] == 8


def test_pipeline_and_interval_read_one_table():
    """The pipeline model's rows are the facts' rows (no second copy)."""
    assert load_latencies("hopper").units == dict(load_family("hopper").units)
    assert load_latencies("volta").unit("fp64").completion == 8  # Accel-Sim GV100: DP 8 cycles


def test_every_family_file_loads():
    for name in families():
        facts = load_family(name)
        assert facts.units, name
