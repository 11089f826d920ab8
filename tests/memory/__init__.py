"""Tests of warpspeed.memory: the first level (L1), cache levels, DRAM, footprints, sectors, warps."""
