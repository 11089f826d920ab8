"""How long ``warpspeed accuracy`` and ``warpspeed power-fit`` take on a CSV of 10^6 rows.

Target (issue "Bad input, third round"): each reads and evaluates a million rows within 10 s on
two cores. The inputs are made here, in a temporary folder, from data the project ships:

* accuracy: ``tests/data/measured_small.csv``'s first row (hand-made, not a measurement) repeated
  with every block (block_x, block_y from 1 to 1000, so each configuration is distinct) and the
  rates scaled by a deterministic factor per row (a ranking of a million distinct rows);
* power-fit: the rows of ``fits/data/public/gpu-roofline/a40.csv`` (D. Ernst, gpu-benches,
  GPL-3.0; measured on an A40) repeated to a million runs, fitted for the built-in A40.

Each command runs in a fresh interpreter (``python -m warpspeed.cli ...``); the figure is its
wall time (``time.perf_counter``), the best of ``--repeats`` runs. Run from the repository root:
``python benchmarks/bench_large_inputs.py [--rows N] [--repeats K] [--only accuracy|power-fit]``.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "tests" / "data" / "measured_small.csv"
ROOFLINE = ROOT / "fits" / "data" / "public" / "gpu-roofline" / "a40.csv"
#: The target, seconds per command on two cores.
TARGET_S = 10.0


def accuracy_input(path: Path, rows: int) -> None:
    lines = MEASURED.read_text().splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    header, first = body[0].split(","), next(csv.reader([body[1]]))
    cols = {c: i for i, c in enumerate(header)}
    with path.open("w", newline="") as out:
        out.write("\n".join(comments) + "\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(header)
        for n in range(rows):
            row = list(first)
            bx, by = 1 + n % 1000, 1 + (n // 1000) % 1000
            row[cols["block_x"]], row[cols["block_y"]], row[cols["block_z"]] = str(bx), str(by), "1"
            row[cols["fold_y"]] = str(1 + n // 1_000_000)
            row[cols["config"]] = f"{bx}x{by}x1"
            factor = 0.5 + ((n * 2654435761) % 1000) / 1000  # deterministic, 0.5 to 1.5
            row[cols["meas_lups_per_s"]] = repr(float(first[cols["meas_lups_per_s"]]) * factor)
            row[cols["pred_lups_per_s"]] = repr(float(first[cols["pred_lups_per_s"]]) * (2 - factor))
            writer.writerow(row)


def power_input(path: Path, rows: int) -> None:
    lines = ROOFLINE.read_text().splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    data = body[1:]
    with path.open("w") as out:
        out.write("\n".join(comments) + "\n" + body[0] + "\n")
        for n in range(rows):
            out.write(data[n % len(data)] + "\n")


def timed(args: list[str], cwd: Path, repeats: int) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    best, last = float("inf"), ""
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "warpspeed.cli", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, check=False)
        best = min(best, time.perf_counter() - start)
        last = (done.stdout + done.stderr).strip().splitlines()[0] if (done.stdout + done.stderr).strip() else ""
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return best, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", choices=("accuracy", "power-fit"), default=None, help="time one command only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warpspeed-bench-large-") as tmp:
        folder = Path(tmp)
        accuracy_input(folder / "measured.csv", args.rows)
        power_input(folder / "runs.csv", args.rows)
        print(f"{args.rows} rows; target {TARGET_S:g} s per command; cores: {os.cpu_count()}, load average "
              f"{os.getloadavg()[0]:.2f}")
        for name, command in (("accuracy", ["accuracy", "measured.csv"]),
                              ("power-fit", ["power-fit", "runs.csv", "--device", "A40", "--family", "bench"])):
            if args.only not in (None, name):
                continue
            seconds, first_line = timed(command, folder, args.repeats)
            print(f"{name:<10} {seconds:7.2f} s  {'within' if seconds <= TARGET_S else 'OVER'} target   "
                  f"({first_line[:90]})")


if __name__ == "__main__":
    main()
