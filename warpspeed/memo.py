"""A bounded memo table: results of a pure function kept by key, least recently used first out.

The predictor keeps what configurations share (the wave volumes of a covered cell box) in such a
table owned by the object that computes it, never in a module-level cache: its lifetime is that of
the predictor or of the ranking call that shares it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class BoundedMemo(Generic[V]):
    """At most ``size`` results by key; :meth:`get` computes and keeps a missing one (results must
    be immutable: every caller with the same key gets the same object)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a memo holds at least one entry, got size {size}")
        self.size = size
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        entries = self._entries
        if key in entries:
            entries.move_to_end(key)
            self.hits += 1
            return entries[key]
        self.misses += 1
        value = compute()
        entries[key] = value
        if len(entries) > self.size:
            entries.popitem(last=False)
        return value

    def find(self, key: Hashable) -> V | None:
        """The result kept for ``key`` (now the most recently used), or None."""
        entries = self._entries
        if key not in entries:
            return None
        entries.move_to_end(key)
        self.hits += 1
        return entries[key]

    def add(self, key: Hashable, value: V) -> V:
        """Keep ``value`` for ``key`` (dropping the least recently used beyond the size)."""
        self.misses += 1
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        """Whether a result is kept for ``key`` (neither a hit nor a use)."""
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
