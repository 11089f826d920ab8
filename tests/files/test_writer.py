"""The one writer (:mod:`warpspeed.files.atomic`) and every caller's use of it: special files are
written through, never replaced; links given as outputs are followed (as ``cp`` does) and keep
the umask's permissions; temporaries have unpredictable names and never follow a planted link.

The expected modes are computed from the umask set here (``0o666 & ~umask``, as ``open`` gives),
not read from the code.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from warpspeed.errors import WarpspeedError
from warpspeed.files.atomic import atomic_output, write_text_atomic
from warpspeed.files.cache_entry import read_entry, write_entry


@pytest.fixture()
def umask_022():
    old = os.umask(0o022)
    from warpspeed.files import atomic

    atomic._umask.cache_clear()
    yield 0o644
    os.umask(old)
    atomic._umask.cache_clear()


def _read_fifo(path: Path, out: list) -> threading.Thread:
    def reader() -> None:
        with open(path, "rb") as fh:
            out.append(fh.read())
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list = []
    thread = _read_fifo(fifo, got)
    write_text_atomic(fifo, "through the pipe\n")
    thread.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_character_device_is_written_through():
    write_text_atomic("/dev/null", "nothing\n")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_a_link_is_followed_with_the_umask_permissions(tmp_path, umask_022):
    target = tmp_path / "real.toml"
    link = tmp_path / "link.toml"
    link.symlink_to(target)  # dangling: the file it names is made, as cp makes it
    write_text_atomic(link, "x = 1\n")
    assert link.is_symlink() and target.read_text() == "x = 1\n"
    assert stat.S_IMODE(target.stat().st_mode) == umask_022


def test_a_new_file_gets_the_umask_permissions(tmp_path, umask_022):
    write_text_atomic(tmp_path / "new.csv", "a\n")
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == umask_022


@pytest.mark.parametrize("bad, fragment", [("a\0b.csv", "NUL byte"), (".", "is a directory")])
def test_an_output_that_is_no_file_is_refused(tmp_path, bad, fragment):
    with pytest.raises(WarpspeedError, match=fragment):
        write_text_atomic(tmp_path / bad if "\0" not in bad else str(tmp_path) + "/" + bad, "x")


def test_a_loop_of_links_is_refused(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(WarpspeedError, match="loop of symbolic links"):
        write_text_atomic(tmp_path / "a", "x")


def test_temporaries_have_unpredictable_names(tmp_path, monkeypatch):
    """Two writes of one file use two different temporary names, each made exclusively."""
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_text_atomic(tmp_path / "r.csv", "1")
    write_text_atomic(tmp_path / "r.csv", "2")
    assert len(set(seen)) == 2 and all(name.startswith(".r.csv.") for name in seen)
    assert str(os.getpid()) not in "".join(n[len(".r.csv."):] for n in seen)


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    return victim


def test_raw_tables_and_calibrate_use_the_one_writer(tmp_path, umask_022):
    """``calibrate --out``'s writer (raw_tables.write_whole) follows a link with the umask's mode
    and writes a FIFO through."""
    from warpspeed.measured.raw_tables import write_whole

    target = tmp_path / "real.toml"
    link = tmp_path / "gpu.toml"
    link.symlink_to(target)
    write_whole(link, "x = 1\n")
    assert link.is_symlink() and stat.S_IMODE(target.stat().st_mode) == umask_022
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    got: list = []
    thread = _read_fifo(fifo, got)
    write_whole(fifo, "y = 2\n")
    thread.join(10)
    assert got == [b"y = 2\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_the_measurement_writer_never_follows_a_planted_temporary(tmp_path):
    from warpspeed.validation.measurement_csv import MeasurementWriter

    victim = _victim(tmp_path)
    out = tmp_path / "m.csv"
    (tmp_path / "m.csv.tmp").symlink_to(victim)
    with MeasurementWriter(out, {"kernel": "copy"}) as writer:
        assert writer.rows_written == 0
    assert victim.read_text() == "precious\n"
    assert out.read_text().startswith("#") and not out.is_symlink()


def test_a_cache_folder_that_is_a_link_is_never_written_through(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kernels").symlink_to(elsewhere)
    assert write_entry(cache / "kernels" / "k.json", "f-1", "k", {"a": 1}) is False
    assert list(elsewhere.iterdir()) == []
    (elsewhere / "k.json").write_text("{}")
    assert read_entry(cache / "kernels" / "k.json", "f-1", "k") is None
    # a real folder works, and a planted link as the entry is a miss
    assert write_entry(cache / "sass" / "k.json", "f-1", "k", {"a": 1})
    assert read_entry(cache / "sass" / "k.json", "f-1", "k") == {"a": 1}
    (cache / "sass" / "l.json").symlink_to(cache / "sass" / "k.json")
    assert read_entry(cache / "sass" / "l.json", "f-1", "k") is None


def _study(tmp_path: Path, output: str):
    from warpspeed.studies.spec import StudySpec

    return StudySpec(kernels=("copy",), devices=("A100-SXM4-40GB",), domains=((64, 64, 64),), threads=(2048,),
                     output=tmp_path / output)


def test_a_study_never_follows_a_planted_temporary(tmp_path):
    from warpspeed.studies.study import run_study

    victim = _victim(tmp_path)
    spec = _study(tmp_path, "r.csv")
    for name in (f".r.csv.tmp-{os.getpid()}", "r.csv.tmp", ".r.csv.tmp"):
        (tmp_path / name).symlink_to(victim)
    run_study(spec)
    assert victim.read_text() == "precious\n"
    assert spec.output.read_text().startswith("key,")


def test_a_study_output_that_is_a_link_is_followed(tmp_path):
    from warpspeed.studies.study import run_study

    real = tmp_path / "real.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    result = run_study(_study(tmp_path, "link.csv"))
    assert link.is_symlink() and real.read_text().count("\n") == result.rows + 1
    run_study(_study(tmp_path, "link.csv"), resume=False)
    assert link.is_symlink() and real.read_text().count("\n") == result.rows + 1


@pytest.mark.parametrize("output, fragment", [(".", "names a directory"), ("a\0b.csv", "NUL byte"),
                                              ("dir/", "names a directory"), (3, "must be a file path")])
def test_a_study_output_that_is_no_file_name_is_refused(tmp_path, output, fragment):
    from warpspeed.studies.spec import StudySpec, study_from_dict

    with pytest.raises(WarpspeedError, match=fragment):
        StudySpec(kernels=("copy",), devices=("A100",), domains=((8, 8, 8),), threads=(32,), output=output)
    if isinstance(output, str):
        with pytest.raises(WarpspeedError, match=fragment):
            study_from_dict({"kernels": ["copy"], "devices": ["A100"], "domains": [[8, 8, 8]], "threads": [32],
                             "output": output}, tmp_path)


def test_pool_workers_die_with_the_process_that_made_them(tmp_path):
    """``kill -9`` of the process that owns a pool: its workers end within seconds."""
    script = tmp_path / "owner.py"
    script.write_text(
        "import os, time\n"
        "from warpspeed.rank import process_pool\n"
        "def pid(_):\n    time.sleep(0.2)\n    return os.getpid()\n"
        "if __name__ == '__main__':\n"
        "    pool = process_pool(2)\n"
        "    print(sorted(set(pool.map(pid, range(6)))), flush=True)\n"
        "    time.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env=env)
    workers = [int(p) for p in owner.stdout.readline().strip("[]\n").split(",")]
    assert workers
    owner.kill()
    owner.wait()
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [p for p in workers if _running(p)]
    assert not alive


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False
