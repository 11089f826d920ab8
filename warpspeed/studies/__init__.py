"""Parameter studies: kernels x devices x domains streamed to a file, and the domain scan."""
