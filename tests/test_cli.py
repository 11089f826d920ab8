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


def test_predict_json_has_the_documented_keys(runner):
    result = runner.invoke(main, ["predict", "--kernel", "star3d-r1", *SMALL, "--block", "32,4,2", "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.output)
    for key in ("l1_cycles_per_lup", "l2_load_bytes_per_lup", "l2_store_bytes_per_lup", "l1_alloc_bytes_per_block",
                "blocks_per_sm", "wave_blocks", "dram_load_bytes_per_lup", "dram_store_bytes_per_lup",
                "dram_load_compulsory_bytes_per_lup", "lups_per_s", "limiter", "limiters"):
        assert key in d
    assert d["limiter"] in ("fp", "l1", "l2", "dram")
    assert set(d["limiters"]) == {"fp", "l1", "l2", "dram"}
    # 7-point stencil, 64^3 domain, 66^3 fields: a warp stores one x row of 32 doubles (256 B)
    # starting at byte 256 + 8 (32 bx + 1) + 528 (y + 1) + 34848 (z + 1); 528 = 16 mod 32 and
    # 34848 = 0 mod 32, so the row starts 8 or 24 B past a sector boundary and always spans
    # 9 sectors: 9 x 32 B per 32 lups = 9 B/lup.
    assert d["l2_store_bytes_per_lup"] == pytest.approx(9.0)
    assert d["block"] == [32, 4, 2] and d["domain"] == [64, 64, 64]


def test_predict_tables(runner):
    result = runner.invoke(main, ["predict", "--kernel", "star2d-r1", "--domain", "256,256", "--block", "64,4"])
    assert result.exit_code == 0, result.output
    assert "four-limiter roofline" in result.output and "layer conditions" in result.output


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
    rows = json.loads(result.output)["rows"]
    # 64 threads: power-of-two (x, y, z) with x*y*z = 64 and z <= 64: compositions of 6 into 3
    # exponents = C(8, 2) = 28 blocks, times 3 foldings.
    assert len(rows) == 28 * 3
    rates = [r["lups_per_s"] for r in rows]
    assert rates == sorted(rates, reverse=True)
    assert len(csv_path.read_text().strip().splitlines()) == 1 + 84


def test_fit_rejects_bad_data(runner, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("oversubscription,hit_rate\n0.1,1.5\n0.2,0.5\n0.3,0.2\n")
    result = runner.invoke(main, ["fit", str(bad), "--curve", "z_layer", "--out", str(tmp_path / "o.toml")])
    assert result.exit_code == 2
    assert "outside [0, 1]" in result.output


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
