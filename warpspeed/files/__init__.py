"""Reading and writing the files warpspeed uses: text and TOML input, JSON-safe values, the table
rows of ranking, study and measurement CSV files, and checks of output paths."""
