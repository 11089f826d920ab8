"""pystencils plugin: extracted address expressions against the generated CUDA source.

The reference addresses are computed independently of the plugin: the counter declarations,
the guard and every ``_data_<field>[...]`` subscript are parsed out of ``get_c_code()`` with
regular expressions and evaluated with Python for sample thread coordinates. warpspeed's
side is ``warpspeed.addresses.compile_kernel`` on the extracted kernel.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

ps = pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

import sympy  # noqa: E402

from warpspeed.memory.addresses import compile_kernel  # noqa: E402
from warpspeed.errors import UnsupportedKernelError  # noqa: E402
from warpspeed.kernel.description import X, Y, Z  # noqa: E402

from pystencils_plugin import (  # noqa: E402
    extract_kernel,
    extract_workload,
    star_stencil_assignments,
    workload_kernel,
)

# --------------------------------------------------------------------------------------------
# An independent reading of the CUDA source
# --------------------------------------------------------------------------------------------

_CTR_DECL = re.compile(r"const int64_t (ctr_\d+) = (.*?);")
_GUARD = re.compile(r"if\s*\((.*)\)\s*\n\s*\{")
_SUBSCRIPT = re.compile(r"_data_(\w+)\[([^\]]*)\]")


def _py(expr: str) -> str:
    """A C index expression as Python: drop LL suffixes and int64 casts, name the builtins."""
    expr = re.sub(r"(\d+)LL", r"\1", expr)
    expr = expr.replace("(int64_t)", "")
    expr = re.sub(r"(blockIdx|blockDim|threadIdx)\.([xyz])", r"\1_\2", expr)
    return expr.replace("&&", " and ")


def parse_cuda(source: str) -> dict:
    body = source[source.index("{"):]
    ctrs = _CTR_DECL.findall(body)
    guard = _GUARD.search(body).group(1)
    loads, stores = [], []
    for m in _SUBSCRIPT.finditer(body):
        is_store = re.match(r"\s*=(?!=)", body[m.end():]) is not None
        (stores if is_store else loads).append((m.group(1), _py(m.group(2))))
    return {"ctrs": [(n, _py(e)) for n, e in ctrs], "guard": _py(guard), "loads": loads, "stores": stores}


def c_addresses(parsed: dict, block_idx, block_dim, thread_idx) -> tuple[bool, set, set]:
    """(guard, {(field, element index)} loaded, ... stored) of one thread, from the C source."""
    env = {}
    for a, bi, bd, ti in zip("xyz", block_idx, block_dim, thread_idx):
        env.update({f"blockIdx_{a}": bi, f"blockDim_{a}": bd, f"threadIdx_{a}": ti})
    for name, expr in parsed["ctrs"]:
        env[name] = eval(expr, {}, env)  # noqa: S307 - expressions parsed from generated code
    inside = bool(eval(parsed["guard"], {}, env))  # noqa: S307
    loads = {(f, eval(i, {}, env)) for f, i in parsed["loads"]}  # noqa: S307
    stores = {(f, eval(i, {}, env)) for f, i in parsed["stores"]}  # noqa: S307
    return inside, loads, stores


def ws_addresses(extracted, block_idx, block_dim, thread_idx) -> tuple[set, set]:
    """Element indices warpspeed computes for all cells of one thread (cell = t * fold + j)."""
    compiled = compile_kernel(extracted.kernel)
    first = [(bi * bd + ti) * f for bi, bd, ti, f in zip(block_idx, block_dim, thread_idx, extracted.fold)]
    loads, stores = set(), set()
    for j in itertools.product(*(range(f) for f in extracted.fold)):
        cell = [np.array([c + jj]) for c, jj in zip(first, j)]
        for ca in compiled.accesses:
            byte = int(ca.address(*cell)[0])
            element = (byte - ca.field.alignment_bytes) // ca.field.element_bytes
            assert (byte - ca.field.alignment_bytes) % ca.field.element_bytes == 0
            (stores if ca.access.is_store else loads).add((ca.access.field, element))
    return loads, stores


def sample_threads(extracted, block_dim=(4, 2, 2), count=12, seed=1):
    """Thread coordinates inside the domain, including the first and the last thread."""
    rng = np.random.default_rng(seed)
    threads_per_axis = [n // f for n, f in zip(extracted.kernel.domain, extracted.fold)]
    picks = [tuple(0 for _ in range(3)), tuple(t - 1 for t in threads_per_axis)]
    for _ in range(count):
        picks.append(tuple(int(rng.integers(0, t)) for t in threads_per_axis))
    result = []
    for t in picks:
        bd = tuple(min(b, n) for b, n in zip(block_dim, threads_per_axis))
        result.append((tuple(ti // b for ti, b in zip(t, bd)), bd, tuple(ti % b for ti, b in zip(t, bd))))
    return result


def assert_matches_source(extracted, kernel_function, block_dim=(4, 2, 2)):
    parsed = parse_cuda(kernel_function.get_c_code())
    assert parsed["loads"] and parsed["stores"]
    for bidx, bdim, tidx in sample_threads(extracted, block_dim):
        inside, c_loads, c_stores = c_addresses(parsed, bidx, bdim, tidx)
        assert inside, (bidx, bdim, tidx)
        w_loads, w_stores = ws_addresses(extracted, bidx, bdim, tidx)
        assert w_loads == c_loads, (bidx, tidx)
        assert w_stores == c_stores, (bidx, tidx)


def assert_guard_matches_domain(extracted, kernel_function):
    """The C guard admits exactly the threads whose first cell lies in the domain."""
    parsed = parse_cuda(kernel_function.get_c_code())
    dims = len(extracted.thread_axes)
    for axis in range(dims):
        n, f = extracted.kernel.domain[axis], extracted.fold[axis]
        for t, expected in ((n // f - 1, True), (n // f, False)):
            tidx = [0, 0, 0]
            tidx[axis] = t
            inside, _, _ = c_addresses(parsed, (0, 0, 0), (1, 1, 1), tuple(tidx))
            assert inside is expected, (axis, t)


# --------------------------------------------------------------------------------------------
# Fixtures (module scope: lbmpy generation takes seconds)
# --------------------------------------------------------------------------------------------

STAR_DOMAIN = (20, 18, 16)


@pytest.fixture(scope="module")
def star25():
    kernel = workload_kernel("star3d-r4", domain=STAR_DOMAIN)
    return kernel, extract_kernel(kernel, compile_registers=False)


@pytest.fixture(scope="module")
def d3q19():
    kernel = workload_kernel("d3q19-srt", domain=(10, 12, 14))
    return kernel, extract_kernel(kernel, compile_registers=False)


# --------------------------------------------------------------------------------------------
# Address expressions
# --------------------------------------------------------------------------------------------

def test_star25_addresses_match_cuda_source(star25):
    kernel, extracted = star25
    assert_matches_source(extracted, kernel)
    assert_guard_matches_domain(extracted, kernel)


def test_star25_shape_domain_and_counts(star25):
    _, extracted = star25
    k = extracted.kernel
    # 4 ghost layers around the 20 x 18 x 16 interior; x (index 0) contiguous (fzyx)
    assert k.domain == STAR_DOMAIN
    assert k.field("src").shape == (28, 26, 24)
    assert k.field("src").strides == (1, 28, 28 * 26)
    assert len(k.loads) == 25 and len(k.stores) == 1
    assert extracted.fold == (1, 1, 1)
    assert extracted.thread_axes == ("x", "y", "z")
    # the store is the centre cell: cell (0,0,0) is array element (4,4,4)
    assert k.stores[0].index == (X + 4, Y + 4, Z + 4)


def test_star25_flops_by_hand(star25):
    # 25 weighted points, all weights distinct: 25 multiplications and 24 additions; with
    # contraction, 24 of the additions absorb one multiplication each.
    _, extracted = star25
    f = extracted.kernel.flops
    assert (f.adds, f.muls, f.fmas, f.divs) == (0, 1, 24, 0)
    kernel = workload_kernel("star3d-r4", domain=STAR_DOMAIN)
    plain = extract_kernel(kernel, compile_registers=False, contract_fma=False).kernel.flops
    assert (plain.adds, plain.muls, plain.fmas, plain.divs) == (24, 25, 0, 0)


def test_2d_5pt_addresses_match_cuda_source():
    kernel = workload_kernel("star2d-r1", domain=(24, 10))
    extracted = extract_kernel(kernel, compile_registers=False)
    assert extracted.kernel.domain == (24, 10, 1)
    assert len(extracted.kernel.loads) == 5
    assert extracted.thread_axes == ("x", "y")
    assert_matches_source(extracted, kernel, block_dim=(8, 4, 1))
    assert_guard_matches_domain(extracted, kernel)


def test_numpy_layout_maps_fastest_index_to_x():
    # C-order fields: pystencils drives the last index (contiguous) with threadIdx.x
    src, dst = ps.fields("src, dst: double[12,10,8]", layout="numpy")
    asm = [ps.Assignment(dst.center, src[1, 0, 0] + 2 * src[0, 0, -1])]
    kernel = ps.create_kernel(asm, ps.CreateKernelConfig(target=ps.Target.CUDA))
    extracted = extract_kernel(kernel, compile_registers=False)
    assert extracted.thread_axes == ("z", "y", "x")
    assert extracted.kernel.domain == (6, 8, 10)
    assert extracted.kernel.field("src").layout == (2, 1, 0)
    assert_matches_source(extracted, kernel, block_dim=(2, 2, 2))


def test_d3q19_addresses_match_cuda_source(d3q19):
    kernel, extracted = d3q19
    assert_matches_source(extracted, kernel, block_dim=(4, 2, 2))
    assert_guard_matches_domain(extracted, kernel)


def test_d3q19_pull_pattern_from_lbmpy_stencil(d3q19):
    # independent: pull streaming reads PDF q from the neighbour at c - e_q (lbmpy's stencil
    # order), writes every PDF at the centre; one ghost layer
    from lbmpy import LBStencil, Stencil

    _, extracted = d3q19
    k = extracted.kernel
    velocities = LBStencil(Stencil.D3Q19)
    expected_loads = {("src", (X + 1 - e[0], Y + 1 - e[1], Z + 1 - e[2], q)) for q, e in enumerate(velocities)}
    expected_stores = {("dst", (X + 1, Y + 1, Z + 1, q)) for q in range(19)}
    got_loads = {(a.field, tuple(sympy.expand(i) for i in a.index)) for a in k.loads}
    got_stores = {(a.field, a.index) for a in k.stores}
    assert got_loads == {(f, tuple(sympy.expand(i) for i in idx)) for f, idx in expected_loads}
    assert got_stores == expected_stores
    assert k.field("src").shape == (12, 14, 16, 19)
    assert k.field("src").layout == (0, 1, 2, 3)  # fzyx: x contiguous, component slowest
    assert k.domain == (10, 12, 14)
    assert k.flops.instructions > 0


def test_symbolic_shape_with_override_matches_source():
    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    asm = [ps.Assignment(dst.center, src[1, 0, 0] - src[0, -1, 0])]
    kernel = ps.create_kernel(asm, ps.CreateKernelConfig(target=ps.Target.CUDA))
    shapes = {"src": (12, 10, 8), "dst": (12, 10, 8)}
    extracted = extract_kernel(kernel, shapes=shapes, compile_registers=False)
    assert extracted.kernel.domain == (10, 8, 6)
    # the source has symbolic strides: substitute the x-contiguous strides by hand
    source = kernel.get_c_code()
    for name in ("src", "dst"):
        for d, v in enumerate((1, 12, 120)):
            source = source.replace(f"_stride_{name}_{d}", str(v))
        for d, v in enumerate((12, 10, 8)):
            source = source.replace(f"_size_{name}_{d}", str(v))

    class _Source:
        def get_c_code(self):
            return source

    assert_matches_source(extracted, _Source(), block_dim=(2, 2, 2))


# --------------------------------------------------------------------------------------------
# Unsupported constructs
# --------------------------------------------------------------------------------------------

def _cuda(asm, **kwargs):
    return ps.create_kernel(asm, ps.CreateKernelConfig(target=ps.Target.CUDA, **kwargs))


def test_indirect_access_is_rejected():
    dst = ps.fields("dst: double[20,18,16]", layout="fzyx")
    idx = ps.fields("idx: int64[20,18,16]", layout="fzyx")
    src = ps.Field.create_fixed_size("src", (20, 18, 16), dtype="double", layout="fzyx",
                                     field_type=ps.FieldType.CUSTOM)
    i = ps.TypedSymbol("i", "int64")
    ctrs = ps.DEFAULTS.spatial_counters
    asm = [ps.Assignment(i, idx.center), ps.Assignment(dst.center, src.absolute_access((i, ctrs[1], ctrs[2]), ()))]
    with pytest.raises(UnsupportedKernelError, match=r"indirect or data-dependent index in load of field 'src'"):
        extract_kernel(_cuda(asm), compile_registers=False)


def test_symbolic_field_size_is_rejected():
    src, dst = ps.fields("src, dst: double[3D]")
    kernel = _cuda([ps.Assignment(dst.center, src[1, 0, 0])])
    with pytest.raises(UnsupportedKernelError, match=r"symbolic size.*fixed shape.*shapes="):
        extract_kernel(kernel, compile_registers=False)


def test_reduction_is_rejected():
    src = ps.fields("src: double[20,18,16]", layout="fzyx")
    kernel = _cuda([ps.AddReductionAssignment(ps.TypedSymbol("w", "double"), src.center)])
    with pytest.raises(UnsupportedKernelError, match=r"reduction"):
        extract_kernel(kernel, compile_registers=False)


def test_data_dependent_branch_is_rejected():
    src, dst = ps.fields("src, dst: double[20,18,16]", layout="fzyx")
    rhs = sympy.Piecewise((src[1, 0, 0], src.center > 0), (src[-1, 0, 0], True))
    with pytest.raises(UnsupportedKernelError, match=r"data-dependent memory access"):
        extract_kernel(_cuda([ps.Assignment(dst.center, rhs)]), compile_registers=False)


def test_grid_strided_loop_is_rejected():
    src, dst = ps.fields("src, dst: double[20,18,16]", layout="fzyx")
    config = ps.CreateKernelConfig(target=ps.Target.CUDA)
    config.gpu.indexing_scheme = "gridstrided_linear3d"
    kernel = ps.create_kernel([ps.Assignment(dst.center, src[1, 0, 0])], config)
    with pytest.raises(UnsupportedKernelError, match=r"loop over ctr_\w+ around the kernel body"):
        extract_kernel(kernel, compile_registers=False)


def test_unknown_ast_node_is_rejected():
    from pystencils.backend.ast.structural import PsComment, PsStructuralNode

    class PsMystery(PsStructuralNode):
        def get_children(self):
            return ()

        def set_child(self, idx, c):
            raise IndexError(idx)

        def _clone_structural(self):
            return PsMystery()

    src, dst = ps.fields("src, dst: double[20,18,16]", layout="fzyx")
    kernel = _cuda([ps.Assignment(dst.center, src[1, 0, 0])])
    guard = kernel.body.statements[-1]
    guard.branch_true.statements = list(guard.branch_true.statements) + [PsComment("kept"), PsMystery()]
    with pytest.raises(UnsupportedKernelError, match=r"AST node PsMystery"):
        extract_kernel(kernel, compile_registers=False)


def test_cpu_kernel_is_rejected():
    assignments = star_stencil_assignments(3, 1, (8, 8, 8))
    kernel = ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.CPU))
    with pytest.raises(UnsupportedKernelError, match=r"GPU kernels"):
        extract_kernel(kernel, compile_registers=False)


def test_extract_workload_allen_cahn_structure():
    extracted = extract_workload("allen-cahn", domain=(8, 8, 8), compile_registers=False)
    k = extracted.kernel
    counts = {f.name: (len([a for a in k.loads if a.field == f.name]),
                       len([a for a in k.stores if a.field == f.name])) for f in k.fields}
    # Ernst et al. 2023, 5.3: 15 PDFs pulled and stored, the phase field at the centre and its 6
    # neighbours, the velocity (3 components) at the centre, the new phase field stored
    assert counts == {"h": (15, 0), "C": (7, 0), "u": (3, 0), "h_tmp": (0, 15), "C_tmp": (0, 1)}
    assert {a.index for a in k.accesses if a.field == "C"} == {
        (X + 1 + dx, Y + 1 + dy, Z + 1 + dz)
        for dx, dy, dz in [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    }
