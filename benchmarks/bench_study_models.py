"""What a study's further models cost per row: the same study with each model set, timed.

108 configurations (copy, star3d-r1, d3q15-pull on A100-SXM4-40GB and H100-SXM5-80GB, 128^3
cells, the 9 flat blocks of 256 threads, foldings none / 2 in y), serial. The roofline study runs
twice first so that kernel generation and the caches it fills are not charged to the models;
every later study repeats the same predictions, so the difference to the second roofline run is
the models' own cost.

    python benchmarks/bench_study_models.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from warpspeed.studies.spec import study_from_dict
from warpspeed.studies.study import run_study

STUDY = {"kernels": ["copy", "star3d-r1", "d3q15-pull"], "devices": ["A100-SXM4-40GB", "H100-SXM5-80GB"],
         "domains": [[128, 128, 128]], "threads": [256], "foldings": [[1, 1, 1], [1, 2, 1]], "max_block_z": 1}
MODEL_SETS = (["roofline"], ["roofline"], ["interval"], ["pipeline"], ["energy"], ["interval", "pipeline", "energy"])


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        base = None
        print(f"{'models':<36} {'rows':>5} {'s':>6} {'ms/row':>7} {'+ms/row':>8}")
        for i, models in enumerate(MODEL_SETS):
            spec = study_from_dict({**STUDY, "output": f"s{i}.csv", "models": models}, Path(directory))
            start = time.perf_counter()
            result = run_study(spec, resume=False)
            per_row = (time.perf_counter() - start) / result.rows * 1e3
            extra = "" if base is None else f"{per_row - base:8.1f}"
            if i == 1:
                base = per_row
            print(f"{', '.join(spec.models):<36} {result.rows:>5} {per_row * result.rows / 1e3:6.2f} "
                  f"{per_row:7.1f} {extra:>8}")


if __name__ == "__main__":
    main()
