"""Built-in device files, one TOML per GPU (package data, loaded by warpspeed.hardware.device)."""
