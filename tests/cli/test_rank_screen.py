"""What `warpspeed rank` puts on screen and stderr: the objective's own columns and order, the
model and objective in the title, every written file named, the kernels listed in --help, the
register line said once; and the ranking chart that shows itself in a notebook."""

from __future__ import annotations

import re

from click.testing import CliRunner

from warpspeed.cli.main import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rank(args, tmp_path=None):
    return CliRunner().invoke(main, ["rank", "--kernel", "star2d-r1", "--wide", *args],
                              terminal_width=250)


def test_energy_objective_shows_watts_and_lups_per_joule_sorted_by_them():
    result = _rank(["--objective", "energy", "--top", "0"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "objective energy: sorted by lattice updates per joule (Mlup/J)" in out
    assert "overlap model" in out.split("\n", 3)[0] + out  # the title names the model
    header = next(line for line in out.splitlines() if "Mlup/J" in line and "W" in line)
    cols = [c.strip() for c in header.strip("┃│ ").split("┃")]
    assert "W" in cols and "Mlup/J" in cols
    per_joule = []
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == len(cols) and cells[0].isdigit():
            per_joule.append(float(cells[cols.index("Mlup/J")]))
            # W x Mlup/J = Glup/s x 1000 (lups/s = W x lups/J), to the rounding of the cells
            rate, watts = float(cells[cols.index("Glup/s")]), float(cells[cols.index("W")])
            assert abs(watts * per_joule[-1] / 1000 - rate) <= 0.01 * rate + watts * 0.05 / 1000 + 0.005
    assert len(per_joule) > 5
    assert per_joule == sorted(per_joule, reverse=True)


def test_time_objective_has_no_energy_columns_and_says_its_order():
    result = _rank(["--top", "3"])
    assert result.exit_code == 0, result.output
    assert "overlap model, objective time: sorted by Glup/s, best first" in result.output
    assert "Mlup/J" not in result.output


def test_written_files_are_named_on_stderr(tmp_path):
    csv, png, traces = tmp_path / "r.csv", tmp_path / "r.png", tmp_path / "t.jsonl"
    result = CliRunner().invoke(main, ["rank", "--kernel", "star2d-r1", "--top", "3", "--csv", str(csv),
                                                       "--plot", str(png), "--traces", str(traces)])
    assert result.exit_code == 0, result.output
    for path in (csv, png, traces):
        assert path.exists() and f"wrote {path}" in result.stderr
        assert f"wrote {path}" not in result.stdout


def test_help_lists_every_pystencils_workload():
    from pystencils_plugin.workloads import WORKLOADS

    text = " ".join(CliRunner().invoke(main, ["rank", "--help"], terminal_width=400).output.split())
    listed = re.search(r"--kernel TEXT Kernel: (.*?); the", text).group(1).split(", ")
    assert set(WORKLOADS) <= set(listed)
    assert {"box3d-r1", "copy19-pull"} <= set(listed)


def test_register_line_says_its_source_once():
    result = _rank(["--top", "1"])
    lines = [line for line in result.output.splitlines() if "registers" in line or "counted by" in line]
    assert lines and not any("(ptxas (" in line for line in lines)


def test_ranking_figure_renders_itself_and_starts_near_the_data():
    from warpspeed.plots import bar_axis_start, ranking_figure
    from warpspeed.rank import rank_per_fold  # noqa: F401 (the ranking below comes from the CLI's path)
    from pystencils_plugin import rank as plugin_rank
    import pystencils as ps

    src, dst = ps.fields("src, dst: double[66, 66, 66]")
    update = [ps.Assignment(dst.center, (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0]) / 3)]
    ranking = plugin_rank(update, "A100-SXM4-40GB")
    fig = ranking.plot(top=10)
    png = fig._repr_png_()
    assert png.startswith(PNG_MAGIC)
    assert fig._repr_html_().startswith('<img src="data:image/png;base64,')
    values = [r.lups_per_s / 1e9 for r in ranking.rows if r.ok][:10]
    ax = fig.axes[0]
    lo, hi = min(values), max(values)
    if lo >= 0.5 * hi:  # a narrow spread: the axis starts below the lowest bar, not at 0, and says so
        assert 0 < ax.get_ylim()[0] < lo and "not 0" in ax.get_ylabel()
    else:
        assert ax.get_ylim()[0] == 0
    assert fig is not ranking_figure(ranking.ranking, 10)  # a new figure per call


def test_bar_axis_start_by_hand():
    from warpspeed.plots import bar_axis_start

    assert bar_axis_start([100.0, 96.0]) == 100.0 * 0 + 96.0 - 0.25 * 4.0  # 95.0: a quarter of the spread below
    assert bar_axis_start([100.0, 40.0]) == 0.0  # below half the largest: from 0
    assert bar_axis_start([50.0, 50.0]) == 50.0 - 0.25 * 12.5
    assert bar_axis_start([]) == 0.0
