"""SASS parsing and the compile cache.

``tests/data/sass/star3d_r1_sm80.sass`` is ``cuobjdump -sass`` of the pystencils 2.0 7-point
star (double, 256x128x64, no folding) compiled with ``nvcc -arch=sm_80 -cubin -std=c++17`` of
CUDA 13.0 (the source :mod:`pystencils_plugin` attaches to the kernel). The expected numbers
below are counted in the listing with plain string matching, independently of the parser.
"""

import re

import pytest

from warpspeed.sass import full_warp_stream, mma_shape, parse_listing
from warpspeed.sass.parse import parse_instruction
from tests.paths import DATA

LISTING = DATA / "sass" / "star3d_r1_sm80.sass"


def _lines_before_exit(text):
    """Instruction lines (``/*xxxx*/ OPCODE ... ;``) up to the first unpredicated EXIT."""
    lines = [m.group(1).strip() for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([^;]*);", text)]
    end = next(i for i, s in enumerate(lines) if s.startswith("EXIT"))
    return lines[: end + 1]


def test_full_warp_path_counts():
    text = LISTING.read_text()
    expected = _lines_before_exit(text)
    stream = full_warp_stream(parse_listing(text))
    assert stream.full_path_instructions == len(expected)
    counts = stream.opcode_counts()
    for opcode in ("LDG", "STG", "DFMA", "DMUL", "S2R", "ISETP"):
        assert counts.get(opcode, 0) == sum(1 for s in expected if s.split()[0].split(".")[0] == opcode), opcode
    # the 7-point star: 7 loads, 1 store; c0*u0 + 6 FMAs in double precision
    assert (counts["LDG"], counts["STG"], counts["DFMA"], counts["DMUL"]) == (7, 1, 6, 1)


def test_guard_exit_and_constants():
    text = LISTING.read_text()
    expected = _lines_before_exit(text)
    stream = full_warp_stream(parse_listing(text))
    guard = next(i for i, s in enumerate(expected) if s.startswith("@") and "EXIT" in s)
    assert stream.guard_exit_instructions == guard + 1
    assert stream.instructions[guard].predicate == "P0"
    assert sum(i.const_operands for i in stream.instructions) == sum(s.count("c[0x") for s in expected)


def test_functional_unit_histogram():
    stream = full_warp_stream(parse_listing(LISTING.read_text()))
    mix = stream.mix()
    assert mix["fp64"] == 7 and mix["global"] == 8 and mix["tensor"] == 0
    assert mix["mio"] == sum(1 for i in stream.instructions if i.opcode in ("S2R", "ULDC"))
    assert sum(mix.values()) == stream.full_path_instructions


@pytest.mark.parametrize("body, opcode, dst, src", [
    ("IADD3 R11, P1, R4, 0x1, RZ", "IADD3", ("R11", "P1"), ("R4",)),
    ("@!P0 LDG.E.64.CONSTANT R12, [R8.64+0x8]", "LDG", ("R12",), ("R8", "P0")),
    ("STG.E.64 [R6.64], R2", "STG", (), ("R6", "R2")),
    ("DFMA R10, R14, c[0x0][0x180], R10", "DFMA", ("R10",), ("R14", "R10")),
    ("ISETP.GT.U32.OR.EX P0, PT, R0, c[0x0][0x16c], P1, P0", "ISETP", ("P0",), ("R0", "P1", "P0")),
])
def test_operands(body, opcode, dst, src):
    ins = parse_instruction(0, body)
    assert (ins.opcode, ins.dst, ins.src) == (opcode, dst, src)


def test_memory_widths_and_mma_shapes():
    assert parse_instruction(0, "LDG.E.64 R2, [R4.64]").bytes == 8
    assert parse_instruction(0, "LDG.E.128 R4, [R2.64]").bytes == 16
    assert parse_instruction(0, "STG.E [R2.64], R5").bytes == 4
    assert mma_shape("16816") == (16, 8, 16) and mma_shape("1688") == (16, 8, 8) and mma_shape("884") == (8, 8, 4)
    hmma = parse_instruction(0, "HMMA.16816.F32 R4, R8, R12, R4")
    assert hmma.fu == "tensor" and hmma.tensor_shape == (16, 8, 16)


@pytest.mark.parametrize("line, shape", [
    # PTX mma.sync shapes m16n8k32, m8n8k16, m16n8k64 as cuobjdump prints them for sm_80
    ("IMMA.16832.S8.S8 R8, R4.ROW, R16.COL, RZ", (16, 8, 32)),
    ("IMMA.8816.S8.S8 R8, R4.ROW, R16.COL, R8", (8, 8, 16)),
    ("IMMA.16864.S4.S4 R8, R4.ROW, R16.COL, R8", (16, 8, 64)),
    # sm_90a: DMMA with x, the warpgroup MMAs (wgmma m64n128k16, m64n8k32)
    ("DMMA.16x8x16 R8, R16, R32, R8", (16, 8, 16)),
    ("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0", (64, 128, 16)),
    ("IGMMA.64x8x32.S8.S8 R24, gdesc[UR4], RZ, !UPT, gsb0", (64, 8, 32)),
    ("QGMMA.64x8x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT, gsb0", (64, 8, 32)),
])
def test_mma_shapes_of_every_spelling(line, shape):
    ins = parse_instruction(0, line)
    assert ins.fu == "tensor" and ins.tensor_shape == shape


def test_not_a_listing_is_one_line_error():
    from warpspeed.sass import SassError

    with pytest.raises(SassError, match="no 'Function :' section"):
        parse_listing("hello")


def test_compile_cache_compiles_once(tmp_path, monkeypatch):
    from warpspeed.sass import compile as sass_compile
    from warpspeed.sass.toolchain import find_tool

    if find_tool("nvcc") is None or find_tool("cuobjdump") is None:
        pytest.skip("nvcc/cuobjdump not installed (pip install 'warpspeed[cuda]')")
    source = "extern \"C\" __global__ void k(double *a) { a[threadIdx.x] *= 2.0; }\n"
    first, _ = sass_compile.compile_sass(source, "sm_80", cache=tmp_path)
    assert "LDG" in first and "STG" in first and list((tmp_path / "sass").glob("*.json"))
    sass_compile._cached_sass.cache_clear()

    def no_subprocess(cmd, *a, **k):
        if "--version" in cmd:
            raise AssertionError("version is memoised")
        raise AssertionError(f"compiled again: {cmd}")

    monkeypatch.setattr(sass_compile.subprocess, "run", no_subprocess)
    second, _ = sass_compile.compile_sass(source, "sm_80", cache=tmp_path)
    assert second == first


def _fake_nvcc(tmp_path, listing: str, code: int = 0) -> str:
    """An executable that answers ``--list-gpu-arch`` with ``listing`` and exit status ``code``."""
    path = tmp_path / "nvcc"
    path.write_text(f"#!/bin/sh\nprintf '{listing}'\nexit {code}\n")
    path.chmod(0o755)
    return str(path)


def test_compile_target_takes_the_nearest_architecture_of_the_same_generation(tmp_path):
    """CUDA 13 lists compute_75 and up: sm_70 (Volta) is compiled as sm_75 (Turing, compute capability
    7.x) and says so; sm_80 stays; sm_60 has no 6.x left and stays (the compile then fails and says
    why); an nvcc that cannot list its architectures is asked for the requested one."""
    from warpspeed.sass.toolchain import compile_target

    nvcc = _fake_nvcc(tmp_path, "compute_75\\ncompute_80\\ncompute_86\\ncompute_90\\ncompute_100\\n")
    target, note = compile_target(nvcc, "sm_70")
    assert target == "sm_75" and "no sm_70" in note and "sm_75" in note
    assert compile_target(nvcc, "sm_80") == ("sm_80", "")
    assert compile_target(nvcc, "sm_60") == ("sm_60", "")
    old = tmp_path / "old"
    old.mkdir()
    assert compile_target(_fake_nvcc(old, "", 1), "sm_70") == ("sm_70", "")
