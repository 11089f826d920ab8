"""Tests of warpspeed.calibration."""
