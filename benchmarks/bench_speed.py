"""The cost of ranking, part by part: imports, kernel set-up, the model per configuration, domain
scaling, pool against serial, the pipeline model, the plugin on a new domain, and the command line
against the bare import of its libraries.

Every figure is measured in fresh interpreters (``subprocess``) on a source tree: this checkout by
default, or any other one with ``--source DIR`` (for example an unpacked older commit,
``git archive <commit> | tar -x -C DIR``), whose packages are put first on ``PYTHONPATH``; with
``--before DIR`` both are measured, the runs of the command line alternating between them, and the
table shows both. Times are wall-clock seconds (``time.perf_counter``), medians of ``--repeat``
runs unless the row says otherwise; the machine's load average is recorded with them, since on a
shared machine it moves every figure (ratios measured in one run move less).

Workload: the 25-point range-4 star stencil (``star3d-r4``, pystencils, 640 x 512 x 512, double),
its 168 configurations of 1024 threads on A100-SXM4-40GB (Ernst, Holzer, Hager, Knorr, Wellein,
"Analytical Performance Estimation during Code Generation on Modern GPUs", JPDC 173 (2023),
section 5.1).

Run: python benchmarks/bench_speed.py [--before DIR] [--repeat 5] [--out benchmarks/results/speed.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Snippets run in fresh interpreters; each prints one JSON object on its last line.
COMMON = r"""
import json, os, statistics, sys, time
DEVICE = "A100-SXM4-40GB"
def out(**values):
    print(json.dumps(values))
"""

SETUP = COMMON + r"""
t0 = time.perf_counter()
from warpspeed.kernel.catalog import resolve
from warpspeed.hardware.device import load_device
import pystencils_plugin.unfold as unfold_module
t_import = time.perf_counter() - t0
dev = load_device(DEVICE)
spent = {"unfold": 0.0}
original = unfold_module.unfold
def timed_unfold(*a, **k):
    t = time.perf_counter()
    try:
        return original(*a, **k)
    finally:
        spent["unfold"] += time.perf_counter() - t
import pystencils_plugin.extract as extract_module
extract_module.unfold = timed_unfold
import subprocess as sp
compiles = []
run = sp.run
def counting_run(cmd, *a, **k):
    t = time.perf_counter()
    try:
        return run(cmd, *a, **k)
    finally:
        if "--resource-usage" in cmd:
            compiles.append(time.perf_counter() - t)
sp.run = counting_run
t = time.perf_counter()
for fold in ((1, 1, 1), (1, 2, 1), (1, 1, 2)):
    r = resolve("star3d-r4", None, fold=fold, device=dev)
total = time.perf_counter() - t
out(setup_s=total, compiles=len(compiles), compile_s=sum(compiles), unfold_s=spent["unfold"],
    registers=r.kernel.registers, registers_source=r.registers_source)
"""

MODEL = COMMON + r"""
from warpspeed.kernel.catalog import resolve
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, configuration_space, default_threads, MAX_BLOCK_Z
import warpspeed.rank as wr
import warpspeed.predict as P
import numpy as np
dev = load_device(DEVICE)
kernels = {f: resolve("star3d-r4", None, fold=f, device=dev).kernel for f in PAPER_FOLDINGS}
def blocks(k):
    return [c.block for c in configuration_space(k, default_threads(k, dev), [(1, 1, 1)], MAX_BLOCK_Z)]
stage = {}
calls = {"instruction_lanes": 0, "split": 0}
def wrap(module, name, label, count=None):
    f = getattr(module, name, None)
    if f is None:
        return
    def g(*a, **k):
        if count:
            calls[count] += 1
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            stage[label] = stage.get(label, 0.0) + time.perf_counter() - t
    setattr(module, name, g)
import warpspeed.memory.wave.wave_model as WM
wave_original = WM.WaveModel.grid_volumes
def timed_wave(self, *a, **k):
    t = time.perf_counter()
    try:
        return wave_original(self, *a, **k)
    finally:
        stage["wave volumes"] = stage.get("wave volumes", 0.0) + time.perf_counter() - t
WM.WaveModel.grid_volumes = timed_wave
wrap(P, "l1_cycles", "L1")
wrap(P, "block_footprint", "footprint")
import warpspeed.memory.addresses as A, warpspeed.memory.l1 as L1, warpspeed.memory.footprint as FP
for module in (A, L1, FP):
    wrap(module, "instruction_lanes", "lanes", "instruction_lanes")
split = np.split
def counting_split(*a, **k):
    calls["split"] += 1
    return split(*a, **k)
np.split = counting_split
n = sum(len(blocks(k)) for k in kernels.values())
wr.rank_per_fold(kernels, dev, blocks, executor=None)  # warm-up (imports, memo-free first run)
stage.clear(); calls.update(instruction_lanes=0, split=0)
times = []
for _ in range(REPEAT):
    t = time.perf_counter()
    wr.rank_per_fold(kernels, dev, blocks, executor=None)
    times.append(time.perf_counter() - t)
runs = REPEAT
out(configurations=n, ms_per_config=statistics.median(times) / n * 1e3,
    stages_ms_per_config={k: v / runs / n * 1e3 for k, v in stage.items()},
    instruction_lanes_per_config=calls["instruction_lanes"] / runs / n, np_split_per_config=calls["split"] / runs / n)
"""

THREADS = COMMON + r"""
from warpspeed.kernel.builtin import star_stencil
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import paper_space
from warpspeed.predict import Predictor
dev = load_device(DEVICE)
kernel = star_stencil(3, 4, (640, 512, 512), registers=32)
rows = {}
for threads in (256, 512, 1024):
    space = paper_space(threads)
    best = []
    for _ in range(REPEAT):
        p = Predictor(kernel, dev)
        t = time.perf_counter()
        for c in space:
            p.predict(c.block, c.fold)
        best.append((time.perf_counter() - t) / len(space) * 1e3)
    rows[threads] = statistics.median(best)
import numpy as np
slope, intercept = np.polyfit(list(rows), list(rows.values()), 1)
out(ms_per_config_by_threads=rows, fixed_ms=float(intercept), ms_per_1024_threads=float(slope * 1024))
"""

DOMAIN = COMMON + r"""
from warpspeed.kernel.builtin import star_stencil
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, configuration_space
from warpspeed.predict import Predictor
dev = load_device(DEVICE)
# the configurations both domains can use (configuration_space drops blocks wider than twice the domain)
space = configuration_space(star_stencil(3, 4, (128, 128, 128), registers=32), 1024, PAPER_FOLDINGS)
res = {128: [], 2048: []}
point = {128: [], 2048: []}
first = {}
for _ in range(REPEAT):
    for n in (128, 2048):
        kernel = star_stencil(3, 4, (n, n, n), registers=32)
        p = Predictor(kernel, dev)
        t = time.perf_counter()
        for c in space:
            p.predict(c.block, c.fold)
        res[n].append((time.perf_counter() - t) / len(space) * 1e3)
        q = Predictor(kernel, dev)
        t = time.perf_counter(); q.predict((32, 8, 4), (1, 2, 1)); first[n] = (time.perf_counter() - t) * 1e3
        t = time.perf_counter(); q.predict((32, 8, 4), (1, 2, 1)); point[n].append((time.perf_counter() - t) * 1e3)
m = {n: statistics.median(v) for n, v in res.items()}
out(configurations=len(space), ms_per_config=m, ratio=m[2048] / m[128],
    point_first_ms=first, point_repeat_ms={n: statistics.median(v) for n, v in point.items()})
"""

POOL = COMMON + r"""
from warpspeed.kernel.builtin import star_stencil
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, configuration_space
from warpspeed.rank import predict_configs, process_pool
import warpspeed.rank as wr
dev = load_device(DEVICE)
kernel = star_stencil(3, 4, (640, 512, 512), registers=32)
configs = [c for threads in (256, 512, 1024) for c in configuration_space(kernel, threads, PAPER_FOLDINGS)][:400]
def timed(executor):
    t = time.perf_counter()
    predict_configs(kernel, dev, configs, executor)
    return time.perf_counter() - t
serial = timed(None)
t = time.perf_counter()
with process_pool(2) as pool:
    pooled = timed(pool)
pooled_with_start = time.perf_counter() - t
auto = timed("auto")
pays = getattr(wr, "pool_pays", None)
out(configurations=len(configs), serial_s=serial, pool2_s=pooled, pool2_with_start_s=pooled_with_start, auto_s=auto,
    auto_uses_pool=bool(pays(len(configs), os.cpu_count() or 1)) if pays else len(configs) >= wr.AUTO_PARALLEL_MIN_CONFIGS)
"""

PIPELINE = COMMON + r"""
import importlib
from warpspeed.kernel.catalog import resolve
from warpspeed.hardware.device import load_device
from warpspeed.launch.space import PAPER_FOLDINGS, configuration_space, default_threads, MAX_BLOCK_Z
from warpspeed.predict import Predictor
import warpspeed.pipeline.launch_time as PM
simulate_module = importlib.import_module("warpspeed.pipeline.simulate")
dev = load_device(DEVICE)
preds = []
for f in PAPER_FOLDINGS:
    k = resolve("star3d-r4", None, fold=f, device=dev).kernel
    p = Predictor(k, dev)
    for c in configuration_space(k, default_threads(k, dev), [(1, 1, 1)], MAX_BLOCK_Z):
        preds.append(p.predict(c.block, f))
import heapq
pops = [0]
pop = heapq.heappop
def counting_pop(h):
    pops[0] += 1
    return pop(h)
simulate_module.heapq.heappop = counting_pop
spent = [0.0]
original = PM.simulate
def timed(*a, **k):
    t = time.perf_counter()
    try:
        return original(*a, **k)
    finally:
        spent[0] += time.perf_counter() - t
PM.simulate = timed
run = getattr(PM, "pipeline_result", None) or PM.estimate  # its name before the time-model protocol
[run(p) for p in preds[:8]]
spent[0] = 0.0; pops[0] = 0
times = []
for _ in range(REPEAT):
    t = time.perf_counter()
    for p in preds:
        run(p)
    times.append(time.perf_counter() - t)
out(configurations=len(preds), estimate_s=statistics.median(times), simulate_s=spent[0] / REPEAT,
    heap_pops=pops[0] // REPEAT)
"""

PLUGIN = COMMON + r"""
from pystencils_plugin import rank
from pystencils_plugin.workloads import star_stencil_assignments
rank("star3d-r4", DEVICE, domain=(320, 256, 256), executor=None)  # warm-up
res = {}
for label, source, domain in (("name, seen by the cache", "name", CACHED),
                              ("assignments, seen by the cache", "assignments", CACHED),
                              ("name, new to the cache", "name", NEW),
                              ("assignments, new to the cache", "assignments", NEW_TOO)):
    src = "star3d-r4" if source == "name" else star_stencil_assignments(3, 4, domain)
    t = time.perf_counter()
    r = rank(src, DEVICE, domain=domain if source == "name" else None, executor=None)
    dt = time.perf_counter() - t
    res[label] = {"domain": domain, "s": dt, "configurations": len(r.rows), "ms_per_config": dt / len(r.rows) * 1e3}
out(**res)
"""


def _env(source: Path, cache: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(source) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["WARPSPEED_CACHE_DIR"] = cache
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def _snippet(code: str, source: Path, cache: str, **constants) -> dict:
    prelude = "".join(f"{k} = {v!r}\n" for k, v in constants.items())
    proc = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          env=_env(source, cache), cwd=tempfile.gettempdir(), check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark snippet failed on {source}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _wall(cmd: list[str], source: Path, cache: str) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=_env(source, cache), cwd=tempfile.gettempdir(), check=True)
    return time.perf_counter() - t


CLI = ["-c", "import sys; from warpspeed.cli import main; sys.argv = ['warpspeed'] + sys.argv[1:]; main()"]
BARE = [sys.executable, "-c", "import numpy, sympy, pystencils, islpy"]


def _imports(source: Path, cache: str) -> dict:
    """Self time of the imports of ``warpspeed rank --json`` by top-level package (``-X importtime``,
    which slows imports down; the shares are what it shows) and what ``--help`` imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", *CLI, "rank", "--json"], capture_output=True, text=True,
                          env=_env(source, cache), cwd=tempfile.gettempdir(), check=True)
    groups = {"scipy": 0, "sympy + mpmath": 0, "warpspeed + plugin": 0, "numpy": 0, "pystencils": 0, "islpy": 0,
              "other": 0}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = (part.strip() for part in line.split(":", 1)[1].split("|"))
        top = name.split(".")[0]
        key = {"scipy": "scipy", "sympy": "sympy + mpmath", "mpmath": "sympy + mpmath", "warpspeed": "warpspeed + plugin",
               "pystencils_plugin": "warpspeed + plugin", "numpy": "numpy", "pystencils": "pystencils",
               "islpy": "islpy"}.get(top, "other")
        groups[key] += int(self_us)
    help_proc = subprocess.run([sys.executable, "-c", "import sys\nfrom warpspeed.cli import main\n"
                                "sys.argv = ['warpspeed', '--help']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
                                "print('MODULES', *sorted(sys.modules))"], capture_output=True, text=True,
                               env=_env(source, cache), cwd=tempfile.gettempdir(), check=True)
    loaded = set(help_proc.stdout.split("MODULES", 1)[1].split())
    help_s = statistics.median(_wall([sys.executable, *CLI, "--help"], source, cache) for _ in range(3))
    return {"self_ms_by_package": {k: v / 1e3 for k, v in groups.items()},
            "help_imports_sympy": "sympy" in loaded, "help_imports_numpy": "numpy" in loaded, "help_s": help_s}


def measure(source: Path, repeat: int) -> dict:
    """Every figure but the command line's (measured alternately by :func:`cli`)."""
    result = {"source": str(source)}
    with tempfile.TemporaryDirectory(prefix="warpspeed-bench-cache-") as cache:
        result["setup_cold"] = _snippet(SETUP, source, cache)  # an empty register cache
        result["setup_warm"] = _snippet(SETUP, source, cache)
        result["imports"] = _imports(source, cache)
        result["model"] = _snippet(MODEL, source, cache, REPEAT=repeat)
        result["threads"] = _snippet(THREADS, source, cache, REPEAT=max(1, repeat // 2))
        result["domain"] = _snippet(DOMAIN, source, cache, REPEAT=repeat)
        result["pool"] = _snippet(POOL, source, cache)
        result["pipeline"] = _snippet(PIPELINE, source, cache, REPEAT=max(1, repeat // 2))
        # the "seen" domain compiled once beforehand (registers in the disk cache), the "new" one not
        _snippet(COMMON + "from pystencils_plugin import rank\nrank('star3d-r4', DEVICE, domain=(384, 256, 256), "
                 "executor=None)\nout()", source, cache)
        result["plugin"] = _snippet(PLUGIN, source, cache, CACHED=(384, 256, 256), NEW=(416, 288, 256),
                                    NEW_TOO=(448, 320, 256))
    return result


def cli(sources: dict[str, Path], repeat: int) -> dict:
    """``warpspeed rank --json`` with warm caches and the bare import of numpy + sympy + pystencils +
    islpy, each in a fresh interpreter, all sources alternating run by run; medians and ratios."""
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="warpspeed-bench-cache-") as cache:
        for source in sources.values():
            _wall([sys.executable, *CLI, "rank", "--json"], source, cache)  # fills the register cache
        runs: dict[str, dict[str, list[float]]] = {name: {"rank": [], "bare": []} for name in sources}
        for _ in range(repeat):
            for name, source in sources.items():
                runs[name]["rank"].append(_wall([sys.executable, *CLI, "rank", "--json"], source, cache))
                runs[name]["bare"].append(_wall(BARE, source, cache))
    for name, r in runs.items():
        rank_s, bare_s = statistics.median(r["rank"]), statistics.median(r["bare"])
        out[name] = {"rank_json_s": rank_s, "bare_import_s": bare_s, "ratio": rank_s / bare_s,
                     "ratios_per_run": [a / b for a, b in zip(r["rank"], r["bare"])]}
    return out


def machine() -> dict:
    def run(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT).stdout.strip()
        except OSError:
            return ""

    return {"date": datetime.date.today().isoformat(), "nproc": os.cpu_count(), "python": platform.python_version(),
            "commit": run(["git", "rev-parse", "--short", "HEAD"]), "load_average_at_start": list(os.getloadavg())}


ROWS = (
    ("imports: scipy / sympy+mpmath / warpspeed+plugin / numpy / pystencils (self ms, -X importtime)",
     lambda r: " / ".join(f"{r['imports']['self_ms_by_package'][k]:.0f}" for k in
                          ("scipy", "sympy + mpmath", "warpspeed + plugin", "numpy", "pystencils"))),
    ("warpspeed --help: s, imports sympy", lambda r: f"{r['imports']['help_s']:.2f}, {r['imports']['help_imports_sympy']}"),
    ("kernel set-up, 3 foldings, empty cache: s (nvcc runs, s)",
     lambda r: f"{r['setup_cold']['setup_s']:.2f} ({r['setup_cold']['compiles']}, {r['setup_cold']['compile_s']:.2f})"),
    ("kernel set-up, 3 foldings, warm cache: s (nvcc runs)",
     lambda r: f"{r['setup_warm']['setup_s']:.2f} ({r['setup_warm']['compiles']})"),
    ("unfold, 2 folded kernels: s", lambda r: f"{r['setup_cold']['unfold_s']:.3f}"),
    ("model, 168 configurations: ms per configuration", lambda r: f"{r['model']['ms_per_config']:.2f}"),
    ("  wave volumes / L1 / footprint: ms per configuration",
     lambda r: " / ".join(f"{r['model']['stages_ms_per_config'].get(k, 0):.2f}" for k in ("wave volumes", "L1", "footprint"))),
    ("  instruction_lanes calls / np.split calls per configuration",
     lambda r: f"{r['model']['instruction_lanes_per_config']:.0f} / {r['model']['np_split_per_config']:.0f}"),
    ("model: fixed ms + ms per 1024 threads (fit over 256/512/1024)",
     lambda r: f"{r['threads']['fixed_ms']:.2f} + {r['threads']['ms_per_1024_threads']:.2f}"),
    ("domain 128^3 / 2048^3: ms per configuration (ratio)",
     lambda r: f"{r['domain']['ms_per_config']['128']:.2f} / {r['domain']['ms_per_config']['2048']:.2f} "
               f"({r['domain']['ratio']:.2f})"),
    ("  one configuration 32x8x4 fold y2, first call 128^3 / 2048^3: ms",
     lambda r: f"{r['domain']['point_first_ms']['128']:.1f} / {r['domain']['point_first_ms']['2048']:.1f}"),
    ("400 configurations: serial / pool of 2 (with start) / auto: s",
     lambda r: f"{r['pool']['serial_s']:.2f} / {r['pool']['pool2_with_start_s']:.2f} / {r['pool']['auto_s']:.2f}"),
    ("pipeline model, 168 configurations: s (simulate s, heap pops)",
     lambda r: f"{r['pipeline']['estimate_s']:.2f} ({r['pipeline']['simulate_s']:.2f}, {r['pipeline']['heap_pops']})"),
    ("plugin rank, new domain, registers in the disk cache: ms per configuration",
     lambda r: f"{r['plugin']['name, seen by the cache']['ms_per_config']:.2f} (name) / "
               f"{r['plugin']['assignments, seen by the cache']['ms_per_config']:.2f} (assignments)"),
    ("plugin rank, new domain, not in the disk cache (nvcc): ms per configuration",
     lambda r: f"{r['plugin']['name, new to the cache']['ms_per_config']:.2f} (name) / "
               f"{r['plugin']['assignments, new to the cache']['ms_per_config']:.2f} (assignments)"),
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default=str(ROOT), help="source tree to measure (default: this checkout)")
    parser.add_argument("--before", default=None, help="a second source tree measured the same way (e.g. an older commit)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (medians)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "speed.json"))
    args = parser.parse_args(argv)
    sources = {"after": Path(args.source).resolve()}
    if args.before:
        sources = {"before": Path(args.before).resolve(), **sources}
    info = machine()
    results = {name: measure(source, args.repeat) for name, source in sources.items()}
    command_line = cli(sources, args.repeat)
    for name in results:
        results[name]["cli"] = command_line[name]
    info["load_average_at_end"] = list(os.getloadavg())
    document = {"machine": info, "device": "A100-SXM4-40GB", "workload": "star3d-r4 (pystencils), 640x512x512",
                "results": results}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n")

    names = list(results)
    print(f"{info['date']}, {info['nproc']} cores, Python {info['python']}, commit {info['commit']}, load average "
          f"{info['load_average_at_start'][0]:.2f} at the start, {info['load_average_at_end'][0]:.2f} at the end")
    print(f"{'figure':78s}" + "".join(f" {n:>24s}" for n in names))
    for label, cell in ROWS:
        print(f"{label:78s}" + "".join(f" {cell(results[n]):>24s}" for n in names))
    label = "warpspeed rank --json, warm caches / bare numpy+sympy+pystencils+islpy: s (ratio)"
    print(f"{label:78s}" + "".join(
        f" {results[n]['cli']['rank_json_s']:.2f} / {results[n]['cli']['bare_import_s']:.2f} "
        f"({results[n]['cli']['ratio']:.2f})".rjust(25) for n in names))
    print(f"\nwritten: {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
