"""The layer-condition scan (warpspeed.studies.scan): domains, DRAM volumes against hand bounds,
and the kernel minimum the scan plot draws."""

from __future__ import annotations

import math

import pytest

from warpspeed.errors import WarpspeedError
from warpspeed.kernel.builtin import builtin_kernel, star_stencil
from warpspeed.studies.scan import minimum_bytes_per_lup, scan_domain

CELLS = 64**3
#: Blocks of 1024 threads, flat and 8 deep.
BLOCKS = [(256, 4, 1), (32, 4, 8)]


@pytest.fixture(scope="module")
def star_scan(a100):
    return scan_domain(lambda d: builtin_kernel("star3d-r1", d), a100, [32, 1024], BLOCKS, cells=CELLS)


def test_domains_keep_the_cell_count(star_scan):
    # nz = round(cells / n^2): 64^3 / 32^2 = 256; 64^3 / 1024^2 = 0.25 -> at least one layer.
    assert {p.plane: p.domain for p in star_scan} == {32: (32, 32, 256), 1024: (1024, 1024, 1)}
    assert [p.block for p in star_scan] == BLOCKS * 2


def test_copy_moves_exactly_its_minimum(a100):
    """copy reads 8 B and writes 8 B per cell; its rows are n * 8 B = whole 32-byte sectors from
    a 256-byte aligned base, so every plane moves exactly 16 B/lup."""
    points = scan_domain(lambda d: builtin_kernel("copy", d), a100, [32, 128], BLOCKS, cells=CELLS)
    for p in points:
        assert p.dram_load_bytes_per_lup == pytest.approx(8.0)
        assert p.dram_store_bytes_per_lup == pytest.approx(8.0)
        assert p.dram_minimum_bytes_per_lup == 16.0


def test_small_planes_are_near_the_minimum_and_large_planes_are_not(star_scan):
    """32 x 32 x 256 (layer condition holds): every src element is loaded once. Bounds by hand:
    at least one 8-byte element per cell; at most (n+2)(nz+2) rows of n+2 cells, each within
    ceil((n+2)/4) + 1 sectors of 32 B. Stores: a row of n = 32 cells (256 B) spans at most 9
    sectors -> at most 9 * 32 / 32 = 9 B/lup.
    1024 x 1024 x 1: the planes z-1, z and z+1 are each read once per cell: at least 24 B/lup."""
    n, nz = 32, 256
    load_bound = 32 * (n + 2) * (nz + 2) * (math.ceil((n + 2) / 4) + 1) / (n * n * nz)
    for p in star_scan:
        assert p.dram_minimum_bytes_per_lup == 16.0
        if p.plane == 32:
            assert 8.0 <= p.dram_load_bytes_per_lup <= load_bound
            assert 8.0 <= p.dram_store_bytes_per_lup <= 9.0
        else:
            assert p.dram_load_bytes_per_lup >= 24.0


def test_minimum_by_hand():
    assert minimum_bytes_per_lup(builtin_kernel("star3d-r4")) == 8 + 8  # one field read, one written
    assert minimum_bytes_per_lup(star_stencil(3, 1, (16, 16, 16), element_bytes=4)) == 4 + 4
    # D3Q15 pull: 15 distribution values read and 15 written, 8 B each.
    assert minimum_bytes_per_lup(builtin_kernel("d3q15-pull")) == 15 * 8 * 2


def test_plane_must_be_positive(a100):
    with pytest.raises(WarpspeedError, match="positive"):
        scan_domain(lambda d: builtin_kernel("copy", d), a100, [0])


def test_scan_domain_command(tmp_path):
    import json

    from click.testing import CliRunner

    from warpspeed.cli.main import main

    plot = tmp_path / "scan.svg"
    result = CliRunner().invoke(main, ["scan-domain", "--kernel", "copy", "--planes", "32,64", "--blocks",
                                       "256,4,1", "--json", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    points = json.loads(result.output)
    # 640 x 512 x 512 cells: nz = round(cells / n^2) = 163840 for n = 32 and 40960 for n = 64.
    assert [(p["plane"], p["domain"], p["block"]) for p in points] == [
        (32, [32, 32, 163840], [256, 4, 1]), (64, [64, 64, 40960], [256, 4, 1])]
    assert all(p["dram_bytes_per_lup"] == pytest.approx(16.0) for p in points)  # copy: 8 B in, 8 B out
    assert plot.read_bytes().startswith(b"<?xml")
