"""Paths the tests read: the repository root, defined once here, and the tests' own data."""

from __future__ import annotations

from pathlib import Path

#: The repository root (this file is tests/paths.py).
ROOT = Path(__file__).resolve().parents[1]
#: Hand-made and recorded test inputs (tests/data/).
DATA = ROOT / "tests" / "data"
