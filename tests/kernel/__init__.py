"""Tests of warpspeed.kernel: kernel descriptions and their bounds."""
