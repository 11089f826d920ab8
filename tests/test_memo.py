"""The bounded memo table of the predictor's shared results."""

import pytest

from warpspeed.memo import BoundedMemo


def test_keeps_at_most_size_entries_least_recently_used_out():
    memo = BoundedMemo(2)
    calls = []

    def value(k):
        calls.append(k)
        return k * 10

    assert memo.get("a", lambda: value(1)) == 10
    assert memo.get("b", lambda: value(2)) == 20
    assert memo.get("a", lambda: value(99)) == 10  # kept: not computed again
    assert memo.get("c", lambda: value(3)) == 30  # "b" was the least recently used
    assert len(memo) == 2 and memo.find("b") is None and memo.find("a") == 10
    assert calls == [1, 2, 3]
    assert (memo.hits, memo.misses) == (2, 3)


def test_add_and_find():
    memo = BoundedMemo(1)
    memo.add("x", 1)
    memo.add("y", 2)
    assert memo.find("x") is None and memo.find("y") == 2


def test_size_must_be_positive():
    with pytest.raises(ValueError):
        BoundedMemo(0)


def test_membership_neither_hits_nor_uses():
    memo = BoundedMemo(2)
    memo.add("a", 1)
    memo.add("b", 2)
    assert "a" in memo and "z" not in memo
    assert memo.hits == 0
    memo.add("c", 3)  # "a" is still the least recently used: the test above did not use it
    assert "a" not in memo and "b" in memo
