"""The Python API's argument checks of this round: numpy integers are integers everywhere (and
never wrap around in a size check), a wrong executor is a TypeError naming it, a loaded device's
tables cannot be changed behind its checks, and a measurement file of an unknown format version is
refused."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import warpspeed as ws
from warpspeed.errors import DeviceError, KernelError, LaunchError
from warpspeed.kernel.description import X, Y, Z
from warpspeed.launch.space import Config
from warpspeed.predict import Predictor


def _kernel() -> ws.Kernel:
    shape = (66, 66, 66)
    return ws.Kernel(name="copy7", fields=(ws.Field("src", 8, shape), ws.Field("dst", 8, shape)),
                     accesses=(ws.load("src", X + 1, Y + 1, Z + 1), ws.store("dst", X + 1, Y + 1, Z + 1)),
                     domain=(64, 64, 64), flops=ws.FlopCounts(muls=1))


@pytest.fixture(scope="module")
def predictor():
    return Predictor(_kernel(), "A100-SXM4-40GB")


def test_numpy_block_and_fold_predict_as_python_ints(predictor):
    plain = predictor.predict((32, 8, 1), (1, 2, 1))
    numpy = predictor.predict(np.array([32, 8, 1]), (np.int64(1), np.int32(2), np.int8(1)))
    assert numpy.lups_per_s == plain.lups_per_s
    assert predictor.predict(np.int64(256)).lups_per_s == predictor.predict(256).lups_per_s
    with pytest.raises(LaunchError, match="block must be integers"):
        predictor.predict((32.0, 8, 1))


def test_numpy_flop_counts_are_counts():
    counts = ws.FlopCounts(adds=np.int64(3), fmas=np.float64(2.5), muls=np.int32(1))
    assert counts == ws.FlopCounts(adds=3, fmas=2.5, muls=1)
    assert type(counts.adds) is int and counts.flops == 3 + 2 * 2.5 + 1
    with pytest.raises(KernelError, match="flop count divs"):
        ws.FlopCounts(divs=np.float64("nan"))


def test_numpy_field_shapes_never_wrap_around():
    # 2^32 * 2^32 * 16 elements wrap to 0 in int64; as Python ints the field is 2^68 * 8 bytes
    with pytest.raises(KernelError, match="is too large"):
        ws.Field("a", 8, (np.int64(2**32), np.int64(2**32), np.int64(16)))
    field = ws.Field("a", np.int64(8), (np.int64(10), np.int32(12)))
    assert field.shape == (10, 12) and all(type(s) is int for s in field.shape) and type(field.element_bytes) is int


def test_numpy_domains_and_foldings_are_checked_as_ints():
    from warpspeed.kernel.limits import check_domain, check_fold

    domain = check_domain((np.int64(2048),) * 3)
    assert domain == (2048, 2048, 2048) and all(type(v) is int for v in domain)
    with pytest.raises(KernelError, match="too many cells"):  # 2^63 cells: negative in int64
        check_domain((np.int64(2**21),) * 3)
    assert check_fold(np.array([1, 2, 1])) == (1, 2, 1)


@pytest.mark.parametrize("executor", ["x", 3, object()])
def test_a_wrong_executor_is_a_type_error_naming_it(executor):
    from warpspeed.rank import rank

    with pytest.raises(TypeError, match="executor must be None"):
        rank(_kernel(), ws.load_device("A100-SXM4-40GB"), [Config((32, 8, 1))], executor=executor)


def test_a_loaded_devices_tables_cannot_be_changed():
    device = ws.load_device("A100-SXM4-40GB")
    with pytest.raises(TypeError, match="cannot be changed"):
        device.tables["interval"]["mshrs"] = 1
    with pytest.raises(TypeError, match="cannot be changed"):
        device.tables["interval"].update(mshrs=1)
    assert device.tables["interval"]["mshrs"] == 0  # the A100's file: unlimited
    changed = {**device.tables, "interval": {**device.tables["interval"], "mshrs": -1}}
    with pytest.raises(DeviceError, match="mshrs is out of range"):
        dataclasses.replace(device, tables=changed)


def test_a_measurement_file_of_an_unknown_format_version_is_refused(tmp_path):
    from warpspeed.validation.measurement_csv import read_existing, read_measurement_csv
    from warpspeed.validation.plan import MeasurementError
    from tests.paths import DATA

    text = (DATA / "measured_small.csv").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("# warpspeed-measurement")]
    path = tmp_path / "m.csv"
    path.write_text("# warpspeed-measurement 2\n" + "\n".join(lines) + "\n")
    for reader in (read_measurement_csv, read_existing):
        with pytest.raises(MeasurementError, match="of format 'warpspeed-measurement 2'"):
            reader(path)
    path.write_text("# warpspeed-measurement 1\n" + "\n".join(lines) + "\n")
    assert read_measurement_csv(path).rows
