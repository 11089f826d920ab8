"""Tests of warpspeed.files: records, rows, cache entries."""
