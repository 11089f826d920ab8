"""Tests of warpspeed.interval: the interval model and its launch cost."""
