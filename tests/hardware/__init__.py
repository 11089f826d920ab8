"""Tests of warpspeed.hardware: the device files and the device loader, memory latencies."""
