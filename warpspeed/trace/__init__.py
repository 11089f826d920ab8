"""The per-kernel trace: one JSON document per (kernel, device, configuration)."""
