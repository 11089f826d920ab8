"""The rankings of the 168 configurations of the default workload (25-point star stencil,
640x512x512, double) on an A100, an H200 and an MI210 stay as they are: the paper's four-limiter
roofline and the default (overlap) model.

The reference files in ``tests/data/rankings/`` are the output of ``warpspeed rank --model roofline
--device <name> --json --top 0`` at commit c7179dc, before any restructuring or speed work, except
the H200's and the MI210's, regenerated when the predictor came to compute each level's demand once
for every model (the L1 oversubscription with the L1 capacity scaled linearly, which changes the
MI210's 16 KiB vector L1 most, rates 0.35-1.0x; the H200's layer conditions at its L2's
``layer_bytes``, rates 0.83-1.11x; the A100's unchanged); those in
``tests/data/rankings/overlap/`` the output of ``warpspeed rank --device <name> --json --top 0``
with the overlap model as it was last changed on purpose (its seven mechanisms and the constants
fitted on six H200 kernels; the MI210's first level as a banked memory), the H200's and the MI210's
regenerated with the roofline's (the layer conditions evaluated at the layer capacity instead of
factors rescaled from the effective capacity, rates within +1.7 %; the MI210's DRAM volumes from
the one L1 oversubscription, within -1.3 %). The H200's and the MI210's (both models) were regenerated
again when the L1 curve came to be evaluated at a share of the L1 a launch keeps after the driver's
shared-memory carveout (warpspeed.memory.capacity.carveout): rates within +0.7 % (H200) and +1.7 %
(MI210), same best, the A100's unchanged; the MI210's once more when a launch's sustained DRAM
bandwidth came to depend on its concurrent streams (warpspeed.memory.dram_bandwidth: the MI210's
triad, 1248 GB/s, for three or more): rates 0.92-1.0x, Spearman 0.995 (roofline) and 0.997
(overlap) against the previous order, same best. All six were regenerated when the in-core time became a
component (every row's limits gain ``sm``; the A100's and H200's rates unchanged) and the CDNA
vector L1 took 8-byte elements at the address unit's 4 lanes per clock (the MI210's double rates
0.90-1.0x roofline, Spearman 0.998, same best; 0.77-1.0x overlap, Spearman 0.983, the old best
at 97.3 % of the new). The roofline files of the H200 and the MI210 carried
each row's ``model`` and ``explanation`` as the roofline's rows had them when they were written
(``overlap`` and empty, a label left over from the default); since the roofline is an ordinary
model its rows say ``roofline`` and its limiter, and only these two labels were changed in the
files. The overlap files of the A100 and the H200 gained the in-core time ``sm`` among each row's
limits when the overlap model came to report the further levels it combines (rates unchanged), and
were regenerated when the in-core time came to join the memory time by a smooth maximum (exponent
6.75; rates 0.9999-1.0x on both, same order and best). The MI210's two were regenerated when the
CDNA vector L1 came to count its tag banks for 8-byte lanes and to refill the lines of a block that
overflows the 16 KiB L1 (first-level cycles +0-9.3 % on 42 configurations; roofline rates
unchanged, overlap rates 0.988-1.0x, same best). The A100's and the H200's four were regenerated
when the in-core time came to include the wait for the loads (the serving level's load-to-use latency
over the resident threads) and the in-core exponent was refitted (10): each row's ``sm`` limit
0.69-0.85x, overlap rates 1.0-1.0001x, roofline rates unchanged, same order and best. The H200's two
were regenerated when its file gained a many-streams DRAM rate (3277.1 GB/s from 8 streams on,
also capping the knee of resident blocks; warpspeed.memory.dram_bandwidth), interpolated from two
streams (roofline rates 0.986-1.0x, overlap 0.993-1.0x, same best) and then from four, as the
NVIDIA parts measured with four streams keep their two-stream rate (the roofline rates as before the
rate, the overlap file's rates 1.0-1.015x of the two-stream interpolation's, same best). The A100's and the
H200's overlap files were regenerated when the DRAM curve's knee came to be sharpened by the cells
per thread as by the resident blocks (warpspeed.hardware.dram_curve.resident_blocks_bandwidth):
rates 1.0-1.022x (A100, Spearman 0.9993, same best) and 1.0-1.041x (H200, Spearman 0.9994, the old
best at 99.6 % of the new). The A100's and the H200's four were regenerated when the idle threads of
the blocks at the domain's x edge (640 cells in blocks 256 or 512 wide) stopped counting as bytes in
flight and as warps that hide latency (warpspeed.launch.geometry.Launch.active_thread_share): the
rows' ``sm`` limits of those blocks fall, the H200's overlap rates 0.986-1.0x (Spearman 0.9999, same
best), the other three files' rates unchanged; the three overlap files once more when the wave-end
latency and the dispatch time came to be spread over the lups of the grid's average block
(``Launch.mean_cells_per_block``) instead of a full block's: rates 0.990-1.0x (A100), 0.963-1.0x
(H200), 0.972-1.0x (MI210), Spearman 0.9995 or more, same best. The H200's two were regenerated
when the Hopper L1 capacity curve came to be the A100's stretched by the H100 PCIe's pointer chase
(warpspeed.calibration.l1_retention; fewer capacity misses): roofline rates 1.0-1.045x, overlap
1.0-1.041x, Spearman 0.9998 and 0.9996, same best. Restructuring
and speed work must reproduce them
(order, limiters, volumes and rates to 1e-9); a change of the model changes them on purpose.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from tests.paths import DATA

REFERENCE_DIR = DATA / "rankings"
DEVICES = ("A100-SXM4-40GB", "H200", "MI210")
#: Relative tolerance on rates and volumes (summation order may change; the model may not).
REL = 1e-9


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == pytest.approx(b, rel=REL)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("model, device", [(m, d) for m in ("roofline", "overlap") for d in DEVICES])
def test_ranking_is_unchanged(model, device):
    folder = REFERENCE_DIR if model == "roofline" else REFERENCE_DIR / model
    reference = json.loads((folder / f"{device}.json").read_text())
    result = CliRunner().invoke(main, ["rank", "--model", model, "--device", device, "--json", "--top", "0"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert len(rows) == len(reference["rows"])
    for got, want in zip(rows, reference["rows"]):
        picked = {k: got.get(k) for k in want}
        assert _close(picked, want), (want["block"], want["fold"])
