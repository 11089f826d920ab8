"""Kernel description API: parsing, validation and clear errors."""

import pytest
import sympy

from warpspeed import Field, FlopCounts, Kernel, KernelError, load, load_linear, store
from warpspeed.kernel.description import X, Y, byte_address


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
