"""PredictedOrder as a Kernel Tuner strategy for a kernel described with the Python API, and the
parts of GPU tuning that need no GPU (tune parameters, restriction, generated source, arguments)."""

import json

import pytest

pytest.importorskip("kernel_tuner")

from kernel_tuner.interface import tune_cache  # noqa: E402
from kernel_tuner.strategies.wrapper import OptAlgWrapper  # noqa: E402

import warpspeed as ws  # noqa: E402
from warpspeed.kernel.builtin import builtin_kernel  # noqa: E402
from warpspeed.launch.space import Config  # noqa: E402
from warpspeed.predict import Predictor  # noqa: E402
from warpspeed.tune.gpu import FoldedSource, in_space, kernel_arguments, tune_params  # noqa: E402
from warpspeed.tune.mapping import ParamMapping  # noqa: E402
from warpspeed.tune.strategy import PredictedOrder  # noqa: E402

BLOCKS = [(32, 8, 4), (1024, 1, 1), (8, 8, 16), (64, 4, 4), (32, 32, 1), (16, 4, 16)]


def test_kernel_tuner_measures_a_python_api_kernel_in_the_predicted_order(tmp_path):
    kernel = builtin_kernel("star3d-r1", (256, 256, 256), 8)
    # a user's own parameter names, no folding, and a parameter the mapping does not name
    cache = {"device_name": "sim", "kernel_name": "stencil", "problem_size": [256, 256, 256],
             "tune_params_keys": ["BX", "BY", "BZ", "vec"],
             "tune_params": {"BX": sorted({b[0] for b in BLOCKS}), "BY": sorted({b[1] for b in BLOCKS}),
                             "BZ": sorted({b[2] for b in BLOCKS}), "vec": [1, 2]},
             "objective": "time", "cache": {}}
    for i, (x, y, z) in enumerate(BLOCKS):
        for vec in (1, 2):
            cache["cache"][f"{x},{y},{z},{vec}"] = {"BX": x, "BY": y, "BZ": z, "vec": vec, "time": 1.0 + i + vec / 10}
    path = tmp_path / "cache.json"
    path.write_text(json.dumps(cache))
    order = PredictedOrder(kernel, "A100-SXM4-40GB", ParamMapping.from_dict({"block_x": "BX", "block_y": "BY",
                                                                            "block_z": "BZ"}), patience=None)
    results, _ = tune_cache(str(path), strategy=OptAlgWrapper(order), quiet=True, block_size_names=["BX", "BY", "BZ"])
    measured = [(r["BX"], r["BY"], r["BZ"]) for r in results]
    assert len(measured) == 12 and measured[::2] == measured[1::2]  # both vec values of a block together
    predictor = Predictor(kernel, "A100-SXM4-40GB")
    rate = {b: ws.time_estimate(predictor.predict(b, (1, 1, 1))).lups_per_s for b in BLOCKS}
    rates = [rate[b] for b in measured[::2]]
    assert rates == sorted(rates, reverse=True) and set(measured) == set(BLOCKS)
    assert order.model_seconds > 0 and len(order.ranking.rows) == 6


def test_the_restriction_admits_exactly_the_space_by_position_and_by_name():
    configs = [Config((32, 8, 4), (1, 2, 1)), Config((1024, 1, 1), (1, 1, 1))]
    params = tune_params(configs)
    assert params == {"block_size_x": [32, 1024], "block_size_y": [1, 8], "block_size_z": [1, 4],
                      "fold_x": [1], "fold_y": [1, 2], "fold_z": [1]}
    allowed = in_space(configs)
    assert allowed(32, 8, 4, 1, 2, 1) and not allowed(32, 8, 4, 1, 1, 1)
    assert allowed(block_size_x=1024, block_size_y=1, block_size_z=1, fold_x=1, fold_y=1, fold_z=1)


def test_the_source_kernel_tuner_compiles_is_pystencils_code_of_the_folding():
    source = FoldedSource("star3d-r1", (64, 64, 64), "double")
    params = {"block_size_x": 32, "block_size_y": 4, "block_size_z": 2, "fold_x": 1, "fold_y": 2, "fold_z": 1}
    code = source(params)
    assert "__global__ void ws_star3d_r1 (" in code and 'extern "C"' not in code
    assert "#define RESTRICT __restrict__" in code and "2LL * ((int64_t) blockIdx.y" in code  # folded 2 in y
    assert "2LL * ((int64_t) blockIdx.y" not in source({**params, "fold_y": 1})
    plan, gpu_kernel = source.plan((1, 1, 1))
    args = kernel_arguments(gpu_kernel, plan)
    assert [a.size for a in args] == [66 ** 3, 66 ** 3]  # 64^3 cells and one ghost layer on each side
    assert all(str(a.dtype) == "float64" for a in args)
