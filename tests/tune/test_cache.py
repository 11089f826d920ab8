"""Kernel Tuner caches: what the reader accepts (Kernel Tuner's own variants), what it refuses in one
line, and that what the writer writes is read by Kernel Tuner's own reader."""

import json

import pytest

pytest.importorskip("kernel_tuner")

from kernel_tuner import util as kt_util  # noqa: E402

from warpspeed.tune.cache import TuneError, make_cache, read_cache, write_cache  # noqa: E402

PARAMS = ["block_size_x", "block_size_y", "block_size_z", "fold_x", "fold_y", "fold_z"]


def _doc(entries, params=PARAMS):
    return {"device_name": "NVIDIA H200", "kernel_name": "ws_star3d_r1", "problem_size": [64, 64, 64],
            "tune_params_keys": params, "tune_params": {p: [1] for p in params}, "objective": "time",
            "cache": {",".join(str(e[p]) for p in params): e for e in entries}}


def _entry(bx, by, time, fy=1, **more):
    return {"block_size_x": bx, "block_size_y": by, "block_size_z": 1, "fold_x": 1, "fold_y": fy, "fold_z": 1,
            "time": time, **more}


def _write(tmp_path, doc, text=None):
    path = tmp_path / "cache.json"
    path.write_text(text if text is not None else json.dumps(doc))
    return path


def test_numbers_as_text_failed_entries_and_corrupted_ones(tmp_path):
    doc = _doc([_entry(32, 8, 1.5), _entry("64", "4", "1.25"), _entry(128, 2, "RuntimeFailedConfig"),
                _entry(256, 1, 2.0, __error__="CompilationFailedConfig"), _entry(512, 1, -1.0),
                _entry(16, 16, None), _entry(8, 32, [1.0])])
    cache = read_cache(_write(tmp_path, doc))
    assert cache.params == tuple(PARAMS)
    assert [(e.values[:2], e.time_ms, e.error) for e in cache.entries] == [
        ((32, 8), 1.5, ""), ((64, 4), 1.25, ""), ((128, 2), None, "RuntimeFailedConfig"),
        ((256, 1), None, "CompilationFailedConfig")]
    assert cache.dropped == 3  # a negative time, no time, a list: corrupted, never guessed
    assert cache.best_ms() == 1.25


def test_a_cache_kernel_tuner_was_still_writing_is_read_as_closed(tmp_path):
    text = json.dumps(_doc([_entry(32, 8, 1.5), _entry(64, 4, 1.0)]))
    open_text = text[:-2] + ","  # Kernel Tuner leaves its cache open with a trailing comma while tuning
    assert read_cache(_write(tmp_path, None, open_text)).best_ms() == 1.0


@pytest.mark.parametrize("text, words", [
    ("not json", "is not JSON"), ("[1, 2]", "not a JSON object"), ('{"cache": {}}', "tune parameter names"),
    (json.dumps(_doc([_entry(32, 8, "RuntimeFailedConfig")])), "no configuration with a measured time"),
    ('{"tune_params_keys": ["a"], "cache": 3}', "no 'cache' object"),
])
def test_bad_caches_are_one_line_errors(tmp_path, text, words):
    with pytest.raises(TuneError, match=words) as info:
        read_cache(_write(tmp_path, None, text))
    assert "\n" not in str(info.value)


def test_a_missing_file_and_a_directory_are_one_line_errors(tmp_path):
    with pytest.raises(TuneError, match="does not exist"):
        read_cache(tmp_path / "nope.json")
    with pytest.raises(TuneError, match="is a directory"):
        read_cache(tmp_path)


def test_nan_and_infinity_are_not_times(tmp_path):
    text = json.dumps(_doc([_entry(32, 8, 1.5), _entry(64, 4, 1.0)])).replace("1.0", "NaN")
    cache = read_cache(_write(tmp_path, None, text))
    assert [e.time_ms for e in cache.entries] == [1.5] and cache.dropped == 1


def test_what_the_writer_writes_kernel_tuners_reader_reads(tmp_path):
    cache = make_cache("NVIDIA H200", "ws_star2d_r1", (128, 128), PARAMS,
                       [([32, 8, 1, 1, 1, 1], 1.5, ""), ([64, 4, 1, 1, 2, 1], 1.25, ""),
                        ([1024, 1, 1, 1, 1, 1], None, "CompilationFailedConfig")])
    path = write_cache(cache, tmp_path / "out.json")
    read = kt_util.read_cache(str(path), open_cache=False)  # Kernel Tuner's own reader
    assert read["tune_params_keys"] == PARAMS and read["problem_size"] == [128, 128]
    assert read["cache"]["64,4,1,1,2,1"]["time"] == 1.25
    assert isinstance(read["cache"]["1024,1,1,1,1,1"]["__error__"], kt_util.CompilationFailedConfig)
    assert kt_util.infer_args_from_cache(read)["problem_size"] == (128, 128)
    assert read_cache(path).entries == cache.entries
