"""The command line: JSON keys, tables, and one-line errors instead of tracebacks."""

import json

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main

SMALL = ["--domain", "64,64,64"]


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


def test_devices_table_lists_the_database(runner):
    result = runner.invoke(main, ["devices"])
    assert result.exit_code == 0
    for name in ("V100-PCIe-32GB", "A100-SXM4-40GB", "H100-SXM5-80GB", "MI300X", "W6800"):
        assert name in result.output
    # A100: 108 SMs x 1.41 GHz x 32 FP64 results x 2 = 9.7 TFLOP/s; 64 FP32 lanes: 19.5
    a100 = _table_row(result.output, "A100-SXM4-40GB")
    assert "9.7" in a100 and "19.5" in a100 and "108" in a100


def test_predict_json_has_the_documented_keys(runner):
    result = runner.invoke(main, ["predict", "--kernel", "star3d-r1", *SMALL, "--block", "32,4,2", "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    for key in ("l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "l1_alloc_bytes_per_block",
                "blocks_per_sm", "wave_blocks", "dram_load_bytes_per_lup", "dram_store_bytes_per_lup",
                "dram_load_compulsory_bytes_per_lup", "lups_per_s", "limiter", "limiters"):
        assert key in d
    assert d["limiter"] in ("fp", "l1", "l2", "dram", "sm")
    # the four limiters and the in-core time (sm) of an NVIDIA part (docs/incore.md)
    assert set(d["limiters"]) == {"fp", "l1", "l2", "dram", "sm"}
    # 7-point stencil, 64^3 domain, 66^3 fields: a warp stores one x row of 32 doubles (256 B)
    # starting at byte 256 + 8 (32 bx + 1) + 528 (y + 1) + 34848 (z + 1); 528 = 16 mod 32 and
    # 34848 = 0 mod 32, so the row starts 8 or 24 B past a sector boundary and always spans
    # 9 sectors: 9 x 32 B per 32 lups = 9 B/lup.
    assert d["l2_store_bytes_per_lup"] == pytest.approx(9.0)
    assert d["block"] == [32, 4, 2] and d["domain"] == [64, 64, 64]


def _table_row(output: str, label: str) -> list[str]:
    """The cells of the table row whose first cell is ``label``."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells and cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in\n{output}")


def test_predict_tables(runner):
    result = runner.invoke(main, ["predict", "--kernel", "star2d-r1", "--domain", "256,256", "--block", "64,4"])
    assert result.exit_code == 0, result.output
    out = result.output
    # grid: 256 / 64 = 4 blocks in x, 256 / 4 = 64 in y
    assert "grid (4, 64, 1)" in out
    # 256 threads x 32 registers on A100: the warp (64 / 8), thread (2048 / 256) and register
    # (64 warps / 8) limits all allow 8 blocks per SM -> 864 per wave > 4 x 64 = 256 blocks: one
    # wave of the whole grid.
    assert "8 blocks/SM" in out and "wave 256 blocks, 1 waves" in out
    # dst is 258 x 258 doubles at byte 256; row y starts at 256 + 8 (1 + 258 (y + 1)), which is
    # 8 or 24 past a 32 B sector boundary (2064 = 16 mod 32). A warp stores 32 x 8 = 256 B over
    # 9 sectors: 9 x 32 / 32 = 9 B/lup from L1 to L2. DRAM sees whole rows: 2048 B over 65
    # sectors per 256 cells = 8.125 B/lup; dst is never loaded. The 0.875 B/lup of partially
    # written sectors beyond that miss at the small store-miss rate of a wave of 1.5 MB: read
    # (DRAM load, dst[5]) and written back, so the DRAM store is 8.125 + that read (both printed
    # to 0.01).
    dst = _table_row(out, "dst")
    assert dst[1:5] == ["0.062", "0.00", "0.00", "9.00"]
    assert 0 < float(dst[5]) <= 0.02
    assert float(dst[6]) == pytest.approx(8.125 + float(dst[5]), abs=0.0101)
    assert "four-limiter roofline" in out and "layer conditions" in out
    assert "two-limiter: the classic roofline" in out


def test_rank_of_a_2d_kernel_has_only_2d_configurations(runner):
    result = runner.invoke(main, ["rank", "--kernel", "star2d-r1", "--jobs", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    # 1024 = 2^a x 2^b (a = 0..10): 11 blocks, times the foldings none and 2 in y
    assert len(rows) == 11 * 2
    assert all(r["block"][2] == 1 and r["fold"][2] == 1 for r in rows)


@pytest.mark.parametrize("option, value", [("--threads", "0"), ("--top", "-1"), ("--jobs", "0")])
def test_rank_refuses_nonsense_counts(runner, option, value):
    result = runner.invoke(main, ["rank", "--kernel", "copy", *SMALL, option, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.output and value in result.output


def test_rank_threads_must_be_a_power_of_two(runner):
    result = runner.invoke(main, ["rank", "--kernel", "copy", *SMALL, "--threads", "100"])
    assert result.exit_code == 2
    assert "error: threads per block must be a positive power of two, got 100" in result.output


@pytest.fixture(scope="module")
def small_ranking(runner):
    """The ranking of star3d-r1 on 64^3 with 64 threads: 28 blocks x 3 foldings."""
    result = runner.invoke(main, ["rank", "--kernel", "star3d-r1", *SMALL, "--threads", "64", "--jobs", "1",
                                  "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["rows"]


@pytest.mark.parametrize("width", [80, 100, 160])
def test_rank_table_fits_the_terminal(runner, small_ranking, width):
    result = runner.invoke(main, ["rank", "--kernel", "star3d-r1", *SMALL, "--threads", "64", "--jobs", "1",
                                  "--top", "0"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "…" not in out
    assert all(len(line) <= width for line in out.splitlines())
    assert "All 84 rows shown." in out
    for rank_number, row in enumerate(small_ranking, 1):
        block, fold = "x".join(map(str, row["block"])), "x".join(map(str, row["fold"]))
        cells = _table_row(out, str(rank_number))
        # rank, block, fold, Glup/s and limiter in full, whatever the width
        assert cells[1:5] == [block, fold, f"{row['lups_per_s'] / 1e9:.2f}", row["limiter"]]
        if width >= 100:  # the four limits fit from 100 columns on
            assert cells[5:9] == [f"{row['limiters'][k] / 1e9:.2f}" for k in ("fp", "l1", "l2", "dram")]
    if width == 160:  # everything fits: volumes and blocks per SM too
        assert "Left out" not in out
        assert cells[-1] == str(small_ranking[-1]["blocks_per_sm"])
    else:
        assert "--wide shows them" in out


def test_rank_leaves_out_a_folding_the_domain_cannot_take(runner):
    """star3d-r1 on 64 x 63 x 64 cells: pystencils' folded kernel needs an extent divisible by the
    fold, so 2 in y is left out and said, and the ranking holds the other two foldings. 64 threads
    as (2^a, 2^b, 2^c), a + b + c = 6, every extent at most twice the domain's: all 28 blocks."""
    args = ["rank", "--kernel", "star3d-r1", "--domain", "64,63,64", "--threads", "64", "--jobs", "1", "--top", "0"]
    result = runner.invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [entry["fold"] for entry in doc["left_out_foldings"]] == [[1, 2, 1]]
    assert "63 along y" in doc["left_out_foldings"][0]["reason"]
    blocks = [(2 ** a, 2 ** b, 2 ** (6 - a - b)) for a in range(7) for b in range(7 - a)]
    assert sorted((tuple(r["block"]), tuple(r["fold"])) for r in doc["rows"]) == sorted(
        (b, f) for b in blocks for f in ((1, 1, 1), (1, 1, 2)))
    text = runner.invoke(main, args, env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "fold 1x2x1 left out: iteration extent 63 along y" in text.output
    assert "All 56 rows shown." in text.output
    compared = runner.invoke(main, ["compare", *args[1:7], "--models", "overlap,roofline", "--json"])
    assert compared.exit_code == 0, compared.output
    compared_doc = json.loads(compared.output)
    assert compared_doc["left_out_foldings"] == doc["left_out_foldings"] and len(compared_doc["rows"]) == 56


def test_rank_caption_says_top_zero_shows_all(runner):
    result = runner.invoke(main, ["rank", "--kernel", "star3d-r1", *SMALL, "--threads", "64", "--jobs", "1",
                                  "--top", "5"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "Best 5 of 84 shown; --top 0 shows all." in result.output
    for line in result.output.splitlines():  # no caption line is a lone word
        assert len(line.split()) != 1 or line.strip().startswith(("┃", "│", "┏", "┡", "└"))


def test_rank_top_applies_to_the_plot(runner, monkeypatch, tmp_path):
    import warpspeed.plots

    calls = []
    monkeypatch.setattr(warpspeed.plots, "plot_ranking", lambda ranking, path, top=None: calls.append(top))
    result = runner.invoke(main, ["rank", "--kernel", "copy", *SMALL, "--threads", "64", "--jobs", "1", "--top", "7",
                                  "--plot", str(tmp_path / "r.png")])
    assert result.exit_code == 0, result.output
    assert calls == [7]


@pytest.mark.parametrize("width", [80, 100, 160])
def test_devices_table_fits_the_terminal(runner, width):
    from warpspeed.hardware.device import device_names

    result = runner.invoke(main, ["devices"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0
    assert "…" not in result.output
    assert all(len(line) <= width for line in result.output.splitlines())
    for name in device_names():
        assert _table_row(result.output, name)[0] == name  # full names, never cut


@pytest.mark.parametrize("args, message", [
    (["predict", "--block", "1025,1,1"], "1025 threads"),
    (["predict", "--device", "B200"], "unknown device 'B200'"),
    (["predict", "--kernel", "nope"], "unknown kernel 'nope'"),
    (["predict", "--fold", "0,1,1"], "fold entries must be positive"),
])
def test_errors_are_one_line(runner, args, message):
    result = runner.invoke(main, args + SMALL)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_block_syntax(runner):
    result = runner.invoke(main, ["predict", "--block", "a,b"])
    assert result.exit_code == 2
    assert "--block must be integers" in result.output


def test_rank_small_space_json_and_csv(runner, tmp_path):
    csv_path = tmp_path / "rank.csv"
    result = runner.invoke(main, ["rank", "--kernel", "star3d-r1", *SMALL, "--threads", "64", "--jobs", "1",
                                  "--json", "--csv", str(csv_path)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    # 64 threads: power-of-two (x, y, z) with x*y*z = 64 and z <= 64: compositions of 6 into 3
    # exponents = C(8, 2) = 28 blocks, times 3 foldings.
    assert len(rows) == 28 * 3
    # best first, where rates equal to 12 significant digits are ties (rank's tie rule: the same
    # rate summed in another order differs in the last bits of a double and may come either way)
    rates = [float(f"{r['lups_per_s']:.11e}") for r in rows]
    assert rates == sorted(rates, reverse=True)
    assert len(csv_path.read_text().strip().splitlines()) == 1 + 84


def test_fit_rejects_bad_data(runner, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("oversubscription,hit_rate\n0.1,1.5\n0.2,0.5\n0.3,0.2\n")
    result = runner.invoke(main, ["fit", str(bad), "--curve", "z_layer", "--out", str(tmp_path / "o.toml")])
    assert result.exit_code == 2
    assert "outside [0, 1]" in result.output


@pytest.mark.slow
def test_rank_pystencils_workload_generates_each_folding(runner):
    pytest.importorskip("lbmpy")
    result = runner.invoke(main, ["rank", "--kernel", "d3q19-srt", "--domain", "32,32,32", "--threads", "64",
                                  "--jobs", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert len(rows) == 28 * 3
    assert {tuple(r["fold"]) for r in rows} == {(1, 1, 1), (1, 2, 1), (1, 1, 2)}
    # D3Q19 pull: 19 loads and 19 stores of 8 B per cell can never stream below 304 B/lup
    assert all(r["dram_load_bytes_per_lup"] + r["dram_store_bytes_per_lup"] >= 304 - 1e-9 for r in rows)


def test_predict_linear_address_space_and_curve_file(runner, tmp_path):
    # copy kernel, 64^3, no ghost layers: every x row is 512 B = 4 whole lines in both address
    # spaces, so N-D and linear compulsory volumes agree at 8 B/lup
    args = ["predict", "--kernel", "copy", "--domain", "64,64,64", "--block", "64,2,2", "--json"]
    nd = json.loads(runner.invoke(main, args).output)
    linear = json.loads(runner.invoke(main, args + ["--address-space", "linear"]).output)
    assert nd["dram_load_compulsory_bytes_per_lup"] == pytest.approx(8.0)
    assert linear["dram_load_compulsory_bytes_per_lup"] == pytest.approx(8.0)
    missing = runner.invoke(main, args + ["--curves", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


@pytest.mark.parametrize("columns", [None, "80"])
def test_refit_table_is_readable_when_piped(runner, tmp_path, columns):
    # CliRunner output is not a terminal: the table takes COLUMNS, else 140 columns, and never
    # cuts a number (only the free-text status wraps).
    from tests.validation.test_refit import TRUE_L1, synthetic_rows
    from warpspeed.validation.measurement_csv import write_measurement_csv

    csv_path = write_measurement_csv(tmp_path / "syn.csv", {"kernel": "synthetic", "gpu_name": "Test GPU"},
                                     synthetic_rows())
    env = {"COLUMNS": columns} if columns else {}
    result = runner.invoke(main, ["refit", str(csv_path), "--family", "nvidia-ampere", "--out",
                                  str(tmp_path / "fit.toml")], env=env)
    assert result.exit_code == 0, result.output
    width = int(columns or 140)
    assert "…" not in result.output and all(len(line) <= width for line in result.output.splitlines())
    # the l1_load curve is refitted to the parameters the synthetic data were made with
    l1 = _table_row(result.output, "l1_load")
    assert l1[-4] == ", ".join(f"{v:.3g}" for v in TRUE_L1) and l1[-1] == "refitted"  # new a, b, c
