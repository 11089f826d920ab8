"""Reading and writing the files warpspeed uses: TOML data files, JSON-safe values, output paths."""
