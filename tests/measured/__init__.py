"""Tests of warpspeed.measured: the bandwidth curves and the device figures from stored measurements."""
