"""Indirect accesses and symbolic offsets are rejected by name before any folding or codegen."""

from __future__ import annotations

import pytest
import sympy

ps = pytest.importorskip("pystencils")

from warpspeed.errors import UnsupportedKernelError  # noqa: E402

from pystencils_plugin import create_folded_kernel, rank  # noqa: E402

src, dst = ps.fields("src, dst: double[16,16,16]", layout="fzyx")
idx = ps.fields("idx: int64[16,16,16]", layout="fzyx")


@pytest.mark.parametrize("fold", [(1, 1, 1), (1, 2, 1)])
def test_indirect_access(fold):
    with pytest.raises(UnsupportedKernelError, match="indirect access to field 'src'.*loaded from field 'idx'"):
        create_folded_kernel([ps.Assignment(dst.center, src[idx.center, 0, 0])], fold=fold)


def test_symbolic_offset():
    with pytest.raises(UnsupportedKernelError, match="symbolic offset n in an access to field 'src'"):
        create_folded_kernel([ps.Assignment(dst.center, src[sympy.Symbol("n"), 0, 0])], fold=(1, 1, 1))


def test_rank_reports_the_construct():
    with pytest.raises(UnsupportedKernelError, match="indirect access"):
        rank([ps.Assignment(dst.center, 2 * src[0, idx.center, 0])], "A100-SXM4-40GB", blocks=[(32, 1, 1)])
