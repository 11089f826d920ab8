"""The folded configuration space of ``rank`` and ``compare`` (warpspeed.launch.folded), counted by hand."""

from __future__ import annotations

import pytest

from warpspeed.errors import LaunchError, WarpspeedError
from warpspeed.launch.folded import FoldedKernels, folded_space
from warpspeed.launch.space import Config


def test_copy_space_counted_by_hand(a100):
    """256 threads as (2^a, 2^b, 2^c) with a + b + c = 8: C(10, 2) = 45 blocks, less the three
    with z above 64 (c = 7: two, c = 8: one) = 42; on 256^3 cells no extent exceeds twice the
    domain. A 3-D domain takes the three foldings (none, 2 in y, 2 in z): 126 configurations."""
    space = folded_space("copy", (256, 256, 256), a100, threads=256)
    assert list(space.resolved) == [(1, 1, 1), (1, 2, 1), (1, 1, 2)]
    configs = space.configs()
    assert len(configs) == 3 * 42 and len(set(configs)) == len(configs)
    assert Config((256, 1, 1), (1, 1, 2)) in configs and Config((1, 4, 64), (1, 2, 1)) in configs
    assert all(b[0] * b[1] * b[2] == 256 and b[2] <= 64 for b in (c.block for c in configs))


def test_two_dimensional_domain_has_no_z_blocks_or_folding(a100):
    """A 2-D domain of 32 x 64 cells (z extent 1): only z = 1 blocks and the foldings without z;
    128 threads as (2^a, 2^(7-a), 1) with x at most 2 x 32 and y at most 2 x 64: a = 0..6 (the
    128-wide block is left out): 7 blocks."""
    space = folded_space("copy", (32, 64, 1), a100, threads=128)
    assert list(space.resolved) == [(1, 1, 1), (1, 2, 1)]
    blocks = sorted(space.blocks(space.kernels[(1, 1, 1)]))
    assert blocks == [(2 ** a, 2 ** (7 - a), 1) for a in range(0, 7)]


@pytest.mark.parametrize("threads", [0, 100, 2048])
def test_threads_must_be_a_power_of_two_the_device_allows(a100, threads):
    with pytest.raises(LaunchError, match=f"positive power of two, got {threads}; allowed on A100-SXM4-40GB: "
                                          "1, 2, 4, ..., 1024"):
        folded_space("copy", (64, 64, 64), a100, threads=threads)


def test_unknown_kernel_is_refused_before_anything_is_resolved(a100):
    with pytest.raises(WarpspeedError, match="no-such-kernel"):
        folded_space("no-such-kernel", (64, 64, 64), a100)


def test_a_failure_to_resolve_is_cached_and_raised_again(a100, monkeypatch):
    from warpspeed.kernel import catalog

    calls = []

    def failing(name, domain=None, *, fold=(1, 1, 1), device=None, dtype=None):
        calls.append(tuple(fold))
        raise WarpspeedError(f"cannot generate fold {tuple(fold)}")

    monkeypatch.setattr(catalog, "resolve", failing)
    kernels = FoldedKernels("copy", (64, 64, 64), a100)
    for _ in range(2):
        with pytest.raises(WarpspeedError, match=r"cannot generate fold \(1, 2, 1\)"):
            kernels.kernel((1, 2, 1))
    assert calls == [(1, 2, 1)]


def test_resolve_foldings_leaves_out_only_later_foldings_that_do_not_divide():
    """A FoldingError of a later folding leaves it out with its message; the first folding's, or
    any other error, propagates; the first is resolved once, and the foldings are those its domain
    can use (none along an axis of extent 1)."""
    from warpspeed.errors import FoldingError, KernelError
    from warpspeed.launch.folded import resolve_foldings

    calls = []

    def resolve(fold):
        calls.append(fold)
        if fold[1] == 2:
            raise FoldingError("extent 7 along y is not a multiple of 2")
        return sum(fold)

    def domain(_):
        return (8, 7, 8)

    resolved, left_out = resolve_foldings(resolve, domain, [(1, 1, 1), (1, 2, 1), (1, 1, 2)])
    assert resolved == {(1, 1, 1): 3, (1, 1, 2): 4}
    assert left_out == {(1, 2, 1): "extent 7 along y is not a multiple of 2"}
    assert calls == [(1, 1, 1), (1, 2, 1), (1, 1, 2)]
    assert resolve_foldings(resolve, lambda _: (8, 8, 1), [(1, 1, 1), (1, 1, 2)]) == ({(1, 1, 1): 3}, {})
    with pytest.raises(FoldingError, match="extent 7"):
        resolve_foldings(resolve, domain, [(1, 2, 1), (1, 1, 1)])

    def broken(fold):
        raise KernelError("not a folding problem")

    with pytest.raises(KernelError, match="not a folding problem"):
        resolve_foldings(broken, domain, [(1, 1, 1)])
    with pytest.raises(KernelError, match="not a folding problem"):
        resolve_foldings(lambda f: broken(f) if f != (1, 1, 1) else 0, domain, [(1, 1, 1), (1, 2, 1)])


def test_folded_space_leaves_out_a_folding_the_domain_cannot_take(a100, monkeypatch):
    """A catalog kernel whose folding by 2 in y fails with a FoldingError (as a pystencils kernel on
    an odd y extent does) is ranked over the other two foldings: 42 blocks of 256 threads each."""
    from warpspeed.errors import FoldingError
    from warpspeed.kernel import catalog

    real = catalog.resolve

    def odd_y(name, domain=None, *, fold=(1, 1, 1), device=None, dtype=None):
        if tuple(fold) == (1, 2, 1):
            raise FoldingError("iteration extent 255 along y is not a multiple of the folding factor 2")
        return real(name, domain, fold=fold, device=device, dtype=dtype)

    monkeypatch.setattr(catalog, "resolve", odd_y)
    space = folded_space("copy", (256, 255, 256), a100, threads=256)
    assert list(space.resolved) == [(1, 1, 1), (1, 1, 2)]
    assert list(space.left_out) == [(1, 2, 1)] and "255 along y" in space.left_out[(1, 2, 1)]
    assert len(space.configs()) == 2 * 42
    reason = "iteration extent 255 along y is not a multiple of the folding factor 2"
    assert space.left_out_lines() == [f"fold 1x2x1 left out: {reason}"]
    assert space.left_out_records() == [{"fold": [1, 2, 1], "reason": reason}]
