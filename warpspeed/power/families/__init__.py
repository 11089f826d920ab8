"""Power-model parameters per device family (TOML files with provenance)."""
