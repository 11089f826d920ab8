"""Tests of warpspeed.power."""
