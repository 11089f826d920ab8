"""Capacity-curve parameter files (one TOML per device family) with provenance and data."""
