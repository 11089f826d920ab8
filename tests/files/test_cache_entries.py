"""Disk caches hold data, never code, and are verified: an entry that is planted, corrupted,
truncated, of another key or of another format is a miss, recomputed and replaced, and a ranking
with any entry corrupted equals the ranking with a cold cache."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from warpspeed.files.cache_entry import checksum, entry_text, read_entry, write_entry

KEY = "0" * 64
FORMAT = "test-entry-1"


def test_an_entry_reads_back_its_payload(tmp_path):
    path = tmp_path / "e.json"
    assert write_entry(path, FORMAT, KEY, {"registers": 32, "arch": "sm_80"})
    assert read_entry(path, FORMAT, KEY) == {"registers": 32, "arch": "sm_80"}


def _text(payload, **changes):
    entry = json.loads(entry_text(FORMAT, KEY, payload))
    entry.update(changes)
    return json.dumps(entry)


#: (what, file content): each is a miss.
BAD_ENTRIES = [
    ("empty file", b""),
    ("truncated", entry_text(FORMAT, KEY, {"registers": 32})[:-10].encode()),
    ("edited number, old checksum", _text({"registers": 1}, sha256=checksum({"registers": 32})).encode()),
    ("another key", _text({"registers": 32}, key="1" * 64).encode()),
    ("another format", _text({"registers": 32}, format="test-entry-0").encode()),
    ("no payload", json.dumps({"format": FORMAT, "key": KEY, "sha256": checksum(None)}).encode()),
    ("NaN payload", _text(1.0).replace("1.0", "NaN").encode()),
    ("a list", b"[1, 2, 3]"),
    ("not UTF-8", b"\xff\xfe\x00{"),
    ("deeply nested", b"[" * 100_000 + b"]" * 100_000),
    ("a pickle", pickle.dumps({"registers": 32})),
]


@pytest.mark.parametrize("what, content", BAD_ENTRIES, ids=[w for w, _ in BAD_ENTRIES])
def test_a_bad_entry_is_a_miss(tmp_path, what, content):
    path = tmp_path / "e.json"
    path.write_bytes(content)
    assert read_entry(path, FORMAT, KEY) is None


class _Payload:
    """Pickled, this runs ``os.system`` when loaded (the hazard of a pickle cache)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """An empty cache directory and no kernels memoised in this process."""
    pytest.importorskip("pystencils")
    from pystencils_plugin import catalog
    from warpspeed.sass import compile as sass_compile

    cache = tmp_path / "cache"
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(cache))
    catalog._extract.cache_clear()
    sass_compile._cached_sass.cache_clear()
    yield cache
    catalog._extract.cache_clear()
    sass_compile._cached_sass.cache_clear()


def _ranking() -> list:
    """``warpspeed rank`` of a small 2-D workload as JSON, with no kernel memoised in the process."""
    from pystencils_plugin import catalog
    from warpspeed.cli.main import main

    catalog._extract.cache_clear()
    # in float: code the shipped register table does not hold, so with nvcc its counts are compiled
    # and cached (the double kernel takes the shipped count of the same code, caching no count)
    result = CliRunner().invoke(main, ["rank", "--kernel", "star2d-r1", "--domain", "96,64", "--dtype", "float",
                                       "--threads", "128", "--model", "roofline", "--json", "--top", "0", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_planted_pickle_is_never_loaded(cold):
    """A pickle with a payload, planted where the old cache kept its entries and under the new
    entry's name, runs nothing; the ranking is the cold one."""
    reference = _ranking()
    marker = cold.parent / "payload-ran"
    for entry in list((cold / "kernels").glob("*.json")):
        data = pickle.dumps(_Payload(marker))
        entry.write_bytes(data)
        entry.with_suffix(".pickle").write_bytes(data)
    assert _ranking() == reference
    assert not marker.exists()


@pytest.fixture
def cold_ranking(cold):
    """The cache directory after a cold ranking, and that ranking."""
    return cold, _ranking()


@pytest.fixture
def cold_entries(cold_ranking):
    """Every entry of the cold ranking's cache and its bytes, read once before any example."""
    return {p: p.read_bytes() for p in _entries(cold_ranking[0])}


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.json") if p.is_file())


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_rankings_with_corrupted_entries_equal_the_cold_ranking(cold_ranking, cold_entries, data):
    """Random bytes written into, over or instead of any cache entry (kernels, register counts,
    SASS) change nothing: the entry is a miss, recomputed, and the ranking equals the cold one."""
    cold, reference = cold_ranking
    entries = _entries(cold)
    assert entries, "the cold ranking stored no entries"
    # every example starts from the cold cache: an entry the ranking does not read (a register count
    # whose kernel entry hits) stays as an earlier example left it, and hypothesis needs each
    # example's draws to depend on its own data only
    for p, content in cold_entries.items():
        p.write_bytes(content)
    for path in data.draw(st.lists(st.sampled_from(entries), min_size=1, max_size=3, unique=True)):
        content = path.read_bytes()
        how = data.draw(st.sampled_from(["replace", "overwrite", "truncate"]))
        noise = data.draw(st.binary(min_size=1, max_size=64))
        if how == "replace":
            content = noise
        elif how == "overwrite":
            at = data.draw(st.integers(0, len(content) - 1))
            content = content[:at] + noise + content[at + len(noise):]
        else:
            content = content[:data.draw(st.integers(0, len(content) - 1))]
        path.write_bytes(content)
    assert _ranking() == reference


def _edit_payload(path: Path, edit) -> None:
    """Change an entry's payload and keep its old checksum (valid JSON, wrong data)."""
    entry = json.loads(path.read_text())
    edit(entry["payload"])
    path.write_text(json.dumps(entry))


def _one_register(payload) -> None:
    payload["registers"] = 1


def _one_access_moved(payload) -> None:
    payload["accesses"][0]["index"][0] += " + 1"


def _fewer_flops(payload) -> None:
    payload["flops"] = [0, 0, 0, 0]


@pytest.mark.parametrize("subdir, edit", [("registers", _one_register), ("kernels", _one_access_moved),
                                          ("kernels", _fewer_flops)])
def test_an_edited_entry_is_a_miss(cold_ranking, subdir, edit):
    """Valid JSON with a changed number (a register count of 1, a moved access, no flops) does not
    verify: the ranking is the cold one, and the entry is rewritten."""
    cold, reference = cold_ranking
    entries = sorted((cold / subdir).glob("*.json"))
    if not entries:
        pytest.skip(f"no {subdir} entries (no nvcc to count registers)")
    before = [p.read_text() for p in entries]
    for path in entries:
        _edit_payload(path, edit)
    if subdir == "registers":  # a count is read only when its kernel is generated
        for path in (cold / "kernels").glob("*.json"):
            path.unlink()
    assert _ranking() == reference
    assert [p.read_text() for p in entries] == before  # recomputed and replaced by the same entry


def test_a_planted_fifo_or_link_is_a_miss_and_replaced(tmp_path):
    """A named pipe at an entry's place neither blocks the reader nor receives the entry; a link
    to another file is replaced by the entry, the linked file left alone."""
    fifo, link, target = tmp_path / "fifo.json", tmp_path / "link.json", tmp_path / "notes.txt"
    os.mkfifo(fifo)
    target.write_text("the user's notes")
    link.symlink_to(target)
    for path in (fifo, link):
        assert read_entry(path, FORMAT, KEY) is None
        assert write_entry(path, FORMAT, KEY, {"registers": 32})
        assert path.is_file() and not path.is_symlink()
        assert read_entry(path, FORMAT, KEY) == {"registers": 32}
    assert target.read_text() == "the user's notes"


def test_each_register_entry_corrupted_alone_leaves_the_cold_ranking(cold_ranking, cold_entries):
    """Each register count corrupted on its own, with every kernel entry corrupted (so the counts
    are looked up again): a count then read back through another entry of the same source (the
    count of its shape, i.e. the same code on any domain) is that source's own count, and the
    ranking, details included, equals the cold one."""
    cold, reference = cold_ranking
    registers = sorted((cold / "registers").glob("*.json"))
    if not registers:
        pytest.skip("no register count was compiled (no nvcc)")
    for corrupted in registers:
        for p, content in cold_entries.items():
            p.write_bytes(content)
        for path in [corrupted, *(cold / "kernels").glob("*.json")]:
            path.write_bytes(b"\x00")
        assert _ranking() == reference, corrupted.name
