"""Thread folding: identical loads of a read-only field in two fold copies are one instruction.

Hand-derived load counts per thread, the effect on L1 cycles (Ernst et al., JPDC 2023, 5.4:
folding lowers L1 time), and - where nvcc and cuobjdump are installed - the number of global
load instructions (LDG) in the SASS of the folded pystencils kernel.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from warpspeed import Field, Kernel, load, store
from warpspeed.kernel.builtin import star_stencil
from warpspeed.kernel.description import X, Y
from warpspeed.launch.geometry import make_launch
from warpspeed.memory.addresses import block_cells, compile_kernel, instruction_lanes, merged_copies
from warpspeed.memory.l1 import l1_cycles


def _loads_per_thread(kernel, fold):
    """Load instructions one thread issues: distinct owners among the load copies."""
    compiled = compile_kernel(kernel)
    cells = block_cells(make_launch((32, 2, 2), fold, kernel.domain))
    owner = merged_copies(compiled, cells.offsets)
    loads = [i for i, a in enumerate(compiled.accesses) if not a.access.is_store]
    return len(set(owner[loads].ravel().tolist()))


@pytest.mark.parametrize("dims, radius, fold, expected", [
    # 25-point range-4 star folded 2 in y: the y-line of copy 1 is y-3..y+5, of copy 0 y-4..y+4;
    # they share y-3..y+4 (8 points): 25 + 25 - 8 = 42 loads per thread, 21 per lup
    (3, 4, (1, 2, 1), 42),
    (3, 4, (1, 1, 2), 42),  # folded in z: same by symmetry
    (3, 4, (2, 1, 1), 42),  # and in x
    (3, 1, (1, 2, 1), 12),  # 7-point star folded in y: 7 + 7 - 2
    (3, 1, (1, 1, 1), 7),  # no folding: nothing merges
    # folded 2 x 2 in y and z: 4 x 7 loads; each of the 4 pairs of copies adjacent along y or z
    # shares 2 points, diagonal pairs share none: 28 - 4 * 2 = 20
    (3, 1, (1, 2, 2), 20),
    # 25-point folded 4 in y: 4 y-lines of 9 overlapping in y-4..y+7 -> 12 distinct y-points,
    # plus 16 off-axis points per copy: 12 + 4 * 16 = 76
    (3, 4, (1, 4, 1), 76),
])
def test_loads_per_thread_by_hand(dims, radius, fold, expected):
    assert _loads_per_thread(star_stencil(dims, radius, (64, 64, 64)), fold) == expected


def test_loads_of_a_stored_field_and_stores_do_not_merge():
    # in-place update: the field is stored, so its loads may change between copies
    f = Field("u", 8, (66, 66))
    k = Kernel("inplace", (f,), (load("u", X + 1, Y), load("u", X + 1, Y + 2), store("u", X + 1, Y + 1)), (64, 64, 1))
    assert _loads_per_thread(k, (1, 2, 1)) == 4


def test_folded_25_point_l1_cycles_match_the_paper(a100):
    # Unfolded, x >= 16: 26 instructions x 2 half-warp wavefronts / 32 lups = 1.625 cycles/lup.
    # Folded 2 in y: (42 loads + 2 stores) / 2 lups = 22 instructions per lup -> 22 x 2 / 32 =
    # 1.375 (the paper's measured reduction). A warp is one row of 32 doubles: at most 3 lines,
    # tag max(1, 0.46 + 0.28 * 3) = 1.3 < 2.
    k = star_stencil(3, 4, (64, 64, 64))
    compiled = compile_kernel(k)
    for fold, expected in (((1, 1, 1), 1.625), ((1, 2, 1), 1.375), ((1, 1, 2), 1.375)):
        cells = block_cells(make_launch((32, 4, 2), fold, k.domain))
        assert l1_cycles(compiled, cells, a100).cycles_per_lup == pytest.approx(expected)


def test_merged_copy_serves_the_lanes_of_both():
    # domain 63 along y folded by 2: in the last block row, copy 1 of the last thread is outside
    # the domain; the merged load still issues on every lane where copy 0 or copy 1 is valid
    k = star_stencil(2, 1, (64, 63))
    compiled = compile_kernel(k)
    launch = make_launch((32, 4, 1), (1, 2, 1), k.domain)
    cells = block_cells(launch, (0, launch.grid[1] - 1, 0))
    lanes = instruction_lanes(compiled, cells)
    owner = merged_copies(compiled, cells.offsets)
    for i in range(len(compiled.accesses)):
        for r in range(len(cells.offsets)):
            if owner[i, r] != i * len(cells.offsets) + r:
                assert not lanes[i, r].any()
                o_i, o_r = divmod(int(owner[i, r]), len(cells.offsets))
                assert np.all(lanes[o_i, o_r] == (cells.valid[o_r] | cells.valid[r]))


# --- compiled code ------------------------------------------------------------------------------

def _cuda_tool(name):
    """``name`` on PATH, else from the CUDA pip wheels (``pip install 'warpspeed[cuda]'``)."""
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for rel in (f"cu13/bin/{name}", f"cuda_{name}/bin/{name}"):
            if (Path(root) / rel).is_file():
                return str(Path(root) / rel)
    return None


@pytest.mark.parametrize("radius, fold", [(4, (1, 2, 1)), (4, (1, 1, 2)), (1, (1, 2, 1))])
def test_sass_global_loads_match_the_model(tmp_path, radius, fold):
    ps = pytest.importorskip("pystencils")
    from pystencils_plugin.folding import create_folded_kernel
    from pystencils_plugin.registers import _pystencils_include, find_nvcc, standalone_cuda_source
    from pystencils_plugin.workloads import star_stencil_assignments

    nvcc, cuobjdump, nvdisasm = find_nvcc(), _cuda_tool("cuobjdump"), _cuda_tool("nvdisasm")
    if nvcc is None or cuobjdump is None or nvdisasm is None:
        pytest.skip("nvcc, cuobjdump or nvdisasm not installed (pip install 'warpspeed[cuda]')")
    assignments = star_stencil_assignments(3, radius, (32, 32, 32))
    kernel_function = create_folded_kernel(assignments, fold, target=ps.Target.CUDA)
    cu = tmp_path / "kernel.cu"
    cu.write_text(standalone_cuda_source(kernel_function))
    cubin = tmp_path / "kernel.cubin"
    cmd = [nvcc, "-arch=sm_80", "-cubin", "-std=c++17", "-w", "-o", str(cubin), str(cu)]
    include = _pystencils_include()
    if include:
        cmd[1:1] = ["-I", include]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PATH": f"{Path(nvdisasm).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    sass = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True,
                          text=True, timeout=60, env=env).stdout
    ldg = len(re.findall(r"\bLDG\b", sass))
    model = _loads_per_thread(star_stencil(3, radius, (32, 32, 32)), fold)
    assert ldg == model
