"""Tests of warpspeed.cli: the command line, every device through it, output paths, names."""
