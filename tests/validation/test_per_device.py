"""validate's table of what each built-in device was checked against."""

from warpspeed.validation.datasets import PointError, dataset
from warpspeed.validation.per_device import checked_by_device

DEVICES = ("A100-SXM4-40GB", "L40S", "V100-PCIe-32GB", "W6800")


def _ds(name, labels, paths):
    return dataset("G", name, "x", [PointError(label, 1.0, 1.0) for label in labels],
                   [(p, "c0ffee") for p in paths], "", (1.0, 1.0))


def test_a_dataset_checks_the_devices_it_names_its_points_or_its_files_measured():
    by_name = _ds("V100-PCIe-32GB stream triad", ["1 thread"], ["gpu-stream/v100.txt"])
    by_point = _ds("FluidX3D D3Q19 FP32", ["L40S", "A100-SXM4-40GB"], ["README.md"])
    by_file = _ds("A100 cycles per warp load", ["stride 1"], ["gpu-strides/a100.txt"])
    checked = checked_by_device([by_name, by_point, by_file], DEVICES, real_gpu_device="H200")
    assert checked["V100-PCIe-32GB"] == ("G: V100-PCIe-32GB stream triad",)
    assert checked["L40S"] == ("G: FluidX3D D3Q19 FP32",)
    assert checked["A100-SXM4-40GB"] == ("G: FluidX3D D3Q19 FP32", "G: A100 cycles per warp load")
    assert checked["W6800"] == ()  # nothing of its own is stored


def test_a_point_of_one_of_the_device_levels_checks_it():
    # the latency dataset labels its points "<device> <level>"; "L40S L1" names the L40S, not a device "L40"
    latency = _ds("pointer-chase latency", ["V100-PCIe-32GB L1", "L40S DRAM"], ["gpu-latency/mi210.txt"])
    checked = checked_by_device([latency], DEVICES + ("L40",))
    assert checked["V100-PCIe-32GB"] == checked["L40S"] == ("G: pointer-chase latency",)
    assert checked["L40"] == checked["A100-SXM4-40GB"] == ()
