"""Device and kernel names (one spelling shown and accepted; prefixes and families), the plugin's
ranking object (notebook table, DataFrame, plot, model and objective), the float32[3D] error,
validate's exit status when a section cannot run, and no progress output off a terminal."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from warpspeed.cli.main import main
from warpspeed.errors import DeviceError, UnsupportedKernelError, WarpspeedError
from warpspeed.hardware.device import device_names, load_device, resolve_device_name


@pytest.mark.parametrize("typed, name", [
    ("H200", "H200"), ("h100-sxm5", "H100-SXM5-80GB"), ("H100 SXM5 80GB", "H100-SXM5-80GB"),
    ("V100", "V100-PCIe-32GB"), ("volta", "V100-PCIe-32GB"), ("MI3", "MI300X"), ("l40", "L40"),
])
def test_device_by_name_prefix_or_family(typed, name):
    assert resolve_device_name(typed) == name
    assert load_device(typed).name == name


@pytest.mark.parametrize("typed, candidates", [
    ("H100", ["H100-PCIe-80GB", "H100-SXM5-80GB"]), ("A100", ["A100-PCIe-40GB", "A100-SXM4-40GB", "A100-SXM4-80GB"]),
    ("hopper", ["H100-PCIe-80GB", "H100-SXM5-80GB", "H200"]),
])
def test_ambiguous_device_lists_the_candidates(typed, candidates):
    with pytest.raises(DeviceError, match="ambiguous; did you mean") as err:
        resolve_device_name(typed)
    assert all(c in str(err.value) for c in candidates)
    assert not any(n in str(err.value) for n in set(device_names()) - set(candidates))


def test_unknown_device_suggests_close_names():
    with pytest.raises(DeviceError, match="unknown device 'H20O'; did you mean H200"):
        resolve_device_name("H20O")


def test_cli_device_prefix_and_ambiguity():
    runner = CliRunner()
    ok = runner.invoke(main, ["predict", "--kernel", "copy", "--domain", "64,64,64", "--device", "V100", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["device"] == "V100-PCIe-32GB"
    bad = runner.invoke(main, ["predict", "--kernel", "copy", "--domain", "64,64,64", "--device", "H100"])
    assert bad.exit_code == 2 and "did you mean H100-PCIe-80GB or H100-SXM5-80GB" in bad.output
    assert "Traceback" not in bad.output


def test_workload_names_print_as_typed():
    result = CliRunner().invoke(main, ["rank", "--kernel", "star3d-r1", "--domain", "32,32,32", "--threads", "64",
                                       "--jobs", "1", "--json", "--top", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["kernel"] == "star3d-r1"


def _update(shape="double[34, 34, 34]"):
    ps = pytest.importorskip("pystencils")
    src, dst = ps.fields(f"src, dst: {shape}")
    return [ps.Assignment(dst.center, (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0]
                                       + src[0, 0, 1] + src[0, 0, -1]) / 6)]


def test_symbolic_float32_fields_are_unsupported_with_their_type():
    from pystencils_plugin import rank

    with pytest.raises(UnsupportedKernelError, match=r"fixed shapes.*float32\[64,64,64\]"):
        rank(_update("float32[3D]"))


@pytest.fixture(scope="module")
def small_ranking():
    from pystencils_plugin import rank

    # 32^3 cells, 64-thread blocks: C(8, 2) = 28 power-of-two blocks x 3 foldings
    return rank(_update(), "A100-SXM4-40GB", threads=64, executor=None)


def test_ranking_renders_as_a_table(small_ranking):
    html = small_ranking._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + 10  # header + the best 10
    best = small_ranking.best()
    assert f"<td>{'x'.join(map(str, best.block_size))}</td>" in html
    assert "by the overlap model" in html and "registers per thread" in html
    text = str(small_ranking)
    assert "84 configurations" in text and f"best block {best.block_size}" in text


def test_ranking_as_a_dataframe(small_ranking):
    pd = pytest.importorskip("pandas")
    df = small_ranking.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == 84
    assert list(df["rank"]) == list(range(1, 85))
    first = small_ranking.rows[0]
    assert (df.loc[0, "block_x"], df.loc[0, "block_y"], df.loc[0, "block_z"]) == first.config.block
    assert df.loc[0, "lups_per_s"] == pytest.approx(first.lups_per_s)


def test_ranking_plots_itself(small_ranking, tmp_path):
    fig = small_ranking.plot(top=12, path=str(tmp_path / "r.png"))
    assert len(fig.axes[0].patches) == 12 and (tmp_path / "r.png").stat().st_size > 0
    import matplotlib.pyplot as plt

    assert fig not in [plt.figure(n) for n in plt.get_fignums()]  # no pyplot state


def test_ranking_takes_model_and_objective():
    from pystencils_plugin import rank

    roof = rank(_update(), "A100-SXM4-40GB", threads=64, executor=None, model="roofline", objective="energy")
    assert roof.model == "roofline" and roof.objective == "energy"
    # the roofline's own rows: its explanation is its limiter, no other time model's
    assert all(r.model == "roofline" and r.explanation == r.limiter for r in roof.rows if r.ok)
    joules = [r.lups_per_joule for r in roof.rows if r.ok]
    assert joules == sorted(joules, reverse=True) or all(  # ties may come either way
        float(f"{a:.11e}") >= float(f"{b:.11e}") for a, b in zip(joules, joules[1:]))
    with pytest.raises(WarpspeedError, match="unknown model"):
        rank(_update(), model="fastest")


def test_validate_fails_when_a_documented_section_cannot_run(monkeypatch):
    def no_workloads():
        raise WarpspeedError("the pystencils workloads are not installed")

    monkeypatch.setattr("warpspeed.validation.real_gpu.real_gpu_accuracy", no_workloads)
    monkeypatch.setattr("warpspeed.validation.public.public_accuracy", lambda: [])
    result = CliRunner().invoke(main, ["validate"])
    assert result.exit_code == 3
    assert "not compared" in result.output and "report is incomplete" in result.output


def test_no_progress_output_off_a_terminal():
    """CliRunner's stderr is no terminal: scan-domain prints its table and nothing else."""
    result = CliRunner().invoke(main, ["scan-domain", "--planes", "64,128", "--blocks", "32,4,2", "--json"])
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.output), list)
