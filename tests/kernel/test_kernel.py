"""Kernel description API: parsing, validation and clear errors."""

import pytest
import sympy

from warpspeed import Field, FlopCounts, Kernel, KernelError, load, load_linear, store
from warpspeed.kernel.description import X, Y, Z, byte_address


def _kernel(*accesses, fields=None, domain=(8, 8, 1)):
    fields = fields or (Field("a", 8, (10, 10)), Field("b", 8, (10, 10)))
    return Kernel("k", fields, accesses, domain)


def test_strings_and_sympy_are_equivalent():
    a = load("a", "x + 1", "y")
    b = load("a", X + 1, Y)
    assert a == b


def test_strides_follow_layout():
    f = Field("f", 8, (10, 20, 30, 19), layout="fzyx")
    assert f.strides == (1, 10, 200, 6000)  # x contiguous, component slowest
    g = Field("g", 8, (10, 20, 30, 19), layout="zyxf")
    assert g.strides == (19, 190, 3800, 1)  # component contiguous


def test_byte_address_uses_alignment_and_strides():
    f = Field("a", 8, (10, 10), alignment_bytes=64)
    expr = byte_address(f, load("a", X + 1, Y + 2))
    # 64 + 8 * ((x + 1) + 10 * (y + 2)) at x=3, y=4: 64 + 8 * (4 + 60) = 576
    assert expr.subs({X: 3, Y: 4}) == 576


def test_floor_division_is_allowed():
    acc = load_linear("a", "floor(x / 2) + 10 * y")
    assert isinstance(acc.index[0], sympy.Expr)


@pytest.mark.parametrize("expr, message", [
    ("x + n", "unknown symbol(s) n"),
    ("x * y", "not affine"),
    ("x**2", "not affine"),
    ("idx(x)", "indirect access"),
    ("x / 2", "fractional coefficient"),
    ("sin(x)", "not affine"),
    ("x +* 2", "cannot parse"),
])
def test_bad_expressions_are_rejected(expr, message):
    with pytest.raises(KernelError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        load_linear("a", expr)


def test_indexed_base_is_indirect():
    idx = sympy.IndexedBase("idx")
    with pytest.raises(KernelError, match="indirect access"):
        load("a", idx[X], Y)


def test_empty_kernel():
    with pytest.raises(KernelError, match="no memory accesses"):
        _kernel()


def test_unknown_field():
    with pytest.raises(KernelError, match="unknown field 'c'"):
        _kernel(load("c", X, Y))


def test_index_count_must_match_field():
    with pytest.raises(KernelError, match="has 3 indices but the field has 2"):
        _kernel(load("a", X, Y, 0))


def test_duplicate_fields():
    with pytest.raises(KernelError, match="duplicate field"):
        _kernel(load("a", X, Y), fields=(Field("a", 8, (10, 10)), Field("a", 8, (10, 10))))


@pytest.mark.parametrize("kwargs, message", [
    ({"element_bytes": 0}, "element_bytes must be a positive integer"),
    ({"shape": (10, -1)}, "shape must be"),
    ({"layout": (0, 0)}, "must be a permutation"),
    ({"layout": "xyz"}, "unknown layout"),
    ({"name": "a b"}, "must be a Python identifier"),
])
def test_bad_fields(kwargs, message):
    args = {"name": "a", "element_bytes": 8, "shape": (10, 10)}
    args.update(kwargs)
    with pytest.raises(KernelError, match=message):
        Field(**args)


def test_bad_domain_and_dtype():
    with pytest.raises(KernelError, match="domain must be"):
        _kernel(load("a", X, Y), domain=(0, 4, 1))
    with pytest.raises(KernelError, match="dtype 'int8' unknown"):
        Kernel("k", (Field("a", 8, (10, 10)),), (load("a", X, Y),), (4, 4, 1), dtype="int8")


def test_negative_flops_rejected():
    with pytest.raises(KernelError, match="non-negative"):
        FlopCounts(adds=-1)


def test_flop_and_instruction_counts():
    f = FlopCounts(adds=2, muls=1, fmas=24, divs=1)
    assert f.instructions == 28
    assert f.flops == 2 + 1 + 48 + 1


def test_two_d_domain_gets_nz_one():
    k = _kernel(load("a", X, Y), store("b", X, Y), domain=(8, 8))
    assert k.domain == (8, 8, 1)


# ---------------------------------------------------------------------------------------------
# accesses outside a field's shape over the domain are refused
# ---------------------------------------------------------------------------------------------

def _stencil_fields(width=520):
    return (Field("src", 8, (width, width, width)), Field("dst", 8, (width, width, width)))


def test_load_outside_the_field_is_an_error_naming_access_and_field():
    # domain 512 cells, fields 520 wide (4 ghost layers each side): x + 100 reaches 100 + 511 = 611
    # although the field's indices end at 519.
    with pytest.raises(KernelError) as info:
        Kernel("k", _stencil_fields(), (load("src", X + 100, Y + 4, Z + 4), store("dst", X + 4, Y + 4, Z + 4)),
               (512, 512, 512))
    message = str(info.value)
    assert "load of 'src'" in message and "x + 100" in message
    assert "100..611" in message and "0..519" in message
    assert "\n" not in message


def test_access_at_the_last_ghost_layer_is_inside():
    # x + 8 over 0..511 reaches 519, the last index of a 520-wide field; x (no offset) starts at 0.
    k = Kernel("k", _stencil_fields(), (load("src", X + 8, Y, Z), store("dst", X, Y + 4, Z + 4)), (512, 512, 512))
    assert len(k.accesses) == 2


def test_negative_index_is_an_error():
    # x - 1 at x = 0 reads index -1.
    with pytest.raises(KernelError, match=r"index 0, x - 1, spans -1\.\.6"):
        _kernel(load("a", X - 1, Y), store("b", X, Y))


def test_store_outside_the_field_is_an_error():
    # domain 8 x 8 on a 10 x 10 field: y + 3 reaches 10.
    with pytest.raises(KernelError, match=r"store of 'b'.*index 1, y \+ 3, spans 3\.\.10"):
        _kernel(load("a", X, Y), store("b", X, Y + 3))


def test_linear_index_outside_the_field_is_an_error():
    # 10 x 10 field = 100 elements; x + 10 y + 30 over 8 x 8 cells reaches 7 + 70 + 30 = 107.
    with pytest.raises(KernelError, match=r"linear index spans 30\.\.107.*elements 0\.\.99"):
        _kernel(load_linear("a", X + 10 * Y + 30), store("b", X, Y))
    # x + 10 y + 22 reaches 99 exactly
    _kernel(load_linear("a", X + 10 * Y + 22), store("b", X, Y))


def test_two_d_kernel_z_index_is_zero():
    # nz = 1: a constant component index 0..9 in a third field dimension is inside.
    fields = (Field("a", 8, (10, 10, 10)), Field("b", 8, (10, 10)))
    _kernel(load("a", X, Y, 9), store("b", X, Y), fields=fields)
    with pytest.raises(KernelError, match=r"index 2, 10, spans 10\.\.10"):
        _kernel(load("a", X, Y, 10), store("b", X, Y), fields=fields)


@pytest.mark.parametrize("expr, width, inside", [
    (X - 2 * sympy.floor(X / 2), 2, True),     # x mod 2: 0..1 (interval arithmetic alone gives -6..7)
    (sympy.Mod(X + 1, 2), 2, True),            # 0..1
    (sympy.floor(X / 2), 4, True),             # x in 0..7 -> 0..3
    (sympy.floor(X / 2), 3, False),            # reaches 3
    (X - sympy.floor(X / 2), 4, False),        # 0..4 (x = 7: 7 - 3)
    (sympy.floor((X + 1) / 3) + 1, 4, True),   # 1..3
])
def test_quasi_affine_ranges_are_exact(expr, width, inside):
    fields = (Field("a", 8, (width, 8)), Field("b", 8, (10, 10)))
    accesses = (load("a", expr, Y), store("b", X, Y))
    if inside:
        _kernel(*accesses, fields=fields)
    else:
        with pytest.raises(KernelError, match="outside the field"):
            _kernel(*accesses, fields=fields)


@pytest.mark.parametrize("expr", [
    X + 3 * Y - 2 * Z + 5,
    sympy.floor((X + 2 * Y) / 3) - Z,
    sympy.Mod(3 * X + Y, 4) + 2 * sympy.floor(Z / 2),
    X - 4 * sympy.floor(X / 4) + sympy.floor(sympy.floor(Y / 2) / 2),
    -sympy.floor((5 * X - Y) / 6) + sympy.Mod(Z, 3),
])
@pytest.mark.parametrize("domain", [(7, 5, 3), (13, 4, 4)])
def test_index_range_matches_brute_force(expr, domain):
    from warpspeed.kernel.bounds import index_range
    from warpspeed.kernel.description import COORDINATES

    values = [int(expr.subs({X: x, Y: y, Z: z}))
              for x in range(domain[0]) for y in range(domain[1]) for z in range(domain[2])]
    assert index_range(expr, dict(zip(COORDINATES, domain))) == (min(values), max(values))


def test_every_builtin_kernel_is_inside_its_fields():
    from warpspeed.kernel.builtin import BUILTIN_KERNELS, builtin_kernel

    for name in BUILTIN_KERNELS:
        builtin_kernel(name)  # the constructor checks every access over the domain
