"""benchmarks/gpu/sm_mechanisms.py without a GPU: every generated kernel compiles for sm_90 and
its SASS holds the instructions each part intends (counted by hand from the kernel's loop body,
stencil and fold); the dry run plans within its budget without cupy; the CSV writer's header and
rows. The compiled subset below runs by default; every kernel of every part with ``-m slow``."""

from __future__ import annotations

import csv
import importlib.util
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.paths import ROOT
from warpspeed.sass.toolchain import find_tool

SCRIPT = ROOT / "benchmarks" / "gpu" / "sm_mechanisms.py"


def _module():
    if "sm_mechanisms_under_test" not in sys.modules:
        spec = importlib.util.spec_from_file_location("sm_mechanisms_under_test", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module          # dataclasses resolve their module by name
        spec.loader.exec_module(module)
    return sys.modules["sm_mechanisms_under_test"]


# ------------------------------------------------------------------ compiling and counting SASS

_OP = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s")


def _sass(tmp_path, name: str, source: str) -> Counter:
    """Opcodes with modifiers of ``source`` compiled by nvcc for sm_90 (cuobjdump -sass)."""
    nvcc, cuobjdump = find_tool("nvcc"), find_tool("cuobjdump")
    cu, cubin = tmp_path / f"{name}.cu", tmp_path / f"{name}.cubin"
    cu.write_text(source)
    done = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-std=c++17", "-o", str(cubin), str(cu)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (name, done.stderr[-600:])
    sass = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True, text=True,
                          timeout=120).stdout
    assert f"Function : {name}" in sass
    return Counter(_OP.findall(sass))


def _base(ops: Counter, mnemonic: str) -> int:
    """Instructions whose opcode is ``mnemonic`` with any modifiers."""
    return sum(n for op, n in ops.items() if op.split(".")[0] == mnemonic)


needs_toolchain = pytest.mark.skipif(find_tool("nvcc") is None or find_tool("cuobjdump") is None,
                                     reason="needs nvcc and cuobjdump (pip install 'warpspeed[cuda]')")


def _fp(ctype: str) -> tuple[str, str, str]:
    return ("FFMA", "FMUL", "FADD") if ctype == "float" else ("DFMA", "DMUL", "DADD")


# Hand counts, from the sources' docstrings and loop bodies.

def _check_misaligned(ops, ctype, where):
    # 16 loads q[0], q[32], ..., q[480] per trip (l1) or per thread (dram), summed into 4
    # accumulators (16 adds) and the 4 summed (3 adds)
    fma, mul, add = _fp(ctype)
    assert _base(ops, "LDG") == 16
    assert ops[add] == 16 + 3
    assert _base(ops, "STG") == 1


def _check_loads_fma(ops, ctype, loads, fmas, chains):
    fma, mul, add = _fp(ctype)
    assert _base(ops, "LDG") == loads
    assert ops[fma] == fmas
    # loads no FMA reads are added to a chain; the chains are summed at the end
    assert ops[add] == max(0, loads - fmas) + chains - 1


def _check_chains(ops, ctype, chains, fmas=64):
    fma, mul, add = _fp(ctype)
    assert ops[fma] == fmas
    assert ops[add] == chains - 1
    assert _base(ops, "LDG") == 0


def _check_stencil(ops, shape, dims, radius, fold, ctype, restrict):
    fma, mul, add = _fp(ctype)
    side = 2 * radius + 1
    if shape == "box":
        points = side ** dims
        # the fold's outputs share rows: 2r+fold rows in y, 2r+1 in x (and z)
        loads = side ** (dims - 1) * (2 * radius + fold)
    else:
        points = 2 * dims * radius + 1
        # per output its x (and z) arm with the centre; the y column 2r+fold, less the centres
        arms = 2 * radius * (dims - 1) + 1
        loads = fold * arms + 2 * radius
    assert _base(ops, "LDG") == loads
    assert ops[mul] == fold                          # each output: one multiplication ...
    assert ops[fma] == fold * (points - 1)           # ... then one FMA per further point
    assert _base(ops, "STG") == fold
    non_coherent = sum(n for op, n in ops.items() if op.startswith("LDG") and "CONSTANT" in op)
    assert non_coherent == (loads if restrict else 0)


def _check_d3q19(ops, ctype, passes, fold):
    fma, mul, add = _fp(ctype)
    cells = 1 if fold == "none" else 2
    assert _base(ops, "LDG") == 19 * cells
    assert _base(ops, "STG") == 19 * cells
    assert ops[mul] == 19 * passes * cells           # a 19x19 pass: 19 rows of 1 multiplication ...
    assert ops[fma] == 18 * 19 * passes * cells      # ... and 18 FMAs


def _intmix_ints(ops, op):
    """Integer instructions of the intended kind: IMAD (a real multiply-add) for imad; for alu the
    adds and xors, as IADD3, VIADD and LOP3 or as the IMAD.IADD form ptxas uses to move adds onto
    the FMA pipe."""
    if op == "imad":
        return ops["IMAD"]
    return ops["IADD3"] + ops["VIADD"] + ops["LOP3.LUT"] + ops["IMAD.IADD"]


def _intmix_baseline(op):
    """The kernel whose loop holds no instruction of the kind: for imad no integer work at all;
    for alu the imad kernel with 8 integer operations (the same initialisation and final xor of
    the integer chains, which the compiler drops when the chains stay constant)."""
    return (0, "imad") if op == "imad" else (8, "imad")


def test_sass_counter_reads_opcodes_with_modifiers():
    m = _module()
    text = ("        /*0070*/                   LDG.E.64.CONSTANT R2, desc[UR4][R2.64] ;   /* 0x... */\n"
            "        /*0080*/               @!P0 FFMA R5, R4, c[0x0][0x210], R5 ;   /* 0x... */\n"
            "        /*0090*/                   IMAD.IADD R1, R2, 0x1, R3 ;   /* 0x... */\n"
            "        /*00a0*/                   FFMA R6, R4, c[0x0][0x210], R6 ;\n")
    assert m.sass_opcodes(text) == Counter({"LDG.E.64.CONSTANT": 1, "FFMA": 2, "IMAD.IADD": 1})


# The representative subset compiled by default: one kernel of each kind.
SUBSET = [
    ("misaligned", ("float", "l1")), ("misaligned", ("double", "dram")),
    ("loads_fma", ("float", 4, 16, 8)), ("loads_fma", ("double", 8, 0, 1)),
    ("chains", ("double", 4)),
    ("stencil", ("box", 2, 2, 2, "float", False)), ("stencil", ("box", 3, 1, 4, "double", False)),
    ("stencil", ("star", 3, 2, 2, "float", False)), ("stencil", ("box", 2, 1, 1, "double", True)),
    ("d3q19", ("double", 1, "z2")),
]


def _compile_and_check(m, tmp_path, kind, params):
    if kind == "misaligned":
        ctype, where = params
        _check_misaligned(_sass(tmp_path, m.misaligned_name(ctype, where), m.misaligned_source(ctype, where)),
                          ctype, where)
    elif kind == "loads_fma":
        _check_loads_fma(_sass(tmp_path, m.loads_fma_name(*params), m.loads_fma_source(*params)), *params)
    elif kind == "chains":
        _check_chains(_sass(tmp_path, m.chains_name(*params), m.chains_source(*params)), *params)
    elif kind == "stencil":
        shape, dims, radius, fold, ctype, restrict = params
        src = m.stencil_source(shape, dims, radius, fold, ctype, m.stencil_domain(dims, radius, shape), restrict)
        _check_stencil(_sass(tmp_path, m.stencil_name(shape, dims, radius, fold, ctype, restrict), src), *params)
    elif kind == "d3q19":
        ctype, passes, fold = params
        src = m.d3q19_source(ctype, passes, fold, m.D3Q19_DOMAIN)
        _check_d3q19(_sass(tmp_path, m.d3q19_name(ctype, passes, fold), src), *params)
    else:
        raise AssertionError(kind)


@needs_toolchain
@pytest.mark.parametrize("kind, params", SUBSET)
def test_subset_compiles_to_the_intended_instructions(tmp_path, kind, params):
    _compile_and_check(_module(), tmp_path, kind, params)


@needs_toolchain
def test_ifetch_body_is_n_ffma(tmp_path):
    """256 FFMAs in the body: 4 KiB of SASS at 16 B per instruction."""
    m = _module()
    ops = _sass(tmp_path, m.ifetch_name(256), m.ifetch_source(256))
    assert ops["FFMA"] == 256
    assert 16 * sum(ops.values()) < 4096 + 16 * 64          # the body dominates the kernel


@needs_toolchain
@pytest.mark.parametrize("op", ["imad", "alu"])
def test_intmix_adds_exactly_the_integer_share(tmp_path, op):
    """24 of 64 operations integer: 24 more integer instructions of the kind than the baseline, 24
    fewer FFMAs than 64."""
    m = _module()
    ints, base_op = _intmix_baseline(op)
    base = _sass(tmp_path, "z", m.intmix_source(ints, base_op).replace(m.intmix_name(ints, base_op), "z"))
    some = _sass(tmp_path, m.intmix_name(24, op), m.intmix_source(24, op))
    assert some["FFMA"] == 40
    assert _intmix_ints(some, op) - _intmix_ints(base, op) == 24


def _every_kernel(m):
    """(name, source, kind, params) of every kernel of every part, enumerated from the parameter
    spaces the parts name, independently of the plans."""
    out = []
    for ctype in ("float", "double"):
        for where in ("l1", "dram"):
            out.append((m.misaligned_name(ctype, where), m.misaligned_source(ctype, where), "misaligned",
                        (ctype, where)))
        for loads, fmas in m.LOADS_FMA_PAIRS:
            for chains in sorted({1, min(8, max(fmas, 1))}):
                p = (ctype, loads, fmas, chains)
                out.append((m.loads_fma_name(*p), m.loads_fma_source(*p), "loads_fma", p))
        for chains in (1, 2, 4, 8):
            out.append((m.chains_name(ctype, chains), m.chains_source(ctype, chains), "chains", (ctype, chains)))
    for nbytes in m.IFETCH_BYTES:
        out.append((m.ifetch_name(nbytes // 16), m.ifetch_source(nbytes // 16), "ifetch", (nbytes // 16,)))
    for op in ("imad", "alu"):
        for ints in m.MIX_INTS:
            if op == "alu" and ints == 0:
                continue
            out.append((m.intmix_name(ints, op), m.intmix_source(ints, op), "intmix", (ints, op)))
    for shape, dims, radii in m.STENCILS:
        for radius in radii:
            for ctype in ("float", "double"):
                folds = [(f, False) for f in (1, 2, 4)
                         if not (shape == "box" and dims == 3 and f > 1 and radius > m.BOX3D_FOLDED_MAX_RADIUS)]
                if shape == "box" and dims == 2:
                    folds += [(1, True), (4, True)]
                for fold, restrict in folds:
                    p = (shape, dims, radius, fold, ctype, restrict)
                    src = m.stencil_source(shape, dims, radius, fold, ctype, m.stencil_domain(dims, radius, shape),
                                           restrict)
                    out.append((m.stencil_name(shape, dims, radius, fold, ctype, restrict), src, "stencil", p))
    for ctype in ("float", "double"):
        for passes in m.D3Q19_PASSES:
            for fold in ("none", "y2", "z2"):
                out.append((m.d3q19_name(ctype, passes, fold), m.d3q19_source(ctype, passes, fold, m.D3Q19_DOMAIN),
                            "d3q19", (ctype, passes, fold)))
    return out


def test_the_enumeration_is_every_planned_kernel():
    """The kernels the slow test checks are exactly those the parts launch, with the same sources."""
    m = _module()
    planned = {p.kernel: p.source for plan in m.PLANS.values() for p in plan(132).points}
    enumerated = {name: src for name, src, *_ in _every_kernel(m)}
    assert planned == enumerated


@pytest.mark.slow
@needs_toolchain
def test_every_kernel_compiles_to_the_intended_instructions(tmp_path):
    m = _module()
    kernels = _every_kernel(m)

    def one(item):
        name, source, kind, params = item
        ops = _sass(tmp_path, name, source)
        if kind == "misaligned":
            _check_misaligned(ops, *params)
        elif kind == "loads_fma":
            _check_loads_fma(ops, *params)
        elif kind == "chains":
            _check_chains(ops, *params)
        elif kind == "ifetch":
            assert ops["FFMA"] == params[0]
        elif kind == "intmix":
            ints, op = params
            assert ops["FFMA"] == 64 - ints
            return name, (op, ints, ops)
        elif kind == "stencil":
            _check_stencil(ops, *params)
        else:
            _check_d3q19(ops, *params)
        return name, None

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, kernels))
    mix = {v[:2]: v[2] for _, v in results if v}
    for (op, ints), ops in mix.items():
        base_ints, base_op = _intmix_baseline(op)
        assert _intmix_ints(ops, op) - _intmix_ints(mix[(base_op, base_ints)], op) == ints, (op, ints)


# ------------------------------------------------------------------ dry run, options, CSV

def _run(*args, cupy_hidden=True):
    code = ("import runpy, sys; sys.modules['cupy'] = None; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')") if cupy_hidden else None
    cmd = [sys.executable, "-c", code, str(SCRIPT), *args] if cupy_hidden else [sys.executable, str(SCRIPT), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_dry_run_plans_within_the_budget_without_cupy():
    done = _run("--dry-run")
    assert done.returncode == 0, done.stderr
    total = re.search(r"^total: estimated ([0-9.]+) s with nvcc", done.stdout, re.M)
    assert total and float(total.group(1)) <= 120
    assert "within the budget of 120 s" in done.stdout
    # part a: 2 element types x (L1, DRAM) x offsets 0-31, each 2 warm-up + 7 timed launches
    assert "part a misaligned: 128 measurements, 4 kernels, 1152 launches" in done.stdout
    # part c: 2 types x 4 chain counts x 10 occupancies
    assert "part c chains: 80 measurements, 8 kernels" in done.stdout
    for name in ("misaligned", "loads-fma", "chains", "ifetch", "intmix", "stencils", "d3q19"):
        assert f"-> sm-{name}.csv" in done.stdout


def test_dry_run_over_a_small_budget_says_so():
    done = _run("--dry-run", "--parts", "f", "--budget", "5")
    assert done.returncode == 1 and "OVER the budget of 5 s" in done.stdout


def test_bad_options_get_one_line():
    for args, start in ((("--dry-run", "--parts", "a,z"), "error: unknown part 'z'; allowed: a, b, c, d, e, f, g"),
                        (("--dry-run", "--budget", "0"), "error: --budget must be positive"),
                        ((), "error: --out DIR is required"),
                        (("--out", "unused"), "error: sm_mechanisms.py needs cupy")):
        done = _run(*args)
        assert done.returncode == 2 and done.stderr.startswith(start), (args, done.stderr)
        assert done.stderr.count("\n") == 1


def test_generators_refuse_bad_parameters():
    m = _module()
    for call in (lambda: m.misaligned_source("half", "l1"), lambda: m.misaligned_source("float", "l2"),
                 lambda: m.loads_fma_source("float", 0, 4, 1), lambda: m.chains_source("float", 8, 4),
                 lambda: m.stencil_source("box", 2, 1, 3, "float", (64, 64)),
                 lambda: m.d3q19_source("float", 1, "x2", (8, 8, 8))):
        with pytest.raises(ValueError):
            call()


def test_csv_header_and_rows_of_a_fake_measurement(tmp_path):
    m = _module()
    header = m.header_lines("NVIDIA H200", 132, "NVIDIA H200, 580.159.04, 1980 MHz, 1980 MHz, 3201 MHz",
                            "cupy 14.2.0, CUDA runtime 13020, driver 13000", "nvcc -arch=sm_90",
                            "what the part measures", when="2026-11-29T08:00:00Z")
    path = tmp_path / "sm-chains.csv"
    w = m.Writer(str(path), header, ("dtype", "chains"))
    w.row(("float", 4), "ch_f32_c4_n64", 24, 16, 1980.04, 7, 1.234567891e-4, 1.2e-4)
    assert not path.exists()                        # written under a temporary name until closed
    w.close()
    text = path.read_text().splitlines()
    assert text[:6] == ["# gpu: NVIDIA H200, 132 SMs",
                        "# nvidia-smi (name, driver, clocks.sm, clocks.max.sm, clocks.mem, clocks.applications."
                        "graphics, power.limit, ecc): NVIDIA H200, 580.159.04, 1980 MHz, 1980 MHz, 3201 MHz",
                        "# cupy 14.2.0, CUDA runtime 13020, driver 13000",
                        "# compiled: nvcc -arch=sm_90",
                        "# measured: 2026-11-29T08:00:00Z by benchmarks/gpu/sm_mechanisms.py (warpspeed)",
                        "# what the part measures"]
    rows = list(csv.reader(line for line in text if not line.startswith("#")))
    assert rows[0] == ["dtype", "chains", "kernel", "registers", "blocks_per_sm", "sm_clock_mhz", "launches",
                       "seconds", "seconds_min"]
    assert rows[1] == ["float", "4", "ch_f32_c4_n64", "24", "16", "1980.04", "7", "0.000123457", "0.00012"]


def test_sass_counts_file(tmp_path):
    m = _module()
    path = tmp_path / "sm-sass.csv"
    m.write_sass_counts(str(path), ["gpu: X"], {"k": Counter({"FFMA": 64, "LDG.E": 2})})
    assert path.read_text().splitlines() == ["# gpu: X", "kernel,opcode,count", "k,(all),66", "k,FFMA,64", "k,LDG.E,2"]


# ------------------------------------------------------------------ run.sh --campaign sm

def _run_sh(tmp_path, *args):
    import os

    env = {**os.environ, "OUT": str(tmp_path), "PYTHON": sys.executable}
    return subprocess.run(["bash", str(SCRIPT.parent / "run.sh"), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_run_sh_refuses_an_unknown_campaign(tmp_path):
    done = _run_sh(tmp_path, "--campaign", "nope")
    assert done.returncode == 2 and done.stderr == "error: --campaign is transfer, paper or sm, got 'nope'\n"


def test_run_sh_sm_campaign_dry_run_needs_no_wheels(tmp_path):
    """The sm campaign's dry run works without benchmarks/gpu/wheels/ and prints its two steps and
    the plan; the kernels it profiles with ncu are 13 kernels of the plan, none misspelt."""
    done = _run_sh(tmp_path, "--dry-run", "--campaign", "sm")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^-- sm-mechanisms \(at most 150 s\): \S+ \S+/sm_mechanisms.py --gpu 0 --budget 120 --out ",
                     out, re.M)
    assert "within the budget of 120 s" in out
    ncu = re.search(r"^-- sm-ncu \(at most 120 s\): ncu .* --only (\S+) --points-per-kernel 2 ", out, re.M)
    assert ncu, out
    m = _module()
    names = {p.kernel for plan in m.PLANS.values() for p in plan(132).points}
    pattern = re.compile(ncu.group(1))
    assert len({n for n in names if pattern.search(n)}) == 13
    assert out.rstrip().endswith("== dry run: no GPU step was run")
    assert list(tmp_path.iterdir()) == []                 # a dry run leaves no archive


# ------------------------------------------------------------------ the measuring path, on a fake cupy

class _FakeKernel:
    def __init__(self, name, log):
        self.name, self.log = name, log
        self.num_regs = 40
        self.max_dynamic_shared_size_bytes = 0
        self.kernel = type("F", (), {"ptr": 1})()

    def __call__(self, grid, block, args, shared_mem=0):
        self.log.append((self.name, tuple(grid), tuple(block), shared_mem))


def _fake_cupy(log, sms=4):
    """Just what sm_mechanisms.py calls: kernels record their launches, every launch takes 1 ms."""
    from types import SimpleNamespace as NS

    per_sm, per_block = 233472, 232448            # H100/H200 shared memory per SM and per block (opt-in)

    class Device:
        def __init__(self, i=0):
            self.id = i
            self.attributes = {"MaxSharedMemoryPerMultiprocessor": per_sm,
                               "MaxSharedMemoryPerBlockOptin": per_block}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    props = {"name": b"Fake GPU", "multiProcessorCount": sms, "major": 9, "minor": 0}
    cuda = NS(Device=Device, Event=Event, get_elapsed_time=lambda a, b: 1.0,
              runtime=NS(getDeviceCount=lambda: 1, getDeviceProperties=lambda i: props,
                         runtimeGetVersion=lambda: 13020, driverGetVersion=lambda: 13000),
              driver=NS(occupancyMaxActiveBlocksPerMultiprocessor=lambda f, t, s: 2))
    return NS(__version__="fake", cuda=cuda,
              RawKernel=lambda code, name, options=(): _FakeKernel(name, log),
              RawModule=lambda path: NS(get_function=lambda name: _FakeKernel(name, log)),
              full=lambda n, fill, dtype: ("buffer", n), zeros=lambda n, dtype: ("buffer", n),
              int32=int, int64=int, float32=float, float64=float,
              get_default_memory_pool=lambda: NS(free_all_blocks=lambda: None))


def test_measuring_path_on_a_fake_gpu(tmp_path, monkeypatch):
    """Parts a and c on a fake 4-SM GPU: one row per point, grids of blocks per SM times the SM
    count, the blocks-per-SM cap of part c held by dynamic shared memory, the CSVs renamed when
    complete, every launch timed after its warm-up launches."""
    m = _module()
    log = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(log))
    monkeypatch.setenv("PATH", "/nonexistent")         # no nvcc: cupy compiles (here: the fake)
    assert m.main(["--out", str(tmp_path), "--parts", "a,c", "--budget", "100"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sm-chains.csv", "sm-misaligned.csv"]
    rows = list(csv.DictReader(line for line in (tmp_path / "sm-misaligned.csv").read_text().splitlines()
                               if not line.startswith("#")))
    assert len(rows) == 128                             # 2 types x (L1, DRAM) x 32 offsets
    assert {r["seconds"] for r in rows} == {"0.001"} and {r["launches"] for r in rows} == {"7"}
    assert {r["blocks_per_sm"] for r in rows} == {"2"} and {r["registers"] for r in rows} == {"40"}
    l1 = [e for e in log if e[0] == "mis_l1_f32"]
    assert len(l1) == 32 * (2 + 7) and {e[1] for e in l1} == {(8 * 4, 1, 1)}
    # part c: warps per SM 1-64 in blocks of 1-4 warps; each cap k needs per_sm // (smem + 1 KiB) == k
    chains = [e for e in log if e[0].startswith("ch_")]
    assert len(chains) == 80 * (2 + 7)
    caps = {(e[1][0] // 4, e[3]) for e in chains}
    assert {k for k, _ in caps} == {1, 2, 4, 8, 12, 16}
    for k, smem in caps:
        assert 233472 // (smem + 1024) == k and smem % 1024 == 0
    text = (tmp_path / "sm-chains.csv").read_text()
    assert text.startswith("# gpu: Fake GPU, 4 SMs\n") and "# compiled: cupy's NVRTC" in text


def test_a_small_budget_skips_points_and_keeps_the_rest(tmp_path, monkeypatch):
    m = _module()
    log = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(log))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert m.main(["--out", str(tmp_path), "--parts", "g", "--budget", "0.05"]) == 0
    lines = [x for x in (tmp_path / "sm-d3q19.csv").read_text().splitlines() if not x.startswith("#")]
    assert len(lines) - 1 < 108                         # not every point fitted in 50 ms


@needs_toolchain
def test_kernels_precompiled_with_nvcc_and_their_sass_listed(tmp_path, monkeypatch):
    """With nvcc on PATH the kernels are compiled to sm_90 cubins before the parts run (loaded
    through RawModule) and sm-sass.csv lists their opcodes: 16 global loads per misaligned kernel."""
    m = _module()
    log = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(log))
    assert m.main(["--out", str(tmp_path), "--parts", "a", "--budget", "100"]) == 0
    text = (tmp_path / "sm-misaligned.csv").read_text()
    assert "# compiled: nvcc -arch=sm_90 -cubin -std=c++17 (" in text and "4 of 4 kernels" in text
    rows = list(csv.reader(x for x in (tmp_path / "sm-sass.csv").read_text().splitlines() if not x.startswith("#")))
    assert {r[0] for r in rows[1:]} == {"mis_l1_f32", "mis_l1_f64", "mis_dram_f32", "mis_dram_f64"}
    for kernel in ("mis_l1_f32", "mis_dram_f64"):
        assert sum(int(n) for k, op, n in rows[1:] if k == kernel and op.startswith("LDG")) == 16
