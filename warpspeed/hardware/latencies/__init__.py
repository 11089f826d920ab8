"""Instruction latencies per architecture (TOML files with sources)."""
